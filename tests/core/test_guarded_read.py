"""The guarded read of a user-named path (issue 39 item 2): ``storage.read_regular_file``
and ``open_regular_file`` return a regular file's bytes within the limit and refuse
everything else before reading a byte; the core readers behind every import button
(measurements, bench results, fleet surveys, prices, catalog files, a captured
``system_profiler`` output, sysfs attributes) go through it.

The command-line entry points are tested end to end in
tests/cli/test_user_paths_guarded.py; these are the same readers as the desktop
app calls them. Each test has a timeout: a reader that blocks on a FIFO fails it.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import re
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from gpudesk import storage
from gpudesk.storage import (
    FileTooLargeError,
    NotRegularFileError,
    open_regular_file,
    read_refusal,
    read_regular_file,
)

#: What each kind is called in a refusal.
KIND_WORDS = {
    "fifo": "a FIFO",
    "directory": "a directory",
    "dev-zero": "a character device",
    "dev-null": "a character device",
    "socket": "a socket",
    "symlink-loop": "a symlink loop",
}
FILE_KINDS = ("regular", "link-to-regular", "dangling-link", *KIND_WORDS)


@contextmanager
def _made(kind: str, size: int) -> Iterator[tuple[Path, bytes]]:
    """A fresh ``kind`` (and, for a regular file, ``size`` bytes of content)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f"
        content = bytes(i % 251 for i in range(size))
        holder: socket.socket | None = None
        if kind == "regular":
            path.write_bytes(content)
        elif kind == "link-to-regular":
            (Path(folder) / "target").write_bytes(content)
            path.symlink_to("target")
        elif kind == "dangling-link":
            path.symlink_to("missing")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "directory":
            path.mkdir()
        elif kind in ("dev-zero", "dev-null"):
            path.symlink_to("/dev/" + kind[4:])
        elif kind == "socket":
            holder = socket.socket(socket.AF_UNIX)
            holder.bind(str(path))
        else:
            path.symlink_to(path.name)
        try:
            yield path, content
        finally:
            if holder is not None:
                holder.close()


@pytest.mark.timeout(300)
@given(
    kind=st.sampled_from(FILE_KINDS),
    size=st.integers(0, 3000),
    limit=st.integers(0, 2000),
    streamed=st.booleans(),
)
def test_the_guarded_read_returns_a_regular_file_or_refuses(
    kind: str, size: int, limit: int, streamed: bool
) -> None:
    def read(path: Path) -> bytes:
        if not streamed:
            return read_regular_file(path, limit)
        with open_regular_file(path, limit) as handle:
            return handle.read()

    with _made(kind, size) as (path, content):
        if kind in ("regular", "link-to-regular") and size <= limit:
            assert read(path) == content
        elif kind in ("regular", "link-to-regular"):
            with pytest.raises(FileTooLargeError) as too_large:
                read(path)
            assert read_refusal(too_large.value).startswith("is larger than the ")
        elif kind == "dangling-link":
            with pytest.raises(FileNotFoundError) as missing:
                read(path)
            assert read_refusal(missing.value) == "cannot be read (No such file or directory)"
        else:
            with pytest.raises(NotRegularFileError) as refused:
                read(path)
            assert refused.value.kind == KIND_WORDS[kind]
            assert refused.value.filename == str(path)
            assert read_refusal(refused.value) == f"is {KIND_WORDS[kind]}, not a regular file"


@pytest.mark.timeout(20)
def test_a_fifo_with_data_waiting_is_refused_unread(tmp_path: Path) -> None:
    fifo = tmp_path / "f.csv"
    os.mkfifo(fifo)
    # Read and write ends held here (O_RDWR, Linux): a blocking open would succeed.
    held = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        os.write(held, b"left for its reader")
        with pytest.raises(NotRegularFileError, match="it is a FIFO"):
            read_regular_file(fifo, 1 << 20)
        assert os.read(held, 100) == b"left for its reader"  # not a byte taken
    finally:
        os.close(held)


@pytest.mark.timeout(20)
def test_a_file_swapped_for_a_fifo_after_the_check_is_refused_on_the_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name checked is a regular file; what is opened a moment later is a FIFO."""
    regular = tmp_path / "regular.csv"
    regular.write_text("a,b\n", "utf-8")
    fifo = tmp_path / "f.csv"
    os.mkfifo(fifo)
    checked = os.stat(regular)
    monkeypatch.setattr(os, "stat", lambda path, *args, **kwargs: checked)
    with pytest.raises(NotRegularFileError, match="it is a FIFO"):
        read_regular_file(fifo, 1 << 20)
    monkeypatch.undo()


def test_a_file_that_grows_past_the_limit_while_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "growing.json"
    path.write_bytes(b"x" * 10)
    real_read = os.read

    def read_then_grow(fd: int, count: int) -> bytes:
        with path.open("ab") as handle:
            handle.write(b"y" * 100)
        return real_read(fd, count)

    monkeypatch.setattr(os, "read", read_then_grow)
    with pytest.raises(FileTooLargeError, match="larger than the 50 bytes limit"):
        read_regular_file(path, 50)


def test_what_a_refusal_says() -> None:
    assert read_refusal(FileTooLargeError(errno.EFBIG, "larger than the 16 MiB limit", "x")) == (
        "is larger than the 16 MiB limit"
    )
    assert read_refusal(PermissionError(errno.EACCES, "Permission denied", "x")) == (
        "cannot be read (Permission denied)"
    )


# --- the core readers, as the desktop app's import buttons call them ---------------------


def _bad(tmp_path: Path, kind: str, name: str) -> Path:
    """``kind`` at ``tmp_path / name``; ``/dev/zero`` itself for "dev-zero"."""
    if kind == "dev-zero":
        return Path("/dev/zero")
    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(path.name)
    return path


BAD_KINDS = ("fifo", "directory", "dev-zero", "symlink-loop")


def _says(text: str, path: Path, kind: str) -> None:
    assert str(path) in text
    assert f"{KIND_WORDS[kind]}" in text


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", BAD_KINDS)
def test_measurement_import_refuses(tmp_path: Path, kind: str) -> None:
    from gpudesk.measurements.file_import import ImportFileError, ImportHints, parse_file

    path = _bad(tmp_path, kind, "f.csv")
    with pytest.raises(ImportFileError) as refused:
        parse_file(path, ImportHints())
    _says(str(refused.value), path, kind)
    assert refused.value.reason == f"is {KIND_WORDS[kind]}, not a regular file"


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", BAD_KINDS)
def test_bench_result_import_refuses(tmp_path: Path, kind: str) -> None:
    from gpudesk.bench.history import import_run
    from gpudesk.bench.results import ResultFileError

    path = _bad(tmp_path, kind, "run.json")
    with pytest.raises(ResultFileError) as refused:
        import_run(path, tmp_path / "history")
    _says(str(refused.value), path, kind)
    assert not (tmp_path / "history").exists() or not any((tmp_path / "history").iterdir())


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", BAD_KINDS)
def test_fleet_survey_file_refuses(tmp_path: Path, kind: str) -> None:
    from gpudesk.fleet.document import SurveyFileError, read_survey

    path = _bad(tmp_path, kind, "survey.json")
    with pytest.raises(SurveyFileError) as refused:
        read_survey(path)
    _says(str(refused.value), path, kind)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize("where", ["lambda/vms.csv", "2024-05-01/SNAPSHOT.toml"])
def test_prices_folder_refuses(tmp_path: Path, kind: str, where: str) -> None:
    from gpudesk.catalog.price_snapshots import PriceSourceError, read_folder

    folder = tmp_path / "given"
    (folder / where).parent.mkdir(parents=True)
    path = folder / where
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        _bad(path.parent, kind, path.name)
    with pytest.raises(PriceSourceError) as refused:
        read_folder(folder, today=dt.date(2024, 5, 2))
    _says(str(refused.value), path, kind)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "symlink-loop"])
def test_catalog_entry_file_is_skipped_and_named(tmp_path: Path, kind: str) -> None:
    from gpudesk.catalog.loader import load_directory

    path = tmp_path / "x.toml"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        _bad(tmp_path, kind, "x.toml")
    catalog = load_directory(tmp_path)
    assert [problem.path for problem in catalog.problems] == [path]
    assert KIND_WORDS[kind] in catalog.problems[0].message


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_captured_system_profiler_output_refuses(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpudesk.hardware import apple
    from gpudesk.hardware.detect import default_apple_reading

    path = _bad(tmp_path, kind, "profiler.json")
    monkeypatch.setenv(apple.PROFILER_JSON_ENV, str(path))
    reading = default_apple_reading()
    assert reading is not None and reading.gpu is None
    _says(reading.detail or "", path, kind)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_sysfs_attribute_that_is_not_a_regular_file_is_not_read(
    tmp_path: Path, kind: str
) -> None:
    from gpudesk.hardware.sysfs import read_attribute

    assert read_attribute(_bad(tmp_path, kind, "vendor")) is None
    vendor = tmp_path / "device"
    vendor.write_text("0x10de\n", "ascii")
    assert read_attribute(vendor) == "0x10de"


#: A raw read of a file: builtin open, Path.open with a mode, read_text/read_bytes, os.open.
_RAW_READ = re.compile(
    r"(?<!def )(?<![\w.`])open\(|\.open\(\s*['\"]|\.read_(?:text|bytes)\(|os\.(?:fd)?open\("
)
#: The modules that may read a file some other way, and why: none reads a path the user named.
RAW_READERS = {
    "storage.py": "the guard itself, and /proc/self/status",
    "ui/app.py": "/proc/self/stat and /proc/uptime",
    "hardware/cpu.py": "/proc/cpuinfo and /proc/meminfo",
    "bench/backends/numpy_backend.py": "/proc and /sys/devices/system/cpu",
    "workload/presets.py": "a bundled resource",
    "speed/data.py": "a bundled resource",
    "speed/fitting.py": "a bundled resource",
    "speed/support.py": "a bundled resource (the engine-support table)",
    "speed/serving_validation.py": "a bundled resource (the published serving runs)",
    "speed/physics.py": "a bundled resource (the MoE dispatch costs, moe_dispatch.json)",
    "speed/moe_fit.py": "a bundled resource (moe_dispatch.json's grid, read and rewritten)",
    "bench/reference.py": "a bundled resource",
    "bench/typical.py": "a bundled resource",
    "cli/desktop_cmd.py": "bundled resources",
    "catalog/price_snapshots.py": "the bundled prices (a user's folder: read_regular_file)",
    "cli/__init__.py": "os.devnull",
}


def test_no_other_module_reads_a_file_without_the_guard() -> None:
    """A new reader of a user-named path must use storage.read_regular_file (or
    open_regular_file): a module reading files another way is listed above, with why."""
    root = Path(storage.__file__).parent
    readers = {
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if _RAW_READ.search(path.read_text("utf-8"))
    }
    assert readers - RAW_READERS.keys() == set()
    assert RAW_READERS.keys() - readers == set(), "a listed module no longer reads raw"
