"""Cross-entry checks on the bundled catalog's figures: the mistakes a reader would spot.

Each check is a property a wrong figure breaks: a with-sparsity number stored as
dense makes FP16 exceed FP8, a PCI id copied between entries makes detection
pick the wrong GPU, a tensor rate below the shader rate means the two were swapped.
"""

from __future__ import annotations

from collections import defaultdict

from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.paths import bundled_catalog_dir


def _bundled() -> list[CatalogEntry]:
    catalog = load_directory(bundled_catalog_dir())
    assert catalog.entries, "the bundled catalog must not be empty"
    return list(catalog.entries)


def test_no_pci_id_belongs_to_two_entries() -> None:
    owners: dict[str, list[str]] = defaultdict(list)
    for entry in _bundled():
        for pci_id in entry.pci_ids:
            owners[pci_id].append(entry.id)
    shared = {pci_id: ids for pci_id, ids in owners.items() if len(ids) > 1}
    assert shared == {}, f"PCI ids claimed by several entries: {shared}"


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
            if value is not None:
                assert value >= entry.fp32_tflops, f"{entry.id}: {field} {value} < FP32"
