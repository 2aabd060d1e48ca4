"""The README's command table names every subcommand the parser has."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from gpudesk.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def _subcommands() -> set[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(actions[0].choices)


def test_every_subcommand_has_a_row_in_the_readme_command_table() -> None:
    table_rows = [
        line
        for line in README.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `gpudesk")
    ]
    documented = {
        match.group(1) for row in table_rows for match in re.finditer(r"`gpudesk (\w[\w-]*)", row)
    }
    missing = _subcommands() - documented
    assert not missing, f"README command table lacks: {sorted(missing)}"
    assert {"doctor", "validate", "speed", "fleet"} <= _subcommands()
