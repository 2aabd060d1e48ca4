"""WCAG 2.1 contrast, for the tests that check text is readable in both themes."""

from __future__ import annotations

from PySide6.QtGui import QColor


def luminance(color: QColor) -> float:
    """WCAG 2.1 relative luminance."""

    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast(first: QColor, second: QColor) -> float:
    """The contrast ratio, 1 to 21."""
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
