"""The frozen-columns table's header: measured again only when its size hint can change."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QHeaderView
from pytestqt.qtbot import QtBot

from gpudesk.ui.frozen_table import FrozenColumnsTableView, RememberingHeader

Index = QModelIndex | QPersistentModelIndex


class _Table(QAbstractTableModel):
    """Rows that can be reordered by a layout change, and headers that count their asks."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = list(range(200))
        self.headers = ["Tick", "Name", "Memory\n(GB)", "FP32\n(TFLOPS)", "Year"]
        self.header_asks = 0

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def data(self, index: Index, role: int = 0) -> object:
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{self.rows[index.row()]}:{index.column()}"
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> object:
        if orientation is not Qt.Orientation.Horizontal:
            return section + 1
        self.header_asks += 1
        return self.headers[section] if role == Qt.ItemDataRole.DisplayRole else None

    def reorder(self, rows: list[int]) -> None:
        self.layoutAboutToBeChanged.emit()
        self.rows = rows
        self.layoutChanged.emit()


def _settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


def _table(qtbot: QtBot) -> tuple[FrozenColumnsTableView, _Table]:
    model = _Table()
    table = FrozenColumnsTableView((0, 1))
    qtbot.addWidget(table)
    table.setModel(model)
    table.resize(600, 400)
    table.show()
    _settle()
    return table, model


def qt_measures(header: QHeaderView) -> tuple[int, int]:
    """The hint Qt itself computes now (its own cache is kept right by Qt)."""
    hint = QHeaderView.sizeHint(header)
    return hint.width(), hint.height()


class _CountingRememberingHeader(RememberingHeader):
    measured = 0

    def sectionSizeFromContents(self, logical_index: int) -> QSize:
        type(self).measured += 1
        return super().sectionSizeFromContents(logical_index)


class _CountingPlainHeader(QHeaderView):
    measured = 0

    def sectionSizeFromContents(self, logical_index: int) -> QSize:
        type(self).measured += 1
        return super().sectionSizeFromContents(logical_index)


def _measures_per_layout_change(qtbot: QtBot, header_type: type[QHeaderView]) -> int:
    model = _Table()
    table = FrozenColumnsTableView((0, 1))
    qtbot.addWidget(table)
    header = (
        header_type(table)
        if header_type is _CountingRememberingHeader
        else header_type(Qt.Orientation.Horizontal, table)
    )
    header.setSectionsClickable(True)
    table.setHorizontalHeader(header)
    table.setModel(model)
    table.resize(600, 400)
    table.show()
    _settle()
    before = header_type.measured  # type: ignore[attr-defined]
    for _ in range(4):
        model.reorder(list(reversed(model.rows)))
        _settle()
    return int(header_type.measured - before)  # type: ignore[attr-defined]


def test_a_layout_change_does_not_measure_the_header_again(qtbot: QtBot) -> None:
    table, _model = _table(qtbot)
    assert isinstance(table.horizontalHeader(), RememberingHeader)
    assert isinstance(table.frozen_view.horizontalHeader(), RememberingHeader)
    assert _measures_per_layout_change(qtbot, _CountingRememberingHeader) == 0
    # the control: Qt's own header measures its sections again on every change
    assert _measures_per_layout_change(qtbot, _CountingPlainHeader) >= 4 * 5


def test_the_remembered_hint_is_the_one_qt_would_measure(qtbot: QtBot) -> None:
    table, model = _table(qtbot)
    header = table.horizontalHeader()

    def same() -> None:
        _settle()
        hint = header.sizeHint()
        assert (hint.width(), hint.height()) == qt_measures(header)

    same()
    table.setColumnHidden(2, True)
    table.setColumnHidden(3, True)  # both two-line headers gone: one line is lower
    same()
    table.setColumnHidden(3, False)
    same()
    big = QFont(table.font())
    big.setPointSize(big.pointSize() + 6)
    header.setFont(big)
    same()
    header.setSortIndicatorShown(True)
    same()
    table.setColumnWidth(4, 300)
    same()
    model.headers[4] = "Year\nof\nlaunch"
    model.headerDataChanged.emit(Qt.Orientation.Horizontal, 4, 4)
    same()


def test_frozen_columns_still_follow_the_main_header(qtbot: QtBot) -> None:
    table, _model = _table(qtbot)
    table.setColumnWidth(1, 150)
    _settle()
    assert table.frozen_view.columnWidth(1) == 150
    assert table.frozen_view.width() == table.columnWidth(0) + 150
    assert table.frozen_view.horizontalHeader().height() == table.horizontalHeader().height()


def test_a_layout_change_keeps_hidden_columns_hidden_and_the_overlay_aligned(
    qtbot: QtBot,
) -> None:
    table, model = _table(qtbot)
    table.setColumnHidden(3, True)
    table.setColumnWidth(1, 140)
    _settle()
    # row 0 stays row 0: the headers restore their sections from it (quietly)
    model.reorder([0, *reversed(model.rows[1:])])
    _settle()
    assert table.isColumnHidden(3)
    assert table.horizontalHeader().sectionSize(3) == 0
    assert [table.frozen_view.isColumnHidden(c) for c in range(5)] == [False] * 2 + [True] * 3
    assert table.frozen_view.columnWidth(1) == 140
    # and the headers speak again afterwards
    resized: list[tuple[int, int, int]] = []
    table.horizontalHeader().sectionResized.connect(lambda *args: resized.append(args))
    table.setColumnWidth(4, 90)
    assert resized and resized[-1][0] == 4


def test_a_layout_change_that_adds_columns_reaches_both_views(qtbot: QtBot) -> None:
    table, model = _table(qtbot)
    model.layoutAboutToBeChanged.emit()
    model.headers = [*model.headers, "Six", "Seven"]
    model.layoutChanged.emit()
    _settle()
    header = table.horizontalHeader()
    assert header.count() == 7
    assert table.frozen_view.horizontalHeader().count() == 7
    assert [table.frozen_view.isColumnHidden(c) for c in range(7)] == [False] * 2 + [True] * 5
    # the scroll range covers the new columns, as in a table that had them from the start
    fresh_model = _Table()
    fresh_model.headers = list(model.headers)
    fresh = FrozenColumnsTableView((0, 1))
    qtbot.addWidget(fresh)
    fresh.setModel(fresh_model)
    fresh.resize(table.size())
    fresh.show()
    _settle()
    assert table.horizontalScrollBar().maximum() == fresh.horizontalScrollBar().maximum() > 0
