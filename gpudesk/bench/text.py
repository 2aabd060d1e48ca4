"""How benchmark figures read, the same in the CLI report and the GUI panel."""

from __future__ import annotations

import math

from gpudesk.bench.results import Measurement

#: Fractions of peak above this read as a bound: no GPU runs at ten times its datasheet
#: peak, and an imported report may hold any finite number (1e308 printed "inf %").
IMPLAUSIBLE_FRACTION_OF_PEAK = 10.0


def format_figure(value: float | None) -> str:
    """Three significant digits or so: 0.249, 38.6, 1,008; "n/a" when missing."""
    if value is None:
        return "n/a"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def format_fraction_of_peak(fraction: float | None) -> str:
    """A measured fraction of the catalog peak: "85%", "over 1,000%"; "" when there is none."""
    if fraction is None:
        return ""
    if not math.isfinite(fraction) or fraction > IMPLAUSIBLE_FRACTION_OF_PEAK:
        return f"over {IMPLAUSIBLE_FRACTION_OF_PEAK:,.0%}"
    # (not max(): max(-0.0, 0.0) is -0.0, which prints "-0%")
    return f"{fraction if fraction > 0 else 0.0:,.0%}"


def size_label(row: Measurement) -> str:
    """The problem size of a row: the matrix order for GEMM, MiB for transfers."""
    return f"n = {row.size}" if row.test == "gemm" else f"{row.size / 2**20:,.0f} MiB"
