"""Scatter of any two figures: the catalog in grey, the selection in color, the Pareto frontier.

The plot is a :class:`ScatterPlot` (a pyqtgraph ``PlotItem``), so the same
object sits in the on-screen :class:`ScatterChart` and in an offscreen scene
for PNG/SVG/PDF output. Log axes are drawn by plotting ``log10`` of the values
and switching the axis ticks to log mode; the frontier is computed on the raw
values by :func:`gpudesk.compare.pareto.pareto_frontier`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

from gpudesk.catalog.metrics import METRICS, Metric
from gpudesk.catalog.names import short_name
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.axes import axis_range, log_ticks
from gpudesk.compare.pareto import ScatterPoint, pareto_frontier
from gpudesk.render.colors import CONTEXT_COLOR, gpu_color_slots
from gpudesk.render.style import LIGHT, ChartStyle, chart_font, chart_series_color

DEFAULT_X_KEY = "price_usd"
DEFAULT_Y_KEY = "fp16_tensor_tflops"


def frontier_directions(x_key: str, y_key: str) -> tuple[bool, bool] | None:
    """(x_lower_is_better, y_higher_is_better), or None when a figure has no direction."""
    x_better = METRICS[x_key].higher_is_better
    y_better = METRICS[y_key].higher_is_better
    if x_better is None or y_better is None:
        return None
    return (not x_better, y_better)


@dataclass(frozen=True, slots=True)
class PlottedPoint:
    """A GPU as drawn: raw values and plotted coordinates (log10 on a log axis)."""

    id: str
    name: str
    x: float
    y: float
    plot_x: float
    plot_y: float
    full_name: str = ""


def _plotted(value: float, log: bool) -> float | None:
    if not math.isfinite(value):
        return None
    if log:
        return math.log10(value) if value > 0 else None
    return value


def _tip_text(name: str, x_metric: Metric, x: float, y_metric: Metric, y: float) -> str:
    return (
        f"{name}\n{x_metric.label}: {x_metric.format(x)} {x_metric.unit}\n"
        f"{y_metric.label}: {y_metric.format(y)} {y_metric.unit}"
    )


class ChartAxis(pg.AxisItem):  # type: ignore[misc]
    """An axis that paints straight into the painter while exporting.

    pyqtgraph's axis replays a cached ``QPicture``; replayed into a PDF painter
    its text comes out at the wrong size, so export paints it afresh.
    """

    def paint(self, painter: QPainter, option: object, widget: object) -> None:
        if self._exportOpts is False:
            super().paint(painter, option, widget)
            return
        painter.save()
        if self.style["tickFont"]:
            painter.setFont(self.style["tickFont"])
        specs = self.generateDrawSpecs(painter)
        if specs is not None:
            self.drawPicture(painter, *specs)
        painter.restore()


def chart_axes() -> dict[str, ChartAxis]:
    return {"left": ChartAxis("left"), "bottom": ChartAxis("bottom")}


class ScatterPlot(pg.PlotItem):  # type: ignore[misc]
    """The scatter plot item; :meth:`set_data` draws everything.

    Attributes after ``set_data``: ``context_points`` and ``selection_points``
    (:class:`PlottedPoint` lists), ``frontier_ids`` (ids along x), and
    ``missing_names`` (selected GPUs without one of the two values).
    """

    def __init__(self) -> None:
        super().__init__(axisItems=chart_axes())
        self.setMenuEnabled(False)
        self.hideButtons()
        self.showGrid(x=True, y=True, alpha=0.25)
        self._style: ChartStyle = LIGHT
        self.context_item = pg.ScatterPlotItem(
            size=8, pen=None, brush=pg.mkBrush(CONTEXT_COLOR), hoverable=True, tip=self._tip
        )
        self.frontier_item = pg.PlotDataItem()
        self.selection_item = pg.ScatterPlotItem(size=14, hoverable=True, tip=self._tip)
        self.addItem(self.context_item)
        self.addItem(self.frontier_item)
        self.addItem(self.selection_item)
        self.selection_item.setZValue(10)
        # sizes in pixels, not points: a point-sized font is scaled twice when
        # the scene is rendered into a 300 dpi PDF painter
        self.legend = self.addLegend(offset=(10, 10), labelTextSize="12px")
        # the legend keeps a constant on-screen size by ignoring transformations,
        # which also ignores the scaling into a PDF page: scale with the chart
        self.legend.setFlag(self.legend.GraphicsItemFlag.ItemIgnoresTransformations, False)
        for name in ("left", "bottom"):
            self.getAxis(name).setStyle(tickFont=chart_font(12))
        self._labels: list[pg.TextItem] = []
        #: names of the grey (unselected) GPUs on the Pareto frontier
        self.frontier_labels: list[pg.TextItem] = []
        self._frontier_points: list[PlottedPoint] = []
        self.getViewBox().sigTransformChanged.connect(self.layout_labels)
        self.x_key = DEFAULT_X_KEY
        self.y_key = DEFAULT_Y_KEY
        self.log_x = False
        self.log_y = False
        self.context_points: list[PlottedPoint] = []
        self.selection_points: list[PlottedPoint] = []
        self.frontier_ids: list[str] = []
        self.missing_names: list[str] = []
        self._last_data: tuple[list[CatalogEntry], list[CatalogEntry]] | None = None
        self._missing_sample = pg.PlotDataItem(pen=None)

    def _tip(self, x: float, y: float, data: object) -> str:
        return str(data)

    def set_style(self, style: ChartStyle) -> None:
        self._style = style
        for name in ("left", "bottom"):
            axis = self.getAxis(name)
            axis.setPen(pg.mkPen(style.muted))
            axis.setTextPen(pg.mkPen(style.text))
            axis.label.setDefaultTextColor(style.text)
        self.legend.setLabelTextColor(style.text)
        self.legend.setBrush(
            pg.mkBrush(
                QColor(
                    style.background.red(), style.background.green(), style.background.blue(), 200
                )
            )
        )
        self.legend.setPen(pg.mkPen(style.grid))
        self.frontier_item.setPen(self._frontier_pen())
        if self._last_data is not None:  # point outlines and label colors follow the theme
            catalog_entries, selection = self._last_data
            self.set_data(
                catalog_entries,
                selection,
                self.x_key,
                self.y_key,
                log_x=self.log_x,
                log_y=self.log_y,
            )

    def _frontier_pen(self) -> QPen:
        pen = QPen(self._style.frontier, 1.6)
        pen.setCosmetic(True)
        pen.setStyle(Qt.PenStyle.DashLine)
        return pen

    def set_data(
        self,
        catalog_entries: Sequence[CatalogEntry],
        selection: Sequence[CatalogEntry],
        x_key: str = DEFAULT_X_KEY,
        y_key: str = DEFAULT_Y_KEY,
        *,
        log_x: bool = False,
        log_y: bool = False,
    ) -> None:
        """Plot ``catalog_entries`` (grey) with ``selection`` (colored by position) on top."""
        self.x_key, self.y_key, self.log_x, self.log_y = x_key, y_key, log_x, log_y
        self._last_data = (list(catalog_entries), list(selection))
        # leave log tick mode before the range changes back to raw values
        self.getAxis("bottom").setLogMode(False)
        self.getAxis("left").setLogMode(False)
        x_metric, y_metric = METRICS[x_key], METRICS[y_key]
        selected_ids = {entry.id for entry in selection}
        everything = {entry.id: entry for entry in catalog_entries}
        for entry in selection:  # a compared GPU outside the catalog still counts
            everything.setdefault(entry.id, entry)

        def plot(entry: CatalogEntry) -> PlottedPoint | None:
            x, y = x_metric.value(entry), y_metric.value(entry)
            if x is None or y is None:
                return None
            px, py = _plotted(x, log_x), _plotted(y, log_y)
            if px is None or py is None:
                return None
            return PlottedPoint(entry.id, short_name(entry), x, y, px, py, entry.name)

        self.context_points = [
            point
            for entry in everything.values()
            if entry.id not in selected_ids and (point := plot(entry)) is not None
        ]
        self.selection_points = []
        self.missing_names = []
        colors: list[QColor] = []
        slots = gpu_color_slots([entry.id for entry in selection])
        for slot, entry in zip(slots, selection, strict=True):
            point = plot(entry)
            if point is None:
                self.missing_names.append(short_name(entry))
                continue
            self.selection_points.append(point)
            colors.append(chart_series_color(slot, self._style.dark))

        self.context_item.setData(
            x=[p.plot_x for p in self.context_points],
            y=[p.plot_y for p in self.context_points],
            data=[
                _tip_text(p.full_name, x_metric, p.x, y_metric, p.y) for p in self.context_points
            ],
        )
        self.selection_item.setData(
            x=[p.plot_x for p in self.selection_points],
            y=[p.plot_y for p in self.selection_points],
            brush=[pg.mkBrush(color) for color in colors],
            pen=pg.mkPen(self._style.background, width=1.5),
            data=[
                _tip_text(p.full_name, x_metric, p.x, y_metric, p.y) for p in self.selection_points
            ],
        )
        self._set_frontier(x_key, y_key)
        self._set_labels(colors)
        self.setLabel("bottom", x_metric.header + (" (log)" if log_x else ""))
        self.setLabel("left", y_metric.header + (" (log)" if log_y else ""))
        for name in ("left", "bottom"):
            self.getAxis(name).label.setFont(chart_font(12))
        self.legend.clear()
        if self.context_points:
            self.legend.addItem(self.context_item, "other catalog GPUs")
        if self.frontier_ids:
            self.legend.addItem(self.frontier_item, "Pareto frontier")
        if self.missing_names:
            # an empty sample: the line only says who is absent and why
            self.legend.addItem(
                self._missing_sample, "not plotted (n/a): " + ", ".join(self.missing_names)
            )
        shown = [*self.context_points, *self.selection_points]
        x_range = axis_range([p.x for p in shown], log=log_x)
        y_range = axis_range([p.y for p in shown], log=log_y)
        if x_range is not None and y_range is not None:
            # Fit the data; a linear axis of prices or TFLOPS never pads below zero.
            self.disableAutoRange()
            self.setRange(xRange=x_range, yRange=y_range, padding=0)
        else:
            self.enableAutoRange()
            self.autoRange(padding=0.08)
        # log ticks only once the range holds log10 values (10**40000 overflows)
        for name, log, axis_span, metric in (
            ("bottom", log_x, x_range, x_metric),
            ("left", log_y, y_range, y_metric),
        ):
            axis = self.getAxis(name)
            axis.setLogMode(log)
            # Decades only on a log axis ("$1k", "$10k"): no crowded 2-9 labels.
            axis.setTicks(
                [log_ticks(*axis_span, metric.unit)] if log and axis_span is not None else None
            )

    def _set_frontier(self, x_key: str, y_key: str) -> None:
        directions = frontier_directions(x_key, y_key)
        plotted = {p.id: p for p in [*self.context_points, *self.selection_points]}
        if directions is None:
            self.frontier_ids = []
        else:
            points = [ScatterPoint(p.id, p.x, p.y) for p in plotted.values()]
            self.frontier_ids = pareto_frontier(points, *directions)
        line = [plotted[point_id] for point_id in self.frontier_ids]
        self.frontier_item.setData(
            x=[p.plot_x for p in line], y=[p.plot_y for p in line], pen=self._frontier_pen()
        )
        for label in self.frontier_labels:
            self.removeItem(label)
        self.frontier_labels = []
        selected = {p.id for p in self.selection_points}
        for point in line:
            if point.id in selected:
                continue  # a selected GPU has its own colored label
            label = pg.TextItem(point.name, color=self._style.muted, anchor=(0, 0))
            label.setFont(chart_font(10))
            label.setPos(point.plot_x, point.plot_y)
            label.setZValue(9)
            self.addItem(label)
            self.frontier_labels.append(label)
        self._frontier_points = [point for point in line if point.id not in selected]

    def _set_labels(self, colors: list[QColor]) -> None:
        for label in self._labels:
            self.removeItem(label)
        self._labels = []
        for point, color in zip(self.selection_points, colors, strict=True):
            label = pg.TextItem(point.name, color=color, anchor=(0, 1))
            label.setFont(chart_font(12, bold=True))
            label.setPos(point.plot_x, point.plot_y)
            label.setZValue(11)
            self.addItem(label)
            self._labels.append(label)

        self.layout_labels()

    #: Where a label may sit around its point, tried in order: right/left of
    #: it just above, just below, then one line further out each way, up to
    #: eight lines (a crowded cluster stacks its labels above and below it).
    _LABEL_ANCHORS: tuple[tuple[float, float], ...] = tuple(
        (side, lift)
        for step in range(8)
        for lift in (1.0 + step, -float(step))
        for side in (0.0, 1.0)
    )

    def layout_labels(self) -> None:
        """Move name labels apart so that none covers another (scene space).

        Labels keep a fixed pixel size whatever the zoom, so their overlap is
        decided after the view transform is known; the view calls this again
        whenever its range or size changes.
        """
        view = self.getViewBox()
        inside = view.sceneBoundingRect()
        marker = 14.0  # the selection markers' size in pixels
        markers: list[QRectF] = []
        for point in self.selection_points:
            centre = view.mapViewToScene(QPointF(point.plot_x, point.plot_y))
            markers.append(QRectF(centre.x() - marker / 2, centre.y() - marker / 2, marker, marker))
        placed: list[QRectF] = []
        order = sorted(
            range(len(self._labels)),
            key=lambda i: (-self.selection_points[i].plot_y, self.selection_points[i].plot_x),
        )
        for index in order:
            label = self._labels[index]
            # A label touches its own point by design, never another point or label.
            obstacles = placed + [rect for i, rect in enumerate(markers) if i != index]
            chosen: QRectF | None = None
            for anchor in self._LABEL_ANCHORS:
                label.setAnchor(anchor)
                rect = label.sceneBoundingRect()
                if inside.contains(rect) and not any(rect.intersects(o) for o in obstacles):
                    chosen = rect
                    break
            if chosen is None:  # crowded beyond all candidates: keep the first place
                label.setAnchor(self._LABEL_ANCHORS[0])
                chosen = label.sceneBoundingRect()
            placed.append(chosen)
        self._layout_frontier_labels(placed, markers)

    #: A frontier GPU's grey name may sit this many lines from its point at most.
    _FRONTIER_ANCHORS = _LABEL_ANCHORS[:8]

    def _layout_frontier_labels(self, placed: list[QRectF], markers: list[QRectF]) -> None:
        """Grey names of the frontier's other GPUs where they clear every name and
        marker; one that finds no clear place is left out (its point keeps the tooltip).

        At the cheap end of a price axis these names piled onto each other and onto
        the selected GPUs' names."""
        view = self.getViewBox()
        inside = view.sceneBoundingRect()
        points = self._frontier_points
        dot = 8.0
        dots = [
            QRectF(centre.x() - dot / 2, centre.y() - dot / 2, dot, dot)
            for centre in (
                view.mapViewToScene(QPointF(point.plot_x, point.plot_y)) for point in points
            )
        ]
        for index, label in enumerate(self.frontier_labels):
            obstacles = placed + markers + [rect for i, rect in enumerate(dots) if i != index]
            chosen: QRectF | None = None
            for anchor in self._FRONTIER_ANCHORS:
                label.setAnchor(anchor)
                rect = label.sceneBoundingRect()
                if inside.contains(rect) and not any(rect.intersects(o) for o in obstacles):
                    chosen = rect
                    break
            label.setVisible(chosen is not None)
            if chosen is not None:
                placed.append(chosen)

    def label_items(self) -> list[pg.TextItem]:
        return list(self._labels)


class ScatterChart(pg.PlotWidget):  # type: ignore[misc]
    """The scatter on screen: a :class:`ScatterPlot` in a plot widget."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.plot = ScatterPlot()
        super().__init__(parent, plotItem=self.plot, background=LIGHT.background)
        self.setMinimumSize(360, 280)

    def set_style(self, style: ChartStyle) -> None:
        self.setBackground(style.background)
        self.plot.set_style(style)
