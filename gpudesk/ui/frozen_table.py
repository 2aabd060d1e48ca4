"""A table view whose first columns stay in place while the others scroll sideways.

Qt has no frozen columns; the usual answer (Qt's "Frozen Column" example) is a
second view laid over the first one's left edge, sharing its model and
selection model and scrolling vertically with it. The columns under the
overlay stay in the main view too, so sorting, selection, keyboard moves and
persistent indexes all stay the main view's.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, QPoint, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QTableView,
    QWidget,
)


class RememberingHeader(QHeaderView):
    """A horizontal header that measures its size hint again only when that can change.

    Qt forgets the hint on every layout change of the model (each filter of
    the catalog) and measures every section again, asking the model for
    several roles per section: for a Python model that is about a tenth of a
    filter's frame. The hint depends only on what the key below holds.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        # What QTableView sets on the header it makes itself.
        self.setSectionsClickable(True)
        self.setHighlightSections(True)
        self._hint_key: tuple[object, ...] | None = None
        self._hint = QSize()

    def _key(self) -> tuple[object, ...]:
        return (
            self.font().key(),
            id(self.style()),
            self.count(),
            tuple(self.isSectionHidden(section) for section in range(self.count())),
            self.isSortIndicatorShown(),
            self.length(),
            self.minimumSectionSize(),
        )

    def sizeHint(self) -> QSize:
        key = self._key()
        if key != self._hint_key:
            self._hint = super().sizeHint()
            self._hint_key = key
        return QSize(self._hint)

    def forget_size_hint(self, *_changed: object) -> None:
        """Measure again on the next ask (the header texts changed)."""
        self._hint_key = None


class FrozenColumnsTableView(QTableView):
    """A :class:`QTableView` whose ``frozen`` columns (logical indexes) never scroll away.

    The frozen columns are kept at the leftmost visual positions, in the given
    order. ``frozen_view`` is the overlay; it takes no keyboard focus, so Tab
    and the arrow keys act on this view.
    """

    def __init__(self, frozen: Sequence[int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHorizontalHeader(RememberingHeader(self))
        self._frozen = tuple(frozen)
        #: The column headers' counts while they are held quiet (a layout change).
        self._held_column_counts: tuple[int, ...] | None = None
        overlay = QTableView(self)
        overlay.setHorizontalHeader(RememberingHeader(overlay))
        overlay.setObjectName("frozen_columns")
        overlay.setAccessibleName("Pinned columns")
        overlay.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        overlay.verticalHeader().setVisible(False)
        overlay.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        overlay.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        overlay.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        overlay.setFrameShape(QFrame.Shape.NoFrame)
        overlay.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        overlay.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        overlay.setWordWrap(False)
        overlay.setCornerButtonEnabled(False)
        overlay.horizontalHeader().setSectionsMovable(False)
        overlay.horizontalHeader().setHighlightSections(False)
        overlay.horizontalHeader().setStretchLastSection(False)
        overlay.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        overlay.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        overlay.customContextMenuRequested.connect(self._on_overlay_menu)
        self.frozen_view = overlay
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        # Tab leaves the table for the next control instead of walking its cells.
        self.setTabKeyNavigation(False)
        header = self.horizontalHeader()
        header.sectionResized.connect(self._on_section_resized)
        header.sectionMoved.connect(self._keep_frozen_first)
        header.sortIndicatorChanged.connect(self._on_sort_indicator_changed)
        overlay.horizontalHeader().sectionClicked.connect(self._on_overlay_header_clicked)
        self.verticalScrollBar().valueChanged.connect(overlay.verticalScrollBar().setValue)
        overlay.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)

    @property
    def frozen_columns(self) -> tuple[int, ...]:
        return self._frozen

    # wiring ----------------------------------------------------------------
    def setModel(self, model: QAbstractItemModel | None) -> None:
        super().setModel(model)
        overlay = self.frozen_view
        overlay.setModel(model)
        if model is None:
            return
        overlay.setSelectionModel(self.selectionModel())
        overlay.setSelectionBehavior(self.selectionBehavior())
        overlay.setSelectionMode(self.selectionMode())
        model.columnsInserted.connect(self._sync_columns)
        model.modelReset.connect(self._sync_columns)
        model.modelReset.connect(self._release_column_signals)
        # Connected after the headers' own handlers: they run between these two.
        model.layoutAboutToBeChanged.connect(self._hold_column_signals)
        model.layoutChanged.connect(self._release_column_signals)
        for view in (self, overlay):
            header = view.horizontalHeader()
            if isinstance(header, RememberingHeader):
                model.headerDataChanged.connect(header.forget_size_hint)
        self._sync_columns()

    def setItemDelegate(self, delegate: QAbstractItemDelegate) -> None:
        super().setItemDelegate(delegate)
        self.frozen_view.setItemDelegate(delegate)

    def setItemDelegateForColumn(self, column: int, delegate: QAbstractItemDelegate) -> None:
        super().setItemDelegateForColumn(column, delegate)
        if column in self._frozen:
            self.frozen_view.setItemDelegateForColumn(column, delegate)

    def setSelectionBehavior(self, behavior: QAbstractItemView.SelectionBehavior) -> None:
        super().setSelectionBehavior(behavior)
        self.frozen_view.setSelectionBehavior(behavior)

    def setSelectionMode(self, mode: QAbstractItemView.SelectionMode) -> None:
        super().setSelectionMode(mode)
        self.frozen_view.setSelectionMode(mode)

    def setAlternatingRowColors(self, enable: bool) -> None:
        super().setAlternatingRowColors(enable)
        self.frozen_view.setAlternatingRowColors(enable)

    def setColumnHidden(self, column: int, hide: bool) -> None:
        if column in self._frozen and hide:
            return  # a frozen column is the row's identity: always shown
        super().setColumnHidden(column, hide)

    def _sync_columns(self) -> None:
        model = self.model()
        if model is None:
            return
        overlay = self.frozen_view
        header = self.horizontalHeader()
        for column in range(model.columnCount()):
            overlay.setColumnHidden(column, column not in self._frozen)
            if column in self._frozen:
                overlay.setColumnWidth(column, header.sectionSize(column))
        overlay.horizontalHeader().setFixedHeight(header.height())
        self._keep_frozen_first()
        self._place_overlay()

    def _column_headers(self) -> tuple[QHeaderView, QHeaderView]:
        return (self.horizontalHeader(), self.frozen_view.horizontalHeader())

    def _hold_column_signals(self, *_args: object) -> None:
        """Keep the column headers quiet while the model changes its rows' layout.

        A horizontal header keeps its sections across a layout change by a
        persistent index in row 0; when that row is still there afterwards
        (from a filtered list back to all GPUs), it hides every hidden column
        again, and each "resized to 0" reaches the view in a queued call that
        repaints it once more after the frame that showed the new rows. The
        columns are the same ones, hidden alike, at the same widths: nothing
        to repaint.
        """
        self._held_column_counts = tuple(header.count() for header in self._column_headers())
        for header in self._column_headers():
            header.blockSignals(True)

    def _release_column_signals(self, *_args: object) -> None:
        held = self._held_column_counts
        if held is None:
            return
        self._held_column_counts = None
        for header in self._column_headers():
            header.blockSignals(False)
        if held != tuple(header.count() for header in self._column_headers()):
            # A model that changed its columns in a layout change: what the quiet
            # headers did not tell the views.
            for view, old in zip((self, self.frozen_view), held, strict=True):
                view.columnCountChanged(old, view.horizontalHeader().count())
            self._sync_columns()

    def _keep_frozen_first(self, *_args: object) -> None:
        header = self.horizontalHeader()
        for position, column in enumerate(self._frozen):
            if column < header.count() and header.visualIndex(column) != position:
                header.blockSignals(True)
                header.moveSection(header.visualIndex(column), position)
                header.blockSignals(False)
                self.viewport().update()

    def _on_section_resized(self, column: int, _old: int, new: int) -> None:
        if column in self._frozen:
            self.frozen_view.setColumnWidth(column, new)
            self._place_overlay()

    def _on_sort_indicator_changed(self, section: int, order: Qt.SortOrder) -> None:
        overlay_header = self.frozen_view.horizontalHeader()
        overlay_header.setSortIndicatorShown(self.isSortingEnabled())
        overlay_header.blockSignals(True)
        overlay_header.setSortIndicator(section, order)
        overlay_header.blockSignals(False)

    def _on_overlay_header_clicked(self, section: int) -> None:
        """A click on a frozen header sorts as a click on the main header would."""
        if not self.isSortingEnabled():
            return
        header = self.horizontalHeader()
        if header.sortIndicatorSection() == section:
            order = (
                Qt.SortOrder.AscendingOrder
                if header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
                else Qt.SortOrder.DescendingOrder
            )
        else:
            initial = self.model().headerData(
                section, Qt.Orientation.Horizontal, Qt.ItemDataRole.InitialSortOrderRole
            )
            order = (
                Qt.SortOrder(initial) if isinstance(initial, int) else Qt.SortOrder.AscendingOrder
            )
        header.setSortIndicator(section, order)

    def _on_overlay_menu(self, position: QPoint) -> None:
        mapped = self.frozen_view.viewport().mapTo(self.viewport(), position)
        self.customContextMenuRequested.emit(mapped)

    # geometry --------------------------------------------------------------
    def frozen_width(self) -> int:
        return sum(self.columnWidth(column) for column in self._frozen)

    def _place_overlay(self) -> None:
        frame = self.frameWidth()
        self.frozen_view.setGeometry(
            self.verticalHeader().width() + frame,
            frame,
            self.frozen_width(),
            self.viewport().height() + self.horizontalHeader().height(),
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_overlay()

    def updateGeometries(self) -> None:
        super().updateGeometries()
        self._place_overlay()

    def lay_out_now(self) -> None:
        """Lay out both views now, the overlay last, and line the overlay's rows up again.

        The overlay follows this view's vertical scroll bar; a scroll that came
        while its own range still fitted fewer rows was cut short, so after the
        layout it takes this view's position again.
        """
        self.executeDelayedItemsLayout()
        self.frozen_view.executeDelayedItemsLayout()
        self.frozen_view.verticalScrollBar().setValue(self.verticalScrollBar().value())

    def set_row_height(self, height_px: int) -> None:
        """One height for every row, in both views (uniform rows: no per-row sizing)."""
        for header in (self.verticalHeader(), self.frozen_view.verticalHeader()):
            header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
            header.setDefaultSectionSize(height_px)

    def scrollTo(
        self,
        index: QModelIndex | QPersistentModelIndex,
        hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible,
    ) -> None:
        # Scrolling a frozen column into view would only move the others away.
        if index.isValid() and index.column() in self._frozen:
            sideways = self.horizontalScrollBar().value()
            super().scrollTo(index, hint)
            self.horizontalScrollBar().setValue(sideways)
            return
        super().scrollTo(index, hint)
        if index.isValid():
            # Keep the cell clear of the overlay: scroll left by what it covers.
            left = self.visualRect(index).left()
            covered = self.frozen_width() - left
            if covered > 0:
                bar = self.horizontalScrollBar()
                bar.setValue(bar.value() - covered)
