"""The one error the planning functions raise for input a person got wrong.

Words at the edges: the core says *which input* is wrong (its field name), *what*
it was given, *why* that cannot be used and, where one exists, *what would work*,
all as data. The CLI words that with its flags, the Plan tab with its control
labels ("Purchase price (each)"); the message of the exception is the core's own
wording, for logs and other callers, and names no flag or control.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from gpudesk.errors import GpuDeskError


@dataclasses.dataclass(frozen=True)
class InputProblem:
    """One input the planner cannot use.

    Attributes:
        field: the core's name of the input (a :class:`~gpudesk.cost.CostInputs`
            or :class:`~gpudesk.memory.breakdown.WorkloadSpec` field, e.g. ``purchase_usd``).
        value: what it was given; None when it has no value at all (nothing given and
            nothing in the catalog).
        reason: why that cannot be used, in the core's words, without the input's name
            ("must be above 0 and at most 24").
        fix: input values that would work, field name to value in the core's terms
            (``{"workload": "qlora"}``); empty when the reason says it all (a range).
    """

    field: str
    value: object
    reason: str
    fix: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def missing(self) -> bool:
        """True when the input has no value and one must be given."""
        return self.value is None


class PlanningInputError(GpuDeskError, ValueError):
    """Input the estimator or cost model cannot use; the message says what and why.

    Args:
        message: the core's wording (no CLI flag, no GUI control).
        problems: the same as data, one per input at fault, for the edges to word;
            empty for errors that concern no single input.
    """

    def __init__(self, message: str, *, problems: Sequence[InputProblem] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[InputProblem, ...] = tuple(problems)

    @property
    def missing(self) -> str | None:
        """The field of the first input that has no value and must be given, or None."""
        return next((problem.field for problem in self.problems if problem.missing), None)
