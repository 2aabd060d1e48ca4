"""Issue 39 item 7: an output that cannot be written is one line and exit 1, never a traceback.

Every subcommand's ``--help`` (found by walking the parser, so a future one is
covered) and a representative normal output of each command are written to
``/dev/full`` (a full disk) and to a pipe whose reader is gone. In-process for
all of them, and as real processes for a few: there the interpreter's own
flush at exit is part of what is tested.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from survey_factory import gpu, node, survey

from gpudesk.cli import build_parser, main

FULL_DISK = "gpudesk: cannot write the output: No space left on device"

pytestmark = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")


def _commands() -> list[list[str]]:
    """The words of every command and subcommand the parser has, the bare ``gpudesk`` first."""
    found: list[list[str]] = [[]]

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append([*words, name])
                    walk(sub, [*words, name])

    walk(build_parser(), [])
    return found


class _Stderr(io.StringIO):
    """A stderr to read afterwards: closing it (after a closed pipe) keeps the text."""

    def close(self) -> None:
        pass


def _full_disk() -> io.TextIOWrapper:
    return open("/dev/full", "w", encoding="utf-8")  # closed by _run


def _closed_pipe() -> io.TextIOWrapper:
    read_end, write_end = os.pipe()
    os.close(read_end)
    return os.fdopen(write_end, "w", encoding="utf-8")


def _run(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], stdout: io.TextIOWrapper
) -> tuple[int, str]:
    """``main(argv)`` with ``stdout`` as its standard output: (exit code, stderr)."""
    err = _Stderr()
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", err)
    try:
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    finally:
        monkeypatch.undo()
        # what the command left unflushed fails again here; it was reported
        with contextlib.suppress(OSError):
            stdout.close()
    return code, err.getvalue()


@pytest.fixture(autouse=True)
def _narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")


@pytest.mark.parametrize("words", _commands(), ids=lambda words: " ".join(words) or "gpudesk")
def test_help_into_a_full_disk_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, words: list[str]
) -> None:
    code, err = _run(monkeypatch, [*words, "--help"], _full_disk())
    assert (code, err.splitlines()) == (1, [FULL_DISK])


@pytest.mark.parametrize("words", _commands(), ids=lambda words: " ".join(words) or "gpudesk")
def test_help_into_a_closed_pipe_is_a_quiet_exit_0(
    monkeypatch: pytest.MonkeyPatch, words: list[str]
) -> None:
    assert _run(monkeypatch, [*words, "--help"], _closed_pipe()) == (0, "")


def test_every_command_has_a_normal_output_below() -> None:
    leaves = {
        " ".join(words)
        for words in _commands()
        if words
        and not any(words != other and other[: len(words)] == words for other in _commands())
    }
    # gui opens a window and validate reports on stderr; measurements import, show and
    # remove need stored measurements and fleet survey a cluster: --help covers them
    covered = {
        " ".join(argv[:2]) if argv[0] in ("fleet", "measurements") else argv[0] for argv in OUTPUTS
    }
    skipped = {"gui", "validate", "fleet survey", "measurements import", "measurements show"}
    skipped |= {"measurements remove"}
    # exporter serves HTTP until stopped and prints only its address on stderr
    skipped |= {"exporter"}
    assert leaves - skipped == covered


@pytest.fixture
def survey_file(tmp_path: Path) -> Path:
    path = tmp_path / "survey.json"
    nodes = [node("a", [gpu(0)]), node("b", [gpu(0), gpu(1)])]
    path.write_text(json.dumps(survey(nodes)), "utf-8")
    return path


#: A representative normal output of each command (SURVEY: the survey file).
OUTPUTS = [
    ["list"],
    ["list", "--csv"],
    ["show", "rtx-4090"],
    ["compare", "rtx-4090", "a100-80gb-pcie", "--json"],
    ["compare", "rtx-4090", "a100-80gb-pcie", "--text"],
    ["detect", "--json"],
    ["doctor", "--json"],
    ["bench", "--list-backends"],
    ["fit", "--model", "llama-3.1-8b", "--json"],
    ["fit", "--model", "llama-3.1-8b", "--gpu", "h100-sxm5", "--emit", "vllm"],
    ["cost", "rtx-4090", "--cloud-hourly", "1"],
    ["prices", "rtx-4090"],
    ["fleet", "show", "SURVEY"],
    ["speed", "--model", "llama-3.1-8b", "--mode", "decode", "--json"],
    ["measurements", "list"],
    ["measurements", "export"],
    ["install-desktop"],
    ["monitor", "--json", "--count", "1"],
]


def _argv(argv: list[str], survey_file: Path) -> list[str]:
    return [str(survey_file) if word == "SURVEY" else word for word in argv]


@pytest.mark.parametrize("argv", OUTPUTS, ids=" ".join)
def test_a_normal_output_into_a_full_disk_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, survey_file: Path, argv: list[str]
) -> None:
    code, err = _run(monkeypatch, _argv(argv, survey_file), _full_disk())
    assert code == 1
    # a command may have said something of its own first (doctor: no GPU here)
    assert err.splitlines()[-1] == FULL_DISK
    assert err.count("gpudesk: cannot write") == 1 and "Traceback" not in err


@pytest.mark.parametrize("argv", OUTPUTS, ids=" ".join)
def test_a_normal_output_into_a_closed_pipe_is_quiet(
    monkeypatch: pytest.MonkeyPatch, survey_file: Path, argv: list[str]
) -> None:
    code, err = _run(monkeypatch, _argv(argv, survey_file), _closed_pipe())
    assert code == 0
    assert "cannot write" not in err and "Traceback" not in err


def _process(argv: list[str], stdout: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-m", "gpudesk", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.fixture
def pipe_without_reader() -> Iterator[int]:
    read_end, write_end = os.pipe()
    os.close(read_end)
    yield write_end
    os.close(write_end)


@pytest.mark.parametrize("argv", [["fleet", "--help"], ["--version"], ["compare", "--help"]])
def test_a_real_process_into_a_full_disk(argv: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = _process(argv, full.fileno())
    assert (done.returncode, done.stderr.splitlines()) == (1, [FULL_DISK])


@pytest.mark.parametrize("argv", [["fleet", "--help"], ["compare", "rtx-4090", "a100-80gb-pcie"]])
def test_a_real_process_into_a_closed_pipe(argv: list[str], pipe_without_reader: int) -> None:
    done = _process(argv, pipe_without_reader)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_usage_error_with_stderr_on_a_full_disk_keeps_exit_2() -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "gpudesk", "list", "--no-such-flag"],
            stdout=subprocess.DEVNULL,
            stderr=full,
            timeout=60,
            env={**os.environ, "PYTHONPATH": os.getcwd(), "COLUMNS": "100"},
        )
    assert done.returncode == 2
