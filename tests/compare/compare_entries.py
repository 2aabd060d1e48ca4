"""Small hand-made catalog entries for the compare tests."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpudesk.catalog.schema import CatalogEntry


def gpu(entry_id: str, **overrides: Any) -> CatalogEntry:
    """A valid entry with round numbers; ``None`` overrides drop a field."""
    data: dict[str, Any] = {
        "id": entry_id,
        "name": entry_id.replace("-", " ").title(),
        "vendor": "NVIDIA",
        "segment": "datacenter",
        "architecture": "Testwell",
        "release_year": 2023,
        "memory_gb": 16,
        "memory_type": "HBM3",
        "bandwidth_gbs": 1000.0,
        "fp32_tflops": 20.0,
        "sources": ["Test datasheet"],
    }
    if "price_usd" in overrides and overrides["price_usd"] is not None:
        data["price_date"] = dt.date(2025, 1, 1)
        data["price_kind"] = "street"
    data.update(overrides)
    return CatalogEntry.model_validate({k: v for k, v in data.items() if v is not None})
