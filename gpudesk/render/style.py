"""Chart colors and fonts for light and dark themes."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont

from gpudesk.render.colors import MEASURED_COLOR, series_color

#: Font family registered by ``create_application`` (bundled, so output is the same everywhere).
FONT_FAMILY = "DejaVu Sans"


@dataclass(frozen=True, slots=True)
class ChartStyle:
    """What a chart paints with, besides the series colors."""

    dark: bool
    background: QColor
    text: QColor
    muted: QColor
    grid: QColor
    frontier: QColor


LIGHT = ChartStyle(
    dark=False,
    background=QColor("#ffffff"),
    text=QColor("#1f2328"),
    muted=QColor("#5f6b76"),
    grid=QColor("#d0d5db"),
    frontier=QColor("#333333"),
)
DARK = ChartStyle(
    dark=True,
    background=QColor("#1e1f22"),  # the dark theme's plot background
    text=QColor("#e6e8eb"),
    muted=QColor("#a3acb6"),
    grid=QColor("#4a5059"),
    frontier=QColor("#e0e0e0"),
)


def chart_style(dark: bool) -> ChartStyle:
    """The style for a dark or a light theme (the caller knows which is shown)."""
    return DARK if dark else LIGHT


def chart_series_color(index: int, dark: bool) -> QColor:
    """``series_color(index)`` in both themes: a GPU keeps one color everywhere.

    The Okabe-Ito palette stays above 3:1 contrast on the dark background, so
    it is not lifted (lifting made the first blue look like the sixth).
    """
    del dark
    return series_color(index)


def measured_color(dark: bool) -> QColor:
    return MEASURED_COLOR.lighter(150) if dark else QColor(MEASURED_COLOR)


def chart_font(pixel_size: int, *, bold: bool = False) -> QFont:
    """A font sized in pixels, so charts render the same on screen, PNG, SVG and PDF."""
    font = QFont(FONT_FAMILY)
    font.setPixelSize(pixel_size)
    font.setBold(bold)
    return font
