"""The root of the telemetry package's errors."""

from __future__ import annotations

from gpudesk.errors import GpuDeskError


class TelemetryError(GpuDeskError):
    """Anything the live readings or the exporter raise."""


class ListenAddressError(TelemetryError, ValueError):
    """A ``--listen`` value that cannot be used; ``reason`` says why (a usage error)."""

    def __init__(self, value: str, reason: str) -> None:
        super().__init__(f"--listen {value!r}: {reason}")
        self.value = value
        self.reason = reason


class ExporterBindError(TelemetryError):
    """The address is right but could not be bound (in use, not on this machine)."""
