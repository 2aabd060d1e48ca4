"""The cost core: one reading of the catalog, typed errors that name fields, never flags."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from catalog_factory import make_entry
from hypothesis import given, settings, strategies as st

from gpudesk.catalog.prices import default_cloud_rate
from gpudesk.catalog.schema import CatalogEntry, PriceKind
from gpudesk.cost import CostInputs, catalog_cost_figures, compute_cost, cost_inputs_for
from gpudesk.memory.breakdown import DType, Workload, WorkloadSpec, estimate_memory
from gpudesk.workload.errors import InputProblem, PlanningInputError
from gpudesk.workload.presets import find_preset
from gpudesk.workload.quant import QuantFormat


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        ({}, "purchase_usd"),
        ({"purchase_usd": 1000.0}, "tdp_w"),
        ({"purchase_usd": 1000.0, "tdp_w": 300.0}, "cloud_hourly_usd"),
    ],
)
def test_a_missing_catalog_figure_names_the_input_without_flags(
    given: dict[str, float], missing: str
) -> None:
    entry = make_entry("bare", name="Bare GPU")
    with pytest.raises(PlanningInputError) as info:
        cost_inputs_for(entry, **given)  # type: ignore[arg-type]
    assert info.value.missing == missing
    assert info.value.problems[0].value is None
    assert "--" not in str(info.value)
    assert "Bare GPU (bare)" in str(info.value)


def _priced(**overrides: object) -> CatalogEntry:
    data: dict[str, object] = {
        "name": "Priced GPU",
        "price_usd": 1599.0,
        "price_date": dt.date(2022, 10, 12),
        "price_kind": "launch_msrp",
        "tdp_w": 450,
        "cloud_hourly_usd": 0.7,
        "cloud_hourly_source": "example provider page",
        "cloud_hourly_date": dt.date(2025, 1, 1),
    }
    data.update(overrides)
    return make_entry("priced", **data)


def test_catalog_cost_figures_read_price_tdp_rate_and_their_age() -> None:
    entry = _priced()
    figures = catalog_cost_figures(entry, today=dt.date(2025, 3, 1))
    assert (figures.purchase_usd, figures.tdp_w, figures.cloud_hourly_usd) == (1599.0, 450.0, 0.7)
    assert figures.price_kind is PriceKind.LAUNCH_MSRP
    assert figures.price_date == dt.date(2022, 10, 12)
    assert figures.price_stale and not figures.cloud_rate_stale
    assert figures.cloud_rate == default_cloud_rate(entry)
    later = catalog_cost_figures(entry, today=dt.date(2027, 1, 1))
    assert later.cloud_rate_stale
    # what the CLI's defaults are made of
    inputs = cost_inputs_for(entry)
    assert (inputs.purchase_usd, inputs.tdp_w, inputs.cloud_hourly_usd) == (1599.0, 450.0, 0.7)


def test_catalog_cost_figures_of_a_bare_entry_are_none() -> None:
    figures = catalog_cost_figures(make_entry("bare"))
    assert figures.purchase_usd is None and figures.tdp_w is None and figures.cloud_rate is None
    assert figures.cloud_hourly_usd is None
    assert not figures.price_stale and not figures.cloud_rate_stale


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("hours_per_day", 30.0, "must be above 0 and at most 24"),
        ("utilisation", 0.0, "must be above 0 and at most 1"),
        ("count", 65, "must be between 1 and 64"),
        ("resale_usd", -1.0, "cannot be negative"),
        ("purchase_usd", float("inf"), "is not a finite number"),
    ],
)
def test_a_bad_cost_input_carries_field_value_and_reason(
    field: str, value: float, reason: str
) -> None:
    inputs = cost_inputs_for(_priced()).model_copy(update={field: value})
    with pytest.raises(PlanningInputError) as info:
        compute_cost(inputs)
    assert info.value.problems == (InputProblem(field, value, reason),)
    assert info.value.missing is None
    assert "--" not in str(info.value)


def test_every_bad_cost_input_is_reported_at_once() -> None:
    inputs = cost_inputs_for(_priced(), hours_per_day=0.0, years=40.0, resale_usd=2000.0)
    with pytest.raises(PlanningInputError) as info:
        compute_cost(inputs)
    assert [problem.field for problem in info.value.problems] == [
        "hours_per_day",
        "years",
        "resale_usd",
    ]
    assert str(info.value).startswith("hours per day 0 must be above 0 and at most 24; years 40")


_COST_FIELDS = set(CostInputs.model_fields) - {"gpu_id", "gpu_name"}
_any_number = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(min_value=-10.0, max_value=100.0),
)


@settings(max_examples=300, deadline=None)
@given(
    values=st.fixed_dictionaries(
        {name: _any_number for name in _COST_FIELDS - {"count"}}
        | {"count": st.integers(min_value=-5, max_value=200)}
    )
)
def test_cost_errors_always_name_real_fields_with_their_values(values: dict[str, float]) -> None:
    inputs = CostInputs(gpu_id="x", gpu_name="X", **values)  # type: ignore[arg-type]
    try:
        result = compute_cost(inputs)
    except PlanningInputError as exc:
        assert exc.problems
        for problem in exc.problems:
            assert problem.field in _COST_FIELDS
            given_value = values[problem.field]
            assert problem.value == given_value or (
                math.isnan(given_value) and math.isnan(float(str(problem.value)))
            )
            assert problem.reason and "--" not in problem.reason
    else:
        assert math.isfinite(result.buy_total_usd) and math.isfinite(result.cloud_total_usd)


_FORMAT_CASES = [
    (workload, dtype, quant)
    for workload in Workload
    for dtype in DType
    for quant in (None, *QuantFormat)
]


@pytest.mark.parametrize(("workload", "dtype", "quant"), _FORMAT_CASES)
def test_a_suggested_fix_for_a_workload_works(
    workload: Workload, dtype: DType, quant: QuantFormat | None
) -> None:
    """Wherever the memory core suggests other values, taking them clears that problem
    (another input may still be wrong: QLoRA on a GGUF file with an int8 dtype)."""
    model = find_preset("llama-3.1-8b")
    spec = WorkloadSpec(workload=workload, dtype=dtype, quant=quant)
    try:
        estimate_memory(model, spec)
    except PlanningInputError as exc:
        assert exc.problems, str(exc)
        (problem,) = exc.problems
        assert problem.field in WorkloadSpec.model_fields
        assert problem.value == getattr(spec, problem.field).value
        assert "--" not in str(exc) and "--" not in problem.reason
        if problem.fix:
            fixed = spec.model_copy(
                update={
                    field: type(getattr(spec, field) or QuantFormat.INT8)(value)
                    for field, value in problem.fix.items()
                }
            )
            try:
                estimate_memory(model, fixed)
            except PlanningInputError as again:
                assert again.problems and again.problems[0].reason != problem.reason


def test_training_int8_weights_suggests_qlora() -> None:
    spec = WorkloadSpec(workload=Workload.TRAIN, dtype=DType.INT8)
    with pytest.raises(PlanningInputError) as info:
        estimate_memory(find_preset("llama-3.1-8b"), spec)
    (problem,) = info.value.problems
    assert (problem.field, problem.value) == ("dtype", "int8")
    assert dict(problem.fix) == {"workload": "qlora", "dtype": "bf16"}
    assert problem.reason.startswith("cannot be fully fine-tuned")
