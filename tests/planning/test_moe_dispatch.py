"""A mixture of experts' dispatch costs and multi-head latent attention's replicated KV
cache in the step model, and the out-of-source choice of the dispatch costs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from gpudesk.speed.estimate import KvFormat, model_costs
from gpudesk.speed.moe_fit import RunRatios, best, choose, grid, loss, run_ratios, stored
from gpudesk.speed.physics import (
    ANY_VENDOR,
    Efficiency,
    Gpus,
    ModelCosts,
    MoeDispatch,
    decode_step,
    dispatch_for,
    dispatch_override,
    fitted_dispatch,
    kv_read_factor,
    moe_dispatch_s,
    prefill_time,
    touched_experts,
    with_dispatch,
)
from gpudesk.speed.serving_validation import current_build, load_runs
from gpudesk.speed.shapes import shape_for
from gpudesk.workload.quant import QuantFormat

EFF = Efficiency(bandwidth=0.8, compute=0.7, layer_s=3e-5)
H200_X8 = Gpus(4800.0, 989.0, 8, False, True, 450.0)


def _costs(name: str) -> ModelCosts:
    return model_costs(shape_for(name), QuantFormat.FP8, KvFormat.FP16)


def test_a_dense_model_pays_no_dispatch() -> None:
    llama = _costs("llama-3.1-70b")
    eff = Efficiency(bandwidth=0.8, compute=0.7, layer_s=3e-5, moe_layer_s=1e-3, expert_s=1e-3)
    assert moe_dispatch_s(llama, 64, eff) == 0.0


@given(tokens=st.integers(1, 20_000), expert_parallel=st.sampled_from([1, 2, 4, 8]))
def test_dispatch_grows_with_the_experts_touched_and_splits_over_expert_parallel(
    tokens: int, expert_parallel: int
) -> None:
    deepseek = _costs("deepseek-r1")
    assert deepseek.experts == 256 and deepseek.active_experts == 8
    touched = touched_experts(deepseek, tokens)
    assert 8 <= touched <= 256
    assert touched_experts(deepseek, tokens + 1) >= touched
    eff = Efficiency(bandwidth=0.8, compute=0.7, layer_s=0.0, moe_layer_s=40e-6, expert_s=0.2e-6)
    seconds = moe_dispatch_s(deepseek, tokens, eff, expert_parallel=expert_parallel)
    expected = deepseek.layers * (40e-6 + 0.2e-6 * touched / expert_parallel)
    assert seconds == pytest.approx(expected, rel=1e-12)


def test_one_token_touches_its_k_experts_and_a_large_step_all_of_them() -> None:
    qwen = _costs("qwen3-30b-a3b")
    assert touched_experts(qwen, 1) == pytest.approx(8)
    assert touched_experts(qwen, 8192) == pytest.approx(128, rel=1e-6)


def test_decode_and_prefill_carry_the_dispatch_cost_of_the_efficiency() -> None:
    deepseek = _costs("deepseek-r1")
    bare_decode = decode_step(deepseek, H200_X8, EFF, batch=32, context=2000).total_s
    bare_prefill = prefill_time(deepseek, H200_X8, EFF, tokens=2048).total_s
    with dispatch_override({"nvidia": MoeDispatch(50e-6, 0.1e-6)}):
        eff = with_dispatch(EFF, "nvidia")
        assert with_dispatch(EFF, "amd") == EFF  # no entry for amd, and no "*"
    assert (eff.moe_layer_s, eff.expert_s) == (50e-6, 0.1e-6)
    decode = decode_step(deepseek, H200_X8, eff, batch=32, context=2000).total_s
    prefill = prefill_time(deepseek, H200_X8, eff, tokens=2048).total_s
    assert decode - bare_decode == pytest.approx(moe_dispatch_s(deepseek, 32, eff))
    assert prefill - bare_prefill == pytest.approx(moe_dispatch_s(deepseek, 2048, eff))
    assert dispatch_for("nvidia") == fitted_dispatch()["nvidia"]  # the override ended


def test_each_vendor_family_has_its_costs_and_others_take_the_pooled_ones() -> None:
    table = fitted_dispatch()
    assert {ANY_VENDOR, "nvidia", "amd"} <= set(table)
    assert dispatch_for("NVIDIA") == table["nvidia"]
    assert dispatch_for("intel") == table[ANY_VENDOR]
    assert all(cost.layer_s >= 0 and cost.expert_s >= 0 for cost in table.values())


def test_the_latent_kv_cache_is_read_by_every_tensor_parallel_gpu() -> None:
    """MLA's one latent per token cannot be split by heads: at TP-8 each GPU reads all of
    it, so a long-context decode step's KV time is eight times a split cache's."""
    deepseek = _costs("deepseek-r1")
    llama = _costs("llama-3.1-70b")
    assert deepseek.kv_replicated and not llama.kv_replicated
    assert kv_read_factor(deepseek, H200_X8) == 8.0
    assert kv_read_factor(deepseek, Gpus(4800.0, 989.0, 1)) == 1.0
    assert kv_read_factor(deepseek, Gpus(4800.0, 989.0, 8, layer_split=True)) == 1.0
    assert kv_read_factor(llama, H200_X8) == 1.0
    eff = Efficiency(bandwidth=1.0, compute=1.0, layer_s=0.0)
    short = decode_step(deepseek, H200_X8, eff, batch=64, context=100).memory_s
    long = decode_step(deepseek, H200_X8, eff, batch=64, context=100_100).memory_s
    kv_per_gpu = 64 * deepseek.kv_bytes(100_100) - 64 * deepseek.kv_bytes(100)
    assert long - short == pytest.approx(kv_per_gpu / (4800e9), rel=1e-9)


def _rows(losses: dict[str, tuple[str, list[float]]]) -> list[RunRatios]:
    return [
        RunRatios(source, source, vendor, index, tuple((value, None) for value in values))
        for index, (source, (vendor, values)) in enumerate(losses.items())
    ]


def test_the_choice_minimises_the_median_and_each_source_is_judged_without_itself() -> None:
    points = [MoeDispatch(0.0, 0.0), MoeDispatch(1e-5, 0.0), MoeDispatch(2e-5, 0.0)]
    rows = _rows(
        {
            "a": ("nvidia", [0.9, 0.1, 0.5]),
            "b": ("nvidia", [0.8, 0.2, 0.6]),
            "c": ("amd", [0.1, 0.9, 0.7]),
        }
    )
    assert loss(rows, 1) == pytest.approx(0.2)
    assert best(rows, 3) == 1
    result = choose(rows, points)
    assert result["chosen"][ANY_VENDOR] == {"layer_s": 1e-5, "expert_s": 0.0}
    assert result["chosen"]["nvidia"] == {"layer_s": 1e-5, "expert_s": 0.0}
    assert result["chosen"]["amd"] == {"layer_s": 0.0, "expert_s": 0.0}
    # without "a": pooled medians 0.45, 0.55, 0.65 pick the first point; nvidia's (b) the second
    assert result["held_out"]["a"][ANY_VENDOR] == {"layer_s": 0.0, "expert_s": 0.0}
    assert result["held_out"]["a"]["nvidia"] == {"layer_s": 1e-5, "expert_s": 0.0}
    # without "c" no amd run is left: amd takes the pooled choice
    assert "amd" not in result["held_out"]["c"]


def test_the_stored_choice_is_the_stored_grids_best() -> None:
    data = stored()
    points = [MoeDispatch(point["layer_s"], point["expert_s"]) for point in data["grid"]]
    assert points == grid()
    rows = [
        RunRatios(
            run["source"],
            run["label"],
            run["vendor"],
            run["index"],
            tuple(tuple(pair) for pair in run["logs"]),
        )
        for run in data["runs"]
    ]
    assert len(rows) >= 20 and len({row.source for row in rows}) >= 5
    assert {row.vendor for row in rows} >= {"nvidia", "amd"}
    again = choose(rows, points)
    assert again["chosen"] == data["chosen"]
    assert again["held_out"] == data["held_out"]
    for vendor, value in data["loss"].items():
        assert math.isclose(again["loss"][vendor], value, rel_tol=1e-3)


def test_the_stored_grid_is_what_the_code_estimates_today() -> None:
    """Two runs at three grid points re-estimated: regenerate with
    ``python -m gpudesk.speed.moe_fit`` when the step model changes."""
    from gpudesk.catalog.loader import load_catalog

    data = stored()
    entries = {entry.id: entry for entry in load_catalog([], include_user=False).entries}
    picked = [0, len(data["grid"]) // 2, len(data["grid"]) - 1]
    points = [MoeDispatch(data["grid"][i]["layer_s"], data["grid"][i]["expert_s"]) for i in picked]
    runs = [
        (index, run)
        for index, run in enumerate(load_runs())
        if current_build(run) and run["model"] == "deepseek-r1"
    ]
    checked = 0
    for index, run in (runs[0], runs[-1]):
        fresh = run_ratios(run, index, entries, points)
        assert fresh is not None
        stored_row = next(row for row in data["runs"] if row["index"] == index)
        assert stored_row["label"] == fresh.label
        for point, logs in zip(picked, fresh.logs, strict=True):
            for now, then in zip(logs, stored_row["logs"][point], strict=True):
                assert (now is None) == (then is None)
                if now is not None:
                    assert now == pytest.approx(then, abs=2e-4)
                    checked += 1
    assert checked >= 6


def test_runs_of_builds_before_the_simulated_scheduler_are_told_apart() -> None:
    import datetime

    assert not current_build({"published": datetime.date(2024, 12, 5)})
    assert current_build({"published": datetime.date(2025, 9, 1)})
    runs = load_runs()
    assert any(current_build(run) for run in runs)
    assert any(not current_build(run) for run in runs)


def _serve_basis(model: str, gpu: str) -> str:
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.estimate import Engine, Mode, SpeedRequest
    from gpudesk.speed.planner import estimates_for_entries

    (entry,) = [e for e in load_catalog([], include_user=False).entries if e.id == gpu]
    request = SpeedRequest(
        mode=Mode.SERVE, engine=Engine.VLLM, quant=QuantFormat.FP8, count=8, tp=8,
        seq_in=1024, seq_out=1024, concurrency=32, num_prompts=64,
    ).resolved()  # fmt: skip
    (estimate,) = estimates_for_entries([entry], _costs(model), request)
    return estimate.basis


def test_the_basis_says_what_the_dispatch_and_the_latent_cache_cost() -> None:
    deepseek = _serve_basis("deepseek-r1", "h200-sxm")
    nvidia = fitted_dispatch()["nvidia"]
    assert f"{nvidia.layer_s * 1e6:.0f} us per MoE layer" in deepseek
    assert "for nvidia GPUs" in deepseek
    assert "read whole by each of the 8 GPUs" in deepseek
    llama = _serve_basis("llama-3.1-70b", "h200-sxm")
    assert "MoE layer" not in llama and "latent KV" not in llama
