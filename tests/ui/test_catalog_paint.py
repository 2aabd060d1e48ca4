"""The catalog table's own painting: the same pixels as Qt's delegates, fewer calls per cell."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QStyledItemDelegate, QTableView
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import load_catalog
from gpudesk.ui import catalog_model, text_cell_delegate, theme
from gpudesk.ui.catalog_columns import column_index
from gpudesk.ui.catalog_model import COMPARE_COLUMN_INDEX, NAME_COLUMN_INDEX
from gpudesk.ui.catalog_view import CatalogView
from gpudesk.ui.compare_delegate import _draw_ring
from gpudesk.ui.state import AppState
from gpudesk.ui.text_cell_delegate import TextCellDelegate


@pytest.fixture
def view(qtbot: QtBot) -> Iterator[CatalogView]:
    # The bundled catalog: missing figures ("n/a", greyed), stale prices (amber), long names.
    state = AppState(catalog=load_catalog(include_user=False))
    widget = CatalogView(state)
    qtbot.addWidget(widget)
    widget.resize(1400, 860)
    widget.show()
    for entry_id in ("a100-80gb-sxm4", "h100-sxm5", "rtx-4090"):
        state.add_to_compare(entry_id)
    yield widget
    theme.apply_theme(theme.ThemeMode.LIGHT)


def settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


def table_image(view: CatalogView) -> QImage:
    settle()
    return view.table.grab().toImage()


def with_qt_text_delegate(view: CatalogView) -> QImage:
    """The table as Qt's own delegate paints it (the compare column keeps its ring)."""
    plain = QStyledItemDelegate(view.table)
    view.table.setItemDelegate(plain)
    view.table.setItemDelegateForColumn(COMPARE_COLUMN_INDEX, view.compare_delegate)
    return table_image(view)


def differing_pixels(first: QImage, second: QImage) -> list[tuple[int, int]]:
    assert first.size() == second.size()
    return [
        (x, y)
        for y in range(first.height())
        for x in range(first.width())
        if first.pixel(x, y) != second.pixel(x, y)
    ]


def test_the_rows_use_the_cached_text_delegate(view: CatalogView) -> None:
    assert view.table.itemDelegate() is view.text_delegate
    assert view.table.frozen_view.itemDelegate() is view.text_delegate
    assert view.table.itemDelegateForColumn(COMPARE_COLUMN_INDEX) is view.compare_delegate


@pytest.mark.parametrize("mode", [theme.ThemeMode.LIGHT, theme.ThemeMode.DARK])
def test_text_cells_look_exactly_as_qt_paints_them(
    view: CatalogView, mode: theme.ThemeMode
) -> None:
    theme.apply_theme(mode)
    ours = table_image(view)
    assert view.text_delegate.cached_count() > 50  # it did paint the cells itself
    assert differing_pixels(ours, with_qt_text_delegate(view)) == []


def test_a_theme_switch_while_running_repaints_in_the_new_colors(view: CatalogView) -> None:
    table_image(view)
    theme.apply_theme(theme.ThemeMode.DARK)
    ours = table_image(view)
    assert differing_pixels(ours, with_qt_text_delegate(view)) == []


def test_text_too_wide_for_its_cell_is_elided_as_qt_does(view: CatalogView) -> None:
    view.table.setColumnWidth(NAME_COLUMN_INDEX, 60)
    view.table.setColumnWidth(column_index("architecture"), 30)
    ours = table_image(view)
    assert differing_pixels(ours, with_qt_text_delegate(view)) == []


def test_the_selected_row_and_sorted_rows_look_as_qt_paints_them(view: CatalogView) -> None:
    view.table.sortByColumn(column_index("price_usd"), Qt.SortOrder.DescendingOrder)
    view.table.selectRow(3)
    view.table.setFocus()
    ours = table_image(view)
    assert differing_pixels(ours, with_qt_text_delegate(view)) == []


def test_a_repaint_asks_the_model_once_per_text_cell(
    view: CatalogView, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle()
    asked: list[tuple[int, int]] = []
    data_roles: list[int] = []
    proxy = view.proxy
    original_paint = type(proxy).cell_paint
    original_data = type(proxy).data

    def counting_paint(self: object, row: int, column: int) -> object:
        asked.append((row, column))
        return original_paint(proxy, row, column)

    def counting_data(self: object, index: object, role: int = 0) -> object:
        data_roles.append(int(role))
        return original_data(proxy, index, role)  # type: ignore[arg-type]

    monkeypatch.setattr(type(proxy), "cell_paint", counting_paint)
    monkeypatch.setattr(type(proxy), "data", counting_data)
    view.table.viewport().repaint()
    view.table.frozen_view.viewport().repaint()
    painted = len(asked)
    assert painted > 100
    assert len(set(asked)) == painted  # each cell once
    # Qt's delegate would ask seven roles per cell; ours asks none for text cells
    # (what remains is the compare ring's color slot, one per visible row).
    assert len(data_roles) < painted // 5


def test_the_layout_cache_is_bounded(view: CatalogView, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_cell_delegate, "_CACHE_LIMIT", 40)
    # start empty: a palette change makes the next paint lay out afresh
    QApplication.sendEvent(view.table, QEvent(QEvent.Type.PaletteChange))
    for position in (0, 2000, 4000):
        view.table.verticalScrollBar().setValue(position)
        table_image(view)
        assert 0 < view.text_delegate.cached_count() <= 40


def test_cached_rings_match_drawing_each_one(view: CatalogView) -> None:
    settle()
    overlay = view.table.frozen_view
    proxy = view.proxy
    view.table.selectRow(proxy.row_of("a10") or 0)
    ours = overlay.grab().toImage()
    direct = QImage(ours)
    painter = QPainter(direct)
    checked_rows = 0
    for row in range(proxy.rowCount()):
        rect = overlay.visualRect(proxy.index(row, COMPARE_COLUMN_INDEX))
        selected = view.table.selectionModel().isRowSelected(row)
        if selected or not rect.intersects(overlay.viewport().rect()):
            continue
        rect.translate(overlay.viewport().pos())
        slot = proxy.index(row, COMPARE_COLUMN_INDEX).data(catalog_model.COMPARE_COLOR_SLOT_ROLE)
        # repaint the cell's background as the view did, then the ring directly
        background = overlay.palette().alternateBase() if row % 2 else overlay.palette().base()
        painter.fillRect(rect.adjusted(0, 0, -1, -1), background)
        _draw_ring(
            painter, rect.toRectF().center(), slot, selected=False, unchosen=theme.muted_color()
        )
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        checked_rows += 1
    painter.end()
    assert checked_rows > 20
    # Antialiased edges may round one step apart; a misplaced ring differs by hundreds.
    assert len(differing_pixels(ours, direct)) <= checked_rows


def test_a_click_on_the_ring_a_user_sees_toggles_the_gpu(qtbot: QtBot, view: CatalogView) -> None:
    overlay = view.table.frozen_view
    row = view.proxy.row_of("a10")
    assert row is not None
    rect = overlay.visualRect(view.proxy.index(row, COMPARE_COLUMN_INDEX))
    qtbot.mouseClick(overlay.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.state.compare_ids[-1] == "a10"
    qtbot.mouseClick(overlay.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert "a10" not in view.state.compare_ids


def test_space_on_the_current_row_toggles_it(qtbot: QtBot, view: CatalogView) -> None:
    row = view.proxy.row_of("a10")
    assert row is not None
    view.table.setCurrentIndex(view.proxy.index(row, COMPARE_COLUMN_INDEX))
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Space)
    assert "a10" in view.state.compare_ids


def test_assistive_tools_hear_whether_a_gpu_is_compared(view: CatalogView) -> None:
    proxy = view.proxy
    role = Qt.ItemDataRole.AccessibleTextRole
    chosen = proxy.index(proxy.row_of("h100-sxm5") or 0, COMPARE_COLUMN_INDEX)
    other = proxy.index(proxy.row_of("a10") or 0, COMPARE_COLUMN_INDEX)
    assert chosen.data(role) == "In the comparison"
    assert other.data(role) == "Not in the comparison"
    assert proxy.index(0, NAME_COLUMN_INDEX).data(role) is None


def test_missing_and_stale_cells_are_drawn_in_their_colors(view: CatalogView) -> None:
    proxy = view.proxy
    missing = next(
        (row, column)
        for row in range(proxy.rowCount())
        for column in range(proxy.columnCount())
        if proxy.index(row, column).data() == "n/a"
    )
    text, _alignment, color = proxy.cell_paint(*missing)
    assert text == "n/a" and isinstance(color, QColor)
    assert color == view.model.missing_color
    assert proxy.cell_paint(0, NAME_COLUMN_INDEX)[2] is None
    price = column_index("price_usd")
    stale_rows = [
        row
        for row in range(proxy.rowCount())
        if proxy.index(row, price).data(Qt.ItemDataRole.ForegroundRole) == view.model.stale_color
    ]
    assert stale_rows  # the bundled catalog has prices older than a year
    assert all(proxy.cell_paint(row, price)[2] == view.model.stale_color for row in stale_rows)


class _TextTable(QAbstractTableModel):
    """A small model answering both Qt's roles and :meth:`TextCellSource.cell_paint`."""

    def __init__(self, texts: list[list[str]], alignment: int, color: QColor | None) -> None:
        super().__init__()
        self.texts = texts
        self.alignment = alignment
        self.color = color

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.texts)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.texts[0])

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> object:
        if role == Qt.ItemDataRole.DisplayRole:
            return self.texts[index.row()][index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return self.alignment
        if role == Qt.ItemDataRole.ForegroundRole:
            return self.color
        return None

    def cell_paint(self, row: int, column: int) -> tuple[str, int, QColor | None]:
        return self.texts[row][column], self.alignment, self.color


_CELL_TEXT = st.text(alphabet=st.sampled_from([*"Aa0 9.,-/()%$gjpqy×—…µ²é", "\n"]), max_size=24)
_ALIGNMENTS = [
    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
    Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
    Qt.AlignmentFlag.AlignCenter,
    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
    Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignBottom,
]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(st.lists(_CELL_TEXT, min_size=3, max_size=3), min_size=1, max_size=4),
    alignment=st.sampled_from(_ALIGNMENTS),
    width=st.integers(min_value=8, max_value=160),
    colored=st.booleans(),
    mirrored=st.booleans(),
)
def test_any_text_in_any_cell_looks_as_qt_paints_it(
    qtbot: QtBot,
    texts: list[list[str]],
    alignment: Qt.AlignmentFlag,
    width: int,
    colored: bool,
    mirrored: bool,
) -> None:
    model = _TextTable(texts, int(alignment.value), QColor("#c26a00") if colored else None)
    table = QTableView()
    qtbot.addWidget(table)
    if mirrored:
        table.setLayoutDirection(Qt.LayoutDirection.RightToLeft)
    table.setModel(model)
    table.setWordWrap(False)
    for column in range(3):
        table.setColumnWidth(column, width)
    table.resize(3 * width + 60, 160)
    table.show()
    ours = TextCellDelegate(model, table)
    table.setItemDelegate(ours)
    settle()
    painted = table.viewport().grab().toImage()
    table.setItemDelegate(QStyledItemDelegate(table))
    settle()
    assert differing_pixels(painted, table.viewport().grab().toImage()) == []
