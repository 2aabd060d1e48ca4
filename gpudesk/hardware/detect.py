"""Detect this machine: GPUs through NVML, plus the CPU and RAM.

:func:`detect` is the pure function the CLI calls directly and the GUI runs
on a worker thread.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from gpudesk.hardware.cpu import read_cpu, read_ram_gib
from gpudesk.hardware.models import DetectionResult, hint_for
from gpudesk.hardware.nvml import Nvml, default_nvml
from gpudesk.progress import NullProgress, Progress

if TYPE_CHECKING:
    from gpudesk.hardware.match import CatalogMatch


def detect(nvml: Nvml | None = None, progress: Progress | None = None) -> DetectionResult:
    """Everything about this machine's GPUs, CPU and RAM, at this moment.

    Args:
        nvml: the NVML access to use; the process-wide one when None.
        progress: reports per-GPU progress; cancelling raises ``Cancelled``.
    """
    progress = progress or NullProgress()
    nvml = nvml or default_nvml()
    progress.report(0.0, "reading the CPU")
    cpu = read_cpu()
    ram = read_ram_gib()
    progress.check()
    reading = nvml.read_all(progress)
    return DetectionResult(
        timestamp=dt.datetime.now(dt.UTC),
        status=reading.status,
        hint=hint_for(reading.status),
        detail=reading.detail,
        driver_version=reading.driver_version,
        cuda_driver_version=reading.cuda_driver_version,
        nvml_version=reading.nvml_version,
        gpus=reading.gpus,
        cpu=cpu,
        ram_total_gib=ram,
    )


def detection_document(result: DetectionResult, matches: list[CatalogMatch]) -> dict[str, Any]:
    """The ``gpudesk detect --json`` document: the result plus each GPU's catalog match.

    The fleet survey sends this same document back from every node.
    """
    data = result.model_dump(mode="json")
    for gpu, match in zip(data["gpus"], matches, strict=True):
        gpu["catalog_id"] = match.catalog_id
        gpu["catalog_match"] = match.method.value
        gpu["catalog_candidates"] = list(match.candidates)
    return data
