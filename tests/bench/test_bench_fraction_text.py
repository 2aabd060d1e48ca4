"""How a fraction of peak reads everywhere it is shown (CLI, GUI, PDF, fleet)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from gpudesk.bench.text import IMPLAUSIBLE_FRACTION_OF_PEAK, format_fraction_of_peak


@pytest.mark.parametrize(
    ("fraction", "text"),
    [
        (None, ""),
        (0.0, "0%"),
        (-0.0, "0%"),
        (-0.5, "0%"),
        (0.854, "85%"),
        (1.05, "105%"),
        (9.99, "999%"),
        (10.0, "1,000%"),
        (10.5, "over 1,000%"),
        (1e308, "over 1,000%"),
        (float("inf"), "over 1,000%"),
        (float("nan"), "over 1,000%"),
    ],
)
def test_examples(fraction: float | None, text: str) -> None:
    assert format_fraction_of_peak(fraction) == text


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_reads_as_a_short_finite_percentage(fraction: float) -> None:
    text = format_fraction_of_peak(fraction)
    assert text.endswith("%") and len(text) <= len("over 1,000%")
    assert "inf" not in text and "nan" not in text and not text.startswith("-")
    if 0 < fraction <= IMPLAUSIBLE_FRACTION_OF_PEAK:
        assert text == f"{fraction:,.0%}"
