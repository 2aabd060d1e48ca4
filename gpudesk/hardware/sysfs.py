"""GPUs on the PCI bus, read from Linux sysfs, before (and without) any vendor library.

What is read, and from where (``ROOT`` is ``/sys`` or a host's ``/sys`` mounted elsewhere):

- ``ROOT/bus/pci/devices/*``: every device whose ``class`` is a display, 3D or
  processing-accelerator class (0x0300xx VGA, 0x0302xx 3D, 0x0380xx other
  display, 0x1200xx accelerator) and whose vendor is a GPU vendor we know
  (NVIDIA, AMD, Intel, Habana). Virtual and BMC display adapters (QEMU, ASPEED)
  are not GPUs and are left out. Per device: ``vendor``, ``device``,
  ``subsystem_vendor``, ``subsystem_device``, ``current_link_speed``,
  ``max_link_speed``, ``current_link_width``, ``max_link_width`` and the
  ``driver`` link.
- amdgpu, in the same directory (the DRM card's ``device``): ``mem_info_vram_total``
  and ``mem_info_vram_used`` (bytes), ``gpu_busy_percent``, ``mem_busy_percent``,
  ``pp_dpm_sclk`` / ``pp_dpm_mclk`` (the current level is marked ``*``),
  ``product_name``, and ``hwmon/hwmon*/``: ``temp*_input`` (millidegrees C, the
  ``edge`` sensor first), ``power1_average`` or ``power1_input`` (microwatts),
  ``power1_cap`` / ``power1_cap_default`` (microwatts), ``pwm1`` (0-255).
  Kernel documentation: Documentation/gpu/amdgpu/thermal.rst and
  driver-misc.rst (https://docs.kernel.org/gpu/amdgpu/).
- Intel xe: ``tile*/physical_vram_size_bytes``; i915:
  ``drm/card*/lmem_total_bytes`` / ``lmem_avail_bytes`` where the driver has them.

Every attribute is read the same guarded way: a regular file only, at most
:data:`MAX_ATTRIBUTE_BYTES`, decoded as text; anything missing, unreadable,
oversized or unparsable is ``None`` ("n/a") for that field, never an error.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from gpudesk.hardware.models import DeviceSample, DeviceSource, GpuSnapshot
from gpudesk.storage import read_regular_file

#: sysfs attributes are at most a page (4 KiB); anything longer is not an attribute.
MAX_ATTRIBUTE_BYTES = 4096
#: At most this many directory entries are looked at per listing (a real bus has < 300).
MAX_ENTRIES = 4096
#: The environment variable that points detection at another sysfs root (tests, containers).
SYSFS_ROOT_ENV = "GPUDESK_SYSFS_ROOT"

#: PCI class codes (upper 16 bits of ``class``) of GPUs and accelerators.
GPU_CLASSES = frozenset({0x0300, 0x0302, 0x0380, 0x1200})

#: PCI vendor ids of GPU makers (PCI ID Repository, https://pci-ids.ucw.cz/).
VENDOR_NAMES: dict[str, str] = {
    "0x10de": "NVIDIA",
    "0x1002": "AMD",
    "0x8086": "Intel",
    "0x1da3": "Intel",  # Habana Labs (Gaudi), an Intel company
    "0x1ae0": "Google",  # TPUs only (ACCELERATOR_DEVICE_IDS)
    "0x1d0f": "AWS",  # Amazon (Annapurna Labs): Trainium and Inferentia only
}

#: ML accelerators found by vendor and device id whatever their PCI class: these vendors'
#: other devices (Google's gVNIC and NVMe, Amazon's ENA and EBS) are no accelerators.
#: Google TPUs: JAX's list (jax/_src/hardware_utils.py, _TPU_PCI_DEVICE_IDS:
#: https://github.com/jax-ml/jax/blob/main/jax/_src/hardware_utils.py): 0x0027 v2/v3,
#: 0x005e v4, 0x0062 v5p, 0x0063 v5e, 0x006f v6e, 0x0076 TPU7x (Ironwood). AWS Neuron
#: devices: the Neuron driver's table (neuron_device.h, neuron_pci_dev_ids:
#: https://github.com/aws-neuron/aws-neuron-driver): 0x7164 Trainium1, 0x7264
#: Inferentia2, 0x7364 Trainium2, 0x7564 and 0x7565 Trainium3.
ACCELERATOR_DEVICE_IDS: dict[str, frozenset[str]] = {
    "0x1ae0": frozenset({"0x0027", "0x005e", "0x0062", "0x0063", "0x006f", "0x0076"}),
    "0x1d0f": frozenset({"0x7164", "0x7264", "0x7364", "0x7564", "0x7565"}),
}
#: Names of those devices (the same sources), for a chip the catalog does not hold.
ACCELERATOR_NAMES: dict[str, str] = {
    "0x1ae0:0x0027": "Google TPU v2/v3",
    "0x1ae0:0x005e": "Google TPU v4",
    "0x1ae0:0x0062": "Google TPU v5p",
    "0x1ae0:0x0063": "Google TPU v5e",
    "0x1ae0:0x006f": "Google TPU v6e",
    "0x1ae0:0x0076": "Google TPU7x (Ironwood)",
    "0x1d0f:0x7164": "AWS Trainium",
    "0x1d0f:0x7264": "AWS Inferentia2",
    "0x1d0f:0x7364": "AWS Trainium2",
    "0x1d0f:0x7564": "AWS Trainium3",
    "0x1d0f:0x7565": "AWS Trainium3",
}
#: The device nodes each accelerator vendor's driver creates, one per chip (``/dev``).
DEVICE_NODE_PREFIXES: dict[str, str] = {"Google": "accel", "AWS": "neuron"}

#: Kernel drivers that run compute work (as opposed to nouveau, radeon, vfio-pci...).
COMPUTE_DRIVERS = frozenset({"nvidia", "amdgpu", "xe", "i915", "habanalabs"})

#: amdgpu graphics IPs of APUs, whose GPU memory is system memory shared with the CPU
#: (the VRAM carve-out the firmware sets aside, plus the GTT the kernel lets it map):
#: gfx1151 is Strix Halo (Ryzen AI Max, Radeon 8050S/8060S), as ROCm's system
#: requirements list it (https://rocm.docs.amd.com/projects/install-on-linux/en/latest/
#: reference/system-requirements.html).
SHARED_MEMORY_GFX_TARGETS = frozenset({"gfx1151"})

_HEX_ID = re.compile(r"^0x[0-9a-fA-F]{4}$")
_CLASS = re.compile(r"^0x[0-9a-fA-F]{6}$")
_INT = re.compile(r"^[0-9]{1,19}$")
_LINK_SPEED = re.compile(r"^([0-9]{1,3}(?:\.[0-9]{1,3})?) ?GT/s")
_DPM_LEVEL = re.compile(r"^\s*[0-9]{1,3}:\s*([0-9]{1,6})\s*[Mm][Hh][Zz]\s*(\*)?\s*$")
_PCI_ADDRESS = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_DRIVER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")

#: PCIe generation by the per-lane rate its link trains at (GT/s).
_GEN_BY_SPEED: tuple[tuple[float, int], ...] = (
    (2.5, 1),
    (5.0, 2),
    (8.0, 3),
    (16.0, 4),
    (32.0, 5),
    (64.0, 6),
    (128.0, 7),
)


def default_sysfs_root() -> Path:
    """``/sys``, or the folder named by ``GPUDESK_SYSFS_ROOT``."""
    return Path(os.environ.get(SYSFS_ROOT_ENV) or "/sys")


def read_attribute(path: Path) -> str | None:
    """The stripped text of one sysfs attribute, or None when it cannot be trusted.

    Only a regular file is read (never a FIFO, a device or a directory), at most
    :data:`MAX_ATTRIBUTE_BYTES`; invalid UTF-8, NUL bytes and over-long files are None.
    """
    try:
        # sysfs gives every attribute a size of one page: the limit is that page.
        data = read_regular_file(path, MAX_ATTRIBUTE_BYTES)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None


def parse_int(text: str | None) -> int | None:
    """A non-negative decimal integer, or None."""
    if text is None or not _INT.match(text):
        return None
    return int(text)


def parse_hex_id(text: str | None) -> str | None:
    """A PCI id like "0x10de" (lower case), or None."""
    if text is None or not _HEX_ID.match(text):
        return None
    return text.lower()


def parse_link_speed(text: str | None) -> float | None:
    """GT/s per lane from "16.0 GT/s PCIe" (None for "Unknown" or garbage)."""
    if text is None:
        return None
    found = _LINK_SPEED.match(text)
    if found is None:
        return None
    speed = float(found.group(1))
    return speed if speed > 0 else None


def pcie_generation(speed_gts: float | None) -> int | None:
    """The PCIe generation whose rate this is (16.0 -> 4), None if it is no known rate."""
    if speed_gts is None:
        return None
    for rate, generation in _GEN_BY_SPEED:
        if abs(speed_gts - rate) < 0.01:
            return generation
    return None


def parse_dpm_levels(text: str | None) -> tuple[int | None, int | None]:
    """(current, highest) MHz from a ``pp_dpm_*`` table ("1: 1800Mhz *" lines)."""
    if text is None:
        return None, None
    levels: list[int] = []
    current: int | None = None
    for line in text.splitlines()[:64]:
        found = _DPM_LEVEL.match(line)
        if found is None:
            if line.strip():
                return None, None  # not a dpm table: trust none of it
            continue
        mhz = int(found.group(1))
        levels.append(mhz)
        if found.group(2):
            current = mhz
    return current, (max(levels) if levels else None)


def list_dir(path: Path) -> list[str]:
    """Names in a directory, sorted, at most :data:`MAX_ENTRIES`; [] when unreadable."""
    names: list[str] = []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                names.append(entry.name)
                if len(names) >= MAX_ENTRIES:
                    break
    except (OSError, ValueError):
        return []
    return sorted(names)


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _driver_name(device_dir: Path) -> str | None:
    """The bound driver's name: the ``driver`` link's last part, None when unbound."""
    link = device_dir / "driver"
    try:
        target = os.readlink(link)
    except (OSError, ValueError):
        return None
    name = os.path.basename(target.rstrip("/"))
    return name if _DRIVER_NAME.match(name) else None


def _mib(value_bytes: int | None) -> int | None:
    return None if value_bytes is None else value_bytes // (1024 * 1024)


@dataclass(frozen=True, slots=True)
class PciDevice:
    """One GPU-class device found on the bus."""

    address: str
    path: Path
    class_code: int
    vendor_id: str
    device_id: str
    driver: str | None

    @property
    def vendor(self) -> str:
        return VENDOR_NAMES[self.vendor_id]


def list_gpu_devices(root: Path) -> list[PciDevice]:
    """GPU-class devices of known GPU vendors on the bus under ``root``, in address order."""
    bus = root / "bus" / "pci" / "devices"
    found: list[PciDevice] = []
    for address in list_dir(bus):
        if not _PCI_ADDRESS.match(address):
            continue
        path = bus / address
        class_text = read_attribute(path / "class")
        if class_text is None or not _CLASS.match(class_text):
            continue
        class_code = int(class_text, 16)
        vendor_id = parse_hex_id(read_attribute(path / "vendor"))
        device_id = parse_hex_id(read_attribute(path / "device"))
        if vendor_id not in VENDOR_NAMES or device_id is None:
            continue
        accelerators = ACCELERATOR_DEVICE_IDS.get(vendor_id)
        if accelerators is not None:
            if device_id not in accelerators:
                continue  # a NIC or a disk of a cloud vendor
        elif class_code >> 8 not in GPU_CLASSES:
            continue
        found.append(
            PciDevice(
                address=address.lower(),
                path=path,
                class_code=class_code,
                vendor_id=vendor_id,
                device_id=device_id,
                driver=_driver_name(path),
            )
        )
    return found


def hwmon_dir(device_dir: Path) -> Path | None:
    """The device's first hwmon directory (``hwmon/hwmonN``), if any."""
    base = device_dir / "hwmon"
    for name in list_dir(base):
        if name.startswith("hwmon") and is_dir(base / name):
            return base / name
    return None


#: Which amdgpu temperature sensor stands for "the GPU": edge, else junction (hotspot).
_TEMPERATURE_LABELS = ("edge", "junction", "hotspot")


def _hwmon_temperature_c(hwmon: Path) -> int | None:
    """The GPU temperature in whole degrees C (sensors are in millidegrees)."""
    inputs: dict[str, int] = {}
    unlabelled: list[int] = []
    for index in range(1, 9):
        value = parse_int(read_attribute(hwmon / f"temp{index}_input"))
        if value is None or value > 200_000:
            continue
        label = read_attribute(hwmon / f"temp{index}_label")
        if label:
            inputs.setdefault(label.lower(), value)
        unlabelled.append(value)
    for label in _TEMPERATURE_LABELS:
        if label in inputs:
            return round(inputs[label] / 1000)
    return round(unlabelled[0] / 1000) if unlabelled else None


def _hwmon_watts(hwmon: Path, *names: str) -> float | None:
    """The first readable of these microwatt attributes, in watts (one decimal)."""
    for name in names:
        value = parse_int(read_attribute(hwmon / name))
        if value is not None and value < 100_000_000_000:
            return round(value / 1_000_000, 1)
    return None


def _fan_percent(hwmon: Path) -> int | None:
    pwm = parse_int(read_attribute(hwmon / "pwm1"))
    if pwm is None or pwm > 255:
        return None
    return round(pwm * 100 / 255)


def _percent(path: Path) -> int | None:
    value = parse_int(read_attribute(path))
    return value if value is not None and value <= 100 else None


def _intel_memory(device_dir: Path) -> tuple[int | None, int | None]:
    """(total, used) MiB of Intel local memory where xe or i915 publish it."""
    total = 0
    seen = False
    for name in list_dir(device_dir):
        if name.startswith("tile") and name[4:].isdigit():
            size = parse_int(read_attribute(device_dir / name / "physical_vram_size_bytes"))
            if size is not None:
                total += size
                seen = True
    if seen:
        return _mib(total), None
    for name in list_dir(device_dir / "drm"):
        if not name.startswith("card"):
            continue
        card = device_dir / "drm" / name
        lmem_total = parse_int(read_attribute(card / "lmem_total_bytes"))
        if lmem_total is None:
            continue
        available = parse_int(read_attribute(card / "lmem_avail_bytes"))
        used = None if available is None or available > lmem_total else lmem_total - available
        return _mib(lmem_total), _mib(used)
    return None, None


def _printable(text: str | None, limit: int = 120) -> str | None:
    if not text or len(text) > limit or not text.isprintable():
        return None
    return text


class SysfsReader:
    """Reads GPUs from one sysfs tree.

    Args:
        root: the sysfs mount (``/sys``, or a host's ``/sys`` mounted elsewhere).
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else default_sysfs_root()

    def devices(self) -> list[PciDevice]:
        return list_gpu_devices(self.root)

    def read_all(self) -> list[GpuSnapshot]:
        """A snapshot of every GPU on the bus (indices are left for the caller)."""
        return [self.read_device(device) for device in self.devices()]

    def read_device(self, device: PciDevice) -> GpuSnapshot:
        """Identity, link and driver of any GPU; amdgpu and Intel figures where published."""
        path = device.path
        speed_current = parse_link_speed(read_attribute(path / "current_link_speed"))
        speed_max = parse_link_speed(read_attribute(path / "max_link_speed"))
        fields: dict[str, object] = {
            "source": DeviceSource.SYSFS,
            "vendor": device.vendor,
            "pci_bus_id": device.address,
            "pci_vendor_id": device.vendor_id,
            "pci_device_id": device.device_id,
            "pci_subsystem_vendor_id": parse_hex_id(read_attribute(path / "subsystem_vendor")),
            "pci_subsystem_device_id": parse_hex_id(read_attribute(path / "subsystem_device")),
            "pcie_speed_current_gts": speed_current,
            "pcie_speed_max_gts": speed_max,
            "pcie_gen_current": pcie_generation(speed_current),
            "pcie_gen_max": pcie_generation(speed_max),
            "pcie_width_current": _link_width(read_attribute(path / "current_link_width")),
            "pcie_width_max": _link_width(read_attribute(path / "max_link_width")),
            "kernel_driver": device.driver,
            "driver_loaded": device.driver in COMPUTE_DRIVERS,
        }
        accelerator = ACCELERATOR_NAMES.get(f"{device.vendor_id}:{device.device_id}")
        if accelerator is not None:
            fields["name"] = accelerator
        if device.driver == "amdgpu":
            fields.update(self._amdgpu_fields(path))
        elif device.vendor == "Intel" and device.driver in {"xe", "i915"}:
            total, used = _intel_memory(path)
            fields["memory_total_mib"] = total
            fields["memory_used_mib"] = used
            if total is not None and used is not None:
                fields["memory_free_mib"] = total - used
        return GpuSnapshot.model_validate(fields)

    def _amdgpu_fields(self, path: Path) -> dict[str, object]:
        fields = self._amdgpu_live_fields(path)
        gfx = gfx_target(path)
        fields["gfx_target"] = gfx
        if gfx in SHARED_MEMORY_GFX_TARGETS:
            fields.update(_shared_memory(path, fields.get("memory_total_mib")))
        return fields

    def _amdgpu_live_fields(self, path: Path) -> dict[str, object]:
        total = _mib(parse_int(read_attribute(path / "mem_info_vram_total")))
        used = _mib(parse_int(read_attribute(path / "mem_info_vram_used")))
        if total is not None and used is not None and used > total:
            used = None
        sclk, sclk_max = parse_dpm_levels(read_attribute(path / "pp_dpm_sclk"))
        mclk, mclk_max = parse_dpm_levels(read_attribute(path / "pp_dpm_mclk"))
        fields: dict[str, object] = {
            "name": _printable(read_attribute(path / "product_name")),
            "memory_total_mib": total,
            "memory_used_mib": used,
            "memory_free_mib": None if total is None or used is None else total - used,
            "utilization_gpu_percent": _percent(path / "gpu_busy_percent"),
            "utilization_memory_percent": _percent(path / "mem_busy_percent"),
            "sm_clock_mhz": sclk,
            "sm_clock_max_mhz": sclk_max,
            "memory_clock_mhz": mclk,
            "memory_clock_max_mhz": mclk_max,
        }
        hwmon = hwmon_dir(path)
        if hwmon is not None:
            fields["temperature_c"] = _hwmon_temperature_c(hwmon)
            fields["power_draw_w"] = _hwmon_watts(hwmon, "power1_average", "power1_input")
            fields["power_limit_w"] = _hwmon_watts(hwmon, "power1_cap")
            fields["power_default_limit_w"] = _hwmon_watts(hwmon, "power1_cap_default")
            fields["fan_percent"] = _fan_percent(hwmon)
        return fields

    def sample(self, gpu: GpuSnapshot) -> DeviceSample:
        """One live reading of a device found by :meth:`read_all` (matched by PCI address).

        A device no longer on the bus is ``lost``.
        """
        path = self.root / "bus" / "pci" / "devices" / (gpu.pci_bus_id or "")
        if not gpu.pci_bus_id or not is_dir(path):
            return DeviceSample(uuid=gpu.key, index=gpu.index, lost=True)
        fields: dict[str, object] = {"uuid": gpu.key, "index": gpu.index}
        if gpu.kernel_driver == "amdgpu":
            live = self._amdgpu_live_fields(path)
            if gpu.memory_shared_with_cpu:
                live["memory_used_mib"] = None  # VRAM use alone: not the shared total's
            for key in (
                "utilization_gpu_percent",
                "utilization_memory_percent",
                "memory_used_mib",
                "temperature_c",
                "fan_percent",
                "power_draw_w",
                "sm_clock_mhz",
            ):
                fields[key] = live.get(key)
        elif gpu.vendor == "Intel":
            fields["memory_used_mib"] = _intel_memory(path)[1]
        return DeviceSample.model_validate(fields)


def _link_width(text: str | None) -> int | None:
    width = parse_int(text)
    # sysfs says 255 (or 0) when the width is unknown.
    return width if width is not None and 0 < width <= 32 else None


def gfx_target(device_dir: Path) -> str | None:
    """ "gfx1151" from amdgpu's IP discovery (``ip_discovery/die/0/GC/0``: major, minor
    and revision of the graphics IP, as LLVM names the target: minor and revision in
    hex, gfx90a is 9.0.10); None where the kernel does not publish it."""
    block = device_dir / "ip_discovery" / "die" / "0" / "GC" / "0"
    parts = [parse_int(read_attribute(block / name)) for name in ("major", "minor", "revision")]
    if any(part is None for part in parts):
        return None
    major, minor, revision = (int(part or 0) for part in parts)
    if not (0 < major < 100 and minor < 16 and revision < 16):
        return None
    return f"gfx{major}{minor:x}{revision:x}"


def _shared_memory(device_dir: Path, vram_mib: object) -> dict[str, object]:
    """An APU's memory: its VRAM carve-out plus the GTT it may map, shared with the CPU.

    Both depend on the machine: the carve-out on the firmware's setting, the GTT on
    the kernel's limit (``amdgpu.gttsize``, ``ttm.pages_limit``); their sum is what
    the GPU can allocate.
    """
    gtt = _mib(parse_int(read_attribute(device_dir / "mem_info_gtt_total")))
    fields: dict[str, object] = {"memory_shared_with_cpu": True}
    if not isinstance(vram_mib, int) or gtt is None:
        return fields
    fields["memory_total_mib"] = vram_mib + gtt
    fields["memory_used_mib"] = None  # VRAM use alone would understate it
    fields["memory_free_mib"] = None
    fields["memory_basis"] = (
        f"VRAM carve-out {vram_mib:,} MiB + GTT {gtt:,} MiB, system memory shared with "
        "the CPU (the carve-out is the firmware's setting, the GTT the kernel's limit)"
    )
    return fields


def device_nodes(dev_root: Path, prefix: str) -> list[str]:
    """Names of the device nodes ``prefix`` + number under ``dev_root`` (and the kernel
    accel subsystem's ``accel/`` folder): ``["accel0", "accel1"]``. Names only: a node is
    never opened."""
    found = [
        name
        for folder in (dev_root, dev_root / prefix)
        for name in list_dir(folder)
        if name.startswith(prefix) and name[len(prefix) :].isdigit()
    ]
    return sorted(set(found), key=lambda name: int(name[len(prefix) :]))
