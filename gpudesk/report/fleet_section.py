"""The report's "Fleet" section: a saved survey summarised for a planning meeting (no Qt).

A fleet of 1,000 nodes does not fit a table per GPU, so the section shows
the cluster line, one row per model (devices, the headline GEMM's median
and range, how many were flagged), one line per model against the published
reference, the outliers (the GPUs slow against their fleet median first) and
the failed nodes, each list capped with a count of what was left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudesk.bench.text import format_figure
from gpudesk.fleet.checks import Outlier, is_slow, outlier_line, summarise
from gpudesk.fleet.document import SurveyView
from gpudesk.fleet.inventory import inventory, model_summaries

#: Lines listed per list; the rest is counted.
MAX_LISTED = 40


@dataclass(frozen=True, slots=True)
class FleetSection:
    heading: str
    models: tuple[tuple[str, str, str, str, str], ...]
    outliers: tuple[str, ...]
    failed: tuple[str, ...]
    left_out: tuple[str, ...]
    #: How many of the first outliers are GPUs slow against their fleet median (drawn
    #: apart: they come first, slowest first).
    slow: int = 0
    #: One line per model: its fleet median against the published reference.
    reference: tuple[str, ...] = ()


def _capped(lines: list[str], what: str, left_out: list[str]) -> tuple[str, ...]:
    if len(lines) > MAX_LISTED:
        left_out.append(f"{len(lines) - MAX_LISTED} more {what} are in the survey file.")
    return tuple(lines[:MAX_LISTED])


def build_fleet_section(view: SurveyView) -> FleetSection:
    """The section's text for one survey (its summary recomputed, never trusted)."""
    summary = summarise(view.nodes)
    outliers = [Outlier(**item) for item in summary["outliers"]]
    rows = inventory(list(view.nodes), outliers)
    cluster = view.cluster
    heading = (
        f"{cluster.title}, surveyed {cluster.surveyed_at:%Y-%m-%d %H:%M} UTC: "
        f"{summary['nodes']} nodes, "
        f"{summary['gpus']} GPUs, {summary['nodes_failed']} nodes failed, "
        f"{len(outliers)} outlier{'' if len(outliers) == 1 else 's'}."
    )
    models = []
    for item in model_summaries(rows):
        if item.median is None:
            measured = "not measured"
            spread = ""
        else:
            measured = f"{item.label} {format_figure(item.median)} {item.unit}"
            spread = f"{format_figure(item.low)}–{format_figure(item.high)}"
        models.append((item.model, str(item.devices), measured, spread, str(item.flagged)))
    labels = {node.node_id: node.label for node in view.nodes}
    outlier_lines = [
        outlier_line(item, labels.get(item.node_id, item.node_id[:12])) for item in outliers
    ]
    failed_lines = [f"{row.node}: {row.error}" for row in rows if row.error is not None]
    left_out: list[str] = []
    return FleetSection(
        heading=heading,
        models=tuple(models),
        outliers=_capped(outlier_lines, "outliers", left_out),
        failed=_capped(failed_lines, "failed nodes", left_out),
        left_out=tuple(left_out),
        slow=min(MAX_LISTED, sum(1 for item in outliers if is_slow(item))),
        reference=tuple(str(line["message"]) for line in summary["reference"]),
    )
