"""A filter change paints the catalog table once: each viewport, in the same window update.

Counted, not timed (speed is the harness's job, tests/benchmarks/run.py): a
second paint of the same rows is what made a filter frame cost more than a
bare QTableView's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from gpudesk.catalog.query import CatalogFilter
from gpudesk.catalog.schema import Segment
from gpudesk.ui.catalog_model import NAME_COLUMN_INDEX
from gpudesk.ui.catalog_view import CatalogView
from gpudesk.ui.state import AppState

#: Rounds of the event loop after a change: Qt's delayed layouts and queued calls
#: run in the first, and anything painted late would show up in a later one.
ROUNDS = 4


class PaintCounter(QObject):
    """Records, per table viewport, in which of the window's updates it painted."""

    def __init__(self, view: CatalogView) -> None:
        super().__init__()
        self.names: dict[QWidget, str] = {
            view.table.viewport(): "table",
            view.table.frozen_view.viewport(): "frozen columns",
        }
        self.window = view.window()
        self.updates = 0
        self.painted: dict[str, list[int]] = {}

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest and watched is self.window:
            self.updates += 1
        elif event.type() == QEvent.Type.Paint and watched in self.names:
            name = self.names[watched]  # type: ignore[index]
            self.painted.setdefault(name, []).append(self.updates)
        return False


def settle() -> None:
    for _ in range(ROUNDS):
        QApplication.processEvents()


@pytest.fixture
def view(qtbot: QtBot) -> Iterator[CatalogView]:
    widget = CatalogView(AppState())  # the bundled catalog: more rows than the table shows
    qtbot.addWidget(widget)
    widget.resize(1366, 700)
    widget.show()
    qtbot.waitExposed(widget)
    settle()
    yield widget


def paints_of(view: CatalogView, change: Callable[[], object]) -> dict[str, list[int]]:
    """In which window updates after ``change`` each table viewport painted (1 = the first)."""
    settle()
    counter = PaintCounter(view)
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(counter)
    try:
        change()
        settle()
    finally:
        app.removeEventFilter(counter)
    return counter.painted


#: Both bodies painted once, together, in the first window update after the change.
#: (The details pane may take a second update of its own to lay out a new entry.)
ONCE = {"table": [1], "frozen columns": [1]}


def assert_current_row_in_view(view: CatalogView) -> None:
    current = view.table.currentIndex()
    assert current.isValid()
    for table in (view.table, view.table.frozen_view):
        assert table.viewport().rect().contains(table.visualRect(current))
    # the frozen names sit beside their own rows
    assert view.table.frozen_view.verticalScrollBar().value() == (
        view.table.verticalScrollBar().value()
    )


@pytest.mark.parametrize(
    "criteria",
    [
        CatalogFilter(text="rtx"),
        CatalogFilter(segments=frozenset({Segment.DATACENTER})),
        CatalogFilter(min_memory_gb=48),
    ],
    ids=["search", "segment", "memory"],
)
def test_a_filter_and_back_to_all_each_paint_once(
    view: CatalogView, criteria: CatalogFilter
) -> None:
    everything = view.criteria()
    assert paints_of(view, lambda: view.proxy.set_filter(criteria)) == ONCE
    assert_current_row_in_view(view)
    # Back to all: the row the header keeps its columns by is still there (the
    # case that painted the table a second time).
    assert paints_of(view, lambda: view.proxy.set_filter(everything)) == ONCE
    assert_current_row_in_view(view)


def test_back_to_all_scrolls_to_the_current_gpu_in_the_same_paint(view: CatalogView) -> None:
    everything = view.criteria()
    last = view.proxy.visible_count() - 1
    entry_id = view.proxy.entry_at(last).id
    view.select_entry(entry_id)
    settle()
    name = view.proxy.entry_at(last).name
    assert paints_of(view, lambda: view.proxy.set_filter(CatalogFilter(text=name))) == ONCE
    assert view.current_entry() is not None and view.current_entry().id == entry_id  # type: ignore[union-attr]
    view.table.verticalScrollBar().setValue(0)
    assert paints_of(view, lambda: view.proxy.set_filter(everything)) == ONCE
    assert view.current_entry() is not None and view.current_entry().id == entry_id  # type: ignore[union-attr]
    assert view.table.verticalScrollBar().value() > 0  # it scrolled down to it
    assert_current_row_in_view(view)
    selected = view.table.selectionModel().selectedRows(NAME_COLUMN_INDEX)
    assert [index.row() for index in selected] == [view.table.currentIndex().row()]


def test_the_search_box_and_escape_paint_once(view: CatalogView) -> None:
    def search() -> None:
        view.filters.search.setText("mi300x")
        view.filters.flush()

    assert paints_of(view, search) == ONCE
    assert view.current_entry() is not None and view.current_entry().id == "mi300x"  # type: ignore[union-attr]
    assert paints_of(view, view.filters.clear_search) == ONCE
    assert view.current_entry() is not None and view.current_entry().id == "mi300x"  # type: ignore[union-attr]
    assert_current_row_in_view(view)
