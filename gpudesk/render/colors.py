"""Colors that mean the same GPU in every view."""

from __future__ import annotations

from PySide6.QtGui import QColor

# Okabe-Ito palette: distinguishable for common color-vision deficiencies and
# legible on both light and dark backgrounds.
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9")

#: The "this machine (measured)" series.
MEASURED_COLOR = QColor("#8E44AD")
#: Catalog points that are not selected (scatter background).
CONTEXT_COLOR = QColor(150, 150, 150, 110)


def series_color(index: int) -> QColor:
    """The color of the compare selection's ``index``-th GPU."""
    return QColor(_PALETTE[index % len(_PALETTE)])


def palette_size() -> int:
    return len(_PALETTE)
