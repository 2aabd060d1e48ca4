"""Strict types, plausible minimums and the schema additions of catalog files."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import entry_data, make_entry, to_toml, write_entry
from hypothesis import HealthCheck, given, settings, strategies as st
from pydantic import ValidationError

from gpudesk.catalog.loader import MAX_ENTRY_FILE_BYTES, load_directory, read_entry
from gpudesk.catalog.records import entries_csv, entry_record
from gpudesk.catalog.schema import (
    ENTRY_FIELDS,
    CatalogEntry,
    CloudRateKind,
    DeviceType,
)

RATE: dict[str, Any] = {
    "provider": "Lambda",
    "usd_per_gpu_hour": 2.99,
    "kind": "on_demand",
    "date": dt.date(2026, 11, 20),
    "source": "https://lambda.ai/pricing",
}


def _fields_named(exc: ValidationError) -> set[str]:
    return {str(error["loc"][0]) for error in exc.errors()}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("memory_gb", True),
        ("memory_gb", "16"),
        ("memory_gb", 0.05),
        ("memory_gb", math.nan),
        ("bandwidth_gbs", math.inf),
        ("fp32_tflops", False),
        ("release_year", 2022.0),
        ("release_year", "2022"),
        ("tdp_w", True),
        ("ecc", "yes"),
        ("ecc", 1),
        ("nvlink", "false"),
        ("price_usd", 1e-300),
        ("price_usd", 0.99),
        ("price_date", "2024-01-01"),
        ("price_date", dt.datetime(2024, 1, 1, 12, 0)),
        ("name", 4090),
        ("sources", ["ok", 7]),
        ("nvml_names", "NVIDIA GeForce RTX 4090"),
        ("device_type", "tpu"),
        ("pci_vendor_id", "10de"),
        ("l3_cache_mb", 0),
        ("l3_cache_mb", True),
        ("price_note", 3),
        ("provenance", ""),
        ("cloud_rates", [{**RATE, "usd_per_gpu_hour": True}]),
        ("cloud_rates", [{**RATE, "usd_per_gpu_hour": "2.99"}]),
        ("cloud_rates", [{**RATE, "kind": "reserved"}]),
        ("cloud_rates", [{**RATE, "date": "2026-11-20"}]),
        ("cloud_rates", [{**RATE, "currency": "EUR"}]),
        ("cloud_rates", [{**RATE, "usd_per_gpu_hour": 0.0}]),
        ("cloud_rates", {"provider": "Lambda"}),
    ],
)
def test_lax_values_are_rejected_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as info:
        CatalogEntry.model_validate(entry_data(**{field: value}))
    assert field in _fields_named(info.value)


def test_a_user_file_with_memory_gb_true_is_rejected_naming_it(tmp_path: Path) -> None:
    path = write_entry(tmp_path, "bad-memory", memory_gb=True)
    entry, problems, _ = read_entry(path)
    assert entry is None
    assert [(problem.field, problem.message) for problem in problems] == [
        ("memory_gb", "must be a number, not true")
    ]


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('memory_gb = "16"', "memory_gb", 'must be a number, not "16"'),
        ('ecc = "yes"', "ecc", 'must be true or false, not "yes"'),
        ('price_date = "2024-03-01"', "price_date", "must be a TOML date"),
        ("release_year = 2022.5", "release_year", "must be a whole number, not 2022.5"),
    ],
)
def test_loader_words_type_errors_for_a_file_editor(
    tmp_path: Path, line: str, field: str, message: str
) -> None:
    data = entry_data("typed", price_usd=500, price_kind="street", price_date=dt.date(2024, 3, 1))
    key = line.split(" = ")[0]
    data.pop(key, None)
    path = tmp_path / "typed.toml"
    path.write_text(to_toml(data) + line + "\n", "utf-8")
    _entry, problems, _ = read_entry(path)
    assert [problem.field for problem in problems] == [field]
    assert problems[0].message.startswith(message)


def test_plausible_minimums_are_accepted_at_the_edge() -> None:
    entry = make_entry(
        memory_gb=0.1, price_usd=1, price_kind="used", price_date=dt.date(2025, 1, 1)
    )
    assert entry.memory_gb == 0.1
    assert entry.price_usd == 1.0
    assert isinstance(make_entry(memory_gb=16).memory_gb, float)


def test_cloud_rates_load_from_a_toml_array_of_tables(tmp_path: Path) -> None:
    text = to_toml(entry_data("cloudy")) + (
        "\n[[cloud_rates]]\n"
        'provider = "Lambda"\nusd_per_gpu_hour = 2.99\nkind = "on_demand"\n'
        'date = 2026-11-20\nsource = "https://lambda.ai/pricing"\n'
        "\n[[cloud_rates]]\n"
        'provider = "Vast.ai"\nusd_per_gpu_hour = 1.6\nkind = "marketplace"\n'
        'date = 2026-11-21\nsource = "https://vast.ai/pricing/gpu/H100-SXM"\n'
    )
    path = tmp_path / "cloudy.toml"
    path.write_text(text, "utf-8")
    entry, problems, notices = read_entry(path)
    assert problems == [] and notices == []
    assert entry is not None
    assert [rate.kind for rate in entry.cloud_rates] == [
        CloudRateKind.ON_DEMAND,
        CloudRateKind.MARKETPLACE,
    ]
    assert entry.cloud_rates[1].date == dt.date(2026, 11, 21)
    # the pre-cloud_rates names read the default (lowest on-demand) rate
    record = entry_record(entry)
    assert record["cloud_hourly_usd"] == 2.99
    assert record["cloud_hourly_source"] == "https://lambda.ai/pricing"


def test_legacy_cloud_fields_migrate_into_one_on_demand_rate(tmp_path: Path) -> None:
    path = write_entry(
        tmp_path,
        "old-style",
        cloud_hourly_usd=3.78,
        cloud_hourly_source="Lambda, 1x H100 SXM on-demand",
        cloud_hourly_date=dt.date(2026, 5, 7),
    )
    entry, problems, notices = read_entry(path)
    assert problems == []
    assert entry is not None
    (rate,) = entry.cloud_rates
    assert (rate.provider, rate.usd_per_gpu_hour, rate.kind, rate.date) == (
        "Lambda",
        3.78,
        CloudRateKind.ON_DEMAND,
        dt.date(2026, 5, 7),
    )
    assert [notice.field for notice in notices] == [
        "cloud_hourly_usd, cloud_hourly_source, cloud_hourly_date"
    ]
    assert "deprecated" in notices[0].message and "[[cloud_rates]]" in notices[0].message
    catalog = load_directory(tmp_path)
    assert [entry.id for entry in catalog.entries] == ["old-style"]
    assert len(catalog.notices) == 1 and catalog.problems == []


def test_legacy_cloud_fields_are_still_strict() -> None:
    with pytest.raises(ValidationError) as info:
        make_entry(cloud_hourly_usd="3.78")
    assert _fields_named(info.value) == {"cloud_hourly_usd"}
    with pytest.raises(ValidationError) as info:
        make_entry(cloud_hourly_usd=3.78, cloud_hourly_date="2026-05-07")
    assert _fields_named(info.value) == {"cloud_hourly_date"}
    with pytest.raises(ValidationError, match="need cloud_hourly_usd"):
        make_entry(cloud_hourly_source="Lambda")  # a source without a rate


def test_pci_vendor_id_is_derived_from_the_vendor_unless_given() -> None:
    nvidia = make_entry(pci_device_ids=["0x2684"])
    assert nvidia.pci_vendor_id == "0x10de"
    assert nvidia.pci_ids == ("0x10de:0x2684",)
    amd = make_entry(vendor="AMD", pci_device_ids=["0x744C", "0x7448"])
    assert amd.pci_ids == ("0x1002:0x744c", "0x1002:0x7448")
    assert make_entry(vendor="intel").pci_vendor_id == "0x8086"
    gaudi = make_entry(vendor="Intel", pci_vendor_id="0x1DA3", pci_device_ids=["0x1060"])
    assert gaudi.pci_ids == ("0x1da3:0x1060",)
    apple = make_entry(vendor="Apple", pci_device_ids=[])
    assert apple.pci_vendor_id is None and apple.pci_ids == ()


def test_device_type_defaults_to_gpu() -> None:
    assert make_entry().device_type is DeviceType.GPU
    assert make_entry(device_type="accelerator").device_type is DeviceType.ACCELERATOR
    assert make_entry(device_type="soc", memory_type="unified").device_type is DeviceType.SOC


def test_l3_cache_is_its_own_field() -> None:
    entry = make_entry(vendor="AMD", l2_cache_mb=32, l3_cache_mb=256)
    assert (entry.l2_cache_mb, entry.l3_cache_mb) == (32.0, 256.0)


def test_price_note_needs_a_price() -> None:
    with pytest.raises(ValidationError, match="price_note needs price_usd"):
        make_entry(price_note="range $25k-$30k")
    priced = make_entry(
        price_usd=27_500,
        price_kind="estimate",
        price_date=dt.date(2026, 10, 1),
        price_note="range $25k-$30k reported; midpoint",
    )
    assert priced.price_note == "range $25k-$30k reported; midpoint"


def test_oversized_file_is_a_problem_not_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.toml"
    path.write_text(to_toml(entry_data("huge")) + "#" * MAX_ENTRY_FILE_BYTES + "\n", "utf-8")
    entry, problems, _ = read_entry(path)
    assert entry is None
    assert problems[0].field == "(file)" and "KiB" in problems[0].message


def test_records_keep_the_cloud_hourly_keys_and_csv_reads_rates() -> None:
    entry = make_entry(
        "rented",
        cloud_rates=[
            {**RATE, "usd_per_gpu_hour": 3.5, "provider": "AWS"},
            RATE,
            {**RATE, "usd_per_gpu_hour": 1.2, "kind": "spot", "provider": "RunPod"},
        ],
    )
    record = entry_record(entry)
    assert record["cloud_hourly_usd"] == 2.99
    assert record["cloud_hourly_date"] == "2026-11-20"
    assert record["cloud_rates"][0]["provider"] == "AWS"
    assert record["pci_vendor_id"] == "0x10de"
    csv_text = entries_csv([entry])
    header, row = csv_text.splitlines()
    assert "cloud_hourly_usd" in header.split(",")
    assert "Lambda on_demand 2.99 USD/h 2026-11-20 https://lambda.ai/pricing" in row
    assert "{" not in row


# --- property: any value in any field gives an entry or problems naming that field

_TOML_SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.dates(),
)
_TOML_VALUES = st.one_of(
    _TOML_SCALARS,
    st.lists(_TOML_SCALARS, max_size=4),
    st.dictionaries(st.sampled_from(["provider", "kind", "usd_per_gpu_hour", "x"]), _TOML_SCALARS),
    st.lists(
        st.fixed_dictionaries(
            {"provider": _TOML_SCALARS, "usd_per_gpu_hour": _TOML_SCALARS, "kind": _TOML_SCALARS}
        ),
        max_size=2,
    ),
)
_MUTABLE_FIELDS = [name for name in ENTRY_FIELDS if name != "id"] + [
    "cloud_hourly_usd",
    "cloud_hourly_date",
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(_MUTABLE_FIELDS), value=_TOML_VALUES)
def test_any_toml_value_in_any_field_is_typed_or_named(
    tmp_path: Path, field: str, value: object
) -> None:
    data = entry_data("prop-gpu")
    data[field] = value
    path = tmp_path / "prop-gpu.toml"
    path.write_text(to_toml(data), "utf-8")
    entry, problems, _ = read_entry(path)  # must never raise
    if problems:
        assert entry is None
        assert all(problem.path == path and problem.message for problem in problems)
        # the problem names the field that was changed (or the model-level rule)
        assert any(
            problem.field.split(".")[0] in (field, "(file)", "(toml)") for problem in problems
        )
        return
    assert entry is not None
    # what loaded is of the declared type: no bool or text became a number
    for name in ("memory_gb", "bandwidth_gbs", "fp32_tflops"):
        figure = getattr(entry, name)
        assert type(figure) is float and math.isfinite(figure)
    assert type(entry.release_year) is int
    assert entry.memory_gb >= 0.1
    assert entry.price_usd is None or entry.price_usd >= 1
    assert entry.ecc is None or type(entry.ecc) is bool
    assert entry.price_date is None or type(entry.price_date) is dt.date
    for rate in entry.cloud_rates:
        assert type(rate.usd_per_gpu_hour) is float and rate.usd_per_gpu_hour > 0
    # and it survives a round trip through TOML unchanged
    again = tmp_path / "again" / "prop-gpu.toml"
    again.parent.mkdir(exist_ok=True)
    again.write_text(to_toml(entry.model_dump(exclude_none=True, exclude_defaults=True)), "utf-8")
    assert read_entry(again)[0] == entry
