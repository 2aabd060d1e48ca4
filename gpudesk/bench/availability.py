"""Which benchmark backends can run here, on which devices, and which one ``auto`` picks.

Checking imports torch and CuPy (seconds): the GUI runs :func:`check_backends`
on a worker; it is a plain function with a progress-and-cancel parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpudesk.bench.backends import AUTO_ORDER
from gpudesk.bench.backends.base import Backend, BackendStatus, DeviceInfo
from gpudesk.bench.plan import Capabilities
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
