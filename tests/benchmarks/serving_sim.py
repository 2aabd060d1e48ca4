"""What serving under load costs: the scheduler simulator and the ranking of the catalog.

Targets (issue 41, point 9): 1,000 requests simulated in at most 1 s of CPU, and every
catalog GPU ranked under load within 10 s. Timer: ``time.process_time`` (this
process's CPU seconds, so other load on the machine does not count), each figure the
median of ``--repeat`` runs (default 5) with its min..max, after one warm-up run that
loads the catalog and the fit.

Workload: Llama 3.1 70B, FP8 weights, 1,000 prompt + 1,000 output tokens (and once
ShareGPT-shaped lengths averaging 217 + 201), vLLM's scheduler with its defaults for the
GPU; simulations on one H100 TP-8 instance (the fitted step model), rankings of the
bundled catalog as ``gpudesk speed --mode serve`` runs them (the SLO one as
``--rate 4 --slo ttft=500,tpot=50``).

What the ranking's shortcuts move: it tries each count and layout on
planner.RANK_PROMPTS (100) requests (with an SLO at a rate: by the share meeting it at that
rate, the fewest GPUs that keep up and meet it), runs the chosen one on all of them, and with an SLO
searches the highest rate on planner.RANK_SLO_PROMPTS (all 1,000) requests per rate,
stopping at a bracket planner.RANK_RATE_TOLERANCE (9.3%) wide where one GPU's estimate
stops at 2.3%; its runs stop once their verdict is decided, and a run asked for twice is
made once (both exact). For every GPU the SLO ranking ranks, the harness compares its
highest rate and goodput with one GPU's estimate on the same count and layout (the full
search): median and worst relative difference.

Run: ``python tests/benchmarks/serving_sim.py [--repeat N]``; prints one line of JSON
after the text.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

SIMULATION_TARGET_S = 1.0
RANKING_TARGET_S = 10.0


def _cpu_seconds(action: Callable[[], object], repeat: int) -> list[float]:
    action()  # warm-up: imports, catalog, fit
    samples = []
    for _ in range(repeat):
        started = time.process_time()
        action()
        samples.append(time.process_time() - started)
    return samples


def _figure(name: str, samples: list[float], target: float) -> dict[str, Any]:
    median = statistics.median(samples)
    return {
        "name": name,
        "median_s": median,
        "min_s": min(samples),
        "max_s": max(samples),
        "runs": len(samples),
        "target_s": target,
        "passed": median <= target,
    }


def _differences(rows: list[dict[str, Any]], ranking: str, full: str) -> dict[str, Any]:
    """Relative differences ranking / full - 1 where both are figures (0 where both are 0)."""
    differences = []
    none_mismatch = 0
    for row in rows:
        short, alone = row[ranking], row[full]
        if short is None or alone is None:
            none_mismatch += (short is None) != (alone is None)
            continue
        differences.append(0.0 if short == alone else (short / alone - 1 if alone else math.inf))
    return {
        "compared": len(differences),
        "median_abs": statistics.median(abs(value) for value in differences),
        "worst": max(differences, key=abs),
        "none_mismatch": none_mismatch,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.estimate import KvFormat, Mode, SpeedRequest, fitted_gpus, model_costs
    from gpudesk.speed.fitting import fitted_params
    from gpudesk.speed.hardware import rates_for
    from gpudesk.speed.planner import estimates_for_entries, rank_catalog
    from gpudesk.speed.serving import SchedulerConfig, Traffic, simulate
    from gpudesk.speed.shapes import shape_for
    from gpudesk.speed.under_load import Layout, instance_step
    from gpudesk.workload.quant import QuantFormat

    catalog = load_catalog()
    by_id = {entry.id: entry for entry in catalog.entries}
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat.FP8, KvFormat.FP16)
    base = SpeedRequest(
        mode=Mode.SERVE, quant=QuantFormat.FP8, count=8, seq_in=1000, seq_out=1000, tp=8
    ).resolved()
    rates = rates_for(by_id["h100-sxm5"])
    instance = base.model_copy(update={"tp": None})
    eff = fitted_params().curve(base.engine, rates, base.quant, None).efficiency
    step = instance_step(costs, fitted_gpus(rates, instance), eff, Layout(tp=8))
    config = SchedulerConfig(max_num_seqs=1024, max_num_batched_tokens=8192, kv_blocks=94_976)

    figures = []
    for rate in (math.inf, 4.0, 10.0):
        traffic = Traffic(num_prompts=1000, seq_in=1000, seq_out=1000, rate=rate)
        samples = _cpu_seconds(lambda traffic=traffic: simulate(config, traffic, step), args.repeat)
        label = "all at once" if math.isinf(rate) else f"{rate:g} req/s"
        figures.append(_figure(f"simulate 1,000 requests, {label}", samples, SIMULATION_TARGET_S))
    # ShareGPT-shaped lengths at the means GPUStack's ShareGPT runs print (217 / 201)
    sharegpt = Traffic(num_prompts=1000, seq_in=217, seq_out=201, dataset="sharegpt")
    samples = _cpu_seconds(lambda: simulate(config, sharegpt, step), args.repeat)
    figures.append(
        _figure("simulate 1,000 ShareGPT requests, all at once", samples, SIMULATION_TARGET_S)
    )

    plain = SpeedRequest(mode=Mode.SERVE, quant=QuantFormat.FP8, seq_in=1000, seq_out=1000)
    rankings = {
        "rank every catalog GPU, all at once": plain,
        "rank every catalog GPU, 4 req/s": plain.model_copy(update={"rate": 4.0}),
        "rank every catalog GPU, 4 req/s, SLO ttft=500,tpot=50": plain.model_copy(
            update={"rate": 4.0, "slo_ttft_ms": 500.0, "slo_tpot_ms": 50.0}
        ),
    }
    for name, request in rankings.items():
        samples = _cpu_seconds(
            lambda request=request: rank_catalog(catalog.entries, costs, request),
            max(1, args.repeat // 2),
        )
        figures.append(_figure(name, samples, RANKING_TARGET_S))

    slo = rankings["rank every catalog GPU, 4 req/s, SLO ttft=500,tpot=50"]
    ranked = rank_catalog(catalog.entries, costs, slo).results
    shortcut = []
    for short in ranked:
        if short.layout is None:
            continue
        alone = slo.model_copy(update={"count": short.count, **short.layout})
        (full,) = estimates_for_entries([by_id[short.gpu_id]], costs, alone)
        shortcut.append(
            {
                "gpu": short.gpu_id,
                "layout": short.layout,
                "ranking_max_rate": short.max_rate_at_slo,
                "full_max_rate": full.max_rate_at_slo,
                "ranking_goodput": short.goodput_rps,
                "full_goodput": full.goodput_rps,
            }
        )
    moved = {
        "max_rate_at_slo": _differences(shortcut, "ranking_max_rate", "full_max_rate"),
        "goodput_rps": _differences(shortcut, "ranking_goodput", "full_goodput"),
    }

    print(f"{'measurement':58} {'median':>8} {'min..max':>14} {'target':>8}")
    for figure in figures:
        spread = f"{figure['min_s']:.3f}..{figure['max_s']:.3f}"
        verdict = "pass" if figure["passed"] else "FAIL"
        print(
            f"{figure['name']:58} {figure['median_s']:7.3f}s {spread:>14} "
            f"{figure['target_s']:7.1f}s {verdict}"
        )
    print(
        f"\nThe SLO ranking against one GPU's estimate on the same count and layout "
        f"({len(shortcut)} GPUs):"
    )
    for name, difference in moved.items():
        print(
            f"  {name:16} median |difference| {difference['median_abs']:.2%}, worst "
            f"{difference['worst']:+.2%} ({difference['compared']} compared, "
            f"{difference['none_mismatch']} where one is None and the other not)"
        )
    print(json.dumps({"figures": figures, "moved": moved, "shortcut": shortcut}))
    return 0 if all(figure["passed"] for figure in figures) else 1


if __name__ == "__main__":
    raise SystemExit(main())
