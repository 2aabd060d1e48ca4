"""``speed``'s output: the ``--json`` document and the text (a ranked table, then the
first result's basis, fitting the terminal; 80 columns when not a terminal)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpudesk.speed.text import duration_text, figure_text, usd_text

if TYPE_CHECKING:
    from gpudesk.cli.speed_prices import PurchasePrice
    from gpudesk.speed.estimate import SpeedEstimate, SpeedRequest

#: The ``--json`` result keys the issue names, in order; more keys follow them.
RESULT_KEYS = (
    "gpu_id",
    "count",
    "tokens_per_s",
    "low",
    "high",
    "bound_tokens_per_s",
    "limited_by",
    "efficiency",
    "basis",
    "time_to_first_token_s",
    "time_s",
    "usd_per_million_tokens",
    "usd_total",
)


#: ``speed``'s engine when --engine is not given (``fit``'s is transformers).
DEFAULT_ENGINE = "vllm"
#: Said under ``speed``'s header when --engine was not given.
SPEED_DEFAULT_ENGINE_NOTE = (
    f"engine: {DEFAULT_ENGINE} by default (--engine chooses; fit's default is transformers)"
)


def _clean(value: Any) -> Any:
    """JSON-safe: no NaN or infinity (None instead), floats rounded to 6 significant digits."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    return value


#: serve-only keys, absent from other modes' results; the SLO's only with --slo
_SERVE_KEYS = ("latency", "requests_per_s", "rate_curve", "scheduler")
_SLO_KEYS = ("goodput_rps", "max_rate_at_slo", "slo")


def result_json(estimate: SpeedEstimate, price: PurchasePrice | None = None) -> dict[str, Any]:
    """One ``--json`` result: :data:`RESULT_KEYS` first, then the estimate's other keys
    and, given a ``price``, the purchase keys (``purchase_usd``, ``tokens_per_s_per_kusd``,
    ...: :func:`gpudesk.cli.speed_prices.price_json`)."""
    data = estimate.model_dump(mode="json")
    ordered = {key: data.pop(key) for key in RESULT_KEYS}
    ordered.update(data)
    if estimate.mode.value != "serve":
        for key in _SERVE_KEYS + _SLO_KEYS:
            ordered.pop(key, None)
    elif estimate.slo is None:
        for key in (*_SLO_KEYS, "rate_curve"):
            ordered.pop(key, None)
    if estimate.layout is None:
        ordered.pop("layout", None)
    if price is not None:
        from gpudesk.cli.speed_prices import price_json

        ordered.update(price_json(price))
    cleaned: dict[str, Any] = _clean(ordered)
    return cleaned


def speed_json(
    request: SpeedRequest,
    model: dict[str, Any],
    results: list[SpeedEstimate],
    not_holding: list[str],
    not_supported: list[tuple[str, str]] | None = None,
    prices: Mapping[str, PurchasePrice] | None = None,
) -> dict[str, Any]:
    """The ``speed --json`` document: ``workload``, ``results`` (with the purchase keys
    where ``prices`` has the GPU), ``not_holding`` and ``not_supported`` (``{"gpu_id",
    "reason"}`` each)."""
    prices = prices or {}
    workload = request.model_dump(mode="json")
    workload.update(model)
    workload["label"] = request.label
    return {
        "workload": _clean(workload),
        "results": [result_json(item, prices.get(item.gpu_id)) for item in results],
        "not_holding": not_holding,
        "not_supported": [
            {"gpu_id": gpu_id, "reason": reason} for gpu_id, reason in not_supported or []
        ],
    }


def speed_text(
    request: SpeedRequest,
    model: dict[str, Any],
    results: list[SpeedEstimate],
    not_holding: list[str],
    not_supported: list[tuple[str, str]] | None = None,
    *,
    engine_chosen: bool = True,
    prices: Mapping[str, PurchasePrice] | None = None,
    names: Mapping[str, str] | None = None,
    empty: str = "No catalog GPU holds this workload.",
) -> str:
    """The human-readable ``speed`` output: a ranked table, then the first result's basis,
    all fitting the terminal (80 columns when not a terminal). Without ``engine_chosen``
    a line says the engine is the default (``fit`` defaults to another). With ``prices``
    the table has each GPU's purchase price and tokens/s per $1k; ``names`` (id -> name)
    lets GPUs refused for the same reason share one line; ``empty`` is said when no
    result is left."""
    from gpudesk.cli.textwidth import wrap_paragraph

    name = model.get("model") or model.get("params") or model.get("config")
    lines = [
        wrap_paragraph(f"{name}: {request.label}"),
        wrap_paragraph(str(model["shape"]), indent="  "),
    ]
    if not engine_chosen and request.mode.value != "train":
        lines.append(wrap_paragraph(SPEED_DEFAULT_ENGINE_NOTE, indent="  "))
    lines.append("")
    lines.extend(
        _table_lines(request, results, prices or {}) if results else [wrap_paragraph(empty)]
    )
    lines.extend(_basis_lines(results))
    lines.extend(_offload_lines(results))
    lines.extend(_latency_lines(results))
    if not_holding:
        lines.append("")
        lines.append(wrap_paragraph("Not holding the workload: " + ", ".join(not_holding)))
    if not_supported:
        lines.append("")
        lines.append(f"Not supported ({len(not_supported)}, never ranked):")
        lines.extend(_not_supported_lines(not_supported, names or {}))
    return "\n".join(lines)


#: Marks a used-market purchase price in the table (a footnote says so).
USED_MARK = "†"
#: Stands for each GPU's own name in a reason shared by several GPUs.
_THESE = "each GPU below"


def _not_supported_lines(
    not_supported: list[tuple[str, str]], names: Mapping[str, str]
) -> list[str]:
    """One entry per reason: GPUs refused for the same reason (their names aside) share
    it, their ids listed under it. One per GPU made 81 two-to-three-line paragraphs of
    ``speed --mode train``."""
    from gpudesk.cli.textwidth import wrap_paragraph

    groups: dict[str, list[str]] = {}
    own: dict[str, str] = {}
    for gpu_id, reason in not_supported:
        name = names.get(gpu_id)
        shared = reason.replace(name, _THESE) if name and name in reason else reason
        groups.setdefault(shared, []).append(gpu_id)
        own[gpu_id] = reason
    lines: list[str] = []
    for shared, ids in groups.items():
        if len(ids) == 1:
            text = f"{ids[0]}: {own[ids[0]]}"
            lines.append(wrap_paragraph(text, indent="  ", subsequent_indent="    "))
            continue
        lines.append(
            wrap_paragraph(f"{shared} ({len(ids)}):", indent="  ", subsequent_indent="    ")
        )
        lines.append(wrap_paragraph(", ".join(ids), indent="    "))
    return lines


def _latency_lines(results: list[SpeedEstimate]) -> list[str]:
    """Serving under load: the first result's latency percentiles and SLO figures."""
    from gpudesk.cli.textwidth import terminal_table, wrap_paragraph

    if not results or results[0].latency is None:
        return []
    first = results[0]
    assert first.latency is not None
    rows = []
    for key, name in (
        ("ttft_ms", "TTFT"),
        ("tpot_ms", "TPOT"),
        ("itl_ms", "ITL"),
        ("e2e_ms", "E2E"),
    ):
        figures = first.latency[key]
        rows.append([name] + [f"{figures[p]:,.1f}" for p in ("p50", "p90", "p99", "mean")])
    lines = ["", f"{first.gpu_id} latency (ms):"]
    lines.extend(
        terminal_table(
            ["", "p50", "p90", "p99", "mean"], rows, right_aligned={1, 2, 3, 4}
        ).splitlines()
    )
    served = f"{figure_text(first.requests_per_s)} requests/s"
    if first.slo is not None:
        rate = first.max_rate_at_slo
        rate_text = "no rate meets it" if rate is None else f"{figure_text(rate)} requests/s"
        served += (
            f"; goodput {figure_text(first.goodput_rps)} requests/s; highest rate meeting the "
            f"SLO: {rate_text}"
        )
    lines.append(wrap_paragraph(served))
    return lines


def _table_lines(
    request: SpeedRequest,
    results: list[SpeedEstimate],
    prices: Mapping[str, PurchasePrice],
) -> list[str]:
    """The ranked table (training has per-GPU figures and, with --tokens, the run); with
    ``prices``, each GPU's purchase price ("buy $", all its GPUs) and tokens/s per $1k."""
    from gpudesk.cli.textwidth import terminal_table

    train = request.mode.value == "train"
    headers = ["GPU", "GPUs", "tokens/s", "range", "limit", "$/1M tok"]
    if train:
        headers = ["GPU", "GPUs", "tokens/s", "per GPU", "range", "$/1M tok"]
        if request.tokens:
            headers += ["run time", "$ per run"]
    else:
        headers.append("TTFT")
    rows = [
        _train_row(item, with_run=bool(request.tokens)) if train else _inference_row(item)
        for item in results
    ]
    if not rows:
        return ["No catalog GPU holds this workload."]
    right = {1, 2, 3, 5, 6, 7} if train else {1, 2, 5, 6}
    if not prices:
        return terminal_table(headers, rows, right_aligned=right).splitlines()
    lines = _priced_table(headers, rows, right, results, prices)
    if any(price.kind == "used" for price in prices.values()):
        lines.append(f"{USED_MARK} a used-market price (the catalog's price kind: used)")
    return lines


#: The GPU column keeps at least this many characters beside the purchase columns.
_MIN_GPU_COLUMN = 10


def _priced_table(
    headers: list[str],
    rows: list[list[str]],
    right: set[int],
    results: list[SpeedEstimate],
    prices: Mapping[str, PurchasePrice],
) -> list[str]:
    """The table with each GPU's purchase price and tokens/s per $1k as its last columns;
    where they do not fit beside the others (training with --tokens at 80 columns), the
    table as it was and a second one, GPU by GPU in the same order, with them."""
    from gpudesk.cli.speed_prices import per_kusd_cell, price_cell
    from gpudesk.cli.textwidth import output_width, terminal_table

    def cells(item: SpeedEstimate) -> list[str]:
        price = prices.get(item.gpu_id)
        return ["n/a", "n/a"] if price is None else [price_cell(price), per_kusd_cell(price)]

    priced = [row + cells(item) for row, item in zip(rows, results, strict=True)]
    columns = len(headers)
    # GPU ids break at their hyphens, the limit (or training's range) at its words; an
    # inference range never breaks; headers wrap over their figures to leave room
    lines = terminal_table(
        [*headers, "buy $", "tok/s per $1k"],
        priced,
        right_aligned=right | {columns, columns + 1},
        wrap={0, 4},
        wrap_headers=True,
    ).splitlines()
    separator = next(line for line in lines if line.startswith("-"))
    gpu_width = len(separator.split(" ", 1)[0])
    if max(len(line) for line in lines) <= output_width() and gpu_width >= min(
        _MIN_GPU_COLUMN, max(len(row[0]) for row in rows)
    ):
        return lines
    table = terminal_table(headers, rows, right_aligned=right).splitlines()
    bought = [[row[0], row[1], *cells(item)] for row, item in zip(rows, results, strict=True)]
    return [
        *table,
        "",
        "To buy (the catalog's price × the GPU count):",
        *terminal_table(
            ["GPU", "GPUs", "buy $", "tok/s per $1k"], bought, right_aligned={1, 2, 3}
        ).splitlines(),
    ]


def _range_text(item: SpeedEstimate) -> str:
    return f"{figure_text(item.low)}-{figure_text(item.high)}"


def _train_row(item: SpeedEstimate, *, with_run: bool) -> list[str]:
    cells = [
        item.gpu_id,
        f"{item.count:,}",
        figure_text(item.tokens_per_s),
        figure_text(item.tokens_per_s_per_gpu),
        _range_text(item),
        usd_text(item.usd_per_million_tokens),
    ]
    if with_run:
        cells += [duration_text(item.time_s), usd_text(item.usd_total)]
    return cells


def _inference_row(item: SpeedEstimate) -> list[str]:
    ttft = item.time_to_first_token_s
    return [
        item.gpu_id,
        f"{item.count:,}",
        figure_text(item.tokens_per_s),
        _range_text(item),
        item.limited_by,
        usd_text(item.usd_per_million_tokens),
        _ttft_text(ttft),
    ]


def _ttft_text(seconds: float | None) -> str:
    """Time to first token: ms below a second (``38 ms``), else seconds (``1.31 s``)."""
    if seconds is None or not math.isfinite(seconds):
        return "n/a"
    return f"{seconds * 1000:,.0f} ms" if seconds < 0.9995 else f"{seconds:,.3g} s"


def _basis_lines(results: list[SpeedEstimate]) -> list[str]:
    """The first result's basis, calibration and cost."""
    from gpudesk.cli.textwidth import wrap_paragraph

    if not results:
        return []
    first = results[0]
    lines = [
        "",
        wrap_paragraph(
            f"{first.gpu_id}: {first.basis}. "
            f"Bound {figure_text(first.bound_tokens_per_s)} tokens/s "
            f"(estimate = {first.efficiency:.0%} of it)."
        ),
    ]
    if first.calibrated:
        lines.append(wrap_paragraph(f"Calibrated: {first.calibrated}"))
    if first.cost_basis:
        lines.append(wrap_paragraph(f"Cost: {first.cost_basis}"))
    return lines


def _offload_lines(results: list[SpeedEstimate]) -> list[str]:
    from gpudesk.cli.textwidth import wrap_paragraph

    offloaded = [item for item in results if item.offload is not None]
    if not offloaded:
        return []
    lines = ["", "Partial offload (llama.cpp, one GPU; the rest runs on the CPU):"]
    for item in offloaded:
        assert item.offload is not None
        lines.append(
            wrap_paragraph(
                f"{item.gpu_id}: {item.offload.words}", indent="  ", subsequent_indent="    "
            )
        )
    return lines
