"""The bar above the catalog table: active id filter and the compare selection as chips."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.names import short_name
from gpudesk.compare.limits import MAX_COMPARED
from gpudesk.render.colors import gpu_colors
from gpudesk.render.text import plain_tooltip
from gpudesk.ui import theme
from gpudesk.ui.state import AppState

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
        self.setToolTip(plain_tooltip(tooltip))
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
            # A color draws a dot of that color; anything else is a symbol.
            symbol, color = ("●", dot_color) if dot_color.startswith("#") else (dot_color, "")
            dot = QLabel(symbol)
            color_rule = f"color: {color};" if color else ""
            dot.setStyleSheet(f"{color_rule} border: none; background: transparent;")
            layout.addWidget(dot)
        self.label = QToolButton()
        self.label.setAutoRaise(True)
        metrics = self.label.fontMetrics()
        self.label.setText(
            metrics.elidedText(text, Qt.TextElideMode.ElideRight, _CHIP_TEXT_WIDTH_PX)
        )
        self.full_text = text
        self.label.setCursor(Qt.CursorShape.PointingHandCursor)
        self.label.clicked.connect(self.clicked)
        layout.addWidget(self.label)
        self.remove_button = QToolButton()
        self.remove_button.setText("✕")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip(plain_tooltip(f"Remove {text}"))
        # Reachable with Tab and pressed with Space, like any button.
        self.remove_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.remove_button.setAccessibleName(f"Remove {text}")
        self.remove_button.clicked.connect(self.removed)
        layout.addWidget(self.remove_button)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)


class FlowLayout(QLayout):
    """Lays widgets out left to right and wraps to a new line when the width is used up."""

    def __init__(self, parent: QWidget | None = None, spacing_px: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing_px = spacing_px
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        x, y, line_height = rect.x(), rect.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > rect.right() + 1 and line_height > 0:
                x = rect.x()
                y += line_height + self._spacing_px
                line_height = 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing_px
            line_height = max(line_height, hint.height())
        return y + line_height - rect.y()


class CompareBar(QWidget):
    """Shows the "fits my workload" filter and the compare selection; both removable.

    A row of actions on top, the chips below it (wrapping when they need more
    than one line).

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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        top = QHBoxLayout()
        top.setSpacing(6)
        self.title = QLabel()
        top.addWidget(self.title)
        self.hint = QLabel("Tick ○ in the first column or press Ctrl+D to add GPUs")
        top.addWidget(self.hint)
        top.addStretch(1)
        self.add_button = QPushButton("Add selected")
        self.add_button.setToolTip("Add the selected GPUs to the comparison (Ctrl+D)")
        self.add_button.clicked.connect(self.add_requested)
        top.addWidget(self.add_button)
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Empty the comparison")
        self.clear_button.clicked.connect(lambda: self.state.set_compare([]))
        top.addWidget(self.clear_button)
        self.open_button = QPushButton("Compare →")
        self.open_button.setToolTip("Open the Compare tab")
        self.open_button.clicked.connect(self.compare_tab_requested)
        top.addWidget(self.open_button)
        layout.addLayout(top)
        self.chip_area = QWidget()
        self.chip_layout = FlowLayout(self.chip_area)
        # One row of chips is always reserved: the first chip must not push the table
        # down (it moved 29 px); only a second row of chips takes more room.
        probe = Chip("RTX 4090", "", "#000000")
        self.chip_area.setMinimumHeight(probe.sizeHint().height())
        probe.deleteLater()
        layout.addWidget(self.chip_area)
        self.fit_chip: Chip | None = None
        self.chips: dict[str, Chip] = {}
        state.compare_changed.connect(self.refresh)
        state.catalog_changed.connect(self.refresh)
        state.fit_filter_changed.connect(self.refresh)
        theme.notifier().changed.connect(self.refresh)
        self.refresh()

    def refresh(self, *_args: object) -> None:
        old = [*self.chips.values(), *([self.fit_chip] if self.fit_chip is not None else [])]
        for chip in old:
            self.chip_layout.removeWidget(chip)
            chip.hide()  # deleteLater runs later; it must not show meanwhile
            chip.deleteLater()
        self.chips = {}
        self.fit_chip = None
        ids = self.state.fit_filter_ids
        if ids is not None:
            known = {entry.id for entry in self.state.entries()}
            self.fit_chip = Chip(
                f"Fits my workload ({len(ids & known)})",
                "Filter from the Plan tab: only GPUs that fit your workload; ✕ shows all again",
                "Filter:",
            )
            self.fit_chip.removed.connect(lambda: self.state.set_fit_filter(None))
            self.chip_layout.addWidget(self.fit_chip)
        entries = self.state.compare_entries()
        colors = gpu_colors([entry.id for entry in entries])
        for color, entry in zip(colors, entries, strict=True):
            chip = Chip(short_name(entry), entry.name, color.name())
            entry_id = entry.id
            chip.clicked.connect(lambda entry_id=entry_id: self.entry_clicked.emit(entry_id))
            chip.removed.connect(lambda entry_id=entry_id: self.state.remove_from_compare(entry_id))
            self.chip_layout.addWidget(chip)
            self.chips[entry.id] = chip
        self.title.setText(f"<b>Compare</b> ({len(entries)} of {MAX_COMPARED})")
        self.hint.setVisible(not entries)
        self.clear_button.setEnabled(bool(entries))
        self.add_button.setEnabled(len(entries) < MAX_COMPARED)

    def fit_chip_text(self) -> str | None:
        return None if self.fit_chip is None else self.fit_chip.full_text
