"""The Compare tab's Copy as text and Export CSV carry its ⚠ old-price marks, in words."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from catalog_factory import make_entry
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.ui.compare_view import CompareView
from gpudesk.ui.state import AppState


def _priced(entry_id: str, seen: dt.date, rate_seen: dt.date) -> CatalogEntry:
    rate = {
        "provider": "Example Cloud",
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


def test_copy_and_csv_say_which_prices_and_rates_may_be_old(qtbot: QtBot, tmp_path: Path) -> None:
    today = dt.date.today()
    fresh, old = today - dt.timedelta(days=30), today - dt.timedelta(days=400)
    entries = [
        _priced("new", fresh, fresh),
        _priced("oldprice", old, fresh),
        _priced("oldrate", fresh, today - dt.timedelta(days=91)),
    ]
    state = AppState(catalog=Catalog(entries=entries))
    view = CompareView(state)
    qtbot.addWidget(view)
    state.set_compare(["new", "oldprice", "oldrate"])

    view.copy_as_text()
    text = QGuiApplication.clipboard().text()
    assert f"⚠ {old.isoformat()}" in text
    assert f"GPU oldprice: price from {old:%Y-%m}, may be out of date (over 12 months old)" in text
    assert "GPU oldrate: rate from" in text and "(over 90 days old)" in text
    assert "GPU new:" not in text

    target = tmp_path / "compare.csv"
    view.export_csv(target)
    exported = target.read_text(encoding="utf-8")
    assert "out_of_date" in exported.splitlines()[0]
    assert f"GPU oldprice: price from {old:%Y-%m}, may be out of date (over 12 months old)" in (
        exported
    )
    assert "GPU oldrate: rate from" in exported
