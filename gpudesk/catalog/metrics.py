"""Every numeric figure the app shows: label, unit, direction, and derived metrics.

Tables, charts, the compare view, exports and the CLI all read figures through
:data:`METRICS`, so a label or unit is written once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from gpudesk.catalog.rate_book import lowest_on_demand_rate
from gpudesk.catalog.schema import CatalogEntry, PriceKind


class MetricGroup(StrEnum):
    IDENTITY = "Identity"
    MEMORY = "Memory"
    COMPUTE = "Compute"
    POWER = "Power"
    FEATURES = "Features"
    PRICE = "Price"
    DERIVED = "Derived"


@dataclass(frozen=True, slots=True)
class Metric:
    """A numeric figure of a catalog entry.

    Attributes:
        key: field name (or derived-metric name), units in the name.
        label: short human label without the unit.
        unit: unit as shown in headers ("GB/s"); empty for counts.
        group: where the figure belongs in grouped views.
        higher_is_better: the direction for "best" highlighting; None where
            neither direction is better (release year, clock).
        value: reads the figure from an entry; None when missing.
        decimals: digits shown after the point.
    """

    key: str
    label: str
    unit: str
    group: MetricGroup
    higher_is_better: bool | None
    value: Callable[[CatalogEntry], float | None]
    decimals: int = 1

    @property
    def header(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label

    def format(self, value: float | None) -> str:
        if value is None:
            return "n/a"
        if self.key == "release_year":
            return f"{value:.0f}"
        if self.decimals == 0:
            return f"{value:,.0f}"
        return f"{value:,.{self.decimals}f}"


def _per_thousand_usd(numerator: float | None, price_usd: float | None) -> float | None:
    if numerator is None or price_usd is None or price_usd <= 0:
        return None
    return numerator / (price_usd / 1000.0)


def _per_watt(numerator: float | None, tdp_w: int | None) -> float | None:
    if numerator is None or tdp_w is None or tdp_w <= 0:
        return None
    return numerator / tdp_w


def fp16_tensor_tflops_per_kusd(entry: CatalogEntry) -> float | None:
    """Dense FP16 tensor TFLOPS per 1,000 USD of the catalog price."""
    return _per_thousand_usd(entry.fp16_tensor_tflops, entry.price_usd)


def priced_memory_gb(entry: CatalogEntry) -> float | None:
    """The memory of what the catalog price buys; None where that is not recorded.

    A ``system`` price is a whole computer's in its base configuration, which often
    has less memory than ``memory_gb`` (the most the chip is sold with): a $1,399
    Mac mini has 24 GB, not the M4 Pro's 64.
    """
    if entry.price_kind is PriceKind.SYSTEM:
        return entry.price_system_memory_gb
    return entry.memory_gb


def memory_gb_per_kusd(entry: CatalogEntry) -> float | None:
    """Memory per 1,000 USD, of the machine that price buys (:func:`priced_memory_gb`)."""
    return _per_thousand_usd(priced_memory_gb(entry), entry.price_usd)


def fp32_tflops_per_w(entry: CatalogEntry) -> float | None:
    return _per_watt(entry.fp32_tflops, entry.tdp_w)


def fp16_tensor_tflops_per_w(entry: CatalogEntry) -> float | None:
    """Dense FP16 tensor TFLOPS per watt of board power."""
    return _per_watt(entry.fp16_tensor_tflops, entry.tdp_w)


DERIVED_METRICS: dict[str, Callable[[CatalogEntry], float | None]] = {
    "fp16_tensor_tflops_per_kusd": fp16_tensor_tflops_per_kusd,
    "memory_gb_per_kusd": memory_gb_per_kusd,
    "fp32_tflops_per_w": fp32_tflops_per_w,
    "fp16_tensor_tflops_per_w": fp16_tensor_tflops_per_w,
}


def derived_values(entry: CatalogEntry) -> dict[str, float | None]:
    return {key: compute(entry) for key, compute in DERIVED_METRICS.items()}


def cloud_hourly_usd(entry: CatalogEntry) -> float | None:
    """The default cloud rate in USD per GPU-hour: the rate book's lowest on-demand one."""
    rate = lowest_on_demand_rate(entry)
    return None if rate is None else rate.usd_per_gpu_hour


#: Figures of an entry that are not its fields: worked out by the price modules.
PRICE_METRICS: dict[str, Callable[[CatalogEntry], float | None]] = {
    "cloud_hourly_usd": cloud_hourly_usd,
}


def _field(name: str) -> Callable[[CatalogEntry], float | None]:
    def read(entry: CatalogEntry) -> float | None:
        value = getattr(entry, name)
        return None if value is None else float(value)

    return read


def _metric(
    key: str,
    label: str,
    unit: str,
    group: MetricGroup,
    higher_is_better: bool | None,
    decimals: int = 1,
) -> Metric:
    reader = DERIVED_METRICS.get(key) or PRICE_METRICS.get(key) or _field(key)
    return Metric(key, label, unit, group, higher_is_better, reader, decimals)


_G = MetricGroup
METRICS: dict[str, Metric] = {
    metric.key: metric
    for metric in (
        _metric("release_year", "Year", "", _G.IDENTITY, None, 0),
        # The vendor's "80 GB" is 80 GiB (nvidia-smi totals an A100 80GB at 81,920 MiB):
        # the figure as sold, labelled in the unit every screen shows memory in.
        _metric("memory_gb", "Memory", "GiB", _G.MEMORY, True, 0),
        _metric("bandwidth_gbs", "Bandwidth", "GB/s", _G.MEMORY, True, 0),
        _metric("memory_bus_bits", "Memory bus", "bit", _G.MEMORY, None, 0),
        _metric("l2_cache_mb", "L2 cache", "MB", _G.MEMORY, True, 0),
        _metric("l3_cache_mb", "L3 / Infinity Cache", "MB", _G.MEMORY, True, 0),
        _metric("boost_clock_mhz", "Boost clock", "MHz", _G.COMPUTE, None, 0),
        _metric("shader_cores", "Shader cores", "", _G.COMPUTE, True, 0),
        _metric("fp32_tflops", "FP32", "TFLOPS", _G.COMPUTE, True),
        _metric("fp16_tflops", "FP16 (non-tensor)", "TFLOPS", _G.COMPUTE, True),
        _metric("fp64_tflops", "FP64", "TFLOPS", _G.COMPUTE, True, 2),
        _metric("tf32_tensor_tflops", "TF32 tensor, dense", "TFLOPS", _G.COMPUTE, True),
        _metric("bf16_tensor_tflops", "BF16 tensor, dense", "TFLOPS", _G.COMPUTE, True),
        _metric("fp16_tensor_tflops", "FP16 tensor, dense", "TFLOPS", _G.COMPUTE, True),
        _metric("fp8_tensor_tflops", "FP8 tensor, dense", "TFLOPS", _G.COMPUTE, True),
        _metric("int8_tensor_tops", "INT8 tensor, dense", "TOPS", _G.COMPUTE, True),
        _metric("tdp_w", "TDP", "W", _G.POWER, False, 0),
        _metric("mig_max_instances", "MIG instances", "", _G.FEATURES, True, 0),
        _metric("price_usd", "Price", "USD", _G.PRICE, False, 0),
        # the default rate: the rate book's lowest on-demand one (PRICE_METRICS)
        _metric("cloud_hourly_usd", "Cloud price", "USD/h", _G.PRICE, False, 2),
        # The unit says the whole rate: "TFLOPS" alone would read as a throughput.
        _metric(
            "fp16_tensor_tflops_per_kusd",
            "FP16 tensor (dense) per price",
            "TFLOPS per 1k USD",
            _G.DERIVED,
            True,
            2,
        ),
        _metric("memory_gb_per_kusd", "Memory per price", "GiB per 1k USD", _G.DERIVED, True, 2),
        _metric("fp32_tflops_per_w", "FP32 per watt", "TFLOPS/W", _G.DERIVED, True, 3),
        _metric(
            "fp16_tensor_tflops_per_w",
            "FP16 tensor (dense) per watt",
            "TFLOPS/W",
            _G.DERIVED,
            True,
            3,
        ),
    )
}

#: Fields whose value may be sorted on from the CLI (numeric figures only).
SORTABLE_KEYS: tuple[str, ...] = tuple(METRICS)
