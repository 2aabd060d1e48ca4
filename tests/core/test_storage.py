import os
import stat
from pathlib import Path

import pytest

from gpudesk.storage import atomic_write_bytes, atomic_write_text


def test_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    atomic_write_text(target, "first")
    atomic_write_text(target, "second")
    assert target.read_text("utf-8") == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_new_file_gets_usual_permissions_and_replaced_file_keeps_its_own(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        fresh = tmp_path / "report.pdf"
        atomic_write_bytes(fresh, b"%PDF")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        private = tmp_path / "history.json"
        private.write_text("{}", "utf-8")
        private.chmod(0o600)
        atomic_write_bytes(private, b"{}")
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    finally:
        os.umask(old_umask)


def test_failure_mid_write_keeps_the_old_file_and_leaves_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "history.json"
    target.write_text("precious", "utf-8")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_text(target, "new content")
    assert target.read_text("utf-8") == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["history.json"]


def test_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_write_text(tmp_path / "nope" / "x.txt", "x")
