"""The Plan tab's "How fast?" page: tokens/s across the catalog, its limit and its cost.

The model comes from the "Will it fit?" page's form (one model choice for both pages);
this page's own form (:class:`~gpudesk.ui.plan.speed_form.SpeedForm`) adds what speed
depends on: the mode, engine, weight and KV formats, lengths, concurrency, training
tokens. Estimates are cheap pure functions of the forms (:mod:`gpudesk.speed`),
so the page recomputes live, folding bursts of edits.

Beside the estimates, the user's own measurements (:mod:`gpudesk.ui.plan.measured_panel`):
the selected GPU's measured rows, marked on the roofline, Import measurements… and
Verify on this machine. Estimates are calibrated with the stored rows that match them
(:func:`gpudesk.measurements.calibration.calibrate_all`), as ``gpudesk speed`` does.

The table and its words are :mod:`gpudesk.ui.plan.speed_table`, the roofline
:mod:`gpudesk.ui.plan.speed_roofline`; this module computes and wires them.

Serving simulates each GPU's engine scheduler (seconds for the catalog), so in serve mode
the ranking runs on a worker (:mod:`gpudesk.ui.plan.speed_load`) with progress and
Cancel, and the selected GPU's latency against request rate is drawn beside the roofline
(:class:`~gpudesk.render.latency.LatencyChartWidget`) from a sweep of rates, also on a
worker. The other modes are quick closed forms and stay on the GUI thread. GPUs the
engine cannot run the request on are listed under the table with the reason, never
ranked.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.measurements.calibration import calibrate_all
from gpudesk.measurements.rows import MeasuredRow, rows_for
from gpudesk.measurements.store import MeasurementStore, StoredMeasurement, StoreError
from gpudesk.measurements.verify_here import CPU_ID, VerifyJob, VerifyOutcome, why_not
from gpudesk.progress import Progress
from gpudesk.render.latency import LatencyChartWidget
from gpudesk.render.style import chart_style
from gpudesk.speed.estimate import (
    Mode,
    NotRunnable,
    SpeedEstimate,
    SpeedRequest,
    model_costs,
)
from gpudesk.speed.hardware import rates_for
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.planner import (
    CostSettings,
    RankedEstimates,
    SpeedWorkload,
    calibrate,
    estimate_for,
    rank_catalog,
    with_costs,
)
from gpudesk.speed.shapes import shape_from_preset
from gpudesk.ui import theme
from gpudesk.ui.plan import forms
from gpudesk.ui.plan.fit_form import WorkloadForm
from gpudesk.ui.plan.import_dialog import ImportDialog
from gpudesk.ui.plan.measured_panel import MeasuredPanel
from gpudesk.ui.plan.speed_form import SpeedForm
from gpudesk.ui.plan.speed_load import Curve, Ranked, Refused, curve_for, rank_under_load
from gpudesk.ui.plan.speed_roofline import ROOFLINE_GPUS, RooflineChart, no_roofline_text
from gpudesk.ui.plan.speed_table import (
    MEASURED_LABEL,
    basis_html,
    clear_tree,
    current_index,
    fill_tree,
    measured_html,
    not_supported_text,
    select_gpu as select_row,
    speed_tree,
    summary_html,
)
from gpudesk.ui.state import AppState
from gpudesk.ui.step_progress import StepProgressBar
from gpudesk.ui.worker import TaskWorker, wired_worker
from gpudesk.workload.architecture import ModelShape
from gpudesk.workload.errors import PlanningInputError

__all__ = ["MEASURED_LABEL", "ROOFLINE_GPUS", "SpeedPage"]


class SpeedPage(QWidget):
    """Its form, then ranked tokens/s for the workload, the roofline of the fastest GPUs, the basis.

    Signals:
        workload_changed(object): a new :class:`SpeedWorkload`, or None on bad input;
            the page also stores it in ``state.speed_workload`` for Compare and the PDF
            once the user set a workload (``workload_chosen``).
    """

    workload_changed = Signal(object)

    def __init__(
        self,
        state: AppState,
        model_form: WorkloadForm,
        parent: QWidget | None = None,
        *,
        store: MeasurementStore | None = None,
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.model_form = model_form
        self.store = store if store is not None else MeasurementStore()
        #: the user's stored measurements, read when the page starts and after each change
        self.stored_rows: list[StoredMeasurement] = []
        self.store_problem: str | None = None
        #: this machine's CPU as a device, once a Verify run on it has measured it
        self.cpu_entry: CatalogEntry | None = None
        #: the estimates before the user's measurements calibrated them, by GPU id
        self.uncalibrated: dict[str, SpeedEstimate] = {}
        self.model_id: str | None = None
        self.model_name: str | None = None
        self.import_dialog: ImportDialog | None = None
        self._cpu_worker: TaskWorker | None = None
        self._costs: ModelCosts | None = None
        self._shape: ModelShape | None = None
        self._request: SpeedRequest | None = None
        self.results: list[SpeedEstimate] = []
        self.measured_result: SpeedEstimate | None = None
        self.error: str | None = None
        #: (GPU id, reason) of the GPUs the engine cannot run the request on
        self.not_supported: list[tuple[str, str]] = []
        #: serving: the ranking and the latency curve in flight, each numbered so a
        #: late result of an older request is dropped
        self._rank_worker: TaskWorker | None = None
        self._curve_worker: TaskWorker | None = None
        self._serial = 0
        self._settings = CostSettings()
        self._timer = forms.update_timer(self, self.recompute_now)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._build_page())
        self.reload_measurements()
        model_form.edited.connect(self.schedule_update)
        model_form.checkpoint_quant_loaded.connect(self.form.use_checkpoint_quant)
        # Compare's "tokens/s for ..." row and the PDF's speed section follow a workload
        # the user set (a control edited on either Plan page), not the defaults shown on
        # merely opening Plan.
        self.workload_chosen = False
        model_form.edited.connect(self._mark_chosen)
        state.detected_changed.connect(self._on_detected)
        state.measured_changed.connect(self.schedule_update)
        state.catalog_changed.connect(self.schedule_update)
        theme.notifier().changed.connect(self._draw_roofline)
        theme.notifier().changed.connect(self._restyle_latency)

    # -- building ------------------------------------------------------------------

    def _build_page(self) -> QSplitter:
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setChildrenCollapsible(False)
        self.form = SpeedForm()
        self.form.edited.connect(self.schedule_update)
        self.form.edited.connect(self._mark_chosen)
        page.addWidget(self.form)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(8, 8, 8, 8)
        self.summary_label = QLabel()
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setWordWrap(True)
        right_layout.addWidget(self.summary_label)
        self.measured_label = QLabel()
        self.measured_label.setTextFormat(Qt.TextFormat.RichText)
        self.measured_label.setWordWrap(True)
        self.measured_label.hide()
        right_layout.addWidget(self.measured_label)
        busy_row = QHBoxLayout()
        self.progress_bar = StepProgressBar()
        busy_row.addWidget(self.progress_bar, 1)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the simulation under load")
        self.cancel_button.clicked.connect(self.cancel_work)
        self.cancel_button.hide()
        busy_row.addWidget(self.cancel_button)
        right_layout.addLayout(busy_row)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        ranking = QWidget()
        ranking_layout = QVBoxLayout(ranking)
        ranking_layout.setContentsMargins(0, 0, 0, 0)
        self.tree = speed_tree()
        self.tree.currentItemChanged.connect(self._on_selected)
        ranking_layout.addWidget(self.tree, 1)
        # never ranked: the GPUs the engine cannot run the request on, with the reason
        self.not_supported_label = QLabel()
        self.not_supported_label.setWordWrap(True)
        ranking_layout.addWidget(self.not_supported_label)
        self.not_supported_view = QTextBrowser()
        self.not_supported_view.setAccessibleName("Not supported list")
        self.not_supported_view.setMaximumHeight(66)  # about three lines, then it scrolls
        self.not_supported_view.setMinimumHeight(48)
        ranking_layout.addWidget(self.not_supported_view)
        self.not_supported_label.hide()
        self.not_supported_view.hide()
        splitter.addWidget(ranking)
        self.measured_panel = MeasuredPanel(self.store)
        # a signal, not a callback attribute: the panel holding the page's bound method
        # made a reference cycle, and the garbage collector then deleted a closed page's
        # widgets at a random moment (a crash inside QApplication.allWidgets())
        self.measured_panel.verify_requested.connect(self._on_verify_requested)
        self.measured_panel.import_requested.connect(self.open_import_dialog)
        self.measured_panel.verified.connect(self._on_verified)
        splitter.addWidget(self.measured_panel)
        self.roofline_stack = RooflineChart()
        self.roofline = self.roofline_stack.plot_widget
        self.roofline_note = self.roofline_stack.note
        self.legend = self.roofline_stack.legend
        self.latency_chart = LatencyChartWidget()
        self.latency_chart.set_style(chart_style(theme.is_dark()))
        self.charts = QTabWidget()
        self.charts.setDocumentMode(True)
        self.latency_tab = self.charts.addTab(self.latency_chart, "Latency vs rate")
        self.roofline_tab = self.charts.addTab(self.roofline_stack, "Roofline")
        self.charts.setTabVisible(self.latency_tab, False)
        self.charts.tabBar().setVisible(False)
        self.charts.setCurrentIndex(self.roofline_tab)
        splitter.addWidget(self.charts)
        self.basis_view = QTextBrowser()
        self.basis_view.setOpenExternalLinks(True)
        self.basis_view.setMinimumHeight(90)
        splitter.addWidget(self.basis_view)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setStretchFactor(2, 2)
        splitter.setStretchFactor(3, 1)
        right_layout.addWidget(splitter, 1)
        page.addWidget(right)
        page.setStretchFactor(1, 1)
        return page

    @property
    def measured_points(self) -> dict[str, list[float]]:
        """The TFLOPS of the measured stars on the roofline, by GPU id."""
        return self.roofline_stack.measured_points

    @property
    def workload_line(self) -> pg.InfiniteLine | None:
        """The roofline's dashed "this workload" line, when one is drawn."""
        return self.roofline_stack.workload_line

    # -- computing -----------------------------------------------------------------

    def _mark_chosen(self, *_args: object) -> None:
        self.workload_chosen = True

    def schedule_update(self, *_args: object) -> None:
        self._timer.start()

    def recompute_now(self) -> None:
        self._timer.stop()
        try:
            model = self.model_form.current_model()
            shape = shape_from_preset(model)
            request = self.form.current_request()
            costs = model_costs(
                shape,
                request.quant,
                request.kv_quant,
                gguf=request.engine.weights_in_gguf(request.mode),
            )
        except PlanningInputError as exc:
            self._show_error(str(exc))
            return
        self.form.error_label.hide()
        self.error = None
        self.form.show_model(f"{model.name}: {shape.summary()}")
        self.model_id, self.model_name = model.id, model.name
        self._costs, self._shape, self._request = costs, shape, request
        settings = CostSettings(cloud_hourly_usd=self.form.cloud_hourly_usd())
        self._settings = settings
        entries = self._entries()
        self.measured_panel.set_verify_problem(why_not(request))
        self._serial += 1
        self._stop_workers()
        serve = request.mode is Mode.SERVE
        self.charts.setTabVisible(self.latency_tab, serve)
        self.charts.tabBar().setVisible(serve)  # one tab needs no tab bar
        if serve:
            self.charts.setCurrentIndex(self.latency_tab)
            self._start_ranking(entries, costs, request, settings)
            return
        self.charts.setCurrentIndex(self.roofline_tab)
        self.latency_chart.set_curve(None)
        try:
            ranked = rank_catalog(
                entries,
                costs,
                request,
                max_count=self.form.max_count(),
                settings=settings,
            )
        except PlanningInputError as exc:
            self._show_error(str(exc))
            return
        self._apply_ranking(ranked)

    def _entries(self) -> list[CatalogEntry]:
        entries = list(self.state.entries())
        if self.cpu_entry is not None:
            entries.append(self.cpu_entry)
        return entries

    # -- serving on the worker -----------------------------------------------------

    @property
    def busy(self) -> bool:
        """A ranking or latency curve is being simulated."""
        return self._rank_worker is not None or self._curve_worker is not None

    def _start_ranking(
        self,
        entries: list[CatalogEntry],
        costs: ModelCosts,
        request: SpeedRequest,
        settings: CostSettings,
    ) -> None:
        serial, max_count = self._serial, self.form.max_count()
        self._clear_results()
        self.summary_label.setText(
            f"<b>{request.label}</b> — simulating the engine's scheduler on "
            f"{len(entries)} GPU types…"
        )
        self.latency_chart.set_curve(None, "The latency curve follows the ranking.")

        def work(progress: Progress) -> Ranked:
            return Ranked(
                serial,
                rank_under_load(
                    entries, costs, request, progress, max_count=max_count, settings=settings
                ),
            )

        worker = wired_worker(
            work,
            owner=self,
            progressed=self.progress_bar.advance,
            finished=self._on_ranked,
            cancelled=self._on_rank_cancelled,
            failed=self._on_rank_failed,
            done=self._on_rank_done,
        )
        self._rank_worker = worker
        self.progress_bar.begin("simulating under load")
        self.cancel_button.show()
        worker.start()

    def _on_ranked(self, outcome: object) -> None:
        if not isinstance(outcome, Ranked) or outcome.serial != self._serial:
            return  # an older request's ranking
        if isinstance(outcome.ranked, Refused):
            self._show_error(outcome.ranked.message)
            return
        self._apply_ranking(outcome.ranked)

    def _on_rank_cancelled(self) -> None:
        if self.sender() is not self._rank_worker:
            return  # an older request's ranking, cancelled for this one
        self.summary_label.setText(
            "Cancelled: the simulation under load was stopped. Change a control to run it again."
        )

    def _on_rank_failed(self, message: str) -> None:
        if self.sender() is not self._rank_worker:
            return
        self._show_error(f"the simulation under load failed: {message}")

    def _on_rank_done(self) -> None:
        # a worker cancelled for a newer request ends after that one started
        if self.sender() is self._rank_worker:
            self._rank_worker = None
        self._sync_busy()

    def _sync_busy(self) -> None:
        if not self.busy:
            self.progress_bar.finish()
            self.cancel_button.hide()

    def cancel_work(self) -> None:
        """Stop the ranking and the latency curve in flight (the Cancel button)."""
        for worker in (self._rank_worker, self._curve_worker):
            if worker is not None:
                worker.cancel()

    def _stop_workers(self) -> None:
        """Cancel what is in flight for an older request; its results are dropped."""
        self.cancel_work()

    def _start_curve(self, result: SpeedEstimate) -> None:
        request, costs = self._request, self._costs
        entry = next((item for item in self._entries() if item.id == result.gpu_id), None)
        if request is None or costs is None or entry is None or result.latency is None:
            self.latency_chart.set_curve(None, "No latency curve for this row.")
            return
        if self._curve_worker is not None:
            self._curve_worker.cancel()
        serial = self._serial

        def work(progress: Progress) -> Curve:
            return Curve(serial, result.gpu_id, curve_for(entry, costs, request, result, progress))

        worker = wired_worker(
            work,
            owner=self,
            progressed=self.progress_bar.advance,
            finished=self._on_curve,
            cancelled=self._on_curve_cancelled,
            failed=self._on_curve_failed,
            done=self._on_curve_done,
        )
        self._curve_worker = worker
        self.latency_chart.set_curve(None, f"Simulating {result.name} at a sweep of request rates…")
        self.progress_bar.begin(f"latency curve of {result.name}")
        self.cancel_button.show()
        worker.start()

    def _on_curve(self, outcome: object) -> None:
        if not isinstance(outcome, Curve) or outcome.serial != self._serial:
            return
        selected = self._selected()
        if selected is None or selected.gpu_id != outcome.gpu_id:
            return  # the selection moved on; its own curve is on the way
        self.latency_chart.set_curve(
            outcome.curve, None if outcome.curve is not None else "No latency curve for this row."
        )
        # the chart's highest rate is searched over every request; the ranking may search
        # a shorter run, so the table's figure can differ: say which is which
        curve = outcome.curve
        differs = (
            curve is not None
            and selected.max_rate_at_slo is not None
            and curve.max_rate_at_slo is not None
            and abs(curve.max_rate_at_slo - selected.max_rate_at_slo)
            > 0.01 * selected.max_rate_at_slo
        )
        self.latency_chart.setToolTip(
            "The highest rate meeting the SLO here is searched over every request, as the "
            f"lines are drawn; the table's {selected.max_rate_at_slo:.3g}/s comes from the "
            "ranking's shorter search."
            if differs and selected.max_rate_at_slo is not None
            else ""
        )

    def _on_curve_cancelled(self) -> None:
        if self.sender() is not self._curve_worker:
            return
        self.latency_chart.set_curve(None, "Cancelled: select a row to simulate its curve.")

    def _on_curve_failed(self, message: str) -> None:
        if self.sender() is not self._curve_worker:
            return
        self.latency_chart.set_curve(None, f"The latency curve failed: {message}")

    def _on_curve_done(self) -> None:
        if self.sender() is self._curve_worker:
            self._curve_worker = None
        self._sync_busy()

    def _restyle_latency(self, *_args: object) -> None:
        self.latency_chart.set_style(chart_style(theme.is_dark()))

    def _clear_results(self) -> None:
        self.results = []
        self.uncalibrated = {}
        self.measured_result = None
        self.not_supported = []
        self._clear_tree()
        self._fill_not_supported()
        self.basis_view.setHtml("")
        self._draw_roofline()

    def _fill_not_supported(self) -> None:
        count = len(self.not_supported)
        self.not_supported_label.setVisible(bool(count))
        self.not_supported_view.setVisible(bool(count))
        if not count:
            self.not_supported_view.clear()
            return
        names = {entry.id: entry.name for entry in self._entries()}
        self.not_supported_label.setText(
            f"<b>Not supported ({count})</b>, never ranked: the engine cannot run this "
            "request on them."
        )
        self.not_supported_view.setPlainText(not_supported_text(self.not_supported, names))

    # -- results -------------------------------------------------------------------

    def _apply_ranking(self, ranked: RankedEstimates) -> None:
        """Show a ranking of the current request (``_request``, ``_costs``)."""
        request, costs = self._request, self._costs
        if request is None or costs is None or self.model_name is None:
            return
        settings = self._settings
        self.not_supported = list(ranked.not_supported)
        self.uncalibrated = {item.gpu_id: item for item in ranked.results}
        # the user's measurements of the same GPU, engine and mode calibrate its estimate
        self.results = calibrate_all(
            list(ranked.results), self.stored_rows, engine=request.engine.value, backend=None
        )
        self.measured_result = self._measured(costs, request, settings)
        workload = SpeedWorkload(model_name=self.model_name, costs=costs, request=request)
        if self.workload_chosen:
            self.state.set_speed_workload(workload)
        self.workload_changed.emit(workload)
        self._fill(request, len(ranked.not_holding))
        self._fill_not_supported()

    def _measured(
        self, costs: ModelCosts, request: SpeedRequest, settings: CostSettings
    ) -> SpeedEstimate | None:
        """The estimate with this machine's benchmark in place of the datasheet."""
        series = self.state.measured
        if series is None or series.catalog_id is None:
            return None
        entry = self.state.catalog.by_id(series.catalog_id)
        if entry is None:
            return None
        copy = series.values.get("bandwidth_gbs")
        gemm = series.values.get("bf16_tensor_tflops") or series.values.get("fp16_tensor_tflops")
        if copy is None and gemm is None:
            return None
        rates = calibrate(
            rates_for(entry), copy_gbs=copy, gemm_tflops=gemm, measured_at=series.measured_at
        )
        # The same number of cards the ranked table uses for that GPU.
        count = next((item.count for item in self.results if item.gpu_id == entry.id), 1)
        chosen = request.model_copy(update={"count": count})
        try:
            return with_costs(estimate_for(rates, costs, chosen), entry, settings)
        except (NotRunnable, PlanningInputError):
            return None

    # -- the user's measurements ---------------------------------------------------

    def reload_measurements(self) -> None:
        """Read the measurement database again (after an import or a measurement)."""
        try:
            self.stored_rows = self.store.rows()
            self.store_problem = None
        except (StoreError, OSError) as exc:
            self.stored_rows = []
            self.store_problem = f"your measurements cannot be read: {exc}"
        self._measure_cpu_if_stored()

    def _measure_cpu_if_stored(self) -> None:
        """With rows measured on this machine's CPU (an earlier Verify), put the CPU back
        in the table: its rates are measured again (NumPy, about 0.6 s) on a worker."""
        if self.cpu_entry is not None or self._cpu_worker is not None:
            return
        if not any(row.measurement.gpu_id == CPU_ID for row in self.stored_rows):
            return
        from gpudesk.measurements.verify_here import this_cpu_entry

        worker = TaskWorker(lambda _progress: this_cpu_entry(), owner=self)
        worker.finished.connect(self._on_cpu_measured)
        worker.done.connect(self._on_cpu_worker_done)
        self._cpu_worker = worker
        worker.start()

    def _on_cpu_measured(self, entry: object) -> None:
        if isinstance(entry, CatalogEntry) and self.cpu_entry is None:
            self.cpu_entry = entry
            self.recompute_now()

    def _on_cpu_worker_done(self) -> None:
        self._cpu_worker = None

    def measured_rows(self, estimate: SpeedEstimate) -> list[MeasuredRow]:
        """The stored rows of ``estimate``'s GPU, engine and mode, its own workload first."""
        request = self._request
        if request is None or not self.results:
            return []
        plain = self.uncalibrated.get(estimate.gpu_id, estimate)
        return rows_for(
            self.stored_rows,
            gpu_id=estimate.gpu_id,
            engine=request.engine.value,
            mode=request.mode.value,
            count=estimate.count,
            model_id=self.model_id,
            model_name=self.model_name,
            quant=request.quant.value,
            estimate_tokens_per_s=plain.tokens_per_s,
        )

    def open_import_dialog(self) -> None:
        if self.import_dialog is None:
            dialog = ImportDialog(
                self.state.entries(), self.store, model_id=self.model_id, parent=self
            )
            dialog.imported.connect(self._on_imported)
            self.import_dialog = dialog
        self.import_dialog.show()
        self.import_dialog.raise_()

    def _on_imported(self, _report: object) -> None:
        self.reload_measurements()
        self.recompute_now()

    def verify_job(self) -> VerifyJob | str:
        """The selected workload as a measurement to run here, or why it cannot be."""
        if self.error or not self.results:
            return "Nothing to measure: the workload above has a problem to fix first."
        request, costs, shape = self._request, self._costs, self._shape
        if request is None or costs is None or shape is None:
            return "Nothing to measure yet."
        problem = why_not(request)
        if problem is not None:
            return problem
        panel = self.measured_panel
        entry = panel.device_entry()
        model = self.model_id or "model"
        if panel.gguf_path is not None:
            from gpudesk.measurements.verify_here import file_costs
            from gpudesk.workload.modelfile import ModelFileError, read_gguf

            try:
                model_file = read_gguf(panel.gguf_path)
            except ModelFileError as exc:
                return f"The GGUF file: {exc}"
            if model_file.shape is None:
                return f"The GGUF file: cannot tell the model's shape ({model_file.shape_problem})"
            shape = model_file.shape
            quant = model_file.quant or request.quant
            request = request.model_copy(update={"quant": quant})
            costs = file_costs(model_file, quant, request.kv_quant)
            model = model_file.name or panel.gguf_path.stem
        return VerifyJob(
            model=model,
            shape=shape,
            costs=costs,
            request=request,
            entry=entry if isinstance(entry, CatalogEntry) else None,
            model_file=panel.gguf_path,
            max_file_bytes=int(panel.limit_spin.value() * 1e9),
        )

    def _on_verify_requested(self) -> None:
        job = self.verify_job()
        if isinstance(job, str):
            self.measured_panel.say(job)
        else:
            self.measured_panel.run_job(job)

    def _on_verified(self, outcome: object) -> None:
        if not isinstance(outcome, VerifyOutcome):
            return
        if outcome.entry.id == CPU_ID:
            self.cpu_entry = outcome.entry
        self.reload_measurements()
        self.recompute_now()
        self.select_gpu(outcome.entry.id)

    def select_gpu(self, gpu_id: str) -> bool:
        """Select ``gpu_id``'s row of the table; False when it has none."""
        return select_row(self.tree, self.results, gpu_id)

    def _on_detected(self) -> None:
        by_id = {entry.id: entry for entry in self.state.entries()}
        devices = [
            (f"{by_id[gpu_id].name} (all layers on it)", by_id[gpu_id])
            for gpu_id in dict.fromkeys(self.state.detected_catalog_ids)
            if gpu_id in by_id
        ]
        self.measured_panel.set_devices(devices)

    def shutdown(self) -> None:
        """Cancel a measurement, import or simulation in flight (the window is closing)."""
        self._timer.stop()
        for worker in (self._rank_worker, self._curve_worker):
            if worker is not None:
                worker.shutdown()
        self.measured_panel.shutdown()
        if self._cpu_worker is not None:
            self._cpu_worker.shutdown()
        if self.import_dialog is not None:
            self.import_dialog.close()

    def _show_error(self, message: str) -> None:
        self.error = message
        self.measured_label.hide()
        forms.show_error(self.form.error_label, message)
        self.results = []
        self.uncalibrated = {}
        self.measured_result = None
        self.not_supported = []
        self._clear_tree()
        self._fill_not_supported()
        self.latency_chart.set_curve(None, "No latency curve: the workload has a problem.")
        self.measured_panel.show_rows(None, [], self.store_problem)
        self.summary_label.setText("")
        self.basis_view.setHtml("")
        self.state.set_speed_workload(None)
        self.workload_changed.emit(None)
        self._draw_roofline()

    # -- showing -------------------------------------------------------------------

    def _clear_tree(self) -> None:
        clear_tree(self.tree)

    def _fill(self, request: SpeedRequest, not_holding: int) -> None:
        fill_tree(self.tree, self.results, request)
        self.summary_label.setText(summary_html(request, len(self.results), not_holding))
        measured = self.measured_result
        if measured is None:
            self.measured_label.hide()
        else:
            self.measured_label.setText(measured_html(measured))
            self.measured_label.show()
        self._draw_roofline()

    def _selected(self) -> SpeedEstimate | None:
        index = current_index(self.tree)
        if index is not None and 0 <= index < len(self.results):
            return self.results[index]
        return None

    def _on_selected(self, *_args: object) -> None:
        result = self._selected()
        self._draw_roofline()
        if result is None:
            self.basis_view.setHtml("")
            self.measured_panel.show_rows(None, [], self.store_problem)
            return
        self.measured_panel.show_rows(result, self.measured_rows(result), self.store_problem)
        self.basis_view.setHtml(basis_html(result))
        if result.mode is Mode.SERVE:
            self._start_curve(result)

    def _draw_roofline(self, *_args: object) -> None:
        self.roofline_stack.draw(
            self.results,
            self.measured_result,
            self._selected(),
            self.measured_rows,
            no_roofline_text(self.results, self.error),
        )
