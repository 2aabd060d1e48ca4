"""Hardware detection's root error: every error the hardware package raises derives from it."""

from __future__ import annotations

from gpudesk.errors import GpuDeskError


class HardwareError(GpuDeskError):
    """Detection could not read a device or a tool's report (NVML, system_profiler)."""


__all__ = ["HardwareError"]
