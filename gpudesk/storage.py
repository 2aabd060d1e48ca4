"""Atomic file writes: a crash mid-write never loses what was there."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def _process_umask() -> int:
    """The umask, read without changing it (Linux /proc); 022 elsewhere."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _target_mode(path: Path) -> int:
    """The replaced file's permissions, or what a plain open() would give a new file."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_process_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder.

    The temporary file is fsynced and renamed over ``path``, so readers see
    either the old content or the new, never a truncated file. The result has
    the replaced file's permissions, or the usual ones for a new file (mkstemp
    alone would leave it private, 0600).

    Raises:
        OSError: the folder is missing or unwritable, or the disk is full;
            the original file (if any) is untouched.
    """
    path = Path(path)
    mode = _target_mode(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as tmp:
            os.fchmod(tmp.fileno(), mode)
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
