"""Estimates calibrated with the user's measurements: factor, basis and honest ranges."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st
from pydantic import BaseModel

from gpudesk.measurements.calibration import MIN_HALF_WIDTH, calibrate_all, calibrate_estimate
from gpudesk.measurements.store import Measurement, StoredMeasurement


class _Estimate(BaseModel):
    """The SpeedEstimate fields calibration reads and writes."""

    gpu_id: str = "rtx-4090"
    count: int = 1
    mode: str = "decode"
    tokens_per_s: float = 100.0
    low: float = 80.0
    high: float = 125.0
    bound_tokens_per_s: float = 1000.0
    usd_per_million_tokens: float | None = 2.0
    efficiency: float = 0.5
    basis: str = "fitted"
    calibrated: str | None = None


def _row(ratio: float, index: int = 0, **fields: object) -> StoredMeasurement:
    data: dict[str, object] = {
        "gpu_id": "rtx-4090",
        "engine": "llama.cpp",
        "model": f"m{index}",
        "mode": "decode",
        "tokens_per_s": 100.0 * ratio,
        "estimate_tokens_per_s": 100.0,
        "source": "test",
        "source_format": "test",
        "measured_at": f"2026-12-0{1 + index % 2}",
    }
    data.update(fields)
    return StoredMeasurement(
        id=index, stored_at="2026-12-02T00:00:00+00:00", measurement=Measurement(**data)
    )


def test_one_measurement_scales_the_estimate_and_keeps_the_range_width() -> None:
    out = calibrate_estimate(_Estimate(), [_row(2.0)])
    assert out.tokens_per_s == pytest.approx(200.0)
    assert (out.low, out.high) == pytest.approx((160.0, 250.0))
    assert "calibrated with 1 of your measurements, 2026-12-01" in out.basis


def test_three_agreeing_measurements_narrow_the_range_to_their_misses() -> None:
    rows = [_row(r, i) for i, r in enumerate((1.50, 1.52, 1.48))]
    out = calibrate_estimate(_Estimate(), rows)
    assert out.tokens_per_s == pytest.approx(100 * (1.5 * 1.52 * 1.48) ** (1 / 3))
    half = math.log(out.high / out.tokens_per_s)
    assert half == pytest.approx(MIN_HALF_WIDTH)  # misses of ~1.5% < the 3% floor
    assert "3 of your measurements, 2026-12-02" in out.basis


def test_scattered_measurements_never_widen_past_the_uncalibrated_range() -> None:
    rows = [_row(r, i) for i, r in enumerate((0.5, 2.0, 1.0))]
    out = calibrate_estimate(_Estimate(), rows)
    original = max(math.log(100 / 80), math.log(125 / 100))
    assert math.log(out.high / out.tokens_per_s) == pytest.approx(original)


def test_rows_for_another_gpu_engine_mode_or_backend_do_not_calibrate() -> None:
    rows = [
        _row(2.0, 0, gpu_id="rtx-3090"),
        _row(2.0, 1, engine="vllm"),
        _row(2.0, 2, mode="prefill"),
        _row(2.0, 3, backend="vulkan"),
        _row(2.0, 4, count=2),
        _row(2.0, 5, estimate_tokens_per_s=None),
    ]
    (out,) = calibrate_all([_Estimate()], rows, engine="llama.cpp", backend="cuda")
    assert out.tokens_per_s == 100.0
    assert out.basis == "fitted"


@settings(max_examples=50, deadline=None)
@given(ratios=st.lists(st.floats(min_value=0.05, max_value=20), min_size=1, max_size=8))
def test_calibrated_range_always_holds_the_estimate(ratios: list[float]) -> None:
    out = calibrate_estimate(_Estimate(), [_row(r, i) for i, r in enumerate(ratios)])
    assert out.low <= out.tokens_per_s <= out.high
    assert math.log(out.high / out.tokens_per_s) <= math.log(125 / 100) + 1e-9


def test_the_calibrated_estimate_never_passes_the_bound_and_its_cost_follows() -> None:
    """A TinyLlama run's x2.25 (overhead-bound) must not lift a memory-bound 8B estimate
    on the same GPU past the bound (130 -> 293 tokens/s, 'estimate = 136% of' 214)."""
    estimate = _Estimate(tokens_per_s=130.0, low=68.5, high=156.0, bound_tokens_per_s=214.0)
    out = calibrate_estimate(estimate, [_row(2.25)])
    assert out.tokens_per_s == pytest.approx(214.0)
    assert out.low <= out.tokens_per_s <= out.high <= 214.0
    assert "capped at the bound of 214 tokens/s" in out.basis
    assert out.usd_per_million_tokens == pytest.approx(2.0 * 130 / 214)
    uncapped = calibrate_estimate(_Estimate(), [_row(2.0)])
    assert uncapped.usd_per_million_tokens == pytest.approx(1.0)
    assert "capped" not in uncapped.basis
