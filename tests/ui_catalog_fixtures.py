"""A small, hand-checked catalog for the catalog browser's tests."""

from __future__ import annotations

import datetime as dt
from typing import Any

from catalog_factory import make_entry

from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import CatalogEntry

_PRICE: dict[str, Any] = {"price_date": dt.date(2025, 1, 1), "price_kind": "street"}


def small_entries() -> list[CatalogEntry]:
    """Six GPUs; ``mi300x`` has no price and ``gtx-1080``/``arc-b580`` no tensor figures."""
    return [
        make_entry(
            "a100",
            name="NVIDIA A100 80GB",
            segment="datacenter",
            architecture="Ampere",
            release_year=2020,
            memory_gb=80,
            bandwidth_gbs=2039,
            fp32_tflops=19.5,
            fp16_tensor_tflops=312.0,
            ecc=True,
            mig_max_instances=7,
            nvlink=True,
            price_usd=15000,
            notes="HBM2e training card",
            sources=["https://example.com/a100-datasheet (A100 datasheet)", "Whitepaper"],
            **_PRICE,
        ),
        make_entry(
            "rtx-4090",
            name="NVIDIA GeForce RTX 4090",
            architecture="Ada Lovelace",
            release_year=2022,
            memory_gb=24,
            fp32_tflops=82.6,
            fp16_tensor_tflops=165.2,
            ecc=False,
            nvlink=False,
            price_usd=1599,
            **_PRICE,
        ),
        make_entry(
            "mi300x",
            name="AMD Instinct MI300X",
            vendor="AMD",
            segment="datacenter",
            architecture="CDNA 3",
            release_year=2023,
            memory_gb=192,
            fp32_tflops=163.4,
            fp16_tensor_tflops=1307.4,
            ecc=True,
            nvlink=False,
        ),
        make_entry(
            "arc-b580",
            name="Intel Arc B580",
            vendor="Intel",
            architecture="Xe2",
            release_year=2024,
            memory_gb=12,
            fp32_tflops=13.7,
            price_usd=249,
            **_PRICE,
        ),
        make_entry(
            "rtx-a6000",
            name="NVIDIA RTX A6000",
            segment="workstation",
            architecture="Ampere",
            release_year=2020,
            memory_gb=48,
            fp32_tflops=38.7,
            fp16_tensor_tflops=154.8,
            ecc=True,
            nvlink=True,
            price_usd=4650,
            **_PRICE,
        ),
        make_entry(
            "gtx-1080",
            name="NVIDIA GeForce GTX 1080",
            architecture="Pascal",
            release_year=2016,
            memory_gb=8,
            fp32_tflops=8.9,
            ecc=False,
            price_usd=599,
            **_PRICE,
        ),
    ]


def small_catalog() -> Catalog:
    return Catalog(entries=small_entries())
