"""The latency-throughput chart of serving: TTFT and TPOT (p50 and p90) against the
request rate, the SLO's bounds and the highest rate that meets them.

One painter function, :func:`paint_latency`, draws it into any ``QPainter``: the
How fast? page's :class:`LatencyChartWidget` on screen and the PDF's speed section
(vector paths and real text, on whichever thread paints the PDF: it uses no
graphics items). The figures arrive as any object shaped like :class:`CurveData`
(the report's :class:`~gpudesk.report.speed_section.LatencyCurve`), so this module
needs nothing above it.

Two panels share the rate axis: the time to first token is hundreds of
milliseconds to seconds and the time per output token tens of milliseconds, so
one axis would flatten the second.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpudesk.render.colors import series_color
from gpudesk.render.style import LIGHT, ChartStyle, chart_font

#: p50 and p90 lines: two Okabe-Ito colours (above 3:1 on both backgrounds) and two
#: dash patterns, so the pair reads without colour too
P50_COLOR = series_color(0)
P90_COLOR = series_color(4)
#: the SLO bound and the highest rate meeting it
SLO_LIGHT, SLO_DARK = QColor("#b03a2e"), QColor("#ff8a80")
MEETS_LIGHT, MEETS_DARK = QColor("#1b7f4b"), QColor("#5fd39a")


class PointData(Protocol):
    """One simulated rate: requests/s and the latency percentiles in ms."""

    @property
    def rate_rps(self) -> float: ...
    @property
    def ttft_p50_ms(self) -> float: ...
    @property
    def ttft_p90_ms(self) -> float: ...
    @property
    def tpot_p50_ms(self) -> float: ...
    @property
    def tpot_p90_ms(self) -> float: ...


class CurveData(Protocol):
    """What the chart draws: a title, the points by rate, the SLO and its highest rate."""

    @property
    def title(self) -> str: ...
    @property
    def points(self) -> Sequence[PointData]: ...
    @property
    def slo_ttft_ms(self) -> float | None: ...
    @property
    def slo_tpot_ms(self) -> float | None: ...
    @property
    def max_rate_at_slo(self) -> float | None: ...


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``high`` (about ``count`` of them)."""
    if not math.isfinite(high) or high <= 0:
        return [0.0, 1.0]
    raw = high / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    ticks = [0.0]
    while ticks[-1] < high * (1 - 1e-9):
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def tick_text(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    return f"{value:g}" if abs(value) >= 0.01 else f"{value:.3g}"


#: a panel whose values span more than this factor gets a logarithmic axis: past
#: saturation the queue makes TTFT grow a hundredfold, which flattened the SLO line
LOG_SPAN = 30.0


def log_ticks_between(low: float, high: float) -> list[float]:
    """1, 2, 5 x powers of ten from the last at or below ``low`` to the first at or above
    ``high`` (the powers of ten alone when that makes more than 9 ticks)."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    steps = [m * 10.0**k for k in range(first, last + 1) for m in (1, 2, 5)]
    start = max(i for i, tick in enumerate(steps) if tick <= low * 1.0001)
    stop = min(i for i, tick in enumerate(steps) if tick >= high * 0.9999)
    ticks = steps[start : stop + 1]
    if len(ticks) > 9:
        powers = [10.0**k for k in range(first, last + 1)]
        return powers
    return ticks


@dataclass(frozen=True, slots=True)
class Panel:
    """One panel's figures: which latency, its y range (linear from 0, or logarithmic
    between its first and last tick), its SLO bound."""

    label: str
    p50: tuple[float, ...]
    p90: tuple[float, ...]
    bound_ms: float | None
    y_ticks: tuple[float, ...]
    log: bool = False

    def fraction(self, value: float) -> float:
        """Where ``value`` sits on the axis, 0 at the bottom and 1 at the top (clamped)."""
        low, high = self.y_ticks[0], self.y_ticks[-1]
        if self.log:
            value = max(value, low)
            share = (math.log10(value) - math.log10(low)) / (math.log10(high) - math.log10(low))
        else:
            share = value / (high or 1.0)
        return min(max(share, 0.0), 1.0)


def panels(curve: CurveData) -> tuple[Panel, Panel]:
    """TTFT and TPOT panels, each with its y ticks (covering the p90s and the bound)."""
    out = []
    for label, p50_name, p90_name, bound in (
        ("TTFT (ms)", "ttft_p50_ms", "ttft_p90_ms", curve.slo_ttft_ms),
        ("TPOT (ms)", "tpot_p50_ms", "tpot_p90_ms", curve.slo_tpot_ms),
    ):
        p50 = tuple(float(getattr(point, p50_name)) for point in curve.points)
        p90 = tuple(float(getattr(point, p90_name)) for point in curve.points)
        finite = [
            value for value in (*p50, *p90, *([bound] if bound else [])) if math.isfinite(value)
        ]
        high = max(finite, default=1.0) * 1.05
        low = min((value for value in finite if value > 0), default=high)
        if high / max(low, 1e-9) > LOG_SPAN and low > 0:
            ticks = log_ticks_between(low, high)
            log_label = label.replace("(ms)", "(ms, log)")
            out.append(Panel(log_label, p50, p90, bound, tuple(ticks), log=True))
        else:
            out.append(Panel(label, p50, p90, bound, tuple(nice_ticks(high))))
    return out[0], out[1]


def x_ticks(curve: CurveData) -> list[float]:
    rates = [point.rate_rps for point in curve.points] + [curve.max_rate_at_slo or 0.0]
    return nice_ticks(max(rates, default=1.0) * 1.02, 6)


def data_text(curve: CurveData | None) -> str:
    """The chart's figures as text (screen readers, Copy data as text)."""
    if curve is None or not curve.points:
        return "No latency curve."
    lines = [
        f"{curve.title}: latency against request rate",
        "rate (requests/s)\tTTFT p50 (ms)\tTTFT p90 (ms)\tTPOT p50 (ms)\tTPOT p90 (ms)",
    ]
    for point in curve.points:
        lines.append(
            f"{point.rate_rps:.3g}\t{point.ttft_p50_ms:.0f}\t{point.ttft_p90_ms:.0f}\t"
            f"{point.tpot_p50_ms:.1f}\t{point.tpot_p90_ms:.1f}"
        )
    if curve.slo_ttft_ms is not None:
        lines.append(f"SLO TTFT: {curve.slo_ttft_ms:,.0f} ms")
    if curve.slo_tpot_ms is not None:
        lines.append(f"SLO TPOT: {curve.slo_tpot_ms:,.0f} ms")
    if curve.slo_ttft_ms is not None or curve.slo_tpot_ms is not None:
        best = curve.max_rate_at_slo
        lines.append(
            "highest rate meeting the SLO: "
            + ("none of the rates tried" if best is None else f"{best:.3g} requests/s")
        )
    return "\n".join(lines)


def _pen(color: QColor, width: float, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
    pen = QPen(color, width, style)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    return pen


def paint_latency(
    painter: QPainter,
    rect: QRectF,
    curve: CurveData | None,
    style: ChartStyle = LIGHT,
    *,
    scale: float = 1.0,
    empty_text: str = "No latency curve yet.",
) -> None:
    """Draw the chart of ``curve`` into ``rect``; ``scale`` multiplies font sizes and
    line widths (1 on screen, about the device's pixels per point in a PDF). Without
    a curve (or points), ``empty_text`` centred. The background is left unpainted."""
    painter.save()
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        font = chart_font(max(1, round(12 * scale)))
        small = chart_font(max(1, round(11 * scale)))
        painter.setFont(font)
        if curve is None or not curve.points:
            painter.setPen(style.muted)
            painter.drawText(
                rect, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, empty_text
            )
            return
        _paint(painter, rect, curve, style, scale, font, small)
    finally:
        painter.restore()


def _paint(
    painter: QPainter,
    rect: QRectF,
    curve: CurveData,
    style: ChartStyle,
    scale: float,
    font: QFont,
    small: QFont,
) -> None:
    metrics = QFontMetricsF(font)
    line = metrics.height()
    slo_color = SLO_DARK if style.dark else SLO_LIGHT
    meets_color = MEETS_DARK if style.dark else MEETS_LIGHT
    # title, then the legend, on top
    painter.setPen(style.text)
    title_font = chart_font(max(1, round(13 * scale)), bold=True)
    painter.setFont(title_font)
    title_rect = QRectF(rect.left(), rect.top(), rect.width(), line * 1.3)
    painter.drawText(
        title_rect,
        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
        QFontMetricsF(title_font).elidedText(
            curve.title, Qt.TextElideMode.ElideRight, rect.width()
        ),
    )
    painter.setFont(small)
    legend_top = title_rect.bottom() + 2 * scale
    has_slo = curve.slo_ttft_ms is not None or curve.slo_tpot_ms is not None
    _legend(painter, QPointF(rect.left(), legend_top), curve, style, scale, has_slo)
    top = legend_top + QFontMetricsF(small).height() * 1.5
    axis_label_height = line * 1.2
    tick_height = line * 1.1
    left_margin = metrics.horizontalAdvance("10,000") + line * 1.6
    plot_left = rect.left() + left_margin
    plot_right = rect.right() - 10 * scale
    bottom = rect.bottom() - axis_label_height - tick_height
    gap = line * 1.2
    panel_height = (bottom - top - gap) / 2
    if panel_height <= 10 or plot_right - plot_left <= 20:
        return
    ticks = x_ticks(curve)
    x_high = ticks[-1] or 1.0
    rates = [point.rate_rps for point in curve.points]

    def x_at(rate: float) -> float:
        return plot_left + (plot_right - plot_left) * rate / x_high

    for index, panel in enumerate(panels(curve)):
        panel_top = top + index * (panel_height + gap)
        area = QRectF(plot_left, panel_top, plot_right - plot_left, panel_height)
        _panel(painter, area, panel, rates, x_at, ticks, style, scale, font, slo_color)
        if curve.max_rate_at_slo is not None and has_slo:
            x = x_at(curve.max_rate_at_slo)
            painter.setPen(_pen(meets_color, 1.6 * scale, Qt.PenStyle.DashDotLine))
            painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
            if index == 0:
                painter.setFont(small)
                words = f"highest rate meeting the SLO: {curve.max_rate_at_slo:.3g}/s"
                width = QFontMetricsF(small).horizontalAdvance(words)
                label_x = (
                    x + 4 * scale
                    if x + 4 * scale + width <= area.right()
                    else x - 4 * scale - width
                )
                label = QRectF(
                    label_x, area.top() + 2 * scale, width, QFontMetricsF(small).height()
                )
                painter.fillRect(label, _veil(style))
                painter.setPen(meets_color)
                painter.drawText(label, Qt.AlignmentFlag.AlignLeft, words)
    # the shared rate axis under the lower panel
    painter.setFont(font)
    painter.setPen(style.text)
    for value in ticks:
        x = x_at(value)
        text = tick_text(value)
        width = metrics.horizontalAdvance(text)
        painter.drawText(
            QRectF(x - width / 2 - 2, bottom + 2 * scale, width + 4, tick_height),
            Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
            text,
        )
    painter.drawText(
        QRectF(plot_left, bottom + tick_height, plot_right - plot_left, axis_label_height),
        Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter,
        "request rate (requests/s)",
    )


def _veil(style: ChartStyle) -> QColor:
    veil = QColor(style.background)
    veil.setAlpha(215)
    return veil


def _legend(
    painter: QPainter,
    origin: QPointF,
    curve: CurveData,
    style: ChartStyle,
    scale: float,
    has_slo: bool,
) -> None:
    metrics = QFontMetricsF(painter.font())
    height = metrics.height()
    x = origin.x()
    mid = origin.y() + height / 2
    slo_color = SLO_DARK if style.dark else SLO_LIGHT
    meets_color = MEETS_DARK if style.dark else MEETS_LIGHT
    entries: list[tuple[str, QPen]] = [
        ("p50", _pen(P50_COLOR, 2.2 * scale)),
        ("p90", _pen(P90_COLOR, 2.2 * scale, Qt.PenStyle.DashLine)),
    ]
    if has_slo:
        entries.append(("SLO bound", _pen(slo_color, 1.6 * scale, Qt.PenStyle.DotLine)))
        if curve.max_rate_at_slo is not None:
            entries.append(
                ("highest rate meeting it", _pen(meets_color, 1.6 * scale, Qt.PenStyle.DashDotLine))
            )
    for words, pen in entries:
        painter.setPen(pen)
        painter.drawLine(QPointF(x, mid), QPointF(x + 22 * scale, mid))
        x += 26 * scale
        painter.setPen(style.text)
        width = metrics.horizontalAdvance(words)
        painter.drawText(
            QRectF(x, origin.y(), width + 2, height), Qt.AlignmentFlag.AlignLeft, words
        )
        x += width + 16 * scale


def _panel(
    painter: QPainter,
    area: QRectF,
    panel: Panel,
    rates: Sequence[float],
    x_at: Callable[[float], float],
    x_ticks_: Sequence[float],
    style: ChartStyle,
    scale: float,
    font: QFont,
    slo_color: QColor,
) -> None:
    metrics = QFontMetricsF(font)

    def y_at(value: float) -> float:
        return area.bottom() - area.height() * panel.fraction(value)

    painter.setFont(font)
    grid = _pen(style.grid, 1.0 * scale)
    # labels no closer than a line and a half: a short panel shows every other one
    room = max(1, int(area.height() // (metrics.height() * 1.5)) + 1)
    step = max(1, math.ceil(len(panel.y_ticks) / room))
    labelled = set(panel.y_ticks[::-step][::-1]) if panel.log else set(panel.y_ticks[::step])
    for value in panel.y_ticks:
        y = y_at(value)
        painter.setPen(grid)
        painter.drawLine(QPointF(area.left(), y), QPointF(area.right(), y))
        if value not in labelled:
            continue
        painter.setPen(style.text)
        text = tick_text(value)
        width = metrics.horizontalAdvance(text)
        painter.drawText(
            QRectF(
                area.left() - width - 6 * scale,
                y - metrics.height() / 2,
                width + 2,
                metrics.height(),
            ),
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            text,
        )
    for value in x_ticks_:
        x = x_at(value)
        painter.setPen(grid)
        painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()))
    painter.setPen(_pen(style.muted, 1.2 * scale))
    painter.drawLine(area.bottomLeft(), area.bottomRight())
    painter.drawLine(area.bottomLeft(), area.topLeft())
    # the axis name, turned, left of the ticks
    painter.save()
    painter.setPen(style.text)
    painter.translate(
        area.left() - metrics.horizontalAdvance("10,000") - 14 * scale, area.center().y()
    )
    painter.rotate(-90)
    painter.drawText(
        QRectF(-area.height() / 2, -metrics.height(), area.height(), metrics.height()),
        Qt.AlignmentFlag.AlignCenter,
        panel.label,
    )
    painter.restore()
    if panel.bound_ms is not None:
        y = y_at(panel.bound_ms)
        painter.setPen(_pen(slo_color, 1.6 * scale, Qt.PenStyle.DotLine))
        painter.drawLine(QPointF(area.left(), y), QPointF(area.right(), y))
        words = f"SLO {panel.bound_ms:,.0f} ms"
        width = metrics.horizontalAdvance(words)
        label = QRectF(
            area.left() + 4 * scale, y - metrics.height() - 1, width + 2, metrics.height()
        )
        painter.fillRect(label, _veil(style))
        painter.setPen(slo_color)
        painter.drawText(label, Qt.AlignmentFlag.AlignLeft, words)
    painter.save()
    painter.setClipRect(area.adjusted(-6 * scale, -6 * scale, 6 * scale, 1))
    for values, color, dash in (
        (panel.p90, P90_COLOR, Qt.PenStyle.DashLine),
        (panel.p50, P50_COLOR, Qt.PenStyle.SolidLine),
    ):
        path = QPainterPath()
        points = [
            QPointF(x_at(rate), y_at(value)) for rate, value in zip(rates, values, strict=True)
        ]
        for number, point in enumerate(points):
            if number == 0:
                path.moveTo(point)
            else:
                path.lineTo(point)
        painter.setPen(_pen(color, 2.2 * scale, dash))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
        painter.setPen(_pen(color, 1.0 * scale))
        painter.setBrush(color)
        for point in points:
            painter.drawEllipse(point, 3.0 * scale, 3.0 * scale)
    painter.restore()


class LatencyChartWidget(QWidget):
    """The chart on screen; :meth:`set_curve` replaces what it draws, :meth:`set_style`
    its colours (the page follows the theme)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.curve: CurveData | None = None
        self.empty_text = "The latency curve of the selected GPU appears here."
        self._style: ChartStyle = LIGHT
        self.setMinimumSize(320, 260)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName("Latency against request rate")

    def sizeHint(self) -> QSize:
        return QSize(560, 360)

    def set_curve(self, curve: CurveData | None, empty_text: str | None = None) -> None:
        self.curve = curve
        if empty_text is not None:
            self.empty_text = empty_text
        self.setAccessibleDescription(data_text(curve))
        self.update()

    def set_style(self, style: ChartStyle) -> None:
        self._style = style
        self.update()

    @property
    def chart_style(self) -> ChartStyle:
        return self._style

    def data_text(self) -> str:
        return data_text(self.curve) if self.curve is not None else self.empty_text

    def paintEvent(self, event: QPaintEvent) -> None:
        del event
        painter = QPainter(self)
        try:
            painter.fillRect(self.rect(), self._style.background)
            paint_latency(
                painter,
                QRectF(self.rect()).adjusted(8, 6, -8, -6),
                self.curve,
                self._style,
                empty_text=self.empty_text,
            )
        finally:
            painter.end()
