"""The benchmark's root error: every error the bench package raises derives from it."""

from __future__ import annotations

from gpudesk.errors import GpuDeskError


class BenchError(GpuDeskError):
    """A benchmark, its backend, a result file or a measurement cannot be used."""


__all__ = ["BenchError"]
