"""The Fleet tab's chart: each device's measured GEMM of one model as a horizontal bar,
the devices slow against their fleet median in another colour, with the fleet median
and the slow threshold drawn over them and named above the plot."""

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
    ticks = [(y, name) for y, (name, _, _) in zip(ys, points, strict=True)] if labelled else []
    left = item.getAxis("left")
    left.setTicks([ticks])
    # The axis does not grow for text ticks on its own: make room for the longest name.
    longest = max((plot.fontMetrics().horizontalAdvance(name) for _, name in ticks), default=0)
    left.setWidth(longest + 16 if ticks else None)
    # Room right of the longest bar for its figure.
    # No automatic padding: it depends on the view's size when drawn, so a chart drawn
    # on a hidden tab and redrawn after a theme switch came out 3 px apart.
    x_max = max(values) * (1.15 if labelled else 1.08)
    item.setXRange(0, x_max, padding=0)
    if len(values) >= 2:
        median = statistics.median(values)
        _draw_median_lines(plot, median, x_max, bars.zValue() + 10)
        # The words for the two lines, under the title; their figures on the top axis.
        item.setTitle(f"{title}<br><small>{MEDIAN_KEY}</small>")
    else:
        item.hideAxis("top")
    item.setYRange(-0.6, len(points) - 0.4, padding=0)


#: What the two lines are, said once under the title (the figures sit on the top axis).
MEDIAN_KEY = f"dashed: fleet median · dotted: {SLOW_FRACTION:.0%} of it (below: slow)"
#: The two top-axis figures need this share of the axis between them, or only the
#: median's is written (each is about 30 px; the axis is 400-900 px long).
_TICKS_APART = 0.09


def median_ticks(median: float, x_max: float) -> list[tuple[float, str]]:
    """The top axis' labels of the two lines: above the plot, in the axis' (theme's)
    colour, never over a bar or struck through by their own line."""
    threshold = SLOW_FRACTION * median
    ticks = [(median, format_figure(median))]
    if (median - threshold) / x_max >= _TICKS_APART:
        ticks.insert(0, (threshold, format_figure(threshold)))
    return ticks


def _draw_median_lines(plot: pg.PlotWidget, median: float, x_max: float, z_value: float) -> None:
    """The fleet median (dashed) and the slow threshold (dotted), named on the top axis.

    Labels inside the plot sat on the bars (the first GPU seemed to measure 440 for
    700) and kept their old theme's box on a live switch; an axis is restyled with it.
    """
    item = plot.getPlotItem()
    for x, style in (
        (median, Qt.PenStyle.DashLine),
        (SLOW_FRACTION * median, Qt.PenStyle.DotLine),
    ):
        line = pg.InfiniteLine(
            x, angle=90, pen=pg.mkPen(theme.muted_color(), width=1.5, style=style)
        )
        line.setZValue(z_value)  # over the bars, not hidden behind them
        plot.addItem(line)
    item.showAxis("top")
    top = item.getAxis("top")
    top.setTicks([median_ticks(median, x_max)])
    top.setToolTip(
        f"Dashed: the median of these devices. Dotted: {SLOW_FRACTION:.0%} of it; "
        "a device below is listed as slow."
    )
