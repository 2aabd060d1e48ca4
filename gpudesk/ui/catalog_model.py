"""Qt item models for the catalog table: a thin adapter, and (in
:mod:`gpudesk.ui.catalog_proxy`) a bulk sort/filter proxy.

:class:`CatalogTableModel` adapts ``list[CatalogEntry]`` (through a
:class:`~gpudesk.ui.catalog_columns.CatalogIndex` built once per load) and owns
the compare check column, wired to :class:`~gpudesk.ui.state.AppState`.
:class:`~gpudesk.ui.catalog_proxy.CatalogProxyModel` filters and sorts it; both
names import from here.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.limits import MAX_COMPARED
from gpudesk.render.colors import gpu_color_slots
from gpudesk.render.text import plain_tooltip
from gpudesk.ui import theme
from gpudesk.ui.catalog_columns import (
    COLUMNS,
    FROM_RATE_COLUMN_INDEX,
    MISSING_TEXT,
    PRICE_COLUMN_INDEX,
    CatalogIndex,
    Column,
    ColumnKind,
)
from gpudesk.ui.catalog_proxy import CatalogProxyModel
from gpudesk.ui.catalog_roles import (
    _ACCESSIBLE_TEXT,
    _ALIGN,
    _CENTER,
    _CHECK,
    _DISPLAY,
    _FOREGROUND,
    _INITIAL_ORDER,
    _LEFT,
    _RIGHT,
    _TOOLTIP,
    COMPARE_COLUMN_INDEX,
    ENTRY_ID_ROLE,
    NAME_COLUMN_INDEX,
    SORT_KEY_ROLE,
    ModelIndex,
)
from gpudesk.ui.compare_delegate import COMPARE_COLOR_SLOT_ROLE
from gpudesk.ui.state import AppState

_FLAGS = [
    Qt.ItemFlag.ItemIsEnabled
    | Qt.ItemFlag.ItemIsSelectable
    | (
        Qt.ItemFlag.ItemIsUserCheckable
        if index == COMPARE_COLUMN_INDEX
        else Qt.ItemFlag.NoItemFlags
    )
    for index in range(len(COLUMNS))
]


def _initial_order(column: Column) -> Qt.SortOrder:
    """The first click on a header sorts best first.

    Figures where more is better (and the year: newest) sort descending; price
    and other lower-is-better figures ascending; names A-Z; chosen GPUs first.
    """
    if column.kind is ColumnKind.COMPARE:
        return Qt.SortOrder.DescendingOrder
    if column.kind is ColumnKind.TEXT:
        return Qt.SortOrder.AscendingOrder
    metric = METRICS.get(column.key)
    if metric is not None and metric.higher_is_better is False:
        return Qt.SortOrder.AscendingOrder
    return Qt.SortOrder.DescendingOrder


def _alignment(kind: ColumnKind) -> Qt.AlignmentFlag:
    if kind is ColumnKind.NUMBER:
        return _RIGHT
    if kind in (ColumnKind.FLAG, ColumnKind.COMPARE):
        return _CENTER
    return _LEFT


class CatalogTableModel(QAbstractTableModel):
    """Every catalog entry, one row each, in catalog order.

    Display strings are formatted once per load; ``data()`` only indexes lists.

    Signals:
        compare_refused(str): ticking a row could not add it (the selection is full).
    """

    compare_refused = Signal(str)

    def __init__(
        self,
        state: AppState,
        entries: Sequence[CatalogEntry] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._state = state
        self._follow_state_catalog = entries is None
        self.index_data = CatalogIndex(state.entries() if entries is None else entries)
        self._cells: list[list[str]] = []
        self._missing: list[list[bool]] = []
        self._rebuild_cells()
        # Plain ints: converting an enum for each of thousands of cells per paint is not free.
        self._alignments = [int(_alignment(column.kind).value) for column in COLUMNS]
        self._headers = [column.header for column in COLUMNS]
        self._header_tips = [column.header_tooltip for column in COLUMNS]
        self._initial_orders = [int(_initial_order(column).value) for column in COLUMNS]
        self._header_by_role: dict[int, list[Any]] = {
            _DISPLAY: self._headers,
            _TOOLTIP: self._header_tips,
            _ALIGN: [_CENTER] * len(COLUMNS),
            _INITIAL_ORDER: self._initial_orders,
        }
        self._compare_positions: dict[str, int] = {}
        self._sync_compare()
        self.missing_color = QColor(theme.muted_color())
        #: text colour of a price older than the staleness limit (see the tooltip)
        self.stale_color = QColor(theme.STALE_COLOR)
        state.compare_changed.connect(self._on_compare_changed)
        if self._follow_state_catalog:
            state.catalog_changed.connect(self._on_catalog_changed)
        theme.notifier().changed.connect(self._on_theme_changed)

    # building ------------------------------------------------------------
    @property
    def display_cells(self) -> list[list[str]]:
        """The display text per row and column (replaced, never changed, on a reload)."""
        return self._cells

    @property
    def alignments(self) -> list[int]:
        """The text alignment per column, as plain ints."""
        return self._alignments

    def _rebuild_cells(self) -> None:
        self._cells = [
            [MISSING_TEXT if text is None else text for text in row]
            for row in self.index_data.cells
        ]
        self._missing = [[text is None for text in row] for row in self.index_data.cells]

    def set_entries(self, entries: Sequence[CatalogEntry]) -> None:
        self.beginResetModel()
        self.index_data = CatalogIndex(entries)
        self._rebuild_cells()
        self._sync_compare()
        self.endResetModel()

    def _on_catalog_changed(self) -> None:
        self.set_entries(self._state.entries())

    def _sync_compare(self) -> None:
        # The id's color slot: the ring shows the color the GPU has in every chart.
        ids = self._state.compare_ids
        self._compare_positions = dict(zip(ids, gpu_color_slots(ids), strict=True))

    def _on_compare_changed(self) -> None:
        self._sync_compare()
        rows = len(self._cells)
        if rows:
            self.dataChanged.emit(
                self.index(0, COMPARE_COLUMN_INDEX),
                self.index(rows - 1, COMPARE_COLUMN_INDEX),
                [Qt.ItemDataRole.CheckStateRole, COMPARE_COLOR_SLOT_ROLE, _ACCESSIBLE_TEXT],
            )

    def _on_theme_changed(self, _dark: bool) -> None:
        self.missing_color = QColor(theme.muted_color())
        rows = len(self._cells)
        if rows:
            self.dataChanged.emit(
                self.index(0, 0),
                self.index(rows - 1, len(COLUMNS) - 1),
                [Qt.ItemDataRole.ForegroundRole],
            )

    # reading ---------------------------------------------------------------
    @property
    def compare_ids(self) -> Collection[str]:
        return self._compare_positions.keys()

    def entry(self, row: int) -> CatalogEntry:
        return self.index_data.entries[row]

    def row_of(self, entry_id: str) -> int | None:
        try:
            return self.index_data.ids.index(entry_id)
        except ValueError:
            return None

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._cells)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index: ModelIndex, role: int = _DISPLAY) -> Any:
        if not index.isValid():
            return None
        return self.cell_data(index.row(), index.column(), role)

    def cell_data(self, row: int, column: int, role: int) -> Any:
        """``data()`` by row and column: the proxy calls this directly."""
        if role == _DISPLAY:
            return self._cells[row][column]
        if role == _ALIGN:
            return self._alignments[column]
        if role == _FOREGROUND:
            return self.text_color(row, column)
        if role == _CHECK:
            if column != COMPARE_COLUMN_INDEX:
                return None
            checked = self.index_data.ids[row] in self._compare_positions
            return Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked
        if role == COMPARE_COLOR_SLOT_ROLE:
            if column != COMPARE_COLUMN_INDEX:
                return None
            return self._compare_positions.get(self.index_data.ids[row], -1)
        if role == _ACCESSIBLE_TEXT and column == COMPARE_COLUMN_INDEX:
            # What a screen reader says for the ring (the proxy has no checkable flag).
            chosen = self.index_data.ids[row] in self._compare_positions
            return "In the comparison" if chosen else "Not in the comparison"
        if role == ENTRY_ID_ROLE:
            return self.index_data.ids[row]
        if role == _TOOLTIP:
            if column == COMPARE_COLUMN_INDEX:
                return COLUMNS[column].tooltip
            if column == NAME_COLUMN_INDEX:
                return plain_tooltip(self.index_data.entries[row].name)
            if self._missing[row][column]:
                return f"{COLUMNS[column].tooltip}: not in the catalog for this GPU"
            if column == PRICE_COLUMN_INDEX:
                return self.index_data.price_tooltips[row]
            if column == FROM_RATE_COLUMN_INDEX:
                return self.index_data.rate_tooltips[row]
            return None
        if role == SORT_KEY_ROLE:
            return COLUMNS[column].sort_key(self.index_data.entries[row])
        return None

    def text_color(self, row: int, column: int) -> QColor | None:
        """The cell's text colour when it is not the palette's: missing figures, stale prices."""
        if self._missing[row][column]:
            return self.missing_color
        if column == PRICE_COLUMN_INDEX and self.index_data.price_stale[row]:
            return self.stale_color
        return None

    def header_answers(self) -> dict[int, list[Any]]:
        """The horizontal header's data per role, then per column (the columns never change)."""
        return self._header_by_role

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        answers = self._header_by_role.get(int(role))
        return answers[section] if answers is not None and 0 <= section < len(answers) else None

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        return self.cell_flags(index.column()) if index.isValid() else Qt.ItemFlag.NoItemFlags

    def cell_flags(self, column: int) -> Qt.ItemFlag:
        return _FLAGS[column]

    # the compare column is the only editable thing -------------------------
    def setData(self, index: ModelIndex, value: Any, role: int = _DISPLAY) -> bool:
        if not index.isValid() or index.column() != COMPARE_COLUMN_INDEX or int(role) != _CHECK:
            return False
        return self.set_compared(index.row(), _is_checked(value))

    def set_compared(self, row: int, compared: bool) -> bool:
        entry_id = self.index_data.ids[row]
        if not compared:
            self._state.remove_from_compare(entry_id)
            return True
        if entry_id in self._compare_positions:
            return True
        if self._state.add_to_compare(entry_id):
            return True
        if len(self._state.compare_ids) >= MAX_COMPARED:
            self.compare_refused.emit(
                f"The comparison holds at most {MAX_COMPARED} GPUs; remove one first."
            )
        return False


def _is_checked(value: Any) -> bool:
    if isinstance(value, Qt.CheckState):
        return value == Qt.CheckState.Checked
    try:
        return int(value) == Qt.CheckState.Checked.value
    except (TypeError, ValueError):
        return bool(value)


__all__ = [
    "COMPARE_COLOR_SLOT_ROLE",
    "COMPARE_COLUMN_INDEX",
    "ENTRY_ID_ROLE",
    "NAME_COLUMN_INDEX",
    "SORT_KEY_ROLE",
    "CatalogProxyModel",
    "CatalogTableModel",
]
