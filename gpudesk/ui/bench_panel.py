"""The "Benchmark" view of the This machine tab: run the throughput test, see it against peak.

The benchmark itself is :func:`gpudesk.bench.runner.run_benchmark`, a plain
function; this panel only builds the plan from the user's choices, moves the
run onto a :class:`~gpudesk.ui.worker.TaskWorker`, shows its progress, and
shows the result: a table with "% of peak" bars, the size-sweep plot, and the
history of runs (local and imported). A finished run feeds the "this machine
(measured)" series of the compare view.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import (
    QCoreApplication,
    Qt,
    Signal,
)
from PySide6.QtGui import QCloseEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpudesk.bench.availability import (
    BackendInfo,
    auto_choice,
    check_backends,
    gpus_without_backend,
)
from gpudesk.bench.backends import BACKEND_NAMES, get_backend
from gpudesk.bench.backends.base import Backend
from gpudesk.bench.history import save_run
from gpudesk.bench.measured import measured_series
from gpudesk.bench.plan import Capabilities, TestName, make_plan
from gpudesk.bench.results import BenchResult
from gpudesk.bench.runner import run_benchmark
from gpudesk.progress import Progress
from gpudesk.render.text import plain_tooltip
from gpudesk.ui.bench_history import HistoryBox
from gpudesk.ui.bench_results import ResultsPane
from gpudesk.ui.state import AppState
from gpudesk.ui.step_progress import StepProgressBar
from gpudesk.ui.words import plain_words
from gpudesk.ui.worker import TaskWorker, wired_worker

_TEST_CHOICES: tuple[tuple[TestName, str, str], ...] = (
    ("gemm", "GEMM throughput", "Square matrix multiply per precision (FLOPs = 2·n³)"),
    ("copy", "Memory copy", "Device-memory bandwidth: a large copy, bytes read + written"),
    ("h2d", "Host → device", "Transfer from pageable and pinned host memory"),
    ("d2h", "Device → host", "Transfer to pageable and pinned host memory"),
    ("sweep", "Size sweep", "GEMM throughput against n: where small batches underuse the device"),
)


def add_combo_item(
    combo: QComboBox, text: str, data: object, reason: str | None, *, enabled: bool
) -> None:
    """Append an item whose tooltip gives ``reason`` in plain words; disabled unless ``enabled``."""
    combo.addItem(text, data)
    row = combo.count() - 1
    if reason:
        combo.setItemData(row, plain_words(reason), Qt.ItemDataRole.ToolTipRole)
    model = combo.model()
    item = model.item(row) if isinstance(model, QStandardItemModel) else None
    if item is not None and not enabled:
        item.setEnabled(False)


class BenchPanel(QWidget):
    """Run the benchmark, watch it, and read its result against the catalog.

    Args:
        state: the shared application state (catalog for peaks; measured series).
        parent: the parent widget.
        backends: the backends to offer (tests pass fakes); numpy, torch and
            cupy when None.
        history_folder: where runs are saved; the user data folder when None.
        autostart: check the backends at once (tests may call
            :meth:`check_backends` themselves).

    Signals:
        backends_checked(): backend availability and devices are known.
        run_finished(object): a run ended with this :class:`BenchResult`.
        run_cancelled(): a run stopped after Cancel.
        run_failed(str): a run raised (should not happen: failures are results).
    """

    backends_checked = Signal()
    run_finished = Signal(object)
    run_cancelled = Signal()
    run_failed = Signal(str)

    def __init__(
        self,
        state: AppState,
        parent: QWidget | None = None,
        *,
        backends: Sequence[Backend] | None = None,
        history_folder: Path | None = None,
        autostart: bool = True,
    ) -> None:
        super().__init__(parent)
        self.state = state
        self._backends = (
            list(backends)
            if backends is not None
            else [get_backend(name) for name in BACKEND_NAMES]
        )
        self._history_folder = history_folder
        self.infos: list[BackendInfo] = []
        self.result: BenchResult | None = None
        self._check_worker: TaskWorker | None = None
        self._run_worker: TaskWorker | None = None
        self._closed = False

        self._build()
        self.show_result(None)
        # a detection that finishes after the backend check adds the GPUs it cannot run
        state.detected_changed.connect(self._on_backend_changed)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        if autostart:
            self.check_backends()

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        outer = QHBoxLayout(self)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(splitter)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 6, 0)
        run_box = QGroupBox("Run")
        form = QFormLayout(run_box)
        self.backend_combo = QComboBox()
        self.backend_combo.currentIndexChanged.connect(self._on_backend_changed)
        form.addRow("Backend", self.backend_combo)
        self.device_combo = QComboBox()
        self.device_combo.currentIndexChanged.connect(self._on_device_changed)
        form.addRow("Device", self.device_combo)
        self.full_check = QCheckBox("Full run (larger sizes; minutes)")
        self.full_check.setToolTip("Quick: under 15 s on a GPU, under 30 s on a small CPU")
        form.addRow("", self.full_check)
        tests_box = QWidget()
        tests_layout = QVBoxLayout(tests_box)
        tests_layout.setContentsMargins(0, 0, 0, 0)
        tests_layout.setSpacing(2)
        self.test_checks: dict[TestName, QCheckBox] = {}
        #: The user's choice per test, kept while a device that lacks it is shown.
        self._wanted: dict[TestName, bool] = {name: True for name, _, _ in _TEST_CHOICES}
        self._syncing = False
        for name, label, tip in _TEST_CHOICES:
            check = QCheckBox(label)
            check.setToolTip(tip)
            check.setChecked(True)
            check.toggled.connect(lambda on, name=name: self._on_test_toggled(name, on))
            self.test_checks[name] = check
            tests_layout.addWidget(check)
        form.addRow("Tests", tests_box)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        form.addRow(buttons)
        self.progress_bar = StepProgressBar()
        # Shown only while a run is going: an empty bar before the first run says nothing.
        self.progress_bar.setVisible(False)
        # ...but its place is kept, so History below does not jump when a run starts
        # (a form layout gives a hidden row no room, whatever its size policy says).
        bar_place = QWidget()
        bar_layout = QVBoxLayout(bar_place)
        bar_layout.setContentsMargins(0, 0, 0, 0)
        bar_layout.addWidget(self.progress_bar)
        bar_place.setFixedHeight(self.progress_bar.sizeHint().height())
        form.addRow(bar_place)
        self.step_label = QLabel("Checking backends…")
        self.step_label.setTextFormat(Qt.TextFormat.PlainText)  # errors and device names
        self.step_label.setWordWrap(True)
        # Room for three lines whatever it says ("Running ...", an error): a line more
        # or less must not move History.
        self.step_label.setFixedHeight(3 * self.step_label.fontMetrics().lineSpacing() + 4)
        self.step_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        form.addRow(self.step_label)
        left_layout.addWidget(run_box)

        self.history_box = HistoryBox(self._history_folder)
        self.history_box.result_chosen.connect(self.show_result)
        self.history_box.measured_button.clicked.connect(self.use_in_compare)
        left_layout.addWidget(self.history_box, 1)
        splitter.addWidget(left)

        self.results = ResultsPane()
        splitter.addWidget(self.results)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([330, 900])
        self._update_buttons()

    # -- backends -----------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while backends are being checked or a benchmark runs."""
        return self._check_worker is not None or self._run_worker is not None

    def check_backends(self) -> None:
        """Check availability and devices on a worker (importing torch can take seconds)."""
        if self._check_worker is not None or self._closed:
            return
        backends = list(self._backends)

        def work(progress: Progress) -> list[BackendInfo]:
            return check_backends(backends, progress)

        worker = TaskWorker(work, owner=self)
        worker.finished.connect(self._on_backends)
        worker.failed.connect(
            lambda message: self.step_label.setText(f"Backend check failed: {message}")
        )
        worker.done.connect(self._on_check_done)
        self._check_worker = worker
        self.step_label.setText("Checking backends…")
        self._update_buttons()
        worker.start()

    def _on_check_done(self) -> None:
        self._check_worker = None  # one check at a time: this was it
        self._update_buttons()
        self.backends_checked.emit()

    def _on_backends(self, infos: object) -> None:
        if not isinstance(infos, list) or self._closed:
            return
        self.infos = [info for info in infos if isinstance(info, BackendInfo)]
        self.backend_combo.blockSignals(True)
        self.backend_combo.clear()
        auto = self._auto_info()
        self.backend_combo.addItem(
            f"Auto ({auto.backend.name})" if auto else "Auto (none available)", "auto"
        )
        for info in self.infos:
            version = f" {info.status.version}" if info.status.version else ""
            label = f"{info.backend.name}{version}"
            if not info.status.available:
                label += " — not available"
            elif info.error:
                label += " — failed"
            reason = info.status.reason or info.error
            add_combo_item(
                self.backend_combo, label, info.backend.name, reason, enabled=info.usable
            )
        self.backend_combo.setCurrentIndex(0)
        self.backend_combo.blockSignals(False)
        self._on_backend_changed()
        unavailable = [info for info in self.infos if not info.usable]
        lines = [
            f"{info.backend.name}: {plain_words(info.status.reason or info.error or '')}"
            for info in unavailable
        ]
        # One short line; the reasons and install commands in its tooltip and the backend
        # list's: five lines of them made the label taller, and History jumped 94 px up
        # when a run replaced them with "Running …".
        names = ", ".join(info.backend.name for info in unavailable)
        self.step_label.setText(
            "Ready." + (f" Not available here: {names} (hover for why)." if names else "")
        )
        self.step_label.setToolTip(plain_tooltip("\n".join(lines)) if lines else "")

    def _auto_info(self) -> BackendInfo | None:
        return auto_choice(self.infos)

    def selected_info(self) -> BackendInfo | None:
        """The backend the combo box stands for (Auto resolved)."""
        name = self.backend_combo.currentData()
        if name == "auto":
            return self._auto_info()
        return next((info for info in self.infos if info.backend.name == name), None)

    def _on_backend_changed(self) -> None:
        info = self.selected_info()
        chosen = self.device_combo.currentData()
        self.device_combo.blockSignals(True)
        self.device_combo.clear()
        if info is not None:
            for device in info.devices:
                prefix = "CPU" if device.kind == "cpu" else f"GPU {device.index}"
                self.device_combo.addItem(f"{prefix}: {device.name}", device.index)
        self._add_unbenchmarked_gpus()
        found = self.device_combo.findData(chosen) if isinstance(chosen, int) else -1
        self.device_combo.setCurrentIndex(found if found >= 0 else 0)
        self.device_combo.blockSignals(False)
        self._on_device_changed()

    def _add_unbenchmarked_gpus(self) -> None:
        """List this machine's GPUs that no backend can run, disabled, with the reason.

        Without them an NVIDIA card on a machine without PyTorch or CuPy would
        simply be absent, as if the benchmark had not seen it.
        """
        if not self.infos:
            return
        for missing in gpus_without_backend(self.state.detected_gpus, self.infos):
            label = f"{missing.gpu.label} (cannot run: {missing.short_reason})"
            add_combo_item(self.device_combo, label, None, missing.reason, enabled=False)
        # the list opens wide enough for the whole reason, past the combo's own width
        view = self.device_combo.view()
        view.setMinimumWidth(view.sizeHintForColumn(0) + 2 * view.frameWidth() + 8)

    def _on_device_changed(self) -> None:
        self._update_buttons()

    def _on_test_toggled(self, name: TestName, on: bool) -> None:
        if not self._syncing:
            self._wanted[name] = on
        self._update_buttons()

    def _supported_tests(self) -> set[str]:
        caps = self.selected_capabilities()
        return set(caps.tests) if caps is not None else set()

    def selected_capabilities(self) -> Capabilities | None:
        info = self.selected_info()
        index = self.device_combo.currentData()
        if info is None or not isinstance(index, int):
            return None
        return info.capabilities.get(index)

    def selected_tests(self) -> list[TestName]:
        supported = self._supported_tests()
        return [name for name in self.test_checks if self._wanted[name] and name in supported]

    def _update_buttons(self) -> None:
        running = self._run_worker is not None
        can_run = (
            not running
            and self._check_worker is None
            and self.selected_capabilities() is not None
            and bool(self.selected_tests())
        )
        self.run_button.setEnabled(can_run and not self._closed)
        self.cancel_button.setEnabled(running)
        for widget in (self.backend_combo, self.device_combo, self.full_check):
            widget.setEnabled(not running)
        # A test the device cannot run shows unticked and disabled; the user's
        # choice comes back with a device that can.
        supported = self._supported_tests()
        tips = {name: tip for name, _, tip in _TEST_CHOICES}
        self._syncing = True
        for name, check in self.test_checks.items():
            check.setEnabled(name in supported and not running)
            check.setChecked(self._wanted[name] and name in supported)
            lacking = self.selected_capabilities() is not None and name not in supported
            check.setToolTip(tips[name] + (" (not on this device)" if lacking else ""))
        self._syncing = False
        self.history_box.import_button.setEnabled(not running)

    # -- running ----------------------------------------------------------------------------

    def run(self) -> None:
        """Start a benchmark with the chosen backend, device and tests."""
        info = self.selected_info()
        caps = self.selected_capabilities()
        device_index = self.device_combo.currentData()
        tests = self.selected_tests()
        if self._run_worker is not None or info is None or caps is None or not tests:
            return
        plan = make_plan(
            caps, full=self.full_check.isChecked(), device_index=int(device_index), tests=tests
        )
        backend = info.backend
        entries = list(self.state.entries())

        def work(progress: Progress) -> BenchResult:
            return run_benchmark(plan, backend, progress, catalog=entries)

        worker = wired_worker(
            work,
            owner=self,
            progressed=self.progress_bar.advance,
            finished=self._on_finished,
            cancelled=self._on_cancelled,
            failed=self._on_failed,
            done=self._on_run_done,
        )
        self._run_worker = worker
        # Busy until the first step reports a fraction: a long first step must
        # not look like a bar stuck at 0%.
        self.progress_bar.begin(f"starting {backend.name}")
        self.step_label.setText(f"Running {backend.name} ({plan.mode} run)…")
        self._update_buttons()
        worker.start()

    def cancel(self) -> None:
        if self._run_worker is not None:
            self._run_worker.cancel()
            self.step_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def _on_finished(self, result: object) -> None:
        if not isinstance(result, BenchResult):
            return
        self.progress_bar.finish()
        saved: Path | None = None
        try:
            saved = save_run(result, self._history_folder)
        except OSError as exc:
            self.history_box.show_message(f"Could not save this run to the history: {exc}")
        if result.error is not None:
            self.step_label.setText(f"Failed: {result.error}")
            self.step_label.setToolTip(plain_tooltip(result.error))  # past three lines
        else:
            failures = sum(row.error is not None for row in result.results)
            done = f"Done in {result.duration_s:.1f} s."
            self.step_label.setText(done + (f" {failures} test(s) failed." if failures else ""))
        self.history_box.refresh(select=saved)
        if saved is None:
            self.show_result(result)
        # Compare changes only when asked ("Use in Compare"): a finished run that joined
        # by itself added a seventh column to a full comparison and rescaled its axes.
        self.run_finished.emit(result)

    def _on_cancelled(self) -> None:
        self.progress_bar.finish()
        self.step_label.setText("Cancelled.")
        self.run_cancelled.emit()

    def _on_failed(self, message: str) -> None:
        self.progress_bar.finish()
        self.step_label.setText(f"Failed: {message}")
        self.step_label.setToolTip(plain_tooltip(message))  # past three lines
        self.run_failed.emit(message)

    def _on_run_done(self) -> None:
        self._run_worker = None  # one run at a time: this was it
        self._update_buttons()

    # -- showing a result ------------------------------------------------------------------

    def show_result(self, result: BenchResult | None) -> None:
        """Fill the summary, table and sweep plot from one result (None clears them)."""
        self.result = result
        self.history_box.measured_button.setEnabled(
            result is not None and measured_series(result) is not None
        )
        self.results.show_result(result)

    def use_in_compare(self) -> None:
        """Make the shown run the measured series of the compare view."""
        if self.result is None:
            return
        series = measured_series(self.result)
        if series is not None:
            self.state.set_measured(series)

    # -- shutdown ---------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Cancel a run in flight and wait for the workers; safe to call twice."""
        self._closed = True
        for worker in (self._run_worker, self._check_worker):
            if worker is not None:
                worker.shutdown()
        self._run_worker = None
        self._check_worker = None

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)


__all__ = ["BenchPanel"]
