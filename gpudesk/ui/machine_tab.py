"""The "This machine" tab: detected devices with their live monitor, and the benchmark."""

from __future__ import annotations

import importlib

from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from gpudesk.ui.state import AppState

_SUB_VIEWS = (
    ("Devices", "gpudesk.ui.devices_view:DevicesView"),
    ("Benchmark", "gpudesk.ui.bench_panel:BenchPanel"),
)


class MachineTab(QWidget):
    """The "This machine" tab: "Devices" (detected GPUs, live monitor) and "Benchmark".

    Both views are imported when the tab is first shown; an import error is a
    bug and is raised, not shown as a label.

    Attributes:
        views: each sub-view by its tab title.
    """

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.tabs = QTabWidget(self)
        layout.addWidget(self.tabs)
        self.views: dict[str, QWidget] = {}
        for title, target in _SUB_VIEWS:
            module_name, _, class_name = target.partition(":")
            view: QWidget = getattr(importlib.import_module(module_name), class_name)(state)
            self.views[title] = view
            self.tabs.addTab(view, title)

    def shutdown(self) -> None:
        """Stop the monitor and a benchmark in flight and wait (the window is closing)."""
        for view in self.views.values():
            shutdown = getattr(view, "shutdown", None)
            if shutdown is not None:
                shutdown()
