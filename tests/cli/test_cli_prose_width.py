"""At 80 columns no line of prose from any command is wider than 80 (issue 42 item 12).

Every subcommand's --help (nested ones included, found from the parser itself) and
its common invocations run at COLUMNS=80; every line of stdout and stderr is checked.
A line may run past 80 only where it is one unbreakable word standing alone (a URL, a
path), a label and a path, or a printed shell command: those stay whole (a command may
also break with `` \\`` continuations).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from survey_factory import gemm_run, gpu, node, survey

from gpudesk.catalog.price_snapshots import bundled_snapshot_dir
from gpudesk.cli import build_parser, main, textwidth
from gpudesk.cli.textwidth import display_width, hanging_indent, wrap_long_lines

WIDTH = 80
MEASUREMENT_TABLE = (
    Path(__file__).parents[1]
    / "planning"
    / "measurement_files"
    / "llama-bench-geerlingguy-rtx4090-vulkan.md"
)


#: A printed shell command starts with one of these: it stays whole (a line broken at a
#: space would run its first half alone) unless it breaks with `` \\`` continuations.
SHELL_COMMANDS = frozenset(
    ["llama-server", "llama-bench", "llama-cli", "vllm", "python", "python3", "curl",
     "ollama", "gpudesk", "trtllm-serve", "docker", "pip", "srun", "ray", "mkdir"]
)  # fmt: skip


def _excused(line: str) -> bool:
    """One unbreakable word standing alone, a label and a path or URL (``source
    /long/path``), or a printed shell command: what stays whole."""
    words = line.split()
    return (
        len(words) == 1
        or (len(words) == 2 and "/" in words[1])
        or words[0].removeprefix("$") in SHELL_COMMANDS
    )


def too_wide(text: str, width: int = WIDTH) -> list[str]:
    """The lines of ``text`` wider than ``width`` that are not excused."""
    return [
        line for line in text.splitlines() if display_width(line) > width and not _excused(line)
    ]


def _command_paths(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...]
) -> Iterator[tuple[str, ...]]:
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _command_paths(sub, (*prefix, name))


def _every_help() -> list[list[str]]:
    return [[*path, "--help"] for path in _command_paths(build_parser(), ())]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # --help and usage errors leave through argparse
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("argv", _every_help(), ids=" ".join)
def test_every_help_fits_80_columns(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _run(argv, capsys)
    assert code == 0 and "usage:" in text
    assert too_wide(text) == [], text


COMMON = [
    ["list"],
    ["list", "--sort", "price_usd"],
    ["list", "--sort", "bandwidth_gbs"],
    ["show", "rtx-4090"],
    ["show", "h100-sxm5"],
    ["compare", "rtx-4090", "h100-sxm5", "--text"],
    ["detect"],
    ["doctor"],
    ["bench", "--list-backends"],
    ["bench", "--backend", "numpy", "--tests", "copy", "--no-save"],
    ["fit", "--model", "llama-3.1-70b", "--quant", "q4_k_m"],
    ["fit", "--model", "qwen2.5-32b", "--quant", "q4_k_m", "--engine", "llama.cpp"],
    ["cost", "rtx-4090"],
    ["prices"],
    ["prices", "rtx-4090"],
    ["prices", "h100-sxm5"],
    ["prices", "h100-sxm5", "--history"],
    ["prices", "a100-80gb-sxm4", "--spot"],
    ["speed", "--model", "llama-3.1-8b"],
    ["speed", "--model", "llama-3.1-8b", "--mode", "prefill"],
    ["speed", "--model", "llama-3.1-70b", "--quant", "fp8", "--mode", "train", "--count", "8"],
    ["speed", "--model", "llama-3.1-8b", "--mode", "train", "--tokens", "1e9"],
    ["speed", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--sort", "price"],
    ["speed", "--model", "llama-3.1-8b", "--sort", "usd_per_tokens_s"],
    ["speed", "--model", "llama-3.1-8b", "--max-price-usd", "2000"],
    ["speed", "--model", "llama-3.1-70b", "--quant", "fp8", "--mode", "serve", "--count", "4"],
    [
        "speed",
        "--model",
        "llama-3.1-70b",
        "--quant",
        "fp8",
        "--mode",
        "train",
        "--count",
        "8",
        "--sort",
        "price",
    ],
    [
        "fit",
        "--model",
        "qwen2.5-32b",
        "--quant",
        "q4_k_m",
        "--engine",
        "llama.cpp",
        "--emit",
        "llama.cpp",
        "--gpu",
        "rtx-4090",
    ],
    ["fit", "--model", "llama-3.1-8b", "--gpu", "rtx-4090"],
    ["cost", "h100-sxm5"],
    ["validate"],
    ["list", "--sort", "nonsense_field"],
    ["measurements", "list"],
    ["comapre", "rtx-4090", "h100-sxm5"],
    ["fleet", "survey", "--adress", "x"],
    ["speed", "--model", "llama-3.1-8b", "--quant", "q4_k"],
]


@pytest.mark.parametrize("argv", COMMON, ids=" ".join)
def test_common_invocations_fit_80_columns(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _code, text = _run(argv, capsys)
    assert text.strip(), "the command printed something to check"
    assert too_wide(text) == [], text


def test_stateful_invocations_fit_80_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Commands whose output needs stored data: prices update, measurements, fleet show."""
    path = tmp_path / "survey.json"
    nodes = [node(f"node-{i}", [gpu(0), gpu(1)], [gemm_run(0, 700.0)]) for i in range(3)]
    path.write_text(json.dumps(survey(nodes)), encoding="utf-8")
    steps = [
        ["prices", "update", "--from", str(bundled_snapshot_dir())],
        ["measurements", "import", str(MEASUREMENT_TABLE), "--gpu", "rtx-4090",
         "--model", "tinyllama-1.1b"],
        ["measurements", "list"],
        ["measurements", "show", "1"],
        ["fleet", "show", str(path)],
    ]  # fmt: skip
    for argv in steps:
        code, text = _run(argv, capsys)
        assert code == 0, (argv, text)
        assert too_wide(text) == [], f"{argv}:\n{text}"


def test_the_check_sees_a_wide_line_and_excuses_a_lone_url() -> None:
    assert too_wide("word " * 20) == ["word " * 20]
    assert too_wide("  https://example.com/" + "x" * 90) == []
    assert too_wide("source  /data/" + "x" * 90) == []
    assert too_wide("see the page at https://example.com/" + "x" * 90) != []
    assert too_wide("  llama-bench -m model.gguf -ngl 65 " + "-p 512 " * 20) == []


@settings(max_examples=80, deadline=None)
@given(
    label=st.sampled_from(["", "  hint      ", "Method:   ", "GPU 0  ", "note: "]),
    words=st.lists(st.text(alphabet="abcdefghij-./", min_size=1, max_size=12), max_size=40),
    width=st.integers(min_value=30, max_value=120),
)
def test_a_long_line_wraps_under_its_label_and_keeps_every_word(
    label: str, words: list[str], width: int
) -> None:
    line = label + " ".join(words)
    wrapped = wrap_long_lines(line, width)
    assert wrapped.split() == line.split(), "only spaces change"
    lines = wrapped.split("\n")
    assert all(display_width(piece) <= width for piece in lines), wrapped
    if len(lines) > 1 and label.strip():
        assert all(piece.startswith(hanging_indent(line)) for piece in lines[1:]), wrapped


#: Error paths (argparse's own usage errors aside): one long line each before they were
#: wrapped under "gpudesk: " (issue 42; 109 to 600 columns).
ERRORS = [
    (["show", "nonexistent-gpu-9000"], 2),
    (["fit", "--model", "nosuch-model-preset"], 2),
    (["speed", "--model", "llama-3.1-8b", "--gpu", "nonexistent-gpu-9000-with-a-long-name"], 2),
    (
        [
            "speed",
            "--model",
            "llama-3.1-8b",
            "--mode",
            "serve",
            "--slo",
            "ttft=500,time_to_first_token_in_milliseconds_at_the_ninetieth=5",
        ],
        2,
    ),
    (["speed", "--model", "llama-3.1-8b", "--mode", "serve", "--slo", "ttft=" + "9" * 70], 2),
]


@pytest.mark.parametrize(("argv", "exit_code"), ERRORS, ids=[" ".join(a)[:60] for a, _ in ERRORS])
def test_error_messages_wrap_at_80_columns(
    argv: list[str],
    exit_code: int,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(textwidth, "_is_terminal", lambda stream: True)  # a person reads it
    code, text = _run(argv, capsys)
    assert code == exit_code, text
    assert text.startswith("gpudesk: ") and "usage:" not in text, text
    assert too_wide(text) == [], text


def test_catalog_problems_wrap_at_80_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken catalog file is named with its field and what is wrong: three problems,
    each one line of up to 168 columns before."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(textwidth, "_is_terminal", lambda stream: True)
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "broken-entry-with-a-long-file-name.toml").write_text(
        'id = "broken"\nname = "Broken"\nmemory_gb = "lots of it"\nvendor = "nvidia"\n'
        "this_is_an_unknown_field_with_a_long_name = 3\n",
        encoding="utf-8",
    )
    code, text = _run(["list", "--catalog", str(folder)], capsys)
    assert code == 0
    problems = [line for line in text.splitlines() if line.startswith("gpudesk: catalog problem")]
    assert len(problems) >= 3, text
    assert "memory_gb" in text and "this_is_an_unknown_field_with_a_long_name" in text
    assert too_wide(text) == [], text


def test_a_captured_error_stays_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read by a script or a log (stderr not a terminal), a message is one line that grep
    finds whole; at a terminal it wraps under "gpudesk: "."""
    monkeypatch.setenv("COLUMNS", "80")
    code, text = _run(["show", "nonexistent-gpu-9000"], capsys)
    assert code == 2 and len(text.splitlines()) == 1 and len(text) > WIDTH, text
    monkeypatch.setattr(textwidth, "_is_terminal", lambda stream: True)
    code, wrapped = _run(["show", "nonexistent-gpu-9000"], capsys)
    assert code == 2 and len(wrapped.splitlines()) > 1 and too_wide(wrapped) == []
    assert wrapped.split() == text.split()
    assert all(line.startswith(" " * len("gpudesk: ")) for line in wrapped.splitlines()[1:])
