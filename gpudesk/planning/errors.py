"""The one error the planning functions raise for input a person got wrong."""

from __future__ import annotations


class PlanningInputError(ValueError):
    """Input the estimator or cost model cannot use; the message says what and why."""
