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
import reach
from hypothesis import given, strategies as st

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


#: A folder name the shortcut takes (a folder named gui or list included).
_catalog_value = st.one_of(
    st.sampled_from(["x", "gui", "list", "my catalog", "/tmp/c", "~/c", "c=d"]),
    st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=6),
)
#: A plain GUI start (what the shortcut takes): random tokens alone make one in 1 of 3.
_gui_start_argv = st.lists(
    st.one_of(
        st.just(["--startup-check"]),
        st.builds(lambda value: ["--catalog", value], _catalog_value),
        st.builds(lambda value: [f"--catalog={value}"], _catalog_value),
    ),
    max_size=4,
).map(lambda pieces: [token for piece in pieces for token in piece])


@st.composite
def _gui_start_or_not(draw: st.DrawFn) -> list[str]:
    """A plain GUI start, one with a random token put in or put in place of one, or
    random tokens."""
    kind = draw(st.sampled_from(["start", "start", "mutated", "random"]))
    if kind == "random":
        return draw(argv_strategy)
    argv = draw(_gui_start_argv)
    if kind == "mutated":
        token = draw(st.sampled_from(TOKENS) | st.text(max_size=6))
        index = draw(st.integers(0, len(argv)))
        argv[index : index + draw(st.integers(0, 1))] = [token]
    return argv


@given(_gui_start_or_not())
@pytest.mark.reaches(shortcut=30, stepped_aside=15)
def test_the_shortcut_reads_what_the_whole_parser_reads_or_steps_aside(argv: list[str]) -> None:
    fast = _gui_start(argv)
    if fast is not None:
        reach.reached("shortcut")
        assert vars(fast) == full_parse(argv)
    else:
        reach.reached("stepped_aside")  # nothing to check: the whole parser reads it


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
