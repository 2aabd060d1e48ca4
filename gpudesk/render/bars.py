"""Bar chart of one figure across the compare selection, best on top."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFontMetricsF
from PySide6.QtWidgets import QWidget

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.names import short_name
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.bars import BarValue, bar_order
from gpudesk.compare.chart_values import chart_value, stand_in
from gpudesk.measured import MeasuredSeries
from gpudesk.render.colors import gpu_color_slots
from gpudesk.render.scatter import chart_axes
from gpudesk.render.style import (
    LIGHT,
    ChartStyle,
    chart_font,
    chart_series_color,
    measured_color,
)

DEFAULT_BAR_KEY = "fp16_tensor_tflops"
BAR_HEIGHT = 0.62
MEASURED_BAR_ID = "measured"


@dataclass(frozen=True, slots=True)
class DrawnBar:
    """A bar as drawn: row from the top (0 = best), value (None: n/a) and color."""

    id: str
    label: str
    value: float | None
    row: int
    color: QColor


class BarPlot(pg.PlotItem):  # type: ignore[misc]
    """Horizontal bars sorted best first; GPU names on the left axis, values at the bar ends.

    ``bars`` holds the drawn :class:`DrawnBar` list after :meth:`set_data`.
    """

    def __init__(self) -> None:
        super().__init__(axisItems=chart_axes())
        self.setMenuEnabled(False)
        self.hideButtons()
        self.setMouseEnabled(x=False, y=False)
        self.showGrid(x=True, y=False, alpha=0.25)
        for name in ("left", "bottom"):
            self.getAxis(name).setStyle(tickFont=chart_font(12))
        self._style: ChartStyle = LIGHT
        self._bar_item: pg.BarGraphItem | None = None
        self._labels: list[pg.TextItem] = []
        self.metric_key = DEFAULT_BAR_KEY
        self.bars: list[DrawnBar] = []
        self.stand_ins: dict[str, str] = {}
        self._top = 1.0
        self._last: tuple[list[CatalogEntry], MeasuredSeries | None] | None = None

    def set_style(self, style: ChartStyle) -> None:
        self._style = style
        for name in ("left", "bottom"):
            axis = self.getAxis(name)
            axis.setPen(pg.mkPen(style.muted))
            axis.setTextPen(pg.mkPen(style.text))
            axis.label.setDefaultTextColor(style.text)
        if self._last is not None:
            self.set_data(self._last[0], self.metric_key, measured=self._last[1])

    def set_data(
        self,
        entries: Sequence[CatalogEntry],
        metric_key: str = DEFAULT_BAR_KEY,
        *,
        measured: MeasuredSeries | None = None,
    ) -> None:
        """Bars of ``metric_key`` for ``entries`` (in their session colors) and the measured one."""
        metric = METRICS[metric_key]
        self.metric_key = metric_key
        self._last = (list(entries), measured)
        colors: dict[str, QColor] = {}
        values: list[BarValue] = []
        slots = gpu_color_slots([entry.id for entry in entries])
        #: bar id -> the figure drawn in place of the missing one ("BF16"), as the radar does
        self.stand_ins = {}
        for slot, entry in zip(slots, entries, strict=True):
            values.append(BarValue(entry.id, short_name(entry), chart_value(entry, metric_key)))
            colors[entry.id] = chart_series_color(slot, self._style.dark)
            if (name := stand_in(entry, metric_key)) is not None:
                self.stand_ins[entry.id] = name
        if measured is not None and metric_key in measured.values:
            values.append(BarValue(MEASURED_BAR_ID, measured.label, measured.values[metric_key]))
            colors[MEASURED_BAR_ID] = measured_color(self._style.dark)
        ordered = bar_order(values, metric.higher_is_better)
        self.bars = [
            DrawnBar(bar.id, bar.label, bar.value, row, colors[bar.id])
            for row, bar in enumerate(ordered)
        ]
        self._draw(metric.unit)
        self.setLabel("bottom", metric.header)
        self.getAxis("bottom").label.setFont(chart_font(12))

    def _draw(self, unit: str) -> None:
        metric = METRICS[self.metric_key]
        if self._bar_item is not None:
            self.removeItem(self._bar_item)
            self._bar_item = None
        for label in self._labels:
            self.removeItem(label)
        self._labels = []
        count = len(self.bars)
        present = [bar for bar in self.bars if bar.value is not None]
        if present:
            self._bar_item = pg.BarGraphItem(
                x0=[0.0] * len(present),
                y=[count - 1 - bar.row for bar in present],
                height=BAR_HEIGHT,
                width=[float(bar.value or 0.0) for bar in present],
                brushes=[pg.mkBrush(bar.color) for bar in present],
                pens=[pg.mkPen(bar.color.darker(120)) for bar in present],
            )
            self.addItem(self._bar_item)
        top = max((float(bar.value or 0.0) for bar in present), default=1.0) or 1.0
        for bar in self.bars:
            y = count - 1 - bar.row
            if bar.value is None:
                text, x, color = "n/a", 0.0, self._style.muted
            else:
                text = f"{metric.format(bar.value)} {unit}".strip()
                if bar.id in self.stand_ins:
                    text += f" ({self.stand_ins[bar.id]})"
                x, color = bar.value, self._style.text
            label = pg.TextItem(text, color=color, anchor=(0, 0.5))
            label.setFont(chart_font(12))
            label.setPos(x + top * 0.01, y)
            self.addItem(label)
            self._labels.append(label)
        ticks = [(count - 1 - bar.row, _short(bar.label)) for bar in self.bars]
        left = self.getAxis("left")
        left.setTicks([ticks, []])
        # size the name axis up front: pyqtgraph widens it only after a first
        # on-screen paint, and an export of a never-shown chart would drop names
        metrics = QFontMetricsF(chart_font(12))
        left.setWidth(
            int(max((metrics.horizontalAdvance(name) for _, name in ticks), default=40)) + 18
        )
        self._top = top
        self._fit_x_range()
        self.setYRange(-0.6, max(0, count - 1) + 0.6, padding=0)

    def _fit_x_range(self) -> None:
        """Room right of the longest bar for its value text ("1,835.0 TFLOPS (BF16)" was
        cut at the edge): as wide as that text is, at the plot's width (1.22 unknown)."""
        longest = max(
            (label for label in self._labels if label.pos().x() > 0),
            key=lambda label: label.pos().x(),
            default=None,
        )
        width = self.getViewBox().width()
        factor = 1.22
        if longest is not None and width > 0:
            text_px = QFontMetricsF(chart_font(12)).horizontalAdvance(longest.toPlainText())
            share = min(0.6, (text_px + 12) / width)
            factor = max(factor, 1.0 / (1.0 - share))
        self.setXRange(0, self._top * factor, padding=0)


def _short(name: str, limit: int = 30) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


class BarChart(pg.PlotWidget):  # type: ignore[misc]
    """The bar chart on screen."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.plot = BarPlot()
        super().__init__(parent, plotItem=self.plot, background=LIGHT.background)
        self.setMinimumSize(360, 200)

    def set_style(self, style: ChartStyle) -> None:
        self.setBackground(style.background)
        self.plot.set_style(style)

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)
        self.plot._fit_x_range()  # the value texts' room is in pixels

    def data_text(self) -> str:
        """What the chart shows, as text (screen readers, "Copy data as text")."""
        metric = METRICS[self.plot.metric_key]
        unit = f" {metric.unit}" if metric.unit else ""
        lines = [f"Bars: {metric.label}{unit}, best first"]
        for bar in self.plot.bars:
            figure = "n/a" if bar.value is None else f"{bar.value:,.4g}"
            if bar.id in self.plot.stand_ins:
                figure += f" ({self.plot.stand_ins[bar.id]} figure)"
            lines.append(f"{bar.label}: {figure}")
        return "\n".join(lines)
