"""Closing the main window stops Plan's work in flight (a Verify run) and waits for it."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytestqt.qtbot import QtBot
from ui_catalog_fixtures import small_catalog

import gpudesk.ui.plan.measured_panel as measured_panel
from gpudesk.progress import Progress
from gpudesk.ui.main_window import MainWindow
from gpudesk.ui.plan.view import PlanView
from gpudesk.ui.settings import open_settings
from gpudesk.ui.state import AppState


def test_closing_the_window_cancels_a_running_verify_and_waits(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = threading.Event()
    stopped = threading.Event()

    def slow_run_job(job: object, progress: Progress, store: object) -> object:
        started.set()
        while not progress.is_cancelled():
            threading.Event().wait(0.01)
        stopped.set()
        progress.check()  # raises Cancelled
        return None

    monkeypatch.setattr(measured_panel, "run_job", slow_run_job)
    window = MainWindow(
        state=AppState(catalog=small_catalog()),
        settings=open_settings(tmp_path / "close.conf"),
    )
    qtbot.addWidget(window)
    plan = window.view("Plan")
    assert isinstance(plan, PlanView)
    panel = plan.speed_page.measured_panel
    panel.run_job(SimpleNamespace(model="tiny.gguf"))  # type: ignore[arg-type]
    worker = panel._worker
    assert worker is not None
    assert started.wait(5)
    window.close()
    # the close itself cancelled the run and waited for its thread
    assert stopped.is_set()
    assert not worker.is_running()
    assert not panel.verify_button.isEnabled()  # nothing new starts after the close


def test_closing_before_plan_is_built_is_fine(qtbot: QtBot, tmp_path: Path) -> None:
    window = MainWindow(
        state=AppState(catalog=small_catalog()),
        settings=open_settings(tmp_path / "close.conf"),
    )
    qtbot.addWidget(window)
    window.close()
    assert "Plan" not in window.built_views()
