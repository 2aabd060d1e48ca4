"""The report's "How fast" section: the Plan tab's workload on each compared GPU (no Qt).

One row per compared GPU (on the fewest of 1, 2, 4, 8 cards that hold the workload, or
one with llama.cpp keeping part of the model in host memory):
tokens/s with its range, what limits it, and the cost per 1M tokens (or the run for
training); then the fastest row's basis and where the model's figures come from.

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
from gpudesk.speed.estimate import Mode
from gpudesk.speed.planner import SpeedWorkload, speed_cells

#: what marks an estimate that has a measurement of the same workload
MEASURED_MARK = "*"


@dataclass(frozen=True, slots=True)
class SpeedSection:
    heading: str
    #: (GPU, GPUs, tokens/s, range, limit, cost) per compared GPU
    rows: tuple[tuple[str, str, str, str, str, str], ...]
    cost_header: str
    basis: tuple[str, ...]
    #: one line per compared GPU with a measurement of this workload
    measured: tuple[str, ...] = ()


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


def build_speed_section(
    workload: SpeedWorkload,
    entries: Sequence[CatalogEntry],
    measurements: Sequence[StoredMeasurement] | None = None,
) -> SpeedSection:
    """The section for ``workload`` on ``entries`` (the compared GPUs, in order).

    ``measurements``: the user's stored rows (None: read their database; an absent or
    unreadable one holds none).
    """
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
    )
