"""A "this machine (measured)" series that charts and tables can show beside catalog GPUs."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, ConfigDict, Field


class MeasuredSeries(BaseModel):
    """Figures measured on a local device, keyed like catalog metrics.

    ``values`` uses the metric keys of :data:`gpudesk.catalog.metrics.METRICS`
    (``fp32_tflops``, ``bf16_tensor_tflops``, ``bandwidth_gbs``, ...), so the
    compare view can place a measured figure on the same axis as the catalog's
    peak for it. Only measured keys are present; nothing is filled in.
    """

    model_config = ConfigDict(frozen=True)

    label: str = Field(min_length=1)
    catalog_id: str | None = None
    values: dict[str, float]
    measured_at: dt.datetime
    source: str = ""
