"""The catalog's peak figure for each measured test, and the fraction reached.

GEMM at FP16/BF16/TF32 is set against the dense tensor-core figure; FP32 and
FP64 against the non-tensor (shader) figure; the memory copy against
``bandwidth_gbs``. Host/device transfers are set against the PCIe link in the
catalog's ``interface`` (per direction), when it names one. A device without
a catalog entry (a CPU) has no peak.
"""

from __future__ import annotations

import re

from gpudesk.bench.results import Measurement, finite_or_none
from gpudesk.catalog.schema import CatalogEntry

#: Catalog field holding the peak for (test, dtype); dtype "*" matches any.
PEAK_FIELDS: dict[tuple[str, str], str] = {
    ("gemm", "fp64"): "fp64_tflops",
    ("gemm", "fp32"): "fp32_tflops",
    ("gemm", "tf32"): "tf32_tensor_tflops",
    ("gemm", "bf16"): "bf16_tensor_tflops",
    ("gemm", "fp16"): "fp16_tensor_tflops",
    ("copy", "*"): "bandwidth_gbs",
}

#: Usable GB/s per lane and direction, after line encoding (8b/10b, then 128b/130b).
_PCIE_LANE_GBS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
_PCIE_PATTERN = re.compile(r"pci\s*-?\s*e(?:xpress)?\s*(\d)(?:\.\d)?(?:\s*x\s*(\d+))?", re.I)


def peak_field(test: str, dtype: str) -> str | None:
    return PEAK_FIELDS.get((test, dtype)) or PEAK_FIELDS.get((test, "*"))


def pcie_peak_gbs(interface: str | None) -> float | None:
    """One direction's PCIe bandwidth from text like "PCIe 4.0 x16" (x16 if no width)."""
    if not interface:
        return None
    match = _PCIE_PATTERN.search(interface)
    if match is None:
        return None
    generation = int(match.group(1))
    lanes = int(match.group(2)) if match.group(2) else 16
    per_lane = _PCIE_LANE_GBS.get(generation)
    return None if per_lane is None or lanes <= 0 else per_lane * lanes


def peak_for(entry: CatalogEntry | None, test: str, dtype: str) -> float | None:
    """The catalog's peak in the result's unit (TFLOPS or GB/s), or None."""
    if entry is None:
        return None
    if test in ("h2d", "d2h"):
        return pcie_peak_gbs(entry.interface)
    field = peak_field(test, dtype)
    if field is None:
        return None
    value = getattr(entry, field)
    return None if value is None else float(value)


def with_peak(row: Measurement, entry: CatalogEntry | None) -> Measurement:
    """The row with ``peak`` and ``fraction_of_peak`` filled from the catalog entry."""
    peak = peak_for(entry, row.test, row.dtype)
    fraction = None
    if peak is not None and row.value is not None:
        fraction = finite_or_none(row.value / peak)
    return row.model_copy(update={"peak": peak, "fraction_of_peak": fraction})
