"""Small catalogs with known figures for the report tests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from catalog_factory import make_entry, write_entry

from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import CatalogEntry

CATALOG_DATE = dt.date(2026, 3, 14)

_SPECS: dict[str, dict[str, Any]] = {
    "alpha-100": dict(
        name="Alpha 100",
        segment="consumer",
        memory_gb=24,
        bandwidth_gbs=1008,
        fp32_tflops=82.6,
        fp64_tflops=1.29,
        fp16_tensor_tflops=165.2,
        sparsity_speedup=2,
        tdp_w=450,
        price_usd=1599,
        price_date=dt.date(2022, 10, 12),
        price_kind="launch_msrp",
        sources=["https://example.com/alpha-whitepaper", "Alpha launch announcement"],
    ),
    "beta-200": dict(
        name="Beta 200",
        segment="datacenter",
        memory_gb=80,
        bandwidth_gbs=1935,
        fp32_tflops=19.5,
        fp64_tflops=9.7,
        fp16_tensor_tflops=312,
        sparsity_speedup=2,
        tdp_w=300,
        sources=["https://example.com/beta-datasheet"],
        notes="Beta has no public price.",
    ),
    "gamma-300": dict(
        name="Gamma 300",
        segment="datacenter",
        memory_gb=94,
        bandwidth_gbs=3900,
        fp32_tflops=60,
        fp64_tflops=30,
        fp16_tensor_tflops=835.5,
        sparsity_speedup=2,
        tdp_w=400,
        price_usd=28000,
        price_date=dt.date(2025, 1, 1),
        price_kind="estimate",
        sources=["https://example.com/gamma-datasheet"],
    ),
    "delta-400": dict(
        name="Delta 400",
        memory_gb=16,
        bandwidth_gbs=672,
        fp32_tflops=44,
        fp16_tensor_tflops=176,
        tdp_w=285,
        price_usd=799,
        price_date=dt.date(2024, 1, 8),
        price_kind="launch_msrp",
        sources=["https://example.com/delta"],
    ),
    "epsilon-500": dict(
        name="Epsilon 500",
        memory_gb=24,
        bandwidth_gbs=936,
        fp32_tflops=35.6,
        fp16_tensor_tflops=142,
        tdp_w=350,
        price_usd=1499,
        price_date=dt.date(2020, 9, 1),
        price_kind="launch_msrp",
        sources=["https://example.com/epsilon"],
    ),
    "zeta-600": dict(
        name="Zeta 600",
        segment="workstation",
        memory_gb=48,
        bandwidth_gbs=768,
        fp32_tflops=38.7,
        fp16_tensor_tflops=154.8,
        tdp_w=300,
        price_usd=4650,
        price_date=dt.date(2021, 4, 12),
        price_kind="street",
        sources=["https://example.com/zeta"],
    ),
}

IDS: tuple[str, ...] = tuple(_SPECS)


def entry(entry_id: str, **overrides: Any) -> CatalogEntry:
    spec = dict(_SPECS[entry_id])
    spec.update(overrides)
    return make_entry(entry_id, **spec)


def catalog(*ids: str) -> Catalog:
    entries = [entry(entry_id) for entry_id in (ids or IDS)]
    return Catalog(entries=entries, catalog_date=CATALOG_DATE)


def write_catalog(directory: Path, *ids: str) -> Path:
    """Write the entries as TOML files (for the CLI's ``--catalog``)."""
    for entry_id in ids or IDS:
        write_entry(directory, entry_id, **_SPECS[entry_id])
    return directory
