"""The bar above the catalog table: active id filter and the compare selection as chips."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from gpudesk.ui import theme
from gpudesk.ui.catalog_columns import short_name
from gpudesk.ui.colors import series_color
from gpudesk.ui.state import MAX_COMPARE, AppState

_CHIP_TEXT_WIDTH_PX = 150


class Chip(QFrame):
    """A rounded label with a remove button.

    Signals:
        clicked(): the label was clicked.
        removed(): the remove button was clicked.
    """

    clicked = Signal()
    removed = Signal()

    def __init__(
        self,
        text: str,
        tooltip: str,
        dot_color: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("chip")
        self.setToolTip(tooltip)
        palette = self.palette()
        border = palette.color(QPalette.ColorRole.Mid).name()
        if theme.is_dark():
            border = palette.color(QPalette.ColorRole.Light).name()
        background = palette.color(QPalette.ColorRole.Base).name()
        self.setStyleSheet(
            f"QFrame#chip {{ border: 1px solid {border}; border-radius: 11px;"
            f" background: {background}; }}"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 1, 2, 1)
        layout.setSpacing(4)
        if dot_color is not None:
            dot = QLabel("●")
            dot.setStyleSheet(f"color: {dot_color}; border: none; background: transparent;")
            layout.addWidget(dot)
        self.label = QToolButton()
        self.label.setAutoRaise(True)
        metrics = self.label.fontMetrics()
        self.label.setText(
            metrics.elidedText(text, Qt.TextElideMode.ElideRight, _CHIP_TEXT_WIDTH_PX)
        )
        self.label.setCursor(Qt.CursorShape.PointingHandCursor)
        self.label.clicked.connect(self.clicked)
        layout.addWidget(self.label)
        self.remove_button = QToolButton()
        self.remove_button.setText("✕")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip(f"Remove {text}")
        self.remove_button.clicked.connect(self.removed)
        layout.addWidget(self.remove_button)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)


class CompareBar(QWidget):
    """Shows the "fits my workload" filter and the compare selection; both removable.

    Signals:
        entry_clicked(str): a chip's GPU was clicked (select it in the table).
        add_requested(): the user asked to add the selected rows.
        compare_tab_requested(): the user asked to open the Compare tab.
    """

    entry_clicked = Signal(str)
    add_requested = Signal()
    compare_tab_requested = Signal()

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.fit_chip_holder = QHBoxLayout()
        self.fit_chip_holder.setSpacing(0)
        layout.addLayout(self.fit_chip_holder)
        self.fit_chip: Chip | None = None
        self.title = QLabel()
        layout.addWidget(self.title)
        self.chip_layout = QHBoxLayout()
        self.chip_layout.setSpacing(4)
        layout.addLayout(self.chip_layout)
        self.hint = QLabel("Tick ✓ or press Ctrl+D to add GPUs (up to 6)")
        layout.addWidget(self.hint)
        layout.addStretch(1)
        self.add_button = QPushButton("Add to compare")
        self.add_button.setToolTip("Add the selected GPUs to the comparison (Ctrl+D)")
        self.add_button.clicked.connect(self.add_requested)
        layout.addWidget(self.add_button)
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Empty the comparison")
        self.clear_button.clicked.connect(lambda: self.state.set_compare([]))
        layout.addWidget(self.clear_button)
        self.open_button = QPushButton("Compare →")
        self.open_button.setToolTip("Open the Compare tab")
        self.open_button.clicked.connect(self.compare_tab_requested)
        layout.addWidget(self.open_button)
        self.chips: dict[str, Chip] = {}
        state.compare_changed.connect(self.refresh)
        state.catalog_changed.connect(self.refresh)
        state.fit_filter_changed.connect(self.refresh)
        theme.notifier().changed.connect(self.refresh)
        self.refresh()

    def refresh(self, *_args: object) -> None:
        for chip in self.chips.values():
            self.chip_layout.removeWidget(chip)
            chip.deleteLater()
        self.chips = {}
        entries = self.state.compare_entries()
        for index, entry in enumerate(entries):
            chip = Chip(short_name(entry), entry.name, series_color(index).name())
            entry_id = entry.id
            chip.clicked.connect(lambda entry_id=entry_id: self.entry_clicked.emit(entry_id))
            chip.removed.connect(lambda entry_id=entry_id: self.state.remove_from_compare(entry_id))
            self.chip_layout.addWidget(chip)
            self.chips[entry.id] = chip
        self.title.setText(f"Compare ({len(entries)}/{MAX_COMPARE}):")
        self.hint.setVisible(not entries)
        self.clear_button.setEnabled(bool(entries))
        self.add_button.setEnabled(len(entries) < MAX_COMPARE)
        self._refresh_fit_chip()

    def _refresh_fit_chip(self) -> None:
        if self.fit_chip is not None:
            self.fit_chip_holder.removeWidget(self.fit_chip)
            self.fit_chip.deleteLater()
            self.fit_chip = None
        ids = self.state.fit_filter_ids
        if ids is None:
            return
        known = {entry.id for entry in self.state.entries()}
        count = len(ids & known)
        self.fit_chip = Chip(
            f"Fits my workload ({count})",
            "Only GPUs the Plan tab found to fit your workload; ✕ shows all again",
        )
        self.fit_chip.removed.connect(lambda: self.state.set_fit_filter(None))
        self.fit_chip_holder.addWidget(self.fit_chip)

    def fit_chip_text(self) -> str | None:
        return None if self.fit_chip is None else self.fit_chip.label.text()
