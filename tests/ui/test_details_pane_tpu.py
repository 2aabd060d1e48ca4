"""The details pane says a TPU's cloud rate per chip-hour (a slice divided by its chips),
never per GPU-hour."""

from __future__ import annotations

import datetime as dt

import pytest
from catalog_factory import make_entry
from skypilot_excerpts import GCP_V9_TPU

from gpudesk.catalog import skypilot
from gpudesk.catalog.price_snapshots import Snapshot, SnapshotSource
from gpudesk.catalog.rate_book import RateBook
from gpudesk.catalog.skypilot import TpuGeneration, parse_vms_csv
from gpudesk.ui.details_pane import _cloud_rates_html, _summary_html


def test_the_details_pane_says_a_tpu_rate_per_chip(monkeypatch: pytest.MonkeyPatch) -> None:
    held = skypilot.TPU_GENERATIONS["v6e"]
    monkeypatch.setitem(  # v6e as if the catalog had an entry (an id made up for the test)
        skypilot.TPU_GENERATIONS,
        "v6e",
        TpuGeneration(held.label, held.tensorcores_per_chip, "t-v6e"),
    )
    result = parse_vms_csv(GCP_V9_TPU.encode(), "gcp")
    source = SnapshotSource("gcp", "catalogs/v9/gcp/vms.csv", "2c3d7ea7d76b" + "0" * 28)
    snapshot = Snapshot(dt.date(2026, 12, 2), "retrieved", "test", {"gcp": source}, result.offers)
    summary = RateBook([snapshot]).summary("t-v6e")
    today = dt.date(2026, 12, 3)
    text = _cloud_rates_html(summary, today, "#666") + _summary_html(
        make_entry("t-v6e"), summary, today, "#666"
    )
    assert "/chip-h" in text and "Per chip:" in text and "GPU-h" not in text
