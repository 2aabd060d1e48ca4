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
:mod:`gpudesk.ui.plan.speed_roofline`; this module builds the page, computes and wires
them. The page is built in layers by what each shows: the measured row and Verify
(:mod:`~gpudesk.ui.plan.speed_measured`), the table, the not-supported list, the basis
and the roofline (:mod:`~gpudesk.ui.plan.speed_results`), serving under load on workers
(:mod:`~gpudesk.ui.plan.speed_serving`), over what they share
(:mod:`~gpudesk.ui.plan.speed_page_base`).

Serving simulates each GPU's engine scheduler (seconds for the catalog), so in serve mode
the ranking runs on a worker (:mod:`gpudesk.ui.plan.speed_load`) with progress and
Cancel, and the selected GPU's latency against request rate is drawn beside the roofline
(:class:`~gpudesk.render.latency.LatencyChartWidget`) from a sweep of rates, also on a
worker. The other modes are quick closed forms and stay on the GUI thread. GPUs the
engine cannot run the request on are listed under the table with the reason, never
ranked.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
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
from gpudesk.measurements.store import MeasurementStore, StoredMeasurement
from gpudesk.measurements.verify_here import why_not
from gpudesk.render.latency import LatencyChartWidget
from gpudesk.render.style import chart_style
from gpudesk.speed.estimate import Mode, SpeedEstimate, SpeedRequest, model_costs
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.planner import CostSettings, rank_catalog
from gpudesk.speed.shapes import shape_from_preset
from gpudesk.ui import theme
from gpudesk.ui.plan import forms
from gpudesk.ui.plan.fit_form import WorkloadForm
from gpudesk.ui.plan.import_dialog import ImportDialog
from gpudesk.ui.plan.measured_panel import MeasuredPanel
from gpudesk.ui.plan.speed_form import SpeedForm
from gpudesk.ui.plan.speed_results import training_basis_html
from gpudesk.ui.plan.speed_roofline import ROOFLINE_GPUS, RooflineChart
from gpudesk.ui.plan.speed_serving import SpeedServing
from gpudesk.ui.plan.speed_table import MEASURED_LABEL, basis_html, speed_tree
from gpudesk.ui.state import AppState
from gpudesk.ui.step_progress import StepProgressBar
from gpudesk.ui.worker import TaskWorker
from gpudesk.workload.architecture import ModelShape
from gpudesk.workload.errors import PlanningInputError

__all__ = ["MEASURED_LABEL", "ROOFLINE_GPUS", "SpeedPage"]


class SpeedPage(SpeedServing):
    """Its form, then ranked tokens/s for the workload, the roofline of the fastest GPUs, the basis.

    Signals:
        workload_changed(object): a new :class:`SpeedWorkload`, or None on bad input;
            the page also stores it in ``state.speed_workload`` for Compare and the PDF
            once the user set a workload (``workload_chosen``).
    """

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

    def _on_selected(self, *_args: object) -> None:
        result = self._selected()
        self._draw_roofline()
        if result is None:
            self.basis_view.setHtml("")
            self.measured_panel.show_rows(None, [], self.store_problem)
            return
        self.measured_panel.show_rows(result, self.measured_rows(result), self.store_problem)
        if result.mode is Mode.TRAIN:
            self.basis_view.setHtml(training_basis_html(result))
        else:
            self.basis_view.setHtml(basis_html(result))
        if result.mode is Mode.SERVE:
            self._start_curve(result)

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
