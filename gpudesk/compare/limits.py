"""How many GPUs one comparison holds: the rule the CLI, the views and the report share.

Two is the least that compares anything; six is what a side-by-side table, a
radar's legend and a report page stay readable with (and the series palette
has six colours).
"""

from __future__ import annotations

from gpudesk.errors import GpuDeskError

MIN_COMPARED = 2
MAX_COMPARED = 6


class ComparisonSizeError(GpuDeskError, ValueError):
    """Too few or too many GPUs for one comparison.

    Attributes:
        count: how many were given.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        super().__init__(f"a comparison holds {MIN_COMPARED} to {MAX_COMPARED} GPUs, not {count}")


def is_comparable_count(count: int) -> bool:
    """Whether ``count`` GPUs make one comparison."""
    return MIN_COMPARED <= count <= MAX_COMPARED


def check_comparison_size(count: int) -> None:
    """Raise :class:`ComparisonSizeError` unless ``count`` GPUs make one comparison."""
    if not is_comparable_count(count):
        raise ComparisonSizeError(count)
