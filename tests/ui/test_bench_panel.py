"""The Benchmark panel with a fake backend: run, progress, cancel, results, history, import."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench_fakes import FakeBackend, FakeConfig, FixedProbe, catalog_entry
from wcag import contrast

import gpudesk.ui.bench_panel as bench_panel
from gpudesk.bench.results import BenchResult
from gpudesk.catalog.loader import Catalog
from gpudesk.ui.bench_panel import BenchPanel
from gpudesk.ui.bench_results import FRACTION_ROLE, ResultsModel, fraction_color
from gpudesk.ui.state import AppState
from gpudesk.ui.worker import running_threads


@pytest.fixture
def matched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs match the fake device to the fake catalog entry (no NVML here)."""
    original = bench_panel.run_benchmark

    def run(plan, backend, progress, catalog):  # type: ignore[no-untyped-def]
        return original(plan, backend, progress, catalog=catalog, probe=FixedProbe("fake-gpu"))

    monkeypatch.setattr(bench_panel, "run_benchmark", run)


def make_panel(
    qtbot: QtBot, tmp_path: Path, config: FakeConfig | None = None, **backends: object
) -> tuple[BenchPanel, AppState]:
    state = AppState(catalog=Catalog(entries=[catalog_entry()]))
    fake = FakeBackend(config or FakeConfig())
    unavailable = FakeBackend(FakeConfig(available=False))
    unavailable.name = "other"  # type: ignore[misc]
    panel = BenchPanel(
        state, backends=[fake, unavailable], history_folder=tmp_path / "history", autostart=False
    )
    qtbot.addWidget(panel)
    panel.resize(1300, 850)
    panel.show()
    with qtbot.waitSignal(panel.backends_checked, timeout=10_000):
        panel.check_backends()
    return panel, state


def test_backends_and_devices_are_listed(qtbot: QtBot, tmp_path: Path) -> None:
    panel, _ = make_panel(qtbot, tmp_path)
    texts = [panel.backend_combo.itemText(i) for i in range(panel.backend_combo.count())]
    assert texts == ["Auto (fake)", "fake 1.0", "other — not available"]
    assert panel.backend_combo.itemData(2, 3) == "fake says no"  # tooltip: the reason
    assert panel.device_combo.currentText() == "GPU 0: Fake GPU"
    # one short line; the reason in the tooltip (five lines of them made History jump)
    assert panel.step_label.text() == "Ready. Not available here: other (hover for why)."
    assert "other: fake says no" in panel.step_label.toolTip()
    assert panel.run_button.isEnabled()
    assert not panel.cancel_button.isEnabled()


def test_run_shows_progress_results_and_feeds_compare_only_when_asked(
    qtbot: QtBot, tmp_path: Path, matched: None
) -> None:
    panel, state = make_panel(qtbot, tmp_path)
    steps: list[str] = []
    panel.test_checks["h2d"].setChecked(False)
    panel.test_checks["d2h"].setChecked(False)
    measured_changes: list[None] = []
    state.measured_changed.connect(lambda: measured_changes.append(None))
    with qtbot.waitSignal(panel.run_finished, timeout=10_000) as finished:
        panel.run_button.click()
        assert not panel.run_button.isEnabled()
        assert panel.cancel_button.isEnabled()
        panel._run_worker.progressed.connect(lambda f, m: steps.append(m))  # type: ignore[union-attr]
    result = finished.args[0]
    assert isinstance(result, BenchResult)
    assert "GEMM FP64 n=8192" in steps
    assert any(step.startswith("sweep FP16 n=256") for step in steps)
    qtbot.waitUntil(lambda: panel.run_button.isEnabled(), timeout=5000)
    assert panel.progress_bar.value() == 1000
    assert panel.step_label.text().startswith("Done in")
    # the table shows every result with its fraction of peak
    model = panel.results.model
    assert model.rowCount() == 6
    labels = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert labels == [
        "GEMM FP64",
        "GEMM FP32",
        "GEMM TF32",
        "GEMM FP16",
        "GEMM BF16",
        "memory copy",
    ]
    copy_fraction = model.index(5, ResultsModel.PERCENT_COLUMN).data(FRACTION_ROLE)
    assert copy_fraction == pytest.approx(0.5)
    assert model.index(5, ResultsModel.PERCENT_COLUMN).data() == "50%"
    assert model.index(5, 5).data() == "2,000"
    assert "fake-gpu" in panel.results.summary.text()
    # the sweep plot has one curve per dtype with every size
    assert [dtype for dtype, _, _ in panel.results.sweep_plot.curves] == ["fp16", "fp32"]
    assert panel.results.sweep_plot.curves[0][1] == [256, 512, 1024, 2048, 4096, 8192]
    # saved, listed, selected; Compare is left as chosen until "Use in Compare"
    assert len(panel.history_box.items) == 1
    assert panel.history_box.history_list.currentRow() == 0
    assert state.measured is None and not measured_changes
    assert panel.history_box.measured_button.isEnabled()
    panel.history_box.measured_button.click()
    assert state.measured is not None
    assert state.measured.values["bandwidth_gbs"] == pytest.approx(1000.0)
    assert state.measured.catalog_id == "fake-gpu"
    assert not running_threads()


def test_cancel_stops_the_run(qtbot: QtBot, tmp_path: Path) -> None:
    config = FakeConfig(
        real_time=True, peak_tflops={"fp32": 0.05}, gemm_dtypes=("fp32",), tests=("gemm",)
    )
    panel, state = make_panel(qtbot, tmp_path, config)
    panel.full_check.setChecked(False)
    with qtbot.waitSignal(panel.run_cancelled, timeout=10_000):
        panel.run()
        qtbot.waitUntil(lambda: "repetition" in panel.progress_bar.format(), timeout=10_000)
        assert panel.progress_bar.format().startswith("GEMM FP32 n=8192: repetition")
        assert panel.progress_bar.value() > 0
        panel.cancel_button.click()
        assert panel.step_label.text() == "Cancelling…"
    qtbot.waitUntil(lambda: not panel.busy, timeout=5000)
    assert panel.step_label.text() == "Cancelled."
    assert panel.run_button.isEnabled()
    assert panel.history_box.items == [], "a cancelled run is not saved"
    assert state.measured is None
    assert panel.results.model.rowCount() == 0


def test_tests_the_device_cannot_run_are_disabled(qtbot: QtBot, tmp_path: Path) -> None:
    config = FakeConfig(kind="cpu", tests=("gemm", "copy", "sweep"), gemm_dtypes=("fp64",))
    panel, _ = make_panel(qtbot, tmp_path, config)
    assert panel.test_checks["gemm"].isEnabled()
    assert not panel.test_checks["h2d"].isEnabled()
    assert not panel.test_checks["h2d"].isChecked()
    assert "not on this device" in panel.test_checks["h2d"].toolTip()
    assert panel.selected_tests() == ["gemm", "copy", "sweep"]
    panel.test_checks["copy"].setChecked(False)
    assert panel.selected_tests() == ["gemm", "sweep"]
    for check in panel.test_checks.values():
        check.setChecked(False)
    assert panel.selected_tests() == []
    assert not panel.run_button.isEnabled()


def test_failed_backend_shows_the_error(qtbot: QtBot, tmp_path: Path) -> None:
    panel, state = make_panel(qtbot, tmp_path, FakeConfig(open_error="driver gone"))
    with qtbot.waitSignal(panel.run_finished, timeout=10_000) as finished:
        panel.run()
    assert finished.args[0].error is not None
    qtbot.waitUntil(lambda: not panel.busy, timeout=5000)
    assert "driver gone" in panel.step_label.text()
    assert "driver gone" in panel.results.summary.text()
    assert state.measured is None
    assert len(panel.history_box.items) == 1


def test_import_good_and_malformed_files(qtbot: QtBot, tmp_path: Path) -> None:
    panel, state = make_panel(qtbot, tmp_path)
    good = tmp_path / "server.json"
    data = {
        "backend": "torch",
        "device": {"kind": "cuda", "name": "NVIDIA H100 80GB HBM3"},
        "catalog_id": "fake-gpu",
        "results": [
            {
                "test": "gemm",
                "dtype": "bf16",
                "size": 8192,
                "value": 150.0,
                "unit": "TFLOPS",
                "min": 149.0,
                "max": 151.0,
                "peak": 200.0,
                "fraction_of_peak": 0.75,
            }
        ],
        "sweep": [],
        "environment": {},
    }
    good.write_text(json.dumps(data), encoding="utf-8")
    # before any run the history says what it will hold, not an empty white box
    history = panel.history_box
    assert not history.empty_label.isHidden() and history.history_list.isHidden()
    assert "No runs yet" in history.empty_label.text()
    assert "`" not in history.import_button.toolTip()
    item = panel.history_box.import_file(good)
    assert item is not None
    assert len(panel.history_box.items) == 1
    assert history.empty_label.isHidden() and not history.history_list.isHidden()
    assert "imported" in panel.history_box.history_list.item(0).text()
    assert panel.result is not None and panel.result.backend == "torch"
    assert panel.results.model.index(0, 0).data() == "GEMM BF16"
    assert panel.results.model.index(0, ResultsModel.PERCENT_COLUMN).data(FRACTION_ROLE) == 0.75
    assert "imported from" in panel.results.summary.text()
    panel.history_box.measured_button.click()
    assert state.measured is not None and state.measured.values == {"bf16_tensor_tflops": 150.0}

    bad = tmp_path / "bad.json"
    data["results"][0]["value"] = "fast"  # type: ignore[index]
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert panel.history_box.import_file(bad) is None
    message = panel.history_box.message.text()
    # the file by name and the field in words, not the validator's "results.0.value:"
    assert message.startswith("Not imported: bad.json\nresults, row 1 › value: ")
    assert "results.0" not in message
    assert panel.history_box.message.toolTip() == str(bad)
    assert panel.history_box.message.isVisible()
    assert len(panel.history_box.items) == 1


def test_broken_history_file_is_reported(qtbot: QtBot, tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "torn.json").write_text("{", encoding="utf-8")
    panel, _ = make_panel(qtbot, tmp_path)
    assert "1 history file(s) could not be read" in panel.history_box.message.text()
    assert "torn.json" in panel.history_box.message.text()


def test_shutdown_during_a_run_leaves_no_thread(qtbot: QtBot, tmp_path: Path) -> None:
    config = FakeConfig(
        real_time=True, peak_tflops={"fp32": 0.05}, gemm_dtypes=("fp32",), tests=("gemm",)
    )
    panel, _ = make_panel(qtbot, tmp_path, config)
    panel.run()
    qtbot.waitUntil(lambda: "GEMM" in panel.progress_bar.format(), timeout=10_000)
    panel.shutdown()
    assert not running_threads()
    assert not panel.run_button.isEnabled() or panel._closed


def test_fraction_colors() -> None:
    assert fraction_color(0.9).green() > fraction_color(0.9).red()
    assert fraction_color(0.6) != fraction_color(0.9)
    assert fraction_color(0.2).red() > fraction_color(0.2).green()
    assert fraction_color(1.3).blue() > fraction_color(1.3).red()


def test_percent_bar_delegate_paints(qtbot: QtBot, tmp_path: Path, matched: None) -> None:
    panel, _ = make_panel(qtbot, tmp_path)
    panel.test_checks["sweep"].setChecked(False)
    with qtbot.waitSignal(panel.run_finished, timeout=10_000):
        panel.run()
    qtbot.waitUntil(lambda: not panel.busy, timeout=5000)
    image = panel.results.table.viewport().grab().toImage()
    rect = panel.results.table.visualRect(panel.results.model.index(5, ResultsModel.PERCENT_COLUMN))
    # the memory copy is at 50% of peak: the left part of its cell is the bar color
    left = image.pixelColor(rect.left() + 10, rect.center().y())
    right = image.pixelColor(rect.right() - 30, rect.center().y())
    assert left != right
    assert left.red() > left.blue()  # amber/red, not the blue of "above peak"


def test_progress_bar_shows_only_while_running_and_starts_busy(
    qtbot: QtBot, tmp_path: Path, matched: None
) -> None:
    panel, _ = make_panel(qtbot, tmp_path)
    assert not panel.progress_bar.isVisible()  # no empty bar before the first run
    with qtbot.waitSignal(panel.run_finished, timeout=10_000):
        panel.run_button.click()
        assert panel.progress_bar.isVisible()
        assert panel.progress_bar.maximum() == 0  # busy until a step reports progress
    assert not panel.progress_bar.isVisible()


def test_columns_empty_in_every_row_are_hidden(qtbot: QtBot) -> None:
    import datetime as dt

    from gpudesk.bench.results import Measurement
    from gpudesk.ui.bench_results import ResultsPane

    pane = ResultsPane()
    qtbot.addWidget(pane)
    cpu_row = Measurement(test="gemm", dtype="fp64", size=2048, value=0.1, unit="TFLOPS")
    result = BenchResult(
        backend="numpy", device=None, results=(cpu_row,), started_at=dt.datetime.now(dt.UTC)
    )
    pane.show_result(result)
    for column in (
        ResultsModel.PEAK_COLUMN,
        ResultsModel.PERCENT_COLUMN,
        ResultsModel.NOTES_COLUMN,
    ):
        assert pane.table.isColumnHidden(column)
    with_peak = cpu_row.model_copy(update={"peak": 0.2, "fraction_of_peak": 0.5})
    pane.show_result(result.model_copy(update={"results": (with_peak,)}))
    assert not pane.table.isColumnHidden(ResultsModel.PERCENT_COLUMN)
    assert pane.table.isColumnHidden(ResultsModel.NOTES_COLUMN)


def test_detected_gpus_no_backend_can_run_are_listed_disabled_with_the_reason(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QStandardItemModel

    from gpudesk.hardware.models import GpuSnapshot

    panel, state = make_panel(qtbot, tmp_path, FakeConfig(kind="cpu", device_name="Fake CPU"))
    assert panel.device_combo.count() == 1
    rtx = GpuSnapshot(index=0, name="NVIDIA GeForce RTX 4090", vendor="NVIDIA")
    state.set_detected([], [rtx])  # the detection finishes after the backend check
    assert panel.device_combo.count() == 2
    text = panel.device_combo.itemText(1)
    assert text.startswith("GPU 0: NVIDIA GeForce RTX 4090 (cannot run: ")
    # no torch or cupy among the offered backends: named in the reason
    assert "torch: not offered here" in str(
        panel.device_combo.itemData(1, Qt.ItemDataRole.ToolTipRole)
    )
    model = panel.device_combo.model()
    assert isinstance(model, QStandardItemModel)
    assert not model.item(1).isEnabled()
    assert panel.device_combo.currentIndex() == 0 and panel.run_button.isEnabled()


def test_a_cpu_sweep_plots_in_gflops(qtbot: QtBot) -> None:
    """0.05 TFLOPS is 50 on a GFLOPS axis, not '5e-02' on a TFLOPS one; GPUs stay in TFLOPS."""
    from gpudesk.bench.results import Measurement
    from gpudesk.ui.bench_results import SweepPlot

    plot = SweepPlot()
    qtbot.addWidget(plot)
    rows = [
        Measurement(test="gemm", dtype="fp64", size=size, value=value, unit="TFLOPS", peak=0.08)
        for size, value in ((256, 0.021), (512, 0.043), (1024, 0.051))
    ]
    plot.show_sweep(rows)
    axis = plot.getPlotItem().getAxis("left")
    assert axis.label.toPlainText().strip() == "Throughput (GFLOPS)"
    assert plot.unit == "GFLOPS"
    assert plot.curves == [("fp64", [256, 512, 1024], [21.0, 43.0, 51.0])]
    gpu = [
        Measurement(test="gemm", dtype="bf16", size=size, value=value, unit="TFLOPS")
        for size, value in ((4096, 600.0), (8192, 700.0))
    ]
    plot.show_sweep(gpu)
    assert axis.label.toPlainText().strip() == "Throughput (TFLOPS)"
    assert plot.curves[0][2] == [600.0, 700.0]


def test_a_one_point_sweep_is_not_drawn_and_says_why(qtbot: QtBot) -> None:
    from gpudesk.bench.results import Measurement
    from gpudesk.ui.bench_results import SweepPlot

    plot = SweepPlot()
    qtbot.addWidget(plot)
    plot.show_sweep([Measurement(test="gemm", dtype="fp64", size=256, value=5e-5, unit="TFLOPS")])
    assert plot.curves == []
    assert "One matrix size measured (n = 256)" in plot.message.toPlainText()


def test_importing_a_fleet_survey_names_the_file_and_where_it_opens(
    qtbot: QtBot, tmp_path: Path
) -> None:
    panel, _ = make_panel(qtbot, tmp_path)
    survey = tmp_path / "survey.json"
    survey.write_text(
        json.dumps({"survey_schema_version": 1, "cluster": {}, "nodes": []}), encoding="utf-8"
    )
    assert panel.history_box.import_file(survey) is None
    message = panel.history_box.message.text()
    assert "fleet survey" in message and "File → Open fleet survey…" in message
    assert "Field required" not in message


def test_history_stays_put_when_a_run_starts_and_after_a_failed_import(
    qtbot: QtBot, tmp_path: Path, matched: None
) -> None:
    """The progress bar appearing and an import error's message moved or shrank History."""
    panel, _ = make_panel(qtbot, tmp_path)
    history = panel.history_box

    def where() -> tuple[object, object]:
        top_left = history.mapTo(panel, history.rect().topLeft())
        return (
            top_left,
            history.history_list.height()
            if history.history_list.isVisible()
            else history.empty_label.height(),
        )

    QApplication.processEvents()
    before = where()
    with qtbot.waitSignal(panel.run_finished, timeout=10_000):
        panel.run_button.click()
        # Lay out now, delivering no other event: with processEvents() the fake run's
        # finish could arrive first and hide the bar before it was looked at.
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        assert panel.progress_bar.isVisible()
        assert where()[0] == before[0]
    QApplication.processEvents()
    settled = where()
    assert settled[0] == before[0]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert history.import_file(bad) is None
    QApplication.processEvents()
    assert history.message.isVisible()
    assert where() == settled


def test_error_text_reads_4_5_to_1_in_both_themes_and_follows_a_live_switch(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """#c0392b was 3.0:1 on the dark theme's base (2.5:1 on its window)."""
    from gpudesk.ui import theme

    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "torn.json").write_text("{", encoding="utf-8")
    panel, _ = make_panel(qtbot, tmp_path, FakeConfig(open_error="driver gone"))
    with qtbot.waitSignal(panel.run_finished, timeout=10_000):
        panel.run()
    qtbot.waitUntil(lambda: not panel.busy, timeout=5000)
    try:
        for mode in (theme.ThemeMode.DARK, theme.ThemeMode.LIGHT, theme.ThemeMode.DARK):
            theme.apply_theme(mode)
            error = theme.error_color()
            palette = QApplication.palette()
            for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base):
                assert contrast(error, palette.color(role)) >= 4.5, (mode, role)
            # what is shown re-reads the colour on the switch
            assert f"color:{error.name()}" in panel.results.summary.text()
            assert error.name() in panel.history_box.message.styleSheet()
            panel.history_box.message.ensurePolished()
            label_color = panel.history_box.message.palette().color(
                panel.history_box.message.foregroundRole()
            )
            assert label_color.name() == error.name()
    finally:
        theme.apply_theme(theme.ThemeMode.LIGHT)


def test_a_failed_rows_colour_is_the_themes_error_colour(qtbot: QtBot) -> None:
    from PySide6.QtCore import Qt

    from gpudesk.bench.results import Measurement
    from gpudesk.ui import theme

    model = ResultsModel()
    row = Measurement(test="gemm", dtype="fp32", size=1024, value=None, unit="TFLOPS", error="x")
    model.set_rows([row])
    try:
        for mode in (theme.ThemeMode.DARK, theme.ThemeMode.LIGHT):
            theme.apply_theme(mode)
            brush = model.data(model.index(0, 0), Qt.ItemDataRole.ForegroundRole)
            assert brush.color().name() == theme.error_color().name()
    finally:
        theme.apply_theme(theme.ThemeMode.LIGHT)


def test_history_stays_put_when_a_run_starts(qtbot: QtBot, tmp_path: Path) -> None:
    """Issue 42 item 9: the backends' reasons (five lines) gave way to "Running …" and
    History jumped 94 px up at 1366x768."""
    long_reason = "PyTorch is not importable (No module named 'torch'); install it " * 4
    panel, _ = make_panel(qtbot, tmp_path)
    import dataclasses

    other = panel.infos[1]
    status = other.status.model_copy(update={"reason": long_reason})
    panel._on_backends([panel.infos[0], dataclasses.replace(other, status=status)])
    QApplication.processEvents()
    before = panel.history_box.geometry().top()
    with qtbot.waitSignal(panel.run_finished, timeout=10_000):
        panel.run_button.click()
        QApplication.processEvents()
        assert panel.history_box.geometry().top() == before
    QApplication.processEvents()
    assert panel.history_box.geometry().top() == before


def test_a_cpu_gemm_reads_in_gflops_in_the_table_and_the_history() -> None:
    """Issue 42 item 9: a CPU's GEMM read "0.020 TFLOPS"; GPUs stay in TFLOPS."""
    from gpudesk.bench.results import Measurement
    from gpudesk.ui.bench_results import ResultsModel

    model = ResultsModel()
    model.set_rows(
        [
            Measurement(
                test="gemm",
                dtype="fp64",
                size=1024,
                value=0.020,
                min=0.018,
                max=0.021,
                unit="TFLOPS",
                peak=0.08,
            ),
            Measurement(test="gemm", dtype="bf16", size=8192, value=700.0, unit="TFLOPS"),
        ]
    )
    texts = [[model.index(row, column).data() for column in (2, 3, 4, 5)] for row in (0, 1)]
    assert texts[0] == ["20.0", "18.0 – 21.0", "GFLOPS", "80.0"]
    assert texts[1][0] == "700" and texts[1][2] == "TFLOPS"
