"""The one root of every error GPUDesk raises: :class:`GpuDeskError`.

Below it each area has one root of its own, and each error carries, as
attributes, what a person needs to act on it where the raiser knows it: the
file (``path``, or ``source`` for text read from elsewhere), the input at
fault (``field``), what would work (a ``hint``, or ``problems`` with their
``fix`` for the planner's inputs). The message is one line that a person can
read as it is; the CLI prints it after ``gpudesk:`` and maps the error's type
to its exit code in one table (``gpudesk.cli.exit_codes``); the desktop app shows
the same message where the task that failed is shown.

The areas' roots:

- ``catalog.errors.CatalogError``: names, prices, the SkyPilot git source;
- ``hardware.errors.HardwareError``: NVML, Apple's system_profiler;
- ``bench.errors.BenchError``: backends, result files, the physics checks,
  measuring here (``bench.verify.VerifyError``);
- ``workload.errors.PlanningInputError``: input the planner cannot use
  (workload, memory, speed, cost, a measurement file to import);
- ``measurements.errors.MeasurementError``: the measurement store, values;
- ``health.errors.HealthError``: nvidia-smi, detection, ``doctor --expect``;
- ``fleet.errors.FleetError``: surveys (Ray, Slurm, survey files);
- ``compare.limits.ComparisonSizeError``: too few or too many GPUs;
- ``report.pdf.ReportError``: a report that cannot be written;
- ``storage.StorageError``: files GPUDesk refuses to read or write;
- ``external.ExternalError``: programs run, calls given a deadline;
- ``progress.Cancelled``: the user asked the work to stop;
- ``cli.common.CliError``: the CLI's own, with its exit code.

Where callers rely on a built-in exception, an error keeps it as a second
base: ``ValueError`` for input (pydantic validators turn it into a validation
error), ``OSError`` for files (``strerror`` and ``filename`` as ``open`` sets
them), ``LookupError`` for a name that matched nothing. So this class defines
no ``__init__``: the built-in base's arguments and attributes stay as they are.
"""

from __future__ import annotations


class GpuDeskError(Exception):
    """An error GPUDesk raises on purpose; its message is meant for a person."""


__all__ = ["GpuDeskError"]
