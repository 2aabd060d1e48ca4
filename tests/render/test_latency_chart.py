"""The latency-throughput chart (render/latency.py): its ticks, its panels' scales, its
text, and what it paints in both themes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, strategies as st
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from gpudesk.render.latency import (
    LOG_SPAN,
    P50_COLOR,
    P90_COLOR,
    data_text,
    log_ticks_between,
    nice_ticks,
    paint_latency,
    panels,
    x_ticks,
)
from gpudesk.render.style import DARK, LIGHT, ChartStyle


@dataclass(frozen=True)
class _Point:
    rate_rps: float
    ttft_p50_ms: float
    ttft_p90_ms: float
    tpot_p50_ms: float
    tpot_p90_ms: float


@dataclass(frozen=True)
class _Curve:
    title: str
    points: tuple[_Point, ...]
    slo_ttft_ms: float | None = 500.0
    slo_tpot_ms: float | None = 50.0
    max_rate_at_slo: float | None = 3.0


#: below saturation flat, past it the queue: TTFT grows a hundredfold
QUEUED = _Curve(
    "H100 × 1, TP-1",
    tuple(
        _Point(rate, ttft, ttft * 1.4, tpot, tpot * 1.2)
        for rate, ttft, tpot in (
            (0.5, 60, 12),
            (1.0, 70, 15),
            (2.0, 90, 25),
            (3.0, 150, 40),
            (4.0, 9000, 60),
        )
    ),
)
CALM = _Curve(
    "L40S × 2, TP-2",
    tuple(_Point(rate, 100 + rate, 120 + rate, 20 + rate, 22 + rate) for rate in (1, 2, 3)),
    slo_ttft_ms=None,
    slo_tpot_ms=None,
    max_rate_at_slo=None,
)


@given(st.floats(min_value=1e-6, max_value=1e9, allow_nan=False))
def test_nice_ticks_start_at_zero_cover_the_value_and_stay_few(high: float) -> None:
    ticks = nice_ticks(high)
    assert ticks[0] == 0 and ticks[-1] >= high * (1 - 1e-9)
    assert ticks == sorted(set(ticks)) and 2 <= len(ticks) <= 12


@given(
    st.floats(min_value=1e-3, max_value=1e6, allow_nan=False),
    st.floats(min_value=1.01, max_value=1e6, allow_nan=False),
)
def test_log_ticks_bracket_the_range(low: float, factor: float) -> None:
    high = low * factor
    ticks = log_ticks_between(low, high)
    assert ticks[0] <= low * 1.0001 and ticks[-1] >= high * 0.9999
    assert ticks == sorted(set(ticks)) and len(ticks) <= 12


def test_a_queue_puts_ttft_on_a_log_axis_and_leaves_tpot_linear() -> None:
    ttft, tpot = panels(QUEUED)
    assert ttft.log and ttft.label == "TTFT (ms, log)"
    assert ttft.y_ticks[0] <= 60 and ttft.y_ticks[-1] >= 9000 * 1.4
    assert not tpot.log and tpot.y_ticks[0] == 0 and tpot.y_ticks[-1] >= 72
    assert 0 < ttft.fraction(500) < 1 and ttft.fraction(1e9) == 1 and ttft.fraction(0) == 0
    # the bound is inside the axis even when every point sits below it
    calm_ttft, _ = panels(_Curve("x", CALM.points, slo_ttft_ms=1000.0))
    assert calm_ttft.y_ticks[-1] >= 1000 and not calm_ttft.log
    # (the fixture spans more than LOG_SPAN; a calm one does not)
    assert QUEUED.points[-1].ttft_p90_ms / QUEUED.points[0].ttft_p50_ms > LOG_SPAN


def test_the_rate_axis_reaches_the_highest_rate_meeting_the_slo() -> None:
    far = _Curve("x", CALM.points, max_rate_at_slo=7.5)
    assert x_ticks(far)[-1] >= 7.5 and x_ticks(CALM)[-1] >= 3


def test_data_text_names_the_figures_and_the_slo() -> None:
    text = data_text(QUEUED)
    assert text.splitlines()[0] == "H100 × 1, TP-1: latency against request rate"
    assert "4\t9000\t12600\t60.0\t72.0" in text
    assert "SLO TTFT: 500 ms" in text and "SLO TPOT: 50 ms" in text
    assert "highest rate meeting the SLO: 3 requests/s" in text
    assert "SLO" not in data_text(CALM)
    assert "none of the rates tried" in data_text(_Curve("x", CALM.points, max_rate_at_slo=None))
    assert data_text(None) == "No latency curve."


def _painted(curve: _Curve | None, style: ChartStyle) -> QImage:
    image = QImage(640, 400, QImage.Format.Format_ARGB32)
    image.fill(style.background)
    painter = QPainter(image)
    paint_latency(painter, QRectF(0, 0, 640, 400), curve, style)
    painter.end()
    return image


def _count(image: QImage, color: QColor, tolerance: int = 40) -> int:
    found = 0
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            pixel = image.pixelColor(x, y)
            if (
                abs(pixel.red() - color.red())
                + abs(pixel.green() - color.green())
                + abs(pixel.blue() - color.blue())
                < tolerance
            ):
                found += 1
    return found


@pytest.mark.parametrize("style", [LIGHT, DARK], ids=["light", "dark"])
def test_both_lines_and_the_text_are_painted_in_each_theme(qapp: object, style: ChartStyle) -> None:
    image = _painted(QUEUED, style)
    assert _count(image, P50_COLOR) > 40 and _count(image, P90_COLOR) > 40
    # text in the theme's colour (titles, ticks, axis names): legible on its background
    assert _count(image, style.text, 60) > 100
    assert _count(_painted(None, style), P50_COLOR) == 0
