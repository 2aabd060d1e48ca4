"""Test configuration: Qt offscreen, GUI tests marked, no leaked threads."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator

import pytest

# Before any QApplication exists: tests never need a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_QUICK_BACKEND", "software")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "qtbot" in fixtures or "qapp" in fixtures:
            item.add_marker(pytest.mark.gui)


@pytest.fixture(autouse=True)
def _isolated_user_data(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Each test gets its own user data folder and settings: never the real ones."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    yield


@pytest.fixture(autouse=True)
def _no_host_gpus(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detection reads an empty sysfs tree and no Mac, unless a test builds its own."""
    monkeypatch.setenv("GPUDESK_SYSFS_ROOT", str(tmp_path_factory.mktemp("empty-sysfs")))
    monkeypatch.delenv("GPUDESK_SYSTEM_PROFILER_JSON", raising=False)
    monkeypatch.setattr("gpudesk.hardware.apple.is_macos", lambda: False)


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    """Fail a test that leaves a Python or Qt thread running."""
    before = set(threading.enumerate())
    yield
    leaked = [
        thread
        for thread in threading.enumerate()
        if thread not in before and thread.is_alive() and not thread.daemon
    ]
    assert not leaked, f"test left threads running: {leaked}"
    ui_worker = sys.modules.get("gpudesk.ui.worker")
    if ui_worker is None:  # core tests never load Qt
        return
    running = ui_worker.running_threads()
    assert not running, f"test left QThreads running: {running}"


@pytest.fixture(autouse=True)
def _fresh_gpu_colors() -> Iterator[None]:
    """Each test starts a new session of GPU colors (without importing Qt for core tests)."""
    yield
    colors = sys.modules.get("gpudesk.render.colors")
    if colors is not None:
        colors.SESSION_SLOTS.reset()
