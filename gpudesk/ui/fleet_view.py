"""The Fleet tab: a Ray cluster's GPUs from a survey file or a survey run from here.

Signals:
    compare_tab_requested(): the user sent a model to Compare; show that tab.
    status_message(str): a short line for the status bar.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.names import short_name
from gpudesk.fleet.checks import (
    Outlier,
    ReferenceLine,
    outlier_line,
    reference_lines,
    summarise,
)
from gpudesk.fleet.document import SurveyFileError, SurveyView, parse_survey, read_survey
from gpudesk.fleet.inventory import InventoryRow, inventory
from gpudesk.progress import Progress
from gpudesk.storage import atomic_write_text
from gpudesk.ui import theme
from gpudesk.ui.fleet_chart import draw_gemm_bars, draw_no_bars
from gpudesk.ui.fleet_table import (
    COLUMNS,
    REFERENCE_TIP,
    SLOW,
    colour_rows,
    fill_table,
    make_inventory_table,
    row_cells,
    row_kind,
)
from gpudesk.ui.state import AppState
from gpudesk.ui.worker import TaskWorker

# Re-exported: tests and callers import the table's names from here.
__all__ = [
    "COLUMNS",
    "NO_RAY_TEXT",
    "REFERENCE_TIP",
    "FleetView",
    "ray_installed",
    "row_cells",
    "row_kind",
]

#: Beyond this many devices per model the bars are too thin to name each.
#: Said on the Survey button and up front when this Python cannot import Ray.
NO_RAY_TEXT = (
    "Surveying needs Ray (pip install '.[fleet]' from the GPUDesk checkout) or Slurm "
    "(srun and scontrol on PATH); this machine has neither."
)


def ray_installed() -> bool:
    """Whether this Python can import Ray (looked up, not imported: Ray is slow to import)."""
    return importlib.util.find_spec("ray") is not None


class FleetView(QWidget):
    """Inventory table, per-model throughput chart and outliers of one survey."""

    compare_tab_requested = Signal()
    status_message = Signal(str)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.survey: SurveyView | None = None
        self.document: dict[str, Any] | None = None
        self.rows: list[InventoryRow] = []
        self.outliers: list[Outlier] = []
        self.reference_lines: list[ReferenceLine] = []
        self._worker: TaskWorker | None = None

        self.open_button = QPushButton("Open survey…")
        self.scheduler_combo = QComboBox()
        self.scheduler_combo.addItem("Ray", "ray")
        self.scheduler_combo.addItem("Slurm", "slurm")
        self.scheduler_combo.setToolTip(
            "Ray: a running Ray cluster at the address; Slurm: the cluster this machine "
            "submits to (one srun step, one task per node)"
        )
        self._offer_schedulers()
        self.address_edit = QLineEdit("auto")
        self.address_edit.setPlaceholderText("auto, HOST:PORT or ray://HOST:PORT")
        self.address_edit.setToolTip("The Ray cluster to survey, as Ray accepts it")
        self._scheduler_changed()
        self.bench_combo = QComboBox()
        self.bench_combo.setAccessibleName("What the survey runs on each node")
        self.bench_combo.addItem("Detection only", "none")
        self.bench_combo.addItem("Detection + quick benchmark", "quick")
        self.timeout_spin = QDoubleSpinBox()
        self.timeout_spin.setRange(1, 86_400)
        self.timeout_spin.setValue(300)
        self.timeout_spin.setDecimals(0)
        self._timeout_words()
        self.survey_button = QPushButton("Survey cluster")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.save_button = QPushButton("Save survey…")
        self.save_button.setEnabled(False)
        bar = QHBoxLayout()
        bar.addWidget(self.open_button)
        bar.addSpacing(16)
        bar.addWidget(QLabel("Cluster:"))
        bar.addWidget(self.scheduler_combo)
        bar.addWidget(self.address_edit, 1)
        bar.addWidget(self.bench_combo)
        bar.addWidget(self.timeout_spin)
        bar.addWidget(self.survey_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.save_button)

        self.summary_label = QLabel(
            "No survey yet. Open a file that “gpudesk fleet survey --out FILE” wrote"
            + (", or survey a running cluster." if any(self._has.values()) else ". " + NO_RAY_TEXT)
        )
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        self.summary_label.setWordWrap(True)

        self.model, self.table = make_inventory_table(self)

        self.model_combo = QComboBox()
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.compare_button = QPushButton("Compare this model")
        self.compare_button.setToolTip("Add the model's catalog entry to the Compare tab")
        self.plot = pg.PlotWidget()
        self.plot.setAccessibleName("Measured GEMM per device of the chosen model")
        self.plot.setMinimumHeight(220)
        theme.follow_theme(self.plot)
        # Row colours and the chart's labels are drawn in the theme's colours: redo both.
        theme.notifier().changed.connect(self._on_theme_changed)
        self.outlier_text = QPlainTextEdit()
        self.outlier_text.setAccessibleName("Outliers")
        self.outlier_text.setReadOnly(True)
        self.outlier_text.setPlaceholderText("Outliers appear here.")
        chart_bar = QHBoxLayout()
        chart_bar.addWidget(QLabel("Model:"))
        chart_bar.addWidget(self.model_combo, 1)
        chart_bar.addWidget(self.compare_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addLayout(chart_bar)
        right_layout.addWidget(self.plot, 2)
        right_layout.addWidget(QLabel("Outliers"))
        right_layout.addWidget(self.outlier_text, 1)
        splitter = QSplitter()
        splitter.addWidget(self.table)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([840, 540])

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.summary_label)
        layout.addWidget(splitter, 1)

        self.open_button.clicked.connect(self.open_file_dialog)
        self.survey_button.clicked.connect(self.start_survey)
        self.cancel_button.clicked.connect(self.cancel_survey)
        self.save_button.clicked.connect(self.save_file_dialog)
        self.model_combo.currentIndexChanged.connect(self._draw_chart)
        self.compare_button.clicked.connect(self.compare_selected_model)
        self._update_buttons()
        self._draw_chart()

    # loading ----------------------------------------------------------------
    def open_file_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, "Open fleet survey", str(Path.home()), "Survey JSON (*.json);;All files (*)"
        )
        if name:
            self.open_file(Path(name))

    def open_file(self, path: Path) -> bool:
        """Show the survey in ``path``; on a bad file say why and keep what is shown."""
        try:
            view, data = read_survey(path)
        except SurveyFileError as exc:
            self.status_message.emit(f"Cannot open the survey: {exc}")
            self.summary_label.setText(f"Cannot open the survey: {exc}")
            return False
        self.show_survey(view, data)
        self.status_message.emit(f"Opened {path.name}")
        return True

    def model_name(self, model: str) -> str:
        """A catalog id ("h100-sxm5") as its short name ("H100 SXM5 80GB"); else as given."""
        entry = self.state.catalog.by_id(model)
        return short_name(entry) if entry is not None else model

    def show_survey(self, view: SurveyView, data: dict[str, Any]) -> None:
        summary = summarise(view.nodes)
        self.survey, self.document = view, {**data, "summary": summary}
        self.state.fleet_survey = view
        self.outliers = [Outlier(**item) for item in summary["outliers"]]
        self.reference_lines = reference_lines(view.nodes)
        self.rows = inventory(list(view.nodes), self.outliers)
        cluster = view.cluster
        models = ", ".join(
            f"{count} × {self.model_name(model)}" for model, count in summary["by_model"].items()
        )
        self.summary_label.setText(
            f"{cluster.title}, surveyed "
            f"{cluster.surveyed_at:%Y-%m-%d %H:%M} UTC: {_count(summary['nodes'], 'node')}, "
            f"{_count(summary['gpus'], 'GPU')}, {summary['nodes_failed']} failed, "
            f"{_count(len(self.outliers), 'outlier')}" + (f". {models}" if models else "")
        )
        self._fill_table()
        self._fill_outliers()
        self._fill_models()
        self._update_buttons()

    def _fill_table(self) -> None:
        fill_table(self.model, self.table, self.rows, self.model_name)

    def _on_theme_changed(self, _dark: bool) -> None:
        colour_rows(self.model, self.table)
        self._draw_chart()

    def _fill_outliers(self) -> None:
        labels = {node.node_id: node.label for node in self.survey.nodes} if self.survey else {}
        lines = []
        for outlier in self.outliers:
            lines.append(outlier_line(outlier, labels.get(outlier.node_id, outlier.node_id)))
        failed = [row for row in self.rows if row.error is not None]
        lines.extend(f"{row.node}: node failed: {row.error}" for row in failed)
        if not lines:
            lines.append("None: every device is in line with its fleet.")
        if self.reference_lines:
            lines.append("")
            lines.append("Against the published reference (one line per model, not per GPU):")
            lines.extend(line.message for line in self.reference_lines)
        self.outlier_text.setPlainText("\n".join(lines))

    def _fill_models(self) -> None:
        self.model_combo.blockSignals(True)
        self.model_combo.clear()
        counts: dict[str, int] = {}
        for row in self.rows:
            if row.error is None:
                counts[row.model] = counts.get(row.model, 0) + 1
        for model, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            self.model_combo.addItem(f"{self.model_name(model)} ({count})", model)
        self.model_combo.blockSignals(False)
        self._draw_chart()

    def selected_model(self) -> str | None:
        value = self.model_combo.currentData()
        return str(value) if value is not None else None

    def model_points(self, model: str) -> list[tuple[str, float, bool]]:
        """(device label, headline GEMM value, is slow against its fleet median) for each
        device of ``model``."""
        points = []
        for row in self.rows:
            if row.model == model and row.gemm is not None and row.gemm.value is not None:
                device = "CPU" if row.gpu_index is None else f"GPU {row.gpu_index}"
                slow = row_kind(row) == SLOW
                points.append((f"{row.node} {device}", row.gemm.value, slow))
        return points

    def _draw_chart(self) -> None:
        """Horizontal bars, one per device of the chosen model (:mod:`gpudesk.ui.fleet_chart`)."""
        model = self.selected_model()
        points = self.model_points(model) if model else []
        gemm = next((row.gemm for row in self.rows if row.model == model and row.gemm), None)
        if not points or gemm is None:
            draw_no_bars(self.plot, surveyed=bool(self.rows))
            return
        draw_gemm_bars(
            self.plot, points, f"{gemm.label} per device, {self.model_name(model or '')}", gemm.unit
        )

    def compare_selected_model(self) -> None:
        model = self.selected_model()
        known = {entry.id for entry in self.state.entries()}
        if model is None or model not in known:
            self.status_message.emit(
                f"{model or 'This model'} is not in the catalog: nothing to compare"
            )
            return
        added = self.state.add_to_compare(model)
        self.status_message.emit(
            f"Added {model} to Compare"
            if added
            else f"{model} is already in Compare (or it is full)"
        )
        self.compare_tab_requested.emit()

    # surveying ----------------------------------------------------------------
    def start_survey(self) -> None:
        if self._worker is not None:
            return
        address = self.address_edit.text().strip() or "auto"
        bench = str(self.bench_combo.currentData())
        timeout_s = float(self.timeout_spin.value())
        scheduler = str(self.scheduler_combo.currentData())

        def work(progress: Progress) -> dict[str, Any]:
            if scheduler == "slurm":
                from gpudesk.fleet.slurm import survey_slurm

                return survey_slurm(bench=bench, timeout_s=timeout_s, progress=progress)  # type: ignore[arg-type]
            from gpudesk.fleet.survey import survey

            return survey(address, bench=bench, timeout_s=timeout_s, progress=progress)  # type: ignore[arg-type]

        worker = TaskWorker(work, owner=self)
        worker.progressed.connect(lambda _fraction, text: self.summary_label.setText(text))
        worker.finished.connect(self._survey_finished)
        worker.failed.connect(lambda text: self.summary_label.setText(f"Survey failed: {text}"))
        worker.cancelled.connect(lambda: self.summary_label.setText("Survey cancelled."))
        worker.done.connect(self._survey_done)
        self._worker = worker
        where = "the Slurm controller" if scheduler == "slurm" else address
        self.summary_label.setText(f"Connecting to {where}…")
        self._update_buttons()
        worker.start()

    def _offer_schedulers(self) -> None:
        """Enable the schedulers this machine has (Ray installed, srun on PATH); pick one.

        Only cheap checks here (the window must not wait on a controller): an
        unreachable cluster is the survey's own error, in words.
        """
        import shutil

        has = self._has = {
            "ray": ray_installed(),
            "slurm": shutil.which("srun") is not None and shutil.which("scontrol") is not None,
        }
        model = self.scheduler_combo.model()
        for row in range(self.scheduler_combo.count()):
            item = model.item(row) if isinstance(model, QStandardItemModel) else None
            if item is not None:
                item.setEnabled(has[str(self.scheduler_combo.itemData(row))])
        # A machine with srun is a cluster's login node: Slurm first; else Ray.
        self.scheduler_combo.setCurrentIndex(1 if has["slurm"] or not has["ray"] else 0)
        self.scheduler_combo.currentIndexChanged.connect(self._scheduler_changed)
        self._scheduler_changed()

    def _scheduler_changed(self) -> None:
        if hasattr(self, "address_edit"):
            self.address_edit.setEnabled(self.scheduler_combo.currentData() == "ray")
        if hasattr(self, "timeout_spin"):
            self._timeout_words()
        if hasattr(self, "survey_button"):
            self._update_buttons()

    def _timeout_words(self) -> None:
        """Ray's timeout runs per node from its task's start; Slurm's covers the whole step
        from submission, queue time included (fleet.slurm.survey_slurm)."""
        if self.scheduler_combo.currentData() == "slurm":
            self.timeout_spin.setSuffix(" s in all")
            self.timeout_spin.setToolTip(
                "How long the whole Slurm step may take, from submission (time in the queue "
                "counts); nodes that have not answered by then count as failed"
            )
        else:
            self.timeout_spin.setSuffix(" s per node")
            self.timeout_spin.setToolTip("How long each node may take before it counts as failed")

    def can_survey(self) -> bool:
        """Whether the chosen scheduler is on this machine (Ray importable, srun on PATH)."""
        return self._has.get(str(self.scheduler_combo.currentData()), False)

    def cancel_survey(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def _survey_finished(self, document: object) -> None:
        if not isinstance(document, dict):
            return
        view, data = parse_survey(json.dumps(document, allow_nan=False), "survey")
        self.show_survey(view, data)

    def _survey_done(self) -> None:
        self._worker = None
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self._worker is not None
        self.survey_button.setEnabled(not running and self.can_survey())
        if not any(self._has.values()):
            self.survey_button.setToolTip(NO_RAY_TEXT)
        elif not self.can_survey():
            self.survey_button.setToolTip(f"{self.scheduler_combo.currentText()} is not here")
        else:
            self.survey_button.setToolTip(
                f"Survey the {self.scheduler_combo.currentText()} cluster and show its GPUs"
            )
        self.cancel_button.setEnabled(running)
        self.open_button.setEnabled(not running)
        self.save_button.setEnabled(self.document is not None and not running)
        self.compare_button.setEnabled(self.model_combo.count() > 0)

    def save_file_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self, "Save fleet survey", str(Path.home() / "survey.json"), "Survey JSON (*.json)"
        )
        if name:
            self.save_file(Path(name))

    def save_file(self, path: Path) -> bool:
        if self.document is None:
            return False
        try:
            atomic_write_text(path, json.dumps(self.document, indent=2, allow_nan=False) + "\n")
        except OSError as exc:
            self.status_message.emit(f"Cannot save {path}: {exc.strerror or exc}")
            return False
        self.status_message.emit(f"Saved {path}")
        return True

    def shutdown(self) -> None:
        """Stop a running survey before the window closes."""
        if self._worker is not None:
            self._worker.shutdown()


def _count(number: int, noun: str) -> str:
    """ "1 node", "2 nodes"."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
