"""How benchmark figures read, the same in the CLI report and the GUI panel."""

from __future__ import annotations

from gpudesk.bench.results import Measurement


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


def size_label(row: Measurement) -> str:
    """The problem size of a row: the matrix order for GEMM, MiB for transfers."""
    return f"n = {row.size}" if row.test == "gemm" else f"{row.size / 2**20:,.0f} MiB"
