"""The catalog table itself: how it is set up, how wide its columns start, and the
View → Columns menu. :class:`~gpudesk.ui.catalog_view.CatalogView` wires it to the
rest of the tab."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from gpudesk.catalog.metrics import METRICS
from gpudesk.ui.catalog_columns import COLUMNS, KEY_COLUMNS_END, Column, column_index
from gpudesk.ui.catalog_model import COMPARE_COLUMN_INDEX, NAME_COLUMN_INDEX, CatalogProxyModel
from gpudesk.ui.frozen_table import FrozenColumnsTableView

_NAME_MAX_WIDTH_PX = 210
#: Architecture names ("Xe HPC (Ponte Vecchio)") elide past this; the tooltip has it all.
#: 150 px: at 1366 px the vendor column grew 20 px for "Qualcomm" and pushed the price
#: column off screen at 170.
ARCHITECTURE_MAX_WIDTH_PX = 150
#: Rows the column widths are measured on (Qt's resizeContentsPrecision).
FIT_SAMPLE_ROWS = 200


def column_menu_label(column: Column) -> str:
    """A column's label in View → Columns: a name ("FP64 (TFLOPS)", "ECC", "From
    (USD/GPU-h)"), never the sentence its tooltip holds."""
    if column.key in METRICS:
        return METRICS[column.key].header
    if column.key == "compare":
        return "Compare tick"
    return column.header.replace("\n", " ")


def configure_table(table: FrozenColumnsTableView, proxy: CatalogProxyModel) -> None:
    """Model, selection, eliding, header behaviour and default columns (no widths yet)."""
    table.setModel(proxy)
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
    for index, column in enumerate(COLUMNS):
        table.setColumnHidden(index, not column.visible_by_default)


def fit_column_widths(table: FrozenColumnsTableView, resize_unshown: Callable[[], None]) -> None:
    """Columns as wide as their sampled contents, the name and architecture capped.

    ``resize_unshown`` measures a table not yet shown
    (:func:`resize_columns_to_contents_unshown`).
    """
    header = table.horizontalHeader()
    # Sample rows: a 10,000-row catalog must not measure every cell.
    header.setResizeContentsPrecision(FIT_SAMPLE_ROWS)
    if table.isVisible():
        # Shown, Qt samples the rows on screen first, then outwards from them.
        table.resizeColumnsToContents()
    else:
        resize_unshown()
    if header.sectionSize(NAME_COLUMN_INDEX) > _NAME_MAX_WIDTH_PX:
        header.resizeSection(NAME_COLUMN_INDEX, _NAME_MAX_WIDTH_PX)
    architecture = column_index("architecture")
    if header.sectionSize(architecture) > ARCHITECTURE_MAX_WIDTH_PX:
        header.resizeSection(architecture, ARCHITECTURE_MAX_WIDTH_PX)
    header.resizeSection(COMPARE_COLUMN_INDEX, max(30, header.sectionSize(COMPARE_COLUMN_INDEX)))


def resize_columns_to_contents_unshown(
    table: FrozenColumnsTableView, proxy: CatalogProxyModel
) -> None:
    """What ``resizeColumnsToContents()`` does to a table not yet shown, measured per string.

    Qt's delegate asks the model, for each sampled cell, its size hint, text,
    font, alignment, check state, decoration and colours: seven calls into
    this Python model per cell, about 0.1 s of start-up for the bundled
    catalog (a sixth of it). A text cell's size follows from its text alone,
    so each distinct string is measured once, by the style, as
    QStyledItemDelegate.sizeHint measures it. The tick column (a check
    state) is left to Qt.
    """
    header = table.horizontalHeader()
    style = table.style()
    delegate = table.itemDelegate()
    assert isinstance(delegate, QStyledItemDelegate)  # Qt's own, until the view sets ours
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
                option.text = delegate.displayText(text, locale)  # line breaks, as Qt shows them
                option.features = with_text if text else plain
                width = style.sizeFromContents(item, option, no_size, table).width()
                widths[text] = width
            content = max(content, width)
        width = max(content + grid, header.sectionSizeHint(column))
        header.resizeSection(
            column, min(max(width, header.minimumSectionSize()), header.maximumSectionSize())
        )


def populate_columns_menu(
    menu: QMenu,
    table: FrozenColumnsTableView,
    set_visible: Callable[[str, bool], None],
    reset: Callable[[], None],
) -> None:
    """Fill ``menu`` with one checkable action per column, then "Default columns"."""
    menu.clear()
    menu.setToolTipsVisible(True)
    for index, column in enumerate(COLUMNS):
        if index == NAME_COLUMN_INDEX:
            continue  # a row must stay recognisable
        action = menu.addAction(column_menu_label(column))
        action.setToolTip(column.tooltip.replace("\n", " "))
        action.setCheckable(True)
        action.setChecked(not table.isColumnHidden(index))
        action.toggled.connect(lambda shown, key=column.key: set_visible(key, shown))
    menu.addSeparator()
    menu.addAction("Default columns", reset)


def key_columns_width(table: FrozenColumnsTableView) -> int:
    """Pixels the default columns up to the cloud rate take side by side."""
    header = table.horizontalHeader()
    last = column_index(KEY_COLUMNS_END)
    return sum(
        header.sectionSize(index)
        for index, column in enumerate(COLUMNS[: last + 1])
        if column.visible_by_default
    )
