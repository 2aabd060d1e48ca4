"""Import measurements…: llama-bench and vLLM result files into the user's measurements.

The files go through the same importer as ``gpudesk measurements import``
(:func:`gpudesk.measurements.rows.import_files`) on a worker thread; the dialog
shows each file's format and rows, every refused row with its reason, and a file
it cannot read with why. What a file does not say (vLLM results name no GPU) comes
from the dialog's GPU, model, format and backend choices, as the CLI's flags.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSpinBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.measurements.file_import import ImportHints
from gpudesk.measurements.rows import ImportReport, import_files
from gpudesk.measurements.store import MeasurementStore
from gpudesk.progress import Progress
from gpudesk.ui.plan import forms
from gpudesk.ui.worker import TaskWorker
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.presets import load_presets

FILE_FILTER = "Benchmark results (*.json *.jsonl *.csv *.md *.txt);;All files (*)"
_ASK_FILE = "__file__"
_BACKENDS = ("cuda", "rocm", "vulkan", "metal", "sycl", "cpu")
_QUANTS = (
    "fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "awq", "gptq", "mxfp4",
    "q4_0", "q4_k_m", "q5_k_m", "q6_k", "q8_0",
)  # fmt: skip


class ImportDialog(QDialog):
    """Choose result files and what they do not say; import them; see what came in.

    Signals:
        imported(object): an :class:`ImportReport` that stored at least one row.
    """

    imported = Signal(object)

    def __init__(
        self,
        entries: Sequence[CatalogEntry],
        store: MeasurementStore,
        *,
        model_id: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import measurements")
        self.entries = list(entries)
        self.store = store
        self.paths: list[Path] = []
        self.report: ImportReport | None = None
        self._worker: TaskWorker | None = None
        self._closed = False
        layout = QVBoxLayout(self)
        intro = QLabel(
            "llama-bench results (-o json, jsonl, csv or its markdown table), "
            "vllm bench serve --save-result or vllm bench throughput --output-json files, "
            "and GPUDesk measurement exports. Rows already stored are skipped."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        files_row = QHBoxLayout()
        self.file_list = QListWidget()
        self.file_list.setMinimumHeight(60)
        self.file_list.setMaximumHeight(110)
        files_row.addWidget(self.file_list, 1)
        file_buttons = QVBoxLayout()
        self.add_button = QPushButton("Add files…")
        self.add_button.clicked.connect(self.choose_files)
        self.clear_button = QPushButton("Clear")
        self.clear_button.clicked.connect(self.clear_files)
        file_buttons.addWidget(self.add_button)
        file_buttons.addWidget(self.clear_button)
        file_buttons.addStretch(1)
        files_row.addLayout(file_buttons)
        layout.addLayout(files_row)

        form = QFormLayout()
        self.gpu_combo = forms.combo()
        self.gpu_combo.addItem("as the file says", _ASK_FILE)
        self.gpu_combo.addItem("this machine's CPU", "cpu")
        for entry in sorted(self.entries, key=lambda item: item.name.lower()):
            self.gpu_combo.addItem(entry.name, entry.id)
        self.gpu_combo.setToolTip("vLLM results name no GPU: choose the one they ran on")
        form.addRow("GPU", self.gpu_combo)
        self.count_spin = QSpinBox()
        self.count_spin.setRange(0, 100_000)
        self.count_spin.setSpecialValueText("as the file says")
        form.addRow("GPUs", self.count_spin)
        self.model_combo = forms.combo()
        self.model_combo.addItem("as the file says", _ASK_FILE)
        for preset in load_presets():
            if preset.shape is not None:
                self.model_combo.addItem(preset.name, preset.id)
        if model_id is not None and self.model_combo.findData(model_id) >= 0:
            # offered, not chosen: a file that names its model keeps its own name
            self.model_combo.setItemText(
                self.model_combo.findData(model_id),
                f"{self.model_combo.itemText(self.model_combo.findData(model_id))} "
                "(the Plan tab's model)",
            )
        self.model_combo.setToolTip(
            "With a preset the rows get GPUDesk's estimate for the same workload, so "
            "they can calibrate later estimates"
        )
        form.addRow("Model", self.model_combo)
        self.quant_combo = forms.combo()
        self.quant_combo.addItem("as the file says", _ASK_FILE)
        for quant in _QUANTS:
            self.quant_combo.addItem(quant, quant)
        form.addRow("Weights", self.quant_combo)
        self.backend_combo = forms.combo()
        self.backend_combo.addItem("as the file says", _ASK_FILE)
        for backend in _BACKENDS:
            self.backend_combo.addItem(backend, backend)
        form.addRow("Backend", self.backend_combo)
        layout.addLayout(form)

        self.report_view = QTextBrowser()
        self.report_view.setOpenLinks(False)
        self.report_view.setMinimumHeight(160)
        self.report_view.setPlaceholderText("What each file gave appears here.")
        layout.addWidget(self.report_view, 1)
        self.status_label = QLabel()
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.setWordWrap(True)
        layout.addWidget(self.status_label)
        self.buttons = QDialogButtonBox()
        self.import_button = self.buttons.addButton(
            "Import", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.import_button.clicked.connect(self.start_import)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.close_button.clicked.connect(self.close)
        layout.addWidget(self.buttons)
        self.resize(760, 640)
        self._sync()

    # -- files -------------------------------------------------------------------------

    def choose_files(self) -> None:
        names, _filter = QFileDialog.getOpenFileNames(self, "Import measurements", "", FILE_FILTER)
        self.add_files([Path(name) for name in names])

    def add_files(self, paths: Sequence[Path]) -> None:
        for path in paths:
            if path not in self.paths:
                self.paths.append(path)
                self.file_list.addItem(str(path))
        self._sync()

    def clear_files(self) -> None:
        self.paths = []
        self.file_list.clear()
        self._sync()

    def _sync(self) -> None:
        busy = self._worker is not None
        self.import_button.setEnabled(bool(self.paths) and not busy)
        for widget in (self.add_button, self.clear_button, self.gpu_combo, self.model_combo):
            widget.setEnabled(not busy)

    # -- importing ---------------------------------------------------------------------

    def hints(self) -> ImportHints:
        def chosen(combo: object) -> str | None:
            value = combo.currentData()  # type: ignore[attr-defined]
            return None if value == _ASK_FILE else str(value)

        by_name = {entry.name.lower(): entry.id for entry in self.entries}
        entries = list(self.entries)

        def resolve(name: str) -> str | None:
            from gpudesk.catalog.query import NameLookupError, find_entry

            if name.lower() in by_name:
                return by_name[name.lower()]
            try:
                return find_entry(entries, name).id
            except NameLookupError:
                return None

        return ImportHints(
            gpu_id=chosen(self.gpu_combo),
            count=self.count_spin.value() or None,
            model=chosen(self.model_combo),
            quant=chosen(self.quant_combo),
            backend=chosen(self.backend_combo),
            resolve_gpu=resolve,
        )

    def start_import(self) -> None:
        if self._worker is not None or not self.paths:
            return
        hints = self.hints()
        paths = list(self.paths)
        entries = list(self.entries)
        store = self.store
        shape = None
        if hints.model is not None:
            from gpudesk.speed.shapes import shape_for

            try:
                shape = shape_for(hints.model)
            except PlanningInputError:
                shape = None  # the rows keep the name, without an estimate

        def work(progress: Progress) -> ImportReport:
            return import_files(paths, hints, entries, store, shape=shape, progress=progress)

        worker = TaskWorker(work, owner=self)
        worker.progressed.connect(self._on_progress)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        worker.done.connect(self._on_done)
        self._worker = worker
        self.status_label.setText("Importing…")
        self._sync()
        worker.start()

    @property
    def busy(self) -> bool:
        return self._worker is not None

    def _on_progress(self, _fraction: float, message: str) -> None:
        self.status_label.setText(f"Importing: {message}…")

    def _on_finished(self, result: object) -> None:
        if not isinstance(result, ImportReport):
            return
        self.report = result
        self.report_view.setHtml(report_html(result))
        if result.store_error:
            self.status_label.setText(f"Nothing was stored: {result.store_error}")
        elif not result.rows:
            self.status_label.setText("Nothing could be imported: see the reasons above.")
        else:
            self.status_label.setText(
                f"Added {result.added}, already stored {result.already_stored}."
            )
        if result.added or result.already_stored:
            self.imported.emit(result)

    def _on_failed(self, message: str) -> None:
        self.status_label.setText(f"The import failed: {message}")

    def _on_done(self) -> None:
        self._worker = None
        if not self._closed:
            self._sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        self._closed = True
        if self._worker is not None:
            self._worker.shutdown()
        super().closeEvent(event)


#: the importer's CLI words for what is missing, and the dialog's
_APP_WORDS = (
    ("give --gpu", "choose its GPU above"),
    ("give --model", "choose its model above"),
    ("give --count", "set its GPUs above"),
)


def app_words(reason: str) -> str:
    """An importer reason in the dialog's words: its controls, not the CLI's flags."""
    for cli, app in _APP_WORDS:
        reason = reason.replace(cli, app)
    return reason


def report_html(report: ImportReport) -> str:
    """Each file: its format and rows, refused rows with their reasons; unreadable files."""
    parts = []
    for item in report.files:
        name = html.escape(item.path.name)
        if item.error is not None:
            parts.append(
                f"<p><b>{name}</b>: <span style='color:{forms.error_color()}'>not imported"
                f"</span> — {html.escape(app_words(item.error))}</p>"
            )
            continue
        parts.append(
            f"<p><b>{name}</b>: {html.escape(item.source_format or '')}, "
            f"{item.rows} measurement(s)"
            + (f", {len(item.refused)} refused" if item.refused else "")
            + "</p>"
        )
        if item.refused:
            shown = item.refused[:50]
            parts.append(
                "<ul>"
                + "".join(f"<li>refused {html.escape(app_words(reason))}</li>" for reason in shown)
                + (
                    f"<li>… and {len(item.refused) - len(shown)} more</li>"
                    if len(item.refused) > len(shown)
                    else ""
                )
                + "</ul>"
            )
    if report.store_error:
        parts.append(f"<p><b>Nothing stored</b>: {html.escape(report.store_error)}</p>")
    else:
        parts.append(f"<p>Added {report.added}, already stored {report.already_stored}.</p>")
    return "".join(parts)
