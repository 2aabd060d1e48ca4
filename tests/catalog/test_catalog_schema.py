import datetime as dt

import pytest
from catalog_factory import entry_data, make_entry
from pydantic import ValidationError

from gpudesk.catalog.schema import CatalogEntry, Segment


def test_valid_entry_round_trips() -> None:
    entry = make_entry(
        "rtx-test", price_usd=999, price_date=dt.date(2024, 1, 2), price_kind="street"
    )
    assert entry.segment is Segment.CONSUMER
    assert entry.price_date == dt.date(2024, 1, 2)
    assert CatalogEntry.model_validate(entry.model_dump()) == entry


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("memory_gb", -8),
        ("bandwidth_gbs", 0),
        ("release_year", 2005),
        ("release_year", 2031),
        ("segment", "gaming"),
        ("price_kind", "cheap"),
        ("id", "Has Spaces"),
        ("pci_device_ids", ["2684"]),
        ("sources", []),
        ("fp32_tflops", "fast"),
    ],
)
def test_invalid_values_are_rejected_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as info:
        CatalogEntry.model_validate(entry_data(**{field: value}))
    assert field in {str(error["loc"][0]) for error in info.value.errors()}


def test_unknown_field_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        CatalogEntry.model_validate(entry_data(memory=16))
    assert info.value.errors()[0]["type"] == "extra_forbidden"


def test_missing_required_field_is_rejected() -> None:
    data = entry_data()
    del data["fp32_tflops"]
    with pytest.raises(ValidationError) as info:
        CatalogEntry.model_validate(data)
    assert info.value.errors()[0]["loc"] == ("fp32_tflops",)


def test_price_needs_date_and_kind() -> None:
    with pytest.raises(ValidationError, match="price_date and price_kind"):
        make_entry(price_usd=500)


def test_sparse_figure_is_only_derived() -> None:
    entry = make_entry(fp16_tensor_tflops=835.5, sparsity_speedup=2.0)
    assert entry.fp16_tensor_sparse_tflops == pytest.approx(1671.0)
    assert make_entry(fp16_tensor_tflops=100).fp16_tensor_sparse_tflops is None
    assert "fp16_tensor_sparse_tflops" not in CatalogEntry.model_fields


def test_pci_ids_are_normalised_to_lowercase() -> None:
    assert make_entry(pci_device_ids=["0x2B85"]).pci_device_ids == ("0x2b85",)


def test_entries_are_frozen() -> None:
    entry = make_entry()
    with pytest.raises(ValidationError):
        entry.memory_gb = 32  # type: ignore[misc]
