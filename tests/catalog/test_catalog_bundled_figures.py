"""Cross-entry checks on the bundled catalog's figures: the mistakes a reader would spot.

Each check is a property a wrong figure breaks: a with-sparsity number stored as
dense makes FP16 exceed FP8, a PCI id copied between entries makes detection
pick the wrong GPU, a tensor rate below the shader rate means the two were swapped.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.paths import bundled_catalog_dir


def _bundled() -> list[CatalogEntry]:
    catalog = load_directory(bundled_catalog_dir())
    assert catalog.entries, "the bundled catalog must not be empty"
    return list(catalog.entries)


def test_entries_sharing_a_pci_id_differ_in_memory() -> None:
    """A PCI id two entries claim (the RTX PRO 5000 in 48 and 72 GB) must be told apart
    by the memory the device reports: their sizes must not both fit one reading."""
    owners: dict[str, list[CatalogEntry]] = defaultdict(list)
    for entry in _bundled():
        for pci_id in entry.pci_ids:
            owners[pci_id].append(entry)
    shared = {pci_id: found for pci_id, found in owners.items() if len(found) > 1}
    assert "0x10de:0x2bb3" in shared
    for pci_id, found in shared.items():
        sizes = sorted(entry.memory_gb for entry in found)
        for smaller, larger in itertools.pairwise(sizes):
            # match._memory_fits allows max(1 GB, 10%) either side
            assert larger - smaller > max(1.0, 0.1 * larger) * 2, (pci_id, sizes)


def test_tensor_precisions_are_ordered() -> None:
    """Dense rates only: TF32 <= FP16/BF16 <= FP8 on every tensor core of these generations."""
    for entry in _bundled():
        tf32, fp16, bf16, fp8 = (
            entry.tf32_tensor_tflops,
            entry.fp16_tensor_tflops,
            entry.bf16_tensor_tflops,
            entry.fp8_tensor_tflops,
        )
        if tf32 is not None and fp16 is not None:
            assert tf32 <= fp16, entry.id
        if fp16 is not None and fp8 is not None:
            assert fp16 <= fp8, entry.id
        if fp16 is not None and bf16 is not None:
            assert bf16 == fp16, f"{entry.id}: BF16 and FP16 tensor rates differ"


def test_tensor_rates_are_not_below_the_shader_rate() -> None:
    for entry in _bundled():
        for field in ("fp16_tensor_tflops", "bf16_tensor_tflops"):
            value = getattr(entry, field)
            # an announced part may publish no FP32 rate: nothing to compare then
            if value is not None and entry.fp32_tflops is not None:
                assert value >= entry.fp32_tflops, f"{entry.id}: {field} {value} < FP32"
