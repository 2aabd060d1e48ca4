"""What the "Will it fit?" page says in words and rows: the fits table and its summary,
the headline total and the breakdown's formula text.

Each function here builds text or table items from a :class:`FitReport`; the page
(:mod:`.fit_page`) only places them in its widgets.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTreeWidgetItem

from gpudesk.markup import linkify
from gpudesk.memory.breakdown import MemoryEstimate, PartKey
from gpudesk.memory.fit import FitReport, GpuFit
from gpudesk.ui import theme
from gpudesk.ui.plan.fit_form import WORKLOAD_TEXT
from gpudesk.units import GB_PER_GIB_TEXT, gib, gib_text

#: One color per memory part, the same in the bar and its legend.
PART_COLORS: dict[PartKey, str] = {
    PartKey.WEIGHTS: "#0072B2",
    PartKey.GRADIENTS: "#E69F00",
    PartKey.OPTIMIZER: "#D55E00",
    PartKey.ACTIVATIONS: "#009E73",
    PartKey.KV_CACHE: "#CC79A7",
    PartKey.OVERHEAD: "#8c8c8c",
}
#: The bar's segment labels, short enough to fit inside a segment.
SHORT_LABELS = {
    PartKey.WEIGHTS: "weights",
    PartKey.GRADIENTS: "grads",
    PartKey.OPTIMIZER: "optimizer",
    PartKey.ACTIVATIONS: "activations",
    PartKey.KV_CACHE: "KV",
    PartKey.OVERHEAD: "overhead",
}

#: The fits table's column headers, in :class:`FitColumn` order.
FIT_HEADERS = ["GPU", "GPUs", "Usable / GPU", "Need / GPU", "Headroom", "Decode ≤ tok/s"]

#: Why memory reads in GiB on this page, where a user compares it with a card's "80 GB".
GIB_NOTE = (
    "Memory is in GiB (2³⁰ bytes), the unit GPUs are sold in: a card sold as '80 GB' "
    "holds 80 GiB (nvidia-smi totals an A100 80GB at 81,920 MiB), and PyTorch and the "
    f"engines' logs count in GiB too. 1 GiB = {GB_PER_GIB_TEXT} GB of 10⁹ bytes, the unit "
    "model downloads are sized in."
)


class FitColumn:
    GPU, COUNT, MEMORY, NEED, HEADROOM, DECODE = range(6)


#: The number a fits row sorts by in each column (the GPU column sorts by name).
SORT_ROLE = Qt.ItemDataRole.UserRole + 1

_PARALLEL_TIP = (
    "Needs tensor/model parallelism across this many GPUs: an ideal even split, "
    "with the framework overhead counted on every GPU."
)


class FitItem(QTreeWidgetItem):
    """Sorts by the number behind each cell (usable memory as shown, not the size as
    sold, which the rows were ordered by before); ties by GPU name."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        tree = self.treeWidget()
        column = tree.sortColumn() if tree is not None else 0
        mine = self.data(column, SORT_ROLE)
        theirs = other.data(column, SORT_ROLE)
        if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)) and mine != theirs:
            return float(mine) < float(theirs)
        return self.text(FitColumn.GPU).casefold() < other.text(FitColumn.GPU).casefold()


def fit_item(result: GpuFit) -> FitItem:
    """One row of the fits table: the GPU's id under UserRole, each number under SORT_ROLE."""
    count = result.count or 0
    item = FitItem(
        [
            result.name,
            f"{count}" if count == 1 else f"{count} (parallel)",
            gib_text(result.usable_gb),
            gib_text(result.per_gpu_gb),
            f"+{gib_text(result.headroom_gb)}",
            ""
            if result.decode_tokens_per_s_upper_bound is None
            else f"≤ {result.decode_tokens_per_s_upper_bound:,.0f}",
        ]
    )
    item.setData(FitColumn.GPU, Qt.ItemDataRole.UserRole, result.gpu_id)
    for column, number in (
        # GPUs, then usable memory: a two-GPU row never sorts among one-GPU rows
        (FitColumn.COUNT, count * 1e6 + result.usable_gb),
        (FitColumn.MEMORY, result.usable_gb),
        (FitColumn.NEED, result.per_gpu_gb),
        (FitColumn.HEADROOM, result.headroom_gb),
        (FitColumn.DECODE, result.decode_tokens_per_s_upper_bound),
    ):
        if number is not None:
            item.setData(column, SORT_ROLE, float(number))
    item.setToolTip(FitColumn.GPU, result.gpu_id)
    sold = (
        "Memory size not published"
        if result.memory_gb is None
        else f"Sold as '{result.memory_gb:g} GB', which is {result.memory_gb:g} GiB"
    )
    item.setToolTip(FitColumn.MEMORY, f"{sold}: {result.usable_basis}")
    for column in range(1, 6):
        item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if count > 1:
        item.setToolTip(FitColumn.COUNT, _PARALLEL_TIP)
        item.setForeground(FitColumn.COUNT, QColor("#b36b00"))
    return item


def fits_summary(report: FitReport, gpu_name: Callable[[str], str]) -> str:
    """The sentence above the fits table: how many GPUs hold it, alone or together, and
    which were left out; ``gpu_name`` turns a catalog id into a name for prose."""
    single = sum(1 for result in report.fits if result.count == 1)
    multi = len(report.fits) - single
    parts = [f"{single} GPU{'s' if single != 1 else ''} hold it on one card"]
    if multi:
        parts.append(
            f"{multi} more need {min(r.count or 0 for r in report.fits if (r.count or 0) > 1)}"
            f" or more (tensor/model parallelism; overhead counted per GPU)"
        )
    if report.too_small:
        parts.append(f"{len(report.too_small)} are too small even as {report.counts[-1]}")
    alone = [r for r in report.offloaded if r.count is None and r.offload is not None]
    if alone:
        names = ", ".join(
            f"{gpu_name(r.gpu_id)} ({r.offload.flag})" for r in alone[:3] if r.offload
        )
        parts.append(
            f"{len(alone)} hold it with llama.cpp keeping part in host memory: {names}"
            f"{'…' if len(alone) > 3 else ''}"
        )
    if report.excluded:
        parts.append(
            f"{len(report.excluded)} left out: no native {report.estimate.spec.dtype} "
            f"({', '.join(gpu_name(r.gpu_id) for r in report.excluded[:4])}"
            f"{'…' if len(report.excluded) > 4 else ''})"
        )
    text = "; ".join(parts) + "."
    if report.estimate.decode_bytes_per_token is not None:
        text += (
            " Decode tok/s is an upper bound for a single stream (bandwidth / bytes read "
            "per token), not a prediction."
        )
    return text


def total_html(report: FitReport) -> str:
    """The headline: the total in GiB, the model and workload, and whether one GPU holds it."""
    estimate = report.estimate
    single = sum(1 for result in report.fits if result.count == 1)
    return (
        f"<span style='font-size:16pt; font-weight:bold'>{gib_text(estimate.total_gb, 2)}</span>"
        f"&nbsp;&nbsp;{html.escape(estimate.model.name)} · "
        f"{html.escape(WORKLOAD_TEXT[estimate.spec.workload])} · {spec_suffix(report)}"
        + (
            f" · fits on {single} GPU{'s' if single != 1 else ''} on its own"
            if single
            else " · no single GPU holds it"
        )
    )


def breakdown_html(estimate: MemoryEstimate) -> str:
    """The legend under the bar: each part's size, formula and source, then the notes."""
    muted = theme.muted_color().name()
    rows = []
    for part in estimate.parts:
        swatch = f"<span style='color:{PART_COLORS[part.key]}; font-size:14pt'>&#9632;</span>"
        if part.gb == 0:
            rows.append(
                f"<tr style='color:{muted}'><td valign='top'>{swatch}</td>"
                f"<td valign='top'>{html.escape(part.label)}</td>"
                f"<td valign='top' align='right' style='padding-right:10px'>0&nbsp;GiB</td>"
                f"<td valign='top'>{html.escape(part.formula)}</td></tr>"
            )
            continue
        rows.append(
            f"<tr><td valign='top'>{swatch}</td>"
            f"<td valign='top' style='padding-right:8px'><b>{html.escape(part.label)}</b></td>"
            f"<td valign='top' align='right' style='padding-right:10px'>"
            f"<b>{gib(part.gb):,.2f}&nbsp;GiB</b></td>"
            f"<td valign='top'>{html.escape(part.formula)}<br>"
            f"<span style='color:{muted}; font-size:small'>{linkify(part.source)}</span>"
            "</td></tr>"
        )
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in estimate.notes)
    return (
        "<table cellspacing='0' cellpadding='2'>"
        + "".join(rows)
        + "</table>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + f"<p>Tensors {gib_text(estimate.allocated_gb, 2)}"
        + (
            f"; {gib_text(estimate.host_gb, 2)} in host memory, not on the GPU"
            if estimate.host_gb
            else ""
        )
        + f". {html.escape(estimate.compares_with)}</p>"
        + f"<p style='color:{muted}; font-size:small'>{html.escape(GIB_NOTE)} The total "
        f"is {estimate.total_gb:,.2f} GB. The Usable column is the memory as sold less "
        "what the driver and the engine keep. Activations are an approximation (see the "
        "formula); the framework overhead is GPUDesk's stated choice.</p>"
    )


def spec_suffix(report: FitReport) -> str:
    spec = report.estimate.spec
    stored = spec.quant.label if spec.quant is not None else str(spec.dtype)
    bits = [stored if stored == str(spec.dtype) else f"{stored}, {spec.dtype} compute"]
    if spec.engine is not None:
        bits.append(spec.engine.value)
    bits.append(f"batch {spec.batch}")
    if spec.seq is not None:
        bits.append(f"{spec.seq:,} tokens")
    return html.escape(", ".join(bits))
