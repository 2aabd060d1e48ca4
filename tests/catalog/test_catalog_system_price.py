"""Issue 28 item 5: a chip sold only inside a computer (Apple silicon, DGX Spark) is priced
as that computer's launch price, kind ``system``, and the price always names the machine
so no one reads it as the chip's price."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from catalog_factory import make_entry, write_entry
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError

from gpudesk.catalog import load_catalog
from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.metrics import METRICS, fp16_tensor_tflops_per_kusd, memory_gb_per_kusd
from gpudesk.catalog.prices import entry_price_label, price_kind_label
from gpudesk.catalog.schema import PriceKind
from gpudesk.catalog.sourcing import sourcing_issues
from gpudesk.compare.table import build_comparison
from gpudesk.cost import catalog_cost_figures

MACHINE = "Mac Studio (2023), M2 Max 12-core CPU, 30-core GPU, 32 GB, 512 GB SSD"


def _system(**overrides: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "price_usd": 1999,
        "price_date": dt.date(2023, 6, 5),
        "price_kind": "system",
        "price_system": MACHINE,
    }
    fields.update(overrides)
    return fields


def test_a_system_price_names_its_machine_in_every_label() -> None:
    entry = make_entry(**_system())
    assert entry.price_kind is PriceKind.SYSTEM
    assert entry_price_label(entry, short=True) == f"system: {MACHINE}"
    assert entry_price_label(entry) == f"launch price of the whole computer: {MACHINE}"
    figures = catalog_cost_figures(entry, today=dt.date(2023, 7, 1))
    assert figures.price_system == MACHINE
    assert price_kind_label(figures.price_kind, short=True, system=figures.price_system) == (
        f"system: {MACHINE}"
    )


def test_a_system_price_without_its_machine_is_refused() -> None:
    with pytest.raises(ValidationError, match="price_system"):
        make_entry(**_system(price_system=None))


@pytest.mark.parametrize("kind", ["launch_msrp", "street", "used", "estimate"])
def test_a_machine_is_refused_on_a_chip_price(kind: str) -> None:
    with pytest.raises(ValidationError, match="only for price_kind 'system'"):
        make_entry(**_system(price_kind=kind))


def test_other_kinds_ignore_the_system_argument() -> None:
    assert price_kind_label("street", short=True, system="ignored") == "street"


def test_every_bundled_system_price_names_its_machine_and_says_whole_computer() -> None:
    entries = [e for e in load_catalog().entries if e.price_kind is PriceKind.SYSTEM]
    ids = {entry.id for entry in entries}
    # the chips with a sourced base-configuration price (issue 28 item 5)
    assert {"apple-m2-ultra-60c", "apple-m4-max-32c", "dgx-spark"} <= ids
    for entry in entries:
        assert entry.price_system, entry.id
        assert entry.price_note is not None and "whole computer" in entry.price_note, entry.id
        assert entry.sources[0].startswith("https://"), entry.id
        assert entry_price_label(entry, short=True).startswith("system: "), entry.id


def test_every_apple_chip_has_a_price_or_a_dated_statement() -> None:
    apple = [e for e in load_catalog().entries if e.id.startswith("apple-")]
    assert len(apple) >= 20
    for entry in apple:
        assert (entry.price_usd is None) != (entry.price_unavailable is None), entry.id
        if entry.price_usd is not None:
            assert entry.price_kind is PriceKind.SYSTEM, entry.id
        assert not [issue for issue in sourcing_issues(entry) if issue.field == "price_usd"]


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from([*[k.value for k in PriceKind], "System", "", "rumour"]),
    machine=st.one_of(st.none(), st.text(max_size=260), st.integers(), st.booleans()),
)
def test_hostile_system_fields_in_a_file_are_a_named_problem_never_a_crash(
    tmp_path_factory: pytest.TempPathFactory, kind: str, machine: object
) -> None:
    folder: Path = tmp_path_factory.mktemp("system")
    fields = _system(price_kind=kind, price_system=machine)
    if machine is None:
        del fields["price_system"]
    try:
        write_entry(folder, "hostile", **fields)
    except (TypeError, ValueError, UnicodeEncodeError):
        return  # the factory cannot write this value as TOML; nothing to load
    catalog = load_directory(folder)
    if catalog.entries:
        (entry,) = catalog.entries
        if entry.price_kind is PriceKind.SYSTEM:
            assert entry.price_system
            assert entry_price_label(entry, short=True) == f"system: {entry.price_system}"
        else:  # a chip's own price never carries a machine
            assert entry.price_system is None
    else:
        assert catalog.problems


def test_memory_per_price_is_of_the_priced_machine_not_the_largest_configuration() -> None:
    # the chip is sold with up to 64 GB; the $1,399 price is of a 24 GB machine
    entry = make_entry(memory_gb=64, price_system_memory_gb=24, **_system(price_usd=1399))
    assert memory_gb_per_kusd(entry) == pytest.approx(24 / 1.399)
    assert METRICS["memory_gb_per_kusd"].format(METRICS["memory_gb_per_kusd"].value(entry)) == (
        "17.16"
    )
    # compute per price is of the same chip, so it keeps the chip's figure
    chip = make_entry(memory_gb=64, fp16_tensor_tflops=10.0, **_system(price_usd=1000))
    assert fp16_tensor_tflops_per_kusd(chip) == pytest.approx(10.0)


def test_memory_per_price_is_na_where_the_priced_machine_memory_is_not_recorded() -> None:
    entry = make_entry(memory_gb=64, **_system())
    assert memory_gb_per_kusd(entry) is None
    comparison = build_comparison([entry, make_entry("card", name="Card", memory_gb=24)])
    row = comparison.row("priced_memory")
    assert comparison.value_text(row, 0) == "not recorded (memory per price n/a)"


def test_a_chip_price_keeps_the_entry_memory() -> None:
    entry = make_entry(
        memory_gb=24, price_usd=1599, price_date=dt.date(2024, 1, 1), price_kind="launch_msrp"
    )
    assert memory_gb_per_kusd(entry) == pytest.approx(24 / 1.599)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"price_system_memory_gb": 128}, "more than memory_gb"),
        ({"price_kind": "launch_msrp", "price_system": None}, "only for price_kind 'system'"),
        ({"price_system_memory_gb": 0}, "greater than or equal"),
        ({"price_system_memory_gb": "24"}, "valid number"),
    ],
)
def test_a_wrong_priced_machine_memory_is_refused(
    overrides: dict[str, object], message: str
) -> None:
    fields = {"memory_gb": 64, "price_system_memory_gb": 24, **_system()}
    fields.update(overrides)
    with pytest.raises(ValidationError, match=message):
        make_entry(**fields)


def test_every_bundled_system_price_records_the_priced_machine_memory() -> None:
    # the bundled M4 Pro once read 45.75 GB per 1k USD (64 GB / $1,399) and was marked
    # best; the $1,399 Mac mini has 24 GB
    catalog = load_catalog()
    for entry in catalog.entries:
        if entry.price_kind is not PriceKind.SYSTEM:
            continue
        memory = entry.price_system_memory_gb
        assert memory is not None, entry.id
        assert entry.price_system is not None and f"{memory:g} GB" in entry.price_system, entry.id
    m4_pro, rtx_4090 = catalog.by_id("apple-m4-pro-16c"), catalog.by_id("rtx-4090")
    assert m4_pro is not None and rtx_4090 is not None
    assert memory_gb_per_kusd(m4_pro) == pytest.approx(24 / 1.399)
    comparison = build_comparison([m4_pro, rtx_4090])
    assert (
        comparison.value_text(comparison.row("priced_memory"), 0) == "24 GiB"
    )  # as sold, like the Memory row
    assert comparison.value_text(comparison.row("memory_gb_per_kusd"), 0) == "17.16"
