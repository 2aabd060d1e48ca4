"""Turn a benchmark result into the "this machine (measured)" series charts show."""

from __future__ import annotations

from gpudesk.bench.peaks import peak_field
from gpudesk.bench.results import BenchResult
from gpudesk.measured import MeasuredSeries


def measured_series(result: BenchResult, source: str = "") -> MeasuredSeries | None:
    """The measured figures keyed like catalog metrics; None when nothing was measured."""
    values: dict[str, float] = {}
    for row in result.results:
        key = peak_field(row.test, row.dtype)  # the catalog field a row is measured against
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
