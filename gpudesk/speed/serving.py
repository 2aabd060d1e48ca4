"""A simulator of a serving engine's scheduler: requests arrive, steps run, latency comes out.

The engine is modelled step by step, as vLLM's V1 scheduler runs it (vllm/v1/core/sched/
scheduler.py, ``Scheduler.schedule``; the rules are summarised in docs/serving.md with
their sources):

- first come, first served: requests wait in arrival order; at most ``max_num_seqs`` run;
- every step has a budget of ``max_num_batched_tokens`` tokens shared by the running
  requests, in the order they were admitted: a decoding request takes one token, a request
  still reading its prompt takes the rest of its prompt or what is left of the budget
  (chunked prefill); waiting requests are admitted after them while budget, sequences and
  KV blocks last;
- KV blocks of ``block_size`` tokens: a request holds ``ceil(tokens / block_size)``; when
  a running request needs a block and none is free, the most recently admitted request is
  preempted: its blocks are freed and it goes back to the head of the queue to recompute
  its prompt and the tokens it had generated. TensorRT-LLM's default policy
  (GUARANTEED_NO_EVICT, ``SchedulerConfig.reserve_output``) instead admits a request only
  when blocks for its prompt and whole output are free and holds them from the start, so
  it never preempts;
- prefix caching: a stated share of each prompt (whole blocks) is found in the cache and
  not computed (none for random prompts);
- requests are sent as ``vllm bench serve`` sends them: at Poisson arrival times of
  ``rate`` per second (or all at once), at most ``concurrency`` in flight, a request's
  clock starting when it is sent.

The time of a step comes from the caller (:mod:`gpudesk.speed.step`), from what the step
does: prompt tokens and the context they attend to, decoding sequences and their context.

Outputs are the figures ``vllm bench serve`` prints: per request time to first token
(TTFT), time per output token after the first (TPOT), end-to-end latency (E2E); inter-token
latency (ITL) pooled over every gap between tokens; percentiles as numpy's default (linear)
interpolation; output tokens/s and requests/s over the whole run.

Everything is deterministic for a seed. The loop costs O(steps + requests): decoding
requests are kept as counts by block residue, not visited one by one.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from gpudesk.errors import GpuDeskError
from gpudesk.speed import sharegpt_lengths

#: vLLM's default KV block size on GPUs (CacheConfig.block_size, 16 tokens).
DEFAULT_BLOCK_SIZE = 16
#: Percentiles reported for every latency, as vLLM's ``--metric-percentiles`` lists them.
PERCENTILES = (50, 90, 99)
#: The most requests one simulation takes (keeps a ranking within its time).
MAX_PROMPTS = 100_000
#: The most steps one simulation runs: a guard against a step model that returns ~0.
MAX_STEPS = 5_000_000
#: How request lengths are drawn, by ``vllm bench serve``'s ``--dataset-name``.
Dataset = Literal["random", "sharegpt"]
DATASETS: tuple[str, ...] = get_args(Dataset)


class SimulationError(GpuDeskError, ValueError):
    """A simulation that cannot run as asked (the message says which value)."""


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """One engine instance's scheduler limits and KV pool."""

    max_num_seqs: int
    max_num_batched_tokens: int
    #: KV blocks of ``block_size`` tokens the instance's pool holds
    kv_blocks: int
    block_size: int = DEFAULT_BLOCK_SIZE
    #: a prompt chunk of one request in one step is at most this many tokens (0: no cap)
    long_prefill_token_threshold: int = 0
    #: share of each prompt found in the prefix cache (whole blocks), 0 to 1
    prefix_hit: float = 0.0
    #: admit a request only while blocks for its prompt and every output token are free,
    #: and hold them from the start: TensorRT-LLM's default capacity policy
    #: (GUARANTEED_NO_EVICT), which never preempts; False: vLLM's, which admits on the
    #: prompt's blocks and preempts when a decode finds none free
    reserve_output: bool = False

    def check(self) -> None:
        if self.max_num_seqs < 1:
            raise SimulationError(f"max_num_seqs {self.max_num_seqs} must be at least 1")
        if self.max_num_batched_tokens < self.max_num_seqs:
            # vLLM refuses this too (SchedulerConfig: max_num_batched_tokens must be at
            # least max_num_seqs), so every running decode gets its token each step.
            raise SimulationError(
                f"max_num_batched_tokens {self.max_num_batched_tokens:,} must be at least "
                f"max_num_seqs {self.max_num_seqs:,}"
            )
        if self.block_size < 1:
            raise SimulationError(f"block size {self.block_size} must be at least 1")
        if not 0 <= self.prefix_hit < 1:
            raise SimulationError(f"prefix hit share {self.prefix_hit} must be 0 to below 1")
        if self.long_prefill_token_threshold < 0:
            raise SimulationError("long_prefill_token_threshold must be 0 or more")


def _whole(value: object) -> bool:
    """Whether ``value`` is a whole number (an int, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Traffic:
    """What the client sends: ``num_prompts`` requests of ``seq_in`` prompt and
    ``seq_out`` output tokens, drawn as ``vllm bench serve``'s dataset ``dataset`` draws
    them: ``"random"``, each uniformly within ``±length_spread`` of them (its
    ``--random-range-ratio``; 0: all alike); ``"sharegpt"``, ShareGPT's heavy-tailed
    shape within the client's filters, averaging them
    (:mod:`gpudesk.speed.sharegpt_lengths`)."""

    num_prompts: int
    seq_in: int
    seq_out: int
    #: requests per second, Poisson arrivals; ``math.inf``: all sent at once
    rate: float = math.inf
    #: at most this many requests in flight (None: no cap)
    concurrency: int | None = None
    length_spread: float = 0.0
    seed: int = 0
    dataset: Dataset = "random"

    def check(self) -> None:
        if not (_whole(self.num_prompts) and 1 <= self.num_prompts <= MAX_PROMPTS):
            raise SimulationError(
                f"num_prompts {self.num_prompts} must be a whole number from 1 to {MAX_PROMPTS:,}"
            )
        if not (_whole(self.seq_in) and _whole(self.seq_out)):
            raise SimulationError(
                f"prompt and output lengths ({self.seq_in}, {self.seq_out}) must be whole "
                "numbers of tokens"
            )
        if self.seq_in < 1 or self.seq_out < 1:
            raise SimulationError("prompt and output lengths must be at least 1 token")
        if not (self.rate > 0 and not math.isnan(self.rate)):
            raise SimulationError(f"request rate {self.rate} must be above 0 (or inf)")
        if self.concurrency is not None and self.concurrency < 1:
            raise SimulationError(f"concurrency {self.concurrency} must be at least 1")
        if not 0 <= self.length_spread < 1:
            raise SimulationError(f"length spread {self.length_spread} must be 0 to below 1")
        if self.dataset not in DATASETS:
            raise SimulationError(
                f"dataset {self.dataset!r} is not one of {', '.join(map(repr, DATASETS))}"
            )
        if self.dataset == "sharegpt":
            self._check_sharegpt()

    def _check_sharegpt(self) -> None:
        if self.length_spread:
            raise SimulationError(
                "length spread applies to the random dataset; ShareGPT lengths have their "
                "own spread"
            )
        for name, mean, most in (
            ("prompt", self.seq_in, sharegpt_lengths.MAX_MEAN_PROMPT_TOKENS),
            ("output", self.seq_out, sharegpt_lengths.MAX_MEAN_OUTPUT_TOKENS),
        ):
            if not sharegpt_lengths.MIN_MEAN_TOKENS <= mean <= most:
                raise SimulationError(
                    f"ShareGPT {name}s averaging {mean:,} tokens cannot be drawn: within "
                    f"vLLM's filter (each {sharegpt_lengths.MIN_TOKENS} to "
                    f"{sharegpt_lengths.MAX_PROMPT_TOKENS:,} prompt tokens, prompt + output "
                    f"at most {sharegpt_lengths.MAX_TOTAL_TOKENS:,}) the mean must be "
                    f"{sharegpt_lengths.MIN_MEAN_TOKENS} to {most:,}"
                )


@dataclass(frozen=True, slots=True)
class StepShape:
    """What one engine step computes."""

    #: prompt tokens computed in the step (all chunks together)
    prefill_tokens: int
    #: sum over the chunks of tokens x (context before the chunk + half the chunk): the
    #: (causal) attention work of the prompt tokens, in token-pairs
    prefill_pairs: float
    #: prompt chunks (requests reading their prompt) in the step
    prefill_chunks: int
    #: sequences decoding one token each
    decodes: int
    #: their context lengths, summed (the KV cache the step reads)
    decode_context: float


StepCost = Callable[[StepShape], float]


@dataclass(frozen=True, slots=True)
class Percentiles:
    """p50, p90, p99 and the mean of one latency, in milliseconds."""

    p50: float
    p90: float
    p99: float
    mean: float

    def as_dict(self) -> dict[str, float]:
        return {"p50": self.p50, "p90": self.p90, "p99": self.p99, "mean": self.mean}


@dataclass(frozen=True, slots=True)
class ServingRun:
    """What the simulated benchmark reports."""

    requests: int
    duration_s: float
    output_tokens: int
    output_tokens_per_s: float
    requests_per_s: float
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    itl_ms: Percentiles
    e2e_ms: Percentiles
    steps: int
    preemptions: int
    #: the most requests running at once, and the mean over steps
    peak_running: int
    mean_running: float
    #: per request (in the order sent), for goodput: TTFT, TPOT and E2E in ms
    per_request_ms: tuple[tuple[float, float, float], ...] = field(repr=False)

    @property
    def keeps_up(self) -> bool:
        """Whether the requests were served as fast as they came: the queue did not grow,
        so the last fifth of the requests waited for their first token about as long as
        the first fifth (at most twice as long, or half a second more)."""
        fifth = max(1, len(self.per_request_ms) // 5)
        first = [ttft for ttft, _, _ in self.per_request_ms[:fifth]]
        last = [ttft for ttft, _, _ in self.per_request_ms[-fifth:]]
        early, late = sum(first) / len(first), sum(last) / len(last)
        return late <= max(2 * early, early + 500.0)

    def share_meeting(
        self, *, ttft_ms: float | None, tpot_ms: float | None, e2e_ms: float | None
    ) -> float:
        """Share of requests meeting every bound given (vLLM's goodput rule)."""
        met = 0
        for ttft, tpot, e2e in self.per_request_ms:
            if ttft_ms is not None and ttft > ttft_ms:
                continue
            if tpot_ms is not None and tpot > tpot_ms:
                continue
            if e2e_ms is not None and e2e > e2e_ms:
                continue
            met += 1
        return met / len(self.per_request_ms) if self.per_request_ms else 0.0


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """numpy's default (linear) percentile of already sorted values."""
    if not sorted_values:
        return math.nan
    position = (len(sorted_values) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def weighted_percentile(pairs: Sequence[tuple[float, int]], q: float) -> float:
    """:func:`percentile` of the list holding each value ``count`` times, without
    building it: ``pairs`` are (value, count), sorted by value."""
    total = sum(count for _, count in pairs)
    if total == 0:
        return math.nan
    position = (total - 1) * q / 100
    low_index = math.floor(position)
    fraction = position - low_index

    def at(index: int) -> float:
        seen = 0
        for value, count in pairs:
            seen += count
            if index < seen:
                return value
        return pairs[-1][0]

    low = at(low_index)
    if fraction == 0:
        return low
    return low + (at(min(low_index + 1, total - 1)) - low) * fraction


def _summary(values: Sequence[float]) -> Percentiles:
    ordered = sorted(values)
    p50, p90, p99 = (percentile(ordered, q) for q in PERCENTILES)
    mean = sum(ordered) / len(ordered) if ordered else math.nan
    return Percentiles(p50, p90, p99, mean)


def _weighted_summary(pairs: dict[float, int]) -> Percentiles:
    ordered = sorted(pairs.items())
    total = sum(pairs.values())
    p50, p90, p99 = (weighted_percentile(ordered, q) for q in PERCENTILES)
    mean = sum(value * count for value, count in ordered) / total if total else math.nan
    return Percentiles(p50, p90, p99, mean)


def arrival_times(traffic: Traffic) -> list[float]:
    """When each request is ready to send: Poisson at ``rate`` (exponential gaps from a
    seeded generator, the first request at 0 as vLLM's generator yields it), or all at 0."""
    if math.isinf(traffic.rate):
        return [0.0] * traffic.num_prompts
    draw = random.Random(traffic.seed)
    times = [0.0]
    for _ in range(traffic.num_prompts - 1):
        times.append(times[-1] + draw.expovariate(traffic.rate))
    return times


def request_lengths(traffic: Traffic) -> list[tuple[int, int]]:
    """(prompt, output) tokens of each request."""
    if traffic.dataset == "sharegpt":
        return sharegpt_lengths.draw_lengths(
            traffic.seq_in, traffic.seq_out, traffic.num_prompts, random.Random(traffic.seed + 1)
        )
    if traffic.length_spread == 0:
        return [(traffic.seq_in, traffic.seq_out)] * traffic.num_prompts
    draw = random.Random(traffic.seed + 1)
    spread = traffic.length_spread

    def one(length: int) -> int:
        low = max(1, math.floor(length * (1 - spread)))
        high = max(low, math.ceil(length * (1 + spread)))
        return draw.randint(low, high)

    return [(one(traffic.seq_in), one(traffic.seq_out)) for _ in range(traffic.num_prompts)]


class _Request:
    __slots__ = (
        "base",
        "computed",
        "finish",
        "first_token",
        "generated",
        "index",
        "last_token",
        "output",
        "prompt",
        "running",
        "sent",
        "version",
    )

    def __init__(self, index: int, prompt: int, output: int) -> None:
        self.index = index
        self.prompt = prompt
        self.output = output
        #: tokens whose KV is in the cache
        self.computed = 0
        self.generated = 0
        self.sent = 0.0
        self.first_token = math.nan
        self.last_token = math.nan
        self.finish = math.nan
        #: while decoding: the KV tokens before step s are ``base + s``
        self.base = 0
        #: bumped whenever the request stops decoding: its finish entry goes stale
        self.version = 0
        self.running = False

    @property
    def to_compute(self) -> int:
        """Tokens whose KV must be computed before its next token: the prompt, and after
        a preemption every token it had generated too (vLLM recomputes them)."""
        return self.prompt + self.generated


def _blocks(tokens: int, block_size: int) -> int:
    return -(-tokens // block_size)


class _Engine:
    """The scheduler's state between steps (see :func:`simulate`)."""

    def __init__(self, config: SchedulerConfig, requests: list[_Request]) -> None:
        self.config = config
        self.requests = requests
        self.bs = config.block_size
        self.free_blocks = config.kv_blocks
        self.waiting: deque[_Request] = deque()
        #: admission order, for choosing whom to preempt; finished ones are skipped lazily
        self.order: list[_Request] = []
        #: requests reading their prompt: always the most recently admitted
        self.prefilling: list[_Request] = []
        self.decoding: set[_Request] = set()
        self.decoding_base_sum = 0
        #: decoding requests by ``base`` modulo the block size: who needs a block when
        self.residue = [0] * config.block_size
        self.finishing: list[tuple[int, int, int]] = []  # (step, version, index)
        self.step = 0
        self.preemptions = 0
        #: whether this step's decode blocks are taken already (a decoder preempted after
        #: that gives its new block back too)
        self.decode_allocated = False
        #: set by a jump over pure-decode steps: the time after it and running x steps
        self.now = 0.0
        self.jumped_running = 0
        #: the last single step's duration (a cheap guess of the next one's)
        self.last_duration = 0.0

    @property
    def running(self) -> int:
        return len(self.decoding) + len(self.prefilling)

    def decode_blocks_needed(self) -> int:
        """Decoders whose next token starts a new block this step (none when every
        request's blocks were reserved at admission)."""
        if self.config.reserve_output:
            return 0
        return self.residue[(-self.step) % self.bs]

    def blocks_to_admit(self, request: _Request, tokens: int) -> int:
        """Blocks admitting ``request`` with ``tokens`` of its prompt in takes: those
        tokens', or under a reserving policy its whole life's."""
        if self.config.reserve_output:
            return _blocks(request.prompt + request.output, self.bs)
        return _blocks(tokens, self.bs)

    def blocks_held(self, request: _Request, kv_tokens: int) -> int:
        """Blocks a finishing ``request`` gives back."""
        if self.config.reserve_output:
            return _blocks(request.prompt + request.output, self.bs)
        return _blocks(kv_tokens, self.bs)

    def start_decoding(self, request: _Request) -> None:
        # KV tokens before the next step (self.step + 1) are ``computed``.
        request.base = request.computed - (self.step + 1)
        self.decoding.add(request)
        self.decoding_base_sum += request.base
        self.residue[request.base % self.bs] += 1
        request.version += 1
        finish_step = self.step + request.output - request.generated
        heapq.heappush(self.finishing, (finish_step, request.version, request.index))

    def stop_decoding(self, request: _Request, kv_tokens: int) -> None:
        self.decoding.discard(request)
        self.decoding_base_sum -= request.base
        self.residue[request.base % self.bs] -= 1
        request.version += 1
        request.computed = kv_tokens
        # every token but the last sampled one has its KV in the cache
        request.generated = kv_tokens - request.prompt + 1

    def preempt_last(self, now: float) -> _Request:
        """Free the most recently admitted request's blocks and queue it first again."""
        while not self.order[-1].running:
            self.order.pop()
        victim = self.order.pop()
        victim.running = False
        if victim in self.decoding:
            # before this step's token its KV holds base + step tokens
            kv_tokens = victim.base + self.step
            held = kv_tokens + 1 if self.decode_allocated else kv_tokens
            self.stop_decoding(victim, kv_tokens)
            self.free_blocks += _blocks(held, self.bs)
            # it was decoding in the step before this one: its last token came then
            victim.last_token = now
        else:
            self.prefilling.remove(victim)
            self.free_blocks += _blocks(victim.computed, self.bs)
        victim.computed = 0
        self.waiting.appendleft(victim)
        self.preemptions += 1
        return victim

    def admit(self, request: _Request) -> None:
        request.running = True
        self.order.append(request)
        self.prefilling.append(request)

    def finish(self, request: _Request) -> None:
        request.running = False


#: A jump over pure-decode steps interpolates their durations in this many groups
JUMP_GROUPS = 2
#: the fewest steps worth a jump: a jump costs JUMP_GROUPS + 1 step times and the block
#: arithmetic, so a shorter one is no cheaper than stepping
MIN_JUMP_STEPS = 2 * JUMP_GROUPS


def _new_blocks(engine: _Engine, steps: int) -> int:
    """KV blocks the decoders need over the next ``steps`` steps.

    A decoder of residue r needs a block at each step s with (r + s) % bs == 0: every
    decoder one per whole ``bs`` steps, and over the rest the decoders of the residues
    those steps pick (the simulator's hottest arithmetic, so no loop over all residues).
    """
    bs, start, residue = engine.bs, engine.step, engine.residue
    cycles, rest = divmod(steps, bs)
    total = cycles * len(engine.decoding)
    for step in range(start + 1, start + rest + 1):
        total += residue[-step % bs]
    return total


def _jump_decodes(
    engine: _Engine,
    step_cost: StepCost,
    arrivals: Sequence[float],
    next_send: int,
    can_send: bool,
    now: float,
    itl_counts: dict[float, int],
) -> bool:
    """Run many steps at once while nothing but decoding happens: no prompt to compute,
    no request that could be admitted, no finish and no arrival due, and blocks enough
    for every decoder. Their shapes differ only in the context, which grows by the
    number of decoders a step, so their durations are interpolated between the first
    and the last (:data:`JUMP_GROUPS` groups). False when a single step must run."""
    decodes = len(engine.decoding)
    if not decodes or engine.prefilling:
        return False
    if engine.waiting and decodes < engine.config.max_num_seqs:
        head = engine.waiting[0]
        budget = engine.config.max_num_batched_tokens - decodes
        first_chunk = min(head.to_compute, max(budget, 0))
        if budget > 0 and engine.blocks_to_admit(head, first_chunk) <= engine.free_blocks:
            return False  # it would be admitted: step by step
        # it waits for blocks, which only a finish gives back (the jump stops before one)
    while engine.finishing:
        _finish_step, version, index = engine.finishing[0]
        request = engine.requests[index]
        if version == request.version and request in engine.decoding:
            break
        heapq.heappop(engine.finishing)
    if not engine.finishing:
        return False
    steps = engine.finishing[0][0] - engine.step - 1
    if steps < MIN_JUMP_STEPS:
        return False

    arriving = can_send and next_send < len(arrivals) and decodes < engine.config.max_num_seqs
    # cheap first: the last step's length says whether an arrival is too close
    if (
        arriving
        and engine.last_duration > 0
        and (arrivals[next_send] - now) / engine.last_duration < MIN_JUMP_STEPS
    ):
        return False
    reserved = engine.config.reserve_output
    cycles_free = engine.free_blocks // decodes

    def shape_at(offset: int) -> StepShape:
        step = engine.step + 1 + offset
        return StepShape(0, 0.0, 0, decodes, engine.decoding_base_sum + decodes * step)

    # cheap first too: a nearly full pool (fewer free blocks than decoders) stops every
    # jump whose decoders need more blocks than are free (a need that only grows with the
    # steps), whatever the step time says
    if (
        not reserved
        and cycles_free * engine.bs < MIN_JUMP_STEPS
        and _new_blocks(engine, MIN_JUMP_STEPS) > engine.free_blocks
    ):
        return False
    if arriving:
        # the first step's length bounds the jump before the next arrival
        first = step_cost(shape_at(0))
        if not first > 0 or math.isinf(first):
            return False
        steps = min(steps, math.floor((arrivals[next_send] - now) / first))
    if steps < MIN_JUMP_STEPS:
        return False
    need = 0 if reserved else _new_blocks(engine, steps)
    if need > engine.free_blocks:
        steps = min(steps, cycles_free * engine.bs)
        if steps < MIN_JUMP_STEPS:
            return False
        need = _new_blocks(engine, steps)
    group = steps // JUMP_GROUPS
    middles: list[tuple[int, float]] = []
    done = 0
    for index in range(JUMP_GROUPS):
        size = group if index < JUMP_GROUPS - 1 else steps - done
        middle = step_cost(shape_at(done + size // 2))
        if not middle > 0 or math.isinf(middle):
            return False  # a single step raises it
        middles.append((size, middle))
        done += size
    elapsed = 0.0
    for size, middle in middles:
        elapsed += size * middle
        itl_counts[middle] = itl_counts.get(middle, 0) + size * decodes
    engine.free_blocks -= need
    engine.step += steps
    engine.now = now + elapsed
    engine.jumped_running = steps * engine.running
    return True


@dataclass(frozen=True, slots=True)
class ShareTarget:
    """Bounds in ms (None: no bound) and the share of requests that must meet every one
    (vLLM's goodput rule, as :meth:`ServingRun.share_meeting` counts it)."""

    ttft_ms: float | None
    tpot_ms: float | None
    e2e_ms: float | None
    share: float


class _Decided(GpuDeskError):
    """Raised inside a run once whether it meets its :class:`ShareTarget` is decided
    (control flow, caught by the run: never reaches a user)."""

    def __init__(self, met: bool) -> None:
        super().__init__(met)
        self.met = met


class _Judge:
    """Counts the requests that met or missed a target as their figures become final: the
    time to first token at the first token (a preemption later does not move it), the
    time per output token and end-to-end latency at the finish, each computed as
    :func:`_report` computes it. Once the met ones reach the share, or the missed ones
    leave too few to reach it, no later request can change the verdict."""

    __slots__ = ("met", "missed", "missed_first", "requests", "target")

    def __init__(self, target: ShareTarget, requests: int) -> None:
        self.target = target
        self.requests = requests
        self.met = 0
        self.missed = 0
        #: requests already counted as missed at their first token
        self.missed_first: set[int] = set()

    def first_token(self, request: _Request) -> None:
        bound = self.target.ttft_ms
        if bound is not None and (request.first_token - request.sent) * 1e3 > bound:
            self.missed_first.add(request.index)
            self._missed()

    def finished(self, request: _Request) -> None:
        if request.index in self.missed_first:
            return
        ttft = (request.first_token - request.sent) * 1e3
        e2e = (request.finish - request.sent) * 1e3
        tpot = (e2e - ttft) / (request.output - 1) if request.output > 1 else 0.0
        target = self.target
        if (
            (target.ttft_ms is not None and ttft > target.ttft_ms)
            or (target.tpot_ms is not None and tpot > target.tpot_ms)
            or (target.e2e_ms is not None and e2e > target.e2e_ms)
        ):
            self._missed()
            return
        self.met += 1
        # the same division share_meeting makes at the end: met only grows
        if self.met / self.requests >= target.share:
            raise _Decided(True)

    def _missed(self) -> None:
        self.missed += 1
        # at most requests - missed can meet the target by the end
        if (self.requests - self.missed) / self.requests < self.target.share:
            raise _Decided(False)


def meets_target(
    config: SchedulerConfig, traffic: Traffic, step_cost: StepCost, target: ShareTarget
) -> bool:
    """Whether at least ``target.share`` of the requests of :func:`simulate` meet every
    bound of ``target`` (the full run's verdict), the run stopped as soon as that is
    decided: at the latest by the last request's figures, so it builds no report.

    Raises:
        SimulationError: as :func:`simulate`.
    """
    try:
        _simulate(config, traffic, step_cost, _Judge(target, traffic.num_prompts))
    except _Decided as decided:
        return decided.met
    raise AssertionError("every request was judged, so the verdict was decided")  # pragma: no cover


def simulate(config: SchedulerConfig, traffic: Traffic, step_cost: StepCost) -> ServingRun:
    """Run ``traffic`` through one engine instance whose steps take ``step_cost``.

    Raises:
        SimulationError: a limit out of range, or a request that can never run (it
            needs more KV blocks than the pool has).
    """
    return _simulate(config, traffic, step_cost, None)


def _simulate(
    config: SchedulerConfig, traffic: Traffic, step_cost: StepCost, judge: _Judge | None
) -> ServingRun:
    config.check()
    traffic.check()
    bs = config.block_size
    lengths = request_lengths(traffic)
    arrivals = arrival_times(traffic)
    longest = max(prompt + output for prompt, output in lengths)
    if _blocks(longest, bs) > config.kv_blocks:
        raise SimulationError(
            f"one request of {longest:,} tokens needs {_blocks(longest, bs):,} KV blocks of "
            f"{bs} tokens; the pool has {config.kv_blocks:,}"
        )
    requests = [_Request(i, p, o) for i, (p, o) in enumerate(lengths)]
    engine = _Engine(config, requests)
    cap = traffic.concurrency or traffic.num_prompts
    threshold = config.long_prefill_token_threshold or config.max_num_batched_tokens
    hit_tokens = [
        min(math.floor(request.prompt * config.prefix_hit / bs) * bs, request.prompt - 1)
        for request in requests
    ]
    next_send = 0
    in_flight = 0
    below_cap_since = 0.0  # in_flight has been under the cap since then
    done = 0
    now = 0.0
    peak_running = 0
    running_sum = 0
    itl_counts: dict[float, int] = {}
    odd_gaps: list[float] = []

    def retire(request: _Request) -> None:
        nonlocal done, in_flight, below_cap_since
        request.finish = now
        engine.finish(request)
        done += 1
        if in_flight == cap:
            below_cap_since = now
        in_flight -= 1
        if judge is not None:
            judge.finished(request)

    while done < traffic.num_prompts:
        while next_send < traffic.num_prompts and in_flight < cap and arrivals[next_send] <= now:
            request = requests[next_send]
            request.sent = max(arrivals[next_send], below_cap_since)
            engine.waiting.append(request)
            next_send += 1
            in_flight += 1
        if not engine.decoding and not engine.prefilling and not engine.waiting:
            now = max(now, arrivals[next_send])
            continue
        # (only pure-decode steps can be jumped: the cheap half of its test inline)
        if (
            engine.decoding
            and not engine.prefilling
            and _jump_decodes(
                engine, step_cost, arrivals, next_send, in_flight < cap, now, itl_counts
            )
        ):
            now = engine.now
            running_sum += engine.jumped_running
            continue
        engine.step += 1
        engine.decode_allocated = False
        if engine.step > MAX_STEPS:
            raise SimulationError(f"the simulation ran past {MAX_STEPS:,} steps")
        budget = config.max_num_batched_tokens
        preempted = False
        need = engine.decode_blocks_needed()
        while need > engine.free_blocks:
            engine.preempt_last(now)
            preempted = True
            need = engine.decode_blocks_needed()
        engine.free_blocks -= need
        engine.decode_allocated = True
        budget -= len(engine.decoding)
        chunks: list[tuple[_Request, int]] = []
        for request in list(engine.prefilling) if engine.prefilling else ():
            if not request.running:
                continue
            chunk = min(request.to_compute - request.computed, budget, threshold)
            if chunk <= 0:
                break
            extra = _blocks(request.computed + chunk, bs) - _blocks(request.computed, bs)
            if config.reserve_output:
                extra = 0  # held since admission
            while extra > engine.free_blocks and request.running:
                engine.preempt_last(now)
                preempted = True
            if not request.running:
                break
            engine.free_blocks -= extra
            budget -= chunk
            chunks.append((request, chunk))
        if not preempted:
            while engine.waiting and engine.running < config.max_num_seqs and budget > 0:
                request = engine.waiting[0]
                fresh = request.generated == 0 and request.computed == 0
                start = hit_tokens[request.index] if fresh else 0
                chunk = min(request.to_compute - start, budget, threshold)
                blocks = engine.blocks_to_admit(request, start + chunk)
                if blocks > engine.free_blocks:
                    break
                engine.waiting.popleft()
                request.computed = start
                engine.free_blocks -= blocks
                engine.admit(request)
                budget -= chunk
                chunks.append((request, chunk))
        decodes = len(engine.decoding)
        running_now = decodes + len(engine.prefilling)
        if running_now > peak_running:
            peak_running = running_now
        running_sum += running_now
        if chunks:
            shape = StepShape(
                sum(chunk for _, chunk in chunks),
                sum(chunk * (request.computed + chunk / 2) for request, chunk in chunks),
                len(chunks),
                decodes,
                engine.decoding_base_sum + decodes * engine.step,
            )
        else:
            shape = StepShape(0, 0.0, 0, decodes, engine.decoding_base_sum + decodes * engine.step)
        duration = step_cost(shape)
        if not duration > 0 or math.isinf(duration):
            raise SimulationError(f"a step ({shape}) took {duration} s")
        now += duration
        engine.last_duration = duration
        if decodes:
            itl_counts[duration] = itl_counts.get(duration, 0) + decodes
        for request, chunk in chunks:
            request.computed += chunk
            if request.computed < request.to_compute:
                continue
            # The prompt (or the tokens recomputed after a preemption) is in: a token.
            if request.generated == 0:
                request.first_token = now
                if judge is not None:
                    judge.first_token(request)
            else:
                odd_gaps.append(now - request.last_token)
            request.generated += 1
            request.last_token = now
            engine.prefilling.remove(request)
            if request.generated >= request.output:
                engine.free_blocks += engine.blocks_held(request, request.computed)
                retire(request)
                continue
            engine.start_decoding(request)
        while engine.finishing and engine.finishing[0][0] <= engine.step:
            _, version, index = heapq.heappop(engine.finishing)
            request = requests[index]
            if version != request.version or request not in engine.decoding:
                continue
            kv_tokens = request.base + engine.step + 1
            engine.stop_decoding(request, kv_tokens)
            engine.free_blocks += engine.blocks_held(request, kv_tokens)
            request.generated = request.output
            request.last_token = now
            retire(request)
    if engine.free_blocks != config.kv_blocks:  # every block is given back at the end
        raise SimulationError(
            f"internal: {config.kv_blocks - engine.free_blocks} KV blocks not given back"
        )
    return _report(
        requests,
        now,
        engine.step,
        engine.preemptions,
        peak_running,
        running_sum,
        itl_counts,
        odd_gaps,
    )


def _report(
    requests: Sequence[_Request],
    end: float,
    steps: int,
    preemptions: int,
    peak_running: int,
    running_sum: int,
    itl_counts: dict[float, int],
    odd_gaps: Sequence[float],
) -> ServingRun:
    start = min(request.sent for request in requests)
    duration = max(end - start, 1e-12)
    ttft = [(request.first_token - request.sent) * 1e3 for request in requests]
    e2e = [(request.finish - request.sent) * 1e3 for request in requests]
    tpot = [
        (finish - first) / (request.output - 1)
        for request, first, finish in zip(requests, ttft, e2e, strict=True)
        if request.output > 1
    ]
    itl = {value * 1e3: count for value, count in itl_counts.items()}
    for gap in odd_gaps:
        itl[gap * 1e3] = itl.get(gap * 1e3, 0) + 1
    output_tokens = sum(request.output for request in requests)
    per_request = tuple(
        (first, (finish - first) / (request.output - 1) if request.output > 1 else 0.0, finish)
        for request, first, finish in zip(requests, ttft, e2e, strict=True)
    )
    return ServingRun(
        requests=len(requests),
        duration_s=duration,
        output_tokens=output_tokens,
        output_tokens_per_s=output_tokens / duration,
        requests_per_s=len(requests) / duration,
        ttft_ms=_summary(ttft),
        tpot_ms=_summary(tpot) if tpot else Percentiles(0.0, 0.0, 0.0, 0.0),
        itl_ms=_weighted_summary(itl) if itl else Percentiles(0.0, 0.0, 0.0, 0.0),
        e2e_ms=_summary(e2e),
        steps=steps,
        preemptions=preemptions,
        peak_running=peak_running,
        mean_running=running_sum / steps if steps else 0.0,
        per_request_ms=per_request,
    )
