"""The speed model against the published measurements, with the issue's tolerances."""

from __future__ import annotations

import json
import math

import pytest

from gpudesk.planning.speed.data import Workload
from gpudesk.planning.speed.fitting import FittedParams, fitted_params, fresh_fit
from gpudesk.planning.speed.validation import (
    MIN_INSIDE_SHARE,
    TOLERANCE,
    check_all,
    overall_inside_share,
    summarise,
)


@pytest.fixture(scope="module")
def checked():  # type: ignore[no-untyped-def]
    return check_all()


@pytest.mark.parametrize("held_out", [False, True], ids=["fitted", "held-out"])
@pytest.mark.parametrize("workload", list(TOLERANCE), ids=lambda item: item.value)
def test_median_error_within_the_issue_tolerance(
    checked, workload: Workload, held_out: bool
) -> None:  # type: ignore[no-untyped-def]
    (summary,) = [
        item
        for item in summarise(checked)
        if item.workload is workload and item.held_out is held_out
    ]
    assert summary.rows >= 8
    assert summary.median_abs_log <= TOLERANCE[workload], summary


def test_most_measurements_fall_inside_the_range(checked) -> None:  # type: ignore[no-untyped-def]
    assert overall_inside_share(checked) >= MIN_INSIDE_SHARE
    held = [item for item in checked if item.row.measurement.held_out]
    assert sum(item.inside for item in held) / len(held) >= MIN_INSIDE_SHARE


def test_the_model_is_not_a_lookup_table(checked) -> None:  # type: ignore[no-untyped-def]
    # A fit of the physics leaves residuals; a table of the figures would not.
    errors = [
        abs(item.log_ratio) for item in checked if item.row.measurement.workload is Workload.DECODE
    ]
    assert sum(error > math.log(1.05) for error in errors) > len(errors) / 5


def test_stored_fit_matches_a_fresh_fit_of_the_data() -> None:
    stored = fitted_params().data
    fresh = json.loads(json.dumps(fresh_fit()))
    assert stored.keys() == fresh.keys()
    for section in stored:
        assert stored[section].keys() == fresh[section].keys(), section
        for key, values in stored[section].items():
            for name, value in values.items():
                assert fresh[section][key][name] == pytest.approx(value, rel=1e-6), (
                    f"fitted.json is stale at {section}/{key}/{name}: refit with "
                    "python -m gpudesk.planning.speed.fitting"
                )


def test_unknown_engine_falls_back_with_a_note() -> None:
    from catalog_factory import make_entry

    from gpudesk.planning.speed.estimate import Engine
    from gpudesk.planning.speed.hardware import rates_for

    params = FittedParams(fitted_params().data)
    _, words, own = params.inference(Engine.TRANSFORMERS, rates_for(make_entry("x")))
    assert not own
    assert "no published transformers measurement" in words
