"""ShareGPT-shaped request lengths in the serving simulator: the sourced table, the draw
that matches a run's printed means within vLLM's filter, and what the tail does to a burst."""

from __future__ import annotations

import math
import statistics

import pytest
import reach
from hypothesis import given, strategies as st

from gpudesk.speed import sharegpt_lengths as sharegpt
from gpudesk.speed.serving import (
    SchedulerConfig,
    SimulationError,
    StepShape,
    Traffic,
    request_lengths,
    simulate,
)

#: Means printed by published ShareGPT runs in serving_runs.toml (total tokens over
#: completed requests): GPUStack's Qwen3 pages (217 / 201), the Llama 3.1 405B pages on
#: H100 (215 / 121) and MI300X (215 / 180); and the table's own source means (120 / 348).
RUN_MEANS = [(217, 201), (215, 121), (215, 180), (120, 348)]


def _sharegpt(seq_in: int, seq_out: int, *, prompts: int = 1000, seed: int = 0) -> Traffic:
    return Traffic(
        num_prompts=prompts, seq_in=seq_in, seq_out=seq_out, seed=seed, dataset="sharegpt"
    )


def test_the_table_is_a_quantile_function_within_vllms_filter() -> None:
    assert len(sharegpt.PROMPT_TOKENS) == len(sharegpt.OUTPUT_TOKENS) == len(sharegpt.PERCENTILES)
    assert sharegpt.PERCENTILES[0] == 0 and sharegpt.PERCENTILES[-1] == 1
    for table in (sharegpt.PERCENTILES, sharegpt.PROMPT_TOKENS, sharegpt.OUTPUT_TOKENS):
        assert list(table) == sorted(table)
    assert sharegpt.PROMPT_TOKENS[0] >= sharegpt.MIN_TOKENS
    assert sharegpt.OUTPUT_TOKENS[0] >= sharegpt.MIN_TOKENS
    assert sharegpt.PROMPT_TOKENS[-1] <= sharegpt.MAX_PROMPT_TOKENS
    assert sharegpt.OUTPUT_TOKENS[-1] <= sharegpt.MAX_TOTAL_TOKENS - sharegpt.MIN_TOKENS


def test_the_table_keeps_the_sources_means_and_medians() -> None:
    # the module docstring's figures for the filtered source: means 119.6 and 348.4,
    # medians 34 and 280
    for table, mean, median in (
        (sharegpt.PROMPT_TOKENS, 119.6, 34),
        (sharegpt.OUTPUT_TOKENS, 348.4, 280),
    ):
        shares = sharegpt.PERCENTILES
        table_mean = sum(
            (shares[k + 1] - shares[k]) * (table[k] + table[k + 1]) / 2
            for k in range(len(shares) - 1)
        )
        assert table_mean == pytest.approx(mean, abs=0.5)
        assert table[shares.index(0.5)] == median


@pytest.mark.parametrize(("seq_in", "seq_out"), RUN_MEANS)
def test_drawn_means_are_the_runs_means(seq_in: int, seq_out: int) -> None:
    lengths = request_lengths(_sharegpt(seq_in, seq_out))
    assert statistics.mean(p for p, _ in lengths) == pytest.approx(seq_in, rel=0.02)
    assert statistics.mean(o for _, o in lengths) == pytest.approx(seq_out, rel=0.02)


@pytest.mark.parametrize(("seq_in", "seq_out"), [*RUN_MEANS, (5, 5), (1000, 1000), (40, 900)])
def test_every_request_passes_vllms_filter(seq_in: int, seq_out: int) -> None:
    for prompt, output in request_lengths(_sharegpt(seq_in, seq_out)):
        assert sharegpt.MIN_TOKENS <= prompt <= sharegpt.MAX_PROMPT_TOKENS
        assert output >= sharegpt.MIN_TOKENS
        assert prompt + output <= sharegpt.MAX_TOTAL_TOKENS


def test_at_the_sources_means_the_shape_is_the_sources() -> None:
    lengths = request_lengths(_sharegpt(120, 348))
    prompts = sorted(p for p, _ in lengths)
    outputs = sorted(o for _, o in lengths)
    # medians of the source (34, 280) and a long tail: p99 well past the median
    assert statistics.median(prompts) == pytest.approx(34, rel=0.1)
    assert statistics.median(outputs) == pytest.approx(280, rel=0.1)
    assert prompts[989] > 15 * statistics.median(prompts)
    assert outputs[989] > 3.5 * statistics.median(outputs)


def test_lengths_are_the_same_for_a_seed_and_differ_between_seeds() -> None:
    first = request_lengths(_sharegpt(217, 201, seed=3))
    assert request_lengths(_sharegpt(217, 201, seed=3)) == first
    assert request_lengths(_sharegpt(217, 201, seed=4)) != first
    # the random dataset's draw is untouched: with no spread, every request alike
    alike = Traffic(num_prompts=4, seq_in=217, seq_out=201)
    assert request_lengths(alike) == [(217, 201)] * 4


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"dataset": "sharegpt", "length_spread": 0.5}, "random dataset"),
        ({"dataset": "ShareGPT"}, "'ShareGPT' is not one of"),
        ({"dataset": "sharegpt", "seq_in": 4}, "prompts averaging 4 tokens"),
        ({"dataset": "sharegpt", "seq_out": 1001}, "outputs averaging 1,001 tokens"),
        ({"seq_in": 1.5}, "whole numbers"),
        ({"num_prompts": 2.0}, "num_prompts 2.0"),
    ],
)
def test_bad_traffic_is_refused_with_the_value(changes: dict[str, object], words: str) -> None:
    fields: dict[str, object] = {"num_prompts": 10, "seq_in": 200, "seq_out": 200, **changes}
    with pytest.raises(SimulationError, match=words):
        Traffic(**fields).check()  # type: ignore[arg-type]


#: Traffic as the CLI and the serving-runs file give it: each field plausible ...
_PLAUSIBLE = st.fixed_dictionaries(
    {
        "num_prompts": st.integers(1, 1500),
        "seq_in": st.integers(5, 1000),
        "seq_out": st.integers(5, 1000),
        "length_spread": st.just(0.0),
        "dataset": st.sampled_from(["sharegpt", "sharegpt", "random"]),
        "seed": st.integers(-(2**40), 2**40),
    }
)
#: ... or one of them anything its type (or a file's number) can hold
_ONE_BAD_FIELD = st.one_of(
    st.none(),
    st.none(),
    st.tuples(st.just("num_prompts"), st.sampled_from([0, -1, 2.0, 100_001])),
    st.tuples(
        st.just("seq_in"),
        st.one_of(st.integers(-3, 1100), st.sampled_from([math.nan, 2.5, 300.0])),
    ),
    st.tuples(
        st.just("seq_out"), st.one_of(st.integers(-3, 1100), st.sampled_from([math.inf, 150.0]))
    ),
    st.tuples(st.just("length_spread"), st.floats()),
    st.tuples(st.just("dataset"), st.sampled_from(["sonnet", "", "ShareGPT"])),
)


@pytest.mark.reaches(drawn=20, refused=20)
@given(fields=_PLAUSIBLE, bad=_ONE_BAD_FIELD)
def test_any_traffic_is_drawn_within_bounds_or_refused(
    fields: dict[str, object], bad: tuple[str, object] | None
) -> None:
    if bad is not None:
        fields = {**fields, bad[0]: bad[1]}
    traffic = Traffic(**fields)  # type: ignore[arg-type]
    try:
        traffic.check()
    except SimulationError as error:
        reach.reached("refused")
        assert str(error)
        return
    lengths = request_lengths(traffic)
    reach.reached("drawn")
    assert len(lengths) == traffic.num_prompts
    assert all(prompt >= 1 and output >= 1 for prompt, output in lengths)
    if traffic.dataset == "sharegpt":
        for prompt, output in lengths:
            assert sharegpt.MIN_TOKENS <= prompt <= sharegpt.MAX_PROMPT_TOKENS
            assert output >= sharegpt.MIN_TOKENS
            assert prompt + output <= sharegpt.MAX_TOTAL_TOKENS


def test_a_burst_of_sharegpt_requests_drains_through_its_long_answers() -> None:
    # every request runs at once; a step costs 10 ms plus 20 us per sequence decoded
    # and 5 us per prompt token, so the run's length is set by its steps
    config = SchedulerConfig(max_num_seqs=1024, max_num_batched_tokens=8192, kv_blocks=200_000)

    def step(shape: StepShape) -> float:
        return 0.010 + 20e-6 * shape.decodes + 5e-6 * shape.prefill_tokens

    fixed = simulate(config, Traffic(num_prompts=1000, seq_in=217, seq_out=201), step)
    shaped = simulate(config, _sharegpt(217, 201), step)
    assert shaped.output_tokens == pytest.approx(fixed.output_tokens, rel=0.02)
    # all alike, the burst ends after ~201 full steps; ShareGPT's longest answers run
    # on at small batch for several times as many steps
    assert shaped.duration_s > 1.5 * fixed.duration_s
    assert shaped.mean_running < 0.6 * fixed.mean_running
    assert shaped.e2e_ms.p99 > 2 * shaped.e2e_ms.p50


@pytest.mark.reaches(accepted=10)
@given(
    dataset=st.sampled_from(["random", "sharegpt"]) | st.text(max_size=12),
    seq_in=st.integers(-5, 5000),
    seq_out=st.integers(-5, 5000),
    spread=st.sampled_from([0.0, 0.25]),
)
def test_a_speed_requests_dataset_is_checked_by_name(
    dataset: str, seq_in: int, seq_out: int, spread: float
) -> None:
    """``speed --dataset`` and the lengths it averages come from the command line: a
    request is either accepted as the simulator can draw it, or refused naming the flag."""
    from gpudesk.speed.estimate import Mode, SpeedInputError, SpeedRequest

    try:
        request = SpeedRequest(
            mode=Mode.SERVE,
            seq_in=seq_in,
            seq_out=seq_out,
            dataset=dataset,
            random_range_ratio=spread,
        ).resolved()
    except SpeedInputError as refused:
        assert refused.field in ("dataset", "seq_in", "seq_out", "random_range_ratio")
        return
    reach.reached("accepted")
    assert request.dataset in ("random", "sharegpt")
    if request.dataset == "sharegpt":
        traffic = _sharegpt(seq_in, seq_out, prompts=50)
        traffic.check()
        assert all(prompt >= 1 and output >= 1 for prompt, output in request_lengths(traffic))
