"""Where the Compare tab puts its table and charts: column widths, row labels, and the
charts beside the table, below it or in a tab (:class:`CompareLayout`, the base of
:class:`~gpudesk.ui.compare_view.CompareView`)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from enum import StrEnum

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QComboBox, QSplitter, QStackedWidget, QTableView, QTabWidget, QWidget

from gpudesk.compare.table import Comparison, Row, RowKind
from gpudesk.ui.compare_widgets import CompareTableModel

#: Row labels wider than this elide (the tooltip has the whole label).
ROW_LABEL_MAX_PX = 250


class ChartLayout(StrEnum):
    """Where the Compare tab's charts go."""

    BESIDE = "beside"
    BELOW = "below"
    TAB = "tab"


LAYOUT_WORDS = {
    ChartLayout.BESIDE: "beside the table",
    ChartLayout.BELOW: "below the table",
    ChartLayout.TAB: "in a tab",
}


class CompareLayout(QWidget):
    """The layout half of the Compare tab; the subclass builds the widgets named here."""

    table: QTableView
    table_model: CompareTableModel
    table_panel: QWidget
    chart_tabs: QTabWidget
    splitter: QSplitter
    layout_tabs: QTabWidget
    layout_combo: QComboBox
    stack: QStackedWidget
    comparison: Comparison | None
    _layout: ChartLayout
    _layout_chosen: bool

    def _soon(self, method: Callable[[CompareLayout], None]) -> None:
        """Call ``method`` on this view once the event loop turns, if the view still exists.

        Not ``QTimer.singleShot(0, self, slot)``: when the view goes before the timer
        fires, PySide keeps that slot, and through it the view's Python side (its charts
        and their 28 context menus), for good.
        """
        view = weakref.ref(self)
        name = method.__name__  # looked up when called: a subclass may override it

        def call() -> None:
            alive = view()
            if alive is not None and shiboken6.isValid(alive):
                getattr(alive, name)()

        QTimer.singleShot(0, call)

    def _needed_widths(self) -> list[int]:
        """Each column as wide as its header and its numbers (long text cells elide)."""
        model = self.table_model
        metrics = self.table.fontMetrics()
        bold = QFont(self.table.font())
        bold.setBold(True)
        bold_metrics = QFontMetrics(bold)
        widths = []
        for column in range(model.columnCount()):
            header_text = str(model.headerData(column, Qt.Orientation.Horizontal) or "")
            width = max(metrics.horizontalAdvance(line) for line in header_text.split("\n")) + 34
            for row in range(model.rowCount()):
                line = model.line(row)
                if isinstance(line, Row) and line.kind is RowKind.METRIC:
                    text = str(model.data(model.index(row, column)) or "")
                    width = max(width, bold_metrics.horizontalAdvance(text) + 16)
            widths.append(min(max(width, 84), 220))
        return widths

    def _fit_columns(self) -> None:
        """Needed widths; with room to spare (2-3 GPUs) the columns share it out."""
        widths = self._needed_widths()
        if not widths:
            return
        spare = self.table.viewport().width() - sum(widths)
        if spare > 0:
            share = spare // len(widths)
            widths = [width + share for width in widths]
        header = self.table.horizontalHeader()
        for column, width in enumerate(widths):
            header.resizeSection(column, width)

    def _needed_table_px(self) -> int:
        """The table's width with every GPU column (long row labels may elide)."""
        return (
            sum(self._needed_widths())
            + min(self._needed_label_px(), ROW_LABEL_MAX_PX)
            + self.table.verticalScrollBar().sizeHint().width()
            + 2 * self.table.frameWidth()
            + 8
        )

    def _needed_label_px(self) -> int:
        """The widest row label, in the bold of a group row."""
        model = self.table_model
        bold = QFont(self.table.verticalHeader().font())
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        widths = [
            metrics.horizontalAdvance(str(model.headerData(row, Qt.Orientation.Vertical) or ""))
            for row in range(model.rowCount())
        ]
        return max([0, *(width + 24 for width in widths)])

    def _fit_row_labels(self) -> None:
        """Row labels unelided where the GPU columns leave room; elided (tooltip) past that."""
        header = self.table.verticalHeader()
        room = (
            self.table.width()
            - sum(self._needed_widths())
            - self.table.verticalScrollBar().sizeHint().width()
            - 2 * self.table.frameWidth()
        )
        cap = max(ROW_LABEL_MAX_PX, min(self._needed_label_px(), room))
        if header.maximumWidth() != cap:
            header.setMaximumWidth(cap)

    def _give_table_room(self) -> None:
        """Widen the table's side of the splitter until every GPU column shows.

        When the charts beside it leave too little room (six GPUs on a small
        screen), the charts move to a tab of their own, and back beside the table
        when the window grows again, unless the user chose the layout.
        """
        if self._layout is ChartLayout.TAB:
            self._maybe_back_beside()
            return
        if self.splitter.orientation() != Qt.Orientation.Horizontal:
            return
        if not self.splitter.isVisible() or self.splitter.width() < 200:
            return  # not laid out yet: its sizes say nothing about the screen
        needed = self._needed_table_px()
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if total <= 0 or sizes[0] >= needed:
            return
        beside_max = total - self.chart_tabs.minimumSizeHint().width()
        if needed <= beside_max or self._layout_chosen:
            table_px = min(needed, max(beside_max, sizes[0]))
            self.splitter.setSizes([table_px, total - table_px])
        else:
            self.set_chart_layout(ChartLayout.TAB)

    def _maybe_back_beside(self) -> None:
        if self._layout_chosen or not self.layout_tabs.isVisible():
            return
        room = self.layout_tabs.width() - self.chart_tabs.minimumSizeHint().width()
        # A margin so a window at the edge does not flip back and forth.
        if self.layout_tabs.width() >= 200 and self._needed_table_px() + 40 <= room:
            self.set_chart_layout(ChartLayout.BESIDE)

    def show_charts(self) -> None:
        """Bring the charts into view (in the tab layout, their tab)."""
        if self._layout is ChartLayout.TAB:
            self.layout_tabs.setCurrentWidget(self.chart_tabs)

    def chart_layout(self) -> ChartLayout:
        return self._layout

    def layout_page(self) -> QWidget:
        """The stack page that holds the table and the charts in the current layout."""
        return self.layout_tabs if self._layout is ChartLayout.TAB else self.splitter

    def set_chart_layout(self, choice: ChartLayout) -> None:
        """Charts beside the table, below it (the table has two thirds), or in a tab."""
        position = self.layout_combo.findData(choice.value)
        if self.layout_combo.currentIndex() != position:
            self.layout_combo.setCurrentIndex(position)  # -> _on_layout_combo
        else:
            self._apply_layout(choice)

    def set_charts_below(self, below: bool) -> None:
        """Stack the charts under the table (True) or beside it (False)."""
        self.set_chart_layout(ChartLayout.BELOW if below else ChartLayout.BESIDE)

    def _on_layout_clicked(self) -> None:
        self._layout_chosen = True

    def _on_layout_combo(self) -> None:
        self._apply_layout(ChartLayout(str(self.layout_combo.currentData())))

    def _apply_layout(self, choice: ChartLayout) -> None:
        showing = self.stack.currentWidget() is self.layout_page()
        if choice is ChartLayout.TAB:
            if self.layout_tabs.count() == 0:
                self.layout_tabs.addTab(self.table_panel, "Table")
                self.layout_tabs.addTab(self.chart_tabs, "Charts")
        elif self.splitter.count() < 2:
            self.layout_tabs.clear()  # takes the pages off; they are not deleted
            self.splitter.addWidget(self.table_panel)
            self.splitter.addWidget(self.chart_tabs)
            self.table_panel.show()
            self.chart_tabs.show()
        self._layout = choice
        if showing:
            self.stack.setCurrentWidget(self.layout_page())
        if choice is not ChartLayout.TAB:
            below = choice is ChartLayout.BELOW
            self.splitter.setOrientation(
                Qt.Orientation.Vertical if below else Qt.Orientation.Horizontal
            )
            self._share_splitter()
        self._soon(CompareLayout._give_table_room)
        self._soon(CompareLayout._fit_row_labels)

    def _share_splitter(self) -> None:
        """Half and half beside; below, the table keeps two thirds of the height (it is
        what is read row by row)."""
        below = self.splitter.orientation() == Qt.Orientation.Vertical
        page = self.stack.size()
        total = (page.height() if below else page.width()) - self.splitter.handleWidth()
        table_share = (2 * total) // 3 if below else total // 2
        self.splitter.setSizes([table_share, total - table_share])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is getattr(self, "table", None) and event.type() == QEvent.Type.Resize:
            self._fit_row_labels()
        elif watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        elif (
            watched in (getattr(self, "splitter", None), getattr(self, "layout_tabs", None))
            and event.type() in (QEvent.Type.Resize, QEvent.Type.Show)
            and getattr(self, "comparison", None) is not None
        ):
            # After the event: a splitter being shown is not visible yet during it.
            self._soon(CompareLayout._give_table_room)
        return super().eventFilter(watched, event)
