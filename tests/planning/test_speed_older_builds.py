"""Older llama.cpp builds: their rows teach the fit, estimates are for current builds."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, strategies as st

from gpudesk.speed.data import CURRENT_BUILDS_FROM, Measurement, Workload
from gpudesk.speed.estimate import KvFormat, model_costs
from gpudesk.speed.fitting import (
    START,
    Row,
    fit_efficiency,
    fitted_params,
    fresh_rows,
    older_factor,
    predict,
    replace,
)
from gpudesk.speed.physics import unfused_scores_bytes
from gpudesk.speed.planner import estimate_for
from gpudesk.speed.shapes import shape_for
from gpudesk.speed.validation import check_row
from gpudesk.workload.quant import QuantFormat


def _decode(engine: str, build_year: int | None) -> Measurement:
    return Measurement(
        source="https://example.org/table",
        title="t",
        workload=Workload.DECODE,
        engine=engine,
        gpu="rtx-4090",
        model="llama-3.1-8b",
        quant="q4_0",
        seq_out=128,
        context=64,
        value=100.0,
        unit="tokens/s",
        build_year=build_year,
    )


@given(
    engine=st.sampled_from(["llama.cpp", "vllm", "tensorrt-llm"]),
    year=st.one_of(st.none(), st.integers(min_value=2023, max_value=2030)),
)
def test_only_a_llama_cpp_build_before_the_current_year_is_older(
    engine: str, year: int | None
) -> None:
    expected = engine == "llama.cpp" and year is not None and year < CURRENT_BUILDS_FROM
    assert _decode(engine, year).older_build is expected


def test_a_build_year_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="build_year"):
        _decode("llama.cpp", 1999)


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return [row for row in fresh_rows() if row.request is not None]


def test_an_older_build_decodes_slower_by_the_fitted_cost_per_layer(rows: list[Row]) -> None:
    older = next(row for row in rows if row.measurement.older_build)
    eff = replace(START, older_layer_s=100e-6)
    as_current = predict(older, replace(eff, older_layer_s=0.0))
    as_older = predict(older, eff)
    step = older.request.batch / as_current  # type: ignore[union-attr]
    expected = step + older.costs.layers * 100e-6
    assert older.request.batch / as_older == pytest.approx(expected)  # type: ignore[union-attr]
    assert older_factor(older, eff) == pytest.approx(expected / step)


def test_the_stored_fit_tells_older_cuda_builds_apart() -> None:
    fitted = fitted_params()
    cuda = fitted.data["inference"]["llama.cpp-cuda/nvidia/quantized"]
    assert cuda["older_layer_s"] > 10e-6
    # Metal has rows of 2024 builds only: its factor is its parent's, not its own
    metal = fitted.data["inference"]["llama.cpp-metal/apple/quantized"]
    pooled = fitted.data["inference"]["llama.cpp/*/*"]
    assert metal["older_layer_s"] == pytest.approx(pooled["older_layer_s"])


def test_rows_of_one_era_keep_the_priors_factor(rows: list[Row]) -> None:
    older_only = [
        row
        for row in rows
        if row.measurement.older_build and row.measurement.workload is Workload.DECODE
    ][:12]
    prior = replace(START, older_layer_s=123e-6)
    fitted = fit_efficiency(older_only, prior, 1.0, iterations=60)
    assert fitted.older_layer_s == pytest.approx(123e-6)


def test_validation_checks_an_older_row_against_an_older_build(rows: list[Row]) -> None:
    fitted = fitted_params()
    older = next(
        row
        for row in rows
        if row.measurement.older_build and row.measurement.workload is Workload.DECODE
    )
    current = estimate_for(older.rates, older.costs, older.request, fitted)  # type: ignore[arg-type]
    checked = check_row(older, fitted)
    factor = older_factor(older, fitted.efficiency_for_row(older)[0])
    assert factor > 1
    assert checked.estimate == pytest.approx(current.tokens_per_s / factor)
    assert math.isclose(checked.high / checked.low, current.high / current.low)


def test_scores_without_flash_attention_count_every_micro_batch_against_its_cache() -> None:
    # llama-bench pp4096 of Llama 3.1 8B in 512-token micro-batches: batch i scores 512
    # queries against 512 x i cached tokens, 32 heads, 32 layers, 16 bytes a score
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.FP16, KvFormat.FP16)
    expected = 16 * 32 * 32 * sum(512 * 512 * i for i in range(1, 9))
    assert unfused_scores_bytes(costs, tokens=4096, chunk=512) == pytest.approx(expected)
    # a whole prompt in one pass scores the full square; a partial last batch its share
    assert unfused_scores_bytes(costs, tokens=1000, chunk=None) == pytest.approx(
        16 * 32 * 32 * 1000 * 1000
    )
    assert unfused_scores_bytes(costs, tokens=600, chunk=512) == pytest.approx(
        16 * 32 * 32 * (512 * 512 + 88 * 600)
    )


def test_a_llama_bench_prompt_row_without_flash_attention_took_longer_the_longer_it_was() -> None:
    rows = fresh_rows()
    eff = START

    def factor(seq_in: int, *, flash: bool | None) -> float:
        (row,) = [
            row
            for row in rows
            if row.measurement.workload is Workload.PREFILL
            and row.rates.gpu_id == "a100-80gb-pcie"
            and row.measurement.quant == "fp16"
            and row.measurement.model == "llama-3.1-8b"
            and row.measurement.seq_in == seq_in
        ]
        assert row.measurement.flash_attention is None  # llama-bench's default: off
        measured = row.measurement.model_copy(update={"flash_attention": flash})
        return older_factor(dataclasses.replace(row, measurement=measured), eff)

    short, long = factor(512, flash=None), factor(4096, flash=None)
    assert 1.0 < short < long
    # with -fa 1 the same rows ran as a current build does
    assert factor(512, flash=True) == pytest.approx(1.0)
    assert factor(4096, flash=True) == pytest.approx(1.0)


def test_only_llama_cpp_runs_lack_flash_attention_by_default() -> None:
    rows = fresh_rows()
    assert all(
        row.measurement.unfused_attention == (row.measurement.engine == "llama.cpp")
        for row in rows
        if row.measurement.flash_attention is None
    )
    stated = [row for row in rows if row.measurement.flash_attention]
    assert stated and not any(row.measurement.unfused_attention for row in stated)
