"""Serving under load: an engine's scheduler limits, the layout, the SLO, and the figures.

:func:`serve_under_load` runs :func:`gpudesk.speed.serving.simulate` for one deployment
(``dp`` copies of an instance on ``tp x pp`` GPUs) with steps timed by
:func:`gpudesk.speed.step.step_seconds`, and reports what ``vllm bench serve`` prints,
with goodput and the highest request rate that meets an SLO.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from gpudesk.errors import GpuDeskError
from gpudesk.speed.physics import Efficiency, Gpus, ModelCosts
from gpudesk.speed.serving import (
    DEFAULT_BLOCK_SIZE,
    Dataset,
    SchedulerConfig,
    ServingRun,
    ShareTarget,
    SimulationError,
    StepShape,
    Traffic,
    meets_target,
    simulate,
)
from gpudesk.speed.step import step_seconds_fn

#: The vLLM release whose defaults are modelled; the rule below holds from 0.9.0 to 0.19.1.
VLLM_VERSION = "0.11.0"
VLLM_DEFAULTS_SOURCE = (
    "vLLM 0.9.0-0.19.1 vllm/engine/arg_utils.py (0.11.0 lines 1605 ff.): under `vllm serve` "
    "a GPU with at least 70 GiB whose name lacks 'a100' gets max_num_batched_tokens 8192 "
    "and max_num_seqs 1024, others 2048 and 256; max_num_seqs is capped at the token budget"
)
TRTLLM_DEFAULTS_SOURCE = (
    "TensorRT-LLM LlmArgs/BuildConfig defaults max_batch_size 2048, max_num_tokens 8192 "
    "(the release this app models; other releases differ); capacity policy "
    "GUARANTEED_NO_EVICT, the default (SchedulerConfig, TensorRT-LLM 1.3/1.4 API reference; "
    "'Useful Runtime Options'): a request starts only when KV blocks for its prompt and "
    "whole output are free, and is never preempted"
)
LLAMA_CPP_DEFAULTS_SOURCE = (
    "llama-server: --parallel -1 (auto) gives 4 slots, n_batch 2048 (ggml-org/llama.cpp "
    "issues 17450 and 17989, startup logs 'n_seq_max = 4', 'n_batch = 2048')"
)
#: GiB of one GPU from which vLLM picks its large defaults
VLLM_LARGE_GPU_GIB = 70
#: The SGLang releases whose defaults are modelled: the chunk table as in 0.5.4 (what
#: the serving validation used first), the reserve formula as read in a late-2025
#: server_args.py of the 0.5 series (it cites SGLang pull request #15927); the newest
#: releases raise the chunk below 35 GiB to 4096 and moved this code to arg_groups/
SGLANG_VERSION = "0.5"
SGLANG_DEFAULTS_SOURCE = (
    "SGLang 0.5 series python/sglang/srt/server_args.py "
    "ServerArgs._handle_gpu_memory_settings: "
    "chunked_prefill_size 2048 below 35 GiB of GPU memory, 4096 below 60, 8192 below 160, "
    "16384 above; mem_fraction_static = (memory - reserved) / memory with reserved = "
    "512 MiB + 1.5 x max(chunk, 2048) MiB + 2 x cuda_graph_max_bs MiB + tp x pp / 8 GiB, "
    "at least 10 GiB above 60 GiB; schedule_policy 'fcfs'; max_running_requests unset: "
    "min(clamp(pool tokens / context_len x 512, 2048, 4096), pool tokens // 2) "
    "(model_executor/model_runner.py init_memory_pool, managers/scheduler.py). Admission "
    "and preemption follow vLLM V1's rules here: SGLang's own (prefill-first steps, "
    "new_token_ratio reservation, retraction) are not simulated"
)
#: SGLang 0.5 server_args.py _handle_gpu_memory_settings, by GPU memory (GiB upper
#: bounds): (chunked_prefill_size, cuda_graph_max_bs below tp 4, at tp 4 and above)
SGLANG_BY_MEMORY: tuple[tuple[int, int, int, int], ...] = (
    (20, 2048, 8, 8),
    (35, 2048, 24, 80),
    (60, 4096, 32, 160),
    (90, 8192, 256, 512),
    (160, 8192, 256, 512),
)
SGLANG_LARGE = (16384, 512, 512)
#: SGLang's max_running_requests when unset: the estimate from the pool, clamped
SGLANG_RUNNING_FLOOR, SGLANG_RUNNING_CEILING = 2048, 4096
#: Highest-rate search: down from the saturated request rate by this factor at a time,
#: to at most the saturated rate / RATE_SEARCH_SPAN, then bisected in log space until
#: the rate found meets the SLO and one at most RATE_TOLERANCE times it does not (a
#: factor RATE_BRACKET bisected RATE_SEARCH_STEPS times: 2.3%)
RATE_BRACKET = 0.7
RATE_SEARCH_SPAN = 1000.0
RATE_SEARCH_STEPS = 4
RATE_TOLERANCE = RATE_BRACKET ** (-(0.5**RATE_SEARCH_STEPS))
#: Share of requests that must meet every SLO bound, unless ``p=`` says otherwise
DEFAULT_SLO_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class Layout:
    """How an engine spreads over GPUs: ``dp`` copies, each ``tp`` x ``pp`` GPUs; ``ep``
    GPUs share each MoE layer's experts."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def per_instance(self) -> int:
        return self.tp * self.pp

    def as_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "ep": self.ep}

    @property
    def words(self) -> str:
        parts = [f"TP-{self.tp}"]
        if self.pp > 1:
            parts.append(f"PP-{self.pp}")
        if self.dp > 1:
            parts.append(f"{self.dp} copies (DP-{self.dp})")
        if self.ep > 1:
            parts.append(f"experts over {self.ep} GPUs (EP-{self.ep})")
        return ", ".join(parts)


def layouts_for(count: int, *, splits_layers: bool) -> list[Layout]:
    """The layouts of ``count`` GPUs an engine runs: one tensor-parallel instance across
    powers of two, copies of it (data parallel) for the rest. A mixture of experts'
    experts are split by tensor parallelism, as vLLM does without
    ``--enable-expert-parallel`` (``--ep`` asks for expert parallelism). llama.cpp splits
    layers, one copy."""
    if splits_layers:
        return [Layout(tp=1, pp=count)] if count > 1 else [Layout()]
    out = []
    tp = 1
    while tp <= count:
        if count % tp == 0:
            out.append(Layout(tp=tp, dp=count // tp))
        tp *= 2
    if not out or out[-1].tp != count:
        out.append(Layout(tp=count))
    return out


@dataclass(frozen=True, slots=True)
class Slo:
    """Service-level bounds in ms (None: no bound) and the share that must meet them."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2e_ms: float | None = None
    share: float = DEFAULT_SLO_SHARE

    def words(self) -> str:
        bounds = [
            f"{name} ≤ {value:,.0f} ms"
            for name, value in (
                ("TTFT", self.ttft_ms),
                ("TPOT", self.tpot_ms),
                ("E2E", self.e2e_ms),
            )
            if value is not None
        ]
        return f"{', '.join(bounds)} for {self.share:.0%} of requests"

    def as_dict(self) -> dict[str, float | None]:
        return {
            "ttft_ms": self.ttft_ms,
            "tpot_ms": self.tpot_ms,
            "e2e_ms": self.e2e_ms,
            "p": round(self.share * 100, 6),
        }


class SloError(GpuDeskError, ValueError):
    """An ``--slo`` text that cannot be read; the message says what is wrong."""


_SLO_KEYS = {"ttft": "ttft_ms", "tpot": "tpot_ms", "e2e": "e2e_ms", "e2el": "e2e_ms"}


def parse_slo(text: str) -> Slo:
    """``ttft=500,tpot=50[,e2e=MS][,p=PCT]`` (milliseconds; p: percent of requests)."""
    if len(text) > 200:
        raise SloError("is longer than 200 characters")
    values: dict[str, float] = {}
    for part in text.split(","):
        key, sep, raw = part.strip().partition("=")
        key = key.strip().lower()
        if not sep or not key:
            raise SloError(f"{part.strip()!r} is not NAME=VALUE (ttft=500,tpot=50,p=95)")
        if key not in (*_SLO_KEYS, "p"):
            raise SloError(f"unknown bound {key!r}: use ttft, tpot, e2e (ms) and p (percent)")
        field_name = _SLO_KEYS.get(key, "share")
        if field_name in values:
            raise SloError(f"{key} is given twice")
        try:
            value = float(raw.strip())
        except ValueError:
            raise SloError(f"{key}={raw.strip()!r} is not a number") from None
        if key == "p":
            if not (math.isfinite(value) and 0 < value <= 100):
                raise SloError(f"p={raw.strip()} must be a percentage above 0 and at most 100")
            value /= 100
        elif not (math.isfinite(value) and 0 < value <= 1e9):
            raise SloError(f"{key}={raw.strip()} must be milliseconds above 0")
        values[field_name] = value
    if not any(name in values for name in ("ttft_ms", "tpot_ms", "e2e_ms")):
        raise SloError("give at least one of ttft, tpot, e2e")
    return Slo(**values)


def _sglang_row(memory_gib: float, tp: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) SGLang picks for a GPU of ``memory_gib``."""
    for bound, chunk, small_tp, large_tp in SGLANG_BY_MEMORY:
        if memory_gib < bound:
            return chunk, small_tp if tp < 4 else large_tp
    chunk, small_tp, large_tp = SGLANG_LARGE
    return chunk, small_tp if tp < 4 else large_tp


def sglang_chunked_prefill(memory_gib: float) -> int:
    """SGLang's default ``chunked_prefill_size`` on one GPU of ``memory_gib`` GiB."""
    return _sglang_row(memory_gib, 1)[0]


def sglang_mem_fraction_static(
    memory_gib: float, *, tp: int = 1, pp: int = 1, chunked_prefill_size: int | None = None
) -> float:
    """SGLang's default ``mem_fraction_static`` (its KV pool share, with the weights) on a
    GPU of ``memory_gib`` GiB in a ``tp`` x ``pp`` instance (see
    :data:`SGLANG_DEFAULTS_SOURCE`; no speculative decoding, no DP attention)."""
    chunk, graph_bs = _sglang_row(memory_gib, tp)
    chunk = chunked_prefill_size or chunk
    memory_mib = memory_gib * 1024
    reserved_mib = 512 + max(chunk, 2048) * 1.5 + graph_bs * 2 + tp * pp / 8 * 1024
    if memory_gib > 60:
        reserved_mib = max(reserved_mib, 10 * 1024)
    return round((memory_mib - reserved_mib) / memory_mib, 3)


def sglang_max_running_requests(pool_tokens: int, context_len: int) -> int:
    """SGLang's ``max_running_requests`` when unset, from its pool and context length."""
    estimated = int(pool_tokens / max(1, context_len) * 512)
    estimated = min(max(estimated, SGLANG_RUNNING_FLOOR), SGLANG_RUNNING_CEILING)
    return max(1, min(estimated, pool_tokens // 2))


@dataclass(frozen=True, slots=True)
class EngineLimits:
    """An engine's scheduler limits for one GPU, and where they come from."""

    max_num_seqs: int
    max_num_batched_tokens: int
    source: str
    #: blocks for the whole output are reserved at admission (no preemption)
    reserve_output: bool = False


def engine_limits(
    engine: str,
    *,
    gpu_name: str,
    memory_gb: float,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    kv_tokens: int | None = None,
    context_len: int | None = None,
) -> EngineLimits:
    """The scheduler limits ``engine`` starts with on a GPU of ``memory_gb`` (one device),
    as its ``serve`` entry point picks them, with the user's values in their place.

    SGLang: the token budget is its chunked-prefill size for the GPU's memory (the
    catalog's GB read as GiB, as GPU memory is sized: an "80 GB" H100 has 79.6 GiB);
    its running cap comes from the instance's pool (``kv_tokens``) and the model's
    ``context_len`` (:func:`sglang_max_running_requests`; 2048 without them)."""
    if engine == "vllm":
        large = memory_gb * 1e9 / 2**30 >= VLLM_LARGE_GPU_GIB and "a100" not in gpu_name.lower()
        seqs, budget = (1024, 8192) if large else (256, 2048)
        source = VLLM_DEFAULTS_SOURCE
    elif engine == "sglang":
        budget = sglang_chunked_prefill(memory_gb)
        seqs = SGLANG_RUNNING_FLOOR
        if kv_tokens is not None and context_len is not None:
            seqs = sglang_max_running_requests(kv_tokens, context_len)
        source = SGLANG_DEFAULTS_SOURCE
    elif engine == "tensorrt-llm":
        seqs, budget, source = 2048, 8192, TRTLLM_DEFAULTS_SOURCE
    elif engine == "llama.cpp":
        seqs, budget, source = 4, 2048, LLAMA_CPP_DEFAULTS_SOURCE
    else:
        seqs, budget, source = 1, 8192, "transformers generate(): one request at a time"
    if max_num_batched_tokens is not None:
        budget = max_num_batched_tokens
        source += "; max_num_batched_tokens as given"
    if max_num_seqs is not None:
        seqs = max_num_seqs
        source += "; max_num_seqs as given"
    elif engine in ("vllm", "sglang"):
        # the simulator gives every running decode its token within the budget
        seqs = min(seqs, budget)
    return EngineLimits(seqs, budget, source, reserve_output=engine == "tensorrt-llm")


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """The client's traffic and the engine's limits for one deployment."""

    seq_in: int
    seq_out: int
    num_prompts: int = 1000
    rate: float = math.inf
    concurrency: int | None = None
    slo: Slo | None = None
    length_spread: float = 0.0
    #: how lengths are drawn (:class:`~gpudesk.speed.serving.Traffic`'s ``dataset``)
    dataset: Dataset = "random"
    prefix_hit: float = 0.0
    seed: int = 0
    #: requests per simulated rate in the highest-rate search (None: num_prompts)
    search_prompts: int | None = None


@dataclass(frozen=True, slots=True)
class LoadResult:
    """A deployment under load: the simulated benchmark and what it means."""

    layout: Layout
    limits: EngineLimits
    kv_blocks: int
    run: ServingRun
    #: the whole deployment (all copies)
    output_tokens_per_s: float
    requests_per_s: float
    goodput_rps: float | None = None
    slo_share_met: float | None = None
    max_rate_at_slo: float | None = None
    #: the rates tried for the highest rate and the share meeting the SLO at each
    rate_curve: tuple[tuple[float, float, float, float, float, float], ...] = ()

    def latency_dict(self) -> dict[str, dict[str, float]]:
        return {
            "ttft_ms": self.run.ttft_ms.as_dict(),
            "tpot_ms": self.run.tpot_ms.as_dict(),
            "itl_ms": self.run.itl_ms.as_dict(),
            "e2e_ms": self.run.e2e_ms.as_dict(),
        }


def kv_blocks_for(pool_bytes: float, costs: ModelCosts, *, seq_in: int, seq_out: int) -> int:
    """Blocks of :data:`DEFAULT_BLOCK_SIZE` tokens a pool of ``pool_bytes`` holds, at the
    KV bytes per token of a ``seq_in + seq_out`` sequence (sliding layers capped)."""
    length = seq_in + seq_out
    per_token = costs.kv_bytes(length) / length if length else 0.0
    if per_token <= 0:
        return 10**9
    return max(0, math.floor(pool_bytes / per_token / DEFAULT_BLOCK_SIZE))


StepSeconds = Callable[[StepShape], float]


class _Ranking:
    """What :func:`ranking` keeps while it is open: the step function of each instance
    (by its inputs) and the last :data:`RANKING_RUNS` runs (by scheduler, traffic and
    step function)."""

    def __init__(self, rate_tolerance: float) -> None:
        self.rate_tolerance = rate_tolerance
        self.steps: dict[tuple[object, ...], StepSeconds] = {}
        self.runs: OrderedDict[tuple[SchedulerConfig, Traffic, StepSeconds], ServingRun] = (
            OrderedDict()
        )


#: Runs kept while ranking: repeats come one after another (a run of 1,000 requests
#: holds ~100 kB of per-request figures)
RANKING_RUNS = 16
_ranking: ContextVar[_Ranking | None] = ContextVar("ranking", default=None)


@contextmanager
def ranking(*, rate_tolerance: float = RATE_TOLERANCE) -> Iterator[None]:
    """Within (one ranking of many GPUs), two exact savings: a simulation asked for again
    (same limits, traffic and step inputs: the ranking runs the chosen layout on all the
    requests, then again with the SLO) is not run again, and the highest-rate search's
    runs stop as soon as whether they meet the SLO is decided
    (:func:`~gpudesk.speed.serving.meets_target`), so its ``rate_curve`` lists only the
    runs that went to the end; and one that is not: the highest-rate search stops at a
    bracket ``rate_tolerance`` wide (:func:`max_rate_at_slo`). Scoped to one context (a
    worker thread has its own); an inner one changes nothing."""
    if _ranking.get() is not None:
        yield
        return
    token = _ranking.set(_Ranking(rate_tolerance))
    try:
        yield
    finally:
        _ranking.reset(token)


def _simulate(config: SchedulerConfig, traffic: Traffic, step: StepSeconds) -> ServingRun:
    """:func:`simulate`, or the same run again while ranking."""
    shared = _ranking.get()
    if shared is None:
        return simulate(config, traffic, step)
    key = (config, traffic, step)
    run = shared.runs.get(key)
    if run is None:
        run = simulate(config, traffic, step)
        shared.runs[key] = run
        while len(shared.runs) > RANKING_RUNS:
            shared.runs.popitem(last=False)
    else:
        shared.runs.move_to_end(key)
    return run


def instance_step(
    costs: ModelCosts, gpus: Gpus, eff: Efficiency, layout: Layout, *, hop_s: float = 0.0
) -> StepSeconds:
    """Seconds of one step of one instance: ``gpus`` is the tensor-parallel group; with
    pipeline stages each step passes through every stage in turn (``hop_s`` each).
    While ranking (:func:`ranking`), the same inputs give the same function."""
    shared = _ranking.get()
    if shared is None:
        return _instance_step(costs, gpus, eff, layout, hop_s)
    key = (costs, gpus, eff, layout, hop_s)
    step = shared.steps.get(key)
    if step is None:
        step = shared.steps[key] = _instance_step(costs, gpus, eff, layout, hop_s)
    return step


def _instance_step(
    costs: ModelCosts, gpus: Gpus, eff: Efficiency, layout: Layout, hop_s: float
) -> StepSeconds:
    hops = (layout.pp - 1) * hop_s
    one_pass = step_seconds_fn(costs, gpus, eff, expert_parallel=layout.ep)
    if not hops:
        return one_pass

    def seconds(shape: StepShape) -> float:
        return one_pass(shape) + hops

    return seconds


def _traffic(load: LoadSpec, layout: Layout, rate: float) -> Traffic:
    """One copy's share of the traffic: requests spread evenly over the copies."""
    copies = layout.dp * layout.pp
    return Traffic(
        num_prompts=max(1, math.ceil(load.num_prompts / copies)),
        seq_in=load.seq_in,
        seq_out=load.seq_out,
        rate=rate / copies,
        concurrency=None if load.concurrency is None else max(1, load.concurrency // copies),
        length_spread=load.length_spread,
        seed=load.seed,
        dataset=load.dataset,
    )


def serve_under_load(
    step: StepSeconds,
    layout: Layout,
    limits: EngineLimits,
    kv_blocks: int,
    load: LoadSpec,
    *,
    find_max_rate: bool = True,
) -> LoadResult:
    """Simulate ``load`` on the deployment; with an SLO, goodput and the highest rate.

    Copies (``dp``, and each pipeline stage's virtual engine) take equal shares of the
    requests, rate and concurrency, each with its own KV pool.

    Raises:
        SimulationError: a limit out of range or a request larger than the pool.
    """
    copies = layout.dp * layout.pp
    config = SchedulerConfig(
        # pipeline stages run one batch each: the engine's cap is shared by them
        max_num_seqs=max(1, limits.max_num_seqs // layout.pp),
        max_num_batched_tokens=limits.max_num_batched_tokens,
        kv_blocks=kv_blocks // layout.pp,
        prefix_hit=load.prefix_hit,
        reserve_output=limits.reserve_output,
    )
    run = _simulate(config, _traffic(load, layout, load.rate), step)
    result = LoadResult(
        layout=layout,
        limits=limits,
        kv_blocks=kv_blocks,
        run=run,
        output_tokens_per_s=run.output_tokens_per_s * copies,
        requests_per_s=run.requests_per_s * copies,
    )
    if load.slo is None:
        return result
    slo = load.slo
    share = run.share_meeting(ttft_ms=slo.ttft_ms, tpot_ms=slo.tpot_ms, e2e_ms=slo.e2e_ms)
    goodput = share * run.requests_per_s * copies
    result = replace(result, goodput_rps=goodput, slo_share_met=share)
    if not find_max_rate:
        return result
    search = load
    if load.search_prompts is not None:
        search = replace(load, num_prompts=min(load.num_prompts, load.search_prompts))
    # the run just made is the search's run at the requested rate when it has as many
    # requests: one rate the search need not simulate again
    known = ((load.rate, run),) if search == load and not math.isinf(load.rate) else ()
    best, curve = max_rate_at_slo(config, search, layout, step, known=known)
    return replace(result, max_rate_at_slo=best, rate_curve=curve)


CurvePoint = tuple[float, float, float, float, float, float]


def max_rate_at_slo(
    config: SchedulerConfig,
    load: LoadSpec,
    layout: Layout,
    step: StepSeconds,
    *,
    known: Sequence[tuple[float, ServingRun]] = (),
) -> tuple[float | None, tuple[CurvePoint, ...]]:
    """The highest Poisson request rate (whole deployment) at which at least the SLO's
    share of requests meets every bound, taking the share to fall as the rate rises.

    No rate above the saturated request rate (all sent at once) can be served: when that
    rate meets the SLO it is the answer. Otherwise the search steps down by
    :data:`RATE_BRACKET` from the lowest rate known to miss until a rate meets the SLO,
    then bisects that bracket in log space until it is at most :data:`RATE_TOLERANCE`
    wide (while :func:`ranking`, its ``rate_tolerance``), and answers its lower end;
    None when not even the saturated rate / :data:`RATE_SEARCH_SPAN` (requests that
    barely overlap) meets it.

    ``known``: runs of ``load`` already made at some rates (the requested rate's run),
    which bound the search without being simulated again: below a known rate that misses
    the SLO the search starts from the request rate that run served (a run that fell
    behind served less than it was sent), and the saturated run is needed only when the
    answer is above every rate a known run served (the saturated rate caps the answer).
    While :func:`ranking`, simulations asked for twice run once and the runs at the rates
    tried stop once their verdict is decided (and are not in the rates tried).

    Also the rates tried: (rate, share met, TTFT p50, TTFT p90, TPOT p50, TPOT p90).
    """
    assert load.slo is not None
    slo = load.slo
    copies = layout.dp * layout.pp
    tried: dict[float, CurvePoint] = {}
    target = ShareTarget(slo.ttft_ms, slo.tpot_ms, slo.e2e_ms, slo.share)
    ranked = _ranking.get()
    tolerance = RATE_TOLERANCE if ranked is None else ranked.rate_tolerance

    def meets(rate: float, run: ServingRun | None = None) -> bool:
        traffic = _traffic(load, layout, rate)
        if run is None and ranked is not None:
            return meets_target(config, traffic, step, target)
        if run is None:
            run = _simulate(config, traffic, step)
        share = run.share_meeting(ttft_ms=slo.ttft_ms, tpot_ms=slo.tpot_ms, e2e_ms=slo.e2e_ms)
        tried[rate] = (
            rate,
            share,
            run.ttft_ms.p50,
            run.ttft_ms.p90,
            run.tpot_ms.p50,
            run.tpot_ms.p90,
        )
        return share >= slo.share

    def curve() -> tuple[CurvePoint, ...]:
        return tuple(tried[rate] for rate in sorted(tried))

    def saturated_rate() -> float:
        run = _simulate(config, _traffic(load, layout, math.inf), step)
        return run.requests_per_s * copies

    low: float | None = None  # the highest rate known to meet the SLO
    high: float | None = None  # the lowest rate known to miss it
    #: the most requests/s a known run served: the saturated rate is at least about this
    served = max((run.requests_per_s * copies for _, run in known), default=0.0)
    for rate, run in known:
        if meets(rate, run):
            low = rate if low is None else max(low, rate)
        else:
            high = rate if high is None else min(high, rate)
    saturated: float | None = None
    if high is None:
        saturated = saturated_rate()
        if (low is not None and low >= saturated) or meets(saturated):
            return saturated, curve()
        high = saturated
    if low is None:
        floor = (saturated or served) / RATE_SEARCH_SPAN
        if not meets(floor):  # requests that barely overlap miss it too: no rate meets it
            return None, curve()
        rate = served if 0 < served < high else high * RATE_BRACKET
        while rate > floor and not meets(rate):
            high = rate
            rate *= RATE_BRACKET
        low = max(rate, floor)
    # (1 + 1e-9): a bracket of RATE_BRACKET is bisected RATE_SEARCH_STEPS times, not more
    while high / low > tolerance * (1 + 1e-9):
        middle = math.sqrt(low * high)
        if meets(middle):
            low = middle
        else:
            high = middle
    if saturated is None and low > served:
        low = min(low, saturated_rate())
    return low, curve()


__all__ = [
    "EngineLimits",
    "Layout",
    "LoadResult",
    "LoadSpec",
    "SimulationError",
    "Slo",
    "SloError",
    "engine_limits",
    "instance_step",
    "kv_blocks_for",
    "layouts_for",
    "max_rate_at_slo",
    "parse_slo",
    "ranking",
    "serve_under_load",
    "sglang_chunked_prefill",
    "sglang_max_running_requests",
    "sglang_mem_fraction_static",
]
