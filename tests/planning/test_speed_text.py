"""One way speed figures read, shared by the CLI and the Plan tab."""

from __future__ import annotations

import math

import pytest

from gpudesk.speed.text import duration_text, figure_text, usd_text


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1234.5, "1,234"), (56.78, "56.8"), (8.9, "8.90"), (None, "n/a"), (math.nan, "n/a")],
)
def test_figure_text(value: float | None, expected: str) -> None:
    assert figure_text(value) == expected


def test_usd_and_duration_text() -> None:
    assert usd_text(1234.5) == "$1,234.50"
    assert usd_text(0.0042) == "$0.0042"
    assert usd_text(math.inf) == "n/a"
    assert duration_text(90) == "90.0 s"
    assert duration_text(600) == "10.0 min"
    assert duration_text(7200) == "2.0 h"
    assert duration_text(5 * 86400) == "5.0 days"


def test_a_compute_share_above_the_16_bit_peak_is_also_given_against_the_fp8_peak() -> None:
    # FP8 matmuls at 66% of the FP8 peak are 132% of the 16-bit one: say both.
    from catalog_factory import make_entry

    from gpudesk.speed.estimate import _share_words
    from gpudesk.speed.hardware import rates_for

    rates = rates_for(
        make_entry("x", fp16_tensor_tflops=989.0, fp8_tensor_tflops=1979.0, bandwidth_gbs=3350)
    )
    assert _share_words(0.46, rates) == "46% of 989 TFLOPS dense 16-bit"
    above = _share_words(1.32, rates)
    assert above.startswith("132% of 989 TFLOPS dense 16-bit")
    assert "66% of the 1,979 TFLOPS dense FP8 peak" in above
