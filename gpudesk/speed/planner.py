"""The speed model put together: fitted efficiencies, catalog GPUs, costs, calibration.

:func:`estimate_for` answers for one GPU type; :func:`rank_catalog` for every catalog GPU
that holds the workload on up to ``max_count`` cards, fastest first.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from gpudesk.catalog.prices import default_cloud_rate
from gpudesk.catalog.rate_book import as_cloud_rate, rate_summary
from gpudesk.catalog.schema import CatalogEntry, Segment
from gpudesk.cost import (
    DAYS_PER_MONTH,
    DEFAULT_HOURS_PER_DAY,
    DEFAULT_KWH_PRICE_USD,
    DEFAULT_UTILISATION,
    DEFAULT_YEARS,
)
from gpudesk.memory.breakdown import ENGINE_FIXED_GB, Engine as MemoryEngine, MemoryEstimate
from gpudesk.memory.fit import usable_for
from gpudesk.memory.offload import DEFAULT_HOST, HostMemory, Offload, plan_offload
from gpudesk.memory.usable import GIB, MIB, UsableMemory
from gpudesk.speed.data import Workload
from gpudesk.speed.estimate import (
    Engine as SpeedEngine,
    Mode,
    NotRunnable,
    SpeedEstimate,
    SpeedRequest,
    Spread,
    compute_precision,
    estimate_speed,
)
from gpudesk.speed.fitting import FittedParams, fitted_params
from gpudesk.speed.hardware import DeviceRates, Precision, calibrated_rates, rates_for
from gpudesk.speed.holding import (
    holds_at,
    kv_pool_bytes,
    memory_estimate,
    need_words,
    offload_at,
)
from gpudesk.speed.physics import Efficiency, ModelCosts
from gpudesk.speed.under_load import RATE_BRACKET, ranking

if TYPE_CHECKING:
    from gpudesk.bench.results import BenchResult

#: Range widening for an engine with no published measurement in the data: its figures
#: borrow other engines' fit (transformers' Python loop is slower than vLLM's kernels).
UNMEASURED_ENGINE_LOW = 0.4
DEFAULT_COUNTS = (1, 2, 4, 8)
#: Memory already in use when llama.cpp loaded on a 12 GB GeForce driving a Windows
#: desktop: 12,288 MiB less the 11,053 MiB it found free (its own CUDA context included,
#: which the need counts too, so the warning errs early).
DESKTOP_IN_USE_MIB = 12_288 - 11_053
DESKTOP_SOURCE = (
    "a 12 GB RTX 4070 SUPER under Windows had 11,053 MiB free when llama.cpp loaded, "
    "https://github.com/ollama/ollama/issues/11388"
)


class CostSettings(BaseModel):
    """How to price an hour of GPU time (per GPU)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cloud_hourly_usd: float | None = None  # overrides the catalog's rate
    years: float = DEFAULT_YEARS
    hours_per_day: float = DEFAULT_HOURS_PER_DAY
    utilisation: float = DEFAULT_UTILISATION
    kwh_price_usd: float = DEFAULT_KWH_PRICE_USD


def _workload(mode: Mode) -> Workload:
    return Workload(mode.value)


def estimate_for(
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    fitted: FittedParams | None = None,
    *,
    kv_pool: float | None = None,
    offload: Offload | None = None,
) -> SpeedEstimate:
    """One GPU type's estimate with the fitted efficiency for its engine and generation.

    Raises:
        NotRunnable: serving with no room for one sequence.
        SpeedInputError: a request value out of range.
    """
    fitted = fitted or fitted_params()
    request = request.resolved()
    workload = _workload(request.mode)
    if request.mode is Mode.TRAIN:
        precision = compute_precision(request.quant, rates, None)
        utilisation, words, rows = fitted.train_utilisation(
            rates,
            precision,
            moe=costs.experts is not None,
            count=request.count,
            hidden=costs.hidden,
            experts=costs.experts,
            active_experts=costs.active_experts,
        )
        eff = Efficiency(bandwidth=1.0, compute=utilisation, layer_s=0.0)
        low, high, residuals = fitted.spread(workload, rows, 0 if rows else 1)
        own = True
    else:
        curve = fitted.curve(request.engine, rates, request.quant, request.backend)
        eff, words, own = curve.efficiency, curve.words, curve.own_engine
        low, high, residuals = fitted.spread(workload, curve.rows, curve.fallbacks)
    if not own:
        low *= UNMEASURED_ENGINE_LOW
    spread = Spread(
        low_ratio=low,
        high_ratio=high,
        rows=residuals,
        basis=(
            f"range: 7.5th-92.5th percentile of measured/estimated over {residuals} rows, "
            "each estimated by a fit without its source"
        ),
    )
    basis = f"{words}; {spread.basis}"
    if rates.calibrated_at is not None:
        basis += f"; calibrated with your benchmark of {rates.calibrated_at:%Y-%m-%d}"
    return estimate_speed(
        rates, costs, request, eff, spread, basis, kv_pool=kv_pool, offload=offload
    )


# -- memory: does the workload fit ------------------------------------------------------


def memory_needed_gb(costs: ModelCosts, request: SpeedRequest) -> float:
    """GB each of ``request.count`` GPUs needs: ``fit``'s memory model for this request
    (:mod:`gpudesk.speed.holding`); 0 when the costs carry no shape."""
    estimate = memory_estimate(costs, request)
    if estimate is None:
        return 0.0
    return estimate.per_gpu_gb(request.resolved().count)


def holds(
    entry: CatalogEntry,
    costs: ModelCosts,
    request: SpeedRequest,
    *,
    apple_wired_limit_mb: int | None = None,
) -> bool:
    """Whether ``request.count`` of ``entry`` hold the workload: ``fit``'s own test."""
    estimate = memory_estimate(costs, request)
    return holds_at(entry, estimate, request.count, apple_wired_limit_mb=apple_wired_limit_mb)


def _serve_pool(
    entry: CatalogEntry,
    costs: ModelCosts,
    request: SpeedRequest,
    estimate: MemoryEstimate | None,
    apple_wired_limit_mb: int | None,
) -> float | None:
    """Serving's KV pool from the memory model; at least one sequence when it holds."""
    if request.mode is not Mode.SERVE or estimate is None:
        return None
    pool = kv_pool_bytes(
        entry,
        estimate,
        request.count,
        apple_wired_limit_mb=apple_wired_limit_mb,
        gpu_memory_utilization=request.gpu_memory_utilization,
        max_num_batched_tokens=request.max_num_batched_tokens,
        max_num_seqs=request.max_num_seqs,
        engine=request.engine,
    )
    resolved = request.resolved()
    assert resolved.seq_in is not None and resolved.seq_out is not None
    return max(pool, costs.kv_bytes(resolved.seq_in + resolved.seq_out))


# -- cost -------------------------------------------------------------------------------


def with_costs(
    estimate: SpeedEstimate, entry: CatalogEntry | None, settings: CostSettings
) -> SpeedEstimate:
    """``estimate`` with USD per 1M output tokens (and per run for training), renting
    and owning; the headline figure is renting when a rate is known, else owning.

    Renting: the GPU-hour price (``settings.cloud_hourly_usd`` or the catalog's lowest
    on-demand rate). Owning: the purchase price spread over ``years`` of
    ``hours_per_day`` use, plus electricity at TDP x utilisation.
    """
    count = estimate.count
    rent_hourly: float | None = None
    rent_words = ""
    if settings.cloud_hourly_usd is not None:
        rent_hourly = settings.cloud_hourly_usd
        rent_words = f"${rent_hourly:g}/GPU-hour as given"
    elif entry is not None:
        lowest = rate_summary(entry).lowest
        rate = default_cloud_rate(entry) if lowest is None else as_cloud_rate(lowest)
        if rate is not None:
            rent_hourly = rate.usd_per_gpu_hour
            where = f"{rate.provider} {rate.note.split()[0]}" if rate.note else rate.provider
            rent_words = f"${rent_hourly:g}/GPU-hour (lowest on demand: {where}, {rate.date})"
    own_hourly: float | None = None
    own_words = ""
    if entry is not None and entry.price_usd is not None and entry.tdp_w is not None:
        hours = settings.years * 12 * DAYS_PER_MONTH * settings.hours_per_day
        power = entry.tdp_w / 1000 * settings.utilisation * settings.kwh_price_usd
        own_hourly = entry.price_usd / hours + power
        own_words = (
            f"${entry.price_usd:,.0f} over {settings.years:g} years × "
            f"{settings.hours_per_day:g} h/day + {entry.tdp_w} W × {settings.utilisation:g} × "
            f"${settings.kwh_price_usd:g}/kWh = ${own_hourly:.3f}/GPU-hour"
        )

    def per_million(hourly: float | None) -> float | None:
        if hourly is None or estimate.tokens_per_s <= 0:
            return None
        return count * hourly / (estimate.tokens_per_s * 3600) * 1e6

    def total(hourly: float | None) -> float | None:
        if hourly is None or estimate.time_s is None:
            return None
        return count * hourly * estimate.time_s / 3600

    rent_m, own_m = per_million(rent_hourly), per_million(own_hourly)
    rent_t, own_t = total(rent_hourly), total(own_hourly)
    words = []
    if rent_words:
        words.append(f"renting: {rent_words}")
    if own_words:
        words.append(f"owning: {own_words}")
    return estimate.model_copy(
        update={
            "usd_per_million_tokens": rent_m if rent_m is not None else own_m,
            "usd_total": rent_t if rent_t is not None else own_t,
            "usd_per_million_tokens_rent": rent_m,
            "usd_per_million_tokens_own": own_m,
            "usd_total_rent": rent_t,
            "usd_total_own": own_t,
            "cost_basis": "; ".join(words) or None,
        }
    )


# -- calibration ------------------------------------------------------------------------


def calibrate(
    rates: DeviceRates,
    *,
    copy_gbs: float | None,
    gemm_tflops: float | None,
    measured_at: dt.datetime,
    fitted: FittedParams | None = None,
) -> DeviceRates:
    """``rates`` with a benchmark of this machine in place of the datasheet figures.

    The measured 16-bit GEMM stands for the share of the datasheet peak the best
    published GEMM reaches on this generation (the fitted matmul rows); the measured copy
    for the share of the datasheet bandwidth ``gpudesk doctor`` expects of a copy.
    """
    from gpudesk.bench.typical import load_typical_fractions

    fitted = fitted or fitted_params()
    gemm_fraction, _ = fitted.utilisation("matmul", rates.family, Precision.FP16)
    # The copy share a healthy card reaches: the same figure `gpudesk doctor` checks against.
    copy_fraction = load_typical_fractions().copy.fraction
    return calibrated_rates(
        rates,
        measured_copy_gbs=copy_gbs,
        measured_gemm_tflops=gemm_tflops,
        copy_fraction=copy_fraction,
        gemm_fraction=gemm_fraction,
        measured_at=measured_at,
    )


# -- ranking ----------------------------------------------------------------------------


class SpeedWorkload(BaseModel):
    """A workload the user set on the "How fast?" page, for Compare and the report."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    model_name: str
    costs: ModelCosts
    request: SpeedRequest

    @property
    def label(self) -> str:
        return f"{self.model_name}, {self.request.label}"


def speed_cells(
    workload: SpeedWorkload, entries: Sequence[CatalogEntry], fitted: FittedParams | None = None
) -> list[SpeedEstimate | None]:
    """Per entry, the workload's estimate on the fewest of 1, 2, 4, 8 cards that hold it
    (None when none do, or the engine cannot run it: :func:`split_supported`), priced
    with the default :class:`CostSettings`: the "tokens/s for ..." row of a comparison.
    Only ``entries`` are estimated (:func:`best_estimates`)."""
    runnable = {entry.id for entry in split_supported(entries, workload.request)[0]}
    found = best_estimates(
        [entry for entry in entries if entry.id in runnable],
        workload.costs,
        workload.request,
        fitted=fitted,
    )
    by_id = {item.gpu_id: item for item in found if item is not None}
    return [by_id.get(entry.id) for entry in entries]


def speed_cell_text(estimate: SpeedEstimate | None) -> str:
    """ "123 (109-139) on 2 GPUs" for a table cell; "does not fit" without an estimate."""
    if estimate is None:
        return "does not fit on 8"
    count = f" on {estimate.count} GPUs" if estimate.count > 1 else ""
    if estimate.offload is not None:
        count = f" ({estimate.offload.flag}, part on the host)"
    return (
        f"{_short_number(estimate.tokens_per_s)} ({_short_number(estimate.low)}-"
        f"{_short_number(estimate.high)}){count}"
    )


def _short_number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


class RankedEstimates(BaseModel):
    """Every GPU that holds the workload, fastest first; the ones that do not; and the
    ones the engine cannot run the workload on, with the reason."""

    model_config = ConfigDict(frozen=True)

    results: tuple[SpeedEstimate, ...]
    not_holding: tuple[str, ...]
    not_supported: tuple[tuple[str, str], ...] = ()


def split_supported(
    entries: Iterable[CatalogEntry], request: SpeedRequest
) -> tuple[list[CatalogEntry], list[tuple[str, str]]]:
    """``entries`` the engine runs ``request`` on, and (id, reason) for the others
    (:func:`gpudesk.speed.support.engine_support`, each decision cited)."""
    from gpudesk.speed.support import engine_support

    runnable: list[CatalogEntry] = []
    refused: list[tuple[str, str]] = []
    for entry in entries:
        # a figure the vendor has not published rules out every engine: said first, so
        # no "try another engine" sends the user round to the same gap
        missing = missing_figures(entry)
        if missing is not None:
            refused.append((entry.id, missing))
            continue
        support = engine_support(
            entry,
            request.engine,
            quant=request.quant,
            kv=request.kv_quant,
            backend=request.backend,
            mode=request.mode,
        )
        if not support.supported:
            refused.append((entry.id, support.reason or "not supported"))
            continue
        runnable.append(entry)
    return runnable, refused


def missing_figures(entry: CatalogEntry) -> str | None:
    """Why the speed model cannot estimate ``entry`` (an announced part whose vendor has
    published no bandwidth or compute figure yet), or None."""
    unpublished = [
        words
        for words, value in (
            ("memory size", entry.memory_gb),
            ("memory bandwidth", entry.bandwidth_gbs),
        )
        if value is None
    ]
    if unpublished:
        return (
            f"{entry.name}: its vendor has published no {' or '.join(unpublished)} yet, so "
            "no speed can be estimated"
        )
    try:
        rates = rates_for(entry)
    except (TypeError, ValueError, AttributeError):
        rates = None
    if rates is None or rates.bandwidth_gbs <= 0 or rates.fp16_tflops <= 0:
        return (
            f"{entry.name}: its vendor has published no memory-bandwidth or compute figure "
            "yet, so no speed can be estimated"
        )
    return None


def _with_memory(
    found: SpeedEstimate,
    entry: CatalogEntry,
    estimate: MemoryEstimate | None,
    apple_wired_limit_mb: int | None,
    request: SpeedRequest | None = None,
) -> SpeedEstimate:
    """``found`` with fit's memory figures for its GPU and count; for llama.cpp on one
    GPU, the basis also says that the whole model is on it (or the offload says what
    is not) and how much is left."""
    if estimate is None:
        return found
    usable = usable_for(entry, estimate, apple_wired_limit_mb=apple_wired_limit_mb)
    need = estimate.per_gpu_gb(found.count // (found.replicas or 1))
    if found.offload is not None:
        need = found.offload.gpu_bytes / 1e9
    update: dict[str, object] = {"memory_per_gpu_gb": need, "usable_per_gpu_gb": usable.usable_gb}
    if (
        request is not None
        and request.engine is SpeedEngine.LLAMA_CPP
        and found.offload is None
        and found.count == 1
        and found.mode in (Mode.DECODE, Mode.PREFILL)
    ):
        update["basis"] = (
            f"{found.basis}; {whole_on_gpu_words(entry, estimate, need * 1e9, usable)}"
        )
    return found.model_copy(update=update)


def whole_on_gpu_words(
    entry: CatalogEntry, estimate: MemoryEstimate, need_bytes: float, usable: UsableMemory
) -> str:
    """ "whole model on the GPU, no layer in host memory: 11.36 of 12.00 GiB usable (0.64
    GiB to spare)"; on a card that may drive a display, with a spare smaller than what
    a desktop was seen to hold, also what llama.cpp would keep in host memory then."""
    spare = usable.usable_bytes - need_bytes
    words = (
        f"whole model on the GPU, no layer in host memory: {need_bytes / GIB:,.2f} of "
        f"{usable.usable_gib:,.2f} GiB usable ({spare / GIB:,.2f} GiB to spare)"
    )
    if entry.segment is Segment.DATACENTER or usable.max_devices is not None:
        return words
    # the desktop's figure includes llama.cpp's own CUDA context, which the need counts
    desktop = DESKTOP_IN_USE_MIB * MIB - ENGINE_FIXED_GB[MemoryEngine.LLAMA_CPP] * 1e9
    if spare >= desktop:
        return words
    offload = plan_offload(estimate, usable.usable_bytes - desktop)
    then = f"llama.cpp needs {offload.words}" if offload is not None else "it does not fit"
    return f"{words}; with a desktop on this GPU ({DESKTOP_SOURCE}) {then}"


def rank_catalog(
    entries: Iterable[CatalogEntry],
    costs: ModelCosts,
    request: SpeedRequest,
    *,
    max_count: int = 8,
    settings: CostSettings | None = None,
    calibrated: dict[str, DeviceRates] | None = None,
    fitted: FittedParams | None = None,
    apple_wired_limit_mb: int | None = None,
    hosts: dict[str, HostMemory] | None = None,
    on_gpu: Callable[[int, int, str], None] | None = None,
) -> RankedEstimates:
    """Each catalog GPU on the fewest of 1, 2, 4, 8 (up to ``max_count``) cards that hold
    the workload (``fit``'s test), estimated and priced; sorted by tokens/s, fastest first.

    Serving tries every count that holds and keeps the one with the most tokens/s per
    GPU: one card that barely holds the weights leaves no KV pool, two serve many
    sequences. At a finite request rate the fewest GPUs that output what the requests
    ask for win instead. Training runs on ``max_count`` cards when they hold it: its throughput
    grows with the GPUs, so fewer cards would only rank slower sets above faster ones.
    llama.cpp decode that no count holds (or with ``gpu_layers`` / ``cpu_moe`` set) runs
    on one GPU with part of the model in host memory (``hosts``: this machine's host
    bandwidth for its own GPU; others get the stated default). ``on_gpu(done, total,
    name)`` is told before each GPU is estimated (a ranking under load takes seconds).

    :func:`best_estimates` estimates each GPU.
    """
    entries, refused = split_supported(entries, request)
    found = best_estimates(
        entries,
        costs,
        request,
        max_count=max_count,
        settings=settings,
        calibrated=calibrated,
        fitted=fitted,
        apple_wired_limit_mb=apple_wired_limit_mb,
        hosts=hosts,
        on_gpu=on_gpu,
    )
    results = [best for best in found if best is not None]
    missing = []
    for entry, best in zip(entries, found, strict=True):
        if best is None and not rates_for(entry).link.rate_published:
            refused.append((entry.id, no_link_rate_words(entry)))
        elif best is None:
            missing.append(entry.id)
    results.sort(key=lambda item: (-item.tokens_per_s, item.gpu_id))
    return RankedEstimates(
        results=tuple(results), not_holding=tuple(missing), not_supported=tuple(refused)
    )


def no_link_rate_words(entry: CatalogEntry, count: int | None = None) -> str:
    """Why ``entry`` is not estimated on several devices: its link has no published rate
    (``count``: the devices asked for; None: one device did not hold the workload)."""
    link = rates_for(entry).link.words(2)
    if count is None:
        return (
            f"{entry.name}: {link} between devices, so only one device can be estimated, "
            "and one does not hold it"
        )
    return f"{entry.name} × {count}: {link} between devices, so {count} cannot be estimated"


def best_estimates(
    entries: Sequence[CatalogEntry],
    costs: ModelCosts,
    request: SpeedRequest,
    *,
    max_count: int = 8,
    settings: CostSettings | None = None,
    calibrated: dict[str, DeviceRates] | None = None,
    fitted: FittedParams | None = None,
    apple_wired_limit_mb: int | None = None,
    hosts: dict[str, HostMemory] | None = None,
    on_gpu: Callable[[int, int, str], None] | None = None,
) -> list[SpeedEstimate | None]:
    """Per entry, in the order given, :func:`rank_catalog`'s estimate (same counts, same
    pricing), or None where no count holds the workload; the memory the workload needs is
    estimated once for them all, and no other GPU is estimated. ``on_gpu(done, total,
    name)`` is told before each entry is estimated.
    """
    settings = settings or CostSettings()
    counts = [count for count in DEFAULT_COUNTS if count <= max_count] or [max_count]
    if request.mode is Mode.TRAIN:
        counts = [max_count]
    elif _layout_given(request):
        counts = [request.count]
    estimate = memory_estimate(costs, request)
    out: list[SpeedEstimate | None] = []
    forced = request.gpu_layers is not None or request.cpu_moe is not None
    # Serving with an SLO: counts and layouts are chosen by throughput, then the chosen one
    # is judged against the SLO (its highest-rate search on RANK_SLO_PROMPTS requests).
    explore = request
    if request.mode is Mode.SERVE and (request.has_slo or request.num_prompts > RANK_PROMPTS):
        shorter: dict[str, object] = {"num_prompts": min(request.num_prompts, RANK_PROMPTS)}
        if _finite(request):
            # at a rate, layouts and counts are compared by the share of requests meeting
            # the SLO at that rate (no highest-rate search): the run makes it for free
            shorter["slo_rate_search"] = False
        else:
            shorter.update(slo_ttft_ms=None, slo_tpot_ms=None, slo_e2e_ms=None)
        explore = request.model_copy(update=shorter)
    # a deployment run again with the same traffic (the chosen one, then with the SLO)
    # is simulated once, the SLO search's runs stop once their verdict is decided, and
    # the search stops at a bracket RANK_RATE_TOLERANCE wide
    with ranking(rate_tolerance=RANK_RATE_TOLERANCE):
        for done, entry in enumerate(entries):
            if on_gpu is not None:
                on_gpu(done, len(entries), entry.name)
            rates = (calibrated or {}).get(entry.id) or rates_for(entry)
            best: SpeedEstimate | None = None
            for count in [] if forced else counts:
                if not holds_at(entry, estimate, count, apple_wired_limit_mb=apple_wired_limit_mb):
                    continue
                candidate = explore.model_copy(update={"count": count})
                try:
                    found = _layout_estimate(
                        entry, rates, costs, candidate, estimate, fitted, apple_wired_limit_mb
                    )
                except NotRunnable:
                    continue
                keeps_up = request.mode is Mode.SERVE and _serves(found, explore)
                if (
                    best is None
                    or keeps_up
                    or found.tokens_per_s / found.count > best.tokens_per_s / best.count * 1.0001
                ):
                    # at a finite rate the fewest GPUs that keep up win, whatever a count that
                    # falls behind would serve per GPU
                    best = found
                if request.mode is not Mode.SERVE or keeps_up:
                    break
            if best is not None and explore is not request:
                # the chosen count and layout on all the requests, still without the SLO
                unjudged = explore.model_copy(update={"num_prompts": request.num_prompts})
                best = _judged(
                    entry, rates, costs, unjudged, best, estimate, fitted, apple_wired_limit_mb
                )
                # a count that kept up with the shorter run may fall behind over all the
                # requests: then the next counts, on all of them, until one keeps up, each
                # layout chosen by throughput as above (keeping up does not depend on the
                # SLO). Choosing these layouts on the shorter run instead saved 0.8 s of
                # the SLO ranking but kept an A100 PCIe x 4 (TP-2 DP-2) that falls behind
                # over 1,000 requests at 4 req/s, where x 8 as TP-2 DP-4 keeps up.
                for count in counts:
                    if count <= best.count or _serves(best, request) or not _finite(request):
                        continue
                    if not holds_at(
                        entry, estimate, count, apple_wired_limit_mb=apple_wired_limit_mb
                    ):
                        continue
                    try:
                        larger = _layout_estimate(
                            entry,
                            rates,
                            costs,
                            unjudged.model_copy(update={"count": count}),
                            estimate,
                            fitted,
                            apple_wired_limit_mb,
                        )
                    except NotRunnable:
                        continue
                    if _serves(larger, request):
                        best = larger
                if request.has_slo:
                    # judged against the SLO once, on the count kept: its run on all the
                    # requests is the one just made (under_load.ranking), and the highest-rate
                    # search starts from it. (A search for every layout of every count tried
                    # had taken 12 of the SLO ranking's 35 s.)
                    best = _judged(
                        entry, rates, costs, request, best, estimate, fitted, apple_wired_limit_mb
                    )
            if best is None:
                best = _offloaded(
                    entry, rates, costs, request, estimate, fitted, hosts, apple_wired_limit_mb
                )
            if best is None:
                out.append(None)
                continue
            best = _with_memory(best, entry, estimate, apple_wired_limit_mb, request)
            out.append(with_costs(best, entry, settings))
    return out


#: Requests per simulated rate in the highest-rate search when ranking many GPUs (a full
#: run's num_prompts for one GPU): fewer move the rate by far more than the search's
#: bracket (the first 300 requests of a seed's arrivals met the SLO at rates 27% higher
#: in the median, up to x1.9, over the catalog), so the ranking's search runs them all.
RANK_SLO_PROMPTS = 1000
#: The ranking's highest-rate search stops at a bracket this wide (a RATE_BRACKET bisected
#: twice: 9.3%; one GPU's estimate bisects it four times, 2.3%): its answer meets the SLO
#: over all the requests and one at most 9.3% higher does not. Measured by the benchmark
#: harness (llama-3.1-70b fp8, 4 req/s, ttft=500,tpot=50, 48 GPUs with a rate): 2.8%
#: below one GPU's estimate in the median, 6.5% at worst, never above; the SLO ranking
#: took 9.9-10.1 s of CPU (10.9 s at 4.6%). Two exact searches on the same requests already
#: differ by up to 17% where the share met is flat near the SLO's (it crosses at several
#: rates).
RANK_RATE_TOLERANCE = RATE_BRACKET ** (-(0.5**2))
#: Requests simulated per count and layout tried when choosing one; the chosen one runs
#: the full num_prompts.
RANK_PROMPTS = 100


def _finite(request: SpeedRequest) -> bool:
    return request.rate is not None and not math.isinf(request.rate)


def _keeps_up(found: SpeedEstimate, request: SpeedRequest) -> bool:
    """Serving at a finite rate: whether ``found`` served the requests as fast as they
    came (its queue did not grow: :attr:`ServingRun.keeps_up`), so that more GPUs could
    only serve the same with less per GPU."""
    if not _finite(request) or found.scheduler is None:
        return False
    return bool(found.scheduler.get("keeps_up"))


def _serves(found: SpeedEstimate, request: SpeedRequest) -> bool:
    """Serving at a finite rate: ``found`` keeps up (:func:`_keeps_up`) and, with an SLO,
    at least its share of the requests meets every bound at that rate. The fewest GPUs
    that serve the traffic so are the answer: 2 copies of one GPU may keep up with the
    rate yet decode too slowly for the SLO, where one instance over 4 GPUs meets it."""
    if not _keeps_up(found, request):
        return False
    if found.goodput_rps is None or not found.requests_per_s:
        return True
    return found.goodput_rps / found.requests_per_s >= request.slo_share - 1e-9


def _judged(
    entry: CatalogEntry,
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    chosen: SpeedEstimate,
    estimate: MemoryEstimate | None,
    fitted: FittedParams | None,
    apple_wired_limit_mb: int | None,
) -> SpeedEstimate:
    """``chosen`` (count and layout picked by throughput on fewer requests) run again
    with the full traffic and the SLO."""
    assert chosen.layout is not None
    layout = chosen.layout
    update: dict[str, object] = {
        "count": chosen.count,
    }
    if request.has_slo:
        update["slo_search_prompts"] = min(request.num_prompts, RANK_SLO_PROMPTS)
    if not request.engine.splits_layers:
        update.update({name: layout[name] for name in _LAYOUT_FIELDS})
    judged = request.model_copy(update=update)
    return _layout_estimate(entry, rates, costs, judged, estimate, fitted, apple_wired_limit_mb)


def replica_sizes(count: int) -> list[int]:
    """GPUs per copy of the model a serving deployment of ``count`` GPUs may use: every
    power of two dividing ``count``, and ``count`` itself (one copy)."""
    sizes = [size for size in (2**k for k in range(count.bit_length())) if count % size == 0]
    return sorted(set(sizes) | {count})


_LAYOUT_FIELDS = ("tp", "pp", "dp", "ep")


def _layout_given(request: SpeedRequest) -> bool:
    return any(getattr(request, name) is not None for name in ("tp", "pp", "dp"))


def layout_candidates(request: SpeedRequest, costs: ModelCosts) -> list[SpeedRequest]:
    """The serving layouts to try for ``request``: the one given, or those the engine runs
    on ``request.count`` GPUs (:func:`gpudesk.speed.under_load.layouts_for`)."""
    if _layout_given(request):
        return [request]
    from gpudesk.speed.under_load import layouts_for

    count = request.resolved().count
    out = []
    for layout in layouts_for(count, splits_layers=request.engine.splits_layers):
        update: dict[str, object] = dict(layout.as_dict())
        if request.ep is not None:
            update["ep"] = request.ep
        if request.engine.splits_layers:
            update = {"tp": None, "pp": None, "dp": None, "ep": None}
        out.append(request.model_copy(update=update))
    return out


def _better(found: SpeedEstimate, best: SpeedEstimate | None) -> bool:
    """Serving layouts ranked: the highest rate meeting the SLO (with one), then output
    tokens/s; within 2% of each other, the lower median end-to-end latency."""
    if best is None:
        return True
    if found.slo is not None:
        found_rate, best_rate = found.max_rate_at_slo or -1.0, best.max_rate_at_slo or -1.0
        if abs(found_rate - best_rate) > 0.02 * max(found_rate, best_rate, 1e-9):
            return found_rate > best_rate
        # no highest rate searched (the ranking's exploration): goodput at the rate
        found_good, best_good = found.goodput_rps or 0.0, best.goodput_rps or 0.0
        if abs(found_good - best_good) > 0.02 * max(found_good, best_good, 1e-9):
            return found_good > best_good
    if abs(found.tokens_per_s - best.tokens_per_s) > 0.02 * best.tokens_per_s:
        return found.tokens_per_s > best.tokens_per_s
    found_e2e = (found.latency or {}).get("e2e_ms", {}).get("p50", 0.0)
    best_e2e = (best.latency or {}).get("e2e_ms", {}).get("p50", 0.0)
    return found_e2e < best_e2e * 0.999


def _layout_estimate(
    entry: CatalogEntry,
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    estimate: MemoryEstimate | None,
    fitted: FittedParams | None,
    apple_wired_limit_mb: int | None,
) -> SpeedEstimate:
    """``request`` on ``request.count`` of ``entry``. Serving runs the layout given, or
    tries those the engine runs on the count (:func:`layout_candidates`) and keeps the
    best (:func:`_better`), each instance holding the workload by ``fit``'s test and
    sizing its KV pool from the memory model. Other modes: one copy.

    Raises:
        NotRunnable: no layout has room for one sequence.
    """
    if request.mode is not Mode.SERVE:
        if request.count > 1 and not rates.link.rate_published:
            raise NotRunnable(no_link_rate_words(entry, request.count))
        pool = _serve_pool(entry, costs, request, estimate, apple_wired_limit_mb)
        return estimate_for(rates, costs, request, fitted, kv_pool=pool)
    count = request.resolved().count
    best: SpeedEstimate | None = None
    failure: NotRunnable | None = None
    for candidate in layout_candidates(request, costs):
        tp, pp, _dp, _ep = candidate.resolved().inference_layout()
        per_instance = tp * pp
        if per_instance > 1 and not rates.link.rate_published:
            failure = NotRunnable(no_link_rate_words(entry, per_instance))
            continue
        if not holds_at(entry, estimate, per_instance, apple_wired_limit_mb=apple_wired_limit_mb):
            continue
        sized = candidate.model_copy(
            update={"count": per_instance, "tp": None, "pp": None, "dp": None, "ep": None}
        )
        pool = _serve_pool(entry, costs, sized, estimate, apple_wired_limit_mb)
        try:
            found = estimate_for(rates, costs, candidate, fitted, kv_pool=pool)
        except NotRunnable as error:
            failure = error
            continue
        if _better(found, best):
            best = found
    if best is None:
        raise failure or NotRunnable(f"{entry.name} × {count}: no layout holds it")
    return best


def _offloaded(
    entry: CatalogEntry,
    rates: DeviceRates,
    costs: ModelCosts,
    request: SpeedRequest,
    estimate: MemoryEstimate | None,
    fitted: FittedParams | None,
    hosts: dict[str, HostMemory] | None,
    apple_wired_limit_mb: int | None,
) -> SpeedEstimate | None:
    """llama.cpp decode on one ``entry`` with part of the model in host memory, or None."""
    host = (hosts or {}).get(entry.id, DEFAULT_HOST)
    offload = offload_at(
        entry, estimate, request, apple_wired_limit_mb=apple_wired_limit_mb, host=host
    )
    if offload is None:
        return None
    one = request.model_copy(update={"count": 1})
    return estimate_for(rates, costs, one, fitted, offload=offload)


def estimates_for_entries(
    entries: Sequence[CatalogEntry],
    costs: ModelCosts,
    request: SpeedRequest,
    *,
    settings: CostSettings | None = None,
    calibrated: dict[str, DeviceRates] | None = None,
    fitted: FittedParams | None = None,
    apple_wired_limit_mb: int | None = None,
    hosts: dict[str, HostMemory] | None = None,
) -> list[SpeedEstimate]:
    """The named GPUs at ``request.count`` each, in the order given.

    Raises:
        NotRunnable: a GPU set does not hold the workload (``fit``'s test).
    """
    settings = settings or CostSettings()
    estimate = memory_estimate(costs, request)
    out = []
    forced = request.gpu_layers is not None or request.cpu_moe is not None
    for entry in entries:
        rates = (calibrated or {}).get(entry.id) or rates_for(entry)
        if forced or not holds_at(
            entry, estimate, request.count, apple_wired_limit_mb=apple_wired_limit_mb
        ):
            offloaded = None
            if request.count == 1:
                offloaded = _offloaded(
                    entry, rates, costs, request, estimate, fitted, hosts, apple_wired_limit_mb
                )
            if offloaded is not None:
                offloaded = _with_memory(offloaded, entry, estimate, apple_wired_limit_mb, request)
                out.append(with_costs(offloaded, entry, settings))
                continue
            assert estimate is not None
            words = need_words(
                entry, estimate, request.count, apple_wired_limit_mb=apple_wired_limit_mb
            )
            raise NotRunnable(f"{entry.name} × {request.count}: {words}")
        found = _layout_estimate(
            entry, rates, costs, request, estimate, fitted, apple_wired_limit_mb
        )
        found = _with_memory(found, entry, estimate, apple_wired_limit_mb, request)
        out.append(with_costs(found, entry, settings))
    return out


def calibration_figures(
    results: Iterable[BenchResult],
) -> dict[str, tuple[float | None, float | None, dt.datetime]]:
    """Per catalog GPU, the newest own benchmark's (copy GB/s, 16-bit GEMM TFLOPS, time).

    Runs imported from other machines are skipped: they describe another card of the
    model, not this machine. Runs with neither figure are skipped.
    """
    out: dict[str, tuple[float | None, float | None, dt.datetime]] = {}
    for result in sorted(results, key=lambda item: item.started_at, reverse=True):
        if result.imported_from is not None or result.catalog_id is None:
            continue
        if result.catalog_id in out:
            continue
        copy = result.find("copy")
        gemm = result.find("gemm", "bf16") or result.find("gemm", "fp16")
        if copy is None and gemm is None:
            continue
        out[result.catalog_id] = (
            copy.value if copy is not None else None,
            gemm.value if gemm is not None else None,
            result.started_at,
        )
    return out


def host_memory_figure(results: Iterable[BenchResult]) -> HostMemory | None:
    """This machine's host bandwidth: the newest own CPU benchmark's memory copy (the
    built-in numpy backend), for llama.cpp's layers in host memory; None without one."""
    from gpudesk.memory.offload import measured_host

    for result in sorted(results, key=lambda item: item.started_at, reverse=True):
        if result.imported_from is not None or result.backend != "numpy":
            continue
        copy = result.find("copy")
        if copy is not None and copy.value is not None and copy.value > 0:
            return measured_host(copy.value, f"{result.started_at:%Y-%m-%d}")
    return None
