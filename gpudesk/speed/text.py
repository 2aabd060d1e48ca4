"""How speed-model figures read, in the CLI, the Plan tab and the report alike."""

from __future__ import annotations

import math


def figure_text(value: float | None, unit: str = "") -> str:
    """Three significant digits or so: "1,234", "56.7", "8.90"; "n/a" when unknown."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if value >= 100:
        return f"{value:,.0f}{unit}"
    if value >= 10:
        return f"{value:.1f}{unit}"
    return f"{value:.2f}{unit}"


def usd_text(value: float | None) -> str:
    """Dollars, with more decimals for fractions of a cent per token."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"${value:,.2f}" if value >= 0.01 else f"${value:.4f}"


def duration_text(seconds: float | None) -> str:
    """Seconds, minutes, hours or days, whichever reads best."""
    if seconds is None or not math.isfinite(seconds):
        return "n/a"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
