"""Scatter of any two figures: the catalog in grey, the selection in color, the Pareto frontier.

The plot is a :class:`ScatterPlot` (a pyqtgraph ``PlotItem``), so the same
object sits in the on-screen :class:`ScatterChart` and in an offscreen scene
for PNG/SVG/PDF output. Log axes are drawn by plotting ``log10`` of the values
and switching the axis ticks to log mode; the frontier is computed on the raw
values by :func:`gpudesk.compare.pareto.pareto_frontier`.
"""

from __future__ import annotations

import itertools
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
from gpudesk.compare.chart_values import chart_value, sets_catalog_scale, stand_in
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


def label_candidates(
    own: QRectF, width: float, height: float, gap: float, rings: int = 5
) -> list[QRectF]:
    """Rectangles of ``width`` x ``height`` around the marker ``own``, nearest first:
    right (just above the centre, then centred), left, above, below (centred,
    then starting or ending over the point), the four diagonals; then the same
    half a line further out per ring (``rings`` rings)."""
    rects: list[QRectF] = []
    cx, cy = own.center().x(), own.center().y()
    for ring in range(rings):
        extra = ring * height / 2
        d = gap + extra
        right, left = own.right() + d, own.left() - d - width
        above, below = own.top() - d - height, own.bottom() + d
        for x, y in (
            (right, cy - height * 0.75),
            (right, cy - height / 2),
            (left, cy - height * 0.75),
            (left, cy - height / 2),
            (cx - width / 2, above),
            (cx - width / 2, below),
            (own.left(), above),  # starting or ending over the point (at a plot edge)
            (own.right() - width, above),
            (own.left(), below),
            (own.right() - width, below),
            (right, above),
            (left, above),
            (right, below),
            (left, below),
        ):
            rects.append(QRectF(x, y, width, height))
    return rects


def nudged_inside(rect: QRectF, inside: QRectF, limit: float) -> QRectF:
    """``rect`` moved sideways into ``inside`` when it sticks out by ``limit`` or less
    (a point on the plot's edge: its name starts at the edge instead)."""
    moved = QRectF(rect)
    if inside.left() - limit <= rect.left() < inside.left():
        moved.moveLeft(inside.left() + 1)
    elif inside.right() < rect.right() <= inside.right() + limit:
        moved.moveRight(inside.right() - 1)
    return moved


def segment_hits_rect(a: QPointF, b: QPointF, rect: QRectF) -> bool:
    """Whether the segment ``a``-``b`` passes through ``rect`` (Liang-Barsky clipping)."""
    x0, y0, dx, dy = a.x(), a.y(), b.x() - a.x(), b.y() - a.y()
    low, high = 0.0, 1.0
    for p, q in (
        (-dx, x0 - rect.left()),
        (dx, rect.right() - x0),
        (-dy, y0 - rect.top()),
        (dy, rect.bottom() - y0),
    ):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            low = max(low, t)
        else:
            high = min(high, t)
        if low > high:
            return False
    return True


def segments_cross(a: QPointF, b: QPointF, c: QPointF, d: QPointF) -> bool:
    """Whether the segments ``a``-``b`` and ``c``-``d`` meet (touching counts)."""

    def side(p: QPointF, q: QPointF, r: QPointF) -> float:
        return (q.x() - p.x()) * (r.y() - p.y()) - (q.y() - p.y()) * (r.x() - p.x())

    def between(p: QPointF, q: QPointF, r: QPointF) -> bool:
        return min(p.x(), q.x()) <= r.x() <= max(p.x(), q.x()) and min(
            p.y(), q.y()
        ) <= r.y() <= max(p.y(), q.y())

    d1, d2, d3, d4 = side(c, d, a), side(c, d, b), side(a, b, c), side(a, b, d)
    if ((d1 > 0 > d2) or (d1 < 0 < d2)) and ((d3 > 0 > d4) or (d3 < 0 < d4)):
        return True
    return (
        (d1 == 0 and between(c, d, a))
        or (d2 == 0 and between(c, d, b))
        or (d3 == 0 and between(a, b, c))
        or (d4 == 0 and between(a, b, d))
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
        self._laying_out = False
        self.getViewBox().sigTransformChanged.connect(self.layout_labels)
        self.x_key = DEFAULT_X_KEY
        self.y_key = DEFAULT_Y_KEY
        self.log_x = False
        self.log_y = False
        self.context_points: list[PlottedPoint] = []
        self.selection_points: list[PlottedPoint] = []
        self.frontier_ids: list[str] = []
        self.missing_names: list[str] = []
        self.stand_ins: dict[str, str] = {}
        self.bare_module_ids: list[str] = []
        self.bare_module_names: list[str] = []
        self._last_data: tuple[list[CatalogEntry], list[CatalogEntry]] | None = None
        self._missing_sample = pg.PlotDataItem(pen=None)
        #: selected GPUs whose name label found no free place (named in the legend)
        self.unlabelled_points: list[PlottedPoint] = []
        self._unlabelled_samples: list[pg.ScatterPlotItem] = []
        self._colors: dict[str, QColor] = {}
        #: (text, scene rectangle) of every label shown, after :meth:`layout_labels`
        self.label_rects: list[tuple[str, QRectF]] = []
        #: (name, start, end) in scene space of each leader line drawn to a far name
        self.leader_lines: list[tuple[str, QPointF, QPointF]] = []
        self._leader_items: list[pg.PlotDataItem] = []

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

    def _fill_legend(self) -> None:
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
        # a selected GPU whose name found no free place: named here in its colour
        self._unlabelled_samples = []
        for point in self.unlabelled_points:
            sample = pg.ScatterPlotItem(
                size=10, pen=None, brush=pg.mkBrush(self._colors.get(point.id, CONTEXT_COLOR))
            )
            self._unlabelled_samples.append(sample)
            self.legend.addItem(sample, f"{point.name} (no room for its label)")

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
            x, y = chart_value(entry, x_key), chart_value(entry, y_key)
            if x is None or y is None:
                return None
            px, py = _plotted(x, log_x), _plotted(y, log_y)
            if px is None or py is None:
                return None
            return PlottedPoint(entry.id, short_name(entry), x, y, px, py, entry.name)

        # A used module's bare price sets neither the axis nor the frontier unless compared.
        self.bare_module_ids = [
            entry.id
            for entry in everything.values()
            if entry.id not in selected_ids
            and not (sets_catalog_scale(entry, x_key) and sets_catalog_scale(entry, y_key))
        ]
        left_out = set(self.bare_module_ids)
        self.context_points = [
            point
            for entry in everything.values()
            if entry.id not in selected_ids
            and entry.id not in left_out
            and (point := plot(entry)) is not None
        ]
        #: compared GPU name -> the figure drawn in place of a missing one ("BF16")
        self.stand_ins = {
            short_name(entry): name
            for entry in selection
            for key in (x_key, y_key)
            if (name := stand_in(entry, key)) is not None
        }
        #: compared GPUs whose price is a bare used module's (off the frontier)
        self.bare_module_names = [
            short_name(entry)
            for entry in selection
            if not (sets_catalog_scale(entry, x_key) and sets_catalog_scale(entry, y_key))
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
        self._colors = {p.id: color for p, color in zip(self.selection_points, colors, strict=True)}
        self.unlabelled_points = []
        self._fill_legend()
        self._set_labels(colors)
        self.setLabel("bottom", x_metric.header + (" (log)" if log_x else ""))
        self.setLabel("left", y_metric.header + (" (log)" if log_y else ""))
        for name in ("left", "bottom"):
            self.getAxis(name).label.setFont(chart_font(12))
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
            bare = {p.id for p in self.selection_points if p.name in self.bare_module_names}
            points = [ScatterPoint(p.id, p.x, p.y) for p in plotted.values() if p.id not in bare]
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
        for item in [*self._labels, *self._leader_items]:
            self.removeItem(item)
        self._labels = []
        self._leader_items = []
        for point, color in zip(self.selection_points, colors, strict=True):
            label = pg.TextItem(point.name, color=color, anchor=(0, 1))
            label.setFont(chart_font(12, bold=True))
            label.setPos(point.plot_x, point.plot_y)
            label.setZValue(11)
            self.addItem(label)
            self._labels.append(label)
            pen = QPen(color, 1.2)
            pen.setCosmetic(True)
            leader = pg.PlotDataItem(pen=pen)
            leader.setZValue(8)
            leader.setVisible(False)
            self.addItem(leader, ignoreBounds=True)
            self._leader_items.append(leader)

        self.layout_labels()

    #: Gap in pixels between a label and its own point's marker.
    _LABEL_GAP = 2.0
    #: Selection markers' and grey dots' sizes in pixels (as drawn).
    _MARKER_PX = 14.0
    _DOT_PX = 8.0

    def layout_labels(self) -> None:
        """Place every name where it covers no marker, no other name, the legend
        or the dashed frontier line; a name with no such place is left out.

        Candidates sit around the point (right, left, above, below, the four
        diagonals) just clear of its marker, then up to two lines further out
        (a grey name half a line at most).
        The selected GPUs' names are placed first (top of the chart first), then
        the grey frontier names. A selected GPU's name with no room that near
        may sit up to four lines out with a leader line in its colour (text and
        line clear of every other name, selected marker and the frontier; the
        line may pass over grey dots). A selected GPU left unnamed is listed in the
        legend in its colour; every point keeps its name in the tooltip.
        Labels keep a fixed pixel size whatever the zoom, so this runs in scene
        space after the view transform is known; the view calls it again
        whenever its range or size changes.
        """
        if self._laying_out:  # the legend's refill moves the view: already on it
            return
        self._laying_out = True
        try:
            unlabelled = self._place_all()
            if [p.id for p in unlabelled] != [p.id for p in self.unlabelled_points]:
                self.unlabelled_points = unlabelled
                self._fill_legend()
                # the legend grew or shrank: place again around its new outline
                unlabelled = self._place_all()
                if [p.id for p in unlabelled] != [p.id for p in self.unlabelled_points]:
                    self.unlabelled_points = unlabelled
                    self._fill_legend()
        finally:
            self._laying_out = False

    def _place_all(self) -> list[PlottedPoint]:
        view = self.getViewBox()
        inside = view.sceneBoundingRect()

        def box(point: PlottedPoint, size: float) -> QRectF:
            centre = view.mapViewToScene(QPointF(point.plot_x, point.plot_y))
            return QRectF(centre.x() - size / 2, centre.y() - size / 2, size, size)

        markers = [box(point, self._MARKER_PX) for point in self.selection_points]
        dots = [box(point, self._DOT_PX) for point in self.context_points]
        frontier = self.frontier_item.getData()
        segments: list[tuple[QPointF, QPointF]] = []
        if frontier[0] is not None and len(frontier[0]) > 1:
            corners = [
                view.mapViewToScene(QPointF(float(x), float(y)))
                for x, y in zip(frontier[0], frontier[1], strict=True)
            ]
            segments = list(itertools.pairwise(corners))
        placed: list[QRectF] = []
        if self.legend.isVisible() and self.legend.items:
            placed.append(self.legend.sceneBoundingRect())
        self.label_rects = []
        unlabelled: list[PlottedPoint] = []
        order = sorted(
            range(len(self._labels)),
            key=lambda i: (-self.selection_points[i].plot_y, self.selection_points[i].plot_x),
        )
        self.leader_lines = []
        for leader in self._leader_items:
            leader.setVisible(False)
        missed = [
            index
            for index in order
            if self._place(
                self._labels[index], markers[index], [*markers, *dots], placed, segments, inside
            )
            is None
        ]
        # no room beside the point: further out (up to four lines), with a leader line
        for index in missed:
            if not self._place_with_leader(index, markers, dots, placed, segments, inside):
                unlabelled.append(self.selection_points[index])
        segments = [*segments, *((a, b) for _, a, b in self.leader_lines)]
        context_index = {p.id: i for i, p in enumerate(self.context_points)}
        for label, point in zip(self.frontier_labels, self._frontier_points, strict=True):
            own = dots[context_index[point.id]]
            # a grey name further out would read as another point's
            self._place(label, own, [*markers, *dots], placed, segments, inside, rings=2)
        unlabelled.sort(key=lambda p: [q.id for q in self.selection_points].index(p.id))
        return unlabelled

    def _place(
        self,
        label: pg.TextItem,
        own: QRectF,
        marks: list[QRectF],
        placed: list[QRectF],
        segments: list[tuple[QPointF, QPointF]],
        inside: QRectF,
        rings: int = 5,
    ) -> QRectF | None:
        """Move ``label`` to the first free candidate around ``own``; hide it if none."""
        view = self.getViewBox()
        label.setAnchor((0, 0))
        # the text's own box: the item's outline less its document margin (bar a pixel)
        pad = max(0.0, float(label.textItem.document().documentMargin()) - 1.0)
        # the text item's own rectangle is in pixels; the label's scene outline is
        # only right once it has been painted (a hidden label never is)
        size = label.textItem.boundingRect().size()
        width, height = size.width() - 2 * pad, size.height() - 2 * pad
        for candidate in label_candidates(own, width, height, self._LABEL_GAP, rings):
            rect = nudged_inside(candidate, inside, own.width())
            if not inside.contains(rect):
                continue
            if any(rect.intersects(other) for other in placed):
                continue
            if any(rect.intersects(mark) for mark in marks):
                continue
            if any(segment_hits_rect(a, b, rect) for a, b in segments):
                continue
            label.setPos(view.mapSceneToView(rect.topLeft() - QPointF(pad, pad)))
            label.setVisible(True)
            placed.append(rect)
            self.label_rects.append((label.toPlainText(), rect))
            return rect
        label.setVisible(False)
        return None

    def _place_with_leader(
        self,
        index: int,
        markers: list[QRectF],
        dots: list[QRectF],
        placed: list[QRectF],
        segments: list[tuple[QPointF, QPointF]],
        inside: QRectF,
    ) -> bool:
        """A far place for selected GPU ``index``'s name whose text and leader line
        (marker to nearest point of the text) both keep clear of everything."""
        view = self.getViewBox()
        label = self._labels[index]
        own = markers[index]
        centre = own.center()
        others = [mark for i, mark in enumerate(markers) if i != index] + dots
        leaders = [(a, b) for _, a, b in self.leader_lines]
        label.setAnchor((0, 0))
        pad = max(0.0, float(label.textItem.document().documentMargin()) - 1.0)
        size = label.textItem.boundingRect().size()
        width, height = size.width() - 2 * pad, size.height() - 2 * pad
        near = len(label_candidates(own, width, height, self._LABEL_GAP))
        for candidate in label_candidates(own, width, height, self._LABEL_GAP, rings=9)[near:]:
            rect = nudged_inside(candidate, inside, own.width())
            if not inside.contains(rect):
                continue
            if any(rect.intersects(other) for other in placed):
                continue
            if any(rect.intersects(mark) for mark in [own, *others]):
                continue
            if any(segment_hits_rect(a, b, rect) for a, b in [*segments, *leaders]):
                continue
            end = QPointF(
                min(max(centre.x(), rect.left()), rect.right()),
                min(max(centre.y(), rect.top()), rect.bottom()),
            )
            length = math.hypot(end.x() - centre.x(), end.y() - centre.y())
            if length <= own.width() / 2:
                continue
            start = centre + (end - centre) * (own.width() / 2 / length)
            # a leader may pass over grey dots, never a selected marker or a name
            selected_others = [mark for i, mark in enumerate(markers) if i != index]
            if any(segment_hits_rect(start, end, box) for box in [*selected_others, *placed]):
                continue
            if any(segments_cross(start, end, a, b) for a, b in [*segments, *leaders]):
                continue
            label.setPos(view.mapSceneToView(rect.topLeft() - QPointF(pad, pad)))
            label.setVisible(True)
            leader = self._leader_items[index]
            a, b = view.mapSceneToView(start), view.mapSceneToView(end)
            leader.setData(x=[a.x(), b.x()], y=[a.y(), b.y()])
            leader.setVisible(True)
            placed.append(rect)
            self.label_rects.append((label.toPlainText(), rect))
            self.leader_lines.append((label.toPlainText(), start, end))
            return True
        label.setVisible(False)
        return False

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

    def data_text(self) -> str:
        """What the chart shows, as text (screen readers, "Copy data as text")."""
        plot = self.plot
        x, y = METRICS[plot.x_key], METRICS[plot.y_key]
        lines = [f"Scatter: {y.label} against {x.label}"]
        for point in plot.selection_points:
            frontier = " (Pareto frontier)" if point.id in plot.frontier_ids else ""
            lines.append(
                f"{point.full_name or point.name}: {x.label} {point.x:,.4g}, "
                f"{y.label} {point.y:,.4g}{frontier}"
            )
        if plot.missing_names:
            lines.append("Not plotted (a figure is n/a): " + ", ".join(plot.missing_names))
        lines.append(f"{len(plot.context_points)} other catalog GPUs in grey")
        return "\n".join(lines)
