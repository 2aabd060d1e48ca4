"""The catalog table's visible rows: :class:`CatalogProxyModel` filters and sorts
a :class:`~gpudesk.ui.catalog_model.CatalogTableModel` in bulk.

It is a flat table model over a row map rather than a ``QSortFilterProxyModel``
for a measured reason: with 10,000 rows a Python ``lessThan`` took 384 ms per
sort and a Python ``filterAcceptsRow`` 5-11 ms per filter change before
painting; here a filter change or a sort is a few list passes over precomputed
keys followed by one layout change that keeps the selection. It derives from
``QAbstractTableModel``, not ``QAbstractProxyModel``: Qt then answers
``parent()`` and ``sibling()`` in C++, which a repaint asks for hundreds of
times, and ``data()`` answers the roles every cell is asked for in one Python
call.
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import compress
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QColor

from gpudesk.catalog.query import CatalogFilter, matched_elsewhere
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.ui.catalog_columns import COLUMNS
from gpudesk.ui.catalog_roles import (
    _ALIGN,
    _DISPLAY,
    _TOOLTIP,
    _UNSET_ROLES,
    NAME_COLUMN_INDEX,
    ModelIndex,
)

if TYPE_CHECKING:
    from gpudesk.ui.catalog_model import CatalogTableModel


def _find(rows: list[int], row: int) -> int | None:
    try:
        return rows.index(row)
    except ValueError:
        return None


class CatalogProxyModel(QAbstractTableModel):
    """The visible rows of a :class:`CatalogTableModel`: filtered, then sorted.

    Use :meth:`set_filter`, :meth:`set_only_ids` and :meth:`sort`; each
    recomputes the row list from the source's precomputed index in bulk.
    Rows without a value in the sort column come last in both directions.

    Signals:
        rows_changed(int, int): visible rows and all rows, after any change.
    """

    rows_changed = Signal(int, int)

    def __init__(self, source: CatalogTableModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self._criteria = CatalogFilter()
        self._only_ids: frozenset[str] | None = None
        self._sort_column = -1
        self._sort_order = Qt.SortOrder.AscendingOrder
        self._rows: list[int] = []
        self._position_of: dict[int, int] | None = None
        self._mask = bytearray()
        #: source row -> " · in notes" (or "") for the current search, filled as painted
        self._why: dict[int, str] = {}
        self._cells = source.display_cells
        self._alignments = source.alignments
        self._header_answers = source.header_answers()
        source.modelAboutToBeReset.connect(self.beginResetModel)
        source.modelReset.connect(self._on_source_reset)
        source.dataChanged.connect(self._on_source_data_changed)
        self._mask = self._compute_mask()
        self._rows = self._compute_rows()

    @property
    def _position(self) -> dict[int, int]:
        """Source row -> visible row, built when first asked after a change."""
        if self._position_of is None:
            self._position_of = {row: position for position, row in enumerate(self._rows)}
        return self._position_of

    # what to show ----------------------------------------------------------
    @property
    def criteria(self) -> CatalogFilter:
        return self._criteria

    @property
    def only_ids(self) -> frozenset[str] | None:
        return self._only_ids

    def set_filter(self, criteria: CatalogFilter) -> None:
        if criteria == self._criteria:
            return
        self._criteria = criteria
        self._refilter()

    def set_only_ids(self, entry_ids: Collection[str] | None) -> None:
        """Keep only these ids (the "fits my workload" filter); None keeps all."""
        wanted = None if entry_ids is None else frozenset(entry_ids)
        if wanted == self._only_ids:
            return
        self._only_ids = wanted
        self._refilter()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column = column
        self._sort_order = order
        self._relayout(self._compute_rows())

    def sort_column(self) -> int:
        return self._sort_column

    def sort_order(self) -> Qt.SortOrder:
        return self._sort_order

    def _refilter(self) -> None:
        self._why = {}
        self._mask = self._compute_mask()
        self._relayout(self._compute_rows())

    def _compute_mask(self) -> bytearray:
        return self._source.index_data.matching(self._criteria, self._only_ids)

    def _compute_rows(self) -> list[int]:
        mask = self._mask
        index_data = self._source.index_data
        # compress/map: the 10,000-row passes run in C, not in a comprehension
        if not 0 <= self._sort_column < len(COLUMNS):
            rows = list(compress(range(len(index_data)), mask))
        else:
            order = index_data.order(
                self._sort_column,
                self._sort_order == Qt.SortOrder.DescendingOrder,
                self._source.compare_ids,
            )
            rows = list(compress(order, map(mask.__getitem__, order)))
        # A search puts the GPUs it names first; the column sort orders the rest.
        return index_data.rank_by_name(rows, self._criteria.text)

    def _relayout(self, rows: list[int]) -> None:
        """Swap in a new row list as one layout change, moving persistent indexes."""
        # PySide emits these two only without arguments (no parents, no hint).
        self.layoutAboutToBeChanged.emit()
        old_indexes = self.persistentIndexList()
        old_rows = [self._rows[index.row()] for index in old_indexes]
        self._rows = rows
        self._position_of = None
        # The persistent indexes (current row, selection) name a few rows:
        # finding those few is cheaper than mapping all 10,000.
        distinct = set(old_rows)
        if len(distinct) <= 8:
            moved = {row: _find(rows, row) for row in distinct}
        else:
            moved = {row: self._position.get(row) for row in distinct}
        new_indexes = []
        for index, source_row in zip(old_indexes, old_rows, strict=True):
            position = moved[source_row]
            new_indexes.append(
                QModelIndex() if position is None else self.createIndex(position, index.column())
            )
        self.changePersistentIndexList(old_indexes, new_indexes)
        self.layoutChanged.emit()
        self.rows_changed.emit(len(self._rows), len(self._source.index_data))

    def _on_source_reset(self) -> None:
        self._why = {}
        self._cells = self._source.display_cells
        self._alignments = self._source.alignments
        self._mask = self._compute_mask()
        self._rows = self._compute_rows()
        self._position_of = None
        self.endResetModel()
        self.rows_changed.emit(len(self._rows), len(self._source.index_data))

    def _on_source_data_changed(
        self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int]
    ) -> None:
        if self._rows:
            self.dataChanged.emit(
                self.index(0, top_left.column()),
                self.index(len(self._rows) - 1, bottom_right.column()),
                roles,
            )

    # rows and entries ------------------------------------------------------
    def visible_count(self) -> int:
        return len(self._rows)

    def total_count(self) -> int:
        return len(self._source.index_data)

    def entry_at(self, row: int) -> CatalogEntry:
        return self._source.entry(self._rows[row])

    def match_note(self, row: int) -> str:
        """For a row the search keeps though its name lacks a word: " · in notes"
        (or "in architecture"); "" otherwise. Worked out when first painted."""
        source_row = self._rows[row]
        note = self._why.get(source_row)
        if note is None:
            places = matched_elsewhere(self._source.entry(source_row), self._criteria.text)
            note = f" · in {' and '.join(places)}" if places else ""
            self._why[source_row] = note
        return note

    def visible_ids(self) -> list[str]:
        ids = self._source.index_data.ids
        return [ids[row] for row in self._rows]

    def row_of(self, entry_id: str) -> int | None:
        source_row = self._source.row_of(entry_id)
        return None if source_row is None else self._position.get(source_row)

    # the table model ---------------------------------------------------------
    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def index(self, row: int, column: int, parent: ModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        if parent.isValid() or not (0 <= row < len(self._rows) and 0 <= column < len(COLUMNS)):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, child: ModelIndex | None = None) -> Any:  # type: ignore[override]
        """The QObject parent, or for an index its parent: none, rows are flat.

        For Python callers only: Qt's own calls go to the table model's C++
        ``parent()``, so a repaint makes no Python call for it.
        """
        if child is None:
            return super().parent()
        return QModelIndex()

    def hasChildren(self, parent: ModelIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and bool(self._rows)

    def mapToSource(self, proxy_index: ModelIndex) -> QModelIndex:
        if not proxy_index.isValid() or proxy_index.row() >= len(self._rows):
            return QModelIndex()
        return self._source.index(self._rows[proxy_index.row()], proxy_index.column())

    def mapFromSource(self, source_index: ModelIndex) -> QModelIndex:
        if not source_index.isValid():
            return QModelIndex()
        position = self._position.get(source_index.row())
        if position is None:
            return QModelIndex()
        return self.createIndex(position, source_index.column())

    # fast paths: one Python call per cell and role, no second frame --------
    def data(self, index: ModelIndex, role: int = _DISPLAY) -> Any:
        # Called seven times per cell per paint (once per role the delegate
        # reads): no isValid() call (an invalid index has row -1), and the
        # display text, alignment and the roles never set answered here.
        row = index.row()
        if row < 0:
            return None
        if role == _DISPLAY:
            if index.column() == NAME_COLUMN_INDEX and self._criteria.text:
                return self._cells[self._rows[row]][NAME_COLUMN_INDEX] + self.match_note(row)
            return self._cells[self._rows[row]][index.column()]
        if role == _TOOLTIP and index.column() == NAME_COLUMN_INDEX and self._criteria.text:
            note = self.match_note(row)
            name = self._source.cell_data(self._rows[row], NAME_COLUMN_INDEX, role)
            return (
                f"{name}\nMatched {note.removeprefix(' · ')}: "
                "the name does not hold every word searched"
                if note
                else name
            )
        if role in _UNSET_ROLES:
            return None
        if role == _ALIGN:
            return self._alignments[index.column()]
        return self._source.cell_data(self._rows[row], index.column(), role)

    def cell_paint(self, row: int, column: int) -> tuple[str, int, QColor | None]:
        """What :class:`~gpudesk.ui.text_cell_delegate.TextCellDelegate` draws, in one call."""
        source_row = self._rows[row]
        text = self._cells[source_row][column]
        if column == NAME_COLUMN_INDEX and self._criteria.text:
            text += self.match_note(row)
        return (
            text,
            self._alignments[column],
            self._source.text_color(source_row, column),
        )

    # No flags() here: Qt's own (enabled, selectable) costs no Python call, where
    # a Python one cost about a tenth of each repaint (it is asked per painted
    # cell). The compare column's toggling is the delegate's; assistive tools
    # read its state from AccessibleTextRole.

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        # Asked per column and role whenever the header measures itself (each layout change).
        if orientation is not Qt.Orientation.Horizontal:
            return None
        answers = self._header_answers.get(role)
        if answers is None or not 0 <= section < len(answers):
            return None
        return answers[section]

    def setData(self, index: ModelIndex, value: Any, role: int = _DISPLAY) -> bool:
        if not index.isValid():
            return False
        return self._source.setData(self.mapToSource(index), value, role)
