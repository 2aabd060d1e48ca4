"""The GUI's monitor reads the telemetry sources: the code of the exporter and `gpudesk monitor`.

:class:`LiveSampler` is plain Python, called on a worker thread once a
second. It opens the sources for the devices detection found (NVML; the
sysfs bus with amdsmi where detection used it; a Mac's GPU from its
snapshot) on its first call, and gives back each collection twice: every
device's :class:`~gpudesk.telemetry.readings.DeviceReading` (the readings
table, every vendor, MIG instances included) and, for the charts, a
:class:`~gpudesk.hardware.monitor.MonitorSample` of the physical GPUs with
live figures (the devices :class:`~gpudesk.hardware.monitor.Monitor` would
chart), in its units.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from gpudesk.hardware.amd_smi import AmdSmi, default_amdsmi
from gpudesk.hardware.apple import AppleReading
from gpudesk.hardware.models import DeviceSample, DeviceSource, GpuSnapshot
from gpudesk.hardware.monitor import MonitorSample
from gpudesk.hardware.nvml import Nvml
from gpudesk.hardware.sysfs import default_sysfs_root
from gpudesk.telemetry.apple import AppleSource
from gpudesk.telemetry.bus import BusSource
from gpudesk.telemetry.collector import TelemetrySource, collect_once
from gpudesk.telemetry.nvidia import NvidiaSource
from gpudesk.telemetry.readings import DeviceReading

_MIB = 1024 * 1024


def _percent(ratio: float | None) -> int | None:
    return None if ratio is None else round(ratio * 100)


def device_sample(device: GpuSnapshot, reading: DeviceReading | None) -> DeviceSample:
    """A reading in the charts' units; a device missing or down is lost."""
    if reading is None or not reading.up:
        return DeviceSample(uuid=device.key, index=device.index, lost=True)
    graphics = reading.clocks_hertz.get("graphics")
    temperature = reading.temperatures_celsius.get("gpu")
    return DeviceSample(
        uuid=device.key,
        index=device.index,
        utilization_gpu_percent=_percent(reading.utilization_ratio),
        utilization_memory_percent=_percent(reading.memory_utilization_ratio),
        memory_used_mib=None
        if reading.memory_used_bytes is None
        else reading.memory_used_bytes // _MIB,
        temperature_c=None if temperature is None else round(temperature),
        fan_percent=_percent(reading.fan_ratio),
        power_draw_w=None if reading.power_watts is None else round(reading.power_watts, 1),
        sm_clock_mhz=None if graphics is None else round(graphics / 1e6),
    )


class LiveSampler:
    """Samples the devices of a detection result through the telemetry sources.

    Args:
        nvml: NVML access (the one detection used).
        devices: the detected devices.
        sysfs_root: the sysfs tree detection read (``/sys`` or ``GPUDESK_SYSFS_ROOT``).
        amdsmi: amdsmi access for AMD devices detection read through it.
        clock: seconds since the epoch.
    """

    def __init__(
        self,
        nvml: Nvml,
        devices: Sequence[GpuSnapshot],
        *,
        sysfs_root: Path | None = None,
        amdsmi: AmdSmi | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._nvml = nvml
        self._all = list(devices)
        self._charted = [
            device
            for device in devices
            if device.has_live_figures and (device.source is not DeviceSource.NVML or device.uuid)
        ]
        self._root = sysfs_root
        self._amdsmi = amdsmi
        self._clock = clock
        self._sources: list[TelemetrySource] | None = None
        self._by_key = {device.key: device for device in devices}

    @property
    def devices(self) -> list[GpuSnapshot]:
        """The charted devices: physical GPUs that answered at detection, with live figures."""
        return list(self._charted)

    def _open(self) -> list[TelemetrySource]:
        sources: list[TelemetrySource] = []
        if any(device.source is DeviceSource.NVML for device in self._all):
            nvidia = NvidiaSource(self._nvml)
            nvidia.discover()
            sources.append(nvidia)
        on_bus = [d for d in self._all if d.source in (DeviceSource.SYSFS, DeviceSource.AMDSMI)]
        if on_bus:
            amdsmi = self._amdsmi
            if amdsmi is None and any(d.source is DeviceSource.AMDSMI for d in on_bus):
                amdsmi = default_amdsmi()
            bus = BusSource(
                self._root if self._root is not None else default_sysfs_root(), amdsmi=amdsmi
            )
            bus.discover()
            sources.append(bus)
        for device in self._all:
            if device.source is DeviceSource.SYSTEM_PROFILER:
                snapshot = device

                def read_snapshot(gpu: GpuSnapshot = snapshot) -> AppleReading:
                    return AppleReading(gpu=gpu)

                mac = AppleSource(read_snapshot)
                mac.discover(device.index or 0)
                sources.append(mac)
        return sources

    def _as_detected(self, reading: DeviceReading) -> DeviceReading:
        """The reading under detection's index and name (the cards' and the legend's)."""
        identity = reading.identity
        device = self._by_key.get(identity.key)
        if device is None:
            return reading
        update: dict[str, object] = {}
        if device.index != identity.index:
            update["index"] = device.index
        if identity.name is None and device.name:
            update["name"] = device.name
        if not update:
            return reading
        return reading.model_copy(update={"identity": identity.model_copy(update=update)})

    def sample(self) -> tuple[MonitorSample, tuple[DeviceReading, ...]]:
        """One collection: the charts' sample and every device's reading."""
        if self._sources is None:
            self._sources = self._open()
        readings = tuple(self._as_detected(reading) for reading in collect_once(self._sources))
        by_key = {reading.identity.key: reading for reading in readings}
        samples = tuple(device_sample(device, by_key.get(device.key)) for device in self._charted)
        return MonitorSample(time_s=self._clock(), devices=samples), readings
