"""Issue 39 item 6: a write never replaces a file the user could not have written.

The tests run as root here, and root may write any file (as ``cp`` does), so the
unprivileged cases run in a forked child that has become ``nobody``; where the
tests run unprivileged already, they run in-process.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import shutil
import stat
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gpudesk.storage import NotWritableError, atomic_write_bytes, check_writable

#: The unprivileged user the child becomes (``nobody`` on Debian and Red Hat).
NOBODY = 65534


def _unprivileged(function: Callable[[], Any]) -> Any:
    """``function()`` run as an unprivileged user: its result, or the exception it raised."""
    if os.geteuid() != 0:
        try:
            return function()
        except Exception as exc:  # returned, as from the child
            return exc
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns that fork() in a threaded process may deadlock; the
        # child only calls setuid, the function and os._exit.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 0
        try:
            os.close(read_end)
            try:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            except OSError as exc:
                outcome: Any = ("skip", f"cannot become uid {NOBODY}: {exc}")
            else:
                try:
                    outcome = ("done", function())
                except Exception as exc:
                    outcome = ("done", exc)
            with os.fdopen(write_end, "wb") as pipe:
                pickle.dump(outcome, pipe)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and data, "the unprivileged child failed"
    kind, value = pickle.loads(data)
    if kind == "skip":
        pytest.skip(value)
    return value


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder the unprivileged user owns and writes (pytest's tmp_path is root's, 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="gpudesk-perm-"))
    try:
        folder.chmod(0o755)
        if os.geteuid() == 0:
            os.chown(folder, NOBODY, NOBODY)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _file(folder: Path, name: str, mode: int, owner: tuple[int, int] | None) -> Path:
    path = folder / name
    path.write_bytes(b"old")
    if owner is not None and os.geteuid() == 0:
        os.chown(path, *owner)
    path.chmod(mode)
    return path


def _write(path: Path) -> Callable[[], str]:
    def write() -> str:
        atomic_write_bytes(path, b"new")
        return "written"

    return write


def _check(path: Path) -> Callable[[], str]:
    def check() -> str:
        check_writable(path)
        return "passed"

    return check


def test_a_read_only_file_in_a_writable_folder_is_refused(shared_folder: Path) -> None:
    target = _file(shared_folder, "table.csv", 0o444, (NOBODY, NOBODY))
    for attempt in (_check(target), _write(target)):
        outcome = _unprivileged(attempt)
        assert isinstance(outcome, NotWritableError), outcome
        assert outcome.filename == str(target)
    assert target.read_bytes() == b"old"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert sorted(p.name for p in shared_folder.iterdir()) == ["table.csv"]


def test_another_users_file_in_a_writable_folder_is_refused(shared_folder: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to make a file of another user's")
    target = _file(shared_folder, "table.csv", 0o644, (0, 0))
    for attempt in (_check(target), _write(target)):
        assert isinstance(_unprivileged(attempt), NotWritableError)
    assert target.read_bytes() == b"old"
    assert (target.stat().st_uid, target.stat().st_gid) == (0, 0)


def test_a_read_only_file_reached_through_a_symlink_is_refused(shared_folder: Path) -> None:
    target = _file(shared_folder, "real.csv", 0o444, (NOBODY, NOBODY))
    link = shared_folder / "link.csv"
    link.symlink_to(target)
    if os.geteuid() == 0:
        os.chown(link, NOBODY, NOBODY, follow_symlinks=False)
    assert isinstance(_unprivileged(_write(link)), NotWritableError)
    assert target.read_bytes() == b"old" and link.is_symlink()


def test_a_group_writable_file_of_another_user_keeps_owner_and_mode(shared_folder: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to make a file of another user's")
    # root's file, group nobody's, 0664: nobody may write it but cannot give a new file to root
    target = _file(shared_folder, "table.csv", 0o664, (0, NOBODY))
    assert _unprivileged(_write(target)) == "written"
    info = target.stat()
    assert target.read_bytes() == b"new"
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, NOBODY, 0o664)
    assert sorted(p.name for p in shared_folder.iterdir()) == ["table.csv"]


def test_root_replacing_another_users_file_keeps_its_owner_and_mode(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root may replace a file it does not own with one it gives away")
    target = _file(tmp_path, "table.csv", 0o640, (12345, 23456))
    before = target.stat().st_ino
    atomic_write_bytes(target, b"new")
    info = target.stat()
    assert target.read_bytes() == b"new"
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (12345, 23456, 0o640)
    assert info.st_ino != before  # replaced atomically, not rewritten in place


def test_root_may_write_a_read_only_file_as_cp_does(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("root only")
    target = _file(tmp_path, "table.csv", 0o444, None)
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


def test_a_users_own_writable_file_is_still_replaced(shared_folder: Path) -> None:
    target = _file(shared_folder, "table.csv", 0o600, (NOBODY, NOBODY))
    assert _unprivileged(_write(target)) == "written"
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def _cli(argv: list[str], home: Path) -> Callable[[], tuple[int, str]]:
    def run() -> tuple[int, str]:
        from gpudesk.cli import main

        for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[name] = str(home / name.lower())
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
        return code, err.getvalue()

    return run


@pytest.mark.parametrize("owner", [(NOBODY, NOBODY), (0, 0)])
def test_compare_csv_onto_a_file_the_user_may_not_write_is_exit_2_naming_it(
    shared_folder: Path, tmp_path: Path, owner: tuple[int, int]
) -> None:
    if owner == (0, 0) and os.geteuid() != 0:
        pytest.skip("needs root to make a file of another user's")
    mode = 0o444 if owner == (NOBODY, NOBODY) else 0o644
    target = _file(shared_folder, "table.csv", mode, owner)
    argv = ["compare", "rtx-4090", "a100-80gb-pcie", "--csv"]
    # The same export by this process first: it imports what the command needs,
    # which the child could not read from an interpreter under /root.
    assert _cli([*argv, str(tmp_path / "mine.csv")], tmp_path)()[0] == 0
    outcome = _unprivileged(_cli([*argv, str(target)], shared_folder))
    assert not isinstance(outcome, BaseException), outcome
    code, err = outcome
    assert code == 2
    assert err.strip().splitlines() == [
        f"gpudesk: cannot write {target}: permission denied: you may not write this file"
    ]
    assert target.read_bytes() == b"old"
