"""NVIDIA GPUs (and their MIG instances) through NVML: the common field set and health counters.

Every call goes through :class:`gpudesk.hardware.nvml.Nvml` (the one place that
talks to NVML): a query the device does not support reads as ``None`` and
the field is left out; a GPU that stops answering (``GPU_IS_LOST``) is down
from then on and never asked again, as the GUI's monitor does.

NVML functions read here beyond detection's (nvml.h): ``TotalEnergyConsumption``
(millijoules since the driver loaded), ``TotalEccErrors`` with error type 0
(corrected) and 1 (uncorrected) on the volatile counter, ``PcieReplayCounter``,
``RemappedRows`` (correctable rows, uncorrectable rows, pending, failure),
``NvLinkState``/``NvLinkErrorCounter`` and the event API
(``EventSetCreate``, ``DeviceRegisterEvents`` with ``nvmlEventTypeXidCriticalError``,
``EventSetWait_v2`` polled with a 0 ms timeout). NVML gives XID *events*, not
a counter: they are counted from the moment this source starts.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpudesk.hardware.models import GpuSnapshot
from gpudesk.hardware.nvml import (
    CLOCK_EVENT_REASONS,
    GpuLostError,
    Nvml,
    NvmlUnavailableError,
    decode_clock_event_reasons,
)
from gpudesk.telemetry.catalog_join import NO_FACTS, Identify
from gpudesk.telemetry.readings import (
    DeviceIdentity,
    DeviceReading,
    ProcessReading,
    Source,
    Vendor,
    lost_reading,
)

_log = logging.getLogger(__name__)

# nvml.h enum values.
_CLOCK_GRAPHICS = 0
_CLOCK_SM = 1
_CLOCK_MEM = 2
_TEMPERATURE_GPU = 0
_MEMORY_ERROR_CORRECTED = 0
_MEMORY_ERROR_UNCORRECTED = 1
_ECC_COUNTER_VOLATILE = 0
_EVENT_XID_CRITICAL_ERROR = 0x8
_MIG_ENABLED = 1
#: NVML_NVLINK_MAX_LINKS (nvml.h, R535+).
_NVLINK_MAX_LINKS = 18
#: nvmlNvLinkErrorCounter_t: replay, recovery, CRC flit, CRC data.
_NVLINK_COUNTERS = {0: "replay", 1: "recovery", 2: "crc_flit", 3: "crc_data"}
#: At most this many events are taken per collection (a storm cannot stall one).
_MAX_EVENTS_PER_COLLECTION = 256
#: NVML that could not be used is tried again this often (a driver loaded after the
#: exporter started, as at boot, is then picked up without a restart).
REDISCOVER_S = 30.0

_MIG_PROFILE = re.compile(r"\bMIG ([0-9]+g\.[0-9]+gb(?:\+[a-z]+)?)$")


def mig_profile(name: str | None) -> str | None:
    """ "NVIDIA A100-SXM4-40GB MIG 3g.20gb" -> "3g.20gb" (None when the name has none)."""
    if not name:
        return None
    found = _MIG_PROFILE.search(name)
    return found.group(1) if found else None


def _ratio(percent: Any) -> float | None:
    return None if percent is None else min(max(int(percent), 0), 100) / 100.0


def _hertz(mhz: Any) -> float | None:
    return None if mhz is None else int(mhz) * 1_000_000.0


@dataclass
class _Device:
    identity: DeviceIdentity
    handle: Any
    mig: bool = False
    lost: bool = False
    nvlinks: list[int] | None = None


@dataclass
class NvidiaSource:
    """NVML's devices: found once by :meth:`discover`, read by :meth:`read`.

    Args:
        nvml: the NVML access (the process-wide one in the CLI).
        identify: the device's catalog facts (entry, name, peaks); none when None.
        processes: also read each GPU's processes (``--processes``).
        process_labels: PID -> (user, container, pod); read from /proc by default.
        clock: monotonic seconds, for retrying an NVML that could not be used.
    """

    nvml: Nvml
    identify: Identify | None = None
    processes: bool = False
    process_labels: Callable[[int], tuple[str, str, str]] | None = None
    clock: Callable[[], float] = time.monotonic
    detail: str | None = None
    #: Whether NVML answered :meth:`discover` (read again until it does).
    available: bool = False
    _last_attempt: float | None = None
    _devices: list[_Device] = field(default_factory=list)
    _events: Any = None
    _xids: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def devices(self) -> list[DeviceIdentity]:
        return [device.identity for device in self._devices]

    def discover(self) -> bool:
        """Open NVML and list its GPUs and MIG instances; False (with ``detail``) if unusable."""
        self._last_attempt = self.clock()
        try:
            count = self.nvml.device_count()
        except NvmlUnavailableError as exc:
            self.detail = f"NVML: {exc.detail}"
            return False
        self.available, self.detail = True, None
        self._create_event_set()
        for index in range(count):
            try:
                handle = self.nvml.handle_by_index(index)
            except (GpuLostError, NvmlUnavailableError) as exc:
                _log.info("GPU %d not opened: %s", index, exc)
                continue
            gpu = self.nvml.read_gpu(handle, index)
            identity = self._identity(gpu)
            self._devices.append(_Device(identity, handle, lost=gpu.lost))
            if gpu.lost:
                continue
            self._register_events(handle, identity)
            try:
                migs = self.nvml.mig_handles(handle)
            except GpuLostError:
                continue
            for position, mig_handle in enumerate(migs):
                mig = self.nvml.read_mig(mig_handle, gpu, position)
                self._devices.append(_Device(self._identity(mig), mig_handle, mig=True))
        return True

    def _identity(self, gpu: GpuSnapshot) -> DeviceIdentity:
        facts = NO_FACTS if self.identify is None else self.identify(gpu)
        key = gpu.uuid or f"nvml:{gpu.parent_index}:{gpu.index}"
        return DeviceIdentity(
            key=key,
            vendor=Vendor.NVIDIA,
            source=Source.NVML,
            index=gpu.index,
            name=gpu.name,
            uuid=gpu.uuid,
            pci_bus_id=gpu.pci_bus_id,
            parent_uuid=gpu.parent_uuid,
            mig_profile=mig_profile(gpu.name) if gpu.parent_uuid else None,
            catalog_id=facts.catalog_id,
            catalog_memory_bandwidth_bytes_per_second=facts.memory_bandwidth_bytes_per_second,
            catalog_dense_bf16_flops=facts.dense_bf16_flops,
            pci_device_id=gpu.pci_device_id,
            pci_vendor_id=gpu.pci_vendor_id,
        )

    # -- XID events ---------------------------------------------------------------

    def _create_event_set(self) -> None:
        try:
            self._events = self.nvml.query("nvmlEventSetCreate")
        except GpuLostError:
            self._events = None

    def _register_events(self, handle: Any, identity: DeviceIdentity) -> None:
        if self._events is None:
            return
        try:
            # The binding returns None on success, and query() None on failure too (a
            # GPU without events raises NOT_SUPPORTED, logged once): the GPU counts as
            # watched either way, and one that cannot have events shows none.
            self.nvml.query(
                "nvmlDeviceRegisterEvents", handle, _EVENT_XID_CRITICAL_ERROR, self._events
            )
        except GpuLostError:
            return
        self._xids[identity.key] = {}

    def _poll_events(self) -> None:
        if self._events is None:
            return
        keys = {device.identity.uuid: device.identity.key for device in self._devices}
        for _ in range(_MAX_EVENTS_PER_COLLECTION):
            try:
                event = self.nvml.query("nvmlEventSetWait_v2", self._events, 0)
            except GpuLostError:
                return
            if event is None:  # NVML_ERROR_TIMEOUT: nothing waiting
                return
            try:
                uuid = self.nvml.query("nvmlDeviceGetUUID", event.device)
            except GpuLostError:
                uuid = None
            text = uuid.decode() if isinstance(uuid, bytes) else uuid
            key = keys.get(text)
            if key is None or key not in self._xids:
                continue
            xid = str(int(event.eventData))
            counts = self._xids[key]
            counts[xid] = counts.get(xid, 0) + 1

    # -- readings -------------------------------------------------------------------

    def read(self) -> list[DeviceReading]:
        """One reading of every device found; a lost one is down with no readings.

        While NVML cannot be used, it is tried again every :data:`REDISCOVER_S`.
        """
        if not self.available:
            last = self._last_attempt
            if last is not None and self.clock() - last < REDISCOVER_S:
                return []
            if not self.discover():
                return []
        self._poll_events()
        readings = []
        for device in self._devices:
            if device.lost:
                readings.append(lost_reading(device.identity, "the GPU stopped answering"))
                continue
            try:
                reading = self._read_mig(device) if device.mig else self._read_gpu(device)
            except GpuLostError as exc:
                _log.warning("%s lost: %s", device.identity.key, exc)
                device.lost = True
                for other in self._devices:
                    if other.identity.parent_uuid == device.identity.uuid and device.identity.uuid:
                        other.lost = True
                reading = lost_reading(device.identity, "the GPU stopped answering")
            readings.append(reading)
        return readings

    def _read_mig(self, device: _Device) -> DeviceReading:
        fields: dict[str, Any] = {}
        memory = self.nvml.memory_info(device.handle)
        if memory is not None:
            fields["memory_used_bytes"] = int(memory[0].used)
            fields["memory_total_bytes"] = int(memory[0].total)
        return DeviceReading(identity=device.identity, up=True, **fields)

    def _read_gpu(self, device: _Device) -> DeviceReading:
        handle = device.handle
        query = self.nvml.query
        fields: dict[str, Any] = {}
        utilization = query("nvmlDeviceGetUtilizationRates", handle)
        if utilization is not None:
            fields["utilization_ratio"] = _ratio(utilization.gpu)
            fields["memory_utilization_ratio"] = _ratio(utilization.memory)
        memory = self.nvml.memory_info(handle)
        if memory is not None:
            fields["memory_used_bytes"] = int(memory[0].used)
            fields["memory_total_bytes"] = int(memory[0].total)
        temperature = query("nvmlDeviceGetTemperature", handle, _TEMPERATURE_GPU)
        if temperature is not None:
            fields["temperatures_celsius"] = {"gpu": float(temperature)}
        power = query("nvmlDeviceGetPowerUsage", handle)
        if power is not None:
            fields["power_watts"] = int(power) / 1000.0
        limit = query("nvmlDeviceGetEnforcedPowerLimit", handle)
        if limit is not None:
            fields["power_limit_watts"] = int(limit) / 1000.0
        fields["clocks_hertz"], fields["clocks_max_hertz"] = self._clocks(handle)
        fan = query("nvmlDeviceGetFanSpeed", handle)
        if fan is not None:
            fields["fan_ratio"] = _ratio(fan)
        for key, function in (
            ("pcie_link_generation", "nvmlDeviceGetCurrPcieLinkGeneration"),
            ("pcie_link_generation_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
            ("pcie_link_width", "nvmlDeviceGetCurrPcieLinkWidth"),
            ("pcie_link_width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
        ):
            value = query(function, handle)
            if value is not None:
                fields[key] = int(value)
        energy = query("nvmlDeviceGetTotalEnergyConsumption", handle)
        if energy is not None:
            fields["energy_joules_total"] = int(energy) / 1000.0
        self._read_health(handle, fields)
        fields["nvlink_errors_total"] = self._nvlink_errors(device)
        if device.identity.key in self._xids:
            fields["xid_events_total"] = dict(self._xids[device.identity.key])
        if self.processes:
            fields["processes"] = self._processes(handle)
        return DeviceReading(identity=device.identity, up=True, **fields)

    def _clocks(self, handle: Any) -> tuple[dict[str, float], dict[str, float]]:
        current: dict[str, float] = {}
        maximum: dict[str, float] = {}
        for name, clock in (("graphics", _CLOCK_SM), ("memory", _CLOCK_MEM)):
            value = _hertz(self.nvml.query("nvmlDeviceGetClockInfo", handle, clock))
            if value is not None:
                current[name] = value
            value = _hertz(self.nvml.query("nvmlDeviceGetMaxClockInfo", handle, clock))
            if value is not None:
                maximum[name] = value
        return current, maximum

    def _read_health(self, handle: Any, fields: dict[str, Any]) -> None:
        query = self.nvml.query
        ecc: dict[str, int] = {}
        for name, kind in (
            ("corrected", _MEMORY_ERROR_CORRECTED),
            ("uncorrected", _MEMORY_ERROR_UNCORRECTED),
        ):
            value = query("nvmlDeviceGetTotalEccErrors", handle, kind, _ECC_COUNTER_VOLATILE)
            if value is not None:
                ecc[name] = int(value)
        fields["ecc_errors_total"] = ecc
        rows = query("nvmlDeviceGetRemappedRows", handle)
        if rows is not None:
            fields["remapped_rows_total"] = {
                "correctable": int(rows[0]),
                "uncorrectable": int(rows[1]),
            }
            fields["row_remap_pending"] = bool(int(rows[2]))
            fields["row_remap_failure"] = bool(int(rows[3]))
        replays = query("nvmlDeviceGetPcieReplayCounter", handle)
        if replays is not None:
            fields["pcie_replays_total"] = int(replays)
        reasons = self.nvml.query_first(
            ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
            handle,
        )
        if reasons is not None:
            fields["throttle_reasons"] = decode_clock_event_reasons(int(reasons))

    def _nvlink_errors(self, device: _Device) -> dict[str, int]:
        if device.nvlinks is None:
            # Which links are up is static: asked once, and a GPU without NVLink costs one call.
            device.nvlinks = []
            for link in range(_NVLINK_MAX_LINKS):
                state = self.nvml.query("nvmlDeviceGetNvLinkState", device.handle, link)
                if state is None:
                    break
                if int(state):
                    device.nvlinks.append(link)
        errors: dict[str, int] = {}
        for link in device.nvlinks:
            for counter, name in _NVLINK_COUNTERS.items():
                value = self.nvml.query(
                    "nvmlDeviceGetNvLinkErrorCounter", device.handle, link, counter
                )
                if value is not None:
                    errors[f"{link}/{name}"] = int(value)
        return errors

    def _processes(self, handle: Any) -> tuple[ProcessReading, ...] | None:
        found = self.nvml.running_processes(handle)
        if found is None:
            return None
        labels = self.process_labels
        shares = self._process_utilization(handle)
        readings = []
        for pid, used in sorted(found.items()):
            user, container, pod = labels(pid) if labels is not None else ("", "", "")
            sm, memory = shares.get(pid, (None, None))
            readings.append(
                ProcessReading(
                    pid=pid,
                    memory_used_bytes=used,
                    utilization_ratio=sm,
                    memory_utilization_ratio=memory,
                    user=user,
                    container=container,
                    pod=pod,
                )
            )
        return tuple(readings)

    def _process_utilization(self, handle: Any) -> dict[int, tuple[float | None, float | None]]:
        """PID -> (SM, memory) utilisation from the newest sample NVML kept for it.

        ``nvmlDeviceGetProcessUtilization`` from time 0 returns the samples in its
        buffer; NOT_FOUND (no samples: nothing ran lately) reads as none.
        """
        samples = self.nvml.query("nvmlDeviceGetProcessUtilization", handle, 0)
        newest: dict[int, Any] = {}
        for sample in samples or ():
            pid = int(sample.pid)
            if pid not in newest or int(sample.timeStamp) > int(newest[pid].timeStamp):
                newest[pid] = sample
        return {pid: (_ratio(s.smUtil), _ratio(s.memUtil)) for pid, s in newest.items()}

    def close(self) -> None:
        """Free the event set (NVML itself is shut down at exit by its owner)."""
        if self._events is not None:
            with contextlib.suppress(GpuLostError):
                self.nvml.query("nvmlEventSetFree", self._events)
            self._events = None


#: Throttle reasons the exporter always lists per GPU (0 or 1), named as nvidia-smi does.
THROTTLE_REASON_NAMES: tuple[str, ...] = tuple(CLOCK_EVENT_REASONS.values())
