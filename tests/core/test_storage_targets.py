"""Issue 20 items 1 and 11: what the safe write does with targets that are not plain files."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from gpudesk.storage import (
    STALE_TEMP_AGE_S,
    UnsafeTargetError,
    atomic_write_bytes,
    atomic_write_text,
    remove_stale_temporaries,
    temporary_name,
)


def _char_device(tmp_path: Path) -> Path:
    """A character device to write to: a private null device as root, else /dev/null."""
    if os.geteuid() == 0:
        node = tmp_path / "null"
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return node
    return Path("/dev/null")


def test_a_symlink_is_written_through_to_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real" / "table.csv"
    real.parent.mkdir()
    real.write_text("old", "utf-8")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    atomic_write_text(link, "new")
    assert link.is_symlink()
    assert real.read_text("utf-8") == "new"
    assert sorted(p.name for p in real.parent.iterdir()) == ["table.csv"]


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "later.csv")
    atomic_write_text(link, "x")
    assert link.is_symlink()
    assert (tmp_path / "later.csv").read_text("utf-8") == "x"


def test_a_character_device_is_written_to_and_stays_a_device(tmp_path: Path) -> None:
    device = _char_device(tmp_path)
    atomic_write_bytes(device, b"discarded")
    assert stat.S_ISCHR(device.stat().st_mode)
    if device.parent == tmp_path:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_dev_full_reports_a_full_disk() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with pytest.raises(OSError, match="No space left"):
        atomic_write_bytes(Path("/dev/full"), b"x")
    assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)


def test_a_fifo_without_a_reader_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(UnsafeTargetError, match="FIFO with no reader"):
        atomic_write_text(fifo, "x")
    assert time.monotonic() - started < 5
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_fifo_with_a_reader_gets_the_data(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:  # like `cat pipe.csv`: waits in open() for a writer
        fd = os.open(fifo, os.O_RDONLY)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        os.close(fd)
        received.append(b"".join(chunks))

    reader = threading.Thread(target=read)
    reader.start()
    payload = b"a,b\n" * 50_000  # more than a pipe buffer
    for _ in range(100):  # until the reader thread has reached its open()
        try:
            atomic_write_bytes(fifo, payload)
            break
        except UnsafeTargetError:
            time.sleep(0.05)
    reader.join(10)
    assert received == [payload]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "out.csv"
    folder.mkdir()
    (folder / "keep").write_text("kept", "utf-8")
    with pytest.raises(UnsafeTargetError, match="directory"):
        atomic_write_text(folder, "x")
    assert (folder / "keep").read_text("utf-8") == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_socket_is_refused_and_left_alone(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s.csv"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(UnsafeTargetError, match="not a regular file"):
            atomic_write_text(path, "x")
        assert stat.S_ISSOCK(path.lstat().st_mode)
    finally:
        server.close()


def test_dev_stdout_redirected_to_a_file_writes_into_that_file(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with open(out, "wb") as handle:
        atomic_write_text(Path(f"/proc/self/fd/{handle.fileno()}"), "hello")
        inode = os.fstat(handle.fileno()).st_ino
    assert out.read_text("utf-8") == "hello"
    assert out.stat().st_ino == inode  # the shell's file, not a replacement


def test_a_name_of_250_bytes_can_be_written(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 246 + ".csv")
    atomic_write_text(target, "x")
    assert target.read_text("utf-8") == "x"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_name_over_255_bytes_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="too long"):
        atomic_write_text(tmp_path / ("n" * 300), "x")


def test_stale_temporaries_of_ours_are_removed_on_the_next_write(tmp_path: Path) -> None:
    stale = tmp_path / temporary_name("report.pdf")
    fresh = tmp_path / temporary_name("report.pdf")
    foreign = tmp_path / ".other.tmp"
    for path in (stale, fresh, foreign):
        path.write_text("partial", "utf-8")
    old = time.time() - STALE_TEMP_AGE_S - 5
    os.utime(stale, (old, old))
    os.utime(foreign, (old, old))
    atomic_write_text(tmp_path / "table.csv", "x")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([".other.tmp", fresh.name, "table.csv"])


def test_stale_cleanup_leaves_directories_and_links_alone(tmp_path: Path) -> None:
    (tmp_path / temporary_name("a.csv")).mkdir()
    (tmp_path / temporary_name("b.csv")).symlink_to(tmp_path / "elsewhere")
    assert remove_stale_temporaries(tmp_path, now=time.time() + 3600) == []
