"""Issue 42 item 13: did-you-mean for commands, choices and flags (exit 2, worded by the
subcommand typed); ``list --sort`` always shows its column; ``speed`` defaults to decode."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re

import pytest
from hypothesis import given, settings, strategies as st

from gpudesk.cli import build_parser, main
from gpudesk.cli.parsing import fit_help_lines, nearest
from gpudesk.cli.textwidth import display_width


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


def test_a_mistyped_command_gets_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["comapre", "rtx-4090", "h100-sxm5"], capsys)
    assert "invalid choice: 'comapre'; did you mean 'compare'?" in " ".join(err.split())


def test_a_mistyped_flag_is_worded_by_its_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["fleet", "survey", "--adress", "10.0.0.1:6379"], capsys)
    assert err.startswith("usage: gpudesk fleet survey "), err
    assert "did you mean --address?" in " ".join(err.split())
    err = _usage_error(["list", "--srot", "price_usd"], capsys)
    assert err.startswith("usage: gpudesk list ")
    assert "did you mean --sort?" in " ".join(err.split())


def test_a_mistyped_choice_gets_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["speed", "--model", "llama-3.1-8b", "--quant", "q4_k"]
    err = " ".join(_usage_error(argv, capsys).split())
    assert "invalid choice: 'q4_k'; did you mean 'q4_k_m'?" in err
    assert "(choose from 'fp32'" in err, "the choices are still listed"


def test_nothing_alike_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["list", "--zzzzzzzz"], capsys)
    assert "unrecognized arguments: --zzzzzzzz" in err and "did you mean" not in err
    assert nearest("zzzz", ["compare", "list"]) is None


def _parsers() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        found.append((path, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(build_parser(), ())
    return found


#: Subcommands that run with no argument at all: a lone mistyped flag reaches the
#: unrecognized-argument check (elsewhere a missing FILE is said first).
_FLAG_CASES = [
    (path, option)
    for path, parser in _parsers()
    if path
    and not any(action.required for action in parser._actions)
    and not any(isinstance(action, argparse._SubParsersAction) for action in parser._actions)
    for action in parser._actions
    for option in action.option_strings
    if option.startswith("--") and len(option) >= 8
]


_ROOT = build_parser()


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(_FLAG_CASES), data=st.data())
def test_any_flag_with_a_letter_dropped_gets_a_flag_of_its_own_command(
    case: tuple[tuple[str, ...], str], data: st.DataObject
) -> None:
    path, option = case
    # a letter from the middle: dropping the last could leave an accepted abbreviation
    cut = data.draw(st.integers(min_value=3, max_value=len(option) - 2))
    typo = option[:cut] + option[cut + 1 :]
    parser = dict(_parsers())[path]
    flags = {o for action in parser._actions for o in action.option_strings}
    if typo in flags or any(flag.startswith(typo) for flag in flags):
        return  # the typo is itself a flag or an abbreviation argparse accepts
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), pytest.raises(SystemExit) as raised:
        _ROOT.parse_args([*path, typo])
    assert raised.value.code == 2
    err = " ".join(stderr.getvalue().split())
    assert err.startswith("usage: gpudesk " + " ".join(path)), err
    guess = err.split("did you mean ")[1].split("?")[0]
    assert guess in flags, err


@settings(max_examples=80, deadline=None)
@given(
    text=st.text(alphabet="ab ,[]{}-=", min_size=0, max_size=200),
    width=st.integers(min_value=20, max_value=120),
)
def test_fitted_help_keeps_every_character_and_fits_where_it_can_break(
    text: str, width: int
) -> None:
    fitted = fit_help_lines(text, width)
    assert "".join(fitted.split()) == "".join(text.split()), "only spaces and breaks added"
    for line in fitted.split("\n"):
        if display_width(line) > width:
            # what is left is one piece with no space or comma to break at
            body = line.strip()
            assert " " not in body and "," not in body[: width - 1], line


def _sort_fields() -> list[str]:
    from gpudesk.catalog.metrics import METRICS

    return [*METRICS, "vendor", "architecture"]


@pytest.mark.parametrize("field", _sort_fields())
def test_list_shows_the_column_it_sorts_by_at_80_columns(
    field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Right after ID and Name, never among the columns dropped for the width."""
    from gpudesk.catalog.metrics import METRICS
    from gpudesk.cli.catalog_cmds import _COMPACT_HEADERS

    assert main(["list", "--sort", f"{field}:desc"]) == 0
    out = capsys.readouterr().out
    assert max(display_width(line) for line in out.splitlines()) <= 80, out
    header = _COMPACT_HEADERS.get(field) or (METRICS[field].header if field in METRICS else field)
    assert re.split(r"\s{2,}", out.splitlines()[0].strip())[2] == header, out
    dropped = " ".join(out.split("(not shown for the terminal's width:")[1:])
    assert header not in dropped.split(";")[0].split(", ")


def test_list_sorted_by_price_keeps_the_price_in_the_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The case of the issue: at 80 columns USD was among the columns not shown."""
    assert main(["list", "--sort", "price_usd"]) == 0
    out = capsys.readouterr().out
    assert re.split(r"\s{2,}", out.splitlines()[0].strip())[:3] == ["ID", "Name", "USD"]
    dropped = " ".join(" ".join(out.split("not shown for the terminal's width:")[1:]).split())
    assert "USD" not in [name.strip() for name in dropped.split(";")[0].split(",")]


def test_speed_without_mode_is_decode(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["speed", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--json"]
    assert main(argv) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["workload"]["mode"] == "decode"
    assert main([*argv, "--mode", "decode"]) == 0
    assert json.loads(capsys.readouterr().out) == default
    with pytest.raises(SystemExit):
        main(["speed", "--help"])
    assert "default decode" in " ".join(capsys.readouterr().out.split())


def test_an_unknown_sort_field_is_one_short_line_with_a_guess(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["list", "--sort", "price_usdd"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "gpudesk: --sort: unknown field 'price_usdd'; did you mean 'price_usd'? "
        "(gpudesk list --help lists them)\n"
    )
    assert main(["list", "--sort", "qqqq"]) == 2
    err = capsys.readouterr().err
    assert "did you mean" not in err and len(err.splitlines()) == 1
