"""The report's "How fast" section: the Plan tab's workload on each compared GPU (no Qt).

One row per compared GPU (on the fewest of 1, 2, 4, 8 cards that hold the workload, or
one with llama.cpp keeping part of the model in host memory):
tokens/s with its range, what limits it, and the cost per 1M tokens (or the run for
training); then the fastest row's basis and where the model's figures come from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.planning.speed.estimate import Mode
from gpudesk.planning.speed.planner import CostSettings, SpeedWorkload, speed_cells, with_costs


@dataclass(frozen=True, slots=True)
class SpeedSection:
    heading: str
    #: (GPU, GPUs, tokens/s, range, limit, cost) per compared GPU
    rows: tuple[tuple[str, str, str, str, str, str], ...]
    cost_header: str
    basis: tuple[str, ...]


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


def build_speed_section(workload: SpeedWorkload, entries: Sequence[CatalogEntry]) -> SpeedSection:
    """The section for ``workload`` on ``entries`` (the compared GPUs, in order)."""
    train = workload.request.mode is Mode.TRAIN
    per_run = train and workload.request.tokens is not None
    rows = []
    estimates = []
    for entry, cell in zip(entries, speed_cells(workload, entries), strict=True):
        if cell is None:
            rows.append((entry.name, "", "does not fit on 8", "", "", ""))
            continue
        priced = with_costs(cell, entry, CostSettings())
        estimates.append(priced)
        cost = priced.usd_total if per_run else priced.usd_per_million_tokens
        rows.append(
            (
                entry.name,
                str(priced.count) if priced.offload is None else f"1 ({priced.offload.flag})",
                _number(priced.tokens_per_s),
                f"{_number(priced.low)}–{_number(priced.high)}",
                priced.limited_by.replace("_", " "),
                _usd(cost),
            )
        )
    basis = []
    if estimates:
        best = max(estimates, key=lambda item: item.tokens_per_s)
        basis.append(f"{best.name}: {best.basis}.")
        if best.cost_basis:
            basis.append(f"Cost: {best.cost_basis}.")
    basis.append(
        "tokens/s come from bytes and FLOPs per token at efficiencies fitted per engine and "
        "GPU generation to published measurements (gpudesk/planning/speed/measurements.toml, "
        "each with its source); the range is the 10th-90th percentile of measured / estimated."
    )
    return SpeedSection(
        heading=f"{workload.label}.",
        rows=tuple(rows),
        cost_header="$ per run" if per_run else "$ / 1M tokens",
        basis=tuple(basis),
    )
