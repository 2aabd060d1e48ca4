"""The fleet's root error: every error the fleet package raises derives from it."""

from __future__ import annotations

from gpudesk.errors import GpuDeskError


class FleetError(GpuDeskError):
    """A fleet survey cannot run or be read (Ray, Slurm, a survey file)."""


__all__ = ["FleetError"]
