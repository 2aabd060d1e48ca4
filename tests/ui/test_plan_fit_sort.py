"""Will it fit? sorts by what it shows (issue 42 item 9): the rows came in the order of
the size as sold while the column showed usable memory, and no header had an arrow."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot
from test_plan_view import _state

from gpudesk.ui.plan.view import PlanView


def test_the_fits_sort_by_the_usable_memory_shown_with_arrows(qtbot: QtBot) -> None:
    view = PlanView(_state())
    qtbot.addWidget(view)
    tree = view.fit_page.fits_tree
    header = tree.header()
    assert tree.isSortingEnabled() and header.isSortIndicatorShown()
    assert header.sortIndicatorSection() == 1  # GPUs needed, then usable memory
    report = view.fit_page.report
    assert report is not None and tree.topLevelItemCount() == len(report.fits)

    def usable() -> list[float]:
        by_id = {result.gpu_id: result.usable_gb for result in report.fits}
        return [
            by_id[str(tree.topLevelItem(i).data(0, 256))] for i in range(tree.topLevelItemCount())
        ]

    counts = [int(tree.topLevelItem(i).text(1).split()[0]) for i in range(tree.topLevelItemCount())]
    assert counts == sorted(counts)
    ones = [value for value, count in zip(usable(), counts, strict=True) if count == 1]
    assert ones == sorted(ones)
    tree.sortByColumn(2, Qt.SortOrder.DescendingOrder)  # a click on "Usable / GPU"
    assert usable() == sorted(usable(), reverse=True)
    assert header.sortIndicatorSection() == 2
