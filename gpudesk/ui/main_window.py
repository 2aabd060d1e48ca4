"""The main window: tabs for the catalog, compare, this machine and planning."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QLabel, QMainWindow, QTabWidget, QVBoxLayout, QWidget

from gpudesk.ui.state import AppState

#: (tab title, "module:Class") — views are imported and built on first show,
#: so start-up pays only for the first screen.
TAB_VIEWS: tuple[tuple[str, str], ...] = (
    ("Catalog", "gpudesk.ui.catalog_view:CatalogView"),
    ("Compare", "gpudesk.ui.compare_view:CompareView"),
    ("This machine", "gpudesk.ui.machine_tab:MachineTab"),
    ("Plan", "gpudesk.ui.plan_view:PlanView"),
)


class _LazyTab(QWidget):
    """Holds a tab's place until it is first shown."""

    def __init__(self, target: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.target = target
        self.view: QWidget | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def ensure_built(self, state: AppState) -> QWidget:
        if self.view is None:
            module_name, _, class_name = self.target.partition(":")
            try:
                view_class = getattr(importlib.import_module(module_name), class_name)
                self.view = view_class(state, self)
            except ImportError as exc:
                self.view = QLabel(f"This view is not available: {exc}")
            self._layout.addWidget(self.view)
        return self.view


class MainWindow(QMainWindow):
    """GPUDesk's main window."""

    def __init__(
        self,
        state: AppState | None = None,
        extra_dirs: Sequence[Path] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("GPUDesk")
        self.state = state if state is not None else AppState(extra_dirs=extra_dirs)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self._lazy_tabs: list[_LazyTab] = []
        for title, target in TAB_VIEWS:
            tab = _LazyTab(target)
            self._lazy_tabs.append(tab)
            self.tabs.addTab(tab, title)
        self.tabs.currentChanged.connect(self._build_current_tab)
        self.setCentralWidget(self.tabs)
        self.setMinimumSize(900, 600)
        self.resize(1400, 860)
        self._build_current_tab(self.tabs.currentIndex())

    def _build_current_tab(self, index: int) -> None:
        if 0 <= index < len(self._lazy_tabs):
            self._lazy_tabs[index].ensure_built(self.state)

    def view(self, title: str) -> QWidget:
        """The view of a tab by title, built if needed (for tests and wiring)."""
        for index, (tab_title, _) in enumerate(TAB_VIEWS):
            if tab_title == title:
                return self._lazy_tabs[index].ensure_built(self.state)
        raise KeyError(title)
