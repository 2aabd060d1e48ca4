"""Older llama.cpp builds: their rows teach the fit, estimates are for current builds."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from gpudesk.speed.data import CURRENT_BUILDS_FROM, Measurement, Workload
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
from gpudesk.speed.planner import estimate_for
from gpudesk.speed.validation import check_row


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
