"""One comparison holds 2 to 6 GPUs, everywhere."""

from __future__ import annotations

import pytest

from gpudesk.compare.limits import (
    MAX_COMPARED,
    MIN_COMPARED,
    ComparisonSizeError,
    check_comparison_size,
    is_comparable_count,
)


def test_bounds_are_two_and_six() -> None:
    assert (MIN_COMPARED, MAX_COMPARED) == (2, 6)
    assert [count for count in range(9) if is_comparable_count(count)] == [2, 3, 4, 5, 6]


@pytest.mark.parametrize("count", [0, 1, 7, 50])
def test_outside_the_bounds_raises_with_the_count(count: int) -> None:
    with pytest.raises(ComparisonSizeError) as info:
        check_comparison_size(count)
    assert info.value.count == count
    assert f"not {count}" in str(info.value)


def test_inside_the_bounds_passes() -> None:
    for count in range(MIN_COMPARED, MAX_COMPARED + 1):
        check_comparison_size(count)
