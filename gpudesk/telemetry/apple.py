"""A Mac's GPU: what can be read without root, and a plain "not available without root".

The chip, its GPU cores and the unified memory come from ``system_profiler``
(:mod:`gpudesk.hardware.apple`, read once). Live utilisation, power,
temperature and clocks come only from ``powermetrics``, which needs root
(``sudo powermetrics --samplers gpu_power``): the exporter never asks for
root, so those fields are absent and the reading carries :data:`ROOT_NOTE`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpudesk.hardware.apple import AppleReading
from gpudesk.hardware.models import GpuSnapshot
from gpudesk.telemetry.readings import DeviceIdentity, DeviceReading, Source, Vendor

ROOT_NOTE = (
    "utilisation, power, temperature and clocks are not available without root "
    "(macOS gives them only to powermetrics, run with sudo)"
)

Identify = Callable[[GpuSnapshot], tuple[str | None, float | None, float | None]]


@dataclass
class AppleSource:
    """The Apple Silicon GPU of this Mac (none elsewhere)."""

    read_apple: Callable[[], AppleReading | None]
    identify: Identify | None = None
    detail: str | None = None
    _reading: DeviceReading | None = None

    def discover(self, first_index: int = 0) -> bool:
        found = self.read_apple()
        if found is None or found.gpu is None:
            self.detail = None if found is None else found.detail
            return False
        gpu = found.gpu.model_copy(update={"index": first_index})
        catalog_id = bandwidth = bf16 = None
        if self.identify is not None:
            catalog_id, bandwidth, bf16 = self.identify(gpu)
        identity = DeviceIdentity(
            key=f"apple:{first_index}",
            vendor=Vendor.APPLE,
            source=Source.APPLE,
            index=first_index,
            name=gpu.name,
            catalog_id=catalog_id,
            catalog_memory_bandwidth_bytes_per_second=bandwidth,
            catalog_dense_bf16_flops=bf16,
        )
        total = None if gpu.memory_total_mib is None else gpu.memory_total_mib * 1024 * 1024
        self._reading = DeviceReading(
            identity=identity, up=True, note=ROOT_NOTE, memory_total_bytes=total
        )
        return True

    def read(self) -> list[DeviceReading]:
        return [] if self._reading is None else [self._reading]
