"""``gpudesk detect``: this machine's GPUs (NVML, amdsmi, sysfs, system_profiler), CPU and RAM.

Exit codes: 0 when at least one GPU was found (an NVIDIA card without a
working driver counts: it is on the bus, reported with a hint), 3 when none
was (the status and its hint are still printed), 2 for a ``--sysfs`` that is
not a folder, 1 on an unexpected failure.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudesk.cli.common import (
    EXIT_NOTHING_DETECTED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    load_catalog_for,
    path_argument,
    print_json,
)
from gpudesk.hardware.models import DeviceSource

if TYPE_CHECKING:
    from gpudesk.hardware.match import CatalogMatch
    from gpudesk.hardware.models import DetectionResult, GpuSnapshot


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``detect`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "detect",
        help="show this machine's GPUs, CPU and RAM",
        description=(
            "Detect GPUs: NVIDIA through NVML (MIG instances listed under their GPU), every "
            "GPU on the PCI bus through sysfs (AMD through amdsmi first when installed; "
            "NVIDIA cards whose driver is missing, with a hint), Apple Silicon through "
            "system_profiler. Match each to the catalog, and show the CPU and RAM. Exit 0 "
            "when a GPU was found, 3 when none was (the reason and a hint are printed), "
            "2 for a bad --sysfs, 1 on failure."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--sysfs",
        metavar="DIR",
        type=path_argument,
        default=None,
        help="read the PCI bus from this sysfs folder instead of /sys (a host's /sys "
        "mounted in a container, or a captured tree)",
    )
    parser.set_defaults(handler=run_detect)


def run_detect(args: argparse.Namespace) -> int:
    from gpudesk.hardware.detect import detect_and_match

    sysfs: Path | None = args.sysfs
    if sysfs is not None and not sysfs.is_dir():
        raise CliError(f"--sysfs {sysfs}: not a folder", EXIT_USAGE)
    catalog = load_catalog_for(args)
    try:
        result, matches = detect_and_match(catalog.entries, sysfs_root=sysfs)
    except Exception as exc:  # the contract: 1 on an unexpected failure, never a traceback
        raise CliError(f"detection failed unexpectedly: {type(exc).__name__}: {exc}") from exc
    if args.json:
        print_json(detection_json(result, matches))
    else:
        print(detection_text(result, matches))
    return EXIT_OK if result.usable_gpus else EXIT_NOTHING_DETECTED


def detection_json(result: DetectionResult, matches: list[CatalogMatch]) -> dict[str, Any]:
    """The ``--json`` document (see :func:`gpudesk.hardware.detect.detection_document`)."""
    from gpudesk.hardware.detect import detection_document

    return detection_document(result, matches)


def _gpu_lines(gpu: GpuSnapshot, match: CatalogMatch) -> list[str]:
    from gpudesk.hardware import text

    if gpu.lost:
        return [f"GPU {gpu.index}  {gpu.name or 'unknown'}  LOST (stopped answering)"]
    if gpu.source is not DeviceSource.NVML:
        return _other_gpu_lines(gpu, match)
    lines = [
        f"GPU {gpu.index}  {gpu.name or 'unknown'}",
        f"  catalog   {match.description}",
        f"  ids       uuid {gpu.uuid or text.NA}, bus {gpu.pci_bus_id or text.NA}, "
        f"PCI device {gpu.pci_device_id or text.NA}",
        f"  memory    {text.memory_text(gpu)}, {text.bus_width_text(gpu)}",
        f"  compute   CC {gpu.compute_capability or text.NA}, "
        f"{text.count_text(gpu.cuda_cores)} CUDA cores",
        f"  clocks    SM {text.clock_text(gpu.sm_clock_mhz, gpu.sm_clock_max_mhz)}, "
        f"memory {text.clock_text(gpu.memory_clock_mhz, gpu.memory_clock_max_mhz)}",
        f"  power     {text.power_text(gpu)}",
        f"  thermal   {text.temperature_text(gpu)}, fan {text.fan_text(gpu)}",
        f"  load      {text.utilization_text(gpu)}, "
        f"{text.plural_text(gpu.running_process_count, 'process')}",
        f"  PCIe      {text.pcie_text(gpu)}",
        f"  features  ECC {text.on_off(gpu.ecc_enabled)}, MIG {text.mig_text(gpu)}, "
        f"clock events: {text.clock_events_text(gpu)}",
    ]
    return lines


def _other_gpu_lines(gpu: GpuSnapshot, match: CatalogMatch) -> list[str]:
    """A GPU found by sysfs, amdsmi or system_profiler: what that source knows."""
    from gpudesk.hardware import text

    where = f" on {gpu.pci_bus_id}" if gpu.pci_bus_id else ""
    state = ", driver not loaded" if gpu.driver_loaded is False else ""
    lines = [
        f"GPU {gpu.index}  {gpu.name or 'unknown'}{where}{state}  "
        f"[{gpu.vendor or 'unknown vendor'}, via {gpu.source.value}]",
        f"  catalog   {match.description}",
    ]
    if gpu.hint:
        lines.append(f"  hint      {gpu.hint}")
    if gpu.pci_device_id:
        lines.append(f"  ids       {text.pci_ids_text(gpu)}, driver {gpu.kernel_driver or 'none'}")
    if gpu.driver_loaded is False:  # without a driver the bus tells only its link
        lines.append(f"  PCIe      {text.pcie_text(gpu)}")
        return lines
    lines.append(f"  memory    {text.memory_text(gpu)}")
    if gpu.memory_for_models_mib is not None:
        lines.append(
            f"  for models {gpu.memory_for_models_mib:,} MiB (unified memory less macOS's)"
        )
    if gpu.gpu_core_count is not None:
        lines.append(f"  GPU cores {gpu.gpu_core_count}")
    if gpu.source is not DeviceSource.SYSTEM_PROFILER:
        lines.extend(
            [
                f"  clocks    core {text.clock_text(gpu.sm_clock_mhz, gpu.sm_clock_max_mhz)}, "
                f"memory {text.clock_text(gpu.memory_clock_mhz, gpu.memory_clock_max_mhz)}",
                f"  power     {text.power_text(gpu)}",
                f"  thermal   {text.temperature_text(gpu)}, fan {text.fan_text(gpu)}",
                f"  load      {text.utilization_text(gpu)}",
                f"  PCIe      {text.pcie_text(gpu)}",
            ]
        )
    return lines


def _mig_line(gpu: GpuSnapshot, match: CatalogMatch) -> str:
    from gpudesk.hardware import text

    state = "  LOST" if gpu.lost else ""
    instance = text.count_text(gpu.mig_gpu_instance_id)
    return (
        f"  MIG {gpu.index}  {gpu.name or 'unknown'}  (GI {instance}"
        f", CI {text.count_text(gpu.mig_compute_instance_id)}, "
        f"{text.count_text(gpu.sm_count)} SMs, {text.memory_text(gpu)}){state}\n"
        f"           uuid {gpu.uuid or text.NA}; catalog {match.description}"
    )


def detection_text(result: DetectionResult, matches: list[CatalogMatch]) -> str:
    """The readable summary: a compact nvidia-smi, then CPU and RAM."""
    from gpudesk.hardware import text
    from gpudesk.hardware.models import DeviceKind, NvmlStatus, title_for

    lines: list[str] = []
    physical = [gpu for gpu in result.gpus if gpu.kind is DeviceKind.GPU]
    nvml_count = sum(1 for gpu in physical if gpu.source is DeviceSource.NVML)
    if nvml_count:
        lines.append(
            f"NVIDIA driver {result.driver_version or text.NA}, "
            f"CUDA {result.cuda_driver_version or text.NA}, "
            f"{nvml_count} GPU{'s' if nvml_count != 1 else ''}"
        )
    if not result.usable_gpus:
        lines.append(f"No GPU detected: {title_for(result.status)} [{result.status.value}]")
    elif not nvml_count or len(physical) > nvml_count:
        lines.append(f"Found: {result.status_text}")
    if result.status is not NvmlStatus.OK and result.nvml_problem_matters:
        if result.usable_gpus:
            lines.append(f"warning: {title_for(result.status)} [{result.status.value}]")
        lines.append(f"hint: {result.hint}")
        if result.detail:
            lines.append(f"detail: {result.detail}")
    elif result.status is NvmlStatus.OK and result.detail:
        # e.g. one GPU could not be opened while the others were
        lines.append(f"note: {result.detail}")
    lines.extend(f"note: {note}" for note in result.notes)
    for gpu, match in zip(result.gpus, matches, strict=True):
        if gpu.kind is DeviceKind.MIG:
            lines.append(_mig_line(gpu, match))
        else:
            lines.append("")
            lines.extend(_gpu_lines(gpu, match))
    lines.append("")
    lines.append(f"CPU  {text.cpu_text(result.cpu)}")
    lines.append(f"RAM  {text.ram_text(result.ram_total_gib)}")
    if result.os_version:
        lines.append(f"OS   {result.os_version}")
    from gpudesk.cli.textwidth import wrap_long_lines

    return wrap_long_lines("\n".join(lines))
