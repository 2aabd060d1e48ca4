"""The device a benchmark ran on, as results, telemetry and the backends record it.

Its own module below the backends and the results: both need it, and the backends
sub-package must not be imported by what it imports (no arrow runs both ways).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class DeviceInfo(BaseModel):
    """The device a run measured; every field but ``name`` may be unknown."""

    model_config = ConfigDict(frozen=True)

    #: "cuda" for NVIDIA, "rocm" for AMD through PyTorch's HIP build, "mps" for Apple.
    kind: Literal["cpu", "cuda", "rocm", "mps"]
    index: int = 0
    name: str
    vendor: str | None = None
    memory_total_bytes: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    #: Like the catalog's ``pci_device_ids``: "0x2684".
    pci_device_id: str | None = None
    compute_capability: str | None = None
    multiprocessor_count: int | None = None
    #: Logical CPUs (CPU devices).
    threads: int | None = None
    last_level_cache_bytes: int | None = None
