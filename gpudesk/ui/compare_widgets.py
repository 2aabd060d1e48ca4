"""The Compare tab's table model and radar axis picker (the widgets behind
:class:`~gpudesk.ui.compare_view.CompareView`)."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPixmap
from PySide6.QtWidgets import QComboBox, QListWidget, QListWidgetItem, QWidget

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.prices import STALE_AFTER_MONTHS
from gpudesk.catalog.rate_book import RATE_STALE_AFTER_DAYS
from gpudesk.compare.radar import DEFAULT_RADAR_AXES, MAX_AXES, MIN_AXES, RADAR_AXES
from gpudesk.compare.stale import stale_marks
from gpudesk.compare.table import STALE_SIGN, Comparison, Row, RowKind
from gpudesk.render.text import plain_tooltip
from gpudesk.units import VENDOR_GB_IS_GIB

_GROUP_ROLE = Qt.ItemDataRole.UserRole + 1
#: Rows whose memory figure a user sets beside a vendor's "80 GB": their labels explain GiB.
_MEMORY_ROWS = frozenset({"memory_gb", "memory_gb_per_kusd", "priced_memory"})
#: (row key, GPU id) -> the warning in words (moved to gpudesk.compare.stale)
stale_cells = stale_marks
#: what the sign means, for the note under the table
STALE_WORDS = (
    f"{STALE_SIGN}: price seen over {STALE_AFTER_MONTHS} months ago or cloud rate over "
    f"{RATE_STALE_AFTER_DAYS} days old (may be out of date; hover for the date)."
)


def _best_colors(dark: bool) -> tuple[QColor, QColor]:
    """(background, text) of a best-in-row cell."""
    if dark:
        return QColor("#1f4a2c"), QColor("#c9f2d3")
    return QColor("#d4f0da"), QColor("#0d3b1c")


def swatch(color: QColor, size: int = 12) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(color)
    return QIcon(pixmap)


class CompareTableModel(QAbstractTableModel):
    """Adapts a :class:`Comparison` to a table: group rows, then figure rows; empty rows hidden."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comparison: Comparison | None = None
        self._lines: list[Row | str] = []  # a Row, or a group title
        self._headers: list[str] = []
        self._colors: list[QColor] = []
        self._dark = False
        self._stale: Mapping[tuple[str, str], str] = {}

    def set_comparison(
        self,
        comparison: Comparison | None,
        headers: list[str],
        colors: list[QColor],
        dark: bool,
        stale: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        """Show ``comparison``; ``stale`` (see :func:`stale_cells`) marks old prices."""
        self.beginResetModel()
        self.comparison = comparison
        self._stale = stale or {}
        self._headers = headers
        self._colors = colors
        self._dark = dark
        self._lines = []
        if comparison is not None:
            for group, rows in comparison.groups():
                shown = [row for row in rows if not row.is_empty]
                if shown:
                    self._lines.append(group.value)
                    self._lines.extend(shown)
        self.endResetModel()

    def line(self, row: int) -> Row | str:
        return self._lines[row]

    def row_of(self, key: str) -> int:
        for index, line in enumerate(self._lines):
            if isinstance(line, Row) and line.key == key:
                return index
        raise KeyError(key)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._lines)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() or self.comparison is None:
            return 0
        return len(self.comparison.columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal:
            if not 0 <= section < len(self._headers):
                return None
            if role == Qt.ItemDataRole.DisplayRole:
                return self._headers[section]
            if role == Qt.ItemDataRole.DecorationRole:
                return swatch(self._colors[section])
            if role == Qt.ItemDataRole.ToolTipRole and self.comparison is not None:
                column = self.comparison.columns[section]
                return plain_tooltip(
                    column.name
                    + (" (baseline)" if column.id == self.comparison.baseline_id else "")
                )
            return None
        if not 0 <= section < len(self._lines):
            return None
        line = self._lines[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return line.upper() if isinstance(line, str) else line.header
        if role == Qt.ItemDataRole.ToolTipRole and isinstance(line, Row):
            if line.key in _MEMORY_ROWS:  # beside names like "H100 SXM5 80GB"
                return f"{line.header}\nMemory as sold, in GiB: {VENDOR_GB_IS_GIB}"
            return line.header  # the label may be elided
        if role == Qt.ItemDataRole.FontRole and isinstance(line, str):
            font = QFont()
            font.setBold(True)
            return font
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        comparison = self.comparison
        if not index.isValid() or comparison is None:
            return None
        line = self._lines[index.row()]
        if isinstance(line, str):
            if role == _GROUP_ROLE:
                return True
            if role == Qt.ItemDataRole.BackgroundRole:
                return QBrush(QColor("#2a2d32") if self._dark else QColor("#eef1f4"))
            return None
        column = index.column()
        best = comparison.is_best(line, column)
        # Old is said with a sign in the cell and words in its tooltip, not by colour.
        stale = self._stale.get((line.key, comparison.columns[column].id))
        if role == Qt.ItemDataRole.DisplayRole:
            text = comparison.cell_text(line, column)
            return text if stale is None else f"{STALE_SIGN} {text}"
        if role == Qt.ItemDataRole.ToolTipRole:
            raw = comparison.value_text(line, column)
            unit = f" {line.unit}" if line.unit and raw not in ("n/a", "—") else ""
            tip = f"{comparison.columns[column].name}\n{line.header}: {raw}{unit}"
            if best:
                tip += "\nbest in this row"
            if stale is not None:
                tip += f"\n{STALE_SIGN} {stale}"
            return plain_tooltip(tip)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if line.kind is RowKind.METRIC:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and best:
            return QBrush(_best_colors(self._dark)[0])
        if role == Qt.ItemDataRole.ForegroundRole:
            if best:
                return QBrush(_best_colors(self._dark)[1])
            if comparison.value_text(line, column) in ("n/a", "—"):
                return QBrush(QColor("#9aa0a8") if self._dark else QColor("#80858c"))
        if role == Qt.ItemDataRole.FontRole and best:
            font = QFont()
            font.setBold(True)
            return font
        return None


class AxisPicker(QListWidget):
    """A checkable list of radar axes that keeps 5-8 of them checked.

    Signals:
        axes_changed(): the checked axes changed.
    """

    axes_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._updating = False
        for key in RADAR_AXES:
            item = QListWidgetItem(METRICS[key].header)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setCheckState(
                Qt.CheckState.Checked if key in DEFAULT_RADAR_AXES else Qt.CheckState.Unchecked
            )
            self.addItem(item)
        self.itemChanged.connect(self._on_item_changed)
        self._enforce_limits()

    def checked_axes(self) -> list[str]:
        return [
            str(self.item(row).data(Qt.ItemDataRole.UserRole))
            for row in range(self.count())
            if self.item(row).checkState() == Qt.CheckState.Checked
        ]

    def set_checked_axes(self, axes: list[str]) -> None:
        """Check exactly ``axes`` (5-8 known keys), in the list's order."""
        if not MIN_AXES <= len(axes) <= MAX_AXES:
            raise ValueError(f"pick {MIN_AXES} to {MAX_AXES} axes")
        self._updating = True
        for row in range(self.count()):
            item = self.item(row)
            key = item.data(Qt.ItemDataRole.UserRole)
            item.setCheckState(Qt.CheckState.Checked if key in axes else Qt.CheckState.Unchecked)
        self._updating = False
        self._enforce_limits()
        self.axes_changed.emit()

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        if self._updating:
            return
        self._enforce_limits()
        self.axes_changed.emit()

    def _enforce_limits(self) -> None:
        """At 8 checked, the rest cannot be checked; at 5, none can be unchecked."""
        self._updating = True
        count = len(self.checked_axes())
        for row in range(self.count()):
            item = self.item(row)
            checked = item.checkState() == Qt.CheckState.Checked
            locked = (checked and count <= MIN_AXES) or (not checked and count >= MAX_AXES)
            flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
            if not locked:
                flags |= Qt.ItemFlag.ItemIsUserCheckable
            item.setFlags(flags)
            item.setToolTip(
                f"A radar needs {MIN_AXES} to {MAX_AXES} axes"
                if locked
                else METRICS[str(item.data(Qt.ItemDataRole.UserRole))].header
            )
        self._updating = False


def metric_combo(keys: tuple[str, ...], current: str) -> QComboBox:
    combo = QComboBox()
    for key in keys:
        combo.addItem(METRICS[key].header, key)
    combo.setCurrentIndex(keys.index(current))
    combo.setMaxVisibleItems(24)
    # Long metric names must not widen the charts' minimum (the table beside them
    # would lose its room); the open list shows them whole.
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(16)
    combo.view().setMinimumWidth(combo.view().sizeHintForColumn(0) + 24)
    return combo
