"""Matching detected devices to catalog entries."""

from __future__ import annotations

from catalog_factory import make_entry
from hardware import fake_pynvml as fakes

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.hardware.detect import detect
from gpudesk.hardware.match import MatchMethod, match_device, match_devices, name_tokens
from gpudesk.hardware.models import DeviceKind, GpuSnapshot
from gpudesk.hardware.nvml import Nvml


def _entries() -> list[CatalogEntry]:
    return [
        make_entry(
            "rtx-4090",
            name="NVIDIA GeForce RTX 4090",
            memory_gb=24,
            nvml_names=["NVIDIA GeForce RTX 4090"],
            pci_device_ids=["0x2684"],
        ),
        make_entry(
            "rtx-3080-10gb",
            name="NVIDIA GeForce RTX 3080 10GB",
            memory_gb=10,
            nvml_names=["NVIDIA GeForce RTX 3080"],
            pci_device_ids=["0x2206"],
        ),
        make_entry(
            "rtx-3080-12gb",
            name="NVIDIA GeForce RTX 3080 12GB",
            memory_gb=12,
            nvml_names=["NVIDIA GeForce RTX 3080"],
            pci_device_ids=["0x220a"],
        ),
        make_entry("a100-40gb-sxm4", name="NVIDIA A100 SXM4 40GB", memory_gb=40),
        make_entry("a100-80gb-sxm4", name="NVIDIA A100 SXM4 80GB", memory_gb=80),
        make_entry("rtx-3060-12gb", name="NVIDIA GeForce RTX 3060 12GB", memory_gb=12),
    ]


def _gpu(name: str, memory_mib: int | None, pci: str | None = None) -> GpuSnapshot:
    return GpuSnapshot(index=0, name=name, memory_total_mib=memory_mib, pci_device_id=pci)


def test_pci_device_id_wins() -> None:
    # the name says 3080, but the PCI id is the 12 GB card's
    match = match_device(_gpu("NVIDIA GeForce RTX 3080", 10240, "0x220A"), _entries())
    assert (match.catalog_id, match.method) == ("rtx-3080-12gb", MatchMethod.PCI_DEVICE_ID)
    assert match.matched


def test_exact_nvml_name_when_unique() -> None:
    match = match_device(_gpu("NVIDIA GeForce RTX 4090", 24564, "0x9999"), _entries())
    assert (match.catalog_id, match.method) == ("rtx-4090", MatchMethod.NVML_NAME)


def test_same_nvml_name_is_told_apart_by_memory_size() -> None:
    ten = match_device(_gpu("NVIDIA GeForce RTX 3080", 10240), _entries())
    twelve = match_device(_gpu("NVIDIA GeForce RTX 3080", 12288), _entries())
    assert (ten.catalog_id, ten.method) == ("rtx-3080-10gb", MatchMethod.NAME_AND_MEMORY)
    assert (twelve.catalog_id, twelve.method) == ("rtx-3080-12gb", MatchMethod.NAME_AND_MEMORY)
    assert ten.candidates == ("rtx-3080-12gb",)


def test_normalised_name_plus_memory() -> None:
    # no nvml_names on the A100 entries; NVML spells it with dashes and the size
    forty = match_device(_gpu("NVIDIA A100-SXM4-40GB", 40960), _entries())
    eighty = match_device(_gpu("NVIDIA A100-SXM4-80GB", 81920), _entries())
    assert (forty.catalog_id, forty.method) == ("a100-40gb-sxm4", MatchMethod.NAME_AND_MEMORY)
    assert eighty.catalog_id == "a100-80gb-sxm4"


def test_memory_size_that_fits_no_entry_is_not_matched_but_offered() -> None:
    # a 3060 with 8 GB: the catalog has only the 12 GB model
    match = match_device(_gpu("NVIDIA GeForce RTX 3060", 8192), _entries())
    assert match.catalog_id is None
    assert match.method is MatchMethod.NONE
    assert match.candidates[0] == "rtx-3060-12gb"
    assert match.description.startswith("not in catalog (closest: rtx-3060-12gb")


def test_unknown_memory_with_a_unique_name_matches_by_name_only() -> None:
    match = match_device(_gpu("NVIDIA GeForce RTX 3060", None), _entries())
    assert (match.catalog_id, match.method) == ("rtx-3060-12gb", MatchMethod.NAME_ONLY)


def test_not_in_catalog_lists_closest_candidates() -> None:
    match = match_device(_gpu("NVIDIA GeForce RTX 3070", 8192), _entries())
    assert match.catalog_id is None
    assert 1 <= len(match.candidates) <= 3
    assert all(candidate.startswith("rtx-30") for candidate in match.candidates)
    nothing = match_device(_gpu("Zorblax 9000", 4096), _entries())
    assert nothing.candidates == ()
    assert nothing.description == "not in catalog"


def test_mig_instances_take_their_parents_entry() -> None:
    result = detect(Nvml(module=fakes.mig_a100()))
    matches = match_devices(result.gpus, _entries())
    assert [match.catalog_id for match in matches] == ["a100-40gb-sxm4"] * 3
    assert [match.method for match in matches] == [
        MatchMethod.NAME_AND_MEMORY,
        MatchMethod.PARENT_GPU,
        MatchMethod.PARENT_GPU,
    ]
    assert result.gpus[1].kind is DeviceKind.MIG


def test_two_gpu_scenario_matches() -> None:
    result = detect(Nvml(module=fakes.two_gpus()))
    matches = match_devices(result.gpus, _entries())
    assert [(m.catalog_id, m.method) for m in matches] == [
        ("rtx-4090", MatchMethod.PCI_DEVICE_ID),
        ("rtx-3080-12gb", MatchMethod.PCI_DEVICE_ID),
    ]


def test_name_tokens() -> None:
    assert name_tokens("NVIDIA A100-SXM4-40GB") == {"a100", "sxm4"}
    assert name_tokens("A100 SXM4 40GB") == {"a100", "sxm4"}
    assert name_tokens("NVIDIA GeForce RTX 4070 Ti SUPER") == {"rtx", "4070", "ti", "super"}
    assert name_tokens("Tesla V100-SXM2-16GB") == {"v100", "sxm2"}
    assert "laptop" in name_tokens("NVIDIA GeForce RTX 3060 Laptop GPU")


def test_bundled_catalog_matches_the_fake_gpus() -> None:
    """The real catalog's nvml_names / pci_device_ids cover the common cards."""
    from gpudesk.catalog.loader import load_catalog

    entries = load_catalog().entries
    if not any(entry.pci_device_ids for entry in entries):
        return  # catalog without matching data (being written): nothing to check
    result = detect(Nvml(module=fakes.two_gpus()))
    ids = [match.catalog_id for match in match_devices(result.gpus, entries)]
    assert ids == ["rtx-4090", "rtx-3080-12gb"]
