"""The bundled catalog as a buyer meets it: priced, rented, sourced, in plain words."""

from __future__ import annotations

import datetime as dt

import pytest

from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.rate_book import lowest_on_demand_rate
from gpudesk.catalog.schema import CatalogEntry, Segment, Status
from gpudesk.catalog.sourcing import INTERNAL_MARKERS, sourcing_issues
from gpudesk.paths import bundled_catalog_dir

#: The entries of the 2025 catalog, each re-sourced, priced and (datacenter
#: ones) given cloud rates for issue 16; entries added since are checked by
#: ``validate --strict`` and the schema, and priced by whoever adds them.
ORIGINAL_ENTRIES = frozenset(
    {
        "mi210", "mi250x", "mi300x", "mi325x", "radeon-pro-w7900", "rx-7900-xtx", "arc-b580", "a10",
        "a100-40gb-sxm4", "a100-80gb-pcie", "a100-80gb-sxm4", "a30", "a40", "b200", "gtx-1070",
        "gtx-1080", "h100-nvl", "h100-pcie", "h100-sxm5", "h200-nvl", "h200-sxm", "l4", "l40",
        "l40s", "quadro-rtx-8000", "rtx-2080-ti", "rtx-3060-12gb", "rtx-3080-10gb", "rtx-3080-12gb",
        "rtx-3090-ti", "rtx-3090", "rtx-4000-ada", "rtx-4060-ti-16gb", "rtx-4070-super",
        "rtx-4070-ti-super", "rtx-4080-super", "rtx-4080", "rtx-4090", "rtx-5060-ti-16gb",
        "rtx-5070-ti", "rtx-5080", "rtx-5090", "rtx-6000-ada", "rtx-a4000", "rtx-a5000",
        "rtx-a6000", "rtx-pro-6000-blackwell", "t4", "titan-rtx", "v100-pcie-16gb",
        "v100-sxm2-16gb", "v100-sxm2-32gb",
    }
)  # fmt: skip
#: Every datacenter entry, original or added since, with no public, dated
#: on-demand rate: rare parts nobody rents by the hour at a published price
#: (B100, MI300A), and SXM modules whose only Chinese cloud rates are for the
#: PCIe card, and the MI350X, rented by the hour only as a spot droplet (its one
#: on-demand price, a managed inference endpoint, is not a machine one rents and
#: was removed). Each says so in its notes. Closing a gap means removing it here.
#: (read from the rate book: SkyPilot's bundled snapshot plus the entries' own rates)
#: Issue 43 added GB300, Trainium2/3 and TPU v7 Ironwood, with no dated public
#: on-demand rate yet (Google lists no per-chip TPU7x price).
#: Announced parts are not on sale, so they have no rate by design and are not gaps.
RATE_GAPS = frozenset(
    {"mi210", "mi300a", "a2", "a800-sxm4-80gb", "b100", "h800-sxm5", "mi350x", "gb300",
     "trainium2", "trainium3", "tpu-v7-ironwood"}
)  # fmt: skip
#: Entries with no public, dated price (Apple's SoCs are not sold alone and carry
#: none by design, nor do cloud-only and announced parts): each says so in its notes.
PRICE_GAPS = frozenset({"mi300a", "a2", "gh200", "gb300", "ryzen-ai-max-plus-395"})
#: The original entries among the rate gaps: the MI210 is rarely rented by the hour.
NO_ON_DEMAND_RATE = RATE_GAPS & ORIGINAL_ENTRIES
#: Cloud cards people rent by the hour: each has an on-demand rate.
CLOUD_CONSUMER_CARDS = ("rtx-4090", "rtx-a6000", "l4", "t4")


@pytest.fixture(scope="module")
def entries() -> list[CatalogEntry]:
    catalog = load_directory(bundled_catalog_dir())
    assert catalog.problems == []
    return catalog.entries


def test_every_bundled_entry_passes_strict_sourcing(entries: list[CatalogEntry]) -> None:
    issues = [(entry.id, issue) for entry in entries for issue in sourcing_issues(entry)]
    assert issues == []


def test_no_internal_wording_reaches_readers(entries: list[CatalogEntry]) -> None:
    for entry in entries:
        for text in (entry.notes or "", entry.provenance or "", *entry.sources):
            assert not any(marker in text for marker in INTERNAL_MARKERS), entry.id


def test_every_original_entry_is_priced_with_kind_and_date(
    entries: list[CatalogEntry],
) -> None:
    ids = {entry.id for entry in entries}
    assert ids >= ORIGINAL_ENTRIES
    unpriced = {e.id for e in entries if e.id in ORIGINAL_ENTRIES and e.price_usd is None}
    assert unpriced == set()
    for entry in entries:
        if entry.price_usd is not None:
            assert entry.price_date is not None and entry.price_kind is not None


def test_datacenter_gpus_and_cloud_cards_have_an_on_demand_rate(
    entries: list[CatalogEntry],
) -> None:
    missing = {
        entry.id
        for entry in entries
        if entry.id in ORIGINAL_ENTRIES
        and entry.segment is Segment.DATACENTER
        and lowest_on_demand_rate(entry) is None
    }
    assert missing == NO_ON_DEMAND_RATE
    by_id = {entry.id: entry for entry in entries}
    for entry_id in CLOUD_CONSUMER_CARDS:
        rate = lowest_on_demand_rate(by_id[entry_id])
        assert rate is not None and rate.date is not None and rate.source, entry_id
    assert by_id["rtx-5090"].cloud_rates, "the 5090 has at least a marketplace rate"


def test_the_known_rate_and_price_gaps_are_exactly_those_and_say_so(
    entries: list[CatalogEntry],
) -> None:
    rate_gaps = {
        e.id
        for e in entries
        if e.segment is Segment.DATACENTER
        and e.status is not Status.ANNOUNCED
        and lowest_on_demand_rate(e) is None
    }
    assert rate_gaps == RATE_GAPS
    price_gaps = {
        e.id
        for e in entries
        if e.price_usd is None
        and e.vendor != "Apple"
        and e.status not in (Status.ANNOUNCED, Status.CLOUD_ONLY)
    }
    assert price_gaps == PRICE_GAPS
    # a cloud-only part says it is not sold in a dated statement
    cloud_only = [e for e in entries if e.status is Status.CLOUD_ONLY]
    assert cloud_only and all(e.price_unavailable is not None for e in cloud_only)
    by_id = {entry.id: entry for entry in entries}
    for entry_id in RATE_GAPS:
        assert "rate" in (by_id[entry_id].notes or ""), entry_id
    for entry_id in PRICE_GAPS:
        assert "price" in (by_id[entry_id].notes or ""), entry_id


def test_the_catalog_date_is_not_older_than_any_price_or_rate_it_holds() -> None:
    catalog = load_directory(bundled_catalog_dir())
    seen = [e.price_date for e in catalog.entries if e.price_date is not None]
    seen += [r.date for e in catalog.entries for r in e.cloud_rates if r.date is not None]
    assert catalog.catalog_date is not None
    assert max(seen) <= catalog.catalog_date <= dt.date.today()


def test_issue_findings_are_fixed(entries: list[CatalogEntry]) -> None:
    by_id = {entry.id: entry for entry in entries}
    pro = by_id["rtx-pro-6000-blackwell"]
    assert (pro.fp16_tensor_tflops, pro.fp8_tensor_tflops) == (503.8, 1007.6)
    assert "computed" in (pro.provenance or "") and pro.price_kind is not None
    assert by_id["quadro-rtx-8000"].price_usd == 10_000
    assert by_id["quadro-rtx-8000"].price_date is not None
    assert by_id["quadro-rtx-8000"].price_date.year == 2018
    assert (by_id["mi325x"].l2_cache_mb, by_id["mi325x"].l3_cache_mb) == (32, 256)
    assert (by_id["radeon-pro-w7900"].l2_cache_mb, by_id["radeon-pro-w7900"].l3_cache_mb) == (6, 96)
    assert "0x1002:0x744a" in by_id["radeon-pro-w7900"].pci_ids
    assert str(by_id["rtx-2080-ti"].price_date) == "2018-09-27"
    assert by_id["rtx-4060-ti-16gb"].nvml_names == ()
    b200 = by_id["b200"]
    assert (b200.fp32_tflops, b200.fp64_tflops, b200.tdp_w) == (75.0, 37.0, 1000)
