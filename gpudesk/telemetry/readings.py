"""One field set for every vendor: what a device is, and one reading of it.

Every field is in base units (bytes, watts, hertz, joules, degrees Celsius, a
ratio 0..1), so the exporter, the terminal monitor and the GUI convert
nothing of their own. ``None`` (or a missing key) means the device or its
driver does not report the field: it is left out of ``/metrics``, never 0.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Vendor(StrEnum):
    NVIDIA = "NVIDIA"
    AMD = "AMD"
    INTEL = "Intel"
    APPLE = "Apple"


class Source(StrEnum):
    """Where a device's readings come from (the exporter's ``source`` label on its own health)."""

    NVML = "nvml"
    #: amdsmi's figures first (installed, and it knows the device), sysfs's for the rest.
    AMDSMI = "amdsmi"
    AMDGPU = "amdgpu_sysfs"
    INTEL = "intel_sysfs"
    APPLE = "apple"


class DeviceIdentity(BaseModel):
    """What a device is; fixed for the exporter's life (the labels of its series)."""

    model_config = ConfigDict(frozen=True)

    #: Stable within a host: the UUID, else ``pci:ADDRESS``, else ``SOURCE:INDEX``.
    key: str
    vendor: Vendor
    source: Source
    index: int | None = None
    name: str | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    #: MIG instances only: the physical GPU's UUID and the profile ("3g.20gb").
    parent_uuid: str | None = None
    mig_profile: str | None = None
    catalog_id: str | None = None
    #: The catalog entry's peak memory bandwidth (bytes/s) and dense BF16 tensor rate (FLOP/s).
    catalog_memory_bandwidth_bytes_per_second: float | None = None
    catalog_dense_bf16_flops: float | None = None
    # What the catalog match needs (not labels).
    pci_device_id: str | None = None
    pci_vendor_id: str | None = None


class ProcessReading(BaseModel):
    """One process on a GPU (``--processes``): its memory, and who runs it."""

    model_config = ConfigDict(frozen=True)

    pid: int
    memory_used_bytes: int | None = None
    #: Its share of the GPU's SM and memory-controller time (the latest sample NVML kept).
    utilization_ratio: float | None = None
    memory_utilization_ratio: float | None = None
    user: str = ""
    container: str = ""
    pod: str = ""


class DeviceReading(BaseModel):
    """One collection's reading of one device; ``up`` False means it did not answer."""

    model_config = ConfigDict(frozen=True)

    identity: DeviceIdentity
    up: bool
    #: Why fields are missing, when a person should know ("not available without root").
    note: str | None = None

    utilization_ratio: float | None = None
    memory_utilization_ratio: float | None = None
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    #: By sensor: "gpu" (the die: NVML's GPU sensor, amdgpu edge, Intel package),
    #: "hotspot" (amdgpu junction), "memory" (amdgpu mem, xe vram).
    temperatures_celsius: dict[str, float] = {}
    power_watts: float | None = None
    power_limit_watts: float | None = None
    #: "graphics" (NVIDIA's SM clock, amdgpu sclk, Intel's GT) and "memory".
    clocks_hertz: dict[str, float] = {}
    clocks_max_hertz: dict[str, float] = {}
    fan_ratio: float | None = None
    pcie_link_generation: int | None = None
    pcie_link_generation_max: int | None = None
    pcie_link_width: int | None = None
    pcie_link_width_max: int | None = None
    energy_joules_total: float | None = None

    # Health counters, where the vendor gives them.
    #: XID events seen since the exporter started, by XID (None: not watched here).
    xid_events_total: dict[str, int] | None = None
    #: Rows remapped over the board's life: "correctable", "uncorrectable" causes.
    remapped_rows_total: dict[str, int] = {}
    row_remap_pending: bool | None = None
    row_remap_failure: bool | None = None
    #: ECC errors since the driver loaded: "corrected", "uncorrected".
    ecc_errors_total: dict[str, int] = {}
    pcie_replays_total: int | None = None
    #: Active throttle (clock-event) reasons, by name; None: not reported.
    throttle_reasons: tuple[str, ...] | None = None
    #: NVLink error counters by (link, counter name) as "LINK/NAME".
    nvlink_errors_total: dict[str, int] = {}
    processes: tuple[ProcessReading, ...] | None = None


def lost_reading(identity: DeviceIdentity, note: str | None = None) -> DeviceReading:
    """A device that did not answer: up 0 and no readings at all."""
    return DeviceReading(identity=identity, up=False, note=note)


class SourceHealth(BaseModel):
    """How one source's collection loop is doing (the exporter's own series)."""

    model_config = ConfigDict(frozen=True)

    #: The collection loop: "nvml", "sysfs" (amdgpu, i915, xe) or "apple".
    source: str
    #: Whether the source could be used at all (NVML initialised, the sysfs tree readable).
    available: bool
    detail: str | None = None
    collections_total: int = 0
    #: Collections that ran past the deadline (their devices were served as down).
    overruns_total: int = 0
    last_duration_seconds: float | None = None
    last_success_timestamp_seconds: float | None = None


class Snapshot(BaseModel):
    """The last collection of every source, as served to a scrape."""

    model_config = ConfigDict(frozen=True)

    time_s: float
    hostname: str
    devices: tuple[DeviceReading, ...]
    sources: tuple[SourceHealth, ...]
