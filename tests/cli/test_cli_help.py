"""Help for every option, global options after the subcommand, a list that fits the terminal."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from catalog_factory import write_entry

from gpudesk.catalog.metrics import METRICS
from gpudesk.cli import build_parser, main
from gpudesk.cli.common import fit_columns, table_width


def _options(parser: argparse.ArgumentParser, path: list[str]) -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_options(sub, [*path, name]))
        elif not isinstance(action, argparse._HelpAction):
            found.append((" ".join(path), action))
    return found


def test_every_option_of_every_subcommand_has_a_help_line() -> None:
    missing = [
        f"{where} {action.option_strings or action.dest}"
        for where, action in _options(build_parser(), ["gpudesk"])
        if not action.help
    ]
    assert missing == []


def test_list_help_names_the_sortable_fields(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["list", "--help"])
    text = capsys.readouterr().out
    assert all(key in text for key in METRICS)
    assert "--wide" in text


def test_catalog_works_after_the_subcommand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_entry(tmp_path, "zz-test-gpu", name="ZZ Test GPU 9000")
    assert main(["show", "zz-test-gpu", "--catalog", str(tmp_path)]) == 0
    assert "ZZ Test GPU 9000" in capsys.readouterr().out
    assert main(["--catalog", str(tmp_path), "show", "zz-test-gpu"]) == 0


def test_fit_columns_drops_from_the_right_and_keeps_the_identity() -> None:
    headers = ["ID", "Name", "A", "B"]
    rows = [["x", "y" * 10, "1" * 5, "2" * 5]]
    assert table_width(headers, rows) == 2 + 10 + 5 + 5 + 3 * 2  # widths plus gaps
    kept, kept_rows, dropped = fit_columns(headers, rows, 20)
    assert kept == ["ID", "Name"] and dropped == ["A", "B"] and kept_rows == [["x", "y" * 10]]
    assert fit_columns(headers, rows, None)[2] == []


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_list_fits_the_terminal_unless_wide(
    columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[: lines.index("")]
    assert max(len(line) for line in table) <= max(columns, 60)
    # The note names what was dropped, wrapped to the width like the table.
    assert "--wide shows all" in " ".join(lines[-3:])
    assert max(len(line) for line in lines) <= max(columns, 60)
    assert main(["list", "--wide"]) == 0
    wide = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in wide) > columns
    assert "Price (USD)" in wide[0]
