"""Issue 39 item 6: a CSV export carries no control byte, whatever the catalog holds."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from catalog_factory import entry_data, to_toml

from gpudesk.cli import main
from gpudesk.terminal_text import is_clean

#: A GPU name that retitles the terminal, and a note that splits a row.
HOSTILE_NAME = "Evil\x1b]0;owned\x07 GPU\x9b2J"
HOSTILE_NOTE = "line one\nline two\r\t=cmd"


@pytest.mark.parametrize("command", ["compare", "list"])
def test_csv_exports_hold_no_control_character(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    folder = tmp_path / "catalog"
    folder.mkdir()
    toml = to_toml(entry_data("evil-gpu", name="@NAME@", notes="@NOTE@"))
    # JSON's string escapes are TOML's: the control characters go in as \\uXXXX
    for placeholder, value in (("@NAME@", HOSTILE_NAME), ("@NOTE@", HOSTILE_NOTE)):
        toml = toml.replace(f'"{placeholder}"', json.dumps(value))
    (folder / "evil-gpu.toml").write_text(toml, "utf-8")
    target = tmp_path / "table.csv"
    if command == "compare":
        argv = ["--catalog", str(folder), "compare", "evil-gpu", "rtx-4090", "--csv", str(target)]
    else:
        argv = ["--catalog", str(folder), "list", "--search", "evil", "--csv"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == "" or err.startswith("wrote ")
    text = target.read_text("utf-8") if command == "compare" else out
    assert is_clean(text.replace("\n", "")), ascii(text)
    assert "\t" not in text and "\r" not in text
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert "Evil\\u001b]0;owned\\u0007 GPU\\u009b2J" in cells
    if command == "list":
        assert any(cell.startswith("line one line two") for cell in cells)
