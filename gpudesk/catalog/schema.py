"""The catalog entry: one GPU model with sourced figures.

Throughput fields say what they are. ``fp32_tflops``, ``fp16_tflops`` and
``fp64_tflops`` are non-tensor (shader) rates; the ``*_tensor_*`` fields are
tensor-core rates **without** 2:4 sparsity (FP16/BF16 with FP32 accumulate).
The with-sparsity rate is only ever ``dense * sparsity_speedup``.
"""

from __future__ import annotations

import datetime as dt
import re
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PositiveFloat = Annotated[float, Field(gt=0)]
PositiveInt = Annotated[int, Field(gt=0)]

_ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_PCI_ID_PATTERN = re.compile(r"^0x[0-9a-f]{4}$")


class Segment(StrEnum):
    CONSUMER = "consumer"
    WORKSTATION = "workstation"
    DATACENTER = "datacenter"


class PriceKind(StrEnum):
    LAUNCH_MSRP = "launch_msrp"
    STREET = "street"
    USED = "used"
    ESTIMATE = "estimate"


class CatalogEntry(BaseModel):
    """One GPU model as the catalog files describe it."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    # identity
    id: str = Field(min_length=1, max_length=80)
    name: str = Field(min_length=1, max_length=120)
    vendor: str = Field(min_length=1, max_length=40)
    segment: Segment
    architecture: str = Field(min_length=1, max_length=60)
    release_year: int = Field(ge=2010, le=2030)
    form_factor: str | None = None
    interface: str | None = None
    # memory
    memory_gb: float = Field(gt=0, le=2048)
    memory_type: str = Field(min_length=1, max_length=40)
    bandwidth_gbs: float = Field(gt=0, le=100_000)
    memory_bus_bits: PositiveInt | None = None
    l2_cache_mb: PositiveFloat | None = None
    # compute
    boost_clock_mhz: Annotated[int, Field(gt=0, le=5000)] | None = None
    shader_cores: PositiveInt | None = None
    tensor_core_generation: Annotated[int, Field(ge=1, le=10)] | None = None
    compute_capability: str | None = Field(default=None, pattern=r"^\d+\.\d+$")
    fp32_tflops: float = Field(gt=0, le=1000)
    fp16_tflops: Annotated[float, Field(gt=0, le=2000)] | None = None
    fp64_tflops: Annotated[float, Field(gt=0, le=1000)] | None = None
    tf32_tensor_tflops: Annotated[float, Field(gt=0, le=10_000)] | None = None
    bf16_tensor_tflops: Annotated[float, Field(gt=0, le=10_000)] | None = None
    fp16_tensor_tflops: Annotated[float, Field(gt=0, le=10_000)] | None = None
    fp8_tensor_tflops: Annotated[float, Field(gt=0, le=20_000)] | None = None
    int8_tensor_tops: Annotated[float, Field(gt=0, le=40_000)] | None = None
    sparsity_speedup: Annotated[float, Field(ge=1, le=8)] | None = None
    # power and features
    tdp_w: Annotated[int, Field(gt=0, le=3000)] | None = None
    ecc: bool | None = None
    mig_max_instances: Annotated[int, Field(ge=1, le=64)] | None = None
    nvlink: bool | None = None
    # price
    price_usd: Annotated[float, Field(gt=0, le=1_000_000)] | None = None
    price_date: dt.date | None = None
    price_kind: PriceKind | None = None
    cloud_hourly_usd: Annotated[float, Field(gt=0, le=1000)] | None = None
    cloud_hourly_source: str | None = None
    cloud_hourly_date: dt.date | None = None
    # matching local devices
    nvml_names: tuple[str, ...] = ()
    pci_device_ids: tuple[str, ...] = ()
    # provenance
    sources: tuple[str, ...] = Field(min_length=1)
    notes: str | None = None

    @field_validator("id")
    @classmethod
    def _id_is_slug(cls, value: str) -> str:
        if not _ID_PATTERN.match(value):
            raise ValueError("must be a lowercase slug of a-z, 0-9 and single hyphens")
        return value

    @field_validator("pci_device_ids")
    @classmethod
    def _pci_ids_are_hex(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        normalised = tuple(item.strip().lower() for item in value)
        for item in normalised:
            if not _PCI_ID_PATTERN.match(item):
                raise ValueError(f"{item!r} is not a PCI device id like '0x2684'")
        return normalised

    @field_validator("sources")
    @classmethod
    def _sources_not_blank(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not item.strip() for item in value):
            raise ValueError("a source must not be empty")
        return value

    @model_validator(mode="after")
    def _price_has_date_and_kind(self) -> CatalogEntry:
        if self.price_usd is not None and (self.price_date is None or self.price_kind is None):
            raise ValueError("price_usd needs price_date and price_kind")
        return self

    @property
    def has_tensor_cores(self) -> bool:
        return any(
            value is not None
            for value in (self.fp16_tensor_tflops, self.bf16_tensor_tflops, self.tf32_tensor_tflops)
        )

    @property
    def fp16_tensor_sparse_tflops(self) -> float | None:
        """The with-sparsity FP16 tensor rate, derived, never stored."""
        if self.fp16_tensor_tflops is None or self.sparsity_speedup is None:
            return None
        return self.fp16_tensor_tflops * self.sparsity_speedup


#: Field names in catalog order; the CLI, tables and exports use this order.
ENTRY_FIELDS: tuple[str, ...] = tuple(CatalogEntry.model_fields)
