"""Cloud or buy against hand calculations."""

from __future__ import annotations

import datetime as dt

import pytest
from catalog_factory import make_entry

from gpudesk.cost import DAYS_PER_MONTH, CostInputs, compute_cost, cost_inputs_for
from gpudesk.workload.errors import PlanningInputError


def _inputs(**overrides: object) -> CostInputs:
    data: dict[str, object] = {
        "gpu_id": "rtx-4090",
        "gpu_name": "RTX 4090",
        "purchase_usd": 1800.0,
        "tdp_w": 450.0,
        "cloud_hourly_usd": 0.69,
        "hours_per_day": 8.0,
        "utilisation": 0.8,
        "kwh_price_usd": 0.15,
        "years": 3.0,
    }
    data.update(overrides)
    return CostInputs.model_validate(data)


def test_break_even_matches_the_hand_calculation() -> None:
    """Power: 0.450 kW x 0.8 x 8 h x 30.4375 d x $0.15 = $13.149/month.
    Cloud: $0.69 x 8 h x 30.4375 d = $168.015/month.
    Break-even: $1,800 / ($168.015 - $13.149) = 11.62 months.
    """
    result = compute_cost(_inputs())
    assert DAYS_PER_MONTH == 365.25 / 12
    assert result.power_monthly_usd == pytest.approx(0.45 * 0.8 * 8 * 30.4375 * 0.15)
    assert result.power_monthly_usd == pytest.approx(13.149, abs=0.001)
    assert result.cloud_monthly_usd == pytest.approx(168.015, abs=0.001)
    assert result.break_even_months == pytest.approx(1800 / (168.015 - 13.149), abs=0.01)
    assert round(result.break_even_months or 0, 2) == 11.62
    assert result.break_even_within_horizon


def test_resale_shortens_the_break_even() -> None:
    """($1,800 - $700) / $154.866 = 7.10 months."""
    result = compute_cost(_inputs(resale_usd=700.0))
    assert result.break_even_months == pytest.approx(1100 / (168.015 - 13.149), abs=0.01)
    assert result.buy_total_usd == pytest.approx(1800 - 700 + 36 * result.power_monthly_usd)


def test_series_are_monthly_over_the_horizon() -> None:
    result = compute_cost(_inputs(years=3.0))
    assert result.months == tuple(range(37))
    assert result.buy_cumulative_usd[0] == pytest.approx(1800)
    assert result.cloud_cumulative_usd[0] == 0
    assert result.cloud_cumulative_usd[36] == pytest.approx(36 * result.cloud_monthly_usd)
    crossing = next(
        month
        for month in result.months
        if result.cloud_cumulative_usd[month] >= result.buy_net_of_resale_cumulative_usd[month]
    )
    assert crossing == 12  # the first whole month after 11.62


def test_never_breaks_even_when_power_costs_more_than_the_cloud() -> None:
    result = compute_cost(_inputs(cloud_hourly_usd=0.05))
    assert result.break_even_months is None
    assert not result.break_even_within_horizon
    assert "never" in result.formulas()["break_even"]


def test_beyond_the_horizon() -> None:
    result = compute_cost(_inputs(cloud_hourly_usd=0.1, years=1.0))
    assert result.break_even_months is not None and result.break_even_months > 12
    assert not result.break_even_within_horizon


def test_count_multiplies_everything() -> None:
    one = compute_cost(_inputs())
    four = compute_cost(_inputs(count=4))
    assert four.power_monthly_usd == pytest.approx(4 * one.power_monthly_usd)
    assert four.upfront_usd == pytest.approx(4 * 1800)
    assert four.break_even_months == pytest.approx(one.break_even_months)


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"hours_per_day": 0.0}, "hours per day"),
        ({"hours_per_day": 25.0}, "hours per day"),
        ({"utilisation": 0.0}, "utilisation"),
        ({"utilisation": 1.5}, "utilisation"),
        ({"kwh_price_usd": -0.1}, "electricity"),
        ({"years": 0.0}, "years"),
        ({"purchase_usd": -5.0}, "purchase"),
        ({"cloud_hourly_usd": 0.0}, "cloud price"),
        ({"resale_usd": 5000.0}, "resale"),
        ({"resale_usd": -1.0}, "resale"),
        ({"count": 0}, "count"),
        ({"hours_per_day": float("nan")}, "hours per day"),
    ],
)
def test_bad_inputs_are_named(overrides: dict[str, object], fragment: str) -> None:
    with pytest.raises(PlanningInputError, match=fragment):
        compute_cost(_inputs(**overrides))


def test_inputs_from_the_catalog() -> None:
    entry = make_entry(
        "priced",
        price_usd=1599.0,
        price_date=dt.date(2022, 10, 12),
        price_kind="launch_msrp",
        tdp_w=450,
        cloud_hourly_usd=0.7,
        cloud_hourly_source="example",
        cloud_hourly_date=dt.date(2025, 1, 1),
    )
    inputs = cost_inputs_for(entry)
    assert (inputs.purchase_usd, inputs.tdp_w, inputs.cloud_hourly_usd) == (1599.0, 450.0, 0.7)
    overridden = cost_inputs_for(entry, purchase_usd=1200.0, cloud_hourly_usd=1.0, tdp_w=300)
    assert (overridden.purchase_usd, overridden.tdp_w, overridden.cloud_hourly_usd) == (
        1200.0,
        300.0,
        1.0,
    )


def test_missing_catalog_figures_are_named() -> None:
    bare = make_entry("bare")
    with pytest.raises(PlanningInputError, match="no price"):
        cost_inputs_for(bare, cloud_hourly_usd=1.0)
    with pytest.raises(PlanningInputError, match="no TDP"):
        cost_inputs_for(bare, cloud_hourly_usd=1.0, purchase_usd=100.0)
    with pytest.raises(PlanningInputError, match="cloud"):
        cost_inputs_for(bare, purchase_usd=100.0, tdp_w=100)
