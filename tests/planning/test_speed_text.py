"""One way speed figures read, shared by the CLI and the Plan tab."""

from __future__ import annotations

import math

import pytest

from gpudesk.planning.speed.text import duration_text, figure_text, usd_text


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
