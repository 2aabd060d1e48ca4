"""Form helpers shared by the Plan tab's pages: fields, error and note labels, the scroll box."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTreeWidget,
    QWidget,
)

#: How long a burst of edits may last before a page recomputes.
UPDATE_DELAY_MS = 120
ERROR_COLOR = "#c0392b"


def update_timer(parent: QObject, recompute: Callable[[], None]) -> QTimer:
    """A single-shot timer that folds a burst of edits (typing, arrows held down) into one call."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(UPDATE_DELAY_MS)
    timer.timeout.connect(recompute)
    return timer


def combo() -> QComboBox:
    """A combo box whose width does not grow with its longest item."""
    box = QComboBox()
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(12)
    box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    return box


def number_spin(
    minimum: float,
    maximum: float,
    decimals: int,
    step: float,
    suffix: str = "",
    value: float | None = None,
) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(minimum, maximum)
    spin.setDecimals(decimals)
    spin.setSingleStep(step)
    spin.setSuffix(suffix)
    if value is not None:
        spin.setValue(value)
    return spin


def money_spin(
    minimum: float,
    maximum: float,
    decimals: int,
    step: float,
    suffix: str = "",
    value: float | None = None,
) -> QDoubleSpinBox:
    spin = number_spin(minimum, maximum, decimals, step, suffix, value)
    spin.setPrefix("$")
    spin.setGroupSeparatorShown(True)
    return spin


def error_label() -> QLabel:
    """A bold red line for bad input, hidden until there is something to say."""
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {ERROR_COLOR}; font-weight: bold;")
    label.hide()
    return label


def show_error(label: QLabel, message: str) -> None:
    """Show ``message`` (a core error's text) in an :func:`error_label`, as a sentence."""
    label.setText(message[:1].upper() + message[1:])
    label.show()


def note_label() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(placeholder-text); font-size: small;")
    return label


def form_scroll(box: QWidget) -> QScrollArea:
    """``box`` (a page's form) in a vertical scroll area of a readable minimum width."""
    scroll = QScrollArea()
    scroll.setWidget(box)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setMinimumWidth(300)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return scroll


def ranked_tree(headers: list[str], *, sortable: bool = False) -> QTreeWidget:
    """A flat, single-selection list of GPUs: the first column stretches, the rest fit."""
    tree = QTreeWidget()
    tree.setHeaderLabels(headers)
    tree.setRootIsDecorated(False)
    tree.setUniformRowHeights(True)
    tree.setAlternatingRowColors(True)
    tree.setSortingEnabled(sortable)
    tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    header = tree.header()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for column in range(1, len(headers)):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(False)
    return tree
