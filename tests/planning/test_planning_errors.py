"""The cost core names the missing input, never a CLI flag; the CLI adds the flag."""

from __future__ import annotations

import pytest
from catalog_factory import make_entry

from gpudesk.planning.cost import cost_inputs_for
from gpudesk.planning.errors import PlanningInputError


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
    assert "--" not in str(info.value)
    assert "Bare GPU (bare)" in str(info.value)
