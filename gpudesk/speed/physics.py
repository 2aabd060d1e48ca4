"""The arithmetic of LLM speed: bytes and FLOPs per token, and the time they take.

Everything here is a plain function of numbers, so the estimator and the fit share one
formula for each workload:

- **decode** (one step of ``batch`` sequences at ``context`` tokens of KV cache): the step
  reads the weights a token streams (:func:`gpudesk.workload.quant.weight_bytes`) plus
  each sequence's KV cache, and computes 2 x active matmul parameters + attention FLOPs
  per token. Time = max(bytes / effective bandwidth, FLOPs / effective compute) + a fixed
  cost per layer (kernel launches, synchronisation), + a hop per extra GPU when the
  engine splits layers across GPUs (llama.cpp) instead of tensors (vLLM, TensorRT-LLM),
  or, when it splits tensors, two all-reduces per layer of the tokens in flight (Megatron
  tensor parallelism) over the GPUs' links.
- **prefill**: 2 x active parameters x prompt tokens + causal attention FLOPs, at a
  fraction of the dense tensor peak, + the fixed per-layer cost of one forward pass.
- **serve**: continuous batching of ``concurrency`` sequences, as many as the KV pool
  beside the weights holds: every request's prefill plus its decode steps.
- **train**: 6 x N per token (8 x N with full activation recomputation), plus attention,
  over GPUs x dense peak x MFU (Kaplan et al. 2020; Korthikanti et al. 2022); N counts
  the parameters a token is computed with (a mixture of experts' active experts, no
  input-embedding table).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from importlib import resources

# At run time: pydantic models holding ModelCosts (SpeedWorkload) resolve its fields.
from gpudesk.workload.architecture import ModelShape

#: Pope et al., 'Efficiently Scaling Transformer Inference', 2022 (arXiv:2211.05102):
#: decode reads every weight once per step; attention reads the whole KV cache.
DECODE_SOURCE = (
    "Pope et al., 'Efficiently Scaling Transformer Inference', 2022, arXiv:2211.05102 "
    "(a decode step reads the weights once and each sequence's KV cache)"
)
TRAIN_SOURCE = (
    "Kaplan et al. 2020 (arXiv:2001.08361): 6 × N FLOPs per training token; Korthikanti et "
    "al. 2022 (arXiv:2205.05198): full recomputation adds a forward pass (8 × N); attention "
    "12 × layers × hidden × sequence per token (MosaicML llm-foundry's MFU formula)"
)


@dataclass(frozen=True, slots=True)
class ModelCosts:
    """What one model costs per token, independent of the GPU.

    Built by :func:`gpudesk.speed.estimate.model_costs` from a shape and a
    weight format; training-only rows of the measurement file give the first fields only.
    """

    layers: int
    hidden: int
    #: parameters in matrix multiplies one token uses (no input-embedding lookup)
    matmul_params_active: float
    #: every parameter (training counts them all: 6 x N)
    params_total: float
    #: attention width: query heads x head dim (attention FLOPs scale with it: 4 x width
    #: per query-key pair, QK and PV)
    attention_width: int = 0
    #: the width a decoded token attends with, when it differs (MLA with the projections
    #: absorbed: every head works in the latent space); 0: ``attention_width``
    decode_attention_width: int = 0
    #: layers attending to the whole context, and sliding-window layers with their window
    full_layers: int = 0
    sliding_layers: int = 0
    sliding_window: int | None = None
    #: bytes of KV cache per token of context, summed over layers (at the KV format)
    kv_bytes_per_token: float = 0.0
    #: weights one decoded token streams, and every weight in memory
    streamed_bytes: float = 0.0
    in_memory_bytes: float = 0.0
    input_embedding_bytes: float = 0.0
    #: mixture of experts: experts per layer and active per token (None: dense)
    experts: int | None = None
    active_experts: int | None = None
    #: every tensor-parallel GPU holds and reads every token's KV cache (multi-head latent
    #: attention: one latent per token, which tensor parallelism cannot split; vLLM keeps
    #: it as one KV head per GPU, and Modular's MAX docs say TP "will cause the KV-cache to
    #: be duplicated across all devices")
    kv_replicated: bool = False
    #: the shape the costs came from: ``fit``'s memory model checks what holds it
    shape: ModelShape | None = None

    def kv_bytes(self, context: float) -> float:
        """KV cache bytes of one sequence holding ``context`` tokens (sliding layers capped)."""
        if self.layers <= 0 or context <= 0:
            return 0.0
        per_layer = self.kv_bytes_per_token / self.layers
        window = self.sliding_window if self.sliding_window is not None else context
        return per_layer * (self.full_layers * context + self.sliding_layers * min(context, window))

    def weights_read(self, batch: int) -> float:
        """Weight bytes one decode step of ``batch`` sequences reads.

        Dense models read the streamed bytes whatever the batch. A mixture of experts
        reads the experts any of the batch's tokens picked: with ``k`` of ``E`` chosen at
        random per token, a routed expert is missed by all ``batch`` tokens with
        probability (1 - k/E)^batch.
        """
        if self.experts is None or self.active_experts is None or batch <= 1:
            return self.streamed_bytes
        share = self.active_experts / self.experts
        unread = max(0.0, self.in_memory_bytes - self.input_embedding_bytes - self.streamed_bytes)
        routed_total = unread / (1 - share) if share < 1 else 0.0
        touched = 1 - (1 - share) ** batch
        return self.streamed_bytes - share * routed_total + touched * routed_total

    def attention_flops_decode(self, context: float) -> float:
        """FLOPs of one token's attention over ``context`` cached tokens (QK and PV)."""
        window = self.sliding_window if self.sliding_window is not None else context
        attended = self.full_layers * context + self.sliding_layers * min(context, window)
        return 4.0 * (self.decode_attention_width or self.attention_width) * attended

    def attention_flops_prefill(self, tokens: float) -> float:
        """Causal attention FLOPs of a prompt of ``tokens`` tokens (QK and PV, half masked)."""
        window = self.sliding_window if self.sliding_window is not None else tokens
        full = self.full_layers * tokens * tokens / 2
        sliding = self.sliding_layers * tokens * min(tokens, window) / 2
        return 4.0 * self.attention_width * (full + sliding)

    def decode_flops(self, context: float) -> float:
        return 2.0 * self.matmul_params_active + self.attention_flops_decode(context)

    def prefill_flops(self, tokens: float) -> float:
        return 2.0 * self.matmul_params_active * tokens + self.attention_flops_prefill(tokens)


#: Tensor parallelism (Shoeybi et al., 'Megatron-LM', 2019, arXiv:1909.08053): each layer's
#: attention and MLP end in an all-reduce of the activations, tokens x hidden values.
ALLREDUCES_PER_LAYER = 2
#: Activations travel in 16-bit (FP8 engines too: TensorRT-LLM and vLLM all-reduce bf16/fp16).
ACTIVATION_BYTES = 2.0
#: A ring all-reduce sends 2(N-1)/N of the buffer over each GPU's link (Patarasuk and
#: Yuan 2009) at this share of the link's one direction, and each all-reduce costs a fixed
#: latency (kernel launch, the peers' synchronisation) whatever its size. Both chosen on the
#: tensor-parallel rows the fit uses (TensorRT-LLM TP4 prefill, H100 and A100; a grid of
#: share 0.6 / 0.8 x latency 5 / 10 / 20 us, judged out of source): 0.6 fits best, the
#: latency barely matters there. nccl-tests reach more (~0.8) on large buffers; an
#: engine's 1-30 MB activations are mid-sized. The held-out H100 TP2 serving rows check it.
LINK_EFFICIENCY = 0.6
ALLREDUCE_LATENCY_S = 10e-6


def allreduce_s(size_bytes: float, count: int, link_gbs: float) -> float:
    """One ring all-reduce of ``size_bytes`` over ``count`` GPUs, each sending at
    ``link_gbs`` (one direction)."""
    if count <= 1 or size_bytes <= 0:
        return 0.0
    if link_gbs <= 0:
        return math.inf
    wire = 2 * (count - 1) / count * size_bytes / (link_gbs * 1e9 * LINK_EFFICIENCY)
    return ALLREDUCE_LATENCY_S + wire


@dataclass(frozen=True, slots=True)
class StepTimes:
    """The parts of one step, in seconds: the largest of memory and compute, plus overhead."""

    memory_s: float
    compute_s: float
    overhead_s: float
    #: llama.cpp's layers in host memory, run on the CPU after (not beside) the GPU's
    host_s: float = 0.0
    #: tensor parallelism's all-reduces between the GPUs (not overlapped with the matmuls)
    comm_s: float = 0.0

    @property
    def total_s(self) -> float:
        return max(self.memory_s, self.compute_s) + self.overhead_s + self.host_s + self.comm_s

    @property
    def limited_by(self) -> str:
        if self.host_s >= max(self.memory_s, self.compute_s, self.overhead_s):
            return "host_memory"
        if self.comm_s >= max(self.memory_s, self.compute_s, self.overhead_s):
            return "interconnect"
        if self.overhead_s >= max(self.memory_s, self.compute_s):
            return "overhead"
        return "memory" if self.memory_s >= self.compute_s else "compute"


@dataclass(frozen=True, slots=True)
class Gpus:
    """``count`` identical GPUs as an engine uses them."""

    bandwidth_gbs: float
    peak_tflops: float
    count: int = 1
    #: True: layers split across GPUs, run one after another (llama.cpp's default)
    layer_split: bool = False
    #: stacked memory (HBM): its latency needs more bytes in flight than one decode
    #: stream keeps, so the step reaches ``Efficiency.hbm`` of the usual share
    hbm: bool = False
    #: GB/s (one direction) each GPU sends an all-reduce at, for ``count`` GPUs
    link_gbs: float = 0.0

    @property
    def tensor_parallel(self) -> bool:
        return self.count > 1 and not self.layer_split

    @property
    def bandwidth_bytes_s(self) -> float:
        """Bandwidth a step sees: one GPU's at a time when layers are split."""
        parallel = 1 if self.layer_split else self.count
        return self.bandwidth_gbs * 1e9 * parallel

    @property
    def flops_s(self) -> float:
        parallel = 1 if self.layer_split else self.count
        return self.peak_tflops * 1e12 * parallel


@dataclass(frozen=True, slots=True)
class Efficiency:
    """What an engine reaches on one GPU generation (fitted; see ``fitting``)."""

    #: fraction of the datasheet bandwidth a decode step streams at (<= 1)
    bandwidth: float
    #: fraction of the dense tensor peak matrix multiplies reach (<= 1)
    compute: float
    #: fixed seconds per layer per step (kernel launches, sampling spread over layers)
    layer_s: float
    #: KV-cache bytes are read this many times over (>= 1: attention kernels re-read)
    kv_factor: float = 1.0
    #: seconds per extra GPU per step when layers are split (hand-over between GPUs)
    hop_s: float = 0.0
    #: seconds per sequence per step (sampling, scheduling: grows with the batch)
    sequence_s: float = 0.0
    #: GEMM shape: a matmul of ``tokens x hidden`` reaches half of ``compute`` when
    #: tokens x hidden = ``gemm_half`` x the peak in TFLOPS (a faster GPU needs a larger
    #: GEMM to fill it); 0: every shape reaches ``compute``
    gemm_half: float = 0.0
    #: attention FLOPs run at this share of the matmul efficiency (long prompts)
    attention: float = 1.0
    #: the bandwidth share on HBM GPUs, relative to ``bandwidth`` (<= 1)
    hbm: float = 1.0
    #: seconds an older llama.cpp build (before ``data.CURRENT_BUILDS_FROM``) adds per
    #: layer per decode step: the kernel launches CUDA graphs and fused kernels have since
    #: removed (fitted from rows that say their build's year; an estimate is for a current
    #: build). Prefill has no such term: the one current-build prefill row (held out)
    #: cannot fit one.
    older_layer_s: float = 0.0
    #: a mixture of experts' dispatch costs (:class:`MoeDispatch`, by vendor family; set by
    #: :func:`with_dispatch`, 0 in the fit, whose rows are dense)
    moe_layer_s: float = 0.0
    expert_s: float = 0.0

    def bandwidth_share(self, gpus: Gpus) -> float:
        return self.bandwidth * (self.hbm if gpus.hbm else 1.0)

    def matmul_share(self, tokens_in_flight: float, hidden: int, peak_tflops: float) -> float:
        """Share of the peak a ``tokens_in_flight x hidden`` matmul reaches."""
        if self.gemm_half <= 0:
            return self.compute
        shape = max(1.0, tokens_in_flight) * hidden
        return self.compute * shape / (shape + self.gemm_half * peak_tflops)


@dataclass(frozen=True, slots=True)
class HostPart:
    """What llama.cpp reads from host memory per decode step (partial offload).

    ``weight_bytes``: weights a token reads there (CPU layers, or experts kept on the CPU);
    ``kv_share``: the share of the KV cache there (the CPU layers'); ``bandwidth_gbs``:
    the host's effective bandwidth.
    """

    weight_bytes: float
    kv_share: float
    bandwidth_gbs: float


@dataclass(frozen=True, slots=True)
class MoeDispatch:
    """What a step of a mixture of experts costs beyond its bytes and FLOPs.

    Each MoE layer routes its tokens (the router's GEMM, top-k, sorting tokens by expert,
    the grouped expert GEMMs, the weighted combine): kernels a dense MLP does not run,
    ``layer_s`` per MoE layer per step. The grouped GEMMs then run a tile sequence per
    expert the step's tokens picked, ``expert_s`` per touched expert per layer. Chosen
    per vendor family by :mod:`gpudesk.speed.moe_fit` on published serving runs, one
    source held out at a time; ``moe_dispatch.json`` holds the choice.
    """

    layer_s: float = 0.0
    expert_s: float = 0.0


MOE_DISPATCH_FILE = "moe_dispatch.json"
#: the table's entry for a vendor without its own
ANY_VENDOR = "*"


@functools.cache
def fitted_dispatch() -> dict[str, MoeDispatch]:
    """The fitted costs by vendor family (``moe_dispatch.json``'s ``chosen``)."""
    text = resources.files("gpudesk.speed").joinpath(MOE_DISPATCH_FILE).read_text("utf-8")
    chosen = json.loads(text)["chosen"]
    return {
        vendor: MoeDispatch(float(point["layer_s"]), float(point["expert_s"]))
        for vendor, point in chosen.items()
    }


_DISPATCH: ContextVar[Mapping[str, MoeDispatch] | None] = ContextVar("moe_dispatch", default=None)


def dispatch_for(vendor: str) -> MoeDispatch:
    """The dispatch costs for a GPU of ``vendor``: the fitted ones unless
    :func:`dispatch_override` says otherwise."""
    table = _DISPATCH.get()
    if table is None:
        table = fitted_dispatch()
    return table.get(vendor.lower(), table.get(ANY_VENDOR, MoeDispatch()))


@contextmanager
def dispatch_override(table: Mapping[str, MoeDispatch]) -> Iterator[None]:
    """Estimate with ``table`` (vendor family or ``*`` to costs) instead of the fitted
    costs: the fit's own grid, and the validation's held-out choice for each source."""
    token = _DISPATCH.set(table)
    try:
        yield
    finally:
        _DISPATCH.reset(token)


def with_dispatch(eff: Efficiency, vendor: str) -> Efficiency:
    """``eff`` with the MoE dispatch costs of ``vendor``'s GPUs."""
    cost = dispatch_for(vendor)
    return dataclasses.replace(eff, moe_layer_s=cost.layer_s, expert_s=cost.expert_s)


def touched_experts(costs: ModelCosts, tokens: float) -> float:
    """Experts per layer any of ``tokens`` tokens is routed to (k of E picked at random)."""
    if costs.experts is None or costs.active_experts is None or tokens <= 0:
        return 0.0
    share = costs.active_experts / costs.experts
    return costs.experts * (1 - float((1 - share) ** max(1.0, tokens)))


def moe_dispatch_s(
    costs: ModelCosts, tokens: float, eff: Efficiency, *, expert_parallel: int = 1
) -> float:
    """Seconds one forward pass of ``tokens`` tokens spends routing them to experts at
    ``eff``'s dispatch costs (0 for a dense model); with expert parallelism each GPU runs
    its share of the experts. Every layer is counted as a MoE layer, as
    :func:`gpudesk.speed.step.expert_parallel_s` does."""
    if costs.experts is None or tokens <= 0:
        return 0.0
    per_gpu = touched_experts(costs, tokens) / max(1, expert_parallel)
    return costs.layers * (eff.moe_layer_s + eff.expert_s * per_gpu)


def kv_read_factor(costs: ModelCosts, gpus: Gpus) -> float:
    """How many times over ``gpus`` read a step's KV cache: once, or once per
    tensor-parallel GPU when each holds every token's latent (:attr:`ModelCosts.kv_replicated`)."""
    return float(gpus.count) if costs.kv_replicated and gpus.tensor_parallel else 1.0


def tp_comm_s(costs: ModelCosts, gpus: Gpus, tokens: float) -> float:
    """Seconds of all-reduces one forward pass of ``tokens`` tokens spends when ``gpus``
    split tensors (0 on one GPU or when layers are split)."""
    if not gpus.tensor_parallel or tokens <= 0:
        return 0.0
    size = tokens * costs.hidden * ACTIVATION_BYTES
    return ALLREDUCES_PER_LAYER * costs.layers * allreduce_s(size, gpus.count, gpus.link_gbs)


def decode_step(
    costs: ModelCosts,
    gpus: Gpus,
    eff: Efficiency,
    *,
    batch: int,
    context: float,
    host: HostPart | None = None,
) -> StepTimes:
    """One decode step of ``batch`` sequences at ``context`` tokens of KV cache each.

    With ``host`` (llama.cpp partial offload) the GPU reads the rest, and the host's part
    takes its bytes over the host bandwidth, after the GPU's (the CPU runs its layers in
    turn; routed experts read for one token of the batch are assumed read for all).
    """
    kv = batch * costs.kv_bytes(context) * kv_read_factor(costs, gpus)
    weights = costs.weights_read(batch)
    host_s = 0.0
    if host is not None:
        host_bytes = min(weights, host.weight_bytes) + host.kv_share * kv
        weights -= min(weights, host.weight_bytes)
        kv *= 1 - host.kv_share
        host_s = host_bytes / (host.bandwidth_gbs * 1e9)
    memory = (weights + eff.kv_factor * kv) / (gpus.bandwidth_bytes_s * eff.bandwidth_share(gpus))
    # A decode step's matrix-vector products are bandwidth-bound kernels, not the tiled
    # GEMMs the shape curve describes: they run at the plain compute share.
    compute = batch * costs.decode_flops(context) / (gpus.flops_s * eff.compute)
    hops = (gpus.count - 1) * eff.hop_s if gpus.layer_split else 0.0
    return StepTimes(
        memory,
        compute,
        costs.layers * eff.layer_s
        + batch * eff.sequence_s
        + hops
        + moe_dispatch_s(costs, batch, eff),
        host_s,
        tp_comm_s(costs, gpus, batch),
    )


def decode_bound_bytes(costs: ModelCosts, *, batch: int, context: float) -> float:
    """Bytes one decode step must read at the least: weights streamed + every KV cache."""
    return costs.weights_read(batch) + batch * costs.kv_bytes(context)


def decode_bound_tokens_per_s(
    costs: ModelCosts, gpus: Gpus, *, batch: int, context: float
) -> float:
    """Roofline for decode: tokens/s if bandwidth and peak were reached with no overhead."""
    replicated = batch * costs.kv_bytes(context) * (kv_read_factor(costs, gpus) - 1)
    read = decode_bound_bytes(costs, batch=batch, context=context) + replicated
    memory = read / gpus.bandwidth_bytes_s
    compute = batch * costs.decode_flops(context) / gpus.flops_s
    return batch / max(memory, compute)


def prefill_compute_s(
    costs: ModelCosts,
    gpus: Gpus,
    eff: Efficiency,
    *,
    tokens: float,
    batch: int = 1,
    chunk: int | None = None,
) -> float:
    """Seconds of matmul and attention work in ``batch`` prompts of ``tokens`` tokens.

    The matmuls run at the share their GEMM shape reaches: ``chunk`` tokens at a time
    (llama.cpp's micro-batch) or the whole prompt batch; attention at ``eff.attention``
    of that (its cost grows with the square of the prompt).
    """
    in_flight = batch * tokens if chunk is None else min(batch * tokens, chunk)
    # Tensor parallelism splits each matmul's width, not its tokens: every GPU runs a
    # GEMM of the same tokens at its own peak, so the shape is judged against one GPU's.
    share = eff.matmul_share(in_flight, costs.hidden, gpus.peak_tflops)
    matmul = batch * 2.0 * costs.matmul_params_active * tokens / (gpus.flops_s * share)
    attention = (
        batch * costs.attention_flops_prefill(tokens) / (gpus.flops_s * share * eff.attention)
    )
    return matmul + attention


def prefill_time(
    costs: ModelCosts,
    gpus: Gpus,
    eff: Efficiency,
    *,
    tokens: float,
    batch: int = 1,
    chunk: int | None = None,
) -> StepTimes:
    """One forward pass over ``batch`` prompts of ``tokens`` tokens (time to first token).

    Each ``chunk`` of the prompt reads the weights once.
    """
    compute = prefill_compute_s(costs, gpus, eff, tokens=tokens, batch=batch, chunk=chunk)
    passes = 1 if chunk is None else max(1, math.ceil(batch * tokens / chunk))
    memory = passes * costs.in_memory_bytes / (gpus.bandwidth_bytes_s * eff.bandwidth_share(gpus))
    comm = tp_comm_s(costs, gpus, batch * tokens)
    per_pass = batch * tokens if chunk is None else min(batch * tokens, chunk)
    overhead = passes * (costs.layers * eff.layer_s + moe_dispatch_s(costs, per_pass, eff))
    return StepTimes(memory, compute, overhead, comm_s=comm)


#: Bytes each attention score costs when llama.cpp runs without FlashAttention: ggml's
#: graph writes K x Q as F32, the softmax reads and writes it, and V x softmax reads it
#: again (llm_build_kqv's non-FA branch: mul_mat, soft_max_ext, mul_mat), four passes of
#: 4 bytes; a lower bound (the F16 cast before cuBLAS adds more)
UNFUSED_SCORE_BYTES = 16.0


def unfused_scores_bytes(costs: ModelCosts, *, tokens: float, chunk: int | None) -> float:
    """Bytes of attention scores a prompt of ``tokens`` moves without FlashAttention.

    Each micro-batch of ``chunk`` tokens scores every query head against every cached
    token up to its end (ggml computes the masked rectangle whole), in every layer;
    sliding-window layers score at most their window.
    """
    if costs.shape is None or tokens <= 0:
        return 0.0
    step = chunk or tokens
    pairs_full = pairs_sliding = 0.0
    done = 0.0
    while done < tokens:
        size = min(step, tokens - done)
        done += size
        pairs_full += size * done
        window = costs.sliding_window if costs.sliding_window is not None else done
        pairs_sliding += size * min(done, window)
    pairs = costs.full_layers * pairs_full + costs.sliding_layers * pairs_sliding
    return UNFUSED_SCORE_BYTES * costs.shape.heads * pairs


def unfused_scores_s(
    costs: ModelCosts, gpus: Gpus, eff: Efficiency, *, tokens: float, chunk: int | None
) -> float:
    """Seconds those scores take at the bandwidth share a stream reaches (their own
    kernels: they do not overlap the matmuls). Tensor parallelism splits the heads."""
    moved = unfused_scores_bytes(costs, tokens=tokens, chunk=chunk)
    return moved / (gpus.bandwidth_bytes_s * eff.bandwidth_share(gpus))


def prefill_bound_s(costs: ModelCosts, gpus: Gpus, *, tokens: float, batch: int = 1) -> float:
    compute = batch * costs.prefill_flops(tokens) / gpus.flops_s
    memory = costs.in_memory_bytes / gpus.bandwidth_bytes_s
    return max(compute, memory)


@dataclass(frozen=True, slots=True)
class ServeTimes:
    """Continuous batching of ``concurrency`` requests, each ``seq_in`` in, ``seq_out`` out."""

    concurrency: int
    step: StepTimes
    prefill_s: float  # one request's prompt, inside the batch
    seq_out: int

    @property
    def cycle_s(self) -> float:
        """Time for the batch to turn over once: every prefill and every decode step."""
        return self.concurrency * self.prefill_s + self.seq_out * self.step.total_s

    @property
    def output_tokens_per_s(self) -> float:
        return self.concurrency * self.seq_out / self.cycle_s

    @property
    def prefill_share(self) -> float:
        return self.concurrency * self.prefill_s / self.cycle_s


def serve_times(
    costs: ModelCosts,
    gpus: Gpus,
    eff: Efficiency,
    *,
    concurrency: int,
    seq_in: int,
    seq_out: int,
) -> ServeTimes:
    """Output throughput of ``concurrency`` sequences decoding together, each prompt
    computed alone: the roofline bound of a serving estimate (at full efficiency every
    GEMM shape reaches the peak, so batching prompts changes nothing). The fit and the
    estimate run the engine's steps instead (:func:`gpudesk.speed.fitting.steady_state`,
    the simulator).

    While decoding, the sequences hold ``seq_in + seq_out / 2`` tokens of KV cache on
    average.
    """
    context = seq_in + seq_out / 2
    step = decode_step(costs, gpus, eff, batch=concurrency, context=context)
    prefill = prefill_compute_s(costs, gpus, eff, tokens=seq_in) + tp_comm_s(costs, gpus, seq_in)
    return ServeTimes(concurrency, step, prefill, seq_out)


def serve_bound_tokens_per_s(
    costs: ModelCosts, gpus: Gpus, *, concurrency: int, seq_in: int, seq_out: int
) -> float:
    perfect = Efficiency(bandwidth=1.0, compute=1.0, layer_s=0.0)
    return serve_times(
        costs, gpus, perfect, concurrency=concurrency, seq_in=seq_in, seq_out=seq_out
    ).output_tokens_per_s


def max_sequences(kv_pool_bytes: float, costs: ModelCosts, *, seq_in: int, seq_out: int) -> int:
    """Sequences whose KV cache (at their average length while decoding) fits the pool."""
    per_sequence = costs.kv_bytes(seq_in + seq_out / 2)
    if per_sequence <= 0:
        return 1_000_000
    return max(0, math.floor(kv_pool_bytes / per_sequence))


# -- training ---------------------------------------------------------------------------

#: FLOPs per parameter per token: forward 2, backward 4 (activations 2, weight grads 2).
FULL_FLOPS_PER_PARAM = 6.0
#: Frozen weights (LoRA, QLoRA): no weight-gradient matmuls, so forward 2 + backward 2.
FROZEN_FLOPS_PER_PARAM = 4.0
#: Full activation recomputation repeats the forward pass.
RECOMPUTE_FLOPS_PER_PARAM = 2.0
#: Attention per token per (layer x hidden x sequence): forward 4, x3 for training.
ATTENTION_TRAIN_FACTOR = 12.0


def train_flops_per_token(
    costs: ModelCosts, *, seq: int, frozen_base: bool, full_recompute: bool
) -> float:
    """FLOPs the hardware does per training token (recomputation included)."""
    per_param = FROZEN_FLOPS_PER_PARAM if frozen_base else FULL_FLOPS_PER_PARAM
    # Attention has no weights: its backward pass is all activation gradients, so freezing
    # the base model saves nothing there.
    attention = ATTENTION_TRAIN_FACTOR * costs.layers * costs.hidden * seq
    if full_recompute:
        per_param += RECOMPUTE_FLOPS_PER_PARAM
        attention *= (FULL_FLOPS_PER_PARAM + RECOMPUTE_FLOPS_PER_PARAM) / FULL_FLOPS_PER_PARAM
    # A mixture of experts computes only the experts each token is routed to: the
    # active matmul parameters (no input-embedding table: a lookup is one row per token).
    return per_param * costs.matmul_params_active + attention


def train_tokens_per_s_per_gpu(
    costs: ModelCosts,
    peak_tflops: float,
    utilisation: float,
    *,
    seq: int,
    frozen_base: bool,
    full_recompute: bool,
) -> float:
    """Tokens per second per GPU at ``utilisation`` of the dense peak."""
    flops = train_flops_per_token(
        costs, seq=seq, frozen_base=frozen_base, full_recompute=full_recompute
    )
    return peak_tflops * 1e12 * utilisation / flops
