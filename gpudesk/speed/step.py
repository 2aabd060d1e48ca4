"""One engine step's time, from what the step does: the single step-time model.

A step computes some prompt tokens (chunks of one or more requests' prompts, each
attending to the context before it) and decodes some sequences (one token each, each
attending to its context). Its time is the largest of

- **memory**: the weight bytes the step's tokens touch (a mixture of experts reads the
  experts any of them is routed to: :meth:`ModelCosts.weights_read`) plus the KV cache the
  decodes read, at the fitted share of the bandwidth;
- **compute**: 2 x active matmul parameters per token at the share of the dense peak the
  step's GEMM shape reaches (``tokens x hidden``), plus attention: prompt tokens over their
  context (causal), decodes over theirs;

plus a fixed cost per layer (kernel launches), a cost per decoding sequence (sampling,
bookkeeping), and, across tensor-parallel GPUs, two all-reduces per layer of the step's
tokens. A decode step at a batch and a single prompt's prefill are two cases of it:
:func:`decode_step` and :func:`prefill_time` in :mod:`gpudesk.speed.physics` give the same
times for them, so the efficiencies fitted on published decode and prefill runs carry over
to the mixed steps a serving engine runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from gpudesk.speed.physics import (
    ACTIVATION_BYTES,
    ALLREDUCE_LATENCY_S,
    ALLREDUCES_PER_LAYER,
    LINK_EFFICIENCY,
    Efficiency,
    Gpus,
    ModelCosts,
    StepTimes,
    kv_read_factor,
    moe_dispatch_s,
    tp_comm_s,
)
from gpudesk.speed.serving import StepShape


def attention_pairs(costs: ModelCosts, shape: StepShape) -> float:
    """Layer-weighted (query, key) pairs of the prompt tokens, sliding layers capped."""
    if shape.prefill_tokens <= 0:
        return 0.0
    full = costs.full_layers * shape.prefill_pairs
    if costs.sliding_layers and costs.sliding_window is not None:
        mean_reach = shape.prefill_pairs / shape.prefill_tokens
        sliding = (
            costs.sliding_layers * shape.prefill_tokens * min(mean_reach, costs.sliding_window)
        )
    else:
        sliding = costs.sliding_layers * shape.prefill_pairs
    return full + sliding


#: Expert parallelism: each mixture-of-experts layer sends every token's hidden state to
#: the GPUs holding its routed experts and back (dispatch and combine: two all-to-alls,
#: DeepSeek-V3 report, arXiv:2412.19437, section 3.2.2), k copies of tokens x hidden x 2
#: bytes, of which (ep - 1) / ep leaves the GPU; each all-to-all costs a latency as an
#: all-reduce does. Every layer is counted as a MoE layer (DeepSeek's first three are
#: dense: a 5% overcount there).
ALL_TO_ALLS_PER_MOE_LAYER = 2


def expert_parallel_s(costs: ModelCosts, gpus: Gpus, tokens: float, expert_parallel: int) -> float:
    """Seconds of the all-to-alls of one step of ``tokens`` tokens over ``expert_parallel``
    GPUs (0 for a dense model or without expert parallelism)."""
    if expert_parallel <= 1 or costs.active_experts is None or tokens <= 0:
        return 0.0
    link = gpus.link_gbs * 1e9 * LINK_EFFICIENCY
    if link <= 0:
        return math.inf
    leaving = tokens * costs.hidden * ACTIVATION_BYTES * costs.active_experts
    leaving *= (expert_parallel - 1) / expert_parallel
    one = ALLREDUCE_LATENCY_S + leaving / link
    return ALL_TO_ALLS_PER_MOE_LAYER * costs.layers * one


def step_time(
    costs: ModelCosts, gpus: Gpus, eff: Efficiency, shape: StepShape, *, expert_parallel: int = 1
) -> StepTimes:
    """The parts of one step's time on ``gpus`` (one engine instance's GPUs; experts over
    ``expert_parallel`` of them when above 1)."""
    decodes = shape.decodes
    tokens = shape.prefill_tokens + decodes
    mean_context = shape.decode_context / decodes if decodes else 0.0
    weights = costs.weights_read(max(1, tokens))
    kv = decodes * costs.kv_bytes(mean_context) * kv_read_factor(costs, gpus)
    memory = (weights + eff.kv_factor * kv) / (gpus.bandwidth_bytes_s * eff.bandwidth_share(gpus))
    decode_attention = decodes * costs.attention_flops_decode(mean_context)
    if shape.prefill_tokens > 0:
        share = eff.matmul_share(tokens, costs.hidden, gpus.peak_tflops)
        matmul = 2.0 * costs.matmul_params_active * tokens / (gpus.flops_s * share)
        prompt_attention = 4.0 * costs.attention_width * attention_pairs(costs, shape)
        compute = (
            matmul
            + prompt_attention / (gpus.flops_s * share * eff.attention)
            + decode_attention / (gpus.flops_s * eff.compute)
        )
    else:
        # matrix-vector products: bandwidth-bound kernels at the plain compute share
        compute = (decodes * 2.0 * costs.matmul_params_active + decode_attention) / (
            gpus.flops_s * eff.compute
        )
    overhead = costs.layers * eff.layer_s + decodes * eff.sequence_s
    overhead += moe_dispatch_s(costs, tokens, eff, expert_parallel=expert_parallel)
    if gpus.layer_split:
        overhead += (gpus.count - 1) * eff.hop_s
    comm = tp_comm_s(costs, gpus, tokens) + expert_parallel_s(costs, gpus, tokens, expert_parallel)
    return StepTimes(memory, compute, overhead, comm_s=comm)


def step_seconds(costs: ModelCosts, gpus: Gpus, eff: Efficiency, shape: StepShape) -> float:
    """:func:`step_time`'s total."""
    return step_time(costs, gpus, eff, shape).total_s


def step_seconds_fn(
    costs: ModelCosts, gpus: Gpus, eff: Efficiency, *, expert_parallel: int = 1
) -> Callable[[StepShape], float]:
    """:func:`step_seconds` with every constant of the model and GPUs worked out once: the
    simulator asks for millions of steps (a test checks it agrees with :func:`step_time`)."""
    layers = costs.layers
    per_layer_kv = costs.kv_bytes_per_token / layers if layers > 0 else 0.0
    per_layer_kv *= kv_read_factor(costs, gpus)
    full, sliding, window = costs.full_layers, costs.sliding_layers, costs.sliding_window
    bandwidth = gpus.bandwidth_bytes_s * eff.bandwidth_share(gpus)
    flops = gpus.flops_s
    peak = gpus.peak_tflops
    active2 = 2.0 * costs.matmul_params_active
    width4 = 4.0 * costs.attention_width
    decode_width4 = 4.0 * (costs.decode_attention_width or costs.attention_width)
    hidden = costs.hidden
    fixed = layers * eff.layer_s + ((gpus.count - 1) * eff.hop_s if gpus.layer_split else 0.0)
    tensor_parallel = gpus.tensor_parallel
    ring = 2 * (gpus.count - 1) / gpus.count if gpus.count else 0.0
    link = gpus.link_gbs * 1e9 * LINK_EFFICIENCY
    dense = costs.experts is None or costs.active_experts is None
    experts_over = 1 if dense else expert_parallel
    streamed = costs.streamed_bytes
    share = routed = 0.0
    experts = 0
    dispatch_layer = dispatch_expert = 0.0
    if not dense:
        assert costs.experts is not None and costs.active_experts is not None
        share = costs.active_experts / costs.experts
        unread = max(0.0, costs.in_memory_bytes - costs.input_embedding_bytes - streamed)
        routed = unread / (1 - share) if share < 1 else 0.0
        experts = costs.experts
        dispatch_layer = layers * eff.moe_layer_s
        dispatch_expert = layers * eff.expert_s / max(1, expert_parallel)

    def attended(context: float) -> float:
        if window is None:
            return (full + sliding) * context
        return full * context + sliding * min(context, window)

    def seconds(shape: StepShape) -> float:
        decodes = shape.decodes
        prompt = shape.prefill_tokens
        tokens = prompt + decodes
        mean_context = shape.decode_context / decodes if decodes else 0.0
        if dense or tokens <= 1:
            weights = streamed
        else:
            weights = streamed - share * routed + (1 - (1 - share) ** tokens) * routed
        kv = decodes * per_layer_kv * attended(mean_context) if mean_context > 0 else 0.0
        memory = (weights + eff.kv_factor * kv) / bandwidth
        decode_attention = decodes * decode_width4 * attended(mean_context)
        if prompt > 0:
            if eff.gemm_half <= 0:
                gemm = eff.compute
            else:
                size = max(1.0, tokens) * hidden
                gemm = eff.compute * size / (size + eff.gemm_half * peak)
            if sliding and window is not None:
                reach = min(shape.prefill_pairs / prompt, window)
                pairs = full * shape.prefill_pairs + sliding * prompt * reach
            else:
                pairs = (full + sliding) * shape.prefill_pairs
            compute = (
                active2 * tokens / (flops * gemm)
                + width4 * pairs / (flops * gemm * eff.attention)
                + decode_attention / (flops * eff.compute)
            )
        else:
            compute = (decodes * active2 + decode_attention) / (flops * eff.compute)
        total = max(memory, compute) + fixed + decodes * eff.sequence_s
        if experts and tokens > 0:
            touched = experts * (1 - (1 - share) ** max(1.0, tokens))
            total += dispatch_layer + dispatch_expert * touched
        if tensor_parallel and tokens > 0:
            if link <= 0:
                return math.inf
            size_bytes = tokens * hidden * ACTIVATION_BYTES
            total += (
                ALLREDUCES_PER_LAYER * layers * (ALLREDUCE_LATENCY_S + ring * size_bytes / link)
            )
        if experts_over > 1 and tokens > 0:
            total += expert_parallel_s(costs, gpus, tokens, experts_over)
        return total

    return seconds
