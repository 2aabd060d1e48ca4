"""The report's "How fast" section: the Plan tab's workload on each compared GPU (no Qt).

One row per compared GPU (on the fewest of 1, 2, 4, 8 cards that hold the workload, or
one with llama.cpp keeping part of the model in host memory):
tokens/s with its range, what limits it, and the cost per 1M tokens (or the run for
training); then the fastest row's basis and where the model's figures come from.

Serving adds what ``vllm bench serve`` reports: per compared GPU the layout used, TTFT and
TPOT p50 and, with an SLO, goodput and the highest rate meeting it; and a latency curve of
the fastest one (:func:`latency_curve`: the same estimates at a sweep of request rates),
which the PDF draws with :func:`gpudesk.render.latency.paint_latency`. A compared GPU the
engine cannot run the request on is listed under "not supported" with the reason, never
in the table (:func:`gpudesk.speed.planner.split_supported`).

Where the user measured the same workload on a compared GPU (their stored measurements,
:mod:`gpudesk.measurements.rows`), its tokens/s cell is marked with an asterisk
and a line under the table gives the measured figure, when and with what
("measured 2025-04-24, llama-bench"), and its ratio to the estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.measurements.rows import best_of_workload, rows_across, stored_rows
from gpudesk.measurements.store import StoredMeasurement
from gpudesk.progress import NullProgress, Progress
from gpudesk.speed.estimate import Mode, SpeedEstimate, SpeedRequest
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.planner import (
    SpeedWorkload,
    estimates_for_entries,
    speed_cells,
    split_supported,
)
from gpudesk.workload.errors import PlanningInputError

#: what marks an estimate that has a measurement of the same workload
MEASURED_MARK = "*"


#: The sweep of the latency curve: request rates as shares of the rate the deployment
#: serves with every request sent at once (its saturated rate); past 1 the queue grows.
SWEEP_SHARES = (0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0, 1.25)


@dataclass(frozen=True, slots=True)
class LatencyPoint:
    """One simulated request rate (requests/s) and its latency percentiles (ms)."""

    rate_rps: float
    ttft_p50_ms: float
    ttft_p90_ms: float
    tpot_p50_ms: float
    tpot_p90_ms: float


@dataclass(frozen=True, slots=True)
class LatencyCurve:
    """Latency against request rate for one GPU set in one layout, with the SLO."""

    gpu_id: str
    title: str
    points: tuple[LatencyPoint, ...]
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None
    max_rate_at_slo: float | None = None


def layout_text(estimate: SpeedEstimate) -> str:
    """ "TP-8", "TP-2, 4 copies (DP-4)", or "" where the estimate has no layout."""
    layout = estimate.layout
    if not layout:
        return ""
    parts = [f"TP-{layout.get('tp', 1)}"]
    if layout.get("pp", 1) > 1:
        parts.append(f"PP-{layout['pp']}")
    if layout.get("dp", 1) > 1:
        parts.append(f"DP-{layout['dp']}")
    if layout.get("ep", 1) > 1:
        parts.append(f"EP-{layout['ep']}")
    return ", ".join(parts)


def latency_p50(estimate: SpeedEstimate, name: str) -> float | None:
    """``latency[name]["p50"]`` in ms (``name``: "ttft_ms", "tpot_ms", ...), or None."""
    figures = (estimate.latency or {}).get(name)
    return None if figures is None else figures.get("p50")


def _point_of(estimate: SpeedEstimate, rate: float) -> LatencyPoint | None:
    latency = estimate.latency
    if not latency or "ttft_ms" not in latency or "tpot_ms" not in latency:
        return None
    ttft, tpot = latency["ttft_ms"], latency["tpot_ms"]
    return LatencyPoint(rate, ttft["p50"], ttft["p90"], tpot["p50"], tpot["p90"])


def _at_layout(
    entry: CatalogEntry, costs: ModelCosts, request: SpeedRequest, estimate: SpeedEstimate
) -> SpeedEstimate | None:
    """``request`` on ``estimate``'s GPUs in its layout (None: the core refuses it)."""
    layout = estimate.layout or {}
    update: dict[str, object] = {name: layout.get(name) for name in ("tp", "pp", "dp", "ep")}
    try:
        placed = request.model_copy(update={"count": estimate.count, **update})
        return estimates_for_entries([entry], costs, placed)[0]
    except PlanningInputError:
        return None


def latency_curve(
    entry: CatalogEntry,
    costs: ModelCosts,
    request: SpeedRequest,
    estimate: SpeedEstimate,
    progress: Progress | None = None,
) -> LatencyCurve | None:
    """TTFT and TPOT (p50, p90) of ``estimate``'s deployment (its GPUs and layout) at
    :data:`SWEEP_SHARES` of its saturated request rate, with the SLO and the highest
    rate meeting it; None outside serving.

    Each point is :func:`~gpudesk.speed.planner.estimates_for_entries` in that layout
    with the rate changed and no SLO. With an SLO, the highest rate is searched again
    over every request (``slo_search_prompts`` cleared): a ranking may search over a
    shorter run, where no queue builds, and its rate then sat right of lines that
    already broke the bound. The search's own rates (``rate_curve``) are not drawn:
    they bunch around the threshold and made the lines zigzag. ``progress`` is polled
    between simulations (raises :class:`~gpudesk.progress.Cancelled`).
    """
    progress = progress or NullProgress()
    if request.mode is not Mode.SERVE or estimate.latency is None:
        return None
    plain = request.model_copy(
        update={"slo_ttft_ms": None, "slo_tpot_ms": None, "slo_e2e_ms": None}
    )
    total = len(SWEEP_SHARES) + 2
    max_rate = estimate.max_rate_at_slo
    if request.has_slo:
        progress.report(0.0, f"{estimate.name}: the highest rate meeting the SLO")
        full_run = request
        if "slo_search_prompts" in SpeedRequest.model_fields:
            full_run = request.model_copy(update={"slo_search_prompts": None})
        searched = _at_layout(entry, costs, full_run, estimate)
        if searched is not None:
            max_rate = searched.max_rate_at_slo
    progress.check()
    progress.report(1 / total, f"{estimate.name}: every request at once")
    at_once = _at_layout(entry, costs, plain.model_copy(update={"rate": None}), estimate)
    saturated = at_once.requests_per_s if at_once is not None else None
    points: dict[float, LatencyPoint] = {}
    if saturated is not None and saturated > 0:
        for number, share in enumerate(SWEEP_SHARES, start=2):
            progress.check()
            rate = saturated * share
            progress.report(number / total, f"{estimate.name}: {rate:.3g} requests/s")
            found = _at_layout(entry, costs, plain.model_copy(update={"rate": rate}), estimate)
            point = None if found is None else _point_of(found, rate)
            if point is not None:
                points[rate] = point
    progress.report(1.0, f"{estimate.name}: latency curve done")
    if not points:
        return None
    where = layout_text(estimate)
    title = f"{estimate.name} × {estimate.count}" + (f", {where}" if where else "")
    return LatencyCurve(
        gpu_id=estimate.gpu_id,
        title=title,
        points=tuple(points[rate] for rate in sorted(points)),
        slo_ttft_ms=request.slo_ttft_ms,
        slo_tpot_ms=request.slo_tpot_ms,
        max_rate_at_slo=max_rate,
    )


@dataclass(frozen=True, slots=True)
class SpeedSection:
    heading: str
    #: (GPU, GPUs, tokens/s, range, limit, cost) per compared GPU
    rows: tuple[tuple[str, str, str, str, str, str], ...]
    cost_header: str
    basis: tuple[str, ...]
    #: one line per compared GPU with a measurement of this workload
    measured: tuple[str, ...] = ()
    #: serving: the header and one row per GPU in the table (GPU, layout, TTFT p50,
    #: TPOT p50 and, with an SLO, goodput and the highest rate meeting it)
    latency_header: tuple[str, ...] = ()
    latency_rows: tuple[tuple[str, ...], ...] = ()
    #: serving: the fastest compared GPU's latency against request rate
    curve: LatencyCurve | None = None
    #: "GPU: reason" for each compared GPU the engine cannot run the request on
    not_supported: tuple[str, ...] = ()


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _usd(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:,.2f}" if value >= 0.01 else f"${value:.4f}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _rate(value: float | None) -> str:
    return "none" if value is None else f"{value:.3g}"


def latency_header(request: SpeedRequest) -> tuple[str, ...]:
    header: tuple[str, ...] = ("GPU", "layout", "TTFT p50", "TPOT p50")
    if request.has_slo:
        header += ("goodput (requests/s)", "highest rate at SLO (requests/s)")
    return header


def latency_row(estimate: SpeedEstimate, request: SpeedRequest) -> tuple[str, ...]:
    row: tuple[str, ...] = (
        estimate.name,
        layout_text(estimate) or "n/a",
        _ms(latency_p50(estimate, "ttft_ms")),
        _ms(latency_p50(estimate, "tpot_ms")),
    )
    if request.has_slo:
        row += (_rate(estimate.goodput_rps), _rate(estimate.max_rate_at_slo))
    return row


def build_speed_section(
    workload: SpeedWorkload,
    entries: Sequence[CatalogEntry],
    measurements: Sequence[StoredMeasurement] | None = None,
    *,
    latency_chart: bool = True,
    progress: Progress | None = None,
) -> SpeedSection:
    """The section for ``workload`` on ``entries`` (the compared GPUs, in order).

    ``measurements``: the user's stored rows (None: read their database; an absent or
    unreadable one holds none). ``latency_chart``: serving, simulate the fastest GPU's
    latency curve (:func:`latency_curve`; several more simulations).
    """
    runnable, refused = split_supported(entries, workload.request)
    names = {entry.id: entry.name for entry in entries}
    not_supported = tuple(f"{names.get(gpu_id, gpu_id)}: {reason}" for gpu_id, reason in refused)
    entries = runnable
    train = workload.request.mode is Mode.TRAIN
    per_run = train and workload.request.tokens is not None
    rows = []
    estimates = []
    # the compared GPUs only, priced with the default settings (speed_cells)
    cells = speed_cells(workload, entries)
    found = rows_across(
        workload, cells, stored_rows() if measurements is None else list(measurements)
    )
    measured_lines = []
    for entry, priced, mine in zip(entries, cells, found, strict=True):
        if priced is None:
            rows.append((entry.name, "", "does not fit on 8", "", "", ""))
            continue
        estimates.append(priced)
        cost = priced.usd_total if per_run else priced.usd_per_million_tokens
        own = best_of_workload(mine)
        mark = ""
        if own is not None:
            mark = MEASURED_MARK
            ratio = f", ×{own.ratio:.2f} of the estimate" if own.ratio is not None else ""
            measured_lines.append(
                f"{MEASURED_MARK} {entry.name}: {_number(own.measurement.tokens_per_s)} "
                f"tokens/s {own.note()} ({own.source_text()}{ratio})."
            )
        rows.append(
            (
                entry.name,
                str(priced.count) if priced.offload is None else f"1 ({priced.offload.flag})",
                _number(priced.tokens_per_s) + mark,
                f"{_number(priced.low)}–{_number(priced.high)}",
                priced.limited_by.replace("_", " "),
                _usd(cost),
            )
        )
    serve = workload.request.mode is Mode.SERVE
    curve = None
    if serve and estimates and latency_chart:
        fastest = max(estimates, key=lambda item: item.tokens_per_s)
        entry_of = {entry.id: entry for entry in entries}
        curve = latency_curve(
            entry_of[fastest.gpu_id], workload.costs, workload.request, fastest, progress
        )
    basis = []
    if estimates:
        best = max(estimates, key=lambda item: item.tokens_per_s)
        basis.append(f"{best.name}: {best.basis}.")
        if best.cost_basis:
            basis.append(f"Cost: {best.cost_basis}.")
    basis.append(
        "tokens/s come from bytes and FLOPs per token at efficiencies fitted per engine and "
        "GPU generation to published measurements (gpudesk/speed/measurements.toml, "
        "each with its source); the range is the 10th-90th percentile of measured / estimated."
    )
    return SpeedSection(
        heading=f"{workload.label}.",
        rows=tuple(rows),
        cost_header="$ per run" if per_run else "$ / 1M tokens",
        basis=tuple(basis),
        measured=tuple(measured_lines),
        latency_header=latency_header(workload.request) if serve else (),
        latency_rows=tuple(latency_row(item, workload.request) for item in estimates)
        if serve
        else (),
        curve=curve,
        not_supported=not_supported,
    )
