"""Accelerators beyond GPUs (issue 43): kind, status, the interconnect table.

The catalog file is untrusted: every new field gets a property test over hostile
values (each is refused with a problem naming its field, or read as the type it
claims) besides the examples.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import entry_data, make_entry, to_toml, write_entry
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError
from reach import reached

from gpudesk.catalog.loader import load_directory, read_entry
from gpudesk.catalog.names import identity_parts, interconnect_words
from gpudesk.catalog.query import SHOWN_BY_DEFAULT, CatalogFilter, FilterColumns, filter_entries
from gpudesk.catalog.records import RECORD_COLUMNS, entries_csv, entry_record
from gpudesk.catalog.schema import (
    FIELDS_OPTIONAL_WHEN_ANNOUNCED,
    FIELDS_OPTIONAL_WHEN_CLOUD_ONLY,
    CatalogEntry,
    DeviceType,
    Interconnect,
    Kind,
    LinkKind,
    Status,
    Topology,
    vendor_display_name,
)
from gpudesk.catalog.sourcing import sourcing_issues
from gpudesk.speed.hardware import link_for, rates_for

_LINK = {
    "kind": "nvlink",
    "generation": "NVLink 4",
    "gbs_per_direction": 450.0,
    "topology": "switch",
    "max_devices": 8,
    "source": "https://www.nvidia.com/en-us/data-center/h100/ (NVLink 900 GB/s)",
}


def _announced(**overrides: Any) -> dict[str, Any]:
    """An announced part with only a dense BF16 figure (no memory size or bandwidth)."""
    data = entry_data(
        "next-chip",
        status="announced",
        status_date=dt.date(2026, 3, 16),
        bf16_tensor_tflops=2500.0,
    )
    for name in FIELDS_OPTIONAL_WHEN_ANNOUNCED:
        data.pop(name)
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


# kind and its deprecated alias ----------------------------------------------------


def test_kind_defaults_to_gpu_and_json_keeps_device_type_beside_it() -> None:
    entry = make_entry()
    assert entry.kind is Kind.GPU and entry.device_type is DeviceType.GPU
    record = entry_record(entry)
    assert record["kind"] == "gpu" and record["device_type"] == "gpu"
    assert "device_type" in RECORD_COLUMNS and "kind" in RECORD_COLUMNS


@pytest.mark.parametrize(
    ("kind", "device_type"),
    [("gpu", "gpu"), ("soc", "soc"), ("tpu", "accelerator"), ("npu", "accelerator"),
     ("asic", "accelerator")],
)  # fmt: skip
def test_each_kind_is_written_with_its_deprecated_device_type(kind: str, device_type: str) -> None:
    entry = make_entry(kind=kind)
    dumped = entry.model_dump(mode="json")
    assert dumped["kind"] == kind and dumped["device_type"] == device_type
    # the dump reads back as the same entry (both keys agree)
    assert CatalogEntry.model_validate(dumped) == entry


@pytest.mark.parametrize(
    ("device_type", "kind"), [("gpu", Kind.GPU), ("soc", Kind.SOC), ("accelerator", Kind.ASIC)]
)
def test_device_type_in_a_file_reads_as_kind_with_a_notice(
    tmp_path: Path, device_type: str, kind: Kind
) -> None:
    path = write_entry(tmp_path, device_type=device_type)
    entry, problems, notices = read_entry(path)
    assert problems == [] and entry is not None and entry.kind is kind
    assert [notice.field for notice in notices] == ["device_type"]
    assert "kind" in notices[0].message


def test_an_accelerator_may_say_which_kind_it_is() -> None:
    assert make_entry(device_type="accelerator", kind="tpu").kind is Kind.TPU


def test_device_type_that_contradicts_kind_is_refused_by_name(tmp_path: Path) -> None:
    path = write_entry(tmp_path, device_type="gpu", kind="tpu")
    entry, problems, _ = read_entry(path)
    assert entry is None
    assert any("device_type 'gpu' disagrees with kind 'tpu'" in p.message for p in problems)


def test_an_unknown_device_type_is_a_problem_at_device_type(tmp_path: Path) -> None:
    _, problems, _ = read_entry(write_entry(tmp_path, device_type="tpu"))
    assert [problem.field for problem in problems] == ["device_type"]


def test_the_bundled_catalog_writes_kind_not_device_type() -> None:
    root = Path(__file__).resolve().parents[2] / "catalog"
    files = sorted(root.glob("*/*.toml"))
    assert len(files) >= 114
    writing_device_type = [f.name for f in files if "\ndevice_type" in f.read_text("utf-8")]
    assert writing_device_type == []


def test_vendor_display_names() -> None:
    assert [vendor_display_name(v) for v in ("aws", "Google", "HUAWEI", "qualcomm")] == [
        "AWS",
        "Google",
        "Huawei",
        "Qualcomm",
    ]
    assert vendor_display_name(" Cerebras ") == "Cerebras"


# status -----------------------------------------------------------------------------


def test_existing_entries_default_to_shipping() -> None:
    assert make_entry().status is Status.SHIPPING


def test_an_announced_part_may_leave_the_unpublished_fields_empty() -> None:
    entry = CatalogEntry.model_validate(_announced())
    for name in FIELDS_OPTIONAL_WHEN_ANNOUNCED:
        assert getattr(entry, name) is None, name
    assert identity_parts(entry) == ["NVIDIA", "Announced 2026-03-16"]
    # without memory size or bandwidth the speed model has nothing to price: said so
    with pytest.raises(ValueError, match="no memory size or bandwidth"):
        rates_for(entry)
    # with them, it prices it from what was published; no FP32 is never a rate of 0
    rates = rates_for(
        CatalogEntry.model_validate(_announced(memory_gb=288.0, bandwidth_gbs=22_000.0))
    )
    assert rates.fp16_tflops == 2500.0 and rates.fp32_tflops == 2500.0
    assert rates.family == "other"


@pytest.mark.parametrize("status", ["shipping", "cloud-only", "end-of-life"])
def test_other_statuses_still_require_each_field_by_name(tmp_path: Path, status: str) -> None:
    data = _announced(status=status, price_unavailable=None)
    path = tmp_path / "next-chip.toml"
    path.write_text(to_toml(data), encoding="utf-8")
    _, problems, _ = read_entry(path)
    missing = sorted(p.field for p in problems if p.message == "required field is missing")
    # a cloud-only part may leave FP32 empty (a TPU's vendor publishes none)
    optional = FIELDS_OPTIONAL_WHEN_CLOUD_ONLY if status == "cloud-only" else ()
    assert missing == sorted(set(FIELDS_OPTIONAL_WHEN_ANNOUNCED) - set(optional))


def test_a_status_other_than_shipping_needs_its_date() -> None:
    with pytest.raises(ValidationError, match="needs status_date"):
        make_entry(status="end-of-life")


def test_a_status_date_in_the_future_is_refused() -> None:
    with pytest.raises(ValidationError, match="in the future"):
        make_entry(status="end-of-life", status_date=dt.date(2099, 1, 1))


def test_a_cloud_only_part_has_no_purchase_price() -> None:
    with pytest.raises(ValidationError, match="cloud-only part is not sold"):
        make_entry(
            status="cloud-only",
            status_date=dt.date(2026, 11, 1),
            price_usd=1000.0,
            price_date=dt.date(2026, 11, 1),
            price_kind="estimate",
        )
    statement = {"date": dt.date(2026, 12, 1), "reason": "rented by the hour only"}
    entry = make_entry(
        status="cloud-only", status_date=dt.date(2026, 11, 1), price_unavailable=statement
    )
    assert not any(issue.field == "price_usd" for issue in sourcing_issues(entry))
    assert make_entry(status="cloud-only", status_date=dt.date(2026, 11, 1)).price_usd is None
    assert any(
        issue.field == "price_usd"
        for issue in sourcing_issues(
            make_entry(status="cloud-only", status_date=dt.date(2026, 11, 1))
        )
    )


def test_announced_parts_are_hidden_by_default_and_counted() -> None:
    entries = [
        make_entry("a", release_year=2024),
        CatalogEntry.model_validate(_announced(id="b")),
        make_entry("c", kind="tpu", status="cloud-only", status_date=dt.date(2026, 1, 1)),
    ]
    shown = filter_entries(entries, CatalogFilter(statuses=SHOWN_BY_DEFAULT))
    assert [entry.id for entry in shown] == ["a", "c"]
    assert [e.id for e in filter_entries(entries, CatalogFilter(kinds=frozenset({Kind.TPU})))] == [
        "c"
    ]
    # the year range ignores a part without a year, and follows the catalog past 2025
    later = [*entries, make_entry("d", release_year=2026)]
    assert FilterColumns(later).year_range() == (2023, 2026)


# the interconnect ---------------------------------------------------------------------


def test_an_interconnect_reads_and_drives_the_link() -> None:
    entry = make_entry(interconnect=_LINK, interface="PCIe 5.0 x16")
    assert entry.interconnect == Interconnect.model_validate(_LINK)
    link = link_for(entry)
    assert (link.kind, link.gbs, link.pcie_gbs) == ("switch", 450.0, 63.0)
    assert link.allreduce_gbs(8) == 450.0
    assert interconnect_words(entry.interconnect) == (
        "NVLink 4: 450 GB/s each way through a switch, up to 8 devices"
    )
    assert json.loads(json.dumps(entry_record(entry)))["interconnect"]["topology"] == "switch"
    assert "topology=switch" in entries_csv([entry])


@pytest.mark.parametrize(
    ("topology", "expected"),
    [("mesh", ("mesh", 7 * 64.0)), ("torus", ("switch", 64.0)), ("bridge", ("bridge", 64.0))],
)
def test_each_topology_becomes_its_link(topology: str, expected: tuple[str, float]) -> None:
    link = link_for(
        make_entry(interconnect={**_LINK, "gbs_per_direction": 64.0, "topology": topology})
    )
    assert link.kind == expected[0]
    assert link.allreduce_gbs(8) == expected[1]


def test_topology_none_is_the_host_pcie_with_no_peer_link() -> None:
    entry = make_entry(
        interface="PCIe 4.0 x16",
        interconnect={"kind": "pcie", "topology": "none", "source": _LINK["source"]},
    )
    assert entry.interconnect is not None and entry.interconnect.topology is Topology.NONE
    link = link_for(entry)
    assert (link.kind, link.gbs) == ("pcie", 31.5)
    assert interconnect_words(entry.interconnect) == "pcie: no peer-to-peer link"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"topology": "bridge", "max_devices": None}, "needs max_devices"),
        ({"source": "  "}, "source"),
        ({"kind": "infiniband"}, "kind"),
        ({"gbs_per_direction": True}, "gbs_per_direction"),
        ({"colour": "green"}, "colour"),
    ],
)
def test_a_bad_interconnect_is_refused_naming_what(
    tmp_path: Path, change: dict[str, Any], words: str
) -> None:
    link = {key: value for key, value in {**_LINK, **change}.items() if value is not None}
    _, problems, _ = read_entry(write_entry(tmp_path, interconnect=link))
    assert problems, change
    assert all(problem.field.startswith("interconnect") for problem in problems)
    assert any(words in f"{problem.field}: {problem.message}" for problem in problems)


@pytest.mark.parametrize("topology", ["switch", "mesh", "torus"])
def test_a_link_without_a_published_rate_loads_as_a_gap_not_a_rate(
    tmp_path: Path, topology: str
) -> None:
    link = {key: value for key, value in _LINK.items() if key != "gbs_per_direction"}
    entry, problems, _ = read_entry(
        write_entry(tmp_path, interconnect={**link, "topology": topology})
    )
    assert problems == [] and entry is not None and entry.interconnect is not None
    assert entry.interconnect.gbs_per_direction is None
    words = interconnect_words(entry.interconnect)
    assert "no published rate" in words and "GB/s" not in words
    # the speed model takes no rate for it, not even the host's PCIe
    speed_link = link_for(entry)
    assert speed_link.rate_published is False and speed_link.kind != "pcie"
    assert "no published rate" in speed_link.words(2)
    assert json.loads(json.dumps(entry_record(entry)))["interconnect"]["gbs_per_direction"] is None


def test_strict_validation_follows_the_interconnect_source() -> None:
    entry = make_entry(interconnect={**_LINK, "source": "my notes/links.txt"})
    assert any(issue.field == "interconnect.source" for issue in sourcing_issues(entry))


def test_every_bundled_link_has_a_source_and_the_speed_table_is_gone() -> None:
    catalog = load_directory(Path(__file__).resolve().parents[2] / "catalog")
    linked = [entry for entry in catalog.entries if entry.interconnect is not None]
    assert len(linked) >= 34
    for entry in linked:
        assert entry.interconnect is not None
        assert entry.interconnect.source.strip(), entry.id
        assert not [i for i in sourcing_issues(entry) if i.field == "interconnect.source"]
    import gpudesk.speed.hardware as hardware

    assert not hasattr(hardware, "_LINKS")


# property tests: hostile values for the new fields -------------------------------------

_HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(
        ["gpu", "soc", "tpu", "npu", "asic", "accelerator", "shipping", "announced",
         "cloud-only", "end-of-life", " TPU ", "switch", "torus", "none", "nvlink", "ici"]
    ),
    st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.sampled_from(list(_LINK)), st.integers(), max_size=3),
)  # fmt: skip


def _valid_or_hostile(valid: st.SearchStrategy[Any], *, hostile_in: int) -> st.SearchStrategy[Any]:
    """A hostile value one time in ``hostile_in``, else a valid one (``st.one_of`` would
    flatten the hostile alternatives and draw a valid value one time in ten)."""
    return st.integers(0, hostile_in - 1).flatmap(lambda n: _HOSTILE if n == 0 else valid)


#: Values each new field may hold, so that about half the examples load.
_VALID: dict[str, st.SearchStrategy[Any]] = {
    "kind": st.sampled_from([kind.value for kind in Kind]),
    "status": st.sampled_from([status.value for status in Status]),
    "status_date": st.dates(min_value=dt.date(2007, 1, 1), max_value=dt.date(2026, 12, 1)),
    "device_type": st.sampled_from([device_type.value for device_type in DeviceType]),
    "interconnect": st.sampled_from(
        [_LINK, {**_LINK, "topology": "torus", "kind": "ici", "max_devices": 9216},
         {"kind": "pcie", "topology": "none", "source": _LINK["source"]}]
    ),
}  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    field_value=st.sampled_from(sorted(_VALID)).flatmap(
        lambda name: st.tuples(st.just(name), _valid_or_hostile(_VALID[name], hostile_in=2))
    ),
    announced=st.booleans(),
)
@pytest.mark.reaches(refused=76, read=24)
def test_any_value_of_the_new_fields_is_read_as_its_type_or_refused_by_name(
    tmp_path_factory: pytest.TempPathFactory, field_value: tuple[str, Any], announced: bool
) -> None:
    field, value = field_value
    data = _announced() if announced else entry_data("next-chip", status_date=dt.date(2026, 1, 5))
    if value is None:
        data.pop(field, None)
    else:
        data[field] = value
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / "next-chip.toml"
    path.write_text(to_toml(data), encoding="utf-8")
    entry, problems, _notices = read_entry(path)
    if problems:
        reached("refused")
        assert entry is None
        assert all(problem.path == path for problem in problems)
        assert all(problem.message for problem in problems)
        return
    reached("read")
    assert entry is not None
    assert isinstance(entry.kind, Kind) and isinstance(entry.status, Status)
    assert entry.status is Status.SHIPPING or entry.status_date is not None
    assert entry.status_date is None or isinstance(entry.status_date, dt.date)
    if entry.status is not Status.ANNOUNCED:
        assert all(getattr(entry, name) is not None for name in FIELDS_OPTIONAL_WHEN_ANNOUNCED)
    # whatever loads dumps to strict JSON and reads back as itself
    text = json.dumps(entry_record(entry), allow_nan=False)
    assert CatalogEntry.model_validate(entry.model_dump()) == entry
    assert json.loads(text)["device_type"] in ("gpu", "soc", "accelerator")


@settings(max_examples=150, deadline=None)
@given(
    link=st.fixed_dictionaries(
        {
            "kind": _valid_or_hostile(st.sampled_from(list(LinkKind)), hostile_in=8),
            "topology": _valid_or_hostile(st.sampled_from(list(Topology)), hostile_in=8),
            "source": _valid_or_hostile(st.just(_LINK["source"]), hostile_in=8),
        },
        optional={
            "generation": _valid_or_hostile(st.text(min_size=1, max_size=20), hostile_in=8),
            "gbs_per_direction": _valid_or_hostile(st.floats(0.5, 5000), hostile_in=8),
            "max_devices": _valid_or_hostile(st.integers(1, 10_000), hostile_in=8),
        },
    )
)
@pytest.mark.reaches(refused=50, read=23)
def test_any_interconnect_table_gives_a_link_or_a_problem_at_interconnect(
    tmp_path_factory: pytest.TempPathFactory, link: dict[str, Any]
) -> None:
    cleaned = {
        key: value.value if isinstance(value, (LinkKind, Topology)) else value
        for key, value in link.items()
        if value is not None
    }
    folder = tmp_path_factory.mktemp("link")
    path = write_entry(folder, interconnect=cleaned, interface="PCIe 4.0 x16")
    entry, problems, _ = read_entry(path)
    if problems:
        reached("refused")
        assert entry is None
        # a control character is no TOML at all: the file's problem, not the field's
        assert all(p.field.startswith(("interconnect", "(toml)")) for p in problems)
        return
    reached("read")
    assert entry is not None and entry.interconnect is not None
    result = link_for(entry)
    assert result.pcie_gbs == 31.5
    unpublished = entry.interconnect.topology is not Topology.NONE and (
        entry.interconnect.gbs_per_direction is None
    )
    # a link named without a rate is a gap, never PCIe's rate or 0 GB/s taken as a figure
    assert result.rate_published is not unpublished
    for count in (1, 2, 8):
        rate = result.allreduce_gbs(count)
        assert rate >= 0 and rate == rate  # never NaN, never negative


def test_each_bundled_entry_lives_in_its_vendors_folder_under_the_display_name() -> None:
    catalog = load_directory(Path(__file__).resolve().parents[2] / "catalog")
    from gpudesk.catalog.schema import VENDOR_DISPLAY_NAMES

    folders = {path.parent.name for path in catalog.origins.values()}
    assert {"nvidia", "amd", "apple", "intel", "aws", "huawei"} <= folders
    for entry in catalog.entries:
        folder = catalog.origins[entry.id].parent.name
        assert VENDOR_DISPLAY_NAMES.get(folder) == entry.vendor, (entry.id, folder)
