"""The catalog browser: filters, the sortable table, the compare chips and the details pane."""

from __future__ import annotations

import json

from PySide6.QtCore import (
    QByteArray,
    QItemSelectionModel,
    QModelIndex,
    QPoint,
    QSettings,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.query import CatalogFilter
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.limits import MAX_COMPARED
from gpudesk.ui.catalog_columns import (
    COLUMN_KEYS,
    COLUMNS,
    KEY_COLUMNS_END,
    NARROW_HIDDEN,
    Column,
    column_index,
)
from gpudesk.ui.catalog_model import (
    COMPARE_COLUMN_INDEX,
    NAME_COLUMN_INDEX,
    CatalogProxyModel,
    CatalogTableModel,
)
from gpudesk.ui.compare_bar import CompareBar
from gpudesk.ui.compare_delegate import CompareDelegate
from gpudesk.ui.details_pane import DetailsPane
from gpudesk.ui.filter_panel import FilterPanel
from gpudesk.ui.frozen_table import FrozenColumnsTableView
from gpudesk.ui.state import AppState
from gpudesk.ui.text_cell_delegate import TextCellDelegate

_SETTINGS_HEADER = "catalog/header"
_SETTINGS_COLUMNS = "catalog/columns"
_SETTINGS_SPLITTER = "catalog/splitter"
_SETTINGS_FILTERS = "catalog/filters"
_NAME_MAX_WIDTH_PX = 210
#: Architecture names ("Xe HPC (Ponte Vecchio)") elide past this; the tooltip has it all.
ARCHITECTURE_MAX_WIDTH_PX = 170
#: Rows the column widths are measured on (Qt's resizeContentsPrecision).
FIT_SAMPLE_ROWS = 200
#: The details pane's first width when the table is narrow (it starts at 330 px).
NARROW_DETAILS_WIDTH_PX = 280


def column_menu_label(column: Column) -> str:
    """A column's label in View → Columns: a name ("FP64 (TFLOPS)", "ECC", "From
    (USD/GPU-h)"), never the sentence its tooltip holds."""
    if column.key in METRICS:
        return METRICS[column.key].header
    if column.key == "compare":
        return "Compare tick"
    return column.header.replace("\n", " ")


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
        assert isinstance(table, FrozenColumnsTableView)
        table.setModel(self.proxy)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        table.setCornerButtonEnabled(False)
        table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.verticalHeader().setVisible(False)
        table.set_row_height(table.fontMetrics().height() + 8)
        # A long name elides in its middle: the end of the cell keeps a search's
        # "· in notes" (and a model suffix such as "Superchip") in view.
        table.frozen_view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = table.horizontalHeader()
        header.setSectionsMovable(True)
        header.setFirstSectionMovable(False)
        header.setHighlightSections(False)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(28)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._header_menu)
        for index, column in enumerate(COLUMNS):
            table.setColumnHidden(index, not column.visible_by_default)
        self._fit_column_widths()
        header.setSortIndicator(NAME_COLUMN_INDEX, Qt.SortOrder.AscendingOrder)
        table.setSortingEnabled(True)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.customContextMenuRequested.connect(self._row_menu)
        selection = table.selectionModel()
        selection.currentRowChanged.connect(self._on_current_row_changed)

    def _fit_column_widths(self) -> None:
        header = self.table.horizontalHeader()
        # Sample rows: a 10,000-row catalog must not measure every cell.
        header.setResizeContentsPrecision(FIT_SAMPLE_ROWS)
        if self.table.isVisible():
            # Shown, Qt samples the rows on screen first, then outwards from them.
            self.table.resizeColumnsToContents()
        else:
            self._resize_columns_to_contents_unshown()
        if header.sectionSize(NAME_COLUMN_INDEX) > _NAME_MAX_WIDTH_PX:
            header.resizeSection(NAME_COLUMN_INDEX, _NAME_MAX_WIDTH_PX)
        architecture = column_index("architecture")
        if header.sectionSize(architecture) > ARCHITECTURE_MAX_WIDTH_PX:
            header.resizeSection(architecture, ARCHITECTURE_MAX_WIDTH_PX)
        header.resizeSection(
            COMPARE_COLUMN_INDEX, max(30, header.sectionSize(COMPARE_COLUMN_INDEX))
        )

    def _resize_columns_to_contents_unshown(self) -> None:
        """What ``resizeColumnsToContents()`` does to a table not yet shown, measured per string.

        Qt's delegate asks the model, for each sampled cell, its size hint, text,
        font, alignment, check state, decoration and colours: seven calls into
        this Python model per cell, about 0.1 s of start-up for the bundled
        catalog (a sixth of it). A text cell's size follows from its text alone,
        so each distinct string is measured once, by the style, as
        QStyledItemDelegate.sizeHint measures it. The tick column (a check
        state) is left to Qt.
        """
        table = self.table
        header = table.horizontalHeader()
        proxy = self.proxy
        style = table.style()
        delegate = table.itemDelegate()
        assert isinstance(delegate, QStyledItemDelegate)  # Qt's own, until __init__ sets ours
        locale = table.locale()
        option = QStyleOptionViewItem()
        table.initViewItemOption(option)
        plain = option.features
        with_text = plain | QStyleOptionViewItem.ViewItemFeature.HasDisplay
        item = QStyle.ContentsType.CT_ItemViewItem
        no_size = QSize()
        grid = 1 if table.showGrid() else 0
        widths: dict[str, int] = {}
        rows = range(min(proxy.rowCount(), header.resizeContentsPrecision()))
        display = Qt.ItemDataRole.DisplayRole
        for column in range(proxy.columnCount()):
            if header.isSectionHidden(column):
                continue  # as Qt does: a hidden column keeps its width
            if column == COMPARE_COLUMN_INDEX:
                table.resizeColumnToContents(column)
                continue
            content = 0
            for row in rows:
                text = proxy.data(proxy.index(row, column), display)
                text = "" if text is None else str(text)
                width = widths.get(text)
                if width is None:
                    option.text = delegate.displayText(
                        text, locale
                    )  # line breaks, as Qt shows them
                    option.features = with_text if text else plain
                    width = style.sizeFromContents(item, option, no_size, table).width()
                    widths[text] = width
                content = max(content, width)
            width = max(content + grid, header.sectionSizeHint(column))
            header.resizeSection(
                column, min(max(width, header.minimumSectionSize()), header.maximumSectionSize())
            )

    def _header_menu(self, position: QPoint) -> None:
        menu = QMenu(self)
        self.populate_columns_menu(menu)
        menu.exec(self.table.horizontalHeader().mapToGlobal(position))

    def populate_columns_menu(self, menu: QMenu) -> None:
        """Fill ``menu`` with one checkable action per column (View → Columns)."""
        menu.clear()
        menu.setToolTipsVisible(True)
        for index, column in enumerate(COLUMNS):
            if index == NAME_COLUMN_INDEX:
                continue  # a row must stay recognisable
            action = menu.addAction(column_menu_label(column))
            action.setToolTip(column.tooltip.replace("\n", " "))
            action.setCheckable(True)
            action.setChecked(not self.table.isColumnHidden(index))
            action.toggled.connect(
                lambda shown, key=column.key: self.set_column_visible(key, shown)
            )
        menu.addSeparator()
        menu.addAction("Default columns", self.reset_columns)

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
        header = self.table.horizontalHeader()
        last = column_index(KEY_COLUMNS_END)
        return sum(
            header.sectionSize(index)
            for index, column in enumerate(COLUMNS[: last + 1])
            if column.visible_by_default
        )

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
        settings.setValue(_SETTINGS_HEADER, self.table.horizontalHeader().saveState())
        settings.setValue(_SETTINGS_COLUMNS, ",".join(COLUMN_KEYS))
        settings.setValue(_SETTINGS_SPLITTER, self.splitter.saveState())
        settings.setValue(_SETTINGS_FILTERS, json.dumps(self.filters.save_state()))

    def restore_settings(self, settings: QSettings) -> None:
        header_state = settings.value(_SETTINGS_HEADER)
        # A saved layout from a build with other columns would scramble them.
        if isinstance(header_state, QByteArray) and settings.value(_SETTINGS_COLUMNS) == ",".join(
            COLUMN_KEYS
        ):
            header = self.table.horizontalHeader()
            if header.restoreState(header_state):
                self._narrow_defaults_done = True  # the user's own layout stays as it was
                self.table.sortByColumn(header.sortIndicatorSection(), header.sortIndicatorOrder())
        splitter_state = settings.value(_SETTINGS_SPLITTER)
        if isinstance(splitter_state, QByteArray):
            self.splitter.restoreState(splitter_state)
        saved_filters = settings.value(_SETTINGS_FILTERS)
        if isinstance(saved_filters, str):
            try:
                record = json.loads(saved_filters)
            except ValueError:
                record = None
            if isinstance(record, dict):
                self.filters.restore_state(record)
