"""The measurements' root error: the store and impossible values derive from it.

A file that cannot be imported is input the planner cannot use: its
:class:`~gpudesk.measurements.file_import.ImportFileError` is a
:class:`~gpudesk.workload.errors.PlanningInputError`, as before.
"""

from __future__ import annotations

from gpudesk.errors import GpuDeskError


class MeasurementError(GpuDeskError):
    """The measurement store or a measured value cannot be used."""


__all__ = ["MeasurementError"]
