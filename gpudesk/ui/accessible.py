"""Names for screen readers: every control a user can reach has one, every chart a text
alternative.

A screen reader says a control's accessible name: its own text (a button), its
``accessibleName``, or the text of the label whose buddy it is. Before, 28 of 151
controls had none (every table and tree, all nine charts, the scatter's axis combos
among them), so a screen reader said "combo box" or "table" and nothing else.

:func:`name_controls` runs over each view once it is built: a visible "Label:" beside
an unnamed control becomes its buddy (what Qt expects a form to do), and what is still
unnamed takes the first words of its tooltip. :func:`describe_charts` gives each chart
an accessible name, a text summary as its description (kept up to date as it is
redrawn), and "Copy data as text" (Ctrl+C, and on its context menu).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QFormLayout,
    QGraphicsView,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QScrollBar,
    QTableView,
    QTextEdit,
    QToolButton,
    QTreeView,
    QWidget,
)

#: Widgets a user reaches and works: each needs a name a screen reader can say.
INTERACTIVE = (
    QAbstractButton,
    QComboBox,
    QLineEdit,
    QAbstractSpinBox,
    QAbstractItemView,
    QAbstractSlider,
    QGraphicsView,
    QPlainTextEdit,
    QTextEdit,
)
#: A tooltip's first clause as a name: at most this long (the rest is its description).
_NAME_CHARS = 60
#: The description of a chart: its summary, at most this long.
_DESCRIPTION_CHARS = 600


def is_chart(widget: QWidget) -> bool:
    """A chart: a graphics view, or a painted widget that can say its data as text."""
    return isinstance(widget, QGraphicsView) or callable(getattr(widget, "data_text", None))


def _is_qt_part(widget: QWidget) -> bool:
    """Parts Qt builds inside a control (scroll bars, headers, a spin box's line edit,
    a combo's popup, a table's corner button): named through the control they belong to."""
    if isinstance(widget, QScrollBar | QHeaderView) or widget.objectName().startswith("qt_"):
        return True
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QComboBox) or parent.inherits("QComboBoxPrivateContainer"):
            return True
        parent = parent.parentWidget()
    return False


def controls(root: QWidget) -> list[QWidget]:
    """Every interactive widget under ``root`` that a user reaches (Qt's own parts aside)."""
    return [
        widget
        for widget in root.findChildren(QWidget)
        if (isinstance(widget, INTERACTIVE) or is_chart(widget)) and not _is_qt_part(widget)
    ]


def _label_words(text: str) -> str:
    """A label's text as a name: no mnemonic ampersands, markup or trailing colon."""
    plain = re.sub(r"<[^>]+>", "", text).replace("&&", "\0").replace("&", "").replace("\0", "&")
    return html.unescape(plain).strip().rstrip(":").strip()


def accessible_name(widget: QWidget, root: QWidget | None = None) -> str:
    """The name a screen reader says for ``widget``: its accessible name, its own text
    (buttons), or its buddy label's text; "" when it has none."""
    if widget.accessibleName().strip():
        return widget.accessibleName().strip()
    words = _label_words(widget.text()) if isinstance(widget, QAbstractButton) else ""
    if re.search(r"\w", words):  # "✕" or "…" alone is no name
        return words
    scope = root if root is not None else widget.window()
    for label in scope.findChildren(QLabel):
        if label.buddy() is widget and _label_words(label.text()):
            return _label_words(label.text())
    return ""


def _layout_items(layout: QLayout) -> Iterator[tuple[QLayout, int]]:
    for index in range(layout.count()):
        yield layout, index
        item = layout.itemAt(index)
        child = item.layout() if item is not None else None
        if child is not None:
            yield from _layout_items(child)


def _buddy_labels(root: QWidget) -> None:
    """A "Name:" label directly before an unnamed control in a layout becomes its buddy;
    a form's row label becomes its field's buddy."""
    layouts = [root.layout(), *(widget.layout() for widget in root.findChildren(QWidget))]
    for top in layouts:
        if top is None:
            continue
        for layout, index in _layout_items(top):
            if isinstance(layout, QFormLayout):
                _form_buddies(layout)
                continue
            label = _widget_at(layout, index)
            if not isinstance(label, QLabel) or label.buddy() is not None:
                continue
            if not label.text().strip().endswith(":"):
                continue
            control = _widget_at(layout, index + 1)
            if control is not None and _wants_name(control):
                label.setBuddy(control)


def _widget_at(layout: QLayout, index: int) -> QWidget | None:
    item = layout.itemAt(index) if 0 <= index < layout.count() else None
    return item.widget() if item is not None else None


def _form_buddies(form: QFormLayout) -> None:
    for row in range(form.rowCount()):
        label_item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        field_item = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
        if label_item is None or field_item is None:
            continue
        label, control = label_item.widget(), field_item.widget()
        if (
            isinstance(label, QLabel)
            and control is not None
            and label.buddy() is None
            and _wants_name(control)
        ):
            label.setBuddy(control)


def _wants_name(widget: QWidget) -> bool:
    return (
        isinstance(widget, INTERACTIVE) or is_chart(widget)
    ) and not widget.accessibleName().strip()


def _tooltip_name(tip: str) -> str:
    """A tooltip's first clause, short enough to be said as a name."""
    plain = _label_words(tip).replace("\n", " ")
    first = re.split(r"(?<=[a-z0-9)])[.;:]\s|\s\(|, ", plain, maxsplit=1)[0].strip()
    if len(first) > _NAME_CHARS:
        first = first[: _NAME_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return first


def name_controls(root: QWidget) -> list[QWidget]:
    """Give every unnamed control under ``root`` a name (a buddy label, else its tooltip's
    first words); returns the controls still without one (a test fails on any)."""
    _buddy_labels(root)
    unnamed: list[QWidget] = []
    for widget in controls(root):
        if accessible_name(widget, root):
            continue
        if widget.toolTip().strip():
            widget.setAccessibleName(_tooltip_name(widget.toolTip()))
        elif (fallback := _fallback_name(widget)) is not None:
            widget.setAccessibleName(fallback)
        else:
            unnamed.append(widget)
    return unnamed


#: What an unnamed view is called after its page ("Will it fit? table").
_VIEW_KINDS: tuple[tuple[type[QWidget], str], ...] = (
    (QTreeView, "table"),
    (QTableView, "table"),
    (QListView, "list"),
    (QTextEdit, "text"),
    (QPlainTextEdit, "text"),
)


def _fallback_name(widget: QWidget) -> str | None:
    """A name from where a view sits (its tab page) or what a clear button clears."""
    if isinstance(widget, QToolButton) and isinstance(widget.parentWidget(), QLineEdit):
        return "Clear the text"
    page = _page_title(widget)
    for kind, word in _VIEW_KINDS:
        if isinstance(widget, kind) and page:
            return f"{page} {word}"
    return None


# charts --------------------------------------------------------------------------------
def _figure(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
        return f"{value:.3g}"
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def _plot_title(plot_item: Any) -> str:
    label = getattr(plot_item, "titleLabel", None)
    text = getattr(label, "text", "") or ""
    return _label_words(re.sub(r"<br\s*/?>", " — ", str(text)))


def plot_text(view: QGraphicsView) -> str:
    """The data of a pyqtgraph plot as text: title, axes, each curve, bar set and label."""
    import pyqtgraph as pg

    get_item = getattr(view, "getPlotItem", None)
    plot_item = get_item() if get_item is not None else None
    if plot_item is None:
        return ""
    lines = [title] if (title := _plot_title(plot_item)) else []
    for side in ("bottom", "left"):
        axis = plot_item.getAxis(side)
        label = _label_words(str(axis.labelText or "")) if axis.isVisible() else ""
        if label:
            lines.append(f"{'x' if side == 'bottom' else 'y'} axis: {label}")
    for item in plot_item.items:
        if isinstance(item, pg.PlotDataItem):
            xs, ys = item.getData()
            if xs is None or ys is None or len(xs) == 0:
                continue
            name = item.name() or "series"
            pairs = ", ".join(
                f"({_figure(float(x))}, {_figure(float(y))})"
                for x, y in zip(xs[:200], ys[:200], strict=False)
            )
            lines.append(f"{name}: {pairs}")
        elif isinstance(item, pg.BarGraphItem):
            widths = item.opts.get("width")
            heights = item.opts.get("height")
            values = widths if widths is not None and not isinstance(widths, float) else heights
            if values is not None and not isinstance(values, float):
                lines.append("bars: " + ", ".join(_figure(float(v)) for v in values))
        elif isinstance(item, pg.InfiniteLine):
            lines.append(f"line at {_figure(float(item.value()))}")
    ticks = getattr(plot_item.getAxis("left"), "_tickLevels", None)
    if ticks:
        lines.append("rows: " + ", ".join(str(text) for _, text in ticks[0]))
    return "\n".join(lines)


def chart_text(widget: QWidget) -> str:
    """What a chart shows, as text: its own ``data_text()``, else its plot's data."""
    own = getattr(widget, "data_text", None)
    if callable(own):
        return str(own())
    if isinstance(widget, QGraphicsView):
        return plot_text(widget)
    return ""


def copy_chart_text(chart: QWidget) -> None:
    """Put what ``chart`` shows on the clipboard, as text."""
    QGuiApplication.clipboard().setText(chart_text(chart))


class _ChartText(QObject):
    """Keeps a chart's description its current summary; copies its data on Ctrl+C."""

    def __init__(self, chart: QWidget, name: str) -> None:
        super().__init__(chart)
        self._chart = chart
        self._last: str | None = None  # nothing said yet: the first refresh always says
        #: Named here (not by its view): the name follows the plot's title as it changes.
        self._fallback = name if not chart.accessibleName().strip() else ""
        if self._fallback:
            chart.setAccessibleName(name)
        chart.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # reachable by Tab, then Ctrl+C
        self.copy_action = QAction("Copy data as text", chart)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.copy_action.triggered.connect(self.copy)
        chart.addAction(self.copy_action)
        menu = _plot_menu(chart)
        if menu is not None:
            menu.addAction(self.copy_action)
        target = chart.viewport() if isinstance(chart, QGraphicsView) else chart
        target.installEventFilter(self)
        self.refresh()

    def refresh(self) -> None:
        text = chart_text(self._chart)
        if text != self._last:
            self._last = text
            title = _chart_title(self._chart)
            if self._fallback:
                self._chart.setAccessibleName(
                    f"{self._fallback}: {title}" if title else self._fallback
                )
            summary = text if len(text) <= _DESCRIPTION_CHARS else text[:_DESCRIPTION_CHARS] + "…"
            self._chart.setAccessibleDescription(summary or "No data shown.")

    def copy(self) -> None:
        copy_chart_text(self._chart)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.refresh()  # drawn anew: the data may have changed
        return False


def _plot_menu(chart: QWidget) -> Any:
    """The right-click menu pyqtgraph shows on a plot, where there is one."""
    get_item = getattr(chart, "getPlotItem", None)
    plot_item = get_item() if get_item is not None else None
    view_box = plot_item.getViewBox() if plot_item is not None else None
    return getattr(view_box, "menu", None)


def chart_access(chart: QWidget) -> _ChartText | None:
    """The text alternative :func:`describe_charts` installed on ``chart``, if any."""
    return chart.findChild(_ChartText)


def _chart_title(chart: QWidget) -> str:
    get_item = getattr(chart, "getPlotItem", None)
    plot_item = get_item() if get_item is not None else None
    return _plot_title(plot_item) if plot_item is not None else ""


def _page_title(widget: QWidget) -> str:
    """The title of the innermost tab ``widget`` sits on ("Will it fit?"), if any."""
    from PySide6.QtWidgets import QTabWidget

    child: QWidget | None = widget
    parent = widget.parentWidget()
    while child is not None and parent is not None:
        tabs = parent.parentWidget()
        if isinstance(tabs, QTabWidget):
            index = tabs.indexOf(child)
            if index >= 0:
                return _label_words(tabs.tabText(index))
        child, parent = parent, parent.parentWidget()
    return ""


def describe_charts(root: QWidget, fallback_name: str = "Chart") -> None:
    """Give every chart under ``root`` (and ``root`` itself, if one) a name, a current text
    summary as its description, and "Copy data as text"."""
    found = [widget for widget in root.findChildren(QWidget) if is_chart(widget)]
    if is_chart(root):
        found.append(root)
    for chart in found:
        if chart_access(chart) is None:
            page = _page_title(chart)
            _ChartText(chart, f"{page} chart" if page else fallback_name)


def make_accessible(root: QWidget, name: str) -> list[QWidget]:
    """:func:`describe_charts` and :func:`name_controls` over a built view; returns what
    is still unnamed."""
    describe_charts(root, f"{name} chart")
    return name_controls(root)


__all__ = [
    "INTERACTIVE",
    "accessible_name",
    "chart_access",
    "chart_text",
    "controls",
    "copy_chart_text",
    "describe_charts",
    "is_chart",
    "make_accessible",
    "name_controls",
    "plot_text",
]
