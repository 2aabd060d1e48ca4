"""The catalog table's precomputed index agrees with the core filter and sort."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
from ui_catalog_fixtures import small_entries

from gpudesk.catalog.loader import load_catalog
from gpudesk.catalog.query import CatalogFilter, Feature, sort_entries
from gpudesk.catalog.schema import Segment
from gpudesk.ui.catalog_columns import COLUMN_KEYS, COLUMNS, CatalogIndex, column_index

ENTRIES = small_entries() + load_catalog(include_user=False).entries
INDEX = CatalogIndex(ENTRIES)

filters = st.builds(
    CatalogFilter,
    text=st.sampled_from(["", "ampere", "rtx 40", "nvidia a100", "hbm", "zzz", "CDNA"]),
    segments=st.none() | st.frozensets(st.sampled_from(list(Segment))),
    vendors=st.none() | st.frozensets(st.sampled_from(["NVIDIA", "amd", "Intel", "Other"])),
    min_memory_gb=st.none() | st.sampled_from([8.0, 16.0, 24.0, 48.0, 100.0]),
    max_memory_gb=st.none() | st.sampled_from([12.0, 24.0, 80.0]),
    min_price_usd=st.none() | st.sampled_from([500.0, 2000.0]),
    max_price_usd=st.none() | st.sampled_from([600.0, 1600.0, 5000.0, 50000.0]),
    min_year=st.none() | st.integers(2015, 2025),
    max_year=st.none() | st.integers(2015, 2026),
    features=st.frozensets(st.sampled_from(list(Feature))),
)


@settings(max_examples=300, deadline=None)
@given(criteria=filters)
def test_index_mask_matches_the_core_filter(criteria: CatalogFilter) -> None:
    mask = INDEX.matching(criteria)
    expected = [criteria.matches(entry) for entry in ENTRIES]
    assert [bool(flag) for flag in mask] == expected


def test_only_ids_narrows_further() -> None:
    mask = INDEX.matching(CatalogFilter(text="ampere"), only_ids={"a100", "rtx-4090"})
    assert [INDEX.ids[row] for row, flag in enumerate(mask) if flag] == ["a100"]


def test_every_numeric_column_sorts_like_the_core_with_missing_last() -> None:
    entries = small_entries()
    index = CatalogIndex(entries)
    for position, column in enumerate(COLUMNS):
        if not column.numeric or column.key == "from_usd_per_gpu_hour":
            continue  # "From" reads the rate book, not a catalog field (tested below)
        for descending in (False, True):
            ids = [index.ids[row] for row in index.order(position, descending)]
            expected = [e.id for e in sort_entries(entries, column.key, descending=descending)]
            assert ids == expected, (column.key, descending)


def test_price_order_puts_the_unpriced_gpu_last_both_ways() -> None:
    index = CatalogIndex(small_entries())
    price = column_index("price_usd")
    ascending = [index.ids[row] for row in index.order(price, False)]
    descending = [index.ids[row] for row in index.order(price, True)]
    assert ascending == ["arc-b580", "gtx-1080", "rtx-4090", "rtx-a6000", "a100", "mi300x"]
    assert descending == ["a100", "rtx-a6000", "rtx-4090", "gtx-1080", "arc-b580", "mi300x"]


def test_cells_are_formatted_once_with_na_for_missing() -> None:
    index = CatalogIndex(small_entries())
    row = index.ids.index("mi300x")
    assert index.cells[row][column_index("price_usd")] is None
    assert index.cells[row][column_index("memory_gb")] == "192"
    assert index.cells[row][column_index("name")] == "Instinct MI300X"
    a100 = index.ids.index("a100")
    assert index.cells[a100][column_index("price_usd")] == "⚠ 15,000"  # seen 2025-01: stale
    assert index.cells[a100][column_index("mig")] == "7×"
    assert index.cells[a100][column_index("ecc")] == "yes"
    # dense FP16 tensor TFLOPS per 1,000 USD: 312 / 15
    assert index.cells[a100][column_index("fp16_tensor_tflops_per_kusd")] == "20.80"


def test_required_columns_exist() -> None:
    for key in (
        "name",
        "vendor",
        "segment",
        "architecture",
        "release_year",
        "memory_gb",
        "bandwidth_gbs",
        "fp32_tflops",
        "fp16_tensor_tflops",
        "bf16_tensor_tflops",
        "fp64_tflops",
        "tdp_w",
        "price_usd",
        "fp16_tensor_tflops_per_kusd",
        "ecc",
        "mig",
        "nvlink",
    ):
        assert key in COLUMN_KEYS
        assert COLUMNS[column_index(key)].visible_by_default


def test_vendors_and_years_come_from_the_data() -> None:
    index = CatalogIndex(small_entries())
    assert index.vendors() == ["AMD", "Intel", "NVIDIA"]
    assert index.year_range() == (2016, 2024)


def test_price_tooltip_says_kind_date_note_and_staleness() -> None:
    import datetime as dt

    from catalog_factory import make_entry

    from gpudesk.ui.catalog_columns import CatalogIndex, price_tooltip

    entry = make_entry(
        price_usd=27_500,
        price_kind="estimate",
        price_date=dt.date(2024, 3, 9),
        price_note="range $25k-$30k reported; midpoint",
    )
    fresh = price_tooltip(entry, dt.date(2024, 6, 1))
    assert fresh == "estimate, seen 2024-03-09\nrange $25k-$30k reported; midpoint"
    stale = price_tooltip(entry, dt.date(2026, 12, 1))
    assert stale is not None and stale.endswith("⚠ price from 2024-03, may be out of date")
    assert price_tooltip(make_entry(), dt.date(2026, 12, 1)) is None
    index = CatalogIndex([entry, make_entry("unpriced")], today=dt.date(2026, 12, 1))
    assert index.price_stale == [True, False]


def test_the_from_column_is_the_lowest_on_demand_rate_missing_last_and_stale_marked() -> None:
    import datetime as dt

    from gpudesk.catalog.rate_book import rate_summary

    entries = small_entries()
    index = CatalogIndex(entries, today=dt.date(2026, 12, 2))
    position = column_index("from_usd_per_gpu_hour")
    ascending = [index.ids[row] for row in index.order(position, False)]
    rated = [e for e in entries if rate_summary(e).lowest is not None]
    lows = {e.id: rate_summary(e).lowest.usd_per_gpu_hour for e in rated}  # type: ignore[union-attr]
    assert ascending[: len(rated)] == sorted(lows, key=lambda key: (lows[key], key))
    assert all(
        index.cells[index.ids.index(e.id)][position] is None for e in entries if e.id not in lows
    )
    for entry_id in lows:
        cell = index.cells[index.ids.index(entry_id)][position]
        tip = index.rate_tooltips[index.ids.index(entry_id)]
        assert cell is not None and tip is not None and tip.startswith("lowest $")
        stale = rate_summary(next(e for e in entries if e.id == entry_id)).lowest
        assert stale is not None
        if stale.is_stale(dt.date.today()):
            assert cell.startswith("⚠ ")
