"""The catalog's root error: every error the catalog raises derives from it."""

from __future__ import annotations

from gpudesk.errors import GpuDeskError


class CatalogError(GpuDeskError):
    """A name, prices or the SkyPilot git source failed; the message says what and why."""


__all__ = ["CatalogError"]
