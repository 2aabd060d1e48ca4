"""The one error the planning functions raise for input a person got wrong."""

from __future__ import annotations


class PlanningInputError(ValueError):
    """Input the estimator or cost model cannot use; the message says what and why.

    The message names inputs in the core's words, never a CLI flag or a GUI
    control: each edge words the fix itself from ``missing``.

    Attributes:
        missing: the input (a :class:`~gpudesk.planning.cost.CostInputs` field name
            such as ``purchase_usd``) that has no value and must be given, or None.
    """

    def __init__(self, message: str, *, missing: str | None = None) -> None:
        super().__init__(message)
        self.missing = missing
