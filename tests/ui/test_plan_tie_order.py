"""How fast?'s table keeps tied GPUs in one order (issue 42 item 9): after a restart and
after a workload switch the same tie came back in another order, the selection with it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gpudesk.ui.plan.speed_table import _ID_ROLE, _Col, _SortItem, speed_tree


def _fill(tree: object, rows: list[tuple[str, float]]) -> None:
    tree.setSortingEnabled(False)  # type: ignore[attr-defined]
    tree.clear()  # type: ignore[attr-defined]
    for name, tokens_per_s in rows:
        item = _SortItem()
        item.setText(_Col.GPU, name)
        item.setData(_Col.GPU, _ID_ROLE, name.lower().replace(" ", "-"))
        item.setText(_Col.SPEED, f"{tokens_per_s:,.0f}")
        item.setData(_Col.SPEED, Qt.ItemDataRole.UserRole, tokens_per_s)
        tree.addTopLevelItem(item)  # type: ignore[attr-defined]
    tree.setSortingEnabled(True)  # type: ignore[attr-defined]


def _order(tree: object) -> list[str]:
    return [
        tree.topLevelItem(index).text(_Col.GPU)  # type: ignore[attr-defined]
        for index in range(tree.topLevelItemCount())  # type: ignore[attr-defined]
    ]


def test_tied_gpus_keep_one_order_whatever_order_they_come_in(qtbot: QtBot) -> None:
    tree = speed_tree()
    qtbot.addWidget(tree)
    tree.sortByColumn(_Col.SPEED, Qt.SortOrder.DescendingOrder)
    rows = [("RTX 4090", 40.0), ("L40S", 30.0), ("A6000", 30.0), ("RTX 3090", 30.0)]
    _fill(tree, rows)
    first = _order(tree)
    assert first == ["RTX 4090", "A6000", "L40S", "RTX 3090"]  # ties A to Z
    _fill(tree, list(reversed(rows)))  # a workload switch, another fill order
    assert _order(tree) == first
    tree.sortByColumn(_Col.SPEED, Qt.SortOrder.AscendingOrder)
    assert _order(tree) == ["A6000", "L40S", "RTX 3090", "RTX 4090"]  # still A to Z
