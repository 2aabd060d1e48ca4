"""The "This machine" tab: detected devices with their live monitor, and the benchmark."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from gpudesk.ui.bench_panel import BenchPanel
from gpudesk.ui.devices_view import DevicesView
from gpudesk.ui.state import AppState


class MachineTab(QWidget):
    """The "This machine" tab: "Devices" (detected GPUs, live monitor) and "Benchmark".

    Both views are imported with this module, which the main window imports
    when the tab is first shown.

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
        sub_views: tuple[tuple[str, Callable[[AppState], QWidget]], ...] = (
            ("Devices", DevicesView),
            ("Benchmark", BenchPanel),
        )
        for title, build in sub_views:
            view = build(state)
            self.views[title] = view
            self.tabs.addTab(view, title)

    def shutdown(self) -> None:
        """Stop the monitor and a benchmark in flight and wait (the window is closing)."""
        for view in self.views.values():
            shutdown = getattr(view, "shutdown", None)
            if shutdown is not None:
                shutdown()
