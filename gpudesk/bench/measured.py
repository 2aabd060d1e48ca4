"""Turn a benchmark result into the "this machine (measured)" series charts show."""

from __future__ import annotations

from gpudesk.bench.results import BenchResult
from gpudesk.measured import MeasuredSeries

#: Catalog metric key fed by each (test, dtype) measurement.
METRIC_FOR: dict[tuple[str, str], str] = {
    ("gemm", "fp32"): "fp32_tflops",
    ("gemm", "fp64"): "fp64_tflops",
    ("gemm", "tf32"): "tf32_tensor_tflops",
    ("gemm", "bf16"): "bf16_tensor_tflops",
    ("gemm", "fp16"): "fp16_tensor_tflops",
    ("copy", "bytes"): "bandwidth_gbs",
}


def measured_series(result: BenchResult, source: str = "") -> MeasuredSeries | None:
    """The measured figures keyed like catalog metrics; None when nothing was measured."""
    values: dict[str, float] = {}
    for row in result.results:
        key = METRIC_FOR.get((row.test, row.dtype))
        if key is not None and row.value is not None and key not in values:
            values[key] = row.value
    if not values:
        return None
    return MeasuredSeries(
        label=f"{result.device_name} (measured, {result.backend})",
        catalog_id=result.catalog_id,
        values=values,
        measured_at=result.started_at,
        source=source or (result.imported_from or "gpudesk bench"),
    )
