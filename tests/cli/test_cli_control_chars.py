"""Issue 30: control characters from untrusted data never reach the terminal raw.

Catalog names, bad values and file names echoed in problems, and a survey
node's hostname, error and CPU model all pass through ``main``'s scrubbed
stdout and stderr: ESC, BEL, CSI (U+009B), carriage returns, bidi overrides and
lone surrogates come out as visible ``\\uXXXX`` escapes, while JSON keeps the
data (the same escapes are JSON's own).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from pathlib import Path

import pytest
from catalog_factory import entry_data, to_toml
from hypothesis import HealthCheck, given, settings, strategies as st
from survey_factory import gpu, node, survey

from gpudesk.cli import main

#: What must never reach a terminal raw: C0 (but newline and tab), DEL, C1,
#: bidi embeddings/overrides/isolates and marks, and lone surrogates.
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
EVIL = "Evil\x1b]0;pwned\x07\x1b[31mRED\x9b2J\r\u202eTAIL\x00"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string, every character outside printable ASCII escaped."""
    parts = []
    for char in text:
        if char in '"\\' or not " " <= char <= "~":
            parts.append(f"\\U{ord(char):08X}" if ord(char) > 0xFFFF else f"\\u{ord(char):04X}")
        else:
            parts.append(char)
    return '"' + "".join(parts) + '"'


def _write_named(directory: Path, entry_id: str, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    text = to_toml(entry_data(entry_id, name="PLACEHOLDER"))
    text = text.replace('"PLACEHOLDER"', _toml_string(name))
    (directory / f"{entry_id}.toml").write_text(text, encoding="utf-8")


def test_list_and_show_escape_a_catalog_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _write_named(tmp_path, "evil-gpu", EVIL)
    for argv in (
        ["list"],
        ["show", "evil-gpu"],
        ["list", "--csv"],
        ["compare", "evil-gpu", "rtx-4090"],
    ):
        code, out, err = run_cli(capsys, "--catalog", str(tmp_path), *argv)
        assert code == 0, err
        assert not UNSAFE.search(out + err), argv
        assert "Evil\\u001b]0;pwned\\u0007" in out, argv


def test_json_keeps_the_name_exactly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _write_named(tmp_path, "evil-gpu", EVIL)
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "list", "--json")
    assert code == 0
    assert not UNSAFE.search(out)
    names = {row["id"]: row["name"] for row in json.loads(out)}
    assert names["evil-gpu"] == EVIL


def test_problem_messages_escape_file_names_and_values(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = to_toml(entry_data("bad-one", memory_gb="PLACEHOLDER"))
    text = text.replace('"PLACEHOLDER"', _toml_string("\x1b[2Jx"))
    (tmp_path / "bad\x1b[31m-one.toml").write_text(text, encoding="utf-8")
    for argv in (["list"], ["validate"]):
        _, out, err = run_cli(capsys, "--catalog", str(tmp_path), *argv)
        assert "bad\\u001b[31m-one.toml" in out + err
        assert "\\u001b[2Jx" in out + err
        assert not UNSAFE.search(out + err)


def test_usage_errors_and_unknown_names_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["show", EVIL], ["list", "--sort", EVIL], [EVIL]):
        code, out, err = run_cli(capsys, *argv)
        assert code in (1, 2)
        assert not UNSAFE.search(out + err), argv
        assert "pwned" in err, argv


def test_fleet_show_escapes_hostname_error_and_cpu(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping inside the escapes looked for
    good = node("a", [gpu(0, name="NVIDIA\x1b[5m H100")], cpu_model="EPYC\x1b]52;c;ZXZpbA==\x07")
    good["hostname"] = "host\x1b]0;owned\x07"
    failed = node("b", error="boom\x1b[2J\x9b")
    failed["hostname"] = "b\rFAKE"
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(survey([good, failed])), encoding="utf-8")
    code, out, err = run_cli(capsys, "fleet", "show", str(path))
    assert code in (0, 1), err
    assert not UNSAFE.search(out + err)
    assert "host\\u001b]0;owned\\u0007" in out
    assert "boom\\u001b[2J\\u009b" in out
    code, out, _ = run_cli(capsys, "fleet", "show", str(path), "--json")
    assert not UNSAFE.search(out)
    assert json.loads(out)["nodes"][0]["hostname"] == good["hostname"]


def test_our_own_escapes_pass_through_write_control() -> None:
    from gpudesk.cli.output import ScrubbingStream, write_control

    raw = io.StringIO()
    stream = ScrubbingStream(raw)
    write_control(stream, "\r\x1b[K")
    stream.write("[ 50%] \x1b[31mgemm")
    assert raw.getvalue() == "\r\x1b[K[ 50%] \\u001b[31mgemm"


@settings(max_examples=200, deadline=None)
@given(st.text(), st.lists(st.integers(min_value=0, max_value=50), max_size=6))
def test_scrubbed_stream_never_writes_a_control_character(text: str, cuts: list[int]) -> None:
    """Whatever is written, in whatever pieces: no control character out, newlines and tabs kept."""
    from gpudesk.cli.output import ScrubbingStream
    from gpudesk.terminal_text import scrub

    raw = io.StringIO()
    stream = ScrubbingStream(raw)
    start = 0
    for cut in sorted(cuts):
        stream.write(text[start:cut])
        start = max(start, cut)
    stream.write(text[start:])
    assert not UNSAFE.search(raw.getvalue())
    assert raw.getvalue() == scrub(text)
    assert raw.getvalue().count("\n") == text.count("\n")
    assert raw.getvalue().count("\t") == text.count("\t")
    raw.getvalue().encode("utf-8")  # no lone surrogate left to fail the encoder


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.text() | st.integers() | st.none(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=10,
    )
)
def test_scrubbed_json_is_still_the_same_json(data: object) -> None:
    """The choke point's escapes are JSON's own: JSON written through it decodes to the data."""
    from gpudesk.cli.output import ScrubbingStream

    raw = io.StringIO()
    ScrubbingStream(raw).write(json.dumps(data, indent=2, ensure_ascii=False))
    assert not UNSAFE.search(raw.getvalue())
    assert json.loads(raw.getvalue()) == data


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.text(min_size=1, max_size=40).filter(lambda text: text.strip() != ""))
def test_any_catalog_name_reaches_the_terminal_without_controls(
    capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    directory = tmp_path_factory.mktemp("names")
    _write_named(directory, "fuzz-gpu", name)
    for argv in (["list"], ["show", "fuzz-gpu"]):
        _, out, err = run_cli(capsys, "--catalog", str(directory), *argv)
        assert not UNSAFE.search(out + err), (argv, name)


def _subcommands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    """Every runnable command path of ``parser`` (``("fleet", "show")``, ``("list",)``...)."""
    found: list[tuple[str, ...]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_subcommands(sub, (*prefix, name)) or [(*prefix, name)])
    return found


def test_every_subcommand_prints_through_the_scrubbed_streams(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Present and future: whatever handler a command has, what it prints is scrubbed."""
    import gpudesk.cli as cli

    real_build = cli.build_parser
    seen: list[str] = []

    def probe(args: argparse.Namespace) -> int:
        print(EVIL)
        print(EVIL, file=sys.stderr)
        seen.append(args.command)
        return 0

    def build_with_probes() -> argparse.ArgumentParser:
        parser = real_build()
        stack = [parser]
        while stack:
            for action in stack.pop()._actions:
                if isinstance(action, argparse._SubParsersAction):
                    for sub in action.choices.values():
                        sub.set_defaults(handler=probe)
                        stack.append(sub)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_with_probes)
    commands = _subcommands(real_build())
    assert len(commands) > 15
    for command in commands:
        capsys.readouterr()
        positional = {"show": ["x"], "compare": ["a", "b"]}.get(command[-1], [])
        try:
            code = main([*command, *positional])
        except SystemExit as exc:  # a command that insists on more arguments
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        assert not UNSAFE.search(out + err), command
        if code == 0:
            assert "Evil\\u001b]0;pwned" in out, command
    assert len(seen) > 10
