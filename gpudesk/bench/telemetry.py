"""What the run learns about its device besides the figures: NVML context and samples.

For a CUDA device this asks NVML (through :mod:`gpudesk.hardware.nvml`, the
only module that touches ``pynvml``) for the driver and CUDA versions, the
catalog match, and samples SM clock, power, temperature and clock-event
(throttle) reasons while the benchmark runs. Without NVML (no driver, a CPU
run) it says why and the benchmark carries on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import JsonValue

from gpudesk.bench.devices import DeviceInfo
from gpudesk.bench.results import Telemetry, TelemetrySample
from gpudesk.catalog.schema import CatalogEntry

#: Seconds between NVML samples during a run.
SAMPLE_INTERVAL_S = 0.25
#: A long full run still keeps a bounded sample list.
MAX_SAMPLES = 4000


class TelemetrySource(Protocol):
    def start(self) -> None:
        """Begin sampling (returns at once)."""

    def stop(self) -> Telemetry:
        """Stop sampling (waits for the sampler) and return what was seen."""


class NoTelemetry:
    """No samples, and why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def start(self) -> None:
        """Nothing to start."""

    def stop(self) -> Telemetry:
        return Telemetry(available=False, reason=self.reason)


class SampledTelemetry:
    """Calls ``read()`` every ``interval_s`` on a thread of its own until stopped.

    ``read`` returns one sample's fields (``sm_clock_mhz``, ``power_w``,
    ``temperature_c``, ``clock_event_reasons``) or None when the device
    stopped answering, which ends the sampling.
    """

    def __init__(
        self,
        read: Callable[[], dict[str, Any] | None],
        interval_s: float = SAMPLE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self._interval_s = interval_s
        self._clock = clock
        self._stop = threading.Event()
        self._samples: list[TelemetrySample] = []
        self._thread: threading.Thread | None = None
        self._failure = ""
        self._t0 = 0.0

    def start(self) -> None:
        self._t0 = self._clock()
        self._thread = threading.Thread(target=self._loop, name="gpudesk-bench-telemetry")
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set() and len(self._samples) < MAX_SAMPLES:
            try:
                fields = self._read()
            except Exception as exc:  # a sampler must never take the run down
                self._failure = f"sampling stopped: {exc}"
                return
            if fields is None:
                self._failure = "sampling stopped: the device stopped answering"
                return
            self._samples.append(TelemetrySample(t_s=max(0.0, self._clock() - self._t0), **fields))
            self._stop.wait(self._interval_s)

    def stop(self) -> Telemetry:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return Telemetry(available=True, reason=self._failure, samples=tuple(self._samples))


class DeviceProbe(Protocol):
    """Everything the runner asks about a device besides measuring it."""

    def describe(
        self, device: DeviceInfo, entries: Sequence[CatalogEntry]
    ) -> tuple[str | None, dict[str, JsonValue], TelemetrySource]:
        """Catalog id (or None), extra environment, and a telemetry source."""
        ...


class SystemProbe:
    """The real probe: NVML for CUDA devices, nothing for the CPU."""

    def describe(
        self, device: DeviceInfo, entries: Sequence[CatalogEntry]
    ) -> tuple[str | None, dict[str, JsonValue], TelemetrySource]:
        if device.kind == "cpu":
            return None, {}, NoTelemetry("a CPU run: NVML telemetry is for NVIDIA GPUs")
        if device.kind == "rocm":
            return describe_rocm_device(device, entries)
        if device.kind == "mps":
            return describe_mps_device(device, entries)
        return describe_cuda_device(device, entries)


def _snapshot_from_device(device: DeviceInfo) -> Any:
    from gpudesk.hardware.models import GpuSnapshot

    memory_mib = None if device.memory_total_bytes is None else device.memory_total_bytes // 2**20
    return GpuSnapshot(
        index=device.index,
        name=device.name,
        uuid=device.uuid,
        pci_bus_id=device.pci_bus_id,
        pci_device_id=device.pci_device_id,
        memory_total_mib=memory_mib,
        compute_capability=device.compute_capability,
    )


def describe_cuda_device(
    device: DeviceInfo, entries: Sequence[CatalogEntry], nvml: Any | None = None
) -> tuple[str | None, dict[str, JsonValue], TelemetrySource]:
    """Match, NVML environment and a sampler for one CUDA device.

    Args:
        nvml: a :class:`gpudesk.hardware.nvml.Nvml` (tests pass one over a fake
            module); the process-wide one when None.
    """
    from gpudesk.hardware.match import match_device
    from gpudesk.hardware.nvml import (
        GpuLostError,
        NvmlUnavailableError,
        decode_clock_event_reasons,
        default_nvml,
    )

    nvml = nvml or default_nvml()
    env: dict[str, JsonValue] = {}
    snapshot = _snapshot_from_device(device)
    uuid = device.uuid or None
    handle: Any = None
    try:
        nvml.init()
        env["driver_version"] = nvml.driver_version()
        env["cuda_driver_version"] = nvml.cuda_driver_version()
        if uuid is not None:
            handle = nvml.handle_by_uuid(uuid)
        else:
            handle = nvml.handle_by_index(device.index)
        # A CUDA device may be a MIG instance: read it with its parent.
        snapshot = nvml.read_device(handle, device.index)
    except (NvmlUnavailableError, GpuLostError) as exc:
        env["nvml"] = f"unavailable: {exc}"
        handle = None
    else:
        env["nvml"] = "ok"
        for key in (
            "pcie_gen_current",
            "pcie_gen_max",
            "pcie_width_current",
            "pcie_width_max",
            "power_limit_w",
            "sm_clock_max_mhz",
            "memory_clock_max_mhz",
            "ecc_enabled",
            "mig_enabled",
            "running_process_count",
        ):
            env[f"nvml_{key}"] = getattr(snapshot, key, None)
    match = match_device(snapshot, entries)
    env["catalog_match"] = match.description
    if handle is None:
        return match.catalog_id, env, NoTelemetry(str(env["nvml"]))

    sample_uuid = uuid or ""

    def read() -> dict[str, Any] | None:
        sample = nvml.sample(handle, sample_uuid, device.index)
        if sample.lost:
            return None
        reasons = nvml.query_first(
            ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
            handle,
        )
        return {
            "sm_clock_mhz": sample.sm_clock_mhz,
            "power_w": sample.power_draw_w,
            "temperature_c": sample.temperature_c,
            "clock_event_reasons": (
                None if reasons is None else decode_clock_event_reasons(int(reasons))
            ),
        }

    return match.catalog_id, env, SampledTelemetry(read)


def describe_rocm_device(
    device: DeviceInfo, entries: Sequence[CatalogEntry], sysfs_root: Any | None = None
) -> tuple[str | None, dict[str, JsonValue], TelemetrySource]:
    """An AMD GPU under ROCm: found on the PCI bus by its address, matched by vendor:device id.

    Telemetry is the sysfs reading (graphics clock, power, temperature) once a second.
    """
    from gpudesk.hardware.match import match_device
    from gpudesk.hardware.models import pci_address_key
    from gpudesk.hardware.sysfs import SysfsReader

    reader = SysfsReader(sysfs_root)
    wanted = pci_address_key(device.pci_bus_id)
    found = next((gpu for gpu in reader.read_all() if gpu.pci_bus_id == wanted), None)
    env: dict[str, JsonValue] = {"sysfs": "found" if found is not None else "not found"}
    snapshot = found if found is not None else _snapshot_from_device(device)
    if found is None:
        snapshot = snapshot.model_copy(update={"vendor": "AMD", "pci_vendor_id": "0x1002"})
    else:
        env["pci_id"] = f"{found.pci_vendor_id}:{found.pci_device_id}"
        env["kernel_driver"] = found.kernel_driver
    match = match_device(snapshot, entries)
    env["catalog_match"] = match.description
    if found is None:
        return match.catalog_id, env, NoTelemetry("the GPU was not found in sysfs")
    gpu = found

    def read() -> dict[str, Any] | None:
        sample = reader.sample(gpu)
        if sample.lost:
            return None
        return {
            "sm_clock_mhz": sample.sm_clock_mhz,
            "power_w": sample.power_draw_w,
            "temperature_c": sample.temperature_c,
            "clock_event_reasons": None,
        }

    return match.catalog_id, env, SampledTelemetry(read)


def describe_mps_device(
    device: DeviceInfo, entries: Sequence[CatalogEntry]
) -> tuple[str | None, dict[str, JsonValue], TelemetrySource]:
    """The Mac's GPU: chip and GPU cores from system_profiler, matched to its catalog entry."""
    from gpudesk.hardware.detect import default_apple_reading
    from gpudesk.hardware.match import match_device

    reading = default_apple_reading()
    gpu = None if reading is None else reading.gpu
    env: dict[str, JsonValue] = {
        "apple_chip": None if gpu is None else gpu.name,
        "apple_gpu_cores": None if gpu is None else gpu.gpu_core_count,
        "os_version": None if reading is None else reading.os_version,
    }
    if gpu is None:
        env["catalog_match"] = "not in catalog (system_profiler gave no Apple GPU)"
        return None, env, NoTelemetry("no Apple GPU reading")
    match = match_device(gpu, entries)
    env["catalog_match"] = match.description
    return (
        match.catalog_id,
        env,
        NoTelemetry("Apple GPU telemetry needs root (powermetrics); not sampled"),
    )
