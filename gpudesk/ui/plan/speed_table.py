"""How fast?'s ranked table and the words around it: one row per GPU (count, tokens/s,
range, limit, $ per 1M tokens, first token or run time; serving: the layout in the limit's
place, TTFT and TPOT p50 and, with an SLO, goodput and the highest rate meeting it), the
summary line, the not-supported list, the line for this machine's benchmark and the
selected row's basis."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from gpudesk.report.speed_section import latency_p50, layout_text
from gpudesk.speed.estimate import Mode, SpeedEstimate, SpeedRequest
from gpudesk.speed.text import duration_text, figure_text, usd_text
from gpudesk.ui.plan import forms

MEASURED_LABEL = "this machine (measured)"
#: the row's place in the page's results (column GPU), and its GPU id
_INDEX_ROLE = Qt.ItemDataRole.UserRole
_ID_ROLE = Qt.ItemDataRole.UserRole + 1


class _Col:
    GPU, COUNT, SPEED, RANGE, LIMIT, COST, TIME, TPOT, GOODPUT, MAX_RATE = range(10)


#: serving's own columns, hidden in the other modes (and the SLO's without one)
_SERVE_COLUMNS = (_Col.TPOT, _Col.GOODPUT, _Col.MAX_RATE)
_SLO_COLUMNS = (_Col.GOODPUT, _Col.MAX_RATE)


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
        [
            "GPU",
            "GPUs",
            "tokens/s",
            "range",
            "limit",
            "$ / 1M tokens",
            "first token",
            "TPOT p50",
            "goodput",
            "max rate",
        ],
        sortable=True,
    )
    header = tree.headerItem()
    header.setToolTip(
        _Col.RANGE, "10th-90th percentile of measured / estimated in the published data"
    )
    header.setToolTip(_Col.TPOT, "Median time per output token after the first (ms)")
    header.setToolTip(_Col.GOODPUT, "Requests per second that meet every SLO bound")
    header.setToolTip(
        _Col.MAX_RATE,
        "The highest request rate (requests/s) at which the SLO's share of requests meets it",
    )
    for column in _SERVE_COLUMNS:
        tree.setColumnHidden(column, True)
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
    serve = request.mode is Mode.SERVE
    for column in _SERVE_COLUMNS:
        tree.setColumnHidden(column, not serve or (column in _SLO_COLUMNS and not request.has_slo))
    # serving's layout names the GPUs, and its range is in the basis: room for the names
    for column in (_Col.COUNT, _Col.RANGE):
        tree.setColumnHidden(column, serve)
    tree.headerItem().setText(_Col.LIMIT, "layout" if serve else "limit")
    tree.headerItem().setText(
        _Col.TIME, "run time" if train else "TTFT p50" if serve else "first token"
    )
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
        if serve and result.latency is not None:
            ttft = latency_p50(result, "ttft_ms")
            time = None if ttft is None else ttft / 1000
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
            (
                (layout_text(result) or "n/a") if serve else result.limited_by.replace("_", " "),
                None,
            ),
            (usd_text(result.usd_per_million_tokens), result.usd_per_million_tokens or math.inf),
            (time_text, time if time is not None else math.inf),
        ]
        if serve:
            tpot = latency_p50(result, "tpot_ms")
            cells += [
                (_ms_text(tpot), tpot if tpot is not None else math.inf),
                (_rate_text(result.goodput_rps), result.goodput_rps or 0.0),
                (_rate_text(result.max_rate_at_slo), result.max_rate_at_slo or 0.0),
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


def _ms_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _rate_text(value: float | None) -> str:
    return "none" if value is None else f"{value:.3g}/s"


def not_supported_text(not_supported: Sequence[tuple[str, str]], names: dict[str, str]) -> str:
    """ "GPU: reason", one line each, for the list under the table."""
    return "\n".join(f"{names.get(gpu_id, gpu_id)}: {reason}" for gpu_id, reason in not_supported)


def summary_html(request: SpeedRequest, count: int, not_holding: int) -> str:
    return (
        f"<b>{html.escape(request.label)}</b> — {count} GPU type{'s' if count != 1 else ''} "
        f"hold{'s' if count == 1 else ''} it"
        + (f", {not_holding} {'does' if not_holding == 1 else 'do'} not" if not_holding else "")
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
    if result.latency is not None:
        parts.insert(1, latency_html(result))
    if result.calibrated:
        parts.append(f"<p>Calibrated: {html.escape(result.calibrated)}.</p>")
    if result.cost_basis:
        parts.append(f"<p>Cost: {html.escape(result.cost_basis)}.</p>")
    return "".join(parts)


def latency_html(result: SpeedEstimate) -> str:
    """Serving's figures in a sentence: the layout, the percentiles, goodput, the SLO."""
    latency = result.latency or {}
    names = (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT"), ("itl_ms", "ITL"), ("e2e_ms", "E2E"))
    figures = "; ".join(
        f"{words} p50 {_ms_text(latency[key].get('p50'))}, p90 {_ms_text(latency[key].get('p90'))}"
        for key, words in names
        if key in latency
    )
    text = (
        f"<p>Under load, in layout {html.escape(layout_text(result) or 'n/a')}: "
        f"{html.escape(figures)}; {_rate_text(result.requests_per_s)} requests"
    )
    if result.slo is not None:
        text += (
            f"; goodput {_rate_text(result.goodput_rps)}; the highest rate meeting the SLO: "
            f"{_rate_text(result.max_rate_at_slo)}"
        )
    return text + ".</p>"
