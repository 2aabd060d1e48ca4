"""Choose the mixture-of-experts dispatch costs on published serving runs, out of source.

:class:`gpudesk.speed.physics.MoeDispatch` has two costs the bytes and FLOPs of a step do
not give: a fixed cost per MoE layer per step (routing kernels) and a cost per expert
the step's tokens touch. The measurement file (``measurements.toml``) has no mixture of
experts served, so they are chosen on the MoE rows of ``serving_runs.toml``, the only
published MoE serving runs GPUDesk holds, without letting any row judge its own source:

- every MoE run of a current build (:data:`gpudesk.speed.serving_validation.SIMULATED_BUILDS_FROM`:
  an estimate is for a current build) is estimated at each point of a grid of the two costs;
- a point's loss over a set of runs is the median of |log(estimate / measured)| over
  their TPOT (the median where the source prints one, else the mean) and output
  throughput, the two figures the step time sets;
- the costs the app uses (``chosen``) minimise the loss over each vendor family's runs
  (engines' MoE kernels differ by vendor: ROCm's and CUDA's), and over all runs (``*``)
  for a vendor without any; for each source, ``held_out`` gives the same chosen over the
  other sources' runs, and :mod:`gpudesk.speed.serving_validation` estimates that
  source's runs with it.

``python -m gpudesk.speed.moe_fit`` recomputes the grid (about a minute) and writes
``moe_dispatch.json``; a test re-estimates a few of its cells and checks the choices.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpudesk.speed.physics import ANY_VENDOR, MOE_DISPATCH_FILE, MoeDispatch, dispatch_override

#: seconds per MoE layer per step, and per touched expert per layer (one GPU's share)
LAYER_GRID_S = (
    0.0,
    10e-6,
    20e-6,
    30e-6,
    40e-6,
    50e-6,
    60e-6,
    80e-6,
    100e-6,
    130e-6,
    160e-6,
    200e-6,
    250e-6,
)
EXPERT_GRID_S = (0.0, 0.05e-6, 0.1e-6, 0.2e-6, 0.3e-6, 0.5e-6, 0.8e-6, 1.2e-6)


@dataclass(frozen=True, slots=True)
class RunRatios:
    """One MoE run's log(estimate / measured) at each grid point (None: not printed)."""

    source: str
    label: str
    #: the GPU's vendor family (``hardware.vendor_of``): costs are chosen per family
    vendor: str
    #: the run's place in ``serving_runs.toml`` (labels repeat)
    index: int
    #: per grid point, in :func:`grid` order: (TPOT, throughput)
    logs: tuple[tuple[float | None, float | None], ...]


def grid() -> list[MoeDispatch]:
    return [MoeDispatch(layer, expert) for layer in LAYER_GRID_S for expert in EXPERT_GRID_S]


def _log(ratio: float | None) -> float | None:
    return None if ratio is None or ratio <= 0 else math.log(ratio)


def run_ratios(
    run: dict[str, Any], index: int, entries: dict[str, Any], points: Sequence[MoeDispatch]
) -> RunRatios | None:
    """Run ``index`` estimated at every point (None: not a MoE run of a current build, or
    not estimable)."""
    from gpudesk.speed.hardware import vendor_of
    from gpudesk.speed.serving_validation import check_run, current_build, source_of

    if not current_build(run):
        return None
    logs = []
    label = ""
    for point in points:
        with dispatch_override({ANY_VENDOR: point}):
            checked = check_run(run, entries)
        if checked.skipped or not checked.moe:
            return None
        label = checked.label
        tpot = checked.tpot_p50 if checked.tpot_p50 is not None else checked.tpot_mean
        logs.append((_log(tpot), _log(checked.throughput)))
    return RunRatios(source_of(run), label, vendor_of(entries[run["gpu"]]), index, tuple(logs))


def loss(rows: Iterable[RunRatios], point: int) -> float:
    """Median |log ratio| of ``rows``' TPOT and throughput at grid point ``point``."""
    values = [abs(value) for row in rows for value in row.logs[point] if value is not None]
    return statistics.median(values) if values else math.inf


def best(rows: Sequence[RunRatios], points: int) -> int:
    """The grid point of least :func:`loss` (the first of equals: the smaller costs)."""
    return min(range(points), key=lambda point: (loss(rows, point), point))


def _point(points: Sequence[MoeDispatch], index: int) -> dict[str, float]:
    return {"layer_s": points[index].layer_s, "expert_s": points[index].expert_s}


def _by_vendor(rows: Sequence[RunRatios], points: Sequence[MoeDispatch]) -> dict[str, Any]:
    """The best point over ``rows``, and over each vendor family's rows among them."""
    table = {ANY_VENDOR: _point(points, best(rows, len(points)))} if rows else {}
    for vendor in sorted({row.vendor for row in rows}):
        own = [row for row in rows if row.vendor == vendor]
        table[vendor] = _point(points, best(own, len(points)))
    return table


def choose(rows: Sequence[RunRatios], points: Sequence[MoeDispatch]) -> dict[str, Any]:
    """The fit's result as ``moe_dispatch.json`` holds it: the costs per vendor family
    (``*`` over every run, for other vendors), and for each source the same chosen
    without its runs."""
    chosen = _by_vendor(rows, points)
    held_out = {
        source: _by_vendor([row for row in rows if row.source != source], points)
        for source in sorted({row.source for row in rows})
    }
    losses = {}
    for vendor, point in chosen.items():
        own = [row for row in rows if vendor in (ANY_VENDOR, row.vendor)]
        losses[vendor] = loss(own, points.index(MoeDispatch(**point)))
    return {
        "chosen": chosen,
        "loss": losses,
        "held_out": held_out,
        "grid": [{"layer_s": point.layer_s, "expert_s": point.expert_s} for point in points],
        "runs": [
            {
                "source": row.source,
                "label": row.label,
                "vendor": row.vendor,
                "index": row.index,
                "logs": [[_round(tpot), _round(rate)] for tpot, rate in row.logs],
            }
            for row in rows
        ],
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 5)


def stored() -> dict[str, Any]:
    from importlib import resources

    text = resources.files("gpudesk.speed").joinpath(MOE_DISPATCH_FILE).read_text("utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


def held_out_dispatch(source: str) -> dict[str, MoeDispatch]:
    """The costs by vendor family chosen without ``source``'s runs (the app's own where
    it has none)."""
    data = stored()
    table = data.get("held_out", {}).get(source, data["chosen"])
    return {
        vendor: MoeDispatch(float(point["layer_s"]), float(point["expert_s"]))
        for vendor, point in table.items()
    }


def fit_all() -> dict[str, Any]:
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.serving_validation import load_runs

    entries = {entry.id: entry for entry in load_catalog([], include_user=False).entries}
    points = grid()
    rows = [
        row
        for index, run in enumerate(load_runs())
        if (row := run_ratios(run, index, entries, points)) is not None
    ]
    return choose(rows, points)


if __name__ == "__main__":
    result = fit_all()
    path = Path(__file__).with_name(MOE_DISPATCH_FILE)
    path.write_text(json.dumps(result, indent=1) + "\n", "utf-8")
    print(f"chosen {result['chosen']} (loss {result['loss']}) over {len(result['runs'])} runs")
