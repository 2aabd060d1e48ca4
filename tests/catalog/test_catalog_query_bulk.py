"""The bulk filter and name ranking give exactly what the plain per-entry rules give.

``FilterColumns.mask`` and ``NameRanking.ranked`` compute row sets with byte
operations, rank tables and lookups, for speed on 10,000 rows. Here they are
checked against a straightforward reference (one entry at a time, the rules
as the docstrings state them) over random catalogs, filters and search texts.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Collection, Sequence

from catalog_factory import make_entry
from hypothesis import given, settings, strategies as st

from gpudesk.catalog import query
from gpudesk.catalog.query import (
    CatalogFilter,
    Feature,
    FilterColumns,
    NameRanking,
    has_feature,
    name_key,
    name_matcher,
    searchable_text,
)
from gpudesk.catalog.schema import CatalogEntry, Segment

_NAME_WORDS = ["NVIDIA", "GeForce", "AMD", "RTX", "Pro", "pro", "4090", "A100", "80GB", "PCIe"]
_NAME_WORDS += ["(SXM)", "Ti", "Radeon", "H100", "D", "01", "010", "x", "MI300X", "Max-Q"]
_ID_WORDS = ["rtx", "4090", "a100", "pro", "mi300x", "h100", "sxm", "d", "01", "x", "80gb"]
_NOTE_WORDS = ["HBM2e", "passive", "cooling", "pro", "4090", "NVLink", "Ampere", "rtx-4090"]
_MEMORY = [0.5, 8, 12, 16, 24, 24.0, 48, 80, 141.5]
_PRICES = [200, 999.99, 1599, 10_000, 40_000]


@st.composite
def _entry(draw: st.DrawFn) -> CatalogEntry:
    price = draw(st.none() | st.sampled_from(_PRICES))
    priced = {"price_date": dt.date(2024, 1, 1), "price_kind": "street"} if price else {}
    notes = draw(st.lists(st.sampled_from(_NOTE_WORDS), max_size=4))
    data = {
        "name": " ".join(draw(st.lists(st.sampled_from(_NAME_WORDS), min_size=1, max_size=5))),
        "vendor": draw(st.sampled_from(["NVIDIA", "nvidia", "AMD", "Intel", "Apple"])),
        "segment": draw(st.sampled_from([segment.value for segment in Segment])),
        "architecture": draw(st.sampled_from(["Ampere", "Ada Lovelace", "Hopper", "CDNA 3"])),
        "notes": " ".join(notes) or None,
        "memory_gb": draw(st.sampled_from(_MEMORY)),
        "price_usd": price,
        "release_year": draw(st.integers(2010, 2030)),
        "ecc": draw(st.none() | st.booleans()),
        "nvlink": draw(st.none() | st.booleans()),
        "mig_max_instances": draw(st.none() | st.sampled_from([1, 7])),
        "fp16_tensor_tflops": draw(st.none() | st.just(100.0)),
    }
    entry_id = "-".join(draw(st.lists(st.sampled_from(_ID_WORDS), min_size=1, max_size=4)))
    return make_entry(entry_id, **data, **priced)


_CATALOGS = st.lists(_entry(), max_size=25)
_TEXT_WORDS = ["pro", "pr", "0", "a10", "GeForce", "rtx-4090", "Pro!", "4090", "ampere", "x"]
_TEXT_WORDS += ["01", "nvidia", "hbm", "zzz", "rtx 4090", "a100 80gb pcie", "-", "MI300X"]
_TEXTS = st.lists(st.sampled_from(_TEXT_WORDS), max_size=3).map(" ".join)
_BOUNDS = st.none() | st.sampled_from([*_MEMORY, 0.0, 20.0, 1000.0, math.inf, -math.inf, math.nan])
_PRICE_BOUNDS = st.none() | st.sampled_from([*_PRICES, 0.0, 1600.0, math.inf, math.nan])
_YEARS = st.none() | st.integers(2009, 2031)
_FILTERS = st.builds(
    CatalogFilter,
    text=_TEXTS,
    segments=st.none()
    | st.frozensets(st.sampled_from([*Segment, "datacenter"])),  # a plain string too
    vendors=st.none() | st.frozensets(st.sampled_from(["nvidia", "AMD", "INTEL", "Other"])),
    min_memory_gb=_BOUNDS,
    max_memory_gb=_BOUNDS,
    min_price_usd=_PRICE_BOUNDS,
    max_price_usd=_PRICE_BOUNDS,
    min_year=_YEARS,
    max_year=_YEARS,
    features=st.frozensets(st.sampled_from(list(Feature))),
)


def _reference_keeps(
    criteria: CatalogFilter, entry: CatalogEntry, only_ids: Collection[str] | None
) -> bool:
    """The filter rule, one entry at a time (FilterColumns.mask's docstring)."""
    if criteria.segments is not None and entry.segment not in criteria.segments:
        return False
    if criteria.vendors is not None and entry.vendor.lower() not in {
        vendor.lower() for vendor in criteria.vendors
    }:
        return False
    memory, price, year = entry.memory_gb, entry.price_usd, entry.release_year
    if criteria.min_memory_gb is not None and not memory >= criteria.min_memory_gb:
        return False
    if criteria.max_memory_gb is not None and not memory <= criteria.max_memory_gb:
        return False
    if criteria.min_price_usd is not None and (
        price is None or not price >= criteria.min_price_usd
    ):
        return False
    if criteria.max_price_usd is not None and (
        price is None or not price <= criteria.max_price_usd
    ):
        return False
    if criteria.min_year is not None and not year >= criteria.min_year:
        return False
    if criteria.max_year is not None and not year <= criteria.max_year:
        return False
    if not all(has_feature(entry, feature) for feature in criteria.features):
        return False
    haystack = searchable_text(entry)
    if not all(word in haystack for word in criteria.text.lower().split()):
        return False
    return only_ids is None or entry.id in only_ids


def _reference_ranked(entries: Sequence[CatalogEntry], rows: Sequence[int], text: str) -> list[int]:
    """Rows stably sorted by the one name rule's class (name_matcher)."""
    rank = name_matcher(text)
    return sorted(rows, key=lambda row: rank(name_key(entries[row]), entries[row].id)[0])


@settings(max_examples=200, deadline=None)
@given(
    entries=_CATALOGS,
    filters=st.lists(_FILTERS, min_size=1, max_size=4),
    only=st.none() | st.frozensets(st.sampled_from(["rtx", "rtx-4090", "pro", "x-x", "d"])),
)
def test_the_bulk_mask_keeps_exactly_the_rows_the_plain_rule_keeps(
    entries: list[CatalogEntry], filters: list[CatalogFilter], only: frozenset[str] | None
) -> None:
    columns = FilterColumns(entries)
    for criteria in filters:  # one index, several filters: remembered words reused
        mask = columns.mask(criteria, only)
        assert isinstance(mask, bytearray)
        assert list(mask) == [int(_reference_keeps(criteria, e, only)) for e in entries]


@settings(max_examples=200, deadline=None)
@given(entries=_CATALOGS, texts=st.lists(_TEXTS, min_size=1, max_size=4), data=st.data())
def test_the_bulk_ranking_orders_rows_as_the_one_name_rule_does(
    entries: list[CatalogEntry], texts: list[str], data: st.DataObject
) -> None:
    ranking = NameRanking([name_key(entry) for entry in entries], [entry.id for entry in entries])
    for text in texts:
        order = data.draw(st.permutations(range(len(entries))))
        rows = order[: data.draw(st.integers(0, len(order)))]
        assert ranking.ranked(rows, text) == _reference_ranked(entries, rows, text)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.none() | st.integers(0, 1500).map(lambda value: value / 4), max_size=700),
    bounds=st.lists(st.integers(-4, 1504).map(lambda value: value / 4), min_size=1, max_size=5),
)
def test_numeric_bounds_over_many_distinct_values_use_both_rank_bytes(
    values: list[float | None], bounds: list[float]
) -> None:
    ranks = query._Ranks(values)
    for bound in bounds:
        expected_low = [value is not None and value >= bound for value in values]
        expected_high = [value is not None and value <= bound for value in values]
        assert _flags(ranks.at_least(bound), len(values)) == expected_low
        assert _flags(ranks.at_most(bound), len(values)) == expected_high


def test_a_column_of_more_distinct_values_than_rank_bytes_hold_is_still_right() -> None:
    values: list[float | None] = [float(value) for value in range(70_000)] + [None]
    ranks = query._Ranks(values)
    assert not ranks._fast  # the plain path, per row
    assert _flags(ranks.at_least(69_998.5), len(values)) == [
        v is not None and v >= 69_998.5 for v in values
    ]
    assert _flags(ranks.at_most(1.0), len(values)) == [v is not None and v <= 1.0 for v in values]


def test_more_distinct_categories_than_code_bytes_hold_are_still_right() -> None:
    values = [f"vendor {number % 300}" for number in range(900)]
    categories = query._Categories(values)
    wanted = {"vendor 7", "vendor 299", "vendor 1000"}
    assert _flags(categories.rows_in(wanted), len(values)) == [v in wanted for v in values]


def _flags(byteset: int, count: int) -> list[bool]:
    return [bool(flag) for flag in byteset.to_bytes(count, "little")]


def _crafted() -> list[CatalogEntry]:
    priced = {"price_date": dt.date(2024, 1, 1), "price_kind": "street"}
    return [
        make_entry(
            "rtx-4090", name="NVIDIA GeForce RTX 4090", memory_gb=24, price_usd=1599, **priced
        ),
        make_entry("rtx-4090-d", name="NVIDIA GeForce RTX 4090 D", memory_gb=24.0),
        make_entry("gpu-010", name="Card 010 Pro", memory_gb=80, release_year=2020, ecc=True),
        make_entry("gpu-01", name="Card 01 Pro", memory_gb=0.5, price_usd=10_000, **priced),
        make_entry("x-pro", name="Prototype", notes="not a pro card", vendor="AMD"),
    ]


_EDGE_FILTERS = [
    CatalogFilter(min_memory_gb=math.nan),
    CatalogFilter(max_memory_gb=math.nan),
    CatalogFilter(min_price_usd=math.nan),
    CatalogFilter(max_price_usd=math.inf),
    CatalogFilter(min_memory_gb=-math.inf, max_memory_gb=24),
    CatalogFilter(min_memory_gb=24, max_memory_gb=24),
    CatalogFilter(min_price_usd=1599, max_price_usd=1599),
    CatalogFilter(min_year=2020, max_year=2020),
    CatalogFilter(segments=frozenset()),
    CatalogFilter(vendors=frozenset({"amd"}), text="pro"),
    CatalogFilter(text="01 pro"),
]


def test_edge_bounds_and_ties_keep_what_the_plain_rule_keeps() -> None:
    entries = _crafted()
    columns = FilterColumns(entries)
    for criteria in _EDGE_FILTERS:
        expected = [int(_reference_keeps(criteria, entry, None)) for entry in entries]
        assert list(columns.mask(criteria)) == expected, criteria


def test_each_match_class_keeps_its_place() -> None:
    entries = _crafted()
    ranking = NameRanking([name_key(entry) for entry in entries], [entry.id for entry in entries])
    rows = list(range(len(entries)))[::-1]
    # whole word "01" before the fragment in "010" (listed first); then rows not naming it
    in_catalog_order = list(range(len(entries)))
    assert ranking.ranked(in_catalog_order, "01") == [3, 2, 0, 1, 4]
    assert _reference_ranked(entries, in_catalog_order, "01") == [3, 2, 0, 1, 4]
    # the exact name, then the name that starts with it
    assert ranking.ranked(rows, "RTX 4090") == _reference_ranked(entries, rows, "RTX 4090")
    assert ranking.ranked(rows, "RTX 4090")[:2] == [0, 1]
    # "pro": the name that starts with it ("Prototype") before whole words ("Card 01 Pro")
    assert ranking.ranked(rows, "pro") == _reference_ranked(entries, rows, "pro")
    assert ranking.ranked(rows, "pro")[0] == 4
