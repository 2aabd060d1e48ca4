"""File → Export comparison: the dialog driven programmatically (no modal loops)."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from pypdf import PdfReader
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMainWindow, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot
from report_factory import catalog

from gpudesk.progress import Cancelled, Progress
from gpudesk.ui import export_dialog
from gpudesk.ui.export_dialog import ExportDialog, check_target, run_export_dialog
from gpudesk.ui.state import AppState


class FakeWindow(QMainWindow):
    """What the dialog needs of the main window: ``state`` and ``settings``."""

    def __init__(self, ids: list[str], settings_path: Path) -> None:
        super().__init__()
        self.state = AppState(catalog=catalog())
        self.state.set_compare(ids)
        self.settings = QSettings(str(settings_path), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> FakeWindow:
    win = FakeWindow(["alpha-100", "beta-200", "gamma-300"], tmp_path / "settings.ini")
    qtbot.addWidget(win)
    return win


def _dialog(window: FakeWindow) -> ExportDialog:
    dialog = run_export_dialog(window)
    assert isinstance(dialog, ExportDialog)
    return dialog


def test_fewer_than_two_gpus_explains_how_to_select(qtbot: QtBot, tmp_path: Path) -> None:
    win = FakeWindow(["alpha-100"], tmp_path / "settings.ini")
    qtbot.addWidget(win)
    box = run_export_dialog(win)
    assert isinstance(box, QMessageBox)
    assert box.isVisible()  # opened without blocking
    assert "compares 2 to 6 GPUs, and 1 is selected" in box.text()
    assert "Add selected to compare" in box.text()
    box.close()


def test_the_dialog_offers_path_paper_and_this_machine(window: FakeWindow) -> None:
    dialog = _dialog(window)
    assert dialog.isVisible()
    assert dialog.path_edit.text().endswith(".pdf")
    assert [dialog.paper_combo.itemText(i) for i in range(2)] == ["A4", "Letter"]
    assert dialog.paper() == "a4"
    assert not dialog.local_check.isChecked()
    dialog.close()


def test_export_writes_the_pdf_and_offers_to_open_it(
    qtbot: QtBot, window: FakeWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Path] = []
    monkeypatch.setattr(export_dialog, "open_path", lambda path: opened.append(path) or True)
    dialog = _dialog(window)
    dialog.set_path(tmp_path / "committee")  # ".pdf" is added
    dialog.set_paper("letter")
    with qtbot.waitSignal(dialog.exported, timeout=30_000) as signal:
        assert dialog.start()
        assert dialog.is_running()
    target = tmp_path / "committee.pdf"
    assert signal.args == [str(target)]
    reader = PdfReader(str(target))
    assert float(reader.pages[0].mediabox.height) == pytest.approx(792, abs=1)
    assert "Gamma 300" in " ".join(reader.pages[0].extract_text().split())
    box = dialog.message_box
    assert box is not None and box.isVisible()
    # the options dialog closes (and is deleted) once the worker's thread ended
    qtbot.waitUntil(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())
    assert str(target) in box.text()
    open_button = next(b for b in box.buttons() if b.text() == "Open the PDF")
    open_button.click()
    assert opened == [target]
    # the choices are remembered for the next export
    assert window.settings.value("export/folder") == str(tmp_path)
    assert window.settings.value("export/paper") == "letter"


def test_a_bad_path_is_refused_before_starting(window: FakeWindow, tmp_path: Path) -> None:
    dialog = _dialog(window)
    target = tmp_path / "missing" / "r.pdf"
    dialog.set_path(target)
    assert "does not exist" in dialog.hint_label.text()
    assert not dialog.start()
    assert not dialog.is_running()
    box = dialog.message_box
    assert box is not None and box.icon() == QMessageBox.Icon.Critical
    assert str(target) in box.text()
    dialog.close()


def test_an_existing_file_is_announced(window: FakeWindow, tmp_path: Path) -> None:
    (tmp_path / "old.pdf").write_bytes(b"old")
    dialog = _dialog(window)
    dialog.set_path(tmp_path / "old.pdf")
    assert dialog.hint_label.text() == "old.pdf exists and will be replaced."
    dialog.close()


def test_a_failed_write_shows_an_error_naming_the_path_and_keeps_the_old_file(
    qtbot: QtBot, window: FakeWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old report")

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    dialog = _dialog(window)
    dialog.set_path(target)
    with qtbot.waitSignal(dialog.export_failed, timeout=30_000):
        assert dialog.start()
    qtbot.waitUntil(lambda: not dialog.is_running())
    box = dialog.message_box
    assert box is not None and box.icon() == QMessageBox.Icon.Critical
    assert f"Cannot write {target}: No space left on device" in box.text()
    assert dialog.isVisible()  # the user can pick another place and retry
    assert target.read_bytes() == b"old report"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.pdf", "settings.ini"]
    dialog.close()


def _slow_export(*args: Any, progress: Progress, **kwargs: Any) -> None:
    """Stands in for the export: reports progress until cancelled."""
    deadline = time.monotonic() + 20
    step = 0
    while time.monotonic() < deadline:
        progress.report(min(0.9, step / 100), "painting page 1 of 3")
        if progress.is_cancelled():
            raise Cancelled()
        step += 1
        time.sleep(0.01)
    raise AssertionError("never cancelled")


def test_export_runs_off_the_gui_thread_and_can_be_cancelled(
    qtbot: QtBot, window: FakeWindow, tmp_path: Path
) -> None:
    dialog = _dialog(window)
    dialog.export_function = _slow_export
    dialog.set_path(tmp_path / "r.pdf")
    assert dialog.start()
    assert dialog.is_running()
    assert not dialog.export_button.isEnabled()
    # the GUI thread keeps running while the export works
    qtbot.waitUntil(
        lambda: dialog.progress_dialog is not None and dialog.progress_dialog.value() > 0,
        timeout=10_000,
    )
    progress_dialog = dialog.progress_dialog
    assert progress_dialog is not None
    assert progress_dialog.labelText() == "Painting page 1 of 3…"
    with qtbot.waitSignal(dialog.export_cancelled, timeout=10_000):
        cancel_button = progress_dialog.findChild(QPushButton)
        assert cancel_button is not None and cancel_button.text() == "Cancel"
        cancel_button.click()
    qtbot.waitUntil(lambda: not dialog.is_running())
    assert dialog.hint_label.text() == "Export cancelled; nothing was written."
    assert dialog.export_button.isEnabled()
    assert not (tmp_path / "r.pdf").exists()
    dialog.close()


def test_closing_the_dialog_cancels_a_running_export(
    qtbot: QtBot, window: FakeWindow, tmp_path: Path
) -> None:
    dialog = _dialog(window)
    dialog.export_function = _slow_export
    dialog.set_path(tmp_path / "r.pdf")
    assert dialog.start()
    dialog.reject()  # Escape or the Cancel button of the dialog itself
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=10_000)
    assert not (tmp_path / "r.pdf").exists()


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("report", "report.pdf"), ("report.PDF", "report.PDF"), ("a.b", "a.b.pdf")],
)
def test_check_target_adds_the_suffix(tmp_path: Path, typed: str, expected: str) -> None:
    path, problem = check_target(str(tmp_path / typed))
    assert problem == ""
    assert path == tmp_path / expected


def test_check_target_refuses_empty_and_folders(tmp_path: Path) -> None:
    assert check_target("  ") == (None, "Choose a file to write the report to.")
    (tmp_path / "x.pdf").mkdir()
    path, problem = check_target(str(tmp_path / "x.pdf"))
    assert path is None and "is a folder" in problem


def test_the_fleet_survey_shown_is_offered_and_passed_to_the_export(
    qtbot: QtBot, window: FakeWindow, tmp_path: Path
) -> None:
    import json

    from survey_factory import gpu, node, survey

    from gpudesk.fleet.document import parse_survey

    assert not _dialog(window).fleet_check.isVisibleTo(window)  # no survey: not offered
    window.state.fleet_survey, _ = parse_survey(json.dumps(survey([node("a", [gpu(0)])])), "t")
    dialog = _dialog(window)
    assert dialog.fleet_check.isChecked()
    received: dict[str, Any] = {}

    def export(*args: Any, **kwargs: Any) -> None:
        received.update(kwargs)

    dialog.export_function = export
    dialog.set_path(tmp_path / "r.pdf")
    with qtbot.waitSignal(dialog.exported, timeout=10_000):
        assert dialog.start()
    assert received["fleet"] is window.state.fleet_survey
    dialog.close()


def test_the_speed_workload_is_offered_and_passed_to_the_export(
    qtbot: QtBot, window: FakeWindow, tmp_path: Path
) -> None:
    from gpudesk.speed.estimate import Engine, KvFormat, Mode, SpeedRequest, model_costs
    from gpudesk.speed.planner import SpeedWorkload
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.quant import QuantFormat

    assert not _dialog(window).speed_check.isVisibleTo(window)  # no workload: not offered
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.BF16, KvFormat.FP16)
    workload = SpeedWorkload(
        model_name="Llama 3.1 8B",
        costs=costs,
        request=SpeedRequest(mode=Mode.DECODE, engine=Engine.VLLM),
    )
    window.state.set_speed_workload(workload)
    dialog = _dialog(window)
    assert dialog.speed_check.isChecked() and "Llama 3.1 8B" in dialog.speed_check.text()
    received: dict[str, Any] = {}

    def export(*args: Any, **kwargs: Any) -> None:
        received.update(kwargs)

    dialog.export_function = export
    dialog.set_path(tmp_path / "r.pdf")
    with qtbot.waitSignal(dialog.exported, timeout=10_000):
        assert dialog.start()
    assert received["speed"] is workload
    dialog.close()


def test_the_radar_is_exported_as_the_compare_tab_shows_it(
    qtbot: QtBot, window: FakeWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from gpudesk.compare.radar import NormalisationChoice, Reference, Scale

    monkeypatch.setattr(export_dialog, "open_path", lambda path: True)
    choice = NormalisationChoice(Reference.CATALOG, Scale.LOG)
    axes = ["memory_gb", "bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops", "tdp_w"]
    compare = SimpleNamespace(
        normalisation_choice=lambda: choice,
        axis_picker=SimpleNamespace(checked_axes=lambda: axes),
    )
    window.built_views = lambda: {"Compare": compare}  # type: ignore[attr-defined]
    dialog = _dialog(window)
    assert dialog.radar_normalisation == choice and dialog.radar_axes == axes
    log_words = "×10 per ring, outer ring the power of ten above the whole catalog maximum"
    assert f"log scale · {log_words}" in dialog.radar_label.text()
    dialog.set_path(tmp_path / "on-screen.pdf")
    with qtbot.waitSignal(dialog.exported, timeout=30_000):
        assert dialog.start()
    text = " ".join(
        " ".join(page.extract_text().split())
        for page in PdfReader(str(tmp_path / "on-screen.pdf")).pages
    )
    assert f"Log scale · {log_words}" in text
    assert "Linear scale" not in text
    assert "largest value in the whole catalog" in text and "power of ten" in text
    qtbot.waitUntil(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())


def test_without_the_compare_tab_the_radar_uses_its_defaults(window: FakeWindow) -> None:
    dialog = _dialog(window)
    assert dialog.radar_normalisation is None and dialog.radar_axes is None
    assert "Radar (default): linear scale · outer ring = selection maximum" in (
        dialog.radar_label.text()
    )
    dialog.close()
