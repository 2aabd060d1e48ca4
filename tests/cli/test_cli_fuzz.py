"""Property test over every CLI subcommand's arguments (issue 20).

The arguments are generated from the parser itself, so a flag added later is
fuzzed too: numbers (NaN, infinities, huge, negative, text), paths (a FIFO, a
folder, a symlink, a dangling or looping link, a name over 255 bytes, a
missing folder, a device, the empty string), names (formulas, markup, long
and odd Unicode) and choices. For every argv:

- ``main`` returns or exits with a documented code (0, 1, 2, 3), never an
  unhandled exception and never a hang (an alarm fails the example);
- JSON on stdout parses with no NaN or Infinity;
- nothing in the sandbox changes except the output paths named in argv
  (and our own stale temporaries), and nothing changes type: a FIFO stays a
  FIFO, a folder a folder, a symlink a symlink.

The number of examples tried is printed with ``--hypothesis-show-statistics``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import entry_data, to_toml, write_entry
from hypothesis import HealthCheck, given, settings, strategies as st

import gpudesk.bench.runner as bench_runner
from gpudesk.bench.result_file import parse_result
from gpudesk.cli import build_parser, main
from gpudesk.paths import bundled_catalog_dir
from gpudesk.storage import is_our_temporary, temporary_name

DOCUMENTED_EXIT_CODES = {0, 1, 2, 3}
#: Subcommands that open a window or start a cluster: not fuzzed here.
# exporter and monitor run until stopped (a valid argv never returns): their flags have
# their own property tests in tests/telemetry/test_telemetry_cli_flags.py and _listen.py.
SKIPPED = {"gui", "survey", "install-desktop", "exporter", "monitor"}
HANG_SECONDS = 30

NAMES = [
    "rtx-4090",
    "a100-80gb-pcie",
    "h100-sxm",
    "4090",
    "a100",
    "nvidia",
    "",
    " ",
    "=1+1",
    "<img src=x>",
    "x" * 300,
    "\ud7ff\u202e",
    "--json",
]
NUMBERS = ["nan", "NaN", "inf", "-inf", "Infinity", "1e309", "-0", "0", "1e-9", "1e308"]
NUMBERS += ["-1", "abc", "", "0x10", "1_000", "3.5", "7B", "2**31", str(2**63), str(-(2**63))]


class Hang(Exception):
    """The command did not finish within HANG_SECONDS."""


def _raise_hang(_signum: int, _frame: object) -> None:
    raise Hang(f"no answer within {HANG_SECONDS} s")


@contextlib.contextmanager
def _alarm(seconds: int) -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _raise_hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _build_sandbox(root: Path) -> dict[str, Path]:
    files = root / "files"
    files.mkdir(parents=True)
    (files / "existing.csv").write_text("keep me", "utf-8")
    (files / "target.txt").write_text("old", "utf-8")
    (files / "folder.csv").mkdir()
    (files / "folder.csv" / "inside").write_text("kept", "utf-8")
    os.mkfifo(files / "fifo.csv")
    (files / "link.csv").symlink_to(files / "target.txt")
    (files / "dangling.csv").symlink_to(files / "nowhere.csv")
    (files / "loop.csv").symlink_to(files / "loop.csv")
    (files / "deep.json").write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    (files / "nan.json").write_text('{"backend": NaN}', "utf-8")
    (files / "bom.json").write_bytes(b"\xef\xbb\xbf{}")
    stale = files / temporary_name("old.csv")
    stale.write_text("partial", "utf-8")
    os.utime(stale, (1, 1))
    evil = root / "catalogs" / "evil"
    write_entry(evil, "formula", name='=HYPERLINK("x")')
    write_entry(evil, "markup", name="<img src='/tmp/x.png'>Markup")
    os.mkfifo(evil / "fifo.toml")
    (evil / "deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000, "utf-8")
    (evil / "bom.toml").write_bytes(b"\xef\xbb\xbf" + to_toml(entry_data("bom")).encode())
    (evil / "zero.toml").symlink_to("/dev/zero")
    with open(evil / "huge.toml", "wb") as handle:
        handle.truncate(3 * 2**20)
    (root / "catalogs" / "empty").mkdir()
    cwd = root / "cwd"
    cwd.mkdir()
    return {"root": root, "files": files, "cwd": cwd, "catalogs": root / "catalogs"}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _build_sandbox(tmp_path_factory.mktemp("fuzz"))


def _paths(box: dict[str, Path]) -> list[str]:
    files = box["files"]
    names = [
        "existing.csv",
        "folder.csv",
        "fifo.csv",
        "link.csv",
        "dangling.csv",
        "loop.csv",
        "deep.json",
        "nan.json",
        "bom.json",
        "new.csv",
        "new.pdf",
        "new.png",
        "new.json",
        "missing/x.csv",
        "existing.csv/x.csv",
        "n" * 300,
        "n" * 300 + "/x.csv",
    ]
    return [
        *(str(files / name) for name in names),
        str(box["catalogs"] / "evil"),
        str(box["catalogs"] / "empty"),
        "/dev/null",
        "/dev/full",
        "",
        " ",
        "relative.csv",
        ".",
    ]


def _is_path_type(action: argparse.Action) -> bool:
    kind = action.type
    name = getattr(kind, "__name__", "")
    return kind is Path or "path" in name.lower() or action.dest in ("file", "dirs")


GOOD_NAMES = ["rtx-4090", "a100-80gb-pcie", "h100-sxm", "l40s", "rtx-3090", "llama-3-8b"]
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=20)


def _value(action: argparse.Action, box: dict[str, Path]) -> st.SearchStrategy[str]:
    """Mostly values a user would type, often hostile ones (so that both paths run)."""
    if action.choices is not None:
        valid = st.sampled_from([str(choice) for choice in action.choices])
        return st.one_of(valid, valid, valid, st.sampled_from(["", "nope", "NUMPY"]))
    if _is_path_type(action):
        return st.sampled_from(_paths(box))
    if action.type is float:
        plain = st.floats(min_value=0.01, max_value=1e4).map(lambda x: f"{x:.3g}")
        return st.one_of(
            plain,
            plain,
            st.sampled_from(NUMBERS),
            st.floats(allow_nan=True, allow_infinity=True).map(repr),
        )
    if action.type is int:
        plain = st.integers(min_value=0, max_value=4096).map(str)
        return st.one_of(
            plain,
            plain,
            st.sampled_from(NUMBERS),
            st.integers(min_value=-(2**70), max_value=2**70).map(str),
        )
    if action.dest == "params":
        return st.one_of(
            st.sampled_from(["7B", "70B", "350M", "1.5T", "7e9", "0", "-7B", "nanB", "1e400"]),
            _TEXT,
        )
    if action.dest in ("tests", "dtypes"):
        return st.sampled_from(["gemm", "copy", "fp32", "gemm,copy", "", ",", "fp64,fp16", "x"])
    good = st.sampled_from(GOOD_NAMES)
    return st.one_of(good, good, st.sampled_from(NAMES + NUMBERS), _TEXT)


def _argv_for(
    command: str, parser: argparse.ArgumentParser, box: dict[str, Path]
) -> st.SearchStrategy[list[str]]:
    parts: list[st.SearchStrategy[list[str]]] = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.option_strings:  # positional
            value = _value(action, box)
            if action.nargs in ("+", "*"):
                low = 1 if action.nargs == "+" else 0
                good = st.lists(
                    st.sampled_from(GOOD_NAMES[:5]), min_size=2, max_size=5, unique=True
                )
                many = st.lists(value, min_size=low, max_size=7)
                parts.append(many if _is_path_type(action) else st.one_of(good, good, many))
            else:
                parts.append(value.map(lambda text: [text]))
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:
            parts.append(st.sampled_from([[], [flag]]))
            continue
        # "--flag=value" so that values like "-inf" are values, not options.
        option = _value(action, box).map(lambda text, flag=flag: [f"{flag}={text}"])
        parts.append(st.one_of(st.just([]), st.just([]), option, option, option, st.just([flag])))
    global_catalog = st.sampled_from(
        [
            [],
            [],
            [f"--catalog={box['catalogs'] / 'evil'}"],
            ["--catalog="],
            [f"--catalog={box['files'] / ('n' * 300)}"],
            [f"--catalog={box['files'] / 'fifo.csv'}"],
        ]
    )

    @st.composite
    def build(draw: st.DrawFn) -> list[str]:
        argv = [*draw(global_catalog), *command.split()]
        chosen = [draw(part) for part in parts]
        order = draw(st.permutations(list(range(len(chosen)))))
        for index in order:
            argv.extend(chosen[index])
        return argv

    return build()


def _commands() -> list[tuple[str, argparse.ArgumentParser]]:
    found: list[tuple[str, argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found.append((prefix.strip(), parser))
            return
        for name, sub in subs[0].choices.items():
            if name not in SKIPPED:
                walk(sub, f"{prefix} {name}")

    walk(build_parser(), "")
    return found


COMMANDS = _commands()


def _snapshot(*folders: Path) -> dict[str, tuple[Any, ...]]:
    state: dict[str, tuple[Any, ...]] = {}
    for folder in folders:
        for current, dirs, names in os.walk(folder):
            for name in [*dirs, *names]:
                path = Path(current) / name
                info = path.lstat()
                kind = stat.S_IFMT(info.st_mode)
                detail: Any = None
                if stat.S_ISLNK(info.st_mode):
                    detail = os.readlink(path)
                elif stat.S_ISREG(info.st_mode) and info.st_size < 2**20:
                    detail = hashlib.sha1(path.read_bytes()).hexdigest()
                elif stat.S_ISREG(info.st_mode):
                    detail = (info.st_size, info.st_mtime_ns)
                state[str(path)] = (kind, detail)
    return state


def _allowed_targets(argv: list[str], cwd: Path) -> set[str]:
    allowed: set[str] = set()
    for token in argv:
        value = token.split("=", 1)[1] if token.startswith("--") and "=" in token else token
        if not value.strip():
            continue
        path = Path(value) if Path(value).is_absolute() else cwd / value
        allowed.add(str(path))
        with contextlib.suppress(OSError, ValueError):
            allowed.add(os.path.realpath(path))
    return allowed


def _check_json(out: str) -> None:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    text = out.strip()
    if text.startswith(("{", "[")):
        json.loads(text, parse_constant=refuse)


@pytest.fixture
def fake_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    """Benchmarks answer at once with a fixed run: the arguments are what is fuzzed."""
    canned = parse_result(
        json.dumps(
            {
                "backend": "numpy",
                "device": {"kind": "cpu", "name": "Fuzz CPU"},
                "results": [
                    {"test": "copy", "dtype": "bytes", "size": 1, "value": 1.0, "unit": "GB/s"}
                ],
                "started_at": "2026-05-01T00:00:00+00:00",
            }
        ),
        "canned",
    )
    monkeypatch.setattr(bench_runner, "run_benchmark", lambda *args, **kwargs: canned)


#: command -> exit code -> how many generated argvs ended so (for the issue's note).
EXITS: dict[str, dict[int, int]] = {}


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> Iterator[None]:
    """Write the tally to $GPUDESK_FUZZ_REPORT (JSON) when set; nothing otherwise."""
    yield
    target = os.environ.get("GPUDESK_FUZZ_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"cli": EXITS}) + "\n")


@pytest.mark.timeout(900)  # many examples; a slow shared machine
@pytest.mark.parametrize(("command", "parser"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_any_arguments_give_a_documented_exit_and_touch_only_the_target(
    command: str,
    parser: argparse.ArgumentParser,
    sandbox: dict[str, Path],
    fake_bench: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(sandbox["cwd"])
    watched = (sandbox["root"], bundled_catalog_dir())

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(_argv_for(command, parser, sandbox))
    def check(argv: list[str]) -> None:
        before = _snapshot(*watched)
        out, err = io.StringIO(), io.StringIO()
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            _alarm(HANG_SECONDS),
        ):
            try:
                code: object = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
        trace = os.environ.get("GPUDESK_FUZZ_TRACE")  # a file to append every case to
        if trace:
            with open(trace, "a", encoding="utf-8") as handle:
                handle.write(json.dumps([command, code, argv, err.getvalue()[-300:]]) + "\n")
        assert code in DOCUMENTED_EXIT_CODES, (argv, code, err.getvalue())
        assert isinstance(code, int)
        tally = EXITS.setdefault(command, {})
        tally[code] = tally.get(code, 0) + 1
        assert "Traceback" not in err.getvalue(), argv
        if code == 0:
            _check_json(out.getvalue())
        after = _snapshot(*watched)
        allowed = _allowed_targets(argv, sandbox["cwd"])
        for path, (kind, detail) in before.items():
            now = after.get(path)
            if now is None:
                assert is_our_temporary(Path(path).name), f"{argv} removed {path}"
                continue
            assert now[0] == kind, f"{argv} changed the type of {path}"
            if now != (kind, detail):
                assert path in allowed, f"{argv} changed {path}"
        for path in after.keys() - before.keys():
            assert path in allowed or (Path(path).parent == sandbox["cwd"] and path in allowed), (
                f"{argv} created {path}"
            )
            # restore: the next example starts from the same sandbox
        for path in after.keys() - before.keys():
            target = Path(path)
            if target.is_file() and not target.is_symlink():
                target.unlink()
        (sandbox["files"] / "target.txt").write_text("old", "utf-8")
        (sandbox["files"] / "existing.csv").write_text("keep me", "utf-8")

    check()
