"""Snapshots of this machine: GPUs (and MIG instances), CPU, RAM, and why NVML failed.

Every device field is optional: ``None`` means the query was not supported on
this device or driver ("n/a"), never an error for the device as a whole.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, computed_field


def normalise_bdf(text: str) -> str:
    """ "00000000:03:00.0" (NVML style) and "0000:03:00.0" both as "0000:03:00.0"."""
    domain, _, rest = text.strip().lower().partition(":")
    return f"{int(domain, 16):04x}:{rest}"


def pci_address_key(bus_id: str | None) -> str | None:
    """A PCI address in one spelling for comparing NVML, sysfs and PyTorch; None if unusable."""
    if not bus_id:
        return None
    try:
        return normalise_bdf(bus_id)
    except ValueError:
        return None


class NvmlStatus(StrEnum):
    """Whether NVML could be used, and if not, why."""

    OK = "ok"
    LIBRARY_NOT_FOUND = "library_not_found"
    DRIVER_NOT_LOADED = "driver_not_loaded"
    VERSION_MISMATCH = "version_mismatch"
    NO_PERMISSION = "no_permission"
    NO_DEVICES = "no_devices"
    GPU_LOST = "gpu_lost"
    #: The driver lacks NVML's initialisation entry points the binding needs.
    DRIVER_TOO_OLD = "driver_too_old"
    UNKNOWN = "unknown"


#: One line a user can act on, per status.
STATUS_HINTS: dict[NvmlStatus, str] = {
    NvmlStatus.OK: "NVML is working.",
    NvmlStatus.LIBRARY_NOT_FOUND: (
        "Install the NVIDIA driver if this machine has an NVIDIA GPU; AMD, Intel and Apple "
        "GPUs do not need it."
    ),
    NvmlStatus.DRIVER_NOT_LOADED: (
        "The NVIDIA kernel driver is not loaded: run `sudo modprobe nvidia` or reboot, "
        "and check `dmesg | grep -i nvidia` (Secure Boot can block the module)."
    ),
    NvmlStatus.VERSION_MISMATCH: (
        "The NVIDIA driver was upgraded but the old kernel module is still loaded: "
        "reboot (or reload the nvidia modules) so library and driver versions match."
    ),
    NvmlStatus.NO_PERMISSION: (
        "Not allowed to open the GPU device files: check permissions on /dev/nvidia* "
        "(group membership, container --gpus flag, cgroup device rules)."
    ),
    NvmlStatus.NO_DEVICES: (
        "The NVIDIA driver is running but reports no GPU: check CUDA_VISIBLE_DEVICES-style "
        "restrictions of your container or job scheduler, and `nvidia-smi -L`."
    ),
    NvmlStatus.GPU_LOST: (
        "A GPU has fallen off the bus: check `dmesg` for Xid 79, the card's power and "
        "seating, then reboot."
    ),
    NvmlStatus.DRIVER_TOO_OLD: (
        "The NVIDIA driver is older than this nvidia-ml-py binding supports (no "
        "nvmlInitWithFlags or nvmlInit_v2): update the NVIDIA driver, or install an "
        "nvidia-ml-py release from the driver's time."
    ),
    NvmlStatus.UNKNOWN: (
        "NVML failed with an unexpected error: run `nvidia-smi` to see whether the driver "
        "works, and report the detail below if it does."
    ),
}


#: A few words per status, for headings.
STATUS_TITLES: dict[NvmlStatus, str] = {
    NvmlStatus.OK: "NVML working",
    NvmlStatus.LIBRARY_NOT_FOUND: "NVIDIA driver not installed (NVML library not found)",
    NvmlStatus.DRIVER_NOT_LOADED: "NVIDIA driver not loaded",
    NvmlStatus.VERSION_MISMATCH: "NVIDIA driver and library versions differ",
    NvmlStatus.NO_PERMISSION: "No permission to use the GPU",
    NvmlStatus.NO_DEVICES: "No NVIDIA GPU found",
    NvmlStatus.GPU_LOST: "A GPU was lost",
    NvmlStatus.DRIVER_TOO_OLD: "NVIDIA driver too old for this NVML binding",
    NvmlStatus.UNKNOWN: "NVML failed",
}


#: Where ``memory_used_mib`` came from: ``nvmlDeviceGetMemoryInfo_v2`` (R515+ drivers;
#: driver-reserved memory apart, as nvidia-smi shows) or v1 (reserved counted as used).
MEMORY_USED_V2 = "nvml_v2"
MEMORY_USED_V1 = "nvml_v1"


class DeviceKind(StrEnum):
    GPU = "gpu"
    MIG = "mig"


class DeviceSource(StrEnum):
    """Where a device's figures came from."""

    NVML = "nvml"
    AMDSMI = "amdsmi"
    SYSFS = "sysfs"
    SYSTEM_PROFILER = "system_profiler"


#: Where each source gets live figures from; system_profiler has none (a snapshot only).
LIVE_SOURCES = frozenset({DeviceSource.NVML, DeviceSource.AMDSMI, DeviceSource.SYSFS})


class GpuSnapshot(BaseModel):
    """One physical GPU, or one MIG instance (``kind == "mig"``) linked to its parent."""

    model_config = ConfigDict(frozen=True)

    kind: DeviceKind = DeviceKind.GPU
    index: int | None = None
    name: str | None = None
    uuid: str | None = None
    #: MIG instances only: the physical GPU's UUID and its index.
    parent_uuid: str | None = None
    parent_index: int | None = None
    mig_gpu_instance_id: int | None = None
    mig_compute_instance_id: int | None = None
    #: True when the device stopped answering (NVML "GPU is lost").
    lost: bool = False
    #: "NVIDIA", "AMD", "Intel", "Apple" (None when the vendor id is not one we know).
    vendor: str | None = None
    source: DeviceSource = DeviceSource.NVML
    #: Whether a kernel driver that can run compute work is bound (None: unknown).
    driver_loaded: bool | None = None
    #: The kernel driver bound to the PCI device ("amdgpu", "nouveau"), from sysfs.
    kernel_driver: str | None = None
    #: What to do about this device, when something is wrong with it (no driver bound...).
    hint: str | None = None

    pci_bus_id: str | None = None
    #: Like the catalog's ``pci_device_ids``: "0x2684".
    pci_device_id: str | None = None
    pci_vendor_id: str | None = None
    pci_subsystem_vendor_id: str | None = None
    pci_subsystem_device_id: str | None = None

    memory_total_mib: int | None = None
    memory_used_mib: int | None = None
    memory_free_mib: int | None = None
    #: :data:`MEMORY_USED_V2` or :data:`MEMORY_USED_V1`; None when memory was not read.
    memory_used_source: str | None = None
    #: Memory the driver reserves (v2 only).
    memory_reserved_mib: int | None = None
    memory_bus_width_bits: int | None = None

    cuda_cores: int | None = None
    #: Streaming multiprocessors; NVML gives these for MIG instances only.
    sm_count: int | None = None
    compute_capability: str | None = None

    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    memory_clock_mhz: int | None = None
    memory_clock_max_mhz: int | None = None

    power_limit_w: float | None = None
    power_default_limit_w: float | None = None
    power_draw_w: float | None = None
    temperature_c: int | None = None
    fan_percent: int | None = None
    utilization_gpu_percent: int | None = None
    utilization_memory_percent: int | None = None

    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    #: Link speed per lane as sysfs gives it ("16.0 GT/s PCIe" -> 16.0).
    pcie_speed_current_gts: float | None = None
    pcie_speed_max_gts: float | None = None

    #: Apple Silicon: GPU cores; unified memory is ``memory_total_mib``.
    gpu_core_count: int | None = None
    #: Memory a model can use: for unified memory, the total less what the OS keeps.
    memory_for_models_mib: int | None = None
    #: The GPU's own graphics IP as the compiler names it ("gfx1151"), from amdgpu's
    #: IP discovery; None elsewhere.
    gfx_target: str | None = None
    #: True when ``memory_total_mib`` is system memory shared with the CPU (an APU,
    #: Apple Silicon); None when unknown.
    memory_shared_with_cpu: bool | None = None
    #: How ``memory_total_mib`` was made up, where it is not one figure the driver gives
    #: (an APU: its VRAM carve-out plus the GTT the kernel lets it map).
    memory_basis: str | None = None

    ecc_enabled: bool | None = None
    mig_enabled: bool | None = None
    #: Number of MIG instances found under this GPU (physical GPUs with MIG on).
    mig_instance_count: int | None = None
    #: Decoded clock-event (throttle) reasons, e.g. ["gpu_idle"]; [] means none active.
    clock_event_reasons: tuple[str, ...] | None = None
    running_process_count: int | None = None

    #: "default", "exclusive_process", "prohibited" (nvmlComputeMode_t).
    compute_mode: str | None = None
    #: Uncorrected ECC errors since the driver loaded / over the board's life (ECC on only).
    ecc_uncorrected_volatile: int | None = None
    ecc_uncorrected_aggregate: int | None = None
    #: Retired pages waiting for a reboot (pre-Ampere); remapped rows pending or failed (A100+).
    retired_pages_pending: bool | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None

    @property
    def key(self) -> str:
        """A stable key for this device: the NVML UUID, else its PCI address, else source+index."""
        if self.uuid:
            return self.uuid
        if self.pci_bus_id:
            return f"pci:{self.pci_bus_id}"
        return f"{self.source.value}:{self.index}"

    @property
    def has_live_figures(self) -> bool:
        """Whether the live monitor can sample this device.

        Physical, answering, from a source with live figures, with its driver
        loaded; on sysfs only amdgpu publishes live figures (busy %, memory,
        hwmon), and i915 its local memory use.
        """
        if self.kind is not DeviceKind.GPU or self.lost or self.source not in LIVE_SOURCES:
            return False
        if self.driver_loaded is False:
            return False
        if self.source is DeviceSource.SYSFS:
            return self.kernel_driver == "amdgpu" or self.memory_used_mib is not None
        return True

    @property
    def memory_total_gib(self) -> float | None:
        if self.memory_total_mib is None:
            return None
        return self.memory_total_mib / 1024

    @property
    def label(self) -> str:
        """A short name for lists and chart legends."""
        name = self.name or "unknown GPU"
        if self.kind is DeviceKind.MIG:
            return f"GPU {self.parent_index} MIG {self.index}: {name}"
        return f"GPU {self.index}: {name}" if self.index is not None else name


class DeviceSample(BaseModel):
    """One live reading of one device (the monitor's unit); None = n/a."""

    model_config = ConfigDict(frozen=True)

    #: The device's :attr:`GpuSnapshot.key` (the NVML UUID for NVIDIA GPUs).
    uuid: str
    index: int | None = None
    lost: bool = False
    utilization_gpu_percent: int | None = None
    utilization_memory_percent: int | None = None
    memory_used_mib: int | None = None
    temperature_c: int | None = None
    fan_percent: int | None = None
    power_draw_w: float | None = None
    sm_clock_mhz: int | None = None


class CpuInfo(BaseModel):
    """The CPU: the fallback benchmark target."""

    model_config = ConfigDict(frozen=True)

    model: str | None = None
    architecture: str | None = None
    #: Physical cores (None when the OS does not say).
    cores: int | None = None
    #: Logical CPUs (hardware threads).
    threads: int | None = None


class DetectionResult(BaseModel):
    """Everything detected on this machine at one moment."""

    model_config = ConfigDict(frozen=True)

    timestamp: dt.datetime
    status: NvmlStatus
    hint: str
    #: The raw NVML error text when status is not ok (for bug reports).
    detail: str | None = None
    driver_version: str | None = None
    #: The CUDA version the driver supports, like "12.4".
    cuda_driver_version: str | None = None
    nvml_version: str | None = None
    gpus: tuple[GpuSnapshot, ...] = ()
    cpu: CpuInfo = Field(default_factory=CpuInfo)
    ram_total_gib: float | None = None
    #: The operating system's version where a source reports it ("macOS 15.1").
    os_version: str | None = None
    #: What the other sources found or why they could not be used, one sentence each
    #: ("amdsmi is not installed: AMD figures read from sysfs").
    notes: tuple[str, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status_text(self) -> str:
        """What was found and what was not: "2 AMD GPUs via sysfs; NVML library not found"."""
        return describe_detection(self)

    @property
    def nvml_problem_matters(self) -> bool:
        """Whether NVML's state is a problem worth showing.

        A missing NVML library on a machine whose GPUs are all AMD, Intel or Apple
        is normal, not a problem; any other failure, or an NVIDIA device on the bus,
        or no GPU at all, is.
        """
        if self.status is NvmlStatus.OK:
            return False
        if self.status is NvmlStatus.LIBRARY_NOT_FOUND and self.usable_gpus:
            return any(gpu.vendor == "NVIDIA" for gpu in self.gpus)
        return True

    @property
    def usable_gpus(self) -> tuple[GpuSnapshot, ...]:
        """Devices that answered (not lost), physical GPUs and MIG instances."""
        return tuple(gpu for gpu in self.gpus if not gpu.lost)

    @property
    def physical_gpus(self) -> tuple[GpuSnapshot, ...]:
        return tuple(gpu for gpu in self.gpus if gpu.kind is DeviceKind.GPU)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


#: How each source is named in the status sentence.
_SOURCE_WORDS = {
    DeviceSource.NVML: "NVML",
    DeviceSource.AMDSMI: "amdsmi",
    DeviceSource.SYSFS: "sysfs",
    DeviceSource.SYSTEM_PROFILER: "system_profiler",
}


#: What a vendor's devices are called where they are not GPUs.
_DEVICE_NOUNS = {"Google": "TPU", "AWS": "accelerator"}


def describe_detection(result: DetectionResult) -> str:
    """One line: the GPUs found, by vendor and source, then what NVML said when it failed."""
    groups: dict[tuple[str, DeviceSource, bool], int] = {}
    for gpu in result.physical_gpus:
        if gpu.lost:
            continue
        without_driver = gpu.driver_loaded is False
        group = (gpu.vendor or "unknown", gpu.source, without_driver)
        groups[group] = groups.get(group, 0) + 1
    parts = []
    for (vendor, source, without_driver), count in groups.items():
        noun = _DEVICE_NOUNS.get(vendor, "GPU")
        text = f"{_plural(count, f'{vendor} {noun}')} via {_SOURCE_WORDS[source]}"
        if without_driver:
            text += " (driver not loaded)"
        parts.append(text)
    lost = sum(1 for gpu in result.physical_gpus if gpu.lost)
    if lost:
        parts.append(f"{_plural(lost, 'GPU')} lost")
    if not parts:
        parts.append("No GPU found")
    if result.status is not NvmlStatus.OK:
        parts.append(title_for(result.status))
    return "; ".join(parts)


def hint_for(status: NvmlStatus) -> str:
    return STATUS_HINTS[status]


def title_for(status: NvmlStatus) -> str:
    return STATUS_TITLES[status]
