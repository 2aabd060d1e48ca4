"""The "How fast?" page's measured rows: what the user measured of the selected estimate,
Import measurements…, and Verify on this machine (a worker with progress and Cancel).

The rows come from the user's measurement database
(:mod:`gpudesk.measurements.store`) through
:func:`gpudesk.measurements.rows.rows_for`; the measurement runs
:func:`gpudesk.measurements.verify_here.run_job` (what ``speed ... --verify`` runs) on a
:class:`~gpudesk.ui.worker.TaskWorker`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpudesk.measurements.rows import MeasuredRow
from gpudesk.measurements.store import MeasurementStore
from gpudesk.measurements.verify_here import (
    INSTALL_HINT,
    VerifyError,
    VerifyJob,
    VerifyOutcome,
    llama_cpp_version,
    run_job,
)
from gpudesk.progress import Progress
from gpudesk.speed.estimate import SpeedEstimate
from gpudesk.speed.text import figure_text
from gpudesk.ui.plan import forms
from gpudesk.ui.step_progress import StepProgressBar
from gpudesk.ui.worker import TaskWorker, wired_worker

NO_MEASUREMENT = "no measurement of this yet"
#: The file-size limit's tooltip: a file, so GB of 10^9 bytes, said as such (memory is GiB).
FILE_LIMIT_TIP = (
    "The largest random-weight GGUF the measurement may write, in GB of 10⁹ bytes: "
    "a file's size, as model downloads are given and as --max-file-gb counts it "
    "(memory sizes elsewhere are GiB; 2 GB = 1.86 GiB)"
)


class _Col:
    VALUE, RATIO, DATE, WORKLOAD, SOURCE = range(5)


class MeasuredPanel(QWidget):
    """Measured rows of the selected estimate, and the buttons that add rows.

    Verify on this machine asks the page (``verify_requested``), which answers with
    :meth:`run_job` (the selected workload as a :class:`VerifyJob`) or :meth:`say`
    (why it cannot be measured).

    Signals:
        import_requested(): Import measurements… was pressed.
        verify_requested(): Verify on this machine was pressed (and nothing runs).
        verified(object): a :class:`VerifyOutcome` (stored or not).
    """

    import_requested = Signal()
    verify_requested = Signal()
    verified = Signal(object)

    def __init__(self, store: MeasurementStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.rows: list[MeasuredRow] = []
        self.gguf_path: Path | None = None
        self.outcome: VerifyOutcome | None = None
        self._worker: TaskWorker | None = None
        self._closed = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        self.title_label = QLabel()
        self.title_label.setObjectName("measuredTitle")
        self.title_label.setTextFormat(Qt.TextFormat.RichText)
        self.title_label.setWordWrap(True)
        layout.addWidget(self.title_label)
        buttons = QHBoxLayout()
        self.import_button = QPushButton("Import measurements…")
        self.import_button.setToolTip(
            "llama-bench (json, jsonl, csv, markdown) and vLLM bench results"
        )
        self.import_button.clicked.connect(self.import_requested)
        buttons.addWidget(self.import_button)
        self.verify_button = QPushButton("Verify on this machine")
        self.verify_button.clicked.connect(self.start_verify)
        buttons.addWidget(self.verify_button)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(QLabel("on"))
        self.device_combo = QComboBox()
        self.device_combo.addItem("this machine's CPU", None)
        self.device_combo.setToolTip("Where llama.cpp runs the measurement")
        buttons.addWidget(self.device_combo)
        self.weights_button = QPushButton("Use a GGUF file…")
        self.weights_button.setToolTip(
            "Measure your own model file instead of random weights of the model's shape"
        )
        self.weights_button.clicked.connect(self.choose_gguf)
        buttons.addWidget(self.weights_button)
        self.limit_spin = forms.number_spin(0.01, 10_000, 2, 0.5, " GB", 2.0)
        self.limit_spin.setPrefix("up to ")
        # A file's size, not a GPU's memory: in GB of 10^9 bytes, as model files are sized
        # for download and as the CLI's --max-file-gb counts it.
        self.limit_spin.setToolTip(FILE_LIMIT_TIP)
        buttons.addWidget(self.limit_spin)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.progress_bar = StepProgressBar()
        layout.addWidget(self.progress_bar)
        self.status_label = QLabel()
        self.status_label.setObjectName("verifyStatus")
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status_label)
        self.tree = forms.ranked_tree(
            ["measured tokens/s", "÷ estimate", "date", "model, weights, lengths", "source"]
        )
        self.tree.headerItem().setToolTip(
            _Col.RATIO,
            "measured ÷ GPUDesk's estimate of the same workload before calibration "
            "(rows of another workload: ÷ the estimate made for them when stored)",
        )
        header = self.tree.header()
        header.setSectionResizeMode(0, header.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(_Col.WORKLOAD, header.ResizeMode.Stretch)
        self.tree.setMinimumHeight(60)
        layout.addWidget(self.tree, 1)
        self.set_verify_problem(None)
        self._sync()

    def say(self, text: str) -> None:
        """The line under the buttons (hidden when there is nothing to say)."""
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    # -- rows --------------------------------------------------------------------------

    def show_rows(
        self, estimate: SpeedEstimate | None, rows: Sequence[MeasuredRow], problem: str | None
    ) -> None:
        """The selected ``estimate``'s measured ``rows``; ``problem``: the database's."""
        self.rows = list(rows)
        self.tree.clear()
        if estimate is None:
            self.title_label.setText("<b>Measured</b>: select a GPU above.")
        else:
            own = [row for row in rows if row.same_workload]
            name = html.escape(f"{estimate.name} × {estimate.count}")
            if own:
                best = own[0]
                said = (
                    f"<b>Measured</b> on {name}: "
                    f"<b>{figure_text(best.measurement.tokens_per_s)}</b> tokens/s "
                    f"({html.escape(best.note())}"
                    + (f"; {html.escape(best.ratio_text())}" if best.ratio is not None else "")
                    + ")"
                    + (f", and {len(own) - 1} more of this workload" if len(own) > 1 else "")
                )
            else:
                said = f"<b>Measured</b> on {name}: {NO_MEASUREMENT}"
                others = len(rows)
                if others:
                    said += f" ({others} of other workloads on it below)"
            if problem:
                said += (
                    f" — <span style='color:{forms.error_color()}'>{html.escape(problem)}</span>"
                )
            self.title_label.setText(said + ".")
        for row in rows:
            m = row.measurement
            item = QTreeWidgetItem()
            item.setText(_Col.VALUE, figure_text(m.tokens_per_s))
            ratio = row.ratio_text()
            item.setText(_Col.RATIO, ratio.split(" of ")[0] if ratio.startswith("×") else "—")
            item.setText(_Col.DATE, row.date)
            item.setText(_Col.WORKLOAD, row.workload_text())
            item.setText(_Col.SOURCE, row.source_text())
            item.setToolTip(_Col.SOURCE, m.source)
            item.setToolTip(_Col.RATIO, row.ratio_text())
            if m.note:
                item.setToolTip(_Col.WORKLOAD, m.note)
            for column in (_Col.VALUE, _Col.RATIO):
                item.setTextAlignment(
                    column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
            if not row.same_workload:
                for column in range(5):
                    item.setForeground(column, self.palette().placeholderText())
            self.tree.addTopLevelItem(item)
        self.tree.setVisible(bool(rows))

    # -- verify ------------------------------------------------------------------------

    def set_devices(self, devices: Sequence[tuple[str, object]]) -> None:
        """This machine's GPUs (name, catalog entry) beside its CPU, for the measurement."""
        current = self.device_combo.currentText()
        self.device_combo.blockSignals(True)
        self.device_combo.clear()
        self.device_combo.addItem("this machine's CPU", None)
        for name, entry in devices:
            self.device_combo.addItem(name, entry)
        self.device_combo.setCurrentIndex(max(0, self.device_combo.findText(current)))
        self.device_combo.blockSignals(False)

    def device_entry(self) -> object:
        return self.device_combo.currentData()

    def set_verify_problem(self, problem: str | None) -> None:
        """Why Verify cannot run for the selected workload (None: it can)."""
        self._problem = problem
        if llama_cpp_version() is None:
            self._problem = f"Verify needs llama-cpp-python: {INSTALL_HINT}"
        self.verify_button.setToolTip(
            self._problem or "Run this workload here with llama.cpp and store the measurement"
        )
        if self._worker is None and not self.progress_bar.isVisible():
            self.say(self._problem or "")
        self._sync()

    def choose_gguf(self) -> None:
        if self.gguf_path is not None:
            self.set_gguf(None)
            return
        name, _filter = QFileDialog.getOpenFileName(
            self, "A GGUF model file to measure", "", "GGUF files (*.gguf);;All files (*)"
        )
        if name:
            self.set_gguf(Path(name))

    def set_gguf(self, path: Path | None) -> None:
        self.gguf_path = path
        if path is None:
            self.weights_button.setText("Use a GGUF file…")
            self.limit_spin.setVisible(True)
        else:
            self.weights_button.setText(f"{path.name} (random weights instead)")
            self.limit_spin.setVisible(False)

    @property
    def busy(self) -> bool:
        return self._worker is not None

    def _sync(self) -> None:
        running = self._worker is not None
        self.verify_button.setEnabled(not running and not self._problem and not self._closed)
        self.cancel_button.setEnabled(running)
        self.cancel_button.setVisible(running)
        for widget in (self.device_combo, self.weights_button, self.limit_spin):
            widget.setEnabled(not running)

    def start_verify(self) -> None:
        if self._worker is None and not self._closed:
            self.verify_requested.emit()

    def run_job(self, job: VerifyJob) -> None:
        """Measure ``job`` on a worker, with progress and Cancel (one at a time)."""
        if self._worker is not None or self._closed:
            return
        store = self.store

        def work(progress: Progress) -> VerifyOutcome:
            return run_job(job, progress, store)

        worker = wired_worker(
            work,
            owner=self,
            progressed=self.progress_bar.advance,
            finished=self._on_finished,
            cancelled=self._on_cancelled,
            failed=self._on_failed,
            done=self._on_done,
        )
        self._worker = worker
        self.progress_bar.begin("starting")
        self.say(f"Measuring {job.model} with llama.cpp…")
        self._sync()
        worker.start()

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self.say("Cancelling…")
            self.cancel_button.setEnabled(False)

    def _on_finished(self, result: object) -> None:
        if not isinstance(result, VerifyOutcome):
            return
        self.progress_bar.finish()
        self.outcome = result
        self.say(outcome_text(result))
        self.verified.emit(result)

    def _on_cancelled(self) -> None:
        self.progress_bar.finish()
        self.say("Cancelled: nothing was stored.")

    def _on_failed(self, message: str) -> None:
        self.progress_bar.finish()
        self.say(f"The measurement did not run: {message}")

    def _on_done(self) -> None:
        self._worker = None
        if not self._closed:
            self._sync()

    def shutdown(self) -> None:
        """Cancel a measurement in flight and wait for it; safe to call twice."""
        self._closed = True
        if self._worker is not None:
            self._worker.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)


def outcome_text(outcome: VerifyOutcome) -> str:
    """Estimate, measurement and ratio, as ``speed --verify`` prints them, in one line."""
    estimate = outcome.estimate
    measured = outcome.measured
    if not outcome.tokens_per_s:
        return (
            f"Measured nothing on {estimate.name} ({measured.stopped or 'no tokens'}); "
            "nothing was stored."
        )
    text = (
        f"Measured {figure_text(outcome.tokens_per_s)} tokens/s on {estimate.name}; "
        f"the estimate was {figure_text(estimate.tokens_per_s)} "
        f"(ratio {outcome.ratio:.2f}), in {measured.seconds:.1f} s with "
        f"llama-cpp-python {measured.engine_version}"
    )
    if measured.stopped:
        text += f"; stopped early: {measured.stopped}"
    if outcome.stored_id is not None:
        text += (
            f". Stored as measurement {outcome.stored_id}; estimates here are calibrated with it"
        )
    return text + "."


__all__ = ["NO_MEASUREMENT", "MeasuredPanel", "VerifyError", "outcome_text"]
