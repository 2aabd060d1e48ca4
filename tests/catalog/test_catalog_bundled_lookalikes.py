"""GPUs that look alike to detection, told apart by the bundled catalog.

The A2 and the A16 share PCI id 10de:25b6 and 16 GB per GPU, so only the NVML
name separates them; the A800s are A100s under another name and PCI id. A
wrong ``nvml_names`` or a PCI id copied between these entries makes one of
them show up as the other.
"""

from __future__ import annotations

import pytest

from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.hardware.match import MatchMethod, match_device
from gpudesk.hardware.models import GpuSnapshot
from gpudesk.paths import bundled_catalog_dir

_SIXTEEN_GB_MIB = 16 * 1024


@pytest.fixture(scope="module")
def entries() -> list[CatalogEntry]:
    return list(load_directory(bundled_catalog_dir()).entries)


def _gpu(name: str, memory_mib: int, pci: str, index: int = 0) -> GpuSnapshot:
    return GpuSnapshot(
        index=index,
        name=name,
        memory_total_mib=memory_mib,
        pci_device_id=pci,
        pci_vendor_id="0x10de",
    )


@pytest.mark.parametrize(("nvml_name", "expected"), [("NVIDIA A2", "a2"), ("NVIDIA A16", "a16")])
def test_shared_pci_id_25b6_is_told_apart_by_nvml_name(
    entries: list[CatalogEntry], nvml_name: str, expected: str
) -> None:
    match = match_device(_gpu(nvml_name, _SIXTEEN_GB_MIB, "0x25b6"), entries)
    assert match.catalog_id == expected
    assert match.method is MatchMethod.NVML_NAME


def test_no_entry_claims_the_shared_pci_id(entries: list[CatalogEntry]) -> None:
    assert [entry.id for entry in entries if "0x10de:0x25b6" in entry.pci_ids] == []


def test_each_gpu_of_an_a16_board_is_one_a16_entry(entries: list[CatalogEntry]) -> None:
    board = [_gpu("NVIDIA A16", _SIXTEEN_GB_MIB, "0x25b6", index) for index in range(4)]
    assert [match_device(gpu, entries).catalog_id for gpu in board] == ["a16"] * 4
    a16 = next(entry for entry in entries if entry.id == "a16")
    # Per-GPU figures: one GPU's memory and a quarter of the 250 W board.
    assert a16.memory_gb == 16
    assert a16.tdp_w is not None and a16.tdp_w * 4 <= 250


@pytest.mark.parametrize(
    ("nvml_name", "memory_gb", "pci", "expected"),
    [
        ("NVIDIA A800 80GB PCIe", 80, "0x20f5", "a800-80gb-pcie"),
        ("NVIDIA A800-SXM4-80GB", 80, "0x20f3", "a800-sxm4-80gb"),
        ("NVIDIA A100 80GB PCIe", 80, "0x20b5", "a100-80gb-pcie"),
        ("NVIDIA A100-SXM4-80GB", 80, "0x20b2", "a100-80gb-sxm4"),
    ],
)
def test_a800_and_a100_are_not_confused(
    entries: list[CatalogEntry], nvml_name: str, memory_gb: int, pci: str, expected: str
) -> None:
    by_pci = match_device(_gpu(nvml_name, memory_gb * 1024, pci), entries)
    assert by_pci.catalog_id == expected
    by_name = match_device(_gpu(nvml_name, memory_gb * 1024, "0xffff"), entries)
    assert by_name.catalog_id == expected
