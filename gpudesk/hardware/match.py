"""Map a detected device to a catalog entry, and say how.

In order: the PCI vendor and device id (``0x1002:0x74a1``: a device id alone
is not unique across vendors), the exact NVML name
(``nvml_names``), then a normalised name plus the memory size (the RTX 3080
10GB and 12GB report the same NVML name). A MIG instance takes its physical
GPU's entry. When nothing matches, the closest entries are offered.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.hardware.models import DeviceKind, GpuSnapshot

#: Words that vendors add or drop in names without changing the product.
_NOISE_WORDS = frozenset({"nvidia", "geforce", "tesla", "quadro", "gpu", "graphics", "card"})
_MEMORY_TOKEN = re.compile(r"^\d+(?:\.\d+)?(?:gb|g|gib)$")
_MAX_CANDIDATES = 3


class MatchMethod(StrEnum):
    PCI_DEVICE_ID = "pci_device_id"
    NVML_NAME = "nvml_name"
    NAME_AND_MEMORY = "name_and_memory"
    #: The name matched one entry but the device did not report its memory.
    NAME_ONLY = "name_only"
    #: A MIG instance: the entry of the physical GPU it is carved from.
    PARENT_GPU = "parent_gpu"
    #: Apple Silicon: the chip name and its GPU core count ("Apple M3 Max", 40 cores).
    CHIP_AND_GPU_CORES = "chip_and_gpu_cores"
    NONE = "none"


_METHOD_TEXT = {
    MatchMethod.PCI_DEVICE_ID: "by PCI device id",
    MatchMethod.NVML_NAME: "by NVML name",
    MatchMethod.NAME_AND_MEMORY: "by name and memory size",
    MatchMethod.NAME_ONLY: "by name only (memory size unknown)",
    MatchMethod.PARENT_GPU: "through its parent GPU",
    MatchMethod.CHIP_AND_GPU_CORES: "by chip and GPU core count",
    MatchMethod.NONE: "not in catalog",
}


class CatalogMatch(BaseModel):
    """The catalog entry a device matched, how, and alternatives."""

    model_config = ConfigDict(frozen=True)

    catalog_id: str | None
    method: MatchMethod
    #: Closest entries when nothing matched; other equally good entries otherwise.
    candidates: tuple[str, ...] = ()

    @property
    def matched(self) -> bool:
        return self.catalog_id is not None

    @property
    def description(self) -> str:
        """ "rtx-4090 (by PCI device id)" or "not in catalog (closest: ...)"."""
        if self.catalog_id is None:
            if self.candidates:
                return f"not in catalog (closest: {', '.join(self.candidates)})"
            return "not in catalog"
        return f"{self.catalog_id} ({_METHOD_TEXT[self.method]})"


def name_tokens(name: str) -> frozenset[str]:
    """The words of a GPU name that identify the product (memory sizes removed).

    "NVIDIA A100-SXM4-40GB" and "A100 SXM4 40GB" both give {"a100", "sxm4"}.
    """
    words = re.findall(r"[a-z0-9.]+", name.lower().replace("-", " "))
    return frozenset(
        word.strip(".")
        for word in words
        if word.strip(".") and word not in _NOISE_WORDS and not _MEMORY_TOKEN.match(word)
    )


def _memory_fits(gpu: GpuSnapshot, entry: CatalogEntry) -> bool:
    """Whether the reported memory is the entry's size, allowing for reserved memory."""
    reported, stated = gpu.memory_total_gib, entry.memory_gb
    if reported is None or stated is None:  # an announced part may state no size
        return False
    return abs(reported - stated) <= max(1.0, 0.1 * stated)


def _closest_by_memory(gpu: GpuSnapshot, entries: Sequence[CatalogEntry]) -> list[CatalogEntry]:
    """Entries whose memory fits the device, closest first."""
    reported = gpu.memory_total_gib
    fitting = [entry for entry in entries if _memory_fits(gpu, entry)]
    if reported is not None:
        fitting.sort(key=lambda entry: abs(reported - (entry.memory_gb or 0.0)))
    return fitting


def _ids(entries: Sequence[CatalogEntry], exclude: str | None = None) -> tuple[str, ...]:
    return tuple(entry.id for entry in entries if entry.id != exclude)


def _pick(gpu: GpuSnapshot, found: list[CatalogEntry], method: MatchMethod) -> CatalogMatch | None:
    """One entry out of several found the same way; memory size decides between them."""
    if len(found) == 1:
        return CatalogMatch(catalog_id=found[0].id, method=method)
    fitting = _closest_by_memory(gpu, found)
    if fitting:
        chosen = fitting[0]
        return CatalogMatch(
            catalog_id=chosen.id,
            method=MatchMethod.NAME_AND_MEMORY if method is MatchMethod.NVML_NAME else method,
            candidates=_ids(found, exclude=chosen.id),
        )
    return None


def closest_entries(
    name: str, entries: Sequence[CatalogEntry], limit: int = _MAX_CANDIDATES
) -> tuple[str, ...]:
    """Ids of the entries whose names look most like ``name``, best first."""
    wanted_tokens = name_tokens(name)
    wanted = " ".join(sorted(wanted_tokens))
    scored: list[tuple[float, str]] = []
    for entry in entries:
        score = 0.0
        for other in (entry.name, *entry.nvml_names):
            tokens = name_tokens(other)
            # Shared words count as much as spelling: "3070" is close to "3080"
            # only because both are "rtx" cards.
            overlap = len(wanted_tokens & tokens) / max(len(wanted_tokens | tokens), 1)
            spelling = difflib.SequenceMatcher(None, wanted, " ".join(sorted(tokens))).ratio()
            score = max(score, (overlap + spelling) / 2)
        if score >= 0.45:
            scored.append((score, entry.id))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return tuple(entry_id for _, entry_id in scored[:limit])


def _pci_found(gpu: GpuSnapshot, entries: Sequence[CatalogEntry]) -> list[CatalogEntry]:
    """Entries with the device's vendor:device id (device id alone when no vendor is known)."""
    device = (gpu.pci_device_id or "").lower()
    if gpu.pci_vendor_id:
        wanted = f"{gpu.pci_vendor_id.lower()}:{device}"
        return [entry for entry in entries if wanted in entry.pci_ids]
    return [entry for entry in entries if device in entry.pci_device_ids]


def _nvml_named(gpu: GpuSnapshot, entries: Sequence[CatalogEntry]) -> list[CatalogEntry]:
    """Entries one of whose NVML names is the device's name (case aside)."""
    if not gpu.name:
        return []
    exact = gpu.name.strip().casefold()
    return [
        entry
        for entry in entries
        if any(exact == nvml_name.strip().casefold() for nvml_name in entry.nvml_names)
    ]


def match_device(gpu: GpuSnapshot, entries: Sequence[CatalogEntry]) -> CatalogMatch:
    """Match one physical GPU (a MIG instance is matched as its own name here).

    Use :func:`match_devices` to give MIG instances their parent's entry.
    """
    if gpu.pci_device_id:
        found = _pci_found(gpu, entries)
        if found:
            picked = _pick(gpu, found, MatchMethod.PCI_DEVICE_ID)
            if picked is not None:
                return picked
            # Variants sharing a PCI id and no memory size to tell them apart: the name
            # NVML gives may ("NVIDIA RTX PRO 5000 72GB Blackwell").
            named = _nvml_named(gpu, found)
            if len(named) == 1:
                return CatalogMatch(
                    catalog_id=named[0].id,
                    method=MatchMethod.NVML_NAME,
                    candidates=_ids(found, exclude=named[0].id),
                )
            return CatalogMatch(
                catalog_id=found[0].id,
                method=MatchMethod.PCI_DEVICE_ID,
                candidates=_ids(found, exclude=found[0].id),
            )
    if not gpu.name:
        return CatalogMatch(catalog_id=None, method=MatchMethod.NONE)
    if gpu.vendor == "Apple":
        return _match_apple(gpu, entries)
    found = _nvml_named(gpu, entries)
    if found:
        picked = _pick(gpu, found, MatchMethod.NVML_NAME)
        if picked is not None:
            return picked
    tokens = name_tokens(gpu.name)
    same_name = [
        entry
        for entry in entries
        if tokens and any(name_tokens(other) == tokens for other in (entry.name, *entry.nvml_names))
    ]
    if same_name:
        fitting = _closest_by_memory(gpu, same_name)
        if fitting:
            return CatalogMatch(
                catalog_id=fitting[0].id,
                method=MatchMethod.NAME_AND_MEMORY,
                candidates=_ids(fitting, exclude=fitting[0].id),
            )
        if gpu.memory_total_mib is None and len(same_name) == 1:
            return CatalogMatch(catalog_id=same_name[0].id, method=MatchMethod.NAME_ONLY)
    # Not in the catalog: same-name entries of another memory size first, then look-alikes.
    candidates = list(_ids(same_name))
    for entry_id in closest_entries(gpu.name, entries):
        if entry_id not in candidates:
            candidates.append(entry_id)
    return CatalogMatch(
        catalog_id=None, method=MatchMethod.NONE, candidates=tuple(candidates[:_MAX_CANDIDATES])
    )


def _match_apple(gpu: GpuSnapshot, entries: Sequence[CatalogEntry]) -> CatalogMatch:
    """An Apple chip is one entry per GPU core count: "Apple M3 Max (40-core GPU)"."""
    chip = (gpu.name or "").strip().casefold()
    same_chip = [
        entry
        for entry in entries
        if entry.vendor.casefold() == "apple"
        and entry.name.casefold().partition(" (")[0].strip() == chip
    ]
    wanted = f"{chip} ({gpu.gpu_core_count}-core gpu)"
    exact = [entry for entry in same_chip if entry.name.casefold() == wanted]
    if gpu.gpu_core_count is not None and exact:
        return CatalogMatch(
            catalog_id=exact[0].id,
            method=MatchMethod.CHIP_AND_GPU_CORES,
            candidates=_ids(exact[1:]),
        )
    if len(same_chip) == 1 and gpu.gpu_core_count is None:
        return CatalogMatch(catalog_id=same_chip[0].id, method=MatchMethod.NAME_ONLY)
    return CatalogMatch(
        catalog_id=None,
        method=MatchMethod.NONE,
        candidates=_ids(same_chip[:_MAX_CANDIDATES]) or closest_entries(gpu.name or "", entries),
    )


def with_catalog_names(
    gpus: Sequence[GpuSnapshot], matches: Sequence[CatalogMatch], entries: Sequence[CatalogEntry]
) -> tuple[GpuSnapshot, ...]:
    """Devices that reported no name (sysfs knows only ids) named after their catalog entry."""
    names = {entry.id: entry.name for entry in entries}
    named: list[GpuSnapshot] = []
    for gpu, match in zip(gpus, matches, strict=True):
        if gpu.name is None and match.catalog_id in names:
            gpu = gpu.model_copy(update={"name": names[str(match.catalog_id)]})
        elif gpu.name is None and gpu.pci_device_id:
            vendor = (gpu.pci_vendor_id or "").removeprefix("0x")
            gpu = gpu.model_copy(
                update={
                    "name": f"{gpu.vendor or 'PCI'} device {vendor}:"
                    f"{gpu.pci_device_id.removeprefix('0x')}"
                }
            )
        named.append(gpu)
    return tuple(named)


def match_devices(
    gpus: Sequence[GpuSnapshot], entries: Sequence[CatalogEntry]
) -> list[CatalogMatch]:
    """Match every device, in order; a MIG instance gets its parent GPU's entry."""
    by_uuid: dict[str, CatalogMatch] = {}
    results: list[CatalogMatch] = []
    for gpu in gpus:
        if gpu.kind is DeviceKind.MIG:
            parent = by_uuid.get(gpu.parent_uuid or "")
            if parent is not None and parent.catalog_id is not None:
                results.append(
                    CatalogMatch(catalog_id=parent.catalog_id, method=MatchMethod.PARENT_GPU)
                )
            else:
                results.append(match_device(gpu, entries))
            continue
        result = match_device(gpu, entries)
        if gpu.uuid:
            by_uuid[gpu.uuid] = result
        results.append(result)
    return results


def matched_catalog_ids(gpus: Sequence[GpuSnapshot], matches: Sequence[CatalogMatch]) -> list[str]:
    """Catalog ids of the physical GPUs that matched an entry, in device order, once each.

    ``matches`` is :func:`match_devices` of ``gpus``. MIG instances and lost
    GPUs add nothing: "this machine has an A100" counts the card, not its slices.
    """
    ids: list[str] = []
    for gpu, match in zip(gpus, matches, strict=True):
        if gpu.kind is DeviceKind.GPU and not gpu.lost and match.catalog_id not in (None, *ids):
            ids.append(str(match.catalog_id))
    return ids
