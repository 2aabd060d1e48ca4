"""The settings file is opened the guarded way (storage.open_regular_file, issue 39 item
2): whatever stands in its place, the app starts at once on defaults, says what it
found there, and leaves it alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpudesk.ui.settings import load_settings, settings_path


def _put(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(path.name)


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("fifo", "is a FIFO, not a regular file"),
        ("folder", "is a folder, not a regular file"),
        ("dev-zero", "is a character device, not a regular file"),
        ("symlink-loop", "is a symlink loop, not a regular file"),
    ],
)
def test_what_stands_in_for_the_settings_file_is_named_and_left(kind: str, said: str) -> None:
    path = settings_path()
    _put(path, kind)
    loaded = load_settings()
    assert not loaded.saveable
    assert len(loaded.problems) == 1
    assert f"The settings file {path} {said}" in loaded.problems[0]
    assert os.path.lexists(path)  # nothing renamed or removed
    loaded.settings.setValue("x", 1)
    loaded.settings.sync()
    assert os.path.lexists(path) and not path.is_file()
