"""The Fleet tab's inventory table: one row per GPU, its texts and its outlier colouring.

A GPU slow against its fleet median reads in the error colour and bold, another finding
in the warning colour; :func:`colour_rows` re-reads both on a theme switch.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QTableView, QWidget

from gpudesk.bench.text import format_figure, format_fraction_of_peak
from gpudesk.fleet.checks import check_label
from gpudesk.fleet.inventory import InventoryRow
from gpudesk.ui import theme

COLUMNS = (
    "Node",
    "GPU",
    "Model",
    "Checks",
    "GEMM",
    "of peak",
    "of ref",
    "Copy",
    "Memory",
    "Driver",
)
#: Columns whose figures align right.
_RIGHT_COLUMNS = frozenset(
    COLUMNS.index(name) for name in ("GPU", "of peak", "of ref", "Copy", "Memory")
)
#: How a row reads: a GPU slow against its fleet median, another finding, or in line.
SLOW, FLAGGED, IN_LINE = "slow", "flagged", ""
_ROW_KIND_ROLE = Qt.ItemDataRole.UserRole + 1

REFERENCE_TIP = (
    "The headline GEMM as a share of the median of published runs of this model "
    "(other clocks, shapes and software: 85-95% is ordinary). The fleet's own median "
    "decides what is slow; the reference says how the whole fleet compares."
)


MEMORY_TIP = (
    "Memory as the driver reports it, in GiB (2³⁰ bytes), the unit GPUs are sold in: "
    "an H100 sold as '80 GB' reports 81,559 MiB = 79.6 GiB in nvidia-smi, the driver "
    "keeping the rest. 1 GiB = 1.074 GB of 10⁹ bytes."
)


def _item(text: str, *, right: bool = False, tip: str = "") -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    if right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if tip:
        item.setToolTip(tip)
    return item


def row_cells(row: InventoryRow) -> list[str]:
    """The table's texts for one inventory row (a failed node shows its error), in
    :data:`COLUMNS` order: Checks beside the model, so a laptop screen shows it."""
    if row.error is not None:
        return [row.node, "", "node failed", row.error, "", "", "", "", "", ""]
    gemm = row.gemm
    return [
        row.node,
        "CPU" if row.gpu_index is None else str(row.gpu_index),
        row.model,
        ", ".join(dict.fromkeys(check_label(check) for check in row.checks)) or "ok",
        f"{gemm.dtype.upper()} {format_figure(gemm.value)} {gemm.unit}" if gemm else "",
        format_fraction_of_peak(gemm.fraction_of_peak) if gemm else "",
        f"{row.of_reference:.0%}" if row.of_reference is not None else "",
        f"{format_figure(row.copy.value)} GB/s" if row.copy else "",
        # GiB, as the Devices tab and the Plan tab say it (MEMORY_TIP: why)
        f"{row.memory_gib:.1f} GiB" if row.memory_gib else "n/a",
        row.driver or "",
    ]


def row_kind(row: InventoryRow) -> str:
    """:data:`SLOW` for a GPU slow against its fleet median, :data:`FLAGGED` for any other
    finding (or a failed node), else :data:`IN_LINE`."""
    if any(check.startswith("measured:") for check in row.checks):
        return SLOW
    return FLAGGED if row.checks or row.error is not None else IN_LINE


def make_inventory_table(parent: QWidget) -> tuple[QStandardItemModel, QTableView]:
    """An empty inventory model (owned by ``parent``) and the table that shows it."""
    model = QStandardItemModel(0, len(COLUMNS), parent)
    model.setHorizontalHeaderLabels(list(COLUMNS))
    header = model.horizontalHeaderItem(COLUMNS.index("Memory"))
    if header is not None:
        header.setToolTip(MEMORY_TIP)
    table = QTableView()
    table.setAccessibleName("Fleet inventory: one row per GPU")
    table.setModel(model)
    # Survey order until the user sorts by a column.
    table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    table.setSortingEnabled(True)
    table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    table.verticalHeader().setVisible(False)
    table.setWordWrap(False)
    # One text line per device (the style's default row was about twice that:
    # 20 of 57 devices fitted at 1366x768).
    rows = table.verticalHeader()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(table.fontMetrics().height() + 8)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    # Before a survey the columns fit their headers (100 px each cut "Checks" off).
    table.resizeColumnsToContents()
    return model, table


def fill_table(
    model: QStandardItemModel,
    table: QTableView,
    rows: list[InventoryRow],
    model_name: Callable[[str], str],
) -> None:
    """Replace the table's rows with ``rows``, GPU models named by ``model_name``."""
    model.setRowCount(0)
    table.setSortingEnabled(False)
    table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    model_column, checks_column = COLUMNS.index("Model"), COLUMNS.index("Checks")
    for row in rows:
        cells = row_cells(row)
        name = cells[model_column] = model_name(cells[model_column])
        tips = {
            checks_column: cells[checks_column],
            model_column: f"{name} (catalog id {row.model})" if name != row.model else name,
            COLUMNS.index("of ref"): REFERENCE_TIP,
            COLUMNS.index("Memory"): MEMORY_TIP,
        }
        items = [
            _item(text, right=column in _RIGHT_COLUMNS, tip=tips.get(column, ""))
            for column, text in enumerate(cells)
        ]
        kind = row_kind(row)
        for item in items:
            item.setData(kind, _ROW_KIND_ROLE)
        model.appendRow(items)
    colour_rows(model, table)
    table.setSortingEnabled(True)
    _fit_columns(table)


def colour_rows(model: QStandardItemModel, table: QTableView) -> None:
    """A GPU slow against its fleet median in the error colour and bold; another
    finding in the warning colour; re-read on a theme switch."""
    colours = {SLOW: theme.error_color(), FLAGGED: theme.severity_color("warning")}
    bold = table.font()
    bold.setBold(True)
    for row in range(model.rowCount()):
        for column in range(model.columnCount()):
            item = model.item(row, column)
            if item is None:
                continue
            kind = item.data(_ROW_KIND_ROLE)
            if kind in colours:
                item.setForeground(colours[kind])
            if kind == SLOW:
                item.setFont(bold)


def _fit_columns(table: QTableView) -> None:
    """Columns fit their contents, long check texts elide (full text in the tooltip),
    and "Checks" always keeps room for its header."""
    table.resizeColumnsToContents()
    header = table.horizontalHeader()
    for name, most in (("Model", 170), ("Checks", 170)):
        column = COLUMNS.index(name)
        least = header.sectionSizeFromContents(column).width() + 8
        table.setColumnWidth(column, max(least, min(table.columnWidth(column), most)))
