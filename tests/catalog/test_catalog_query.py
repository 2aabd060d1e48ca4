import datetime as dt
import functools

import pytest
from catalog_factory import make_entry
from hypothesis import given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.catalog.query import (
    CatalogFilter,
    Feature,
    FilterColumns,
    NameLookupError,
    filter_entries,
    find_entry,
    matched_elsewhere,
    sort_entries,
)
from gpudesk.catalog.schema import CatalogEntry, Segment

PRICED = {"price_date": dt.date(2024, 1, 1), "price_kind": "street"}

ENTRIES = [
    make_entry(
        "rtx-4090",
        name="NVIDIA GeForce RTX 4090",
        memory_gb=24,
        price_usd=1599,
        fp16_tensor_tflops=165.2,
        release_year=2022,
        **PRICED,
    ),
    make_entry(
        "rtx-4090-d",
        name="NVIDIA GeForce RTX 4090 D",
        memory_gb=24,
        price_usd=1700,
        **PRICED,
    ),
    make_entry(
        "a100-80gb-pcie",
        name="NVIDIA A100 80GB PCIe",
        segment="datacenter",
        memory_gb=80,
        ecc=True,
        mig_max_instances=7,
        fp16_tensor_tflops=312,
        release_year=2021,
        architecture="Ampere",
        notes="HBM2e, passive cooling",
    ),
    make_entry(
        "a100-40gb-pcie",
        name="NVIDIA A100 40GB PCIe",
        segment="datacenter",
        memory_gb=40,
        ecc=True,
        mig_max_instances=7,
        nvlink=True,
        release_year=2020,
        architecture="Ampere",
        price_usd=9000,
        **PRICED,
    ),
    make_entry(
        "mi300x",
        name="AMD Instinct MI300X",
        vendor="AMD",
        segment="datacenter",
        memory_gb=192,
        ecc=True,
        release_year=2023,
    ),
]


def _ids(entries: list) -> list[str]:
    return [entry.id for entry in entries]


@pytest.mark.parametrize(
    ("criteria", "expected"),
    [
        (CatalogFilter(), [e.id for e in ENTRIES]),
        (CatalogFilter(segments=frozenset({Segment.CONSUMER})), ["rtx-4090", "rtx-4090-d"]),
        (CatalogFilter(vendors=frozenset({"amd"})), ["mi300x"]),
        (CatalogFilter(min_memory_gb=80), ["a100-80gb-pcie", "mi300x"]),
        (CatalogFilter(max_price_usd=1650), ["rtx-4090"]),
        (CatalogFilter(min_year=2023), ["rtx-4090-d", "mi300x"]),
        (CatalogFilter(features=frozenset({Feature.MIG, Feature.NVLINK})), ["a100-40gb-pcie"]),
        (CatalogFilter(features=frozenset({Feature.TENSOR_CORES})), ["rtx-4090", "a100-80gb-pcie"]),
        (CatalogFilter(text="ampere passive"), ["a100-80gb-pcie"]),
        (CatalogFilter(text="4090"), ["rtx-4090", "rtx-4090-d"]),
    ],
)
def test_filters(criteria: CatalogFilter, expected: list[str]) -> None:
    assert _ids(filter_entries(ENTRIES, criteria)) == expected


_FILTERS = st.builds(
    CatalogFilter,
    text=st.sampled_from(["", "4090", "ampere", "nvidia a100", "zzz"]),
    segments=st.none() | st.frozensets(st.sampled_from(list(Segment))),
    vendors=st.none() | st.frozensets(st.sampled_from(["nvidia", "AMD", "intel"])),
    min_memory_gb=st.none() | st.sampled_from([24.0, 40.0, 100.0]),
    max_price_usd=st.none() | st.sampled_from([1600.0, 10_000.0]),
    min_year=st.none() | st.integers(2019, 2024),
    features=st.frozensets(st.sampled_from(list(Feature))),
)


@given(_FILTERS, st.none() | st.frozensets(st.sampled_from([e.id for e in ENTRIES])))
def test_mask_over_the_catalog_agrees_with_each_entry_alone(
    criteria: CatalogFilter, only_ids: frozenset[str] | None
) -> None:
    """The narrowing over columns is row-independent: the whole-catalog mask is per-entry."""
    mask = FilterColumns(ENTRIES).mask(criteria, only_ids)
    alone = [
        criteria.matches(entry) and (only_ids is None or entry.id in only_ids) for entry in ENTRIES
    ]
    assert [bool(keep) for keep in mask] == alone


def test_only_ids_narrows_the_mask() -> None:
    mask = FilterColumns(ENTRIES).mask(CatalogFilter(text="a100"), {"a100-40gb-pcie", "mi300x"})
    assert [entry.id for entry, keep in zip(ENTRIES, mask, strict=True) if keep] == [
        "a100-40gb-pcie"
    ]


def test_sort_numeric_with_missing_last_both_ways() -> None:
    ascending = _ids(sort_entries(ENTRIES, "price_usd"))
    descending = _ids(sort_entries(ENTRIES, "price_usd", descending=True))
    assert ascending == ["rtx-4090", "rtx-4090-d", "a100-40gb-pcie", "a100-80gb-pcie", "mi300x"]
    assert descending == ["a100-40gb-pcie", "rtx-4090-d", "rtx-4090", "a100-80gb-pcie", "mi300x"]


def test_sort_by_derived_metric() -> None:
    ranked = _ids(sort_entries(ENTRIES, "fp16_tensor_tflops_per_kusd", descending=True))
    assert ranked[0] == "rtx-4090"


def test_sort_unknown_key() -> None:
    with pytest.raises(KeyError):
        sort_entries(ENTRIES, "speed")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rtx-4090", "rtx-4090"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("rtx 4090", "rtx-4090"),
        ("a100 80gb", "a100-80gb-pcie"),
        ("MI300X", "mi300x"),
        ("geforce rtx 4090 d", "rtx-4090-d"),
        # "4090" is every word of one name but only part of the other
        ("4090", "rtx-4090"),
    ],
)
def test_find_entry(name: str, expected: str) -> None:
    assert find_entry(ENTRIES, name).id == expected


def test_find_entry_ambiguous_lists_candidates() -> None:
    with pytest.raises(NameLookupError) as info:
        find_entry(ENTRIES, "a100 pcie")
    assert info.value.ambiguous
    assert set(info.value.candidates) == {"a100-80gb-pcie", "a100-40gb-pcie"}


def test_find_entry_unknown_suggests_close_names() -> None:
    with pytest.raises(NameLookupError) as info:
        find_entry(ENTRIES, "rtx-4909")
    assert not info.value.ambiguous
    assert "rtx-4090" in info.value.candidates


def test_name_match_ranks_exact_then_prefix_then_words_then_notes() -> None:
    from gpudesk.catalog.query import NameMatch, name_key, name_match

    by_id = {entry.id: entry for entry in ENTRIES}
    rtx_4090 = by_id["rtx-4090"]
    rtx_4090_d = by_id["rtx-4090-d"]
    assert name_match("RTX 4090", name_key(rtx_4090), rtx_4090.id)[0] is NameMatch.EXACT
    assert name_match("RTX 4090", name_key(rtx_4090_d), rtx_4090_d.id)[0] is NameMatch.PREFIX
    assert name_match("4090", name_key(rtx_4090), rtx_4090.id) < name_match(
        "4090", name_key(rtx_4090_d), rtx_4090_d.id
    )
    assert name_match("409", name_key(rtx_4090), rtx_4090.id)[0] is NameMatch.FRAGMENT
    assert name_match("ada", name_key(rtx_4090), rtx_4090.id)[0] is NameMatch.ELSEWHERE


@functools.cache
def _bundled() -> list[CatalogEntry]:
    return load_catalog(include_user=False).entries


_SEARCH_WORDS = [
    "rtx",
    "4090",
    "a100",
    "pcie",
    "pro",
    "nvidia",
    "radeon",
    "h100",
    "sxm",
    "geforce",
    "5090",
    "ada",
    "!",
]


@given(st.lists(st.sampled_from(_SEARCH_WORDS), max_size=4).map(" ".join))
@settings(max_examples=150, deadline=None)
def test_bulk_name_ranking_orders_rows_as_the_one_name_rule_does(text: str) -> None:
    """NameRanking (the catalog search) sorts rows exactly by name_matcher's class."""
    from gpudesk.catalog.query import NameRanking, name_key, name_matcher

    entries = _bundled()
    keys = [name_key(entry) for entry in entries]
    rows = list(range(len(entries)))[::-1]  # a column order other than the catalog's
    rank = name_matcher(text)
    expected = sorted(rows, key=lambda row: rank(keys[row], entries[row].id)[0])
    assert NameRanking(keys, [entry.id for entry in entries]).ranked(rows, text) == expected


def test_bulk_name_ranking_puts_the_named_gpu_first() -> None:
    from gpudesk.catalog.query import NameRanking, name_key

    entries = _bundled()
    ranking = NameRanking([name_key(entry) for entry in entries], [entry.id for entry in entries])
    ranked = ranking.ranked(list(range(len(entries))), "RTX 5090")
    assert entries[ranked[0]].id == "rtx-5090"


def test_a_stored_tensor_core_generation_counts_as_tensor_cores_without_published_rates() -> None:
    a10g_like = make_entry("a10g-like", tensor_core_generation=3)
    pascal_like = make_entry("pascal-like")
    int8_only = make_entry("int8-only", int8_tensor_tops=100.0)
    assert a10g_like.has_tensor_cores and int8_only.has_tensor_cores
    assert not pascal_like.has_tensor_cores
    kept = filter_entries(
        [a10g_like, pascal_like, int8_only],
        CatalogFilter(features=frozenset({Feature.TENSOR_CORES})),
    )
    assert _ids(kept) == ["a10g-like", "int8-only"]


def test_every_bundled_gpu_with_a_tensor_core_generation_passes_the_tensor_core_filter() -> None:
    entries = load_catalog(include_user=False).entries
    with_generation = [e.id for e in entries if e.tensor_core_generation is not None]
    kept = _ids(filter_entries(entries, CatalogFilter(features=frozenset({Feature.TENSOR_CORES}))))
    assert {"a10g", "l20"} <= set(with_generation)
    assert set(with_generation) <= set(kept)


def test_matched_elsewhere_names_the_fields_the_name_does_not_explain() -> None:
    entry = make_entry(
        "h100-sxm5", name="NVIDIA H100 SXM5", architecture="Hopper", notes="HBM3 memory."
    )
    assert matched_elsewhere(entry, "h100") == ()
    assert matched_elsewhere(entry, "") == ()
    assert matched_elsewhere(entry, "HBM3") == ("notes",)
    assert matched_elsewhere(entry, "hopper h100") == ("architecture",)
    assert matched_elsewhere(entry, "hbm3 hopper") == ("architecture", "notes")
    # as the filter keeps rows: every word somewhere in id, name, architecture or notes
    assert all(FilterColumns([entry]).mask(CatalogFilter(text=t))[0] for t in ("hbm3", "hopper"))
