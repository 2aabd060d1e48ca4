"""The serving simulator: vLLM V1's scheduling rules, step by step, and its figures."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, strategies as st

from gpudesk.speed import serving
from gpudesk.speed.physics import Efficiency, Gpus, ModelCosts, decode_step
from gpudesk.speed.serving import (
    SchedulerConfig,
    SimulationError,
    StepShape,
    Traffic,
    percentile,
    simulate,
    weighted_percentile,
)
from gpudesk.speed.step import step_seconds_fn, step_time

STEP = 0.01


def constant(_: StepShape) -> float:
    return STEP


def _config(**changes: object) -> SchedulerConfig:
    base = SchedulerConfig(max_num_seqs=8, max_num_batched_tokens=1000, kv_blocks=10_000)
    return replace(base, **changes)  # type: ignore[arg-type]


def test_requests_sent_at_once_prefill_together_then_decode_together() -> None:
    run = simulate(_config(), Traffic(num_prompts=4, seq_in=32, seq_out=5), constant)
    assert run.steps == 5  # one step of four prompts, four decode steps
    assert run.ttft_ms.p50 == pytest.approx(STEP * 1e3)
    assert run.e2e_ms.p99 == pytest.approx(5 * STEP * 1e3)
    assert run.tpot_ms.mean == pytest.approx(STEP * 1e3)
    assert run.itl_ms.p50 == pytest.approx(STEP * 1e3)
    assert run.output_tokens == 20
    assert run.output_tokens_per_s == pytest.approx(20 / (5 * STEP))
    assert run.preemptions == 0


def test_a_prompt_longer_than_the_budget_is_chunked() -> None:
    run = simulate(
        _config(max_num_batched_tokens=64), Traffic(num_prompts=1, seq_in=100, seq_out=2), constant
    )
    assert run.ttft_ms.p50 == pytest.approx(2 * STEP * 1e3)  # 64 tokens, then 36
    assert run.e2e_ms.p50 == pytest.approx(3 * STEP * 1e3)


def test_max_num_seqs_queues_requests_first_come_first_served() -> None:
    run = simulate(_config(max_num_seqs=1), Traffic(num_prompts=3, seq_in=10, seq_out=3), constant)
    ttfts = sorted(ttft for ttft, _, _ in run.per_request_ms)
    # each runs 3 steps; the next is admitted in the step after the last one finished
    assert ttfts == pytest.approx([STEP * 1e3, 4 * STEP * 1e3, 7 * STEP * 1e3])
    assert run.peak_running == 1


def test_a_full_pool_preempts_the_newest_request_and_recomputes_it() -> None:
    # two requests of 32 + 40 tokens need 5 blocks each at the end; the pool has 6
    shapes: list[StepShape] = []

    def record(shape: StepShape) -> float:
        shapes.append(shape)
        return STEP

    run = simulate(_config(kv_blocks=6), Traffic(num_prompts=2, seq_in=32, seq_out=40), record)
    assert run.preemptions >= 1
    assert run.output_tokens == 80
    # the recomputation is a prompt again: more prompt tokens than the two prompts
    assert sum(shape.prefill_tokens for shape in shapes) > 64
    assert max(ttft for ttft, _, _ in run.per_request_ms) == pytest.approx(STEP * 1e3)


def test_tensorrt_llms_policy_reserves_the_whole_output_and_never_preempts() -> None:
    # the same two requests and pool: GUARANTEED_NO_EVICT admits the second only when
    # the first has finished and given back its 5 blocks (72 tokens of 16)
    run = simulate(
        _config(kv_blocks=6, block_size=16, reserve_output=True),
        Traffic(num_prompts=2, seq_in=32, seq_out=40),
        constant,
    )
    assert run.preemptions == 0
    assert run.peak_running == 1
    ttfts = sorted(ttft for ttft, _, _ in run.per_request_ms)
    # the first: a prompt step and 39 decode steps; the second starts in the step after
    assert ttfts == pytest.approx([STEP * 1e3, 41 * STEP * 1e3])
    assert run.output_tokens == 80


def test_a_request_larger_than_the_pool_is_refused_with_the_figures() -> None:
    with pytest.raises(SimulationError, match="needs 7 KV blocks"):
        simulate(_config(kv_blocks=6), Traffic(num_prompts=1, seq_in=100, seq_out=2), constant)


def test_concurrency_caps_requests_in_flight_and_starts_their_clock_when_sent() -> None:
    run = simulate(_config(), Traffic(num_prompts=6, seq_in=10, seq_out=4, concurrency=2), constant)
    assert run.peak_running <= 2
    # a request waiting for the client's slot is not late: each TTFT is one step
    assert run.ttft_ms.p99 == pytest.approx(STEP * 1e3)


def test_poisson_arrivals_are_deterministic_for_a_seed() -> None:
    traffic = Traffic(num_prompts=200, seq_in=64, seq_out=16, rate=50.0, seed=3)
    first = simulate(_config(), traffic, constant)
    again = simulate(_config(), traffic, constant)
    other = simulate(_config(), replace(traffic, seed=4), constant)
    assert first == again
    assert first.duration_s != other.duration_s


def test_light_traffic_waits_for_no_one() -> None:
    run = simulate(_config(), Traffic(num_prompts=50, seq_in=64, seq_out=8, rate=0.5), constant)
    assert run.ttft_ms.p50 == pytest.approx(STEP * 1e3)
    # one arriving during another's step waits for that step to end, no longer
    assert run.ttft_ms.p99 <= 2 * STEP * 1e3 + 1e-9
    assert run.requests_per_s == pytest.approx(0.5, rel=0.4)


@pytest.mark.parametrize("reserve", [False, True], ids=["vllm", "tensorrt-llm"])
def test_jumping_over_decode_steps_gives_what_stepping_does(
    monkeypatch: pytest.MonkeyPatch, reserve: bool
) -> None:
    def growing(shape: StepShape) -> float:
        return (
            0.005
            + 1e-4 * shape.decodes
            + 1e-8 * shape.decode_context
            + 2e-5 * (shape.prefill_tokens)
        )

    traffic = Traffic(num_prompts=120, seq_in=200, seq_out=300, rate=3.0, seed=1)
    config = _config(
        max_num_seqs=32, max_num_batched_tokens=2048, kv_blocks=600, reserve_output=reserve
    )
    fast = simulate(config, traffic, growing)
    monkeypatch.setattr(serving, "_jump_decodes", lambda *args: False)
    slow = simulate(config, traffic, growing)
    assert fast.steps == slow.steps
    for name in ("ttft_ms", "tpot_ms", "e2e_ms"):
        assert getattr(fast, name).p50 == pytest.approx(getattr(slow, name).p50, rel=0.02), name
    assert fast.output_tokens_per_s == pytest.approx(slow.output_tokens_per_s, rel=0.01)


@given(
    values=st.lists(
        st.tuples(st.floats(0, 1e6, allow_nan=False), st.integers(1, 5)), min_size=1, max_size=8
    ),
    q=st.sampled_from([0, 10, 50, 90, 99, 100]),
)
def test_weighted_percentile_is_the_percentile_of_the_repeated_values(
    values: list[tuple[float, int]], q: int
) -> None:
    pairs = sorted(values)
    expanded = [value for value, count in pairs for _ in range(count)]
    assert weighted_percentile(pairs, q) == pytest.approx(percentile(expanded, q))


@given(
    seqs=st.integers(1, 12),
    extra_budget=st.integers(0, 300),
    blocks=st.integers(1, 80),
    block_size=st.sampled_from([1, 4, 16]),
    prompts=st.integers(1, 25),
    seq_in=st.integers(1, 120),
    seq_out=st.integers(1, 60),
    rate=st.sampled_from([math.inf, 0.5, 20.0]),
    concurrency=st.one_of(st.none(), st.integers(1, 6)),
    spread=st.sampled_from([0.0, 0.5]),
    hit=st.sampled_from([0.0, 0.5]),
    reserve=st.booleans(),
)
def test_any_traffic_runs_within_the_engine_limits_or_is_refused(
    seqs: int,
    extra_budget: int,
    blocks: int,
    block_size: int,
    prompts: int,
    seq_in: int,
    seq_out: int,
    rate: float,
    concurrency: int | None,
    spread: float,
    hit: float,
    reserve: bool,
) -> None:
    config = SchedulerConfig(
        max_num_seqs=seqs,
        max_num_batched_tokens=seqs + extra_budget,
        kv_blocks=blocks,
        block_size=block_size,
        prefix_hit=hit,
        reserve_output=reserve,
    )
    traffic = Traffic(
        num_prompts=prompts,
        seq_in=seq_in,
        seq_out=seq_out,
        rate=rate,
        concurrency=concurrency,
        length_spread=spread,
    )
    shapes: list[StepShape] = []

    def record(shape: StepShape) -> float:
        shapes.append(shape)
        return 0.001 + 1e-5 * (shape.prefill_tokens + shape.decodes)

    try:
        run = simulate(config, traffic, record)
    except SimulationError as error:
        assert "KV blocks" in str(error)
        return
    for shape in shapes:
        assert shape.prefill_tokens + shape.decodes <= config.max_num_batched_tokens
        assert shape.decodes + shape.prefill_chunks <= seqs
    if concurrency is not None:
        assert run.peak_running <= concurrency
    assert run.requests == prompts
    for ttft, tpot, e2e in run.per_request_ms:
        assert 0 < ttft <= e2e
        assert tpot >= 0
    lengths = serving.request_lengths(traffic)
    assert run.output_tokens == sum(output for _, output in lengths)
    if reserve:
        assert run.preemptions == 0


def _model_costs(name: str) -> ModelCosts:
    from gpudesk.speed.estimate import KvFormat, model_costs
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.quant import QuantFormat

    return model_costs(shape_for(name), QuantFormat.BF16, KvFormat.FP16)


@given(
    model=st.sampled_from(
        ["llama-3.1-70b", "qwen3-30b-a3b", "gpt-oss-20b", "gemma-3-27b", "deepseek-r1"]
    ),
    gpus=st.sampled_from(
        [
            Gpus(3350.0, 989.0, 8, False, True, 450.0),
            Gpus(1008.0, 165.0, 1),
            Gpus(1008.0, 165.0, 4, True),
            Gpus(936.0, 142.0, 2, False, False, 31.5),
        ]
    ),
    decodes=st.integers(0, 400),
    prompt=st.one_of(st.just(0), st.integers(1, 16_384)),
    reach=st.floats(0.5, 30_000),
    context=st.floats(1, 30_000),
    expert_parallel=st.sampled_from([1, 2, 8]),
)
def test_the_simulators_step_cost_is_the_step_model(
    model: str,
    gpus: Gpus,
    decodes: int,
    prompt: int,
    reach: float,
    context: float,
    expert_parallel: int,
) -> None:
    """step_seconds_fn (constants worked out once) = step_time, for any step."""
    if decodes + prompt == 0:
        decodes = 1
    costs = _model_costs(model)
    eff = Efficiency(
        bandwidth=0.8, compute=0.7, layer_s=3e-5, kv_factor=1.1, hop_s=5e-5,
        sequence_s=1e-6, gemm_half=6000.0, attention=0.3, hbm=0.9,
    )  # fmt: skip
    shape = StepShape(prompt, prompt * reach, 1 if prompt else 0, decodes, decodes * context)
    fast = step_seconds_fn(costs, gpus, eff, expert_parallel=expert_parallel)
    reference = step_time(costs, gpus, eff, shape, expert_parallel=expert_parallel)
    assert fast(shape) == pytest.approx(reference.total_s, rel=1e-12)


def test_a_decode_step_is_the_fitted_decode_formula() -> None:
    costs = _model_costs("llama-3.1-70b")
    gpus = Gpus(3350.0, 989.0, 8, False, True, 450.0)
    eff = Efficiency(bandwidth=0.8, compute=0.7, layer_s=3e-5, sequence_s=1e-6, kv_factor=1.1)
    for batch, context in ((1, 512), (64, 1500), (256, 8000)):
        shape = StepShape(0, 0.0, 0, batch, batch * context)
        assert step_time(costs, gpus, eff, shape).total_s == pytest.approx(
            decode_step(costs, gpus, eff, batch=batch, context=context).total_s
        )


def test_mla_attends_in_the_latent_space_when_decoding() -> None:
    """DeepSeek-R1: a prompt's attention over 128 heads of 192 (QK) + 128 (PV) dims; a
    decoded token's over the 512-wide latent + 64 rope dims (absorbed), ten times the
    per-head width the hidden size would suggest."""
    deepseek = _model_costs("deepseek-r1")
    assert deepseek.attention_width == 128 * (192 + 128) // 2
    assert deepseek.decode_attention_width == 128 * (2 * 512 + 64) // 2
    assert deepseek.attention_flops_decode(1000) == pytest.approx(
        4.0 * deepseek.decode_attention_width * deepseek.full_layers * 1000
    )
    llama = _model_costs("llama-3.1-70b")
    assert llama.decode_attention_width == 0
    assert llama.attention_flops_decode(1000) == pytest.approx(
        4.0 * llama.attention_width * llama.full_layers * 1000
    )


def test_expert_parallelism_adds_two_all_to_alls_per_layer_for_a_mixture_only() -> None:
    from gpudesk.speed.step import expert_parallel_s

    gpus = Gpus(4800.0, 989.0, 8, False, True, 450.0)
    moe = _model_costs("deepseek-r1")
    assert expert_parallel_s(moe, gpus, 128, 1) == 0.0
    eight = expert_parallel_s(moe, gpus, 128, 8)
    sent = 128 * moe.hidden * 2 * 8 * 7 / 8  # tokens x hidden x bf16 x k, 7/8 leave
    assert eight > 2 * moe.layers * sent / (450e9 * 0.6)
    assert expert_parallel_s(moe, gpus, 256, 8) > eight
    assert expert_parallel_s(_model_costs("llama-3.1-70b"), gpus, 128, 8) == 0.0


def test_a_deployment_that_falls_behind_says_so() -> None:
    slow = simulate(_config(max_num_seqs=1), Traffic(num_prompts=60, seq_in=10, seq_out=20,
                                                     rate=20.0), constant)  # fmt: skip
    assert not slow.keeps_up  # 20 requests/s, one at a time for 0.2 s: the queue grows
    fast = simulate(_config(), Traffic(num_prompts=60, seq_in=10, seq_out=20, rate=2.0), constant)
    assert fast.keeps_up
