"""The speed model against the published measurements, out of source (leave one source out)."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from gpudesk.speed.data import Workload
from gpudesk.speed.fitting import (
    START,
    FittedParams,
    RowBatch,
    fitted_params,
    fresh_fit,
    fresh_rows,
    held_out_sources,
    log_error,
    loso_fits,
    replace,
    sources,
)
from gpudesk.speed.validation import (
    MIN_HELD_OUT_SOURCES,
    MIN_INSIDE_SHARE,
    TOLERANCE,
    check_out_of_source,
    overall_inside_share,
    summarise,
)

#: The out-of-source medians against the issue's targets (TOLERANCE): decode ×1.15
#: (×1.10 measured), prefill ×1.30 (×1.21), serve ×1.20 (×1.13), train ×1.20 (×1.17).
CURRENT_LIMIT = {
    Workload.DECODE: TOLERANCE[Workload.DECODE],
    Workload.SERVE: TOLERANCE[Workload.SERVE],
    Workload.PREFILL: TOLERANCE[Workload.PREFILL],
    Workload.TRAIN: TOLERANCE[Workload.TRAIN],
}


@pytest.fixture(scope="module")
def checked():  # type: ignore[no-untyped-def]
    return check_out_of_source()


@pytest.mark.parametrize("workload", list(CURRENT_LIMIT), ids=lambda item: item.value)
def test_out_of_source_median_miss(checked, workload: Workload) -> None:  # type: ignore[no-untyped-def]
    (summary,) = [item for item in summarise(checked, split=False) if item.workload is workload]
    assert summary.rows >= 8
    assert summary.median_abs_log <= CURRENT_LIMIT[workload], summary


def test_most_out_of_source_rows_fall_inside_the_range(checked) -> None:  # type: ignore[no-untyped-def]
    assert overall_inside_share(checked) >= MIN_INSIDE_SHARE
    for workload in (Workload.DECODE, Workload.PREFILL, Workload.SERVE, Workload.TRAIN):
        chosen = [item for item in checked if item.row.measurement.workload is workload]
        assert sum(item.inside for item in chosen) / len(chosen) >= MIN_INSIDE_SHARE, workload


def test_enough_sources_never_enter_the_fit() -> None:
    rows = fresh_rows()
    assert len(held_out_sources(rows)) >= MIN_HELD_OUT_SOURCES * len(sources(rows))


def test_a_source_never_helps_predict_itself() -> None:
    rows = fresh_rows()
    fits = loso_fits(rows)
    held = set(held_out_sources(rows))
    for source in sources(rows):
        used = [
            row
            for row in rows
            if row.request is not None
            and not row.measurement.held_out
            and (source in held or row.source != source)
        ]
        assert fits[source].data["inference"]["*/*/*"]["rows"] == len(used), source


def test_the_model_is_not_a_lookup_table(checked) -> None:  # type: ignore[no-untyped-def]
    # A fit of the physics leaves residuals; a table of the figures would not.
    errors = [
        abs(item.log_ratio) for item in checked if item.row.measurement.workload is Workload.DECODE
    ]
    assert sum(error > math.log(1.05) for error in errors) > len(errors) / 5


def test_vectorised_errors_match_the_physics_row_by_row() -> None:
    rows = [row for row in fresh_rows() if row.request is not None]
    batch = RowBatch(rows)
    variants = (replace(START, compute=1.8, gemm_half=0.0), replace(START, hbm=0.3))
    for eff in (START, *variants, replace(START, older_layer_s=2e-4)):
        fast = batch.log_errors(eff)
        for value, row in zip(fast, rows, strict=True):
            assert value == pytest.approx(log_error(row, eff), abs=1e-9)


def test_stored_fit_matches_a_fresh_fit_of_the_data() -> None:
    stored = fitted_params().data
    fresh = json.loads(json.dumps(fresh_fit()))
    assert stored.keys() == fresh.keys()
    for section in stored:
        assert stored[section].keys() == fresh[section].keys(), section
        for key, values in stored[section].items():
            for name, value in values.items():
                # rel 1e-3, not float equality: the fixed-iteration Nelder-Mead carries
                # last-bit differences between numpy releases into the fourth digit (numpy
                # 2.4.6 moved a TensorRT-LLM compute fraction by 1.3e-4); a change of the
                # data or the physics moves the fit far more than that.
                assert fresh[section][key][name] == pytest.approx(value, rel=1e-3), (
                    f"fitted.json is stale at {section}/{key}/{name}: refit with "
                    "python -m gpudesk.speed.fitting"
                )


def test_fp8_training_gain_comes_from_the_data() -> None:
    # NeMo and llm-foundry measure FP8 x1.3-1.5 over BF16 on the same GPU, not the x2 of
    # the datasheet peaks: FP8 speeds the matmuls, not the memory-bound rest.
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.hardware import Precision, rates_for

    (entry,) = [
        item for item in load_catalog([], include_user=False).entries if item.id == "h100-sxm5"
    ]
    fitted = fitted_params()
    rates = rates_for(entry)
    bf16, _, _ = fitted.train_utilisation(rates, Precision.FP16, moe=False, count=8, hidden=4096)
    fp8, words, _ = fitted.train_utilisation(rates, Precision.FP8, moe=False, count=8, hidden=4096)
    assert 1.15 < fp8 / bf16 < 1.6
    assert "FP8" in words and "memory-bound" in words


def test_wider_models_and_denser_routing_train_at_a_higher_share() -> None:
    """The width and routing terms come out of the data with the physical sign: larger
    GEMMs keep a GPU busier; sparser routing gives each expert fewer tokens."""
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.hardware import Precision, rates_for

    (entry,) = [
        item for item in load_catalog([], include_user=False).entries if item.id == "h100-sxm5"
    ]
    fitted, rates = fitted_params(), rates_for(entry)

    def share(**extra: object) -> float:
        value, _, _ = fitted.train_utilisation(rates, Precision.FP16, count=8, **extra)  # type: ignore[arg-type]
        return value

    assert share(moe=False, hidden=8192) > share(moe=False, hidden=2048)
    dense_routing = share(moe=True, hidden=4096, experts=8, active_experts=2)
    assert dense_routing > share(moe=True, hidden=4096, experts=256, active_experts=8)


def test_deepseek_v3_fp8_on_2048_h800_is_within_x1_5_of_its_report(checked) -> None:  # type: ignore[no-untyped-def]
    (item,) = [
        item
        for item in checked
        if item.row.measurement.model == "deepseek-v3" and item.row.measurement.count == 2048
    ]
    assert item.row.measurement.held_out  # the report never enters the fit
    assert abs(item.log_ratio) < math.log(1.5)
    assert 1543.2 / 1.5 < item.estimate < 1543.2 * 1.5


def test_ranges_come_from_out_of_source_residuals() -> None:
    spread = fitted_params().data["spread"]
    for workload in ("decode", "prefill", "serve", "train"):
        assert spread[workload]["low_ratio"] < 1 < spread[workload]["high_ratio"]
    median = statistics.median(
        abs(item.log_ratio) for item in check_out_of_source() if item.row.request is not None
    )
    # the range is wider than the typical out-of-source miss, not the in-sample one
    assert math.log(spread["decode"]["high_ratio"] / spread["decode"]["low_ratio"]) > median


def test_unknown_engine_falls_back_with_a_note() -> None:
    from catalog_factory import make_entry

    from gpudesk.speed.estimate import Engine
    from gpudesk.speed.hardware import rates_for

    params = FittedParams(fitted_params().data)
    _, words, own = params.inference(Engine.TRANSFORMERS, rates_for(make_entry("x")))
    assert not own
    assert "no published transformers measurement" in words


@pytest.mark.parametrize("engine_name", ["tensorrt-llm", "vllm", "llama.cpp"])
def test_an_engine_with_its_own_rows_is_its_own_curve_hyphen_or_not(engine_name: str) -> None:
    # "tensorrt-llm" was read as engine "tensorrt": its own 28 rows were called
    # "no published measurement" and its range widened as an unmeasured engine's.
    from catalog_factory import make_entry

    from gpudesk.speed.estimate import Engine
    from gpudesk.speed.hardware import rates_for

    params = FittedParams(fitted_params().data)
    entry = make_entry("x", vendor="NVIDIA", fp16_tensor_tflops=989, bandwidth_gbs=3350)
    _, words, own = params.inference(Engine(engine_name), rates_for(entry))
    assert own
    assert "no published" not in words or "measurement for" in words


def test_moe_at_scale_and_blackwell_fp8_training_hold_out_of_source(checked) -> None:  # type: ignore[no-untyped-def]
    """NeMo AutoModel's DeepSeek-V3 BF16 on 256 and 1,024 H100s (1,002 and 865 tokens/s/GPU)
    was estimated x2.3-2.8 too fast and NeMo 25.02's B200 FP8 rows x0.71-0.75 too slow while
    FP8 and large mixtures of experts had one source each; with Megatron-Bridge 25.11 in the
    fit, both stay within x1.5 of a fit that never saw them."""
    chosen = [
        item
        for item in checked
        if item.row.measurement.workload is Workload.TRAIN
        and (
            (item.row.measurement.model == "deepseek-v3" and "Automodel" in item.row.source)
            or (item.row.measurement.gpu == "b200" and "nemo-framework" in item.row.source)
        )
    ]
    assert len(chosen) == 6
    for item in chosen:
        assert abs(item.log_ratio) < math.log(1.5), (item.row.measurement, item.estimate)


def test_the_fits_serving_rows_run_as_the_simulator_runs_them() -> None:
    # issue 41 point 2: the fit prices a serve row by the engine's steady state (prompts
    # batched within the token budget beside the decodes), not each prompt alone, and that
    # steady state follows the scheduler simulator the estimates run
    from gpudesk.speed.fitting import predict, steady_state
    from gpudesk.speed.under_load import engine_limits
    from gpudesk.speed.validation import check_row

    fitted = fitted_params()
    rows = [row for row in fresh_rows() if row.measurement.workload is Workload.SERVE]
    assert len(rows) >= 40
    ratios = []
    for row in rows:
        eff, _ = fitted.efficiency_for_row(row)
        ratios.append(predict(row, eff) / check_row(row, fitted).estimate)
        steady = steady_state(row)
        assert row.request is not None
        budget = engine_limits(
            row.request.engine.value, gpu_name=row.rates.name, memory_gb=row.rates.memory_gb
        ).max_num_batched_tokens
        # a step never carries more than the engine's budget of tokens
        assert steady.decodes + steady.mixed.prefill_tokens <= budget
        assert 0 < steady.busy <= 1
    ratios.sort()
    assert 0.95 <= statistics.median(ratios) <= 1.05
    assert ratios[0] >= 0.75 and ratios[-1] <= 1.25
