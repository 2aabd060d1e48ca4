"""The Plan tab: will my model fit (and on which GPUs), and is buying cheaper than renting."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from gpudesk.ui.plan.cost_page import CostPage
from gpudesk.ui.plan.fit_page import FitPage
from gpudesk.ui.plan.speed_page import SpeedPage
from gpudesk.ui.state import AppState


class PlanView(QWidget):
    """Pages in tabs: :class:`FitPage` ("Will it fit?"), :class:`SpeedPage` ("How fast?", on
    the same model) and :class:`CostPage` ("Cloud or buy?").

    Signals:
        fit_filter_requested(object): the fit page's request to filter the catalog
            (see :class:`FitPage`); the main window shows the filtered catalog.
    """

    fit_filter_requested = Signal(object)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.fit_page = FitPage(state)
        self.cost_page = CostPage(state)
        self.speed_page = SpeedPage(state, self.fit_page.form)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.fit_page, "Will it fit?")
        self.tabs.addTab(self.speed_page, "How fast?")
        self.tabs.addTab(self.cost_page, "Cloud or buy?")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        self.fit_page.fit_filter_requested.connect(self.fit_filter_requested)
        self.fit_page.cost_requested.connect(self.show_cost_for)
        state.catalog_changed.connect(self._on_catalog_changed)
        self.recompute_now()

    @property
    def fitting_ids(self) -> frozenset[str]:
        """Catalog ids that hold the current workload (on up to the chosen GPU count)."""
        return self.fit_page.fitting_ids

    def recompute_now(self) -> None:
        """Recompute both pages now, without waiting for a burst of edits to settle."""
        self.fit_page.recompute_now()
        self.speed_page.recompute_now()
        self.cost_page.recompute_now()

    def shutdown(self) -> None:
        """Stop Plan's work in flight and wait for it (the window is closing)."""
        self.speed_page.shutdown()

    def show_cost_for(self, gpu_id: str) -> None:
        """Switch to the cost page with ``gpu_id`` chosen."""
        self.cost_page.select_gpu(gpu_id)
        self.tabs.setCurrentIndex(self.tabs.indexOf(self.cost_page))

    def _on_catalog_changed(self) -> None:
        self.cost_page.refresh_catalog()
        self.recompute_now()
