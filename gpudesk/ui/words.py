"""Core messages made readable in widgets (the core writes for the terminal)."""

from __future__ import annotations

import re

_CODE = re.compile(r"`([^`]+)`")


def plain_words(text: str) -> str:
    """Markdown code spans as quoted text: `sudo modprobe nvidia` -> “sudo modprobe nvidia”."""
    return _CODE.sub(lambda match: f"“{match.group(1)}”", text)


def flops_scale(value: float | None, unit: str) -> tuple[float, str]:
    """(factor, unit) to show a figure in: a TFLOPS figure under 1 (a CPU's 0.020) in
    GFLOPS (20.0), as the sweep chart's axis already did; others as they are."""
    if unit == "TFLOPS" and value is not None and 0 < value < 1.0:
        return 1000.0, "GFLOPS"
    return 1.0, unit
