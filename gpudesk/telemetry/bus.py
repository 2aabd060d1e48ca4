"""AMD (amdgpu) and Intel (i915, xe) GPUs from sysfs and hwmon: the common field set.

Read with :mod:`gpudesk.hardware.sysfs`'s guarded attribute reader (a regular
file, one page at most; anything else is n/a). Devices are found once, on the
PCI bus (``ROOT/bus/pci/devices``) by their bound driver; a device whose
directory has gone is down. What each driver publishes (Linux kernel
documentation, https://docs.kernel.org/):

- amdgpu (gpu/amdgpu/driver-misc.rst, thermal.rst): ``gpu_busy_percent``,
  ``mem_busy_percent``, ``mem_info_vram_used``/``_total`` (bytes),
  ``pp_dpm_sclk``/``pp_dpm_mclk`` (the current level marked ``*``),
  ``pcie_replay_count``, ``unique_id``, ``product_name``; hwmon
  ``temp*_input`` labelled edge/junction/mem (millidegrees C),
  ``power1_average`` or ``power1_input`` and ``power1_cap`` (microwatts),
  ``pwm1`` (0-255), ``energy1_input`` where present (microjoules); RAS
  ``ras/umc_err_count`` ("ue: N" and "ce: N" lines: uncorrected and corrected
  memory errors).
- i915 (ABI sysfs-driver-intel-i915-hwmon): hwmon ``power1_max`` (the
  sustained limit, microwatts) and ``energy1_input`` (microjoules);
  ``drm/cardN/gt_act_freq_mhz`` and ``gt_RP0_freq_mhz`` (the hardware
  maximum); ``lmem_total_bytes``/``lmem_avail_bytes`` where present.
- xe (ABI sysfs-driver-intel-xe-hwmon, xe_gt_freq): hwmon ``power1_max``,
  ``energy1_input``, ``temp2_input`` (package) and ``temp3_input`` (VRAM);
  ``tile*/gt*/freq0/act_freq`` and ``rp0_freq`` (MHz);
  ``tile*/physical_vram_size_bytes``.

Where AMD's ``amdsmi`` package is installed and knows a device (by PCI
address), its utilisation, memory used, power, temperature and graphics clock
replace sysfs's (:class:`gpudesk.hardware.amd_smi.AmdSmi`, the same access
detection uses); sysfs gives the rest.

Intel publishes no utilisation in sysfs (it needs the perf PMU): that field
is absent. Intel power is derived from the energy counter over the
collection interval (``power = delta energy / delta time``), since hwmon
gives no instantaneous figure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudesk.hardware.amd_smi import AmdSmi
from gpudesk.hardware.models import DeviceSource, GpuSnapshot
from gpudesk.hardware.sysfs import (
    PciDevice,
    hwmon_dir,
    is_dir,
    list_dir,
    list_gpu_devices,
    parse_dpm_levels,
    parse_int,
    parse_link_speed,
    pcie_generation,
    read_attribute,
)
from gpudesk.telemetry.catalog_join import NO_FACTS, Identify
from gpudesk.telemetry.readings import (
    DeviceIdentity,
    DeviceReading,
    Source,
    Vendor,
    lost_reading,
)

#: Directory listings looked at, at most (a device has a few hundred entries).
#: hwmon temperature sensors by their kernel label, as the common sensor names.
_AMD_SENSORS = {"edge": "gpu", "junction": "hotspot", "mem": "memory"}
#: xe's hwmon temperature inputs (no labels): package and VRAM.
_XE_SENSORS = {"temp2_input": "gpu", "temp3_input": "memory"}
_MAX_MICRO = 10**15


def _number(path: Path, limit: int = _MAX_MICRO) -> int | None:
    value = parse_int(read_attribute(path))
    return value if value is not None and value <= limit else None


def _percent_ratio(path: Path) -> float | None:
    value = _number(path, 100)
    return None if value is None else value / 100.0


def parse_error_counts(text: str | None) -> dict[str, int]:
    """amdgpu's ``ras/*_err_count`` ("ue: 0" and "ce: 3" lines) as uncorrected/corrected."""
    counts: dict[str, int] = {}
    if text is None:
        return counts
    names = {"ue": "uncorrected", "ce": "corrected"}
    for line in text.splitlines()[:8]:
        key, _, value = line.partition(":")
        name = names.get(key.strip())
        number = parse_int(value.strip())
        if name is None or number is None:
            return {}  # not the format the kernel writes: trust none of it
        counts[name] = number
    return counts


def _pcie_fields(path: Path) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, name in (
        ("pcie_link_generation", "current_link_speed"),
        ("pcie_link_generation_max", "max_link_speed"),
    ):
        generation = pcie_generation(parse_link_speed(read_attribute(path / name)))
        if generation is not None:
            fields[key] = generation
    for key, name in (
        ("pcie_link_width", "current_link_width"),
        ("pcie_link_width_max", "max_link_width"),
    ):
        width = _number(path / name, 32)
        if width:  # 0 and 255 mean unknown
            fields[key] = width
    return fields


def _printable(text: str | None, limit: int = 120) -> str | None:
    if not text or len(text) > limit or not text.isprintable():
        return None
    return text


@dataclass
class _BusDevice:
    identity: DeviceIdentity
    path: Path
    driver: str
    lost: bool = False
    #: (energy J, monotonic s) of the previous read: Intel's power is derived from it.
    last_energy: tuple[float, float] | None = None


@dataclass
class BusSource:
    """amdgpu and Intel GPUs of one sysfs tree.

    Args:
        root: the sysfs mount (``/sys``, or ``GPUDESK_SYSFS_ROOT``).
        identify: the device's catalog facts (entry, name, peaks); none when None.
        skip_addresses: PCI addresses another source reads (NVML's GPUs).
        clock: monotonic seconds (tests pass their own).
        amdsmi: amdsmi access, asked first for AMD devices it knows (None: sysfs only).
    """

    root: Path
    identify: Identify | None = None
    skip_addresses: frozenset[str] = frozenset()
    clock: Callable[[], float] = time.monotonic
    amdsmi: AmdSmi | None = None
    detail: str | None = None
    _devices: list[_BusDevice] = field(default_factory=list)
    _amdsmi_addresses: frozenset[str] = frozenset()

    def discover(self, first_index: int = 0) -> bool:
        """Find amdgpu, i915 and xe devices; False when there is none."""
        index = first_index
        found = list_gpu_devices(self.root)
        if self.amdsmi is not None and any(device.driver == "amdgpu" for device in found):
            reading = self.amdsmi.read_all()
            if reading.available:
                self._amdsmi_addresses = frozenset(reading.devices)
        for device in found:
            if device.address in self.skip_addresses:
                continue
            if device.driver == "amdgpu":
                vendor = Vendor.AMD
                known = device.address in self._amdsmi_addresses
                source = Source.AMDSMI if known else Source.AMDGPU
            elif device.vendor == "Intel" and device.driver in {"i915", "xe"}:
                source, vendor = Source.INTEL, Vendor.INTEL
            else:
                continue
            identity = self._identity(device, source, vendor, index)
            self._devices.append(_BusDevice(identity, device.path, device.driver or ""))
            index += 1
        if not self._devices:
            self.detail = "no amdgpu, i915 or xe GPU on the PCI bus"
        return bool(self._devices)

    @property
    def devices(self) -> list[DeviceIdentity]:
        return [device.identity for device in self._devices]

    def _identity(
        self, device: PciDevice, source: Source, vendor: Vendor, index: int
    ) -> DeviceIdentity:
        path = device.path
        name = _printable(read_attribute(path / "product_name"))
        unique = read_attribute(path / "unique_id")
        uuid = unique if unique and unique.isalnum() and len(unique) <= 64 else None
        total = self._memory(path, device.driver or "")[1]
        snapshot = GpuSnapshot(
            index=index,
            name=name,
            vendor=vendor.value,
            source=DeviceSource.SYSFS,
            pci_bus_id=device.address,
            pci_device_id=device.device_id,
            pci_vendor_id=device.vendor_id,
            kernel_driver=device.driver,
            memory_total_mib=None if total is None else total // (1024 * 1024),
        )
        facts = NO_FACTS if self.identify is None else self.identify(snapshot)
        return DeviceIdentity(
            key=f"pci:{device.address}",
            vendor=vendor,
            source=source,
            index=index,
            # Intel cards and older amdgpu ones publish no name: the catalog entry's then.
            name=name or facts.name,
            uuid=uuid,
            pci_bus_id=device.address,
            catalog_id=facts.catalog_id,
            catalog_memory_bandwidth_bytes_per_second=facts.memory_bandwidth_bytes_per_second,
            catalog_dense_bf16_flops=facts.dense_bf16_flops,
            pci_device_id=device.device_id,
            pci_vendor_id=device.vendor_id,
        )

    def read(self) -> list[DeviceReading]:
        readings = []
        for device in self._devices:
            if device.lost or not is_dir(device.path):
                device.lost = True
                readings.append(lost_reading(device.identity, "the device left the PCI bus"))
                continue
            fields = _pcie_fields(device.path)
            if device.driver == "amdgpu":
                fields.update(self._amdgpu(device.path))
                if device.identity.source is Source.AMDSMI:
                    fields.update(self._amdsmi_fields(device.identity.pci_bus_id or "", fields))
            else:
                fields.update(self._intel(device))
            readings.append(DeviceReading(identity=device.identity, up=True, **fields))
        return readings

    def _amdsmi_fields(self, address: str, sysfs: dict[str, Any]) -> dict[str, Any]:
        """amdsmi's live figures for one device, in the common units (empty when it says none)."""
        live = None if self.amdsmi is None else self.amdsmi.sample(address)
        if not live:
            return {}
        fields: dict[str, Any] = {}
        for key, name in (
            ("utilization_ratio", "utilization_gpu_percent"),
            ("memory_utilization_ratio", "utilization_memory_percent"),
        ):
            if live.get(name) is not None:
                fields[key] = live[name] / 100.0
        if live.get("memory_used_mib") is not None:
            fields["memory_used_bytes"] = int(live["memory_used_mib"]) * 1024 * 1024
        if live.get("power_draw_w") is not None:
            fields["power_watts"] = float(live["power_draw_w"])
        if live.get("temperature_c") is not None:
            # amdsmi's edge sensor, else its hotspot: the die, as sysfs's "gpu" is.
            fields["temperatures_celsius"] = {
                **sysfs.get("temperatures_celsius", {}),
                "gpu": float(live["temperature_c"]),
            }
        if live.get("sm_clock_mhz") is not None:
            fields["clocks_hertz"] = {
                **sysfs.get("clocks_hertz", {}),
                "graphics": float(live["sm_clock_mhz"]) * 1e6,
            }
        return fields

    @staticmethod
    def _memory(path: Path, driver: str) -> tuple[int | None, int | None]:
        """(used, total) bytes of the device's own memory, where the driver says."""
        if driver == "amdgpu":
            total = _number(path / "mem_info_vram_total")
            used = _number(path / "mem_info_vram_used")
            if total is not None and used is not None and used > total:
                used = None
            return used, total
        tiles = [
            _number(path / name / "physical_vram_size_bytes")
            for name in list_dir(path)
            if name.startswith("tile") and name[4:].isdigit()
        ]
        sizes = [size for size in tiles if size is not None]
        if sizes:
            return None, sum(sizes)
        for name in list_dir(path / "drm"):
            card = path / "drm" / name
            if not name.startswith("card"):
                continue
            total = _number(card / "lmem_total_bytes")
            if total is None:
                continue
            available = _number(card / "lmem_avail_bytes")
            used = None if available is None or available > total else total - available
            return used, total
        return None, None

    def _amdgpu(self, path: Path) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for key, value in (
            ("utilization_ratio", _percent_ratio(path / "gpu_busy_percent")),
            ("memory_utilization_ratio", _percent_ratio(path / "mem_busy_percent")),
            ("pcie_replays_total", _number(path / "pcie_replay_count")),
        ):
            if value is not None:
                fields[key] = value
        used, total = self._memory(path, "amdgpu")
        if used is not None:
            fields["memory_used_bytes"] = used
        if total is not None:
            fields["memory_total_bytes"] = total
        current: dict[str, float] = {}
        maximum: dict[str, float] = {}
        for name, table in (("graphics", "pp_dpm_sclk"), ("memory", "pp_dpm_mclk")):
            now, top = parse_dpm_levels(read_attribute(path / table))
            if now is not None:
                current[name] = now * 1e6
            if top is not None:
                maximum[name] = top * 1e6
        fields["clocks_hertz"], fields["clocks_max_hertz"] = current, maximum
        errors = parse_error_counts(read_attribute(path / "ras" / "umc_err_count"))
        if errors:
            fields["ecc_errors_total"] = errors
        hwmon = hwmon_dir(path)
        if hwmon is not None:
            fields.update(self._amdgpu_hwmon(hwmon))
        return fields

    @staticmethod
    def _amdgpu_hwmon(hwmon: Path) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        temperatures: dict[str, float] = {}
        for index in range(1, 9):
            value = _number(hwmon / f"temp{index}_input", 200_000)
            label = (read_attribute(hwmon / f"temp{index}_label") or "").lower()
            sensor = _AMD_SENSORS.get(label)
            if value is not None and sensor is not None:
                temperatures.setdefault(sensor, value / 1000.0)
        fields["temperatures_celsius"] = temperatures
        for name in ("power1_average", "power1_input"):
            power = _number(hwmon / name)
            if power is not None:
                fields["power_watts"] = power / 1e6
                break
        cap = _number(hwmon / "power1_cap")
        if cap:
            fields["power_limit_watts"] = cap / 1e6
        pwm = _number(hwmon / "pwm1", 255)
        if pwm is not None:
            fields["fan_ratio"] = pwm / 255.0
        energy = _number(hwmon / "energy1_input")
        if energy is not None:
            fields["energy_joules_total"] = energy / 1e6
        return fields

    def _intel(self, device: _BusDevice) -> dict[str, Any]:
        path = device.path
        fields: dict[str, Any] = {}
        used, total = self._memory(path, device.driver)
        if used is not None:
            fields["memory_used_bytes"] = used
        if total is not None:
            fields["memory_total_bytes"] = total
        current, maximum = _intel_frequencies(path, device.driver)
        fields["clocks_hertz"], fields["clocks_max_hertz"] = current, maximum
        hwmon = hwmon_dir(path)
        if hwmon is None:
            return fields
        limit = _number(hwmon / "power1_max")
        if limit:
            fields["power_limit_watts"] = limit / 1e6
        temperatures: dict[str, float] = {}
        for name, sensor in _XE_SENSORS.items():
            value = _number(hwmon / name, 200_000)
            if value is not None:
                temperatures[sensor] = value / 1000.0
        fields["temperatures_celsius"] = temperatures
        energy = _number(hwmon / "energy1_input")
        if energy is not None:
            joules = energy / 1e6
            fields["energy_joules_total"] = joules
            now = self.clock()
            if device.last_energy is not None:
                previous, then = device.last_energy
                if now > then and joules >= previous:
                    fields["power_watts"] = (joules - previous) / (now - then)
            device.last_energy = (joules, now)
        return fields


def _intel_frequencies(path: Path, driver: str) -> tuple[dict[str, float], dict[str, float]]:
    """The GT's actual and hardware-maximum (RP0) frequency, in hertz."""
    if driver == "xe":
        for tile in list_dir(path):
            if not (tile.startswith("tile") and tile[4:].isdigit()):
                continue
            for gt in list_dir(path / tile):
                folder = path / tile / gt / "freq0"
                if gt.startswith("gt") and is_dir(folder):
                    return _frequencies(folder / "act_freq", folder / "rp0_freq")
        return {}, {}
    for name in list_dir(path / "drm"):
        card = path / "drm" / name
        if name.startswith("card") and name[4:].isdigit():
            return _frequencies(card / "gt_act_freq_mhz", card / "gt_RP0_freq_mhz")
    return {}, {}


def _frequencies(actual: Path, top: Path) -> tuple[dict[str, float], dict[str, float]]:
    current: dict[str, float] = {}
    maximum: dict[str, float] = {}
    value = _number(actual, 100_000)
    if value is not None:
        current["graphics"] = value * 1e6
    value = _number(top, 100_000)
    if value:
        maximum["graphics"] = value * 1e6
    return current, maximum
