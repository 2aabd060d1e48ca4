"""What every part of the "How fast?" page shares: its widgets, its state, its signal.

:class:`~gpudesk.ui.plan.speed_page.SpeedPage` is built in layers, each a module by what
it shows: the user's measurements and Verify (:mod:`~gpudesk.ui.plan.speed_measured`),
the table, the not-supported list, the basis and the roofline
(:mod:`~gpudesk.ui.plan.speed_results`), serving under load on workers
(:mod:`~gpudesk.ui.plan.speed_serving`), and the page that builds and wires them. This
base declares the attributes the page sets so each layer type-checks on its own.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QLabel,
    QPushButton,
    QTabWidget,
    QTextBrowser,
    QTreeWidget,
    QWidget,
)

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.measurements.store import MeasurementStore, StoredMeasurement
from gpudesk.render.latency import LatencyChartWidget
from gpudesk.speed.estimate import SpeedEstimate, SpeedRequest
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.planner import CostSettings
from gpudesk.ui.plan.fit_form import WorkloadForm
from gpudesk.ui.plan.import_dialog import ImportDialog
from gpudesk.ui.plan.measured_panel import MeasuredPanel
from gpudesk.ui.plan.speed_form import SpeedForm
from gpudesk.ui.plan.speed_roofline import RooflineChart
from gpudesk.ui.state import AppState
from gpudesk.ui.step_progress import StepProgressBar
from gpudesk.ui.worker import TaskWorker
from gpudesk.workload.architecture import ModelShape


class SpeedPageBase(QWidget):
    """The page's widgets and state, set by :class:`~gpudesk.ui.plan.speed_page.SpeedPage`.

    Signals:
        workload_changed(object): a new :class:`~gpudesk.speed.planner.SpeedWorkload`, or
            None on bad input.
    """

    workload_changed = Signal(object)

    state: AppState
    model_form: WorkloadForm
    store: MeasurementStore
    stored_rows: list[StoredMeasurement]
    store_problem: str | None
    cpu_entry: CatalogEntry | None
    uncalibrated: dict[str, SpeedEstimate]
    model_id: str | None
    model_name: str | None
    import_dialog: ImportDialog | None
    results: list[SpeedEstimate]
    measured_result: SpeedEstimate | None
    error: str | None
    not_supported: list[tuple[str, str]]
    workload_chosen: bool
    _cpu_worker: TaskWorker | None
    _costs: ModelCosts | None
    _shape: ModelShape | None
    _request: SpeedRequest | None
    _rank_worker: TaskWorker | None
    _curve_worker: TaskWorker | None
    _serial: int
    _settings: CostSettings
    _timer: QTimer

    form: SpeedForm
    summary_label: QLabel
    measured_label: QLabel
    progress_bar: StepProgressBar
    cancel_button: QPushButton
    tree: QTreeWidget
    not_supported_label: QLabel
    not_supported_view: QTextBrowser
    measured_panel: MeasuredPanel
    roofline_stack: RooflineChart
    latency_chart: LatencyChartWidget
    charts: QTabWidget
    latency_tab: int
    roofline_tab: int
    basis_view: QTextBrowser

    def recompute_now(self) -> None:
        """Estimate the form's workload again; the page defines it."""
        raise NotImplementedError

    def _entries(self) -> list[CatalogEntry]:
        entries = list(self.state.entries())
        if self.cpu_entry is not None:
            entries.append(self.cpu_entry)
        return entries
