"""The catalog browser (being built: main window issue)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpudesk.ui.state import AppState


class CatalogView(QWidget):
    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"{len(state.entries())} GPUs in the catalog"))
