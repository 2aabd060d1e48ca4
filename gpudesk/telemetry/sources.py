"""Every source of this machine, found once: NVML, the sysfs bus (amdgpu, i915, xe), the Mac.

Indices follow detection's rule: NVML's own, then the other devices in bus
order after them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.hardware.amd_smi import AmdSmi, default_amdsmi
from gpudesk.hardware.apple import AppleReading
from gpudesk.hardware.detect import default_apple_reading
from gpudesk.hardware.models import pci_address_key
from gpudesk.hardware.nvml import Nvml, default_nvml
from gpudesk.hardware.sysfs import default_sysfs_root
from gpudesk.telemetry.apple import AppleSource
from gpudesk.telemetry.bus import BusSource
from gpudesk.telemetry.catalog_join import CatalogJoin
from gpudesk.telemetry.collector import TelemetrySource
from gpudesk.telemetry.nvidia import NvidiaSource
from gpudesk.telemetry.processes import process_labels

NamedSource = tuple[str, TelemetrySource, bool]


def open_sources(
    entries: Sequence[CatalogEntry],
    *,
    nvml: Nvml | None = None,
    sysfs_root: Path | None = None,
    processes: bool = False,
    read_apple: Callable[[], AppleReading | None] = default_apple_reading,
    amdsmi: AmdSmi | None = None,
) -> list[NamedSource]:
    """Discover every device once: (loop name, source, whether it found anything)."""
    join = CatalogJoin(entries)
    nvidia = NvidiaSource(
        nvml or default_nvml(),
        identify=join,
        processes=processes,
        process_labels=process_labels if processes else None,
    )
    nvidia_found = nvidia.discover()
    nvml_devices = nvidia.devices
    taken = {
        key
        for identity in nvml_devices
        if (key := pci_address_key(identity.pci_bus_id)) is not None
    }
    indices = [identity.index for identity in nvml_devices if identity.parent_uuid is None]
    next_index = max((index for index in indices if index is not None), default=-1) + 1
    bus = BusSource(
        sysfs_root if sysfs_root is not None else default_sysfs_root(),
        identify=join,
        skip_addresses=frozenset(taken),
        amdsmi=amdsmi if amdsmi is not None else default_amdsmi(),
    )
    bus_found = bus.discover(next_index)
    mac = AppleSource(read_apple, identify=join)
    mac_found = mac.discover(next_index + len(bus.devices))
    return [("nvml", nvidia, nvidia_found), ("sysfs", bus, bus_found), ("apple", mac, mac_found)]
