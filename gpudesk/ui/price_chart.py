"""Compare → Cloud rates: each GPU's on-demand range and its rate history.

Top: one row per GPU, a bar from the lowest to the highest provider's on-demand
rate with a tick at the median (each provider once, at its lowest rate), the
figures written beside it. Bottom: the lowest on-demand rate at each snapshot
date, one line per GPU, named in a key under it (a line is never told by its colour
alone; a GPU with no dated snapshot is said to have none). The geometry is plain
Python (:func:`range_rows`, :func:`history_points`, :func:`history_key`); the
widget only paints it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpudesk.catalog.names import short_name
from gpudesk.catalog.rate_book import HistoryPoint, RateSummary, format_usd
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.render.style import ChartStyle, chart_style

_ROW_H = 40
_LABEL_W = 150
_RIGHT_W = 16
_MARGIN = 10
_HISTORY_H = 200


@dataclass(frozen=True)
class RangeRow:
    """One GPU's bar: x positions in the plot's own units (0..1 of the rate axis)."""

    label: str
    low: float
    median: float
    high: float
    words: str  # "lowest $1.82 (Cudo Compute) · median $2.40 · highest $3.99"


def range_rows(
    entries: Sequence[CatalogEntry], summaries: Sequence[RateSummary]
) -> tuple[list[RangeRow | str], float]:
    """Rows (a row or, without an on-demand rate, the words saying so) and the axis top."""
    top = max((s.highest.usd_per_gpu_hour for s in summaries if s.highest is not None), default=1.0)
    top = _nice_ceiling(top)
    rows: list[RangeRow | str] = []
    for entry, summary in zip(entries, summaries, strict=True):
        low, high, median = summary.lowest, summary.highest, summary.median_usd
        if low is None or high is None or median is None:
            rows.append(f"{short_name(entry)}: no on-demand rate")
            continue
        words = (
            f"lowest {format_usd(low.usd_per_gpu_hour)} ({low.provider}) · "
            f"median {format_usd(median)} · highest {format_usd(high.usd_per_gpu_hour)}"
        )
        rows.append(
            RangeRow(
                short_name(entry),
                low.usd_per_gpu_hour / top,
                median / top,
                high.usd_per_gpu_hour / top,
                words,
            )
        )
    return rows, top


def history_points(
    histories: Sequence[Sequence[HistoryPoint]],
) -> tuple[list[list[tuple[float, float]]], dt.date | None, dt.date | None, float]:
    """Per GPU, (x, y) in 0..1 for each dated lowest rate; the date span and the rate top."""
    dates = [point.date for history in histories for point in history]
    if not dates:
        return [[] for _ in histories], None, None, 1.0
    first, last = min(dates), max(dates)
    span = max(1, (last - first).days)
    top = _nice_ceiling(
        max(point.lowest.usd_per_gpu_hour for history in histories for point in history)
    )
    lines = [
        [((p.date - first).days / span, p.lowest.usd_per_gpu_hour / top) for p in history]
        for history in histories
    ]
    return lines, first, last, top


def history_key(
    names: Sequence[str], lines: Sequence[Sequence[tuple[float, float]]]
) -> list[tuple[int, str]]:
    """The key under the history: (GPU position, its words) for each compared GPU."""
    return [
        (index, name if line else f"{name}: no dated snapshot")
        for index, (name, line) in enumerate(zip(names, lines, strict=True))
    ]


#: Snapshots further apart than this are joined by a dotted line: no snapshot says how
#: the rate moved between them (a solid line two years long read as a steady decline).
GAP_DAYS = 120


def long_gaps(line: Sequence[tuple[float, float]], span_days: int) -> list[bool]:
    """For each pair of neighbouring points of a history line (x in 0..1 of ``span_days``),
    whether more than :data:`GAP_DAYS` lie between them."""
    return [(end[0] - start[0]) * span_days > GAP_DAYS for start, end in itertools.pairwise(line)]


def value_ticks(top: float) -> list[float]:
    """Ticks from 0 to ``top`` (a :func:`_nice_ceiling`) in 4-5 even steps: $0, $1, $2, $3, $4."""
    if top <= 0:
        return [0.0]
    steps = 5 if round(top / 10 ** math.floor(math.log10(top))) in (1, 5) else 4
    return [top * index / steps for index in range(steps + 1)]


def year_ticks(first: dt.date, last: dt.date) -> list[dt.date]:
    """1 January of each year strictly inside (``first``, ``last``]: where the x axis is
    marked between its two end dates."""
    return [dt.date(year, 1, 1) for year in range(first.year + 1, last.year + 1)]


def _nice_ceiling(value: float) -> float:
    """1, 2 or 5 times a power of ten at or above ``value`` (an axis top)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return float(step * power)
    return float(10 * power)


class PriceRangeChart(QWidget):
    """Paints :func:`range_rows` and :func:`history_points` for the compared GPUs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._style = chart_style(False)
        self._rows: list[RangeRow | str] = []
        self._top = 1.0
        self._colors: list[QColor] = []
        self._lines: list[list[tuple[float, float]]] = []
        self._span: tuple[dt.date | None, dt.date | None] = (None, None)
        self._history_top = 1.0
        self._names: list[str] = []
        self._histories: list[list[HistoryPoint]] = []

    def set_style(self, style: ChartStyle) -> None:
        self._style = style
        self.update()

    def set_data(
        self,
        entries: Sequence[CatalogEntry],
        summaries: Sequence[RateSummary],
        histories: Sequence[Sequence[HistoryPoint]],
        colors: Sequence[QColor],
    ) -> None:
        self._rows, self._top = range_rows(entries, summaries)
        self._lines, first, last, self._history_top = history_points(histories)
        self._span = (first, last)
        self._colors = list(colors)
        self._names = [short_name(entry) for entry in entries]
        self._histories = [list(history) for history in histories]
        self.update()

    def data_text(self) -> str:
        """What the chart shows, as text (screen readers, "Copy data as text")."""
        lines = ["On-demand $/GPU-hour, each provider at its lowest"]
        for row in self._rows:
            lines.append(row if isinstance(row, str) else f"{row.label}: {row.words}")
        for name, history in zip(self._names, self._histories, strict=False):
            if history:
                dated = ", ".join(
                    f"{point.date:%Y-%m-%d} {format_usd(point.lowest.usd_per_gpu_hour)}"
                    for point in history
                )
                lines.append(f"{name}, lowest rate by snapshot: {dated}")
        return "\n".join(lines)

    def sizeHint(self) -> QSize:
        return QSize(640, _MARGIN * 4 + _ROW_H * max(2, len(self._rows)) + _HISTORY_H + 60)

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        style = self._style
        painter.fillRect(self.rect(), style.background)
        width = self.width()
        plot_left = _MARGIN + _LABEL_W
        plot_w = max(60, width - plot_left - _RIGHT_W - _MARGIN * 2)
        y = _MARGIN + 18
        painter.setPen(style.text)
        painter.drawText(
            QPointF(_MARGIN, y - 4),
            f"On-demand $/GPU-hour, each provider at its lowest (axis to {format_usd(self._top)})",
        )
        for index, row in enumerate(self._rows):
            mid = y + _ROW_H * index + _ROW_H / 2
            color = self._colors[index] if index < len(self._colors) else style.text
            if isinstance(row, str):
                painter.setPen(style.muted)
                painter.drawText(QPointF(_MARGIN, mid + 4), row)
                continue
            painter.setPen(style.text)
            label_rect = QRectF(_MARGIN, mid - 17, _LABEL_W - 6, 18)
            shown = painter.fontMetrics().elidedText(
                row.label, Qt.TextElideMode.ElideRight, int(label_rect.width())
            )
            painter.drawText(label_rect, Qt.AlignmentFlag.AlignVCenter, shown)
            mid -= 8  # the bar on the label's line, its figures under it
            x_low = plot_left + row.low * plot_w
            x_high = plot_left + row.high * plot_w
            painter.setPen(QPen(style.grid, 1))
            painter.drawLine(QPointF(plot_left, mid), QPointF(plot_left + plot_w, mid))
            painter.fillRect(QRectF(x_low, mid - 5, max(2.0, x_high - x_low), 10), color)
            x_med = plot_left + row.median * plot_w
            painter.setPen(QPen(style.text, 2))
            painter.drawLine(QPointF(x_med, mid - 9), QPointF(x_med, mid + 9))
            painter.setPen(style.muted)
            painter.drawText(
                QRectF(plot_left, mid + 6, plot_w, 16), Qt.AlignmentFlag.AlignVCenter, row.words
            )
        axis_y = y + _ROW_H * len(self._rows) - 4
        painter.setPen(style.muted)
        painter.drawText(QPointF(plot_left, axis_y + 12), "$0")
        top_text = format_usd(self._top)
        text_w = painter.fontMetrics().horizontalAdvance(top_text)
        painter.drawText(QPointF(plot_left + plot_w - text_w, axis_y + 12), top_text)
        y += 12
        self._paint_history(painter, y + _ROW_H * len(self._rows) + _MARGIN * 2, plot_left)
        painter.end()

    def _paint_history(self, painter: QPainter, top: float, left: float) -> None:
        style = self._style
        first, last = self._span
        painter.setPen(style.text)
        if first is None or last is None:
            painter.setPen(style.muted)
            painter.drawText(QPointF(_MARGIN, top + 14), "No dated rates to draw a history.")
            return
        painter.drawText(
            QPointF(_MARGIN, top + 14),
            f"Lowest on-demand rate by snapshot date, {first.isoformat()} to {last.isoformat()} "
            f"(axis to {format_usd(self._history_top)})",
        )
        height = min(_HISTORY_H, max(60.0, self.height() - top - 84))
        box = QRectF(left, top + 24, max(60, self.width() - left - _MARGIN * 2), height)
        painter.setPen(QPen(style.grid, 1))
        painter.drawRect(box)
        metrics = painter.fontMetrics()
        for tick in value_ticks(self._history_top):  # a grid line and a figure per step
            y = box.bottom() - tick / self._history_top * box.height()
            if 0 < tick < self._history_top:
                painter.setPen(QPen(style.grid, 1, Qt.PenStyle.DotLine))
                painter.drawLine(QPointF(box.left(), y), QPointF(box.right(), y))
            text = format_usd(tick)
            painter.setPen(style.muted)
            painter.drawText(QPointF(box.left() - metrics.horizontalAdvance(text) - 6, y + 4), text)
        span_days = max(1, (last - first).days)
        painter.drawText(QPointF(box.left(), box.bottom() + 14), first.isoformat())
        last_text = last.isoformat()
        last_x = box.right() - metrics.horizontalAdvance(last_text)
        painter.drawText(QPointF(last_x, box.bottom() + 14), last_text)
        first_right = box.left() + metrics.horizontalAdvance(first.isoformat()) + 8
        for year in year_ticks(first, last):
            x = box.left() + (year - first).days / span_days * box.width()
            painter.setPen(QPen(style.grid, 1))
            painter.drawLine(QPointF(x, box.bottom()), QPointF(x, box.bottom() + 4))
            text = str(year.year)
            width = metrics.horizontalAdvance(text)
            if first_right < x - width / 2 and x + width / 2 < last_x - 8:
                painter.setPen(style.muted)
                painter.drawText(QPointF(x - width / 2, box.bottom() + 14), text)
        gapped = False
        for index, line in enumerate(self._lines):
            color = self._colors[index] if index < len(self._colors) else style.text
            points = [
                QPointF(box.left() + x * box.width(), box.bottom() - y * box.height())
                for x, y in line
            ]
            for (start, end), gap in zip(
                itertools.pairwise(points), long_gaps(line, span_days), strict=True
            ):
                style_line = Qt.PenStyle.DotLine if gap else Qt.PenStyle.SolidLine
                painter.setPen(QPen(color, 1.5 if gap else 2, style_line))
                painter.drawLine(start, end)
                gapped = gapped or gap
            painter.setPen(QPen(color, 2))
            painter.setBrush(color)
            for point in points:
                painter.drawEllipse(point, 3.5, 3.5)
            painter.setBrush(Qt.BrushStyle.NoBrush)
        key_baseline = self._paint_key(painter, box.left(), box.bottom() + 34)
        if gapped:
            painter.setPen(style.muted)
            painter.drawText(
                QPointF(box.left(), key_baseline + 18),
                f"Dots are snapshots; dotted: over {GAP_DAYS} days without one, "
                "so how the rate moved between is not known.",
            )

    def _paint_key(self, painter: QPainter, left: float, baseline: float) -> float:
        """A swatch and the name of each line, left to right, wrapping at the widget's
        edge (muted: no history); returns the last line's baseline."""
        if len(self._names) != len(self._lines):
            return baseline
        metrics = painter.fontMetrics()
        right = self.width() - _MARGIN
        x = left
        for index, words in history_key(self._names, self._lines):
            has_line = bool(self._lines[index])
            width = (20 if has_line else 0) + metrics.horizontalAdvance(words)
            if x > left and x + width > right:
                x, baseline = left, baseline + metrics.height() + 2
            color = self._colors[index] if index < len(self._colors) else self._style.text
            if has_line:
                painter.setPen(QPen(color, 2))
                painter.drawLine(QPointF(x, baseline - 4), QPointF(x + 16, baseline - 4))
                x += 20
            painter.setPen(self._style.text if has_line else self._style.muted)
            painter.drawText(QPointF(x, baseline), words)
            x += metrics.horizontalAdvance(words) + 18
        return baseline
