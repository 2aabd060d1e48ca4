"""The highest rate at an SLO: the search against a scan of rates, its shortcuts while
ranking (runs stopped once decided, runs asked for twice made once, a wider bracket), and
the early verdict against the full run's."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
import reach
from hypothesis import given, strategies as st

from gpudesk.speed import under_load
from gpudesk.speed.serving import (
    SchedulerConfig,
    ShareTarget,
    SimulationError,
    StepShape,
    Traffic,
    meets_target,
    simulate,
)
from gpudesk.speed.under_load import (
    RATE_BRACKET,
    RATE_TOLERANCE,
    EngineLimits,
    Layout,
    LoadSpec,
    Slo,
    max_rate_at_slo,
    ranking,
    serve_under_load,
)

#: the ranking's bracket (planner.RANK_RATE_TOLERANCE)
WIDE = RATE_BRACKET ** (-(0.5**2))


def step(shape: StepShape) -> float:
    """A step that grows with the prompt tokens and the sequences decoded."""
    return 0.004 + 2e-5 * shape.prefill_tokens + 4e-4 * shape.decodes


CONFIG = SchedulerConfig(max_num_seqs=32, max_num_batched_tokens=2048, kv_blocks=4000)

#: (SLO, layout): each has a highest rate below the saturated one
CASES = [
    (Slo(ttft_ms=200, tpot_ms=12), Layout()),
    (Slo(ttft_ms=200, tpot_ms=12), Layout(dp=2)),
    (Slo(tpot_ms=10), Layout()),
    (Slo(tpot_ms=10, share=0.95), Layout(dp=2)),
]


def _load(slo: Slo, rate: float = math.inf) -> LoadSpec:
    return LoadSpec(seq_in=300, seq_out=60, num_prompts=200, slo=slo, length_spread=0.3, rate=rate)


def _meets(load: LoadSpec, layout: Layout, rate: float) -> bool:
    assert load.slo is not None
    run = simulate(CONFIG, under_load._traffic(load, layout, rate), step)
    share = run.share_meeting(
        ttft_ms=load.slo.ttft_ms, tpot_ms=load.slo.tpot_ms, e2e_ms=load.slo.e2e_ms
    )
    return share >= load.slo.share


def _saturated(load: LoadSpec, layout: Layout) -> float:
    run = simulate(CONFIG, under_load._traffic(load, layout, math.inf), step)
    return run.requests_per_s * layout.dp


def _scan(load: LoadSpec, layout: Layout, answer: float) -> tuple[float, float]:
    """A scan of 40 rates from half the answer to the saturated rate: the lowest that
    misses the SLO and the highest below it that meets it."""
    low, high = answer / 2, _saturated(load, layout)
    rates = [low * (high / low) ** (index / 39) for index in range(40)]
    verdicts = [_meets(load, layout, rate) for rate in rates]
    first_miss = next(index for index, met in enumerate(verdicts) if not met)
    assert first_miss > 0, "the scan starts below the crossing"
    return rates[first_miss - 1], rates[first_miss]


@pytest.fixture
def simulations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The rates under_load simulates (to the end or until decided)."""
    rates: list[float] = []

    def counted_simulate(config: SchedulerConfig, traffic: Traffic, cost: Callable[..., float]):  # type: ignore[no-untyped-def]
        rates.append(traffic.rate)
        return simulate(config, traffic, cost)

    def counted_meets(config: SchedulerConfig, traffic: Traffic, cost, target):  # type: ignore[no-untyped-def]
        rates.append(traffic.rate)
        return meets_target(config, traffic, cost, target)

    monkeypatch.setattr(under_load, "simulate", counted_simulate)
    monkeypatch.setattr(under_load, "meets_target", counted_meets)
    yield rates


@pytest.mark.parametrize(("slo", "layout"), CASES)
def test_the_search_finds_the_crossing_a_scan_of_rates_finds(slo: Slo, layout: Layout) -> None:
    load = _load(slo)
    answer, curve = max_rate_at_slo(CONFIG, load, layout, step)
    assert answer is not None and answer < _saturated(load, layout)
    assert _meets(load, layout, answer)
    # a rate at most the bracket above the answer misses the SLO
    assert any(answer < rate <= answer * RATE_TOLERANCE * (1 + 1e-9) for rate, *_ in curve)
    assert all((share >= slo.share) == (rate <= answer) for rate, share, *_ in curve)
    last_met, first_missed = _scan(load, layout, answer)
    # the scan's crossing and the search's overlap
    assert answer <= first_missed
    assert answer * RATE_TOLERANCE >= last_met


@pytest.mark.parametrize(("slo", "layout"), CASES)
def test_ranking_gives_the_same_answer_with_fewer_simulated_requests(
    slo: Slo, layout: Layout, simulations: list[float]
) -> None:
    load = _load(slo)
    alone, _ = max_rate_at_slo(CONFIG, load, layout, step)
    made_alone = len(simulations)
    with ranking():
        ranked, curve = max_rate_at_slo(CONFIG, load, layout, step)
    assert ranked == alone
    assert len(simulations) - made_alone == made_alone
    # runs stopped once decided are not in the curve: it has the rates run to the end
    assert len(curve) < made_alone


@pytest.mark.parametrize(("slo", "layout"), CASES)
def test_the_rankings_wider_bracket_still_holds_the_crossing(slo: Slo, layout: Layout) -> None:
    load = _load(slo)
    with ranking(rate_tolerance=WIDE):
        answer, _ = max_rate_at_slo(CONFIG, load, layout, step)
    assert answer is not None
    assert _meets(load, layout, answer)
    last_met, first_missed = _scan(load, layout, answer)
    assert answer <= first_missed
    assert answer * WIDE >= last_met


@pytest.mark.parametrize(("slo", "layout"), CASES)
def test_a_known_run_bounds_the_search_and_is_not_made_again(
    slo: Slo, layout: Layout, simulations: list[float]
) -> None:
    saturated = _saturated(_load(slo), layout)
    no_saturated_run = 0
    for share_of_saturated in (0.3, 0.8, 1.5):
        rate = saturated * share_of_saturated
        load = _load(slo, rate)
        run = simulate(CONFIG, under_load._traffic(load, layout, rate), step)
        simulations.clear()
        answer, curve = max_rate_at_slo(CONFIG, load, layout, step, known=((rate, run),))
        assert rate not in simulations
        assert answer is not None
        assert _meets(load, layout, answer)
        assert any(answer < other <= answer * RATE_TOLERANCE * (1 + 1e-9) for other, *_ in curve)
        if not _meets(load, layout, rate) and answer <= run.requests_per_s * layout.dp:
            # below a rate that misses it and what that run served, no saturated run
            assert math.inf not in simulations
            no_saturated_run += 1
    assert no_saturated_run >= 1


def test_a_deployment_judged_again_while_ranking_is_simulated_once(
    simulations: list[float],
) -> None:
    limits = EngineLimits(max_num_seqs=32, max_num_batched_tokens=2048, source="test")
    load = _load(Slo(ttft_ms=200, tpot_ms=12), rate=10.0)
    plain = replace(load, slo=None)
    with ranking():
        first = serve_under_load(step, Layout(), limits, CONFIG.kv_blocks, plain)
        made = len(simulations)
        judged = serve_under_load(step, Layout(), limits, CONFIG.kv_blocks, load)
    assert made == 1
    assert judged.run == first.run
    # the search began from that run: no second run at 10 req/s
    assert simulations.count(10.0) == 1
    assert judged.max_rate_at_slo is not None
    outside = serve_under_load(step, Layout(), limits, CONFIG.kv_blocks, load)
    assert outside.max_rate_at_slo is not None
    assert abs(judged.max_rate_at_slo / outside.max_rate_at_slo - 1) <= RATE_TOLERANCE - 1


def test_no_rate_meets_an_slo_that_a_lone_request_misses() -> None:
    load = _load(Slo(ttft_ms=1.0))
    assert max_rate_at_slo(CONFIG, load, Layout(), step)[0] is None
    with ranking(rate_tolerance=WIDE):
        assert max_rate_at_slo(CONFIG, load, Layout(), step)[0] is None
        assert max_rate_at_slo(CONFIG, _load(Slo(ttft_ms=1.0), 5.0), Layout(), step)[0] is None


@pytest.mark.reaches(met=20, missed=20, refused=2, at_the_margin=10)
@given(
    prompts=st.integers(1, 150),
    seq_in=st.integers(1, 400),
    seq_out=st.integers(1, 80),
    rate=st.sampled_from([math.inf, 2.0, 20.0, 80.0]),
    concurrency=st.one_of(st.none(), st.integers(1, 8)),
    spread=st.sampled_from([0.0, 0.5]),
    seqs=st.integers(1, 16),
    blocks=st.integers(10, 400),
    ttft_ms=st.one_of(st.none(), st.floats(5, 3000)),
    tpot_ms=st.one_of(st.none(), st.floats(1, 40)),
    e2e_ms=st.one_of(st.none(), st.floats(10, 8000)),
    share=st.sampled_from([0.5, 0.9, 0.95, 1.0]),
    margin=st.sampled_from([None, -1, 0, 1]),
)
def test_the_early_verdict_is_the_full_runs(
    prompts: int,
    seq_in: int,
    seq_out: int,
    rate: float,
    concurrency: int | None,
    spread: float,
    seqs: int,
    blocks: int,
    ttft_ms: float | None,
    tpot_ms: float | None,
    e2e_ms: float | None,
    share: float,
    margin: int | None,
) -> None:
    """``margin``: the share set at the requests the full run met, one fewer or one more
    (the verdict is decided by the last request judged)."""
    config = SchedulerConfig(max_num_seqs=seqs, max_num_batched_tokens=512, kv_blocks=blocks)
    traffic = Traffic(
        num_prompts=prompts,
        seq_in=seq_in,
        seq_out=seq_out,
        rate=rate,
        concurrency=concurrency,
        length_spread=spread,
    )
    try:
        full = simulate(config, traffic, step)
    except SimulationError:
        with pytest.raises(SimulationError):
            meets_target(config, traffic, step, ShareTarget(ttft_ms, tpot_ms, e2e_ms, share))
        reach.reached("refused")
        return
    met_share = full.share_meeting(ttft_ms=ttft_ms, tpot_ms=tpot_ms, e2e_ms=e2e_ms)
    if margin is not None and 0 < round(met_share * prompts) + margin <= prompts:
        share = (round(met_share * prompts) + margin) / prompts
        reach.reached("at_the_margin")
    expected = met_share >= share
    target = ShareTarget(ttft_ms, tpot_ms, e2e_ms, share)
    assert meets_target(config, traffic, step, target) == expected
    reach.reached("met" if expected else "missed")


def test_the_slo_ranking_searches_once_per_gpu_and_near_one_gpus_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.estimate import KvFormat, Mode, SpeedRequest, model_costs
    from gpudesk.speed.planner import RANK_RATE_TOLERANCE, estimates_for_entries, rank_catalog
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.quant import QuantFormat

    by_id = {entry.id: entry for entry in load_catalog().entries}
    entries = [by_id[gpu] for gpu in ("h100-sxm5", "l40s", "b200")]
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat.FP8, KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.SERVE,
        quant=QuantFormat.FP8,
        seq_in=1000,
        seq_out=1000,
        rate=4.0,
        slo_ttft_ms=500.0,
        slo_tpot_ms=50.0,
    )
    searched: list[Layout] = []
    search = under_load.max_rate_at_slo

    def counted(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        searched.append(args[2])  # type: ignore[arg-type]
        return search(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(under_load, "max_rate_at_slo", counted)
    ranked = rank_catalog(entries, costs, request).results
    # one search per GPU, on the count and layout kept: none for the counts passed over
    # (one B200 keeps up with the 100 requests that choose the count, not with 1,000)
    assert len(searched) == len(ranked) == 3
    kept = sorted(tuple(item.layout.values()) for item in ranked if item.layout is not None)
    assert sorted(tuple(layout.as_dict().values()) for layout in searched) == kept
    monkeypatch.setattr(under_load, "max_rate_at_slo", search)
    for item in ranked:
        assert item.layout is not None and item.max_rate_at_slo is not None
        alone = request.model_copy(update={"count": item.count, **item.layout})
        (one,) = estimates_for_entries([by_id[item.gpu_id]], costs, alone)
        assert one.max_rate_at_slo is not None
        assert one.goodput_rps == item.goodput_rps
        assert abs(item.max_rate_at_slo / one.max_rate_at_slo - 1) <= RANK_RATE_TOLERANCE - 1


def test_at_a_rate_the_slo_ranking_keeps_the_fewest_gpus_that_meet_it() -> None:
    """Two MI300X copies keep up with 4 requests/s of Llama 3.1 70B but decode each request
    too slowly for a 50 ms TPOT; one instance over four meets the SLO for nearly all of
    them. The ranking compares layouts and counts by the share meeting the SLO at the rate
    (from runs it makes anyway), so it keeps the four, not the two that only keep up."""
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.estimate import KvFormat, Mode, SpeedRequest, model_costs
    from gpudesk.speed.planner import rank_catalog
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.quant import QuantFormat

    by_id = {entry.id: entry for entry in load_catalog().entries}
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat.FP8, KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.SERVE, quant=QuantFormat.FP8, seq_in=1000, seq_out=1000, rate=4.0,
        slo_ttft_ms=500.0, slo_tpot_ms=50.0,
    )  # fmt: skip
    (judged,) = rank_catalog([by_id["mi300x"]], costs, request).results
    assert judged.goodput_rps is not None and judged.requests_per_s
    assert judged.goodput_rps / judged.requests_per_s >= 0.9
    assert judged.layout is not None and judged.layout["tp"] >= 2
    without = request.model_copy(update={"slo_ttft_ms": None, "slo_tpot_ms": None})
    (plain,) = rank_catalog([by_id["mi300x"]], costs, without).results
    assert plain.count <= judged.count  # keeping up alone needs no more GPUs


def test_only_tensorrt_llm_reserves_a_requests_whole_output() -> None:
    from gpudesk.speed.under_load import engine_limits

    trt = engine_limits("tensorrt-llm", gpu_name="NVIDIA H200", memory_gb=141)
    assert trt.reserve_output and "GUARANTEED_NO_EVICT" in trt.source
    for engine in ("vllm", "llama.cpp", "transformers"):
        assert not engine_limits(engine, gpu_name="NVIDIA H200", memory_gb=141).reserve_output
