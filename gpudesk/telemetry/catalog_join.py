"""A device's catalog entry: its id and the peaks a dashboard divides by ("% of peak").

The match is the catalog's own (:func:`gpudesk.hardware.match.match_device`: PCI
id, NVML name, name and memory). Catalog units are converted to base units:
``bandwidth_gbs`` is decimal GB/s (x 1e9 bytes/s) and ``bf16_tensor_tflops``
is the dense tensor-core rate (x 1e12 FLOP/s; the catalog keeps sparsity apart).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.hardware.match import match_device
from gpudesk.hardware.models import GpuSnapshot


@dataclass(frozen=True, slots=True)
class CatalogFacts:
    """What the catalog says about a device: its entry, name and peaks (base units)."""

    catalog_id: str | None = None
    name: str | None = None
    memory_bandwidth_bytes_per_second: float | None = None
    dense_bf16_flops: float | None = None


NO_FACTS = CatalogFacts()

#: How a source asks for a device's catalog facts (tests pass none: :data:`NO_FACTS`).
Identify = Callable[[GpuSnapshot], CatalogFacts]


class CatalogJoin:
    """Match devices to ``entries``; a MIG instance takes its physical GPU's entry."""

    def __init__(self, entries: Sequence[CatalogEntry]) -> None:
        self._entries = list(entries)
        self._by_id = {entry.id: entry for entry in self._entries}

    def __call__(self, gpu: GpuSnapshot) -> CatalogFacts:
        match = match_device(gpu, self._entries)
        entry = self._by_id.get(match.catalog_id or "")
        if entry is None:
            return NO_FACTS
        bf16 = None if entry.bf16_tensor_tflops is None else float(entry.bf16_tensor_tflops) * 1e12
        # an announced part may state no bandwidth: no peak to set readings against
        bandwidth = None if entry.bandwidth_gbs is None else float(entry.bandwidth_gbs) * 1e9
        return CatalogFacts(entry.id, entry.name, bandwidth, bf16)
