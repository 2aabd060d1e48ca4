"""Detect this machine: GPUs through NVML, amdsmi, sysfs and system_profiler, plus CPU and RAM.

:func:`detect` is the pure function the CLI calls directly and the GUI runs
on a worker thread. Sources, in order:

1. NVML: every NVIDIA GPU whose driver works (MIG instances under their GPU).
2. sysfs (Linux): every GPU on the PCI bus. An NVIDIA device NVML already
   listed only adds its PCI facts; one it did not list is reported with
   ``driver_loaded`` and a hint by cause (no driver bound, nouveau or
   vfio-pci bound, NVML library missing). AMD devices take amdsmi's figures
   first when the package works, sysfs's for the rest.
   Google TPUs and AWS Trainium chips are found there too, by vendor and device id;
   their device nodes (``/dev/accel*``, ``/dev/neuron*``) say whether the driver is up.
   An AMD APU (Strix Halo) reports its VRAM carve-out plus GTT, shared with the CPU.
3. system_profiler (macOS): the Apple Silicon GPU.

Indices: NVML's own; devices from other sources are numbered after them, in
bus order (a display order, not a CUDA/HIP device index).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudesk.hardware import apple
from gpudesk.hardware.amd_smi import AmdSmi, default_amdsmi
from gpudesk.hardware.cpu import read_cpu, read_ram_gib
from gpudesk.hardware.models import (
    DetectionResult,
    DeviceKind,
    DeviceSource,
    GpuSnapshot,
    NvmlStatus,
    hint_for,
    pci_address_key,
)
from gpudesk.hardware.nvml import Nvml, default_nvml
from gpudesk.hardware.sysfs import DEVICE_NODE_PREFIXES, SysfsReader, device_nodes
from gpudesk.progress import NullProgress, Progress
from gpudesk.storage import read_refusal, read_regular_file

if TYPE_CHECKING:
    from gpudesk.catalog.schema import CatalogEntry
    from gpudesk.hardware.match import CatalogMatch

#: What to do about an NVIDIA GPU on the bus that NVML does not list, by what is bound to it.
NO_DRIVER_HINT = (
    "No kernel driver is bound to this NVIDIA GPU: install the NVIDIA driver; after a kernel "
    "update rebuild its module (`sudo dkms autoinstall`, or reinstall the driver package) and "
    "reboot. `lspci -k` shows the driver in use; Secure Boot can block an unsigned module."
)
NOUVEAU_HINT = (
    "The open-source nouveau driver is bound to this NVIDIA GPU: CUDA and NVML need NVIDIA's "
    "driver. Install it (it blacklists nouveau) and reboot."
)
VFIO_HINT = (
    "This NVIDIA GPU is bound to vfio-pci (passed through to a virtual machine): it can only "
    "be used inside that VM, or after rebinding it to the nvidia driver."
)
NVML_MISSING_HINT = (
    "The nvidia kernel driver is bound but libnvidia-ml.so.1 was not found: install the NVIDIA "
    "user-space libraries of the same version as the kernel module; in a container, run it "
    "with the NVIDIA container toolkit (`--gpus all`)."
)
NVML_SILENT_HINT = (
    "The nvidia driver is bound but NVML does not list this GPU: check `nvidia-smi` and "
    "`dmesg | grep -i -e nvrm -e xid`; a reboot usually brings a GPU that fell off back."
)

AppleReader = Callable[[], apple.AppleReading | None]

#: The environment variable that points detection at another ``/dev`` (tests, containers).
DEV_ROOT_ENV = "GPUDESK_DEV_ROOT"


def default_dev_root() -> Path:
    """``/dev``, or the folder named by ``GPUDESK_DEV_ROOT``."""
    return Path(os.environ.get(DEV_ROOT_ENV) or "/dev")


def _with_device_nodes(gpus: list[GpuSnapshot], dev_root: Path) -> list[GpuSnapshot]:
    """TPUs and Trainium chips: the driver is up when its device nodes are there
    (``/dev/accel*`` on a TPU VM, ``/dev/neuron*`` on a Trainium host, one per chip)."""
    out: list[GpuSnapshot] = []
    nodes: dict[str, list[str]] = {}
    for gpu in gpus:
        prefix = DEVICE_NODE_PREFIXES.get(gpu.vendor or "")
        if prefix is None:
            out.append(gpu)
            continue
        found = nodes.setdefault(prefix, device_nodes(dev_root, prefix))
        hint = (
            None
            if found
            else f"No /dev/{prefix}* device node: the {gpu.vendor} accelerator driver is not "
            "loaded (or the nodes are not passed into this container)."
        )
        out.append(gpu.model_copy(update={"driver_loaded": bool(found), "hint": hint}))
    return out


def default_apple_reading() -> apple.AppleReading | None:
    """The Mac's reading, or a captured output named by the environment; None elsewhere."""
    captured = os.environ.get(apple.PROFILER_JSON_ENV)
    if captured:
        try:
            data = read_regular_file(captured, apple.MAX_OUTPUT_BYTES)
        except OSError as exc:
            return apple.AppleReading(gpu=None, detail=f"{captured} {read_refusal(exc)}")
        return apple.read_apple(profiler_json=data.decode("utf-8", errors="replace"))
    if apple.is_macos():
        return apple.read_apple()
    return None


def _nvidia_off_nvml(gpu: GpuSnapshot, status: NvmlStatus) -> GpuSnapshot:
    """An NVIDIA GPU NVML did not list: whether its driver is loaded, and a hint by cause."""
    driver = gpu.kernel_driver
    if driver is None:
        loaded, hint = False, NO_DRIVER_HINT
    elif driver == "nouveau":
        loaded, hint = False, NOUVEAU_HINT
    elif driver == "vfio-pci":
        loaded, hint = False, VFIO_HINT
    elif driver != "nvidia":
        loaded, hint = False, f"This NVIDIA GPU is bound to the {driver} driver, not nvidia."
    elif status is NvmlStatus.LIBRARY_NOT_FOUND:
        loaded, hint = True, NVML_MISSING_HINT
    elif status is NvmlStatus.OK:
        loaded, hint = True, NVML_SILENT_HINT
    else:
        loaded, hint = True, hint_for(status)
    return gpu.model_copy(update={"driver_loaded": loaded, "hint": hint})


def _with_amdsmi(gpu: GpuSnapshot, fields: dict[str, object]) -> GpuSnapshot:
    update = {key: value for key, value in fields.items() if value is not None}
    update["source"] = DeviceSource.AMDSMI
    return gpu.model_copy(update=update)


def detect(
    nvml: Nvml | None = None,
    progress: Progress | None = None,
    *,
    sysfs_root: Path | None = None,
    amdsmi: AmdSmi | None = None,
    apple_reader: AppleReader | None = None,
    dev_root: Path | None = None,
) -> DetectionResult:
    """Everything about this machine's GPUs, CPU and RAM, at this moment.

    Args:
        nvml: the NVML access to use; the process-wide one when None.
        progress: reports per-GPU progress; cancelling raises ``Cancelled``.
        sysfs_root: the sysfs tree to read (``/sys`` or ``GPUDESK_SYSFS_ROOT`` when None).
        amdsmi: amdsmi access (the real package, imported only if an AMD GPU is found).
        apple_reader: reads the Mac's GPU; system_profiler on macOS when None.
        dev_root: where TPU and Trainium device nodes are looked for (``/dev`` or
            ``GPUDESK_DEV_ROOT`` when None).
    """
    progress = progress or NullProgress()
    nvml = nvml or default_nvml()
    progress.report(0.0, "reading the CPU")
    cpu = read_cpu()
    ram = read_ram_gib()
    progress.check()
    reading = nvml.read_all(progress)
    notes: list[str] = []

    progress.report(0.9, "reading the PCI bus")
    reader = SysfsReader(sysfs_root)
    on_bus = {
        key: gpu
        for gpu in reader.read_all()
        if (key := pci_address_key(gpu.pci_bus_id)) is not None
    }
    gpus: list[GpuSnapshot] = []
    for gpu in reading.gpus:
        update: dict[str, object] = {"vendor": "NVIDIA", "source": DeviceSource.NVML}
        if gpu.kind is DeviceKind.GPU and not gpu.lost:
            update["driver_loaded"] = True
        bus = on_bus.pop(pci_address_key(gpu.pci_bus_id) or "", None)
        if bus is not None:
            update.update(
                kernel_driver=bus.kernel_driver,
                pci_subsystem_vendor_id=bus.pci_subsystem_vendor_id,
                pci_subsystem_device_id=bus.pci_subsystem_device_id,
                pcie_speed_current_gts=bus.pcie_speed_current_gts,
                pcie_speed_max_gts=bus.pcie_speed_max_gts,
            )
        gpus.append(gpu.model_copy(update=update))

    others = list(on_bus.values())
    if any(gpu.vendor == "AMD" and gpu.kernel_driver == "amdgpu" for gpu in others):
        access = amdsmi if amdsmi is not None else default_amdsmi()
        amd = access.read_all()
        if not amd.available:
            notes.append(f"{amd.detail}: AMD figures read from sysfs")
        for position, gpu in enumerate(others):
            fields = amd.devices.get(pci_address_key(gpu.pci_bus_id) or "")
            if gpu.vendor == "AMD" and fields is not None:
                others[position] = _with_amdsmi(gpu, fields)
    others = [
        _nvidia_off_nvml(gpu, reading.status) if gpu.vendor == "NVIDIA" else gpu for gpu in others
    ]
    others = _with_device_nodes(others, dev_root or default_dev_root())

    os_version = None
    progress.check()
    mac = (apple_reader or default_apple_reading)()
    if mac is not None:
        os_version = mac.os_version
        if mac.gpu is not None:
            others.append(mac.gpu)
        elif mac.detail:
            notes.append(f"Apple GPU not read: {mac.detail}")

    taken = {gpu.index for gpu in gpus if gpu.kind is DeviceKind.GPU}
    next_index = max((index for index in taken if index is not None), default=-1) + 1
    for offset, gpu in enumerate(others):
        gpus.append(gpu.model_copy(update={"index": next_index + offset}))
    progress.report(1.0, "done")
    return DetectionResult(
        timestamp=dt.datetime.now(dt.UTC),
        status=reading.status,
        hint=hint_for(reading.status),
        detail=reading.detail,
        driver_version=reading.driver_version,
        cuda_driver_version=reading.cuda_driver_version,
        nvml_version=reading.nvml_version,
        gpus=tuple(gpus),
        cpu=cpu,
        ram_total_gib=ram,
        os_version=os_version,
        notes=tuple(notes),
    )


def detect_and_match(
    entries: Sequence[CatalogEntry], *, sysfs_root: Path | None = None
) -> tuple[DetectionResult, list[CatalogMatch]]:
    """Detect this machine, match each device to ``entries``, name unnamed ones after their entry.

    What ``gpudesk detect`` shows and what each node of a fleet survey sends.
    """
    from gpudesk.hardware.match import match_devices, with_catalog_names

    result = detect(sysfs_root=sysfs_root)
    matches = match_devices(result.gpus, entries)
    named = result.model_copy(update={"gpus": with_catalog_names(result.gpus, matches, entries)})
    return named, matches


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
