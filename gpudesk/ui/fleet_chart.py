"""The Fleet tab's chart: each device's measured GEMM of one model as a horizontal bar,
outliers in another colour, with the fleet median and the slow threshold drawn over them."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from gpudesk.bench.text import format_figure
from gpudesk.fleet.checks import SLOW_FRACTION
from gpudesk.render.colors import series_color
from gpudesk.ui import theme

OUTLIER_COLOR = QColor("#D55E00")  # Okabe-Ito vermillion, as the charts use
#: Above this many devices the bars carry no names or figures (they would overlap).
_MAX_LABELLED_BARS = 40


def draw_no_bars(plot: pg.PlotWidget, *, surveyed: bool) -> None:
    """An empty 0-1 frame reads as data: say what would be here instead."""
    plot.clear()
    item = plot.getPlotItem()
    item.setTitle(
        "No benchmark figures (survey with the quick benchmark)"
        if surveyed
        else "Each GPU's measured GEMM appears here after a survey"
    )
    item.getAxis("left").setTicks(None)
    for side in ("left", "bottom"):
        item.hideAxis(side)


def draw_gemm_bars(
    plot: pg.PlotWidget, points: Sequence[tuple[str, float, bool]], title: str, unit: str
) -> None:
    """One bar per (device label, GEMM value, is an outlier), top to bottom in order."""
    plot.clear()
    item = plot.getPlotItem()
    for side in ("left", "bottom"):
        item.showAxis(side)
    item.setTitle(title)
    item.setLabel("bottom", unit)
    # Top to bottom in survey order.
    ys = [len(points) - 1 - position for position in range(len(points))]
    values = [value for _, value, _ in points]
    normal = series_color(0)
    brushes = [pg.mkBrush(OUTLIER_COLOR if outlier else normal) for *_, outlier in points]
    bars = pg.BarGraphItem(x0=0, y=ys, height=0.7, width=values, brushes=brushes, pen=None)
    plot.addItem(bars)
    labelled = len(points) <= _MAX_LABELLED_BARS
    if labelled:
        # Each bar's figure just past its end, so no one reads values off the axis.
        for y, value in zip(ys, values, strict=True):
            text = pg.TextItem(format_figure(value), color=theme.muted_color(), anchor=(0, 0.5))
            text.setPos(value, y)
            plot.addItem(text)
    if len(values) >= 2:
        median = statistics.median(values)
        pen = pg.mkPen(theme.muted_color(), style=Qt.PenStyle.DashLine)
        # Both labels left of their lines (the median sits near the right edge),
        # one above the other so they never overlap.
        for x, text, height in (
            (median, "fleet median", 0.99),
            (SLOW_FRACTION * median, f"{SLOW_FRACTION:.0%} of median", 0.94),
        ):
            options = {
                "position": height,
                "color": theme.muted_color(),
                "anchors": [(1, 0), (1, 0)],
                "fill": plot.backgroundBrush().color(),
            }
            line = pg.InfiniteLine(x, angle=90, pen=pen, label=text, labelOpts=options)
            # Over the bars, not hidden behind them.
            line.setZValue(bars.zValue() + 10)
            plot.addItem(line)
    ticks = [(y, name) for y, (name, _, _) in zip(ys, points, strict=True)] if labelled else []
    left = item.getAxis("left")
    left.setTicks([ticks])
    # The axis does not grow for text ticks on its own: make room for the longest name.
    longest = max((plot.fontMetrics().horizontalAdvance(name) for _, name in ticks), default=0)
    left.setWidth(longest + 16 if ticks else None)
    # Room right of the longest bar for its figure.
    item.setXRange(0, max(values) * (1.15 if labelled else 1.08))
    # Headroom above the top bar for the median lines' labels.
    headroom = 1.0 + 0.1 * len(points) if len(values) >= 2 else 0.0
    item.setYRange(-0.6, len(points) - 0.4 + headroom, padding=0)
