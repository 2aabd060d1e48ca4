"""Price-kind words, one table for the details pane, the Plan tab and the report."""

from __future__ import annotations

import pytest

from gpudesk.catalog.prices import price_kind_label
from gpudesk.catalog.schema import PriceKind


def test_every_price_kind_has_a_sentence_and_a_cell_label() -> None:
    for kind in PriceKind:
        assert price_kind_label(kind)
        assert len(price_kind_label(kind, short=True)) <= len(price_kind_label(kind))


@pytest.mark.parametrize(
    ("kind", "sentence", "cell"),
    [
        (PriceKind.LAUNCH_MSRP, "launch list price (MSRP)", "launch MSRP"),
        ("street", "street price", "street"),
        ("used", "used-market price", "used"),
    ],
)
def test_enum_or_stored_value(kind: PriceKind | str, sentence: str, cell: str) -> None:
    assert price_kind_label(kind) == sentence
    assert price_kind_label(kind, short=True) == cell


@pytest.mark.parametrize("kind", [None, "", "rumour"])
def test_unknown_kinds_read_as_price(kind: str | None) -> None:
    assert price_kind_label(kind) == "price"
