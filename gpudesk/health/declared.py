"""Declared versus detected: what Slurm says a node has against what GPUDesk found on it.

One rule set, like :mod:`gpudesk.health.rules`: it reads protocols (what Slurm
declares, what a node detected), so the fleet survey, ``fleet show``, the
Fleet tab and the PDF all judge a node the same way. Rules, each a health
:class:`~gpudesk.health.rules.Finding` whose ``rule`` is named here (in the
fleet, an outlier of the node with no GPU index):

- ``slurm_gres`` — the node declares a different number of GPUs (``Gres=gpu:…``)
  than it has working ones (error when it declares more: jobs given the
  missing GPUs fail; warning when fewer). GPUs on the PCI bus that the driver lost or does
  not drive are named ("PCI 0000:8a:00.0 missing"). A node with GPUs and no
  GPU GRES is flagged too: jobs cannot ask for its GPUs.
- ``slurm_gres_type`` — a typed GRES (``gpu:h100:8``) counts more GPUs of that
  type than were detected, and GPUs of another type are there (a mixed node
  declared as one model).
- ``slurm_feature`` — features name GPU models (``h100``), but not every
  model the node has (a mixed node labelled from its first GPU).
- ``slurm_memory`` — ``RealMemory`` above the memory the node reports (Slurm
  itself sets such a node invalid).

A type or feature names a GPU when its letters and digits, lower-cased, occur
in the GPU's name or catalog id ("h100" in "NVIDIA H100 80GB HBM3").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from gpudesk.health.rules import Finding, Severity, finding

#: Declared memory may exceed the detected total by this much (rounding of the report).
MEMORY_TOLERANCE = 0.02


class DeclaredGres(Protocol):
    """One generic resource as Slurm declares it: ``gpu:h100:8``."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str | None: ...
    @property
    def count(self) -> int: ...


class DeclaredNode(Protocol):
    """What the scheduler declares for a node (fleet.document.SlurmNodeView)."""

    @property
    def gpus(self) -> Sequence[DeclaredGres]: ...
    @property
    def features(self) -> Sequence[str]: ...
    @property
    def real_memory_mb(self) -> int | None: ...


class DetectedGpu(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def lost(self) -> bool: ...
    @property
    def driver_loaded(self) -> bool | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def catalog_id(self) -> str | None: ...
    @property
    def pci_bus_id(self) -> str | None: ...


class DetectedNode(Protocol):
    """What a node detected (fleet.document.DetectionView)."""

    @property
    def gpus(self) -> Sequence[DetectedGpu]: ...
    @property
    def ram_total_gib(self) -> float | None: ...


def gres_text(item: DeclaredGres) -> str:
    return ":".join(part for part in (item.name, item.type, str(item.count)) if part)


def _letters(text: str | None) -> str:
    return re.sub(r"[^a-z0-9]", "", (text or "").lower())


def names_gpu(token: str, gpu: DetectedGpu) -> bool:
    """True when a GRES type or feature names this GPU's model."""
    wanted = _letters(token)
    return bool(wanted) and (wanted in _letters(gpu.name) or wanted in _letters(gpu.catalog_id))


def pci_address(bus_id: str | None) -> str:
    """NVML's ``00000000:8A:00.0`` as lspci writes it: ``0000:8a:00.0``."""
    if not bus_id:
        return "unknown PCI address"
    domain, sep, rest = bus_id.partition(":")
    return (f"{domain[-4:]}:{rest}" if sep else bus_id).lower()


def _model(gpu: DetectedGpu) -> str:
    return gpu.catalog_id or gpu.name or "unknown GPU"


def _models(gpus: list[DetectedGpu]) -> str:
    counts = Counter(_model(gpu) for gpu in gpus)
    return ", ".join(f"{count} x {model}" for model, count in sorted(counts.items()))


def declared_findings(slurm: DeclaredNode, detection: DetectedNode) -> list[Finding]:
    """Every way the node's Slurm declaration differs from its detection."""
    physical = [gpu for gpu in detection.gpus if gpu.kind == "gpu"]
    working = [gpu for gpu in physical if not gpu.lost and gpu.driver_loaded is not False]
    missing = [gpu for gpu in physical if gpu.lost or gpu.driver_loaded is False]
    declared = slurm.gpus
    declared_count = sum(item.count for item in declared)
    declared_text = ",".join(gres_text(item) for item in declared)
    found: list[Finding] = []
    if declared_count != len(working):
        if declared_count == 0:
            message = (
                f"{len(working)} GPU{'s' if len(working) != 1 else ''} detected "
                f"({_models(working)}), Slurm declares no GPU GRES: jobs cannot request them"
            )
        else:
            message = f"Slurm declares {declared_text}, {len(working)} detected"
            if missing:
                message += (
                    f" (PCI {', '.join(pci_address(gpu.pci_bus_id) for gpu in missing)} missing)"
                )
        severity: Severity = "error" if declared_count > len(working) else "warning"
        found.append(finding("slurm_gres", severity, message, len(working)))
    for item in declared:
        if item.type is None:
            continue
        matching = [gpu for gpu in working if names_gpu(item.type, gpu)]
        others = [gpu for gpu in working if not names_gpu(item.type, gpu)]
        if len(matching) < item.count and others:
            message = f"Slurm declares {gres_text(item)}, {len(matching)} detected GPU"
            message += f"{'s are' if len(matching) != 1 else ' is'} {item.type}"
            message += f" (also detected: {_models(others)})"
            found.append(finding("slurm_gres_type", "warning", message, len(matching)))
    gpu_features = [
        feature for feature in slurm.features if any(names_gpu(feature, gpu) for gpu in working)
    ]
    if gpu_features:
        unnamed = [gpu for gpu in working if not any(names_gpu(item, gpu) for item in gpu_features)]
        if unnamed:
            found.append(
                finding(
                    "slurm_feature",
                    "warning",
                    f"features name {', '.join(gpu_features)} only, "
                    f"also detected: {_models(unnamed)}",
                    ",".join(gpu_features),
                )
            )
    if slurm.real_memory_mb is not None and detection.ram_total_gib is not None:
        detected_mb = detection.ram_total_gib * 1024
        if slurm.real_memory_mb > detected_mb * (1 + MEMORY_TOLERANCE):
            found.append(
                finding(
                    "slurm_memory",
                    "warning",
                    f"Slurm declares RealMemory={slurm.real_memory_mb} MB, "
                    f"{detected_mb:.0f} MB detected (Slurm sets such a node invalid)",
                    slurm.real_memory_mb,
                )
            )
    return found
