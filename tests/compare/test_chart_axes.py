"""Chart ranges fit the data; log axes label whole decades; prices never go below zero."""

from __future__ import annotations

import math

from hypothesis import given, strategies as st

from gpudesk.compare.axes import axis_range, compact_number, log_ticks


def test_linear_price_axis_stops_at_zero() -> None:
    low, high = axis_range([249.0, 1599.0, 30000.0], log=False)  # type: ignore[misc]
    assert low == 0.0
    assert high > 30000.0


def test_log_axis_fits_the_data_not_0_01() -> None:
    low, high = axis_range([249.0, 1599.0, 30000.0], log=True)  # type: ignore[misc]
    assert 1.9 < low < math.log10(249.0)
    assert math.log10(30000.0) < high < 4.8


def test_log_ticks_are_decades_with_compact_dollar_labels() -> None:
    ticks = log_ticks(2.3, 4.6, "USD")
    assert [label for _, label in ticks] == ["$1k", "$10k"]
    assert [position for position, _ in ticks] == [3.0, 4.0]


def test_a_narrow_log_range_still_gets_ticks() -> None:
    labels = [label for _, label in log_ticks(math.log10(150), math.log10(900))]
    assert labels == ["200", "500"]


def test_compact_number() -> None:
    assert compact_number(1000) == "1k"
    assert compact_number(2_500_000) == "2.5M"
    assert compact_number(0.5) == "0.5"
    assert compact_number(10_000, "USD") == "$10k"


@given(st.lists(st.floats(min_value=0.01, max_value=1e7), min_size=1, max_size=50))
def test_ranges_hold_every_value_and_log_ticks_never_crowd(values: list[float]) -> None:
    for log in (False, True):
        span = axis_range(values, log=log)
        assert span is not None
        low, high = span
        plotted = [math.log10(v) if log else v for v in values]
        assert low <= min(plotted) and max(plotted) <= high
        if not log:
            assert low >= 0.0
    low, high = axis_range(values, log=True)  # type: ignore[misc]
    ticks = log_ticks(low, high)
    positions = [position for position, _ in ticks]
    assert positions == sorted(positions)
    assert all(low <= position <= high for position in positions)
    # at most three labels per decade, and whole decades only over two or more
    assert len(ticks) <= 3 * (math.ceil(high) - math.floor(low))
