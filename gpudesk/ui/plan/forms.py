"""Form helpers shared by the Plan tab's pages: fields, error and note labels, the scroll box."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from gpudesk.ui import theme
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.quant import QuantFormat

#: How long a burst of edits may last before a page recomputes.
UPDATE_DELAY_MS = 120


def error_color() -> str:
    """The theme's error text colour (#rrggbb), read when the text is made."""
    return theme.error_color().name()


def update_timer(parent: QObject, recompute: Callable[[], None]) -> QTimer:
    """A single-shot timer that folds a burst of edits (typing, arrows held down) into one call."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(UPDATE_DELAY_MS)
    timer.timeout.connect(recompute)
    return timer


class WholeTextCombo(QComboBox):
    """A combo box that is never narrower than its longest item.

    Its minimum is its full size hint, so a form (and :func:`form_scroll`
    around it) grows to the widest item instead of cutting "Decode (one chat,
    token by token)" or a long GPU name short.
    """

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()


def combo() -> QComboBox:
    """A :class:`WholeTextCombo` that follows its items' width and fills its form row."""
    box = WholeTextCombo()
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
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
    theme.follow_error_color(label, "font-weight: bold;")  # re-read on a theme switch
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


#: config.json quantization_config.quant_method -> the format sized for it.
CHECKPOINT_QUANT: dict[str, QuantFormat] = {
    "fp8": QuantFormat.FP8,
    "fbgemm_fp8": QuantFormat.FP8,
    "awq": QuantFormat.AWQ,
    "gptq": QuantFormat.GPTQ,
    "mxfp4": QuantFormat.MXFP4,
}


def checkpoint_format(method: str | None) -> QuantFormat | None:
    """The format GPUDesk sizes for a config.json's declared ``quant_method``, if any."""
    return None if method is None else CHECKPOINT_QUANT.get(method.lower())


def use_checkpoint_quant(
    combo: QComboBox, note: QLabel, method: str | None, control: str, *, extra: str = ""
) -> QuantFormat | None:
    """Set a weights ``combo`` (item data: a QuantFormat value) to the format a config.json
    declares (quantization_config.quant_method) and say so in ``note``; a method GPUDesk
    has no format for is named and the choice left alone; no method hides the note.

    Both Plan pages call this, so "Will it fit?" and "How fast?" read a checkpoint alike.
    Returns the format set, or None.
    """
    if method is None:
        note.hide()
        return None
    fmt = checkpoint_format(method)
    if fmt is None:
        note.setText(
            f"config.json declares {method!r} weights, which GPUDesk cannot size: "
            f"choose the closest in “{control}”."
        )
    else:
        combo.blockSignals(True)
        combo.setCurrentIndex(combo.findData(fmt.value))
        combo.blockSignals(False)
        note.setText(
            f"config.json declares {fmt.label} weights: “{control}” is set to "
            f"them{extra} (change it to size another format)."
        )
    note.show()
    return fmt


#: Space between a page's form (its group box title included) and the window's edges.
FORM_MARGINS_PX = (8, 8, 4, 8)
FORM_MIN_WIDTH_PX = 300


class FormScroll(QScrollArea):
    """A vertical scroll area never narrower than its form's minimum width.

    A plain scroll area reports a small minimum, so a splitter squeezes the
    form and its combo boxes cut their text; this one asks the form.
    """

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        widget = self.widget()
        if widget is None:
            return hint
        width = (
            widget.minimumSizeHint().width()
            + self.verticalScrollBar().sizeHint().width()
            + 2 * self.frameWidth()
        )
        return QSize(max(FORM_MIN_WIDTH_PX, width), hint.height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # the form grew (a combo got a longer item): let the splitter know
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)


def form_scroll(box: QWidget) -> QScrollArea:
    """``box`` (a page's form) in a vertical scroll area, clear of the window's edges."""
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.setContentsMargins(*FORM_MARGINS_PX)
    layout.addWidget(box)
    scroll = FormScroll()
    scroll.setWidget(page)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
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


def _shown(widget: QWidget, value: object) -> str:
    """What ``widget`` shows: a combo's item for ``value``, a spin box's current text."""
    if isinstance(widget, QComboBox):
        index = widget.findData(value)
        return widget.itemText(index) if index >= 0 else str(value)
    if isinstance(widget, QAbstractSpinBox):
        return widget.text().strip()
    return str(value)


def control_words(exc: PlanningInputError, controls: Mapping[str, tuple[str, QWidget]]) -> str:
    """A planning core's typed error in a page's words: its control labels and what they show.

    ``Running 0.0 h/day: must be above 0 and at most 24``; a missing input reads
    "enter it under LABEL"; a working alternative "choose Workload “QLoRA …”".

    Args:
        exc: the core's error (its problems name the core's fields).
        controls: each core field's control label and widget on the page.
    """
    parts = []
    for problem in exc.problems:
        if problem.field not in controls:
            parts.append(str(exc))
            continue
        label, widget = controls[problem.field]
        if problem.missing:
            parts.append(f"{problem.reason}: enter it under {label}")
            continue
        fixes = [
            f"{controls[field][0]} \u201c{_shown(controls[field][1], value)}\u201d"
            for field, value in problem.fix.items()
            if field in controls
        ]
        parts.append(
            f"{label} {_shown(widget, problem.value)}: {problem.reason}"
            + (f"; choose {' and '.join(fixes)}" if fixes else "")
        )
    return "; ".join(dict.fromkeys(parts)) if parts else str(exc)
