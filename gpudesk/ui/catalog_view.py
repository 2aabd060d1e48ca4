"""The catalog browser: filters, the sortable table, the compare chips and the details pane."""

from __future__ import annotations

from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    QPoint,
    QSettings,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.query import CatalogFilter
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.limits import MAX_COMPARED
from gpudesk.ui import catalog_table
from gpudesk.ui.catalog_columns import COLUMNS, NARROW_HIDDEN, column_index
from gpudesk.ui.catalog_layout_settings import restore_layout, save_layout
from gpudesk.ui.catalog_model import (
    COMPARE_COLUMN_INDEX,
    NAME_COLUMN_INDEX,
    CatalogProxyModel,
    CatalogTableModel,
)

# Names the table module holds, importable from here as before the split.
from gpudesk.ui.catalog_table import (  # noqa: F401
    ARCHITECTURE_MAX_WIDTH_PX,
    FIT_SAMPLE_ROWS,
    column_menu_label,
)
from gpudesk.ui.compare_bar import CompareBar
from gpudesk.ui.compare_delegate import CompareDelegate
from gpudesk.ui.details_pane import DetailsPane
from gpudesk.ui.filter_panel import FilterPanel
from gpudesk.ui.frozen_table import FrozenColumnsTableView
from gpudesk.ui.state import AppState
from gpudesk.ui.text_cell_delegate import TextCellDelegate

#: The details pane's first width when the table is narrow (it starts at 330 px).
NARROW_DETAILS_WIDTH_PX = 280


class CatalogView(QWidget):
    """The Catalog tab.

    Signals:
        counts_changed(int, int): visible GPUs and all GPUs ("N of M GPUs").
        status_message(str): a short message for the status bar.
        compare_tab_requested(): the user asked to open the Compare tab.
    """

    counts_changed = Signal(int, int)
    status_message = Signal(str)
    compare_tab_requested = Signal()

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.model = CatalogTableModel(state, parent=self)
        self.proxy = CatalogProxyModel(self.model, parent=self)

        self.filters = FilterPanel()
        self.filters.set_vendors(self.model.index_data.vendors())
        self.filters.set_kinds_and_statuses(
            self.model.index_data.kinds(), self.model.index_data.status_counts()
        )
        year_range = self.model.index_data.year_range()
        if year_range is not None:
            self.filters.set_year_bounds(*year_range)
        filter_scroll = QScrollArea()
        filter_scroll.setWidget(self.filters)
        filter_scroll.setWidgetResizable(True)
        filter_scroll.setFrameShape(QFrame.Shape.NoFrame)
        scrollbar_px = filter_scroll.verticalScrollBar().sizeHint().width()
        filter_scroll.setMinimumWidth(self.filters.minimumSizeHint().width() + scrollbar_px)
        filter_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.compare_bar = CompareBar(state)
        # The tick and the name stay in place while the figures scroll sideways.
        self.table = FrozenColumnsTableView((COMPARE_COLUMN_INDEX, NAME_COLUMN_INDEX))
        self._setup_table()
        self.details = DetailsPane()
        self.text_delegate = TextCellDelegate(self.proxy, self.table)
        self.table.setItemDelegate(self.text_delegate)
        self.compare_delegate = CompareDelegate(self.table)
        self.table.setItemDelegateForColumn(COMPARE_COLUMN_INDEX, self.compare_delegate)

        center = QWidget()
        center_layout = QVBoxLayout(center)
        center_layout.setContentsMargins(0, 6, 0, 0)
        center_layout.setSpacing(4)
        center_layout.addWidget(self.compare_bar)
        self.no_match = self._build_no_match()
        center_layout.addWidget(self.no_match)
        center_layout.addWidget(self.table, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("catalog_splitter")
        self.splitter.addWidget(filter_scroll)
        self.splitter.addWidget(center)
        self.splitter.addWidget(self.details)
        self.splitter.setCollapsible(1, False)
        # Drag the details pane shut for a wider table; dragging back opens it.
        self.splitter.setCollapsible(2, True)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 0)
        self.splitter.setSizes([205, 865, 330])
        self._details_width = 330
        #: Whether the first-layout check of :meth:`apply_narrow_defaults` has run.
        self._narrow_defaults_done = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.splitter)

        self.filters.filter_changed.connect(self.proxy.set_filter)
        self.proxy.rows_changed.connect(self._on_rows_changed)
        self.model.compare_refused.connect(self.status_message)
        self.compare_bar.entry_clicked.connect(self.select_entry)
        self.compare_bar.add_requested.connect(self.add_selected_to_compare)
        self.compare_bar.compare_tab_requested.connect(self.compare_tab_requested)
        state.catalog_changed.connect(self._on_catalog_changed)
        state.fit_filter_changed.connect(self._on_fit_filter_changed)
        self.proxy.set_only_ids(state.fit_filter_ids)
        self.proxy.set_filter(self.filters.criteria())
        self._select_first_if_none()
        self._update_no_match()

    def _build_no_match(self) -> QWidget:
        """ "No GPUs match" with a Reset button, shown while the filters hide every GPU."""
        notice = QFrame()
        notice.setFrameShape(QFrame.Shape.StyledPanel)
        row = QHBoxLayout(notice)
        row.setContentsMargins(10, 6, 10, 6)
        self.no_match_label = QLabel("No GPUs match these filters.")
        font = self.no_match_label.font()
        font.setBold(True)
        self.no_match_label.setFont(font)
        row.addWidget(self.no_match_label, 1)
        self.no_match_reset = QPushButton("Reset filters")
        self.no_match_reset.setToolTip("Clear the search and every filter")
        self.no_match_reset.clicked.connect(self.reset_filters)
        row.addWidget(self.no_match_reset)
        notice.setVisible(False)
        return notice

    def _update_no_match(self) -> None:
        nothing = self.proxy.visible_count() == 0 and self.proxy.total_count() > 0
        self.no_match.setVisible(nothing)

    # the table -------------------------------------------------------------
    def _setup_table(self) -> None:
        table = self.table
        catalog_table.configure_table(table, self.proxy)
        header = table.horizontalHeader()
        header.customContextMenuRequested.connect(self._header_menu)
        self._fit_column_widths()
        header.setSortIndicator(NAME_COLUMN_INDEX, Qt.SortOrder.AscendingOrder)
        table.setSortingEnabled(True)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._row_menu)
        selection = table.selectionModel()
        selection.currentRowChanged.connect(self._on_current_row_changed)

    def _fit_column_widths(self) -> None:
        catalog_table.fit_column_widths(self.table, self._resize_columns_to_contents_unshown)

    def _resize_columns_to_contents_unshown(self) -> None:
        """:func:`~gpudesk.ui.catalog_table.resize_columns_to_contents_unshown` on this table."""
        catalog_table.resize_columns_to_contents_unshown(self.table, self.proxy)

    def _header_menu(self, position: QPoint) -> None:
        menu = QMenu(self)
        self.populate_columns_menu(menu)
        menu.exec(self.table.horizontalHeader().mapToGlobal(position))

    def populate_columns_menu(self, menu: QMenu) -> None:
        """Fill ``menu`` with one checkable action per column (View → Columns)."""
        catalog_table.populate_columns_menu(
            menu, self.table, self.set_column_visible, self.reset_columns
        )

    def set_column_visible(self, key: str, visible: bool) -> None:
        index = column_index(key)
        self.table.setColumnHidden(index, not visible)
        if visible and self.table.columnWidth(index) < 30:
            self.table.resizeColumnToContents(index)

    def column_visible(self, key: str) -> bool:
        return not self.table.isColumnHidden(column_index(key))

    def reset_columns(self) -> None:
        header = self.table.horizontalHeader()
        for logical in range(len(COLUMNS)):
            visual = header.visualIndex(logical)
            if visual != logical:
                header.moveSection(visual, logical)
            self.table.setColumnHidden(logical, not COLUMNS[logical].visible_by_default)
        self._fit_column_widths()
        self._narrow_defaults_done = False
        self.apply_narrow_defaults()

    def key_columns_width(self) -> int:
        """Pixels the default columns up to the cloud rate take side by side: what must be
        on screen without scrolling (tick, name, memory, bandwidth, tensor, price, rate)."""
        return catalog_table.key_columns_width(self.table)

    def apply_narrow_defaults(self) -> bool:
        """On first layout with default columns, leave out :data:`NARROW_HIDDEN` when the
        table is too narrow for them all (True when it did). A saved layout is kept."""
        if self._narrow_defaults_done or not self.isVisible():
            return False
        self._narrow_defaults_done = True
        if self.table.viewport().width() >= self.key_columns_width():
            return False
        for key in NARROW_HIDDEN:
            self.table.setColumnHidden(column_index(key), True)
        sizes = self.splitter.sizes()
        if sizes[2] > NARROW_DETAILS_WIDTH_PX:
            # The details pane gives up some width too: price and rate then fit at 1366 px.
            spare = sizes[2] - NARROW_DETAILS_WIDTH_PX
            self.splitter.setSizes([sizes[0], sizes[1] + spare, NARROW_DETAILS_WIDTH_PX])
        return True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # After the layout has given the table its width.
        QTimer.singleShot(0, self.apply_narrow_defaults)

    def details_visible(self) -> bool:
        return self.splitter.sizes()[2] > 0

    def set_details_visible(self, visible: bool) -> None:
        """Open or collapse the details pane (View → Details pane, Ctrl+I)."""
        sizes = self.splitter.sizes()
        if visible == (sizes[2] > 0):
            return
        if visible:
            width = max(self._details_width, self.details.minimumSizeHint().width(), 260)
            self.splitter.setSizes([sizes[0], max(200, sizes[1] - width), width])
        else:
            self._details_width = sizes[2]
            self.splitter.setSizes([sizes[0], sizes[1] + sizes[2], 0])

    def _row_menu(self, position: QPoint) -> None:
        entries = self.selected_entries()
        if not entries:
            return
        menu = QMenu(self)
        add = menu.addAction("Add to compare", self.add_selected_to_compare)
        add.setShortcut("Ctrl+D")
        add.setEnabled(any(entry.id not in self.state.compare_ids for entry in entries))
        remove = menu.addAction("Remove from compare", self.remove_selected_from_compare)
        remove.setEnabled(any(entry.id in self.state.compare_ids for entry in entries))
        menu.addSeparator()
        names = "\n".join(entry.name for entry in entries)
        menu.addAction("Copy name", lambda: QGuiApplication.clipboard().setText(names))
        menu.exec(self.table.viewport().mapToGlobal(position))

    # selection and details ---------------------------------------------------
    def current_entry(self) -> CatalogEntry | None:
        index = self.table.currentIndex()
        if not index.isValid() or index.row() >= self.proxy.visible_count():
            return None
        return self.proxy.entry_at(index.row())

    def selected_entries(self) -> list[CatalogEntry]:
        """The selected rows' entries in table order (the current row if none)."""
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        if not rows:
            current = self.current_entry()
            return [] if current is None else [current]
        return [self.proxy.entry_at(row) for row in rows]

    def select_entry(self, entry_id: str) -> bool:
        """Select one GPU and scroll to it; filters that hide it are cleared first."""
        if self.model.row_of(entry_id) is None:
            return False
        if self.proxy.row_of(entry_id) is None:
            self.filters.reset()
        if self.proxy.row_of(entry_id) is None:
            self.state.set_fit_filter(None)
        row = self.proxy.row_of(entry_id)
        if row is None:
            return False
        self._select_row(row)
        return True

    def _select_row(self, row: int) -> None:
        index = self.proxy.index(row, NAME_COLUMN_INDEX)
        self.table.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.scrollTo(index)

    def _select_first_if_none(self) -> None:
        if not self.table.currentIndex().isValid() and self.proxy.visible_count():
            self._select_row(0)
        elif not self.proxy.visible_count():
            self.details.show_entry(None)

    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        entry = self.proxy.entry_at(current.row())
        if self.details.entry is None or self.details.entry.id != entry.id:
            self.details.show_entry(entry, self.state.catalog.origins.get(entry.id))

    def _on_rows_changed(self, visible: int, total: int) -> None:
        self.counts_changed.emit(visible, total)
        self._select_first_if_none()
        # The details pane shows the current row: keep that row in view (after Escape
        # clears a search, the GPU it found may sit far down the whole catalog).
        current = self.table.currentIndex()
        if current.isValid():
            # Qt lays the views out later: until then the scroll ranges (the table's
            # and its frozen columns') still fit the old row count. Laid out now, the
            # scroll lands in the same frame as the new rows: one paint per viewport.
            self.table.lay_out_now()
            self.table.scrollTo(current)
        self._update_no_match()

    # compare -----------------------------------------------------------------
    def add_selected_to_compare(self) -> int:
        """Add the selected GPUs; returns how many were added."""
        added: list[str] = []
        entries = self.selected_entries()
        for entry in entries:
            if entry.id in self.state.compare_ids:
                continue
            if len(self.state.compare_ids) >= MAX_COMPARED:
                self.status_message.emit(
                    f"The comparison holds at most {MAX_COMPARED} GPUs; remove one first."
                )
                break
            if self.state.add_to_compare(entry.id):
                added.append(entry.name)
        if added:
            total = len(self.state.compare_ids)
            self.status_message.emit(
                f"Added {', '.join(added)} to the comparison ({total}/{MAX_COMPARED})."
            )
        return len(added)

    def remove_selected_from_compare(self) -> None:
        for entry in self.selected_entries():
            self.state.remove_from_compare(entry.id)

    # filters -----------------------------------------------------------------
    def focus_search(self) -> None:
        self.filters.focus_search()

    def reset_filters(self) -> None:
        self.filters.reset()
        self.state.set_fit_filter(None)

    def criteria(self) -> CatalogFilter:
        return self.proxy.criteria

    def visible_count(self) -> int:
        return self.proxy.visible_count()

    def _on_fit_filter_changed(self) -> None:
        self.proxy.set_only_ids(self.state.fit_filter_ids)

    def _on_catalog_changed(self) -> None:
        # The model has reset already (it connected first); keep the user's place.
        shown = self.details.entry.id if self.details.entry is not None else None
        self.filters.set_vendors(self.model.index_data.vendors())
        self.filters.set_kinds_and_statuses(
            self.model.index_data.kinds(), self.model.index_data.status_counts()
        )
        year_range = self.model.index_data.year_range()
        if year_range is not None:
            self.filters.set_year_bounds(*year_range)
        if shown is not None and self.proxy.row_of(shown) is not None:
            self._select_row(self.proxy.row_of(shown) or 0)
            entry = self.state.catalog.by_id(shown)
            self.details.show_entry(entry, self.state.catalog.origins.get(shown))
        else:
            self.details.entry = None
            self._select_first_if_none()

    # settings ----------------------------------------------------------------
    def save_settings(self, settings: QSettings) -> None:
        save_layout(settings, self.table, self.splitter, self.filters)

    def restore_settings(self, settings: QSettings) -> None:
        if restore_layout(settings, self.table, self.splitter, self.filters):
            self._narrow_defaults_done = True  # the user's own layout stays as it was
