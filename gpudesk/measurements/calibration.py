"""Estimates that learn from the user's own measurements.

A stored measurement that carries the estimate GPUDesk made for the same workload
gives a ratio, measured / estimated. Later ``speed`` estimates for the same GPU,
engine, backend and mode are scaled by the geometric mean of those ratios, and say so
("calibrated with 3 of your measurements, 2026-12-02"). The range narrows only as far
as the measurements' out-of-sample error allows: with three or more, each ratio is
predicted from the others (leave one out) and the largest miss is the new half-width,
never narrower than :data:`MIN_HALF_WIDTH` nor wider than the uncalibrated range;
with one or two, the range keeps its width around the calibrated figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gpudesk.measurements.store import Measurement, StoredMeasurement

#: a calibrated range is never narrower than +-3% (run-to-run noise of a benchmark)
MIN_HALF_WIDTH = math.log(1.03)
#: a SpeedEstimate's USD per 1M tokens: they scale with 1 / tokens per second
_PER_TOKEN_COSTS = (
    "usd_per_million_tokens", "usd_per_million_tokens_rent", "usd_per_million_tokens_own",
)  # fmt: skip
#: speed modes and the measurement modes that calibrate them
_MODES = {"decode": ("decode",), "prefill": ("prefill",), "serve": ("serve",)}


def matching(
    rows: Sequence[StoredMeasurement],
    *,
    gpu_id: str,
    engine: str,
    mode: str,
    backend: str | None,
    count: int,
) -> list[StoredMeasurement]:
    """The rows that can calibrate an estimate: same GPU, count, engine, mode and backend
    (a row or request without a backend matches any), with an estimate to compare."""
    wanted = _MODES.get(mode, ())
    out = []
    for row in rows:
        m = row.measurement
        if m.ratio is None or m.gpu_id != gpu_id or m.engine != engine or m.mode not in wanted:
            continue
        if m.count != count:
            continue
        if backend and m.backend and m.backend != backend:
            continue
        out.append(row)
    return out


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(value) for value in values) / len(values))


def calibrate_estimate(estimate: Any, rows: Sequence[StoredMeasurement]) -> Any:
    """``estimate`` (a SpeedEstimate) scaled by the rows' measured/estimated ratios."""
    if not rows:
        return estimate
    ratios = [row.measurement.ratio for row in rows if row.measurement.ratio]
    factor = _geomean(ratios)  # type: ignore[arg-type]
    value = estimate.tokens_per_s * factor
    half_low = math.log(estimate.tokens_per_s / estimate.low) if estimate.low > 0 else 0.0
    half_high = math.log(estimate.high / estimate.tokens_per_s) if estimate.tokens_per_s else 0.0
    original = max(half_low, half_high)
    if len(ratios) >= 3:
        misses = []
        for index, ratio in enumerate(ratios):
            others = ratios[:index] + ratios[index + 1 :]
            misses.append(abs(math.log(ratio / _geomean(others))))  # type: ignore[arg-type]
        half = min(original, max(MIN_HALF_WIDTH, max(misses)))
        low, high = value * math.exp(-half), value * math.exp(half)
    else:
        low, high = estimate.low * factor, estimate.high * factor
    bound = estimate.bound_tokens_per_s
    capped = bool(bound) and value > bound
    if bound:
        # the ratios may come from another model of the same GPU (one overhead-bound,
        # the estimate memory-bound): never past what the GPU's peak allows
        value, high = min(value, bound), min(high, bound)
        low = min(low, value)
    newest = max(row.measurement.day or row.stored_at[:10] for row in rows)
    words = (
        f"calibrated with {len(ratios)} of your measurements, "
        f"{newest} (measured/estimated ×{factor:.2f}"
        + (", range from their leave-one-out misses" if len(ratios) >= 3 else "")
        + (f", capped at the bound of {bound:,.0f} tokens/s" if capped else "")
        + ")"
    )
    scale = estimate.tokens_per_s / value if value > 0 else 1.0
    costs = {
        name: getattr(estimate, name) * scale
        for name in _PER_TOKEN_COSTS
        if getattr(estimate, name, None) is not None
    }
    return estimate.model_copy(
        update={
            **costs,
            "tokens_per_s": value,
            "low": low,
            "high": high,
            "basis": f"{estimate.basis}; {words}",
            "calibrated": words if not estimate.calibrated else f"{estimate.calibrated}; {words}",
            "efficiency": value / estimate.bound_tokens_per_s
            if estimate.bound_tokens_per_s
            else estimate.efficiency,
        }
    )


def calibrate_all(
    estimates: Sequence[Any],
    rows: Sequence[StoredMeasurement],
    *,
    engine: str,
    backend: str | None,
) -> list[Any]:
    """Each estimate calibrated with the rows that match it (unchanged where none do)."""
    out = []
    for estimate in estimates:
        found = matching(
            rows,
            gpu_id=estimate.gpu_id,
            engine=engine,
            mode=str(getattr(estimate.mode, "value", estimate.mode)),
            backend=backend,
            count=estimate.count,
        )
        out.append(calibrate_estimate(estimate, found))
    return out


def with_estimate(measurement: Measurement, estimate_tokens_per_s: float | None) -> Measurement:
    if estimate_tokens_per_s is None or not estimate_tokens_per_s > 0:
        return measurement
    return measurement.model_copy(update={"estimate_tokens_per_s": estimate_tokens_per_s})
