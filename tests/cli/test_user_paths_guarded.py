"""Issue 39 item 2: every command that reads a path the user names refuses a FIFO, a
directory, ``/dev/zero`` and a symlink loop at once, before reading a byte: exit 2
within 2 seconds, one line on stderr naming the path and what it is, no traceback.

Each entry point is run as the user runs it (``python -m gpudesk ...`` in a
subprocess), so a reader that blocks on a FIFO or reads ``/dev/zero`` forever is
killed at :data:`HANG_S` and fails the test instead of hanging the suite. The
table lists every option that names a file, and every file read from a folder
the user names (``prices update --from``, ``--safetensors``, ``--config DIR``).
The catalog folders (``--catalog DIR``, ``validate DIR``) load what they can and
name the rest: their own test is at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from model_file_factory import write_safetensors_folder

#: What each entry point is given, in words the refusal may use to say what it is.
KINDS = {
    "fifo": ("FIFO",),
    "directory": ("directory", "folder"),
    "dev-zero": ("character device",),
    "symlink-loop": ("symlink loop", "symbolic links"),
}
#: The refusal's budget once Python and GPUDesk have started (the issue's "2 seconds").
LIMIT_S = 2.0
#: A reader that blocks is killed here; the test then fails on the hang.
HANG_S = 15.0
SAMPLE = Path(__file__).parents[1] / "planning/measurement_files/llama-bench-cann-ascend.csv"


def make_bad(path: Path, kind: str) -> None:
    """Put ``kind`` at ``path``: a FIFO nobody writes, a folder, a link to ``/dev/zero``
    or a link to itself."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(path.name)


@dataclass(frozen=True)
class EntryPoint:
    """One way a user names a file: ``setup(folder, kind)`` makes the bad thing and
    returns the argv and the path the refusal must name."""

    name: str
    setup: Callable[[Path, str], tuple[list[str], Path]]
    #: kinds that are not wrong here (a folder option given a folder)
    not_bad: tuple[str, ...] = ()


def _named_file(*template: str) -> Callable[[Path, str], tuple[list[str], Path]]:
    """The option names the bad thing itself; ``/dev/zero`` is given as it is."""

    def setup(folder: Path, kind: str) -> tuple[list[str], Path]:
        bad = Path("/dev/zero") if kind == "dev-zero" else folder / "input.json"
        if kind != "dev-zero":
            make_bad(bad, kind)
        return [part.format(bad=bad, sample=SAMPLE) for part in template], bad

    return setup


def _inside(
    relative: str, prepare: Callable[[Path], None], *template: str
) -> Callable[[Path, str], tuple[list[str], Path]]:
    """The option names a folder; the bad thing is the file ``relative`` read from it."""

    def setup(folder: Path, kind: str) -> tuple[list[str], Path]:
        root = folder / "given"
        root.mkdir()
        prepare(root)
        bad = root / relative
        bad.parent.mkdir(parents=True, exist_ok=True)
        if bad.exists() or bad.is_symlink():
            bad.unlink()
        make_bad(bad, kind)
        return [part.format(dir=root) for part in template], bad

    return setup


def _nothing(root: Path) -> None:
    pass


def _safetensors(root: Path) -> None:
    write_safetensors_folder(root)


FOLDER_KINDS = ("directory",)
ENTRY_POINTS = [
    EntryPoint("measurements import FILE", _named_file("measurements", "import", "{bad}")),
    EntryPoint(
        "measurements import --gguf",
        _named_file("measurements", "import", "{sample}", "--gguf", "{bad}"),
    ),
    EntryPoint(
        "measurements import --config",
        _named_file("measurements", "import", "{sample}", "--config", "{bad}"),
        FOLDER_KINDS,
    ),
    EntryPoint("fit --config FILE", _named_file("fit", "--config", "{bad}"), FOLDER_KINDS),
    EntryPoint("fit --gguf", _named_file("fit", "--gguf", "{bad}")),
    EntryPoint(
        "fit --safetensors FILE", _named_file("fit", "--safetensors", "{bad}"), FOLDER_KINDS
    ),
    EntryPoint(
        "speed --config",
        _named_file("speed", "--config", "{bad}", "--mode", "decode"),
        FOLDER_KINDS,
    ),
    EntryPoint(
        "speed --gguf",
        _named_file("speed", "--gguf", "{bad}", "--mode", "decode"),
    ),
    EntryPoint("fleet show", _named_file("fleet", "show", "{bad}")),
    EntryPoint(
        "prices update --from (the folder)",
        _named_file("prices", "update", "--from", "{bad}"),
        FOLDER_KINDS,
    ),
    EntryPoint(
        "prices update --from: <cloud>/vms.csv",
        _inside("lambda/vms.csv", _nothing, "prices", "update", "--from", "{dir}"),
    ),
    EntryPoint(
        "prices update --from: a dated folder's SNAPSHOT.toml",
        _inside("2024-05-01/SNAPSHOT.toml", _nothing, "prices", "update", "--from", "{dir}"),
    ),
    EntryPoint(
        "fit --config DIR: config.json",
        _inside("config.json", _nothing, "fit", "--config", "{dir}"),
    ),
    EntryPoint(
        "fit --safetensors DIR: a shard",
        _inside("model-00001-of-00002.safetensors", _safetensors, "fit", "--safetensors", "{dir}"),
    ),
    EntryPoint(
        "fit --safetensors DIR: config.json",
        _inside("config.json", _safetensors, "fit", "--safetensors", "{dir}"),
    ),
]
#: "not a folder" says what is wrong with a folder option given a file of any kind.
FOLDER_OPTIONS = {"fit --safetensors FILE", "prices update --from (the folder)"}


def _run(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gpudesk", *argv],
            capture_output=True,
            text=True,
            timeout=HANG_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"gpudesk {' '.join(argv)} hung (killed after {HANG_S:.0f} s)")
    return done, time.monotonic() - started


@cache
def startup_s() -> float:
    """How long ``gpudesk --version`` takes here: the start-up every run pays first
    (about 0.7 s; more on a loaded machine), before the 2 seconds of the refusal."""
    return min(_run(["--version"])[1] for _ in range(2))


CASES = [
    pytest.param(entry, kind, id=f"{entry.name}-{kind}")
    for entry in ENTRY_POINTS
    for kind in KINDS
    if kind not in entry.not_bad
]


@pytest.mark.parametrize(("entry", "kind"), CASES)
def test_each_entry_point_refuses_what_is_not_a_regular_file(
    tmp_path: Path, entry: EntryPoint, kind: str
) -> None:
    argv, named = entry.setup(tmp_path, kind)
    done, elapsed = _run(argv)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    assert elapsed < startup_s() + LIMIT_S, f"{elapsed:.2f} s (start-up {startup_s():.2f} s)"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("gpudesk: ")
    words = KINDS[kind] + (("not a folder",) if entry.name in FOLDER_OPTIONS else ())
    assert str(named) in lines[0]
    assert any(word in lines[0] for word in words), lines[0]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "symlink-loop"])
@pytest.mark.parametrize(
    ("argv", "code", "stream"),
    [(["--catalog", "{dir}", "list"], 0, "stderr"), (["validate", "{dir}"], 1, "stdout")],
    ids=["--catalog DIR list", "validate DIR"],
)
def test_a_catalog_folder_names_the_file_it_skips(
    tmp_path: Path, kind: str, argv: list[str], code: int, stream: str
) -> None:
    """A catalog folder loads what it can (a bad file never stops the rest): the file
    that is not a regular file is skipped at once and named, with what it is. A
    directory there is a subfolder, read like the rest, so it is not among the kinds."""
    bad = tmp_path / "x.toml"
    make_bad(bad, kind)
    done, elapsed = _run([part.format(dir=tmp_path) for part in argv])
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, done.stderr
    assert elapsed < startup_s() + LIMIT_S, f"{elapsed:.2f} s (start-up {startup_s():.2f} s)"
    named = [line for line in getattr(done, stream).splitlines() if str(bad) in line]
    assert len(named) == 1, getattr(done, stream)
    assert "not a regular file" in named[0]
    assert any(word in named[0] for word in KINDS[kind]), named[0]
