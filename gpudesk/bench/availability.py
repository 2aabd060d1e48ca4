"""Which benchmark backends can run here, on which devices, and which one ``auto`` picks.

Checking imports torch and CuPy (seconds): the GUI runs :func:`check_backends`
on a worker; it is a plain function with a progress-and-cancel parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpudesk.bench.backends import AUTO_ORDER
from gpudesk.bench.backends.base import Backend, BackendStatus
from gpudesk.bench.devices import DeviceInfo
from gpudesk.bench.plan import Capabilities
from gpudesk.hardware.models import DeviceKind, GpuSnapshot, pci_address_key
from gpudesk.progress import Progress


@dataclass
class BackendInfo:
    """What is known about one backend after checking it."""

    backend: Backend
    status: BackendStatus
    devices: list[DeviceInfo] = field(default_factory=list)
    capabilities: dict[int, Capabilities] = field(default_factory=dict)
    error: str = ""

    @property
    def usable(self) -> bool:
        """Available, no error while listing devices, and at least one device."""
        return self.status.available and not self.error and bool(self.devices)


def check_backends(backends: Sequence[Backend], progress: Progress) -> list[BackendInfo]:
    """Availability, devices and capabilities of each backend (imports torch/cupy: slow)."""
    infos: list[BackendInfo] = []
    for index, backend in enumerate(backends):
        progress.check()
        progress.report(index / max(1, len(backends)), f"checking {backend.name}")
        info = BackendInfo(backend, backend.status())
        if info.status.available:
            try:
                info.devices = backend.devices()
                for device in info.devices:
                    info.capabilities[device.index] = backend.capabilities(device.index)
            except Exception as exc:  # a broken driver disables this backend only
                info.error = f"{type(exc).__name__}: {exc}"
        infos.append(info)
    return infos


def auto_choice(infos: Sequence[BackendInfo]) -> BackendInfo | None:
    """The first usable backend in :data:`AUTO_ORDER` (a GPU first), then any other usable."""
    by_name = {info.backend.name: info for info in infos}
    order = [name for name in AUTO_ORDER if name in by_name] + [
        info.backend.name for info in infos if info.backend.name not in AUTO_ORDER
    ]
    return next((by_name[name] for name in order if by_name[name].usable), None)


#: The benchmark backends that can drive each vendor's GPUs, and what to install.
_VENDOR_BACKENDS: dict[str, tuple[str, ...]] = {
    "NVIDIA": ("torch", "cupy"),
    "AMD": ("torch",),
    "Apple": ("torch",),
}
_BACKEND_PRODUCTS = {"torch": "PyTorch", "cupy": "CuPy"}


@dataclass(frozen=True)
class UnbenchmarkedGpu:
    """A detected GPU that no usable backend can run the benchmark on, and why.

    Attributes:
        gpu: the detected device.
        short_reason: a few words for a list entry ("needs PyTorch or CuPy").
        reason: the whole story, each relevant backend's own reason included.
    """

    gpu: GpuSnapshot
    short_reason: str
    reason: str


def _uuid_key(uuid: str | None) -> str | None:
    return uuid.strip().lower().removeprefix("gpu-") if uuid else None


def gpus_without_backend(
    gpus: Sequence[GpuSnapshot], infos: Sequence[BackendInfo]
) -> list[UnbenchmarkedGpu]:
    """The physical GPUs in ``gpus`` that no usable backend lists among its devices.

    A detected GPU counts as covered when a usable backend's GPU device has its
    PCI address or UUID; when either side lacks both, by vendor and count (the
    first N GPUs of a vendor are covered by N devices of that vendor).
    """
    devices = [
        device for info in infos if info.usable for device in info.devices if device.kind != "cpu"
    ]
    buses = {pci_address_key(device.pci_bus_id) for device in devices} - {None}
    uuids = {_uuid_key(device.uuid) for device in devices} - {None}
    unnamed_left: dict[str, int] = {}
    for device in devices:
        if not device.pci_bus_id and not device.uuid:
            vendor = device.vendor or ""
            unnamed_left[vendor] = unnamed_left.get(vendor, 0) + 1
    by_name = {info.backend.name: info for info in infos}
    missing: list[UnbenchmarkedGpu] = []
    for gpu in gpus:
        if gpu.kind is not DeviceKind.GPU or gpu.lost:
            continue
        if pci_address_key(gpu.pci_bus_id) in buses or _uuid_key(gpu.uuid) in uuids:
            continue
        vendor = gpu.vendor or ""
        if unnamed_left.get(vendor, 0) > 0:
            unnamed_left[vendor] -= 1
            continue
        missing.append(_why_not(gpu, by_name))
    return missing


def _why_not(gpu: GpuSnapshot, by_name: dict[str, BackendInfo]) -> UnbenchmarkedGpu:
    vendor = gpu.vendor or "unknown-vendor"
    names = _VENDOR_BACKENDS.get(vendor, ())
    details = []
    for name in names:
        info = by_name.get(name)
        if info is None:
            details.append(f"{name}: not offered here")
        elif not info.status.available:
            details.append(f"{name}: {info.status.reason or 'not available'}")
        elif info.error:
            details.append(f"{name}: {info.error}")
        else:
            details.append(f"{name}: does not list this GPU")
    products = " or ".join(_BACKEND_PRODUCTS.get(name, name) for name in names)
    problems = ["no kernel driver loaded"] if gpu.driver_loaded is False else []
    if not names:
        problems.append(f"no benchmark backend for {vendor} GPUs")
    elif all(name in by_name and not by_name[name].status.available for name in names):
        problems.append(f"needs {products}")
    elif gpu.driver_loaded is not False:
        problems.append(f"not seen by {products}")
    short = "; ".join(problems)
    reason = short
    if details:
        reason += "\n" + "\n".join(details)
    return UnbenchmarkedGpu(gpu, short, reason)
