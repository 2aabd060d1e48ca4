"""Filtering and sorting the catalog table on a 10,000-entry synthetic catalog.

Usage: python tests/benchmarks/catalog_view_speed.py [COUNT]

Prints, per operation, the median over several runs of the model work alone
(``op``, and its first run: a column's first sort computes its order, later
ones reuse it) and of the whole frame it causes (``op+paint``), in
milliseconds of this thread's CPU time. Targets: a filter change < 16 ms, a
sort < 50 ms.

A frame is the operation plus two rounds of ``processEvents()``: Qt lays the
views out in a zero-timer after a layout change and paints what that dirtied
in the next round, so a single ``repaint()`` right after the change paints
only part of it (often the headers alone). After each timed frame a third,
untimed round checks that nothing was left to paint (``unsettled`` counts
frames that still painted; it should be 0). One more, untimed frame per
operation counts the paints of the table's body and of its frozen columns
(``body paints``): one each is the floor, a second is a frame painted twice.

For each filter it also measures, in the same run, a bare ``QTableView``
(a plain model of the same display strings, no delegate, no frozen columns,
the same size, columns, column widths and row height) switched to the same
rows with one layout change, as a frame of its own (``bare``): the floor Qt
itself sets. The target is filter + frame <= 1.25x that floor.

The clock is ``time.thread_time()``: the machine is shared, and CPU time of
this (the GUI) thread is what the work costs; wall time adds whatever else
the machine ran meanwhile.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import write_synthetic_catalog

from gpudesk.catalog.loader import load_catalog
from gpudesk.catalog.query import CatalogFilter, Feature
from gpudesk.catalog.schema import Segment
from gpudesk.render.app import create_application

REPEATS = 7
CLOCK = time.thread_time


def measure(count: int = 10_000, quiet: bool = False) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per operation: ``{label: {"op": [...], "op+paint": [...]}}``.

    Labels start with ``filter`` or ``sort``; ``build view`` holds the one-off
    cost of building the view on ``count`` rows.
    """
    results: dict[str, dict[str, list[float]]] = {}
    say = (lambda text: None) if quiet else print
    folder = Path(tempfile.mkdtemp(prefix="gpudesk-speed-"))
    write_synthetic_catalog(folder, count)
    catalog = load_catalog([folder], include_bundled=False, include_user=False)
    app = create_application()

    from PySide6.QtCore import QEvent, QObject, Qt
    from PySide6.QtWidgets import QApplication

    class PaintCounter(QObject):
        """Counts paint events (all, and the table bodies') while installed on the application."""

        count = 0
        bodies: dict[QObject, int] = {}  # noqa: RUF012 (one counter per run)

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.count += 1
                if watched in self.bodies:
                    self.bodies[watched] += 1
            return False

    from gpudesk.ui.catalog_columns import column_index
    from gpudesk.ui.catalog_view import CatalogView
    from gpudesk.ui.state import AppState

    assert isinstance(app, QApplication)
    started = time.perf_counter()
    view = CatalogView(AppState(catalog=catalog))
    build_ms = (time.perf_counter() - started) * 1000
    results["build view"] = {"op": [build_ms], "op+paint": [build_ms]}
    say(f"build view, {len(catalog.entries)} rows: {build_ms:.0f} ms")
    view.resize(1400, 860)
    view.show()
    for _ in range(5):
        app.processEvents()
    proxy = view.proxy

    bare_model, bare = _bare_table(view)
    paints = PaintCounter()
    unsettled = 0

    def finish_frame() -> None:
        # The delayed layout runs in the first round, the paint it causes in the second.
        app.processEvents()
        app.processEvents()

    def check_settled() -> None:
        nonlocal unsettled
        app.installEventFilter(paints)
        paints.count = 0
        app.processEvents()
        app.removeEventFilter(paints)
        unsettled += paints.count > 0

    def visible_rows() -> list[int]:
        return [proxy.mapToSource(proxy.index(row, 0)).row() for row in range(proxy.rowCount())]

    bodies = (view.table.viewport(), view.table.frozen_view.viewport())

    def body_paints(setup: Callable[[], object], action: Callable[[], object]) -> list[float]:
        """Paints of the table's body and of its frozen columns in one more frame, untimed
        (a filter on the application slows every event down). One each is the floor."""
        setup()
        finish_frame()
        paints.bodies = dict.fromkeys(bodies, 0)
        app.installEventFilter(paints)
        action()
        finish_frame()
        app.processEvents()
        app.removeEventFilter(paints)
        counted = [float(paints.bodies[body]) for body in bodies]
        paints.bodies = {}
        return counted

    def measure(label: str, setup: Callable[[], object], action: Callable[[], object]) -> None:
        ops: list[float] = []
        totals: list[float] = []
        bare_totals: list[float] = []
        for _ in range(REPEATS):
            setup()
            finish_frame()
            before = visible_rows()
            begin = CLOCK()
            action()
            done = CLOCK()
            finish_frame()
            painted = CLOCK()
            check_settled()
            ops.append(done - begin)
            totals.append(painted - begin)
            if label.startswith("filter"):
                # the same change of rows (from what the setup showed to what the filter
                # shows), in a bare view: the floor for a layout change + frame. From all
                # rows each time, "back to all" was timed against no change at all.
                shown = visible_rows()
                bare_model.show_rows(before)
                finish_frame()
                bare_begin = CLOCK()
                bare_model.show_rows(shown)
                finish_frame()
                bare_totals.append(CLOCK() - bare_begin)
                check_settled()
        results[label] = {
            "op": [value * 1000 for value in ops],
            "op+paint": [value * 1000 for value in totals],
            "body paints": body_paints(setup, action),
        }
        if bare_totals:
            results[label]["bare"] = [value * 1000 for value in bare_totals]
        say(
            f"{label:44s} op {statistics.median(ops) * 1000:6.2f} ms"
            f" (first {ops[0] * 1000:6.2f})"
            f"   op+paint {statistics.median(totals) * 1000:6.2f} ms"
            f"   rows {proxy.visible_count()}"
            f"   body paints {results[label]['body paints']}"
            + (
                f"   bare {statistics.median(bare_totals) * 1000:6.2f} ms"
                f"   ratio {statistics.median(totals) / statistics.median(bare_totals):.2f}"
                if bare_totals
                else ""
            )
        )

    everything = CatalogFilter()
    filters = {
        "text 'pro'": CatalogFilter(text="pro"),
        "text 'synthetic gpu 01'": CatalogFilter(text="synthetic gpu 01"),
        "datacenter, >= 48 GB": CatalogFilter(
            segments=frozenset({Segment.DATACENTER}), min_memory_gb=48
        ),
        "ECC + NVLink, <= 10,000 USD": CatalogFilter(
            features=frozenset({Feature.ECC, Feature.NVLINK}), max_price_usd=10_000
        ),
    }
    for label, criteria in filters.items():
        measure(
            f"filter {label}",
            lambda: proxy.set_filter(everything),
            lambda criteria=criteria: proxy.set_filter(criteria),  # type: ignore[misc]
        )
        measure(
            f"filter back to all from {label}",
            lambda criteria=criteria: proxy.set_filter(criteria),  # type: ignore[misc]
            lambda: proxy.set_filter(everything),
        )
    for key in ("price_usd", "fp16_tensor_tflops", "name"):
        column = column_index(key)
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            measure(
                f"sort {key} {order.name}",
                lambda: view.table.sortByColumn(column_index("vendor"), order),  # noqa: B023
                lambda column=column, order=order: view.table.sortByColumn(column, order),  # type: ignore[misc]
            )
    results["unsettled frames"] = {"op": [float(unsettled)], "op+paint": [float(unsettled)]}
    say(f"frames that still painted after two rounds: {unsettled}")
    view.close()
    bare.close()
    return results


def _bare_table(view: object) -> tuple[object, object]:
    """A plain QTableView over a plain model of ``view``'s display strings, laid out alike."""
    from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
    from PySide6.QtWidgets import QHeaderView, QTableView

    from gpudesk.ui.catalog_view import CatalogView

    assert isinstance(view, CatalogView)
    source = view.model
    cells = [list(row) for row in source._cells]  # the same strings the real view shows
    display = int(Qt.ItemDataRole.DisplayRole)

    class BareModel(QAbstractTableModel):
        def __init__(self) -> None:
            super().__init__()
            self.total = len(cells)
            self.rows = list(range(self.total))

        def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
            return 0 if parent.isValid() else len(self.rows)

        def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
            return 0 if parent.isValid() else len(cells[0]) if cells else 0

        def data(self, index: QModelIndex | QPersistentModelIndex, role: int = display) -> object:
            if role == display and index.isValid():
                return cells[self.rows[index.row()]][index.column()]
            return None

        def show_rows(self, rows: list[int]) -> None:
            self.layoutAboutToBeChanged.emit()
            self.rows = rows
            self.layoutChanged.emit()

    model = BareModel()
    table = QTableView()
    table.setModel(model)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.verticalHeader().setDefaultSectionSize(view.table.verticalHeader().defaultSectionSize())
    for column in range(model.columnCount()):
        table.setColumnHidden(column, view.table.isColumnHidden(column))
        table.setColumnWidth(column, view.table.columnWidth(column))
    table.resize(view.table.size())
    table.show()
    return model, table


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    measure(count)


if __name__ == "__main__":
    main()
