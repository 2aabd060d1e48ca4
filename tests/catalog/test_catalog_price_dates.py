"""Issue 30: a price or rate dated in the future, or before any GPU price could be seen, is
refused with the field named."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from catalog_factory import make_entry, write_entry
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError

from gpudesk.catalog.loader import load_catalog

TODAY = dt.datetime.now(dt.UTC).date()


def _priced(release_year: int, when: dt.date) -> object:
    return make_entry(
        "dated",
        release_year=release_year,
        price_usd=999,
        price_date=when,
        price_kind="street",
    )


@pytest.mark.parametrize(
    ("when", "words"),
    [
        (dt.date(9999, 12, 31), "in the future"),
        (TODAY + dt.timedelta(days=30), "in the future"),
        (dt.date(1970, 1, 1), "is before 2007"),
        (dt.date(1, 1, 1), "is before 2007"),
        (dt.date(2006, 12, 31), "is before 2007"),
    ],
)
def test_a_price_date_out_of_bounds_is_refused_with_a_clear_message(
    when: dt.date, words: str
) -> None:
    with pytest.raises(ValidationError, match=words) as caught:
        _priced(2023, when)
    assert caught.value.errors()[0]["loc"] == ("price_date",)


def test_plausible_price_dates_are_kept() -> None:
    days = (dt.date(2007, 1, 1), dt.date(2023, 1, 1), TODAY, TODAY + dt.timedelta(days=1))
    for when in days:
        assert _priced(2023, when).price_date == when  # type: ignore[attr-defined]


def test_a_cloud_rate_dated_in_the_future_is_refused() -> None:
    rate = {
        "provider": "Lambda",
        "usd_per_gpu_hour": 2.0,
        "kind": "on_demand",
        "date": dt.date(2099, 1, 1),
        "source": "https://lambda.ai/pricing",
    }
    with pytest.raises(ValidationError, match="in the future") as caught:
        make_entry("dated", cloud_rates=[rate])
    assert caught.value.errors()[0]["loc"][0] == "cloud_rates"


def test_the_loader_names_the_file_and_field(tmp_path: Path) -> None:
    write_entry(
        tmp_path, "future", price_usd=5, price_date=dt.date(3000, 1, 1), price_kind="street"
    )
    catalog = load_catalog([tmp_path])
    messages = [str(problem) for problem in catalog.problems if "future" in str(problem.path)]
    assert len(messages) == 1
    assert "future.toml: price_date: " in messages[0]
    assert "3000-01-01 is in the future" in messages[0]


def test_every_bundled_price_date_is_within_the_bounds() -> None:
    catalog = load_catalog([])
    assert not [
        problem
        for problem in catalog.problems
        if "price_date" in problem.field or "cloud_rates" in problem.field
    ]


@settings(max_examples=200, deadline=None)
@given(
    release_year=st.integers(min_value=2010, max_value=2030),
    when=st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)),
)
def test_any_price_date_is_accepted_exactly_within_the_bounds(
    release_year: int, when: dt.date
) -> None:
    plausible = dt.date(2007, 1, 1) <= when <= TODAY + dt.timedelta(days=1)
    try:
        entry = _priced(release_year, when)
    except ValidationError as exc:
        assert not plausible, exc
        assert exc.errors()[0]["loc"] == ("price_date",)
        return
    assert plausible
    assert entry.price_date == when  # type: ignore[attr-defined]
