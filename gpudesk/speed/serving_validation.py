"""Serving under load against published runs the model never saw (``serving_runs.toml``).

Every run in the file is estimated as a user would ask for it: ``speed --mode serve``
with the run's GPU, layout, model, weight format, lengths, request rate, client
concurrency, number of requests and any scheduler setting the source states. None of
these sources is in the fit (``measurements.toml``), so every figure here is out of
source. ``python -m gpudesk.speed.serving_validation`` prints the table.

Choices where a run leaves something open, applied to every row alike:

- ShareGPT-style runs give only token totals: their mean prompt and output lengths are
  the totals over the completed requests, and the simulator draws ShareGPT-shaped
  lengths averaging them (``speed --dataset sharegpt``,
  :mod:`gpudesk.speed.sharegpt_lengths`): a burst of them ends with a tail of long
  answers at small batch, as the real one does.
- Random-prompt runs draw lengths as their client does: ``random_range_ratio`` as
  ``vllm bench serve`` (uniform within len x (1 ± r)); ``random_range_low`` as SGLang's
  ``bench_serving`` (uniform in [low x len, len], ``--random-range-ratio`` 0 by default),
  simulated as its mean with the matching spread.
- A run without a stated number of requests is simulated with 10 x its concurrency
  (InferenceX's recipes), else 1,000.
- SGLang runs are estimated as ``speed --engine sglang`` estimates them: SGLang's
  chunked-prefill size, running cap and KV pool for the GPU
  (:func:`gpudesk.speed.under_load.engine_limits`,
  :func:`gpudesk.speed.holding.sglang_instance_pool`), scheduled by vLLM V1's rules and
  priced with vLLM's step efficiencies: GPUDesk has no SGLang fit.
- TTFT and TPOT are compared at the median where the source prints one, else at the mean
  (counted apart).
- Runs published before :data:`SIMULATED_BUILDS_FROM` ran engine builds older than the
  scheduler the simulator follows: their figures are given apart as well as in the total.
"""

from __future__ import annotations

import datetime
import math
import statistics
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

SERVING_RUNS_FILE = "serving_runs.toml"
#: The simulator follows vLLM V1's scheduler, the default from vLLM 0.8.0 (vLLM pull
#: request #13726, released 2025-03-18): a run published before then ran an older build
#: (V0's scheduler; for DeepSeek-R1, builds from before FlashMLA and DeepGEMM were released
#: on 2025-02-24 and 2025-02-26). An estimate is for a current build.
SIMULATED_BUILDS_FROM = datetime.date(2025, 3, 19)


@dataclass(frozen=True, slots=True)
class ServingCheck:
    """One published run against its estimate; ratios are estimate / measured."""

    source: str
    label: str
    vendor: str
    layout: str
    moe: bool
    throughput: float | None = None
    inside: bool | None = None
    ttft_p50: float | None = None
    ttft_mean: float | None = None
    tpot_p50: float | None = None
    tpot_mean: float | None = None
    skipped: str | None = None
    #: published on or after :data:`SIMULATED_BUILDS_FROM`
    current_build: bool = True
    published: str = ""


def load_runs() -> list[dict[str, Any]]:
    text = resources.files("gpudesk.speed").joinpath(SERVING_RUNS_FILE).read_text("utf-8")
    runs: list[dict[str, Any]] = tomllib.loads(text)["runs"]
    return runs


def current_build(run: dict[str, Any]) -> bool:
    """The run is of a build the simulator's rules describe (see :data:`SIMULATED_BUILDS_FROM`)."""
    published = run.get("published")
    if isinstance(published, datetime.date):
        return published >= SIMULATED_BUILDS_FROM
    return True


def source_of(run: dict[str, Any]) -> str:
    """A run's source: the address its ``source`` begins with; files of one repository at
    one commit are one source."""
    address = str(run["source"]).split(" ")[0]
    if "/blob/" in address:
        repository, _, rest = address.partition("/blob/")
        return f"{repository}/blob/{rest.split('/')[0]}"
    return address


#: ``random_range_low`` spread past this is simulated at it (the simulator needs < 1)
_WIDEST_SPREAD = 0.99


def length_draw(run: dict[str, Any], lengths: tuple[int, int]) -> tuple[int, int, float]:
    """(mean prompt, mean output, spread) the simulator draws ``run``'s lengths with."""
    low = run.get("random_range_low")
    if low is not None:
        scale = (1 + float(low)) / 2
        spread = min(_WIDEST_SPREAD, (1 - float(low)) / (1 + float(low)))
        return (max(1, round(lengths[0] * scale)), max(1, round(lengths[1] * scale)), spread)
    return lengths[0], lengths[1], float(run.get("random_range_ratio", 0.0))


def _lengths(run: dict[str, Any]) -> tuple[int, int] | None:
    if run.get("input_len") and run.get("output_len"):
        return int(run["input_len"]), int(run["output_len"])
    done = run.get("completed")
    if done and run.get("total_input_tokens") and run.get("total_output_tokens"):
        return (
            max(1, round(run["total_input_tokens"] / done)),
            max(1, round(run["total_output_tokens"] / done)),
        )
    return None


def _sharegpt_means(run: dict[str, Any]) -> bool:
    """Whether ``run``'s lengths are ShareGPT's, known only by their means (from totals)."""
    return run.get("dataset") == "sharegpt" and not run.get("input_len")


def _ratio(estimate: float | None, measured: float | None) -> float | None:
    if estimate is None or measured is None or measured <= 0 or estimate <= 0:
        return None
    return estimate / measured


def check_run(run: dict[str, Any], entries: dict[str, Any]) -> ServingCheck:
    """Estimate one run and compare."""
    from gpudesk.speed.estimate import (
        Engine,
        KvFormat,
        Mode,
        NotRunnable,
        SpeedRequest,
        model_costs as costs_of,
    )
    from gpudesk.speed.planner import estimates_for_entries, split_supported
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.errors import PlanningInputError
    from gpudesk.workload.quant import QuantFormat

    entry = entries[run["gpu"]]
    tp, dp, pp = int(run["tp"]), int(run.get("dp", 1)), int(run.get("pp", 1))
    layout = f"TP-{tp}" + (f" DP-{dp}" if dp > 1 else "")
    shape = shape_for(run["model"])
    common = {
        "source": source_of(run),
        "label": f"{run['model']} on {run['gpu']} ({run['engine']}, {layout})",
        "vendor": entry.vendor.lower(),
        "layout": "TP-1" if tp * dp * pp == 1 else "TP-n",
        "moe": shape.experts is not None,
        "current_build": current_build(run),
        "published": str(run.get("published", "")),
    }
    lengths = _lengths(run)
    if lengths is None:
        return ServingCheck(**common, skipped="no prompt and output lengths")
    seq_in, seq_out, spread = length_draw(run, lengths)
    engine = {"tensorrt-llm": Engine.TENSORRT_LLM, "sglang": Engine.SGLANG}.get(
        run["engine"], Engine.VLLM
    )
    server = run.get("server", {})
    # each engine's own name for the step's token budget and the running cap, as stated
    budget = (
        server.get("max_num_batched_tokens")
        or server.get("max_num_tokens")
        or server.get("chunked_prefill_size")
    )
    seqs = (
        server.get("max_num_seqs")
        or server.get("max_batch_size")
        or server.get("max_running_requests")
    )
    concurrency = run.get("max_concurrency")
    prompts = run.get("num_prompts") or run.get("completed")
    if prompts is None:
        prompts = 10 * concurrency if concurrency else 1000
    rate = None if str(run["request_rate"]) == "inf" else float(run["request_rate"])
    quant = QuantFormat(run["quant"])
    kv = KvFormat(run.get("kv", "fp16"))
    try:
        request = SpeedRequest(
            mode=Mode.SERVE,
            engine=engine,
            quant=quant,
            kv_quant=kv,
            count=tp * dp * pp,
            tp=tp,
            dp=dp,
            pp=pp,
            ep=run.get("ep"),
            seq_in=seq_in,
            seq_out=seq_out,
            random_range_ratio=spread,
            dataset="sharegpt" if _sharegpt_means(run) else "random",
            num_prompts=int(min(prompts, 5000)),
            rate=rate,
            concurrency=concurrency,
            max_num_seqs=seqs,
            max_num_batched_tokens=max(budget, seqs or 1) if budget else None,
        ).resolved()
        if not split_supported([entry], request)[0]:
            return ServingCheck(**common, skipped="the engine table refuses it")
        costs = costs_of(shape, quant, kv)
        (estimate,) = estimates_for_entries([entry], costs, request)
    except (NotRunnable, PlanningInputError, ValueError) as error:
        return ServingCheck(**common, skipped=str(error)[:120])
    measured = run.get("output_tokens_per_s")
    if measured is None and run.get("output_tokens_per_s_per_gpu") is not None:
        measured = run["output_tokens_per_s_per_gpu"] * tp * dp * pp
    ttft, tpot = run.get("ttft_ms", {}), run.get("tpot_ms", {})
    latency = estimate.latency or {}
    inside = None
    if measured:
        inside = estimate.low <= measured <= estimate.high
    return ServingCheck(
        **common,
        throughput=_ratio(estimate.tokens_per_s, measured),
        inside=inside,
        ttft_p50=_ratio(latency.get("ttft_ms", {}).get("p50"), ttft.get("p50")),
        ttft_mean=None
        if "p50" in ttft
        else _ratio(latency.get("ttft_ms", {}).get("mean"), ttft.get("mean")),
        tpot_p50=_ratio(latency.get("tpot_ms", {}).get("p50"), tpot.get("p50")),
        tpot_mean=None
        if "p50" in tpot
        else _ratio(latency.get("tpot_ms", {}).get("mean"), tpot.get("mean")),
    )


def check_all() -> list[ServingCheck]:
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.moe_fit import held_out_dispatch
    from gpudesk.speed.physics import dispatch_override

    entries = {entry.id: entry for entry in load_catalog([], include_user=False).entries}
    checked = []
    for run in load_runs():
        # a mixture of experts' dispatch costs as chosen without this run's source
        with dispatch_override(held_out_dispatch(source_of(run))):
            checked.append(check_run(run, entries))
    return checked


@dataclass(frozen=True, slots=True)
class Figure:
    """One metric over the rows that have it."""

    metric: str
    rows: int
    sources: int
    median_miss: float
    median_ratio: float
    inside: str = ""


def _miss(ratios: list[float]) -> float:
    return math.exp(statistics.median(abs(math.log(value)) for value in ratios))


def summarise(checked: list[ServingCheck], *, only_current: bool = False) -> list[Figure]:
    """Each metric over the rows that have it (``only_current``: of current builds only)."""
    if only_current:
        checked = [item for item in checked if item.current_build]
    out = []
    for metric, name in (
        ("throughput", "output tokens/s"),
        ("ttft_p50", "TTFT p50"),
        ("tpot_p50", "TPOT p50"),
        ("ttft_mean", "TTFT mean (no p50 printed)"),
        ("tpot_mean", "TPOT mean (no p50 printed)"),
    ):
        with_it = [item for item in checked if getattr(item, metric) is not None]
        if not with_it:
            continue
        ratios = [getattr(item, metric) for item in with_it]
        inside = ""
        if metric == "throughput":
            held = sum(1 for item in with_it if item.inside)
            inside = f"{held} of {len(with_it)} ({held / len(with_it):.0%})"
        out.append(
            Figure(
                metric=name,
                rows=len(with_it),
                sources=len({item.source for item in with_it}),
                median_miss=_miss(ratios),
                median_ratio=statistics.median(ratios),
                inside=inside,
            )
        )
    return out


def report_text(checked: list[ServingCheck]) -> str:
    lines = [
        "| Runs | Metric | Rows | Sources | Median miss (×) | Median estimate / measured | "
        "Throughput inside [low, high] |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, only_current in (
        ("all", False),
        (f"builds from {SIMULATED_BUILDS_FROM:%Y-%m-%d}", True),
    ):
        for figure in summarise(checked, only_current=only_current):
            lines.append(
                f"| {name} | {figure.metric} | {figure.rows} | {figure.sources} | "
                f"×{figure.median_miss:.2f} | {figure.median_ratio:.2f} | {figure.inside} |"
            )
    skipped = [item for item in checked if item.skipped]
    lines.append("")
    lines.append(
        f"{len(checked)} published runs from {len({item.source for item in checked})} sources; "
        f"{len(skipped)} not estimated: "
        + ("; ".join(sorted({f"{item.label}: {item.skipped}" for item in skipped})) or "none")
    )
    lines.append("")
    lines.append(
        "| Run | Published | Layout | MoE | tokens/s | TTFT p50 | TPOT p50 | TTFT mean | "
        "TPOT mean |"
    )
    lines.append("|---|---|---|---|---:|---:|---:|---:|---:|")

    def cell(value: float | None) -> str:
        return "" if value is None else f"{value:.2f}"

    for item in checked:
        if item.skipped:
            continue
        lines.append(
            f"| {item.label} | {item.published} | {item.layout} | {'yes' if item.moe else 'no'} | "
            f"{cell(item.throughput)} | {cell(item.ttft_p50)} | {cell(item.tpot_p50)} | "
            f"{cell(item.ttft_mean)} | {cell(item.tpot_mean)} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(report_text(check_all()))
