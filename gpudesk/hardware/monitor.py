"""Live sampling: one reading per physical GPU per tick, and a short history.

The sampler is plain Python (the GUI calls :meth:`Monitor.sample` off its
thread once a second); a device that stops answering is marked lost and never
queried again, and the others keep going. NVIDIA GPUs are sampled through
NVML; AMD and Intel GPUs found on the PCI bus through amdsmi (when detection
used it) and sysfs. A Mac's GPU has no live figures without root
(``powermetrics``) and is not sampled.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from gpudesk.hardware.amd_smi import AmdSmi, default_amdsmi
from gpudesk.hardware.models import DeviceSample, DeviceSource, GpuSnapshot
from gpudesk.hardware.nvml import GpuLostError, Nvml, NvmlUnavailableError
from gpudesk.hardware.sysfs import SysfsReader


@dataclass(frozen=True, slots=True)
class MonitorMetric:
    key: str
    label: str
    unit: str


#: What the live monitor plots, in order; keys are :class:`DeviceSample` fields.
MONITOR_METRICS: tuple[MonitorMetric, ...] = (
    MonitorMetric("utilization_gpu_percent", "GPU utilization", "%"),
    MonitorMetric("memory_used_mib", "Memory used", "MiB"),
    MonitorMetric("temperature_c", "Temperature", "°C"),
    MonitorMetric("power_draw_w", "Power", "W"),
    # NVIDIA's SM clock; AMD's graphics (sclk) clock.
    MonitorMetric("sm_clock_mhz", "Core clock", "MHz"),
)

#: Five minutes at one sample a second.
DEFAULT_CAPACITY = 300


class MonitorSample(BaseModel):
    """Readings of every monitored device at one moment (seconds since the epoch)."""

    model_config = ConfigDict(frozen=True)

    time_s: float
    devices: tuple[DeviceSample, ...]


class Monitor:
    """Samples the physical GPUs of a detection result.

    Args:
        nvml: NVML access (the same instance detection used).
        devices: detected devices; MIG instances, lost GPUs and devices without
            live figures are skipped (NVML gives no live utilization for MIG instances).
        clock: seconds since the epoch; tests pass their own.
        sysfs_root: the sysfs tree detection read (``/sys`` when None).
        amdsmi: the amdsmi access detection used, if any.
    """

    def __init__(
        self,
        nvml: Nvml,
        devices: Sequence[GpuSnapshot],
        clock: Callable[[], float] = time.time,
        *,
        sysfs_root: Path | None = None,
        amdsmi: AmdSmi | None = None,
    ) -> None:
        self._nvml = nvml
        self._clock = clock
        self._sysfs = SysfsReader(sysfs_root)
        self._amdsmi = amdsmi if amdsmi is not None else default_amdsmi()
        self._devices = [
            device
            for device in devices
            if device.has_live_figures and (device.source is not DeviceSource.NVML or device.uuid)
        ]
        self._handles: dict[str, Any] = {}
        self._lost: set[str] = set()

    @property
    def devices(self) -> list[GpuSnapshot]:
        return list(self._devices)

    def is_lost(self, uuid: str) -> bool:
        return uuid in self._lost

    def _sample_bus(self, device: GpuSnapshot) -> DeviceSample:
        """A sysfs (and amdsmi, where it knows the device) reading."""
        sample = self._sysfs.sample(device)
        if sample.lost:
            self._lost.add(device.key)
            return sample
        if device.source is DeviceSource.AMDSMI:
            live = self._amdsmi.sample(device.pci_bus_id or "")
            if live:
                known = {
                    key: value for key, value in live.items() if key in DeviceSample.model_fields
                }
                sample = sample.model_copy(update=known)
        return sample

    def _sample_one(self, device: GpuSnapshot) -> DeviceSample:
        if device.source is not DeviceSource.NVML:
            if device.key in self._lost:
                return DeviceSample(uuid=device.key, index=device.index, lost=True)
            return self._sample_bus(device)
        uuid = device.uuid or ""
        if uuid in self._lost:
            return DeviceSample(uuid=uuid, index=device.index, lost=True)
        try:
            handle = self._handles.get(uuid)
            if handle is None:
                handle = self._nvml.handle_by_uuid(uuid)
                self._handles[uuid] = handle
        except (GpuLostError, NvmlUnavailableError):
            # The device vanished (lost, unplugged or reset away): stop asking.
            self._lost.add(uuid)
            return DeviceSample(uuid=uuid, index=device.index, lost=True)
        sample = self._nvml.sample(handle, uuid, device.index)
        if sample.lost:
            self._lost.add(uuid)
        return sample

    def sample(self) -> MonitorSample:
        """One reading of every device; never raises for NVML trouble."""
        now = self._clock()
        return MonitorSample(
            time_s=now, devices=tuple(self._sample_one(device) for device in self._devices)
        )


class MonitorHistory:
    """The last ``capacity`` samples, as per-device series with NaN for n/a."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._times: deque[float] = deque(maxlen=capacity)
        self._series: dict[tuple[str, str], deque[float]] = {}
        self._lost: set[str] = set()
        self._uuids: list[str] = []

    def __len__(self) -> int:
        return len(self._times)

    @property
    def uuids(self) -> list[str]:
        return list(self._uuids)

    def add(self, sample: MonitorSample) -> None:
        self._times.append(sample.time_s)
        seen = set()
        for device in sample.devices:
            seen.add(device.uuid)
            if device.uuid not in self._uuids:
                self._uuids.append(device.uuid)
            if device.lost:
                self._lost.add(device.uuid)
            for metric in MONITOR_METRICS:
                value = getattr(device, metric.key)
                self._column(device.uuid, metric.key).append(
                    math.nan if value is None else float(value)
                )
        # Keep every series aligned with the time axis even if a device was absent.
        for uuid in self._uuids:
            if uuid not in seen:
                for metric in MONITOR_METRICS:
                    self._column(uuid, metric.key).append(math.nan)

    def _column(self, uuid: str, key: str) -> deque[float]:
        column = self._series.get((uuid, key))
        if column is None:
            # A device first seen late is padded so its series lines up with the times.
            column = deque([math.nan] * (len(self._times) - 1), maxlen=self.capacity)
            self._series[(uuid, key)] = column
        return column

    def times(self) -> list[float]:
        return list(self._times)

    def values(self, uuid: str, key: str) -> list[float]:
        column = self._series.get((uuid, key))
        return list(column) if column is not None else [math.nan] * len(self._times)

    def latest(self, uuid: str, key: str) -> float | None:
        column = self._series.get((uuid, key))
        if not column or math.isnan(column[-1]):
            return None
        return column[-1]

    def is_lost(self, uuid: str) -> bool:
        return uuid in self._lost

    def clear(self) -> None:
        self._times.clear()
        self._series.clear()
        self._lost.clear()
        self._uuids.clear()
