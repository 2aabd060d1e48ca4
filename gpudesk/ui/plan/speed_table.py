"""How fast?'s ranked table and the words around it: one row per GPU (count, tokens/s,
range, limit, $ per 1M tokens, first token or run time), the summary line, the line for
this machine's benchmark and the selected row's basis."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from gpudesk.speed.estimate import Mode, SpeedEstimate, SpeedRequest
from gpudesk.speed.text import duration_text, figure_text, usd_text
from gpudesk.ui.plan import forms

MEASURED_LABEL = "this machine (measured)"
#: the row's place in the page's results (column GPU), and its GPU id
_INDEX_ROLE = Qt.ItemDataRole.UserRole
_ID_ROLE = Qt.ItemDataRole.UserRole + 1


class _Col:
    GPU, COUNT, SPEED, RANGE, LIMIT, COST, TIME = range(7)


class _SortItem(QTreeWidgetItem):
    """Sorts numeric columns by the number behind the text; ties by GPU name, A to Z in
    either direction, so tied GPUs keep one order after a restart or a workload switch
    (they came back in whatever order the rows were filled, and the selection with them)."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        tree = self.treeWidget()
        column = tree.sortColumn() if tree else 0
        mine = self.data(column, Qt.ItemDataRole.UserRole)
        theirs = other.data(column, Qt.ItemDataRole.UserRole)
        if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)):
            if float(mine) != float(theirs):
                return float(mine) < float(theirs)
        elif self.text(column) != other.text(column):
            return self.text(column) < other.text(column)
        # A tie: name, then id, read the same way up whichever way the column sorts.
        descending = tree is not None and tree.header().sortIndicatorOrder() == (
            Qt.SortOrder.DescendingOrder
        )
        return (
            (_tie_key(self) > _tie_key(other)) if descending else (_tie_key(self) < _tie_key(other))
        )


def _tie_key(item: QTreeWidgetItem) -> tuple[str, str]:
    gpu_id = item.data(_Col.GPU, _ID_ROLE)
    return item.text(_Col.GPU).casefold(), gpu_id if isinstance(gpu_id, str) else ""


def speed_tree() -> QTreeWidget:
    tree = forms.ranked_tree(
        ["GPU", "GPUs", "tokens/s", "range", "limit", "$ / 1M tokens", "first token"],
        sortable=True,
    )
    tree.headerItem().setToolTip(
        _Col.RANGE, "10th-90th percentile of measured / estimated in the published data"
    )
    return tree


def clear_tree(tree: QTreeWidget) -> None:
    """Empty the table without its selection signal: a slot that asks for the current
    item while clear() deletes the items gets one being destroyed (a crash)."""
    blocked = tree.blockSignals(True)
    try:
        tree.clear()
    finally:
        tree.blockSignals(blocked)


def current_gpu_id(tree: QTreeWidget) -> str | None:
    item = tree.currentItem()
    value = None if item is None else item.data(_Col.GPU, _ID_ROLE)
    return value if isinstance(value, str) else None


def current_index(tree: QTreeWidget) -> int | None:
    """The current row's place in the results it was filled from."""
    item = tree.currentItem()
    index = None if item is None else item.data(_Col.GPU, _INDEX_ROLE)
    return index if isinstance(index, int) else None


def select_gpu(tree: QTreeWidget, results: Sequence[SpeedEstimate], gpu_id: str) -> bool:
    """Select ``gpu_id``'s row; False when it has none."""
    for index in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(index)
        if item is None:
            continue
        position = item.data(_Col.GPU, _INDEX_ROLE)
        if isinstance(position, int) and results[position].gpu_id == gpu_id:
            tree.setCurrentItem(item)
            tree.scrollToItem(item)
            return True
    return False


def fill_tree(tree: QTreeWidget, results: Sequence[SpeedEstimate], request: SpeedRequest) -> None:
    """One row per result, fastest first; the GPU chosen before stays chosen."""
    kept = current_gpu_id(tree)
    tree.setSortingEnabled(False)
    clear_tree(tree)
    train = request.mode is Mode.TRAIN
    tree.headerItem().setText(_Col.TIME, "run time" if train else "first token")
    tree.headerItem().setText(
        _Col.SPEED,
        "tokens/s (all GPUs)"
        if train
        else "output tokens/s"
        if request.mode in (Mode.DECODE, Mode.SERVE)
        else "prompt tokens/s",
    )
    for index, result in enumerate(results):
        item = _SortItem()
        time = result.time_s if train else result.time_to_first_token_s
        time_text = (
            duration_text(time) if train else ("n/a" if time is None else f"{time * 1000:,.0f} ms")
        )
        cells = [
            (result.name, None),
            (
                str(result.count)
                if result.offload is None
                else f"1 ({result.offload.flag})",  # llama.cpp: part in host memory
                result.count,
            ),
            (figure_text(result.tokens_per_s), result.tokens_per_s),
            (f"{figure_text(result.low)} – {figure_text(result.high)}", result.low),
            (result.limited_by.replace("_", " "), None),
            (usd_text(result.usd_per_million_tokens), result.usd_per_million_tokens or math.inf),
            (time_text, time if time is not None else math.inf),
        ]
        for column, (text, sort) in enumerate(cells):
            item.setText(column, text)
            if sort is not None:
                item.setData(column, Qt.ItemDataRole.UserRole, float(sort))
            if column > 0:
                item.setTextAlignment(
                    column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
        item.setToolTip(_Col.GPU, result.basis)
        item.setData(_Col.GPU, _INDEX_ROLE, index)
        item.setData(_Col.GPU, _ID_ROLE, result.gpu_id)
        tree.addTopLevelItem(item)
    tree.setSortingEnabled(True)
    tree.sortByColumn(_Col.SPEED, Qt.SortOrder.DescendingOrder)
    first = tree.topLevelItem(0)
    if not (kept is not None and select_gpu(tree, results, kept)) and first is not None:
        tree.setCurrentItem(first)


def summary_html(request: SpeedRequest, count: int, not_holding: int) -> str:
    return (
        f"<b>{html.escape(request.label)}</b> — {count} GPU types hold it"
        + (f", {not_holding} do not" if not_holding else "")
        + "."
    )


def measured_html(measured: SpeedEstimate) -> str:
    """The line for the estimate with this machine's benchmark in place of the datasheet."""
    when = measured.basis.rsplit("calibrated with your benchmark of ", 1)[-1]
    return (
        f"<b>{MEASURED_LABEL.capitalize()}</b>: {html.escape(measured.name)} × "
        f"{measured.count}: <b>{figure_text(measured.tokens_per_s)}</b> tokens/s "
        f"({figure_text(measured.low)}–{figure_text(measured.high)}), limited by "
        f"{html.escape(measured.limited_by)}; calibrated with your benchmark of "
        f"{html.escape(when)} ({html.escape(measured.calibrated or '')})."
    )


def basis_html(result: SpeedEstimate) -> str:
    """The selected row in sentences: its figures, limit, basis, calibration and cost."""
    parts = [
        f"<p><b>{html.escape(result.name)}</b> × {result.count}: "
        f"{figure_text(result.tokens_per_s)} tokens/s ({figure_text(result.low)}–"
        f"{figure_text(result.high)}), limited by {html.escape(result.limited_by)}; bound "
        f"{figure_text(result.bound_tokens_per_s)} tokens/s; this is "
        f"{result.efficiency:.0%} of it.</p>",
        f"<p>{html.escape(result.basis)}.</p>",
    ]
    if result.calibrated:
        parts.append(f"<p>Calibrated: {html.escape(result.calibrated)}.</p>")
    if result.cost_basis:
        parts.append(f"<p>Cost: {html.escape(result.cost_basis)}.</p>")
    return "".join(parts)
