"""Copy as text and CSV say in words which compared prices and rates may be old,
as the Compare tab's ⚠ marks do on screen."""

from __future__ import annotations

import csv
import datetime as dt
import io

from catalog_factory import make_entry

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.stale import stale_marks
from gpudesk.compare.table import build_comparison

TODAY = dt.date(2026, 12, 2)


def _priced(entry_id: str, seen: dt.date, rate_seen: dt.date) -> CatalogEntry:
    rate = {
        "provider": "Cloud",
        "usd_per_gpu_hour": 2.5,
        "kind": "on_demand",
        "date": rate_seen,
        "source": "https://example.com/pricing",
    }
    return make_entry(
        entry_id,
        name=f"GPU {entry_id}",
        price_usd=1000,
        price_kind="street",
        price_date=seen,
        cloud_rates=[rate],
    )


def _trio() -> list[CatalogEntry]:
    return [
        _priced("new", TODAY, TODAY),
        _priced("oldprice", dt.date(2024, 3, 9), TODAY),
        _priced("oldrate", TODAY, TODAY - dt.timedelta(days=91)),
    ]


def test_the_marks_name_the_old_price_and_the_old_rate_only() -> None:
    marks = stale_marks(_trio(), TODAY)
    assert marks == {
        ("price_date", "oldprice"): "price from 2024-03, may be out of date (over 12 months old)",
        ("cloud_hourly_usd", "oldrate"): (
            "rate from 2026-09, may be out of date (over 90 days old)"
        ),
    }


def test_copied_text_marks_the_old_cells_and_says_why() -> None:
    entries = _trio()
    text = build_comparison(entries).to_text(stale_marks(entries, TODAY))
    seen_line = next(line for line in text.splitlines() if line.strip().startswith("Price seen"))
    assert seen_line.count("⚠") == 1 and "⚠ 2024-03-09" in seen_line
    rate_line = next(line for line in text.splitlines() if line.strip().startswith("Cloud price"))
    assert rate_line.count("⚠") == 1 and "⚠ 2.50" in rate_line
    assert (
        "⚠ Price seen, GPU oldprice: price from 2024-03, may be out of date "
        "(over 12 months old)" in text
    )
    assert "⚠ Cloud price, GPU oldrate: rate from 2026-09, may be out of date" in text
    assert "over 90 days old" in text


def test_text_without_old_figures_has_no_mark() -> None:
    entries = [_priced("a", TODAY, TODAY), _priced("b", TODAY, TODAY)]
    text = build_comparison(entries).to_text(stale_marks(entries, TODAY))
    assert "⚠" not in text and "out of date" not in text


def test_csv_says_in_words_which_values_may_be_old() -> None:
    entries = _trio()
    comparison = build_comparison(entries)
    rows = list(csv.reader(io.StringIO(comparison.to_csv(stale_marks(entries, TODAY)))))
    assert rows[0][-1] == "out_of_date"
    by_key = {row[1]: row for row in rows[1:]}
    assert by_key["price_date"][-1] == (
        "GPU oldprice: price from 2024-03, may be out of date (over 12 months old)"
    )
    assert by_key["cloud_hourly_usd"][-1].startswith("GPU oldrate: rate from 2026-09")
    assert by_key["memory_gb"][-1] == ""
    # raw values stay raw: a spreadsheet still reads the date and the rate
    names = rows[0][4:7]
    assert by_key["price_date"][4 + names.index("GPU oldprice")] == "2024-03-09"


def test_csv_without_marks_keeps_its_columns() -> None:
    rows = list(csv.reader(io.StringIO(build_comparison(_trio()).to_csv())))
    assert rows[0][-1] == "best"
