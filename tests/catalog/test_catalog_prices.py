"""The default cloud rate and price staleness."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import reach
from catalog_factory import make_entry
from hypothesis import example, given, strategies as st

from gpudesk.catalog.metrics import cloud_hourly_usd
from gpudesk.catalog.prices import (
    cloud_rates_of_kind,
    default_cloud_rate,
    is_stale,
    months_before,
    stale_note,
)
from gpudesk.catalog.schema import CloudRateKind


def _rate(provider: str, usd: float, kind: str = "on_demand", day: int = 1) -> dict[str, Any]:
    return {
        "provider": provider,
        "usd_per_gpu_hour": usd,
        "kind": kind,
        "date": dt.date(2026, 11, day),
        "source": f"https://{provider.lower()}.example/pricing",
    }


def test_default_rate_is_the_lowest_on_demand_never_spot_or_marketplace() -> None:
    entry = make_entry(
        cloud_rates=[
            _rate("AWS", 6.88),
            _rate("Vast", 1.65, "marketplace"),
            _rate("Lambda", 2.99),
            _rate("RunPod", 1.99, "spot"),
        ]
    )
    rate = default_cloud_rate(entry)
    assert rate is not None and rate.provider == "Lambda"
    assert [r.provider for r in cloud_rates_of_kind(entry, CloudRateKind.ON_DEMAND)] == [
        "Lambda",
        "AWS",
    ]


def test_equal_rates_prefer_the_newest() -> None:
    entry = make_entry(cloud_rates=[_rate("Old", 2.0, day=1), _rate("New", 2.0, day=20)])
    rate = default_cloud_rate(entry)
    assert rate is not None and rate.provider == "New"


def test_no_on_demand_rate_means_no_default() -> None:
    assert default_cloud_rate(make_entry()) is None
    only_spot = make_entry(cloud_rates=[_rate("RunPod", 1.0, "spot")])
    assert default_cloud_rate(only_spot) is None
    assert cloud_hourly_usd(only_spot) is None


@pytest.mark.parametrize(
    ("today", "months", "expected"),
    [
        (dt.date(2026, 12, 1), 12, dt.date(2025, 12, 1)),
        (dt.date(2026, 3, 31), 1, dt.date(2026, 2, 28)),
        (dt.date(2024, 3, 31), 1, dt.date(2024, 2, 29)),
        (dt.date(2026, 1, 15), 1, dt.date(2025, 12, 15)),
        (dt.date(2026, 1, 15), 25, dt.date(2023, 12, 15)),
    ],
)
def test_months_before_counts_calendar_months(
    today: dt.date, months: int, expected: dt.date
) -> None:
    assert months_before(today, months) == expected


def test_is_stale_after_twelve_months() -> None:
    today = dt.date(2026, 12, 1)
    assert not is_stale(dt.date(2025, 12, 1), today)
    assert is_stale(dt.date(2025, 11, 30), today)
    assert not is_stale(dt.date(2026, 11, 30), today)
    assert is_stale(None, today)
    assert is_stale(dt.date(2026, 5, 1), today, months=6)


@st.composite
def _seen_and_today(draw: st.DrawFn) -> tuple[dt.date, dt.date]:
    """Two dates, most of them within a few years of each other (either way round), so
    that both sides of the twelve-month line come often; two random dates are decades
    apart."""
    today = draw(st.dates(min_value=dt.date(2, 1, 1)))
    if draw(st.integers(0, 3)) == 0:
        return draw(st.dates()), today
    days_back = draw(st.integers(-400, 400) | st.integers(340, 2000) | st.integers(360, 370))
    try:
        return today - dt.timedelta(days=days_back), today
    except OverflowError:
        return dt.date.max if days_back < 0 else dt.date.min, today


@given(_seen_and_today())
@example((dt.date.min, dt.date(2026, 12, 1)))
@example((dt.date(2025, 11, 30), dt.date(2026, 12, 1)))
@pytest.mark.reaches(stale=19, fresh=32)
def test_staleness_is_monotonic(dates: tuple[dt.date, dt.date]) -> None:
    seen, today = dates
    if is_stale(seen, today):
        reach.reached("stale")
        assert seen < today
        # date.min has no day before it (subtracting would overflow).
        assert seen == dt.date.min or is_stale(seen - dt.timedelta(days=1), today)
    else:
        reach.reached("fresh")
        assert seen >= months_before(today, 12)
        assert seen == dt.date.max or not is_stale(seen + dt.timedelta(days=1), today)


def test_stale_note_reads_month_and_year() -> None:
    assert stale_note("price", dt.date(2024, 3, 9)) == "price from 2024-03, may be out of date"
    assert stale_note("cloud rate", None) == "cloud rate undated, may be out of date"
