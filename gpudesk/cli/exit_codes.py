"""Which exit code an error that reaches :func:`gpudesk.cli.main` ends the command with.

The one table for errors no command words itself. A command still turns the
errors it expects into a :class:`~gpudesk.cli.common.CliError` with its own
words and code (``--gpu: no GPU named ...``, exit 2); an error that escapes it
(a :class:`~gpudesk.errors.GpuDeskError` raised deeper than the command looked)
ends here: one line, ``gpudesk: <message>``, and the code of its first row
below, as docs/commands.md's exit codes say: 2 for input that cannot be used, 3 for
nothing to work on (no GPU, no Slurm, no Ray cluster), 130 for a stop the user
asked for, 1 for any other failure. The traceback is printed with ``gpudesk
--debug`` only.

The modules are imported when an error is looked up, not before: a command's
start stays as light as it was.
"""

from __future__ import annotations

import functools

from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NOTHING_DETECTED,
    EXIT_USAGE,
    CliError,
)
from gpudesk.errors import GpuDeskError


@functools.cache
def exit_code_table() -> tuple[tuple[type[GpuDeskError], int], ...]:
    """(error type, exit code) rows; the first row an error is an instance of applies."""
    from gpudesk.bench.backends import UnknownBackendError
    from gpudesk.catalog.price_snapshots import PriceSourceError
    from gpudesk.catalog.query import NameLookupError
    from gpudesk.compare.limits import ComparisonSizeError
    from gpudesk.fleet.document import SurveyFileError
    from gpudesk.fleet.slurm import SlurmUnavailableError
    from gpudesk.fleet.survey import (
        ClusterUnreachableError,
        FleetUnavailableError,
        FleetUsageError,
    )
    from gpudesk.health.doctor import NoNvidiaGpuError, NvidiaSmiUnusableError
    from gpudesk.health.expect import SpecError
    from gpudesk.progress import Cancelled
    from gpudesk.workload.errors import PlanningInputError

    return (
        (Cancelled, EXIT_INTERRUPTED),
        # bad usage or input: a name, a flag's value, a file given to read
        (NameLookupError, EXIT_USAGE),
        (PriceSourceError, EXIT_USAGE),
        (PlanningInputError, EXIT_USAGE),
        (ComparisonSizeError, EXIT_USAGE),
        (UnknownBackendError, EXIT_USAGE),
        (SpecError, EXIT_USAGE),
        (NvidiaSmiUnusableError, EXIT_USAGE),
        (FleetUsageError, EXIT_USAGE),
        (FleetUnavailableError, EXIT_USAGE),
        (SurveyFileError, EXIT_USAGE),
        # nothing to work on here
        (NoNvidiaGpuError, EXIT_NOTHING_DETECTED),
        (SlurmUnavailableError, EXIT_NOTHING_DETECTED),
        (ClusterUnreachableError, EXIT_NOTHING_DETECTED),
        # anything else GPUDesk raises: a failure
        (GpuDeskError, EXIT_FAILURE),
    )


def exit_code_for(error: GpuDeskError) -> int:
    """The exit code ``error`` ends a command with (a ``CliError`` carries its own)."""
    if isinstance(error, CliError):
        return error.exit_code
    return next(code for kind, code in exit_code_table() if isinstance(error, kind))


def error_line(error: BaseException) -> str:
    """The one line printed for ``error``: its message, or its type's name when it has none."""
    return f"gpudesk: {str(error) or type(error).__name__}"


__all__ = ["error_line", "exit_code_for", "exit_code_table"]
