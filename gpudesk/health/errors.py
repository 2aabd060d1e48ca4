"""Health checks' root error: every error the health package raises derives from it."""

from __future__ import annotations

from gpudesk.errors import GpuDeskError


class HealthError(GpuDeskError):
    """A health check cannot run as asked (nvidia-smi, detection, an --expect spec)."""


__all__ = ["HealthError"]
