"""Issue 28's coverage figure, computed from the bundled data (not typed in).

"Fresh" is an on-demand rate no older than 90 days at the catalog date; the figure
is counted over datacenter and workstation entries, literally and leaving out the
entries whose ``rates_unavailable`` says no public provider offers them by the hour.
"""

from __future__ import annotations

import datetime as dt

import pytest

from gpudesk.catalog.loader import Catalog, load_directory
from gpudesk.catalog.price_snapshots import PriceHistory, bundled_snapshot_dir, default_history_path
from gpudesk.catalog.rate_book import RateBook, RateCoverage, rate_coverage
from gpudesk.catalog.schema import CatalogEntry, Statement
from gpudesk.cli import main
from gpudesk.paths import bundled_catalog_dir

#: What the bundled data reached on 2026-12-07 (38 of 85 entries; 38 of the 64 that
#: some public provider may rent by the hour: issue 43's new parts, GB300, Trainium2
#: and 3, TPU v7 Ironwood and the RTX PRO 5000 72 GB, have no dated public rate yet,
#: which lowered the share from 38 of 59). Raise these when coverage grows; a drop
#: below them is a regression.
FRESH_AT_LEAST = 38
AMONG_RENTABLE_AT_LEAST = 38 / 64


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_directory(bundled_catalog_dir())


def _as_of(catalog: Catalog) -> dt.date:
    assert catalog.catalog_date is not None
    return catalog.catalog_date


def _coverage(catalog: Catalog, book: RateBook) -> RateCoverage:
    return rate_coverage(catalog.entries, book, _as_of(catalog))


def test_first_run_coverage_does_not_regress(catalog: Catalog) -> None:
    coverage = _coverage(catalog, RateBook.load(include_user=False))
    # announced parts are not on sale: nothing to rent, so not counted
    assert len(coverage.counted) == sum(
        entry.segment is not None
        and entry.segment.value in ("datacenter", "workstation")
        and entry.status.value != "announced"
        for entry in catalog.entries
    )
    assert len(coverage.fresh) >= FRESH_AT_LEAST, coverage.missing
    assert coverage.among_rentable >= AMONG_RENTABLE_AT_LEAST - 1e-9, coverage.missing
    assert coverage.literal == pytest.approx(len(coverage.fresh) / len(coverage.counted))


def test_prices_update_from_the_bundled_folder_gives_the_same_coverage(
    catalog: Catalog,
) -> None:
    assert main(["prices", "update", "--from", str(bundled_snapshot_dir())]) == 0
    imported = RateBook(snapshots=PriceHistory(default_history_path()).snapshots())
    first_run = _coverage(catalog, RateBook.load(include_user=False))
    after_update = _coverage(catalog, imported)
    assert after_update.fresh == first_run.fresh
    assert len(after_update.fresh) >= FRESH_AT_LEAST


def test_every_entry_has_a_price_or_a_statement_and_a_rate_or_a_statement(
    catalog: Catalog,
) -> None:
    book = RateBook.load(include_user=False)
    no_price = [
        e.id for e in catalog.entries if e.price_usd is None and e.price_unavailable is None
    ]
    no_rate = [
        e.id
        for e in catalog.entries
        if not book.summary(e.id, e).rates and e.rates_unavailable is None
    ]
    assert (no_price, no_rate) == ([], [])


def test_an_entry_said_not_to_be_offered_shows_no_rate(catalog: Catalog) -> None:
    book = RateBook.load(include_user=False)
    contradictions = [
        entry.id
        for entry in catalog.entries
        if entry.rates_unavailable is not None
        and entry.rates_unavailable.offered is False
        and book.summary(entry.id, entry).rates
    ]
    assert contradictions == []


def _entry(catalog: Catalog, gpu_id: str) -> CatalogEntry:
    return next(entry for entry in catalog.entries if entry.id == gpu_id)


def test_coverage_counts_only_fresh_on_demand_rates(catalog: Catalog) -> None:
    book = RateBook.load(include_user=False)
    as_of = _as_of(catalog)
    # a marketplace host's rate (Vast.ai) is listed beside on-demand rates, not counted
    marketplace = rate_coverage([_entry(catalog, "rtx-5880-ada")], book, as_of)
    assert marketplace.fresh == () and marketplace.marketplace_only == ("rtx-5880-ada",)
    # the same data a year later: every SkyPilot rate is stale, so nothing counts
    later = rate_coverage(catalog.entries, book, as_of + dt.timedelta(days=365))
    assert later.fresh == ()
    # consumer cards are outside the figure
    consumer = [e for e in catalog.entries if e.segment.value == "consumer"]
    assert rate_coverage(consumer, book, as_of).counted == ()


def test_offered_false_leaves_an_entry_out_of_the_rentable_share(catalog: Catalog) -> None:
    book = RateBook.load(include_user=False)
    as_of = _as_of(catalog)
    h100, a2 = _entry(catalog, "h100-sxm5"), _entry(catalog, "a2")
    assert a2.rates_unavailable is not None
    both = rate_coverage([h100, a2], book, as_of)
    assert (both.literal, both.among_rentable) == (0.5, 0.5)
    statement = Statement(date=a2.rates_unavailable.date, reason="x", offered=False)
    left_out = rate_coverage(
        [h100, a2.model_copy(update={"rates_unavailable": statement})], book, as_of
    )
    assert (left_out.literal, left_out.among_rentable, left_out.missing) == (0.5, 1.0, ())


def test_offered_is_said_of_rates_only() -> None:
    from pydantic import ValidationError

    base = _entry(load_directory(bundled_catalog_dir()), "a2").model_dump()
    base.update(
        price_usd=None,
        price_date=None,
        price_kind=None,
        price_note=None,
        price_unavailable={"date": dt.date(2026, 12, 2), "reason": "x", "offered": False},
    )
    with pytest.raises(ValidationError, match="offered"):
        CatalogEntry.model_validate(base)


def test_the_catalog_page_states_the_computed_figures(catalog: Catalog) -> None:
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "catalog.md"
    text = " ".join(page.read_text(encoding="utf-8").split())
    coverage = _coverage(catalog, RateBook.load(include_user=False))
    literal = re.search(r"(\d+) of the (\d+) datacenter and workstation entries", text)
    rentable = re.search(r"leaving out the (\d+) that no public provider offers by the hour", text)
    assert literal is not None and rentable is not None
    assert (int(literal.group(1)), int(literal.group(2))) == (
        len(coverage.fresh),
        len(coverage.counted),
    )
    assert int(rentable.group(1)) == len(coverage.not_offered)
    assert f"{len(coverage.fresh)} of {len(coverage.rentable)}." in text
