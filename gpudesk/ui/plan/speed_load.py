"""How fast?'s long work as plain functions for the worker: ranking the catalog under
load (serving simulates each GPU's scheduler, seconds for the whole catalog) and the
selected GPU's latency curve.

Each takes a :class:`~gpudesk.progress.Progress`, reports per GPU (or per rate) and stops
between them when cancelled; tests call them directly, the page moves them onto a
:class:`~gpudesk.ui.worker.TaskWorker`. A request the core refuses comes back as a
:class:`Refused` value rather than an exception, so the page shows the core's words
where it shows them for the quick modes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.progress import Progress
from gpudesk.report.speed_section import LatencyCurve, latency_curve
from gpudesk.speed.estimate import SpeedEstimate, SpeedRequest
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.planner import CostSettings, RankedEstimates, rank_catalog
from gpudesk.workload.errors import PlanningInputError


@dataclass(frozen=True, slots=True)
class Refused:
    """The core refused the request: its message, for the form's error line."""

    message: str


@dataclass(frozen=True, slots=True)
class Ranked:
    """A ranking for the request numbered ``serial`` (the page drops stale ones)."""

    serial: int
    ranked: RankedEstimates | Refused


@dataclass(frozen=True, slots=True)
class Curve:
    """A latency curve for the ranking ``serial`` (None: nothing to draw)."""

    serial: int
    gpu_id: str
    curve: LatencyCurve | None


def rank_under_load(
    entries: Sequence[CatalogEntry],
    costs: ModelCosts,
    request: SpeedRequest,
    progress: Progress,
    *,
    max_count: int,
    settings: CostSettings,
) -> RankedEstimates | Refused:
    """:func:`~gpudesk.speed.planner.rank_catalog` one GPU at a time, with progress and
    cancel between them; the same results, order and not-supported list as one call.

    Raises:
        gpudesk.progress.Cancelled: cancelled through ``progress``.
    """
    results: list[SpeedEstimate] = []
    not_holding: list[str] = []
    not_supported: list[tuple[str, str]] = []
    total = max(1, len(entries))
    for number, entry in enumerate(entries):
        progress.check()
        progress.report(number / total, f"{entry.name} ({number + 1} of {total})")
        try:
            one = rank_catalog([entry], costs, request, max_count=max_count, settings=settings)
        except PlanningInputError as exc:
            return Refused(str(exc))
        results += one.results
        not_holding += one.not_holding
        not_supported += one.not_supported
    progress.report(1.0, f"{total} GPUs estimated")
    results.sort(key=lambda item: (-item.tokens_per_s, item.gpu_id))
    return RankedEstimates(
        results=tuple(results),
        not_holding=tuple(not_holding),
        not_supported=tuple(not_supported),
    )


def curve_for(
    entry: CatalogEntry,
    costs: ModelCosts,
    request: SpeedRequest,
    estimate: SpeedEstimate,
    progress: Progress,
) -> LatencyCurve | None:
    """The latency curve of ``estimate``'s deployment (None: the core cannot draw one).

    Raises:
        gpudesk.progress.Cancelled: cancelled through ``progress``.
    """
    try:
        return latency_curve(entry, costs, request, estimate, progress)
    except PlanningInputError:
        return None
