"""Ordering a bar chart of one figure: best first, missing values last."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BarValue:
    """One bar: a column id (a GPU or the measured series), its label and value."""

    id: str
    label: str
    value: float | None


def bar_order(bars: Sequence[BarValue], higher_is_better: bool | None) -> list[BarValue]:
    """``bars`` sorted best first (largest first when there is no direction).

    Bars without a value go last, in their given order; equal values keep
    their given order (the sort is stable).
    """
    present = [bar for bar in bars if bar.value is not None]
    missing = [bar for bar in bars if bar.value is None]
    descending = higher_is_better is not False
    present.sort(key=lambda bar: float(bar.value or 0.0), reverse=descending)
    return present + missing
