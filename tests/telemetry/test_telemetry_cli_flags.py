"""The monitor's and exporter's number flags: in range, or a usage error naming the value."""

from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import given, strategies as st
from reach import reached

from gpudesk.cli import main

# the parser each command registers for its seconds flags (one shared function now)
from gpudesk.cli.exporter_cmd import interval_argument as exporter_seconds
from gpudesk.cli.monitor_cmd import _count, interval_argument as monitor_seconds

_NUMBERS = st.one_of(
    st.text(max_size=12),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.integers(-5, 5000).map(str),
)


@given(_NUMBERS)
@pytest.mark.reaches(accepted=15, refused=35)
def test_any_seconds_flag_is_a_finite_duration_in_range_or_refused(text: str) -> None:
    for parse in (exporter_seconds, monitor_seconds):
        try:
            value = parse(text)
        except argparse.ArgumentTypeError as exc:
            reached("refused")
            assert str(exc)
            continue
        reached("accepted")
        assert math.isfinite(value) and 0.1 <= value <= 3600


@given(_NUMBERS)
@pytest.mark.reaches(accepted=12, refused=35)
def test_any_count_flag_is_a_positive_whole_number_or_refused(text: str) -> None:
    try:
        value = _count(text)
    except argparse.ArgumentTypeError:
        reached("refused")
        return
    reached("accepted")
    assert isinstance(value, int) and value >= 1


@pytest.mark.parametrize(
    "arguments",
    [
        ["monitor", "--interval", "0"],
        ["monitor", "--interval", "nan"],
        ["monitor", "--count", "0"],
        ["exporter", "--deadline", "inf"],
        ["exporter", "--listen", "127.0.0.1"],
    ],
)
def test_bad_flags_exit_2(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code: object = main(arguments)
    except SystemExit as exited:  # argparse's own usage errors
        code = exited.code
    assert code == 2
    assert capsys.readouterr().err.strip()
