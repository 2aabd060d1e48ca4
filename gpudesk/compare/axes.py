"""Chart axis ranges and log-axis ticks, in plain numbers (the painting is in render/).

A log axis gets ticks at whole decades only ("$1k", "$10k"), so labels never
crowd; where the data spans less than two decades, 2x and 5x steps are added
so that an axis never shows a single tick. Ranges fit the data with a small
margin; a linear axis of figures that cannot be negative (prices, memory,
throughput) never extends below zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Margin around the data, as a fraction of its span.
RANGE_PADDING = 0.06


def axis_range(
    values: Sequence[float], *, log: bool, nonnegative: bool = True
) -> tuple[float, float] | None:
    """The (low, high) range in plotted coordinates (log10 on a log axis).

    Args:
        values: the raw figures shown on the axis (non-finite ones and, on a
            log axis, non-positive ones are ignored).
        log: a log10 axis.
        nonnegative: the figure cannot be negative: a linear axis stops at zero.

    Returns:
        None when no value can be plotted.
    """
    if log:
        plotted = [math.log10(v) for v in values if math.isfinite(v) and v > 0]
    else:
        plotted = [v for v in values if math.isfinite(v)]
    if not plotted:
        return None
    low, high = min(plotted), max(plotted)
    span = high - low
    if span == 0:
        span = 1.0 if log else (abs(high) or 1.0)
    low -= span * RANGE_PADDING
    high += span * RANGE_PADDING
    if not log and nonnegative and min(plotted) >= 0:
        low = max(low, 0.0)
    return low, high


def compact_number(value: float, unit: str = "") -> str:
    """1000 -> "1k", 25000 -> "25k", 2e6 -> "2M", 0.5 -> "0.5"; "$" first for USD."""
    magnitude = abs(value)
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            text = f"{value / limit:g}{suffix}"
            break
    else:
        text = f"{value:g}"
    return f"${text}" if unit == "USD" else text


def log_ticks(low: float, high: float, unit: str = "") -> list[tuple[float, str]]:
    """Ticks for a log10 axis spanning ``low``..``high`` (log10 values): (position, label).

    Whole decades only when two or more fall inside; otherwise 1, 2 and 5 steps.
    """
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return []
    first, last = math.ceil(low), math.floor(high)
    decades = list(range(first, last + 1))
    steps = (1.0,) if len(decades) >= 2 else (1.0, 2.0, 5.0)
    ticks: list[tuple[float, str]] = []
    for exponent in range(math.floor(low), math.ceil(high) + 1):
        for step in steps:
            value = step * 10.0**exponent
            position = math.log10(value)
            if low <= position <= high:
                ticks.append((position, compact_number(value, unit)))
    return ticks
