"""A plain ``gpudesk`` start reads its few options without importing every subcommand.

The shortcut must read exactly what the whole parser reads, or step aside.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudesk.cli import _COMMAND_MODULE_NAMES, _gui_start, build_parser

TOKENS = [
    "--startup-check",
    "--startup",  # an abbreviation argparse accepts: the whole parser's job
    "--catalog",
    "--catalog=",
    "--catalog=x",
    "--catalog=-x",
    "--cat",
    "--help",
    "--version",
    "-h",
    "-",
    "--",
    "gui",
    "list",
    "x",
    "",
    " ",
    "a\0b",
    "-x",
]

argv_strategy = st.lists(st.sampled_from(TOKENS) | st.text(max_size=6), max_size=6)


def full_parse(argv: list[str]) -> dict[str, object] | None:
    """What the whole parser makes of ``argv``; None where it stops (error, help)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return vars(build_parser().parse_args(argv))
        except SystemExit:
            return None


@given(argv_strategy)
def test_the_shortcut_reads_what_the_whole_parser_reads_or_steps_aside(argv: list[str]) -> None:
    fast = _gui_start(argv)
    if fast is not None:
        assert vars(fast) == full_parse(argv)


def test_plain_starts_take_the_shortcut() -> None:
    parser = build_parser()
    for argv in (
        [],
        ["--startup-check"],
        ["--catalog", "extra"],
        ["--catalog=one", "--startup-check", "--catalog", "two"],
        ["--catalog", "gui"],  # a folder named gui
    ):
        fast = _gui_start(argv)
        assert fast is not None, argv
        assert vars(fast) == vars(parser.parse_args(argv))
    for argv in (["gui"], ["list"], ["--catalog"], ["--catalog", ""], ["--help"]):
        assert _gui_start(argv) is None, argv


# The start-up check opens the window: it needs PySide6, absent from the Qt-free job.
@pytest.mark.gui
def test_a_gui_start_imports_no_subcommand_module() -> None:
    script = (
        "import sys\n"
        "from gpudesk.cli import main\n"
        "code = main(['--startup-check'])\n"
        f"names = {_COMMAND_MODULE_NAMES!r}\n"
        "print(code, sorted(n for n in names if 'gpudesk.cli.' + n in sys.modules))\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0 []"


def test_every_subcommand_module_still_registers() -> None:
    parser = build_parser()
    commands = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    assert {"gui", "list", "compare", "bench", "speed", "fit", "prices"} <= set(commands.choices)
