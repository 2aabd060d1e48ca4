"""A small stand-in for the ``pynvml`` module, raising the binding's real errors.

Only the functions GPUDesk calls exist. Errors are the real
``pynvml.NVMLError_*`` classes, so the code under test classifies them
exactly as it would with a driver. Scenario builders at the bottom give the
cases the issue lists; tests may tweak the returned objects.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml as real

MIB = 1024 * 1024

_MIG_UNSUPPORTED = frozenset(
    {
        "nvmlDeviceGetMemoryBusWidth",
        "nvmlDeviceGetNumGpuCores",
        "nvmlDeviceGetClockInfo",
        "nvmlDeviceGetMaxClockInfo",
        "nvmlDeviceGetEnforcedPowerLimit",
        "nvmlDeviceGetPowerManagementDefaultLimit",
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetTemperature",
        "nvmlDeviceGetFanSpeed",
        "nvmlDeviceGetUtilizationRates",
        "nvmlDeviceGetEccMode",
        "nvmlDeviceGetMigMode",
        "nvmlDeviceGetPciInfo",
    }
)


@dataclass
class FakeMig:
    """One MIG instance (a MIG device handle)."""

    name: str
    uuid: str
    memory_total_mib: int
    memory_used_mib: int
    gpu_instance_id: int
    compute_instance_id: int
    sm_count: int
    index: int = 0
    unsupported: frozenset[str] = _MIG_UNSUPPORTED
    lost: bool = False


@dataclass
class FakeGpu:
    """One physical GPU and what it answers."""

    name: str
    uuid: str
    bus_id: str
    pci_device_id: int  # the high 16 bits of NVML's pciDeviceId
    memory_total_mib: int
    memory_used_mib: int = 512
    bus_width_bits: int = 384
    cuda_cores: int = 10496
    compute_capability: tuple[int, int] = (8, 6)
    sm_clock_mhz: int = 210
    sm_clock_max_mhz: int = 2100
    memory_clock_mhz: int = 405
    memory_clock_max_mhz: int = 9751
    power_limit_mw: int = 350_000
    power_default_limit_mw: int = 350_000
    power_draw_mw: int = 25_500
    temperature_c: int = 35
    fan_percent: int = 30
    utilization_gpu: int = 3
    utilization_memory: int = 1
    pcie_gen: tuple[int, int] = (1, 4)  # current, max
    pcie_width: tuple[int, int] = (16, 16)
    ecc: tuple[int, int] | None = (0, 0)
    mig_mode: tuple[int, int] = (0, 0)
    mig_slots: int = 0
    migs: dict[int, FakeMig] = field(default_factory=dict)
    clock_event_reasons: int = 0x1
    compute_pids: tuple[int, ...] = ()
    graphics_pids: tuple[int, ...] = ()
    unsupported: frozenset[str] = frozenset()
    #: Raised by nvmlDeviceGetHandleByIndex (e.g. NVMLError_NoPermission).
    handle_error: type[real.NVMLError] | None = None
    lost: bool = False
    #: Become lost after this many utilization reads (a GPU lost while monitoring).
    lose_after_samples: int | None = None
    samples_taken: int = 0


class FakePynvml:
    """Module-like object: ``Nvml(module=FakePynvml(...))``.

    Args:
        gpus: the physical GPUs, in NVML index order.
        init_error: the real error class ``nvmlInit`` raises, if any.
        missing: functions that raise ``NVMLError_FunctionNotFound`` (an older
            driver than the binding).
        absent: functions the binding itself lacks (AttributeError).
    """

    def __init__(
        self,
        gpus: list[FakeGpu] | None = None,
        *,
        init_error: type[real.NVMLError] | None = None,
        missing: frozenset[str] = frozenset(),
        absent: frozenset[str] = frozenset(),
        driver_version: str = "550.54.14",
        cuda_version: int = 12040,
    ) -> None:
        self.gpus = list(gpus or [])
        self.init_error = init_error
        self.missing = missing
        self.absent = absent
        self.driver_version = driver_version
        self.cuda_version = cuda_version
        self.initialised = 0
        self.calls: Counter[str] = Counter()
        # The real binding's error classes and constants.
        self.NVMLError = real.NVMLError
        for name in dir(real):
            if name.startswith(("NVMLError_", "NVML_")):
                setattr(self, name, getattr(real, name))

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("nvml") and name in object.__getattribute__(self, "absent"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    # -- helpers ------------------------------------------------------------------

    def _enter(self, name: str) -> None:
        self.calls[name] += 1
        if name in self.missing:
            raise real.NVMLError_FunctionNotFound()
        if not self.initialised:
            raise real.NVMLError_Uninitialized()

    def _device(self, name: str, handle: FakeGpu | FakeMig) -> FakeGpu | FakeMig:
        self._enter(name)
        if handle.lost:
            raise real.NVMLError_GpuIsLost()
        if name in handle.unsupported:
            raise real.NVMLError_NotSupported()
        return handle

    def _gpu(self, name: str, handle: FakeGpu | FakeMig) -> FakeGpu:
        device = self._device(name, handle)
        if not isinstance(device, FakeGpu):
            raise real.NVMLError_NotSupported()
        return device

    # -- library and system ---------------------------------------------------------

    def nvmlInit(self) -> None:
        self.calls["nvmlInit"] += 1
        if self.init_error is not None:
            raise self.init_error()
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self.calls["nvmlShutdown"] += 1
        if not self.initialised:
            raise real.NVMLError_Uninitialized()
        self.initialised -= 1

    def nvmlSystemGetDriverVersion(self) -> str:
        self._enter("nvmlSystemGetDriverVersion")
        return self.driver_version

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        self._enter("nvmlSystemGetCudaDriverVersion_v2")
        return self.cuda_version

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        self._enter("nvmlSystemGetCudaDriverVersion")
        return self.cuda_version

    def nvmlSystemGetNVMLVersion(self) -> str:
        self._enter("nvmlSystemGetNVMLVersion")
        return "12." + self.driver_version

    def nvmlDeviceGetCount(self) -> int:
        self._enter("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        self._enter("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self.gpus):
            raise real.NVMLError_InvalidArgument()
        gpu = self.gpus[index]
        if gpu.handle_error is not None:
            raise gpu.handle_error()
        if gpu.lost:
            raise real.NVMLError_GpuIsLost()
        return gpu

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> FakeGpu:
        self._enter("nvmlDeviceGetHandleByUUID")
        for gpu in self.gpus:
            if gpu.uuid == uuid:
                if gpu.lost:
                    raise real.NVMLError_GpuIsLost()
                return gpu
        raise real.NVMLError_NotFound()

    # -- device fields --------------------------------------------------------------

    def nvmlDeviceGetIndex(self, handle: FakeGpu | FakeMig) -> int:
        device = self._device("nvmlDeviceGetIndex", handle)
        return device.index if isinstance(device, FakeMig) else self.gpus.index(device)

    def nvmlDeviceGetName(self, handle: FakeGpu | FakeMig) -> str:
        return self._device("nvmlDeviceGetName", handle).name

    def nvmlDeviceGetUUID(self, handle: FakeGpu | FakeMig) -> str:
        return self._device("nvmlDeviceGetUUID", handle).uuid

    def nvmlDeviceGetPciInfo(self, handle: FakeGpu | FakeMig) -> SimpleNamespace:
        gpu = self._gpu("nvmlDeviceGetPciInfo", handle)
        # Like the ctypes struct: busId is bytes, pciDeviceId packs device << 16 | vendor.
        return SimpleNamespace(
            busId=gpu.bus_id.encode(), pciDeviceId=(gpu.pci_device_id << 16) | 0x10DE
        )

    def nvmlDeviceGetMemoryInfo(self, handle: FakeGpu | FakeMig) -> SimpleNamespace:
        device = self._device("nvmlDeviceGetMemoryInfo", handle)
        total = device.memory_total_mib * MIB
        used = device.memory_used_mib * MIB
        return SimpleNamespace(total=total, used=used, free=total - used)

    def nvmlDeviceGetMemoryBusWidth(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetMemoryBusWidth", handle).bus_width_bits

    def nvmlDeviceGetNumGpuCores(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetNumGpuCores", handle).cuda_cores

    def nvmlDeviceGetCudaComputeCapability(self, handle: FakeGpu | FakeMig) -> tuple[int, int]:
        return self._gpu("nvmlDeviceGetCudaComputeCapability", handle).compute_capability

    def nvmlDeviceGetClockInfo(self, handle: FakeGpu | FakeMig, clock: int) -> int:
        gpu = self._gpu("nvmlDeviceGetClockInfo", handle)
        return gpu.sm_clock_mhz if clock == real.NVML_CLOCK_SM else gpu.memory_clock_mhz

    def nvmlDeviceGetMaxClockInfo(self, handle: FakeGpu | FakeMig, clock: int) -> int:
        gpu = self._gpu("nvmlDeviceGetMaxClockInfo", handle)
        return gpu.sm_clock_max_mhz if clock == real.NVML_CLOCK_SM else gpu.memory_clock_max_mhz

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetEnforcedPowerLimit", handle).power_limit_mw

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetPowerManagementDefaultLimit", handle).power_default_limit_mw

    def nvmlDeviceGetPowerUsage(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetPowerUsage", handle).power_draw_mw

    def nvmlDeviceGetTemperature(self, handle: FakeGpu | FakeMig, sensor: int) -> int:
        assert sensor == real.NVML_TEMPERATURE_GPU
        return self._gpu("nvmlDeviceGetTemperature", handle).temperature_c

    def nvmlDeviceGetFanSpeed(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetFanSpeed", handle).fan_percent

    def nvmlDeviceGetUtilizationRates(self, handle: FakeGpu | FakeMig) -> SimpleNamespace:
        gpu = self._gpu("nvmlDeviceGetUtilizationRates", handle)
        gpu.samples_taken += 1
        if gpu.lose_after_samples is not None and gpu.samples_taken > gpu.lose_after_samples:
            gpu.lost = True
            raise real.NVMLError_GpuIsLost()
        return SimpleNamespace(gpu=gpu.utilization_gpu, memory=gpu.utilization_memory)

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetCurrPcieLinkGeneration", handle).pcie_gen[0]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetMaxPcieLinkGeneration", handle).pcie_gen[1]

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetCurrPcieLinkWidth", handle).pcie_width[0]

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetMaxPcieLinkWidth", handle).pcie_width[1]

    def nvmlDeviceGetEccMode(self, handle: FakeGpu | FakeMig) -> list[int]:
        gpu = self._gpu("nvmlDeviceGetEccMode", handle)
        if gpu.ecc is None:
            raise real.NVMLError_NotSupported()
        return list(gpu.ecc)

    def nvmlDeviceGetMigMode(self, handle: FakeGpu | FakeMig) -> list[int]:
        gpu = self._gpu("nvmlDeviceGetMigMode", handle)
        if gpu.mig_slots == 0:
            raise real.NVMLError_NotSupported()  # what non-MIG GPUs answer
        return list(gpu.mig_mode)

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetMaxMigDeviceCount", handle).mig_slots

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: FakeGpu | FakeMig, slot: int) -> FakeMig:
        gpu = self._gpu("nvmlDeviceGetMigDeviceHandleByIndex", handle)
        if slot not in gpu.migs:
            raise real.NVMLError_NotFound()
        return gpu.migs[slot]

    def nvmlDeviceGetGpuInstanceId(self, handle: FakeGpu | FakeMig) -> int:
        device = self._device("nvmlDeviceGetGpuInstanceId", handle)
        if not isinstance(device, FakeMig):
            raise real.NVMLError_InvalidArgument()
        return device.gpu_instance_id

    def nvmlDeviceGetComputeInstanceId(self, handle: FakeGpu | FakeMig) -> int:
        device = self._device("nvmlDeviceGetComputeInstanceId", handle)
        if not isinstance(device, FakeMig):
            raise real.NVMLError_InvalidArgument()
        return device.compute_instance_id

    def nvmlDeviceGetAttributes(self, handle: FakeGpu | FakeMig) -> SimpleNamespace:
        device = self._device("nvmlDeviceGetAttributes", handle)
        if not isinstance(device, FakeMig):
            raise real.NVMLError_NotSupported()
        return SimpleNamespace(
            multiprocessorCount=device.sm_count, memorySizeMB=device.memory_total_mib
        )

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetCurrentClocksEventReasons", handle).clock_event_reasons

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: FakeGpu | FakeMig) -> int:
        return self._gpu("nvmlDeviceGetCurrentClocksThrottleReasons", handle).clock_event_reasons

    # The versioned names: the binding's unversioned ones call the _v3 symbol anyway.
    def nvmlDeviceGetComputeRunningProcesses_v3(
        self, handle: FakeGpu | FakeMig
    ) -> list[SimpleNamespace]:
        gpu = self._gpu("nvmlDeviceGetComputeRunningProcesses_v3", handle)
        return [SimpleNamespace(pid=pid, usedGpuMemory=0) for pid in gpu.compute_pids]

    def nvmlDeviceGetGraphicsRunningProcesses_v3(
        self, handle: FakeGpu | FakeMig
    ) -> list[SimpleNamespace]:
        gpu = self._gpu("nvmlDeviceGetGraphicsRunningProcesses_v3", handle)
        return [SimpleNamespace(pid=pid, usedGpuMemory=0) for pid in gpu.graphics_pids]


# -- scenarios -------------------------------------------------------------------------


def rtx_4090(**changes: Any) -> FakeGpu:
    values: dict[str, Any] = {
        "name": "NVIDIA GeForce RTX 4090",
        "uuid": "GPU-4090aaaa-0000-0000-0000-000000000000",
        "bus_id": "00000000:01:00.0",
        "pci_device_id": 0x2684,
        "memory_total_mib": 24564,
        "memory_used_mib": 1234,
        "bus_width_bits": 384,
        "cuda_cores": 16384,
        "compute_capability": (8, 9),
        "sm_clock_max_mhz": 3120,
        "memory_clock_max_mhz": 10501,
        "power_limit_mw": 450_000,
        "power_default_limit_mw": 450_000,
        "compute_pids": (4242,),
        "graphics_pids": (4242, 777),
    }
    values.update(changes)
    return FakeGpu(**values)


def rtx_3080_12gb(**changes: Any) -> FakeGpu:
    values: dict[str, Any] = {
        "name": "NVIDIA GeForce RTX 3080",
        "uuid": "GPU-3080bbbb-0000-0000-0000-000000000000",
        "bus_id": "00000000:41:00.0",
        "pci_device_id": 0x220A,
        "memory_total_mib": 12288,
        "memory_used_mib": 300,
        "bus_width_bits": 384,
        "cuda_cores": 8960,
        "compute_capability": (8, 6),
        "pcie_gen": (4, 4),
        "clock_event_reasons": 0x4 | 0x20,
    }
    values.update(changes)
    return FakeGpu(**values)


def two_gpus() -> FakePynvml:
    """An RTX 4090 and an RTX 3080 12GB (same NVML name as the 10GB card)."""
    return FakePynvml([rtx_4090(), rtx_3080_12gb()])


def unsupported_fields() -> FakePynvml:
    """A laptop GPU where fan, ECC and power queries are not supported."""
    laptop = FakeGpu(
        name="NVIDIA GeForce RTX 3060 Laptop GPU",
        uuid="GPU-3060cccc-0000-0000-0000-000000000000",
        bus_id="00000000:01:00.0",
        pci_device_id=0x2520,
        memory_total_mib=6144,
        bus_width_bits=192,
        cuda_cores=3840,
        ecc=None,
        unsupported=frozenset(
            {
                "nvmlDeviceGetFanSpeed",
                "nvmlDeviceGetEccMode",
                "nvmlDeviceGetEnforcedPowerLimit",
                "nvmlDeviceGetPowerManagementDefaultLimit",
                "nvmlDeviceGetPowerUsage",
            }
        ),
    )
    return FakePynvml([laptop])


def mig_a100() -> FakePynvml:
    """An A100 40GB with MIG on and two 3g.20gb instances in slots 0 and 2 of 7."""
    parent = FakeGpu(
        name="NVIDIA A100-SXM4-40GB",
        uuid="GPU-a100dddd-0000-0000-0000-000000000000",
        bus_id="00000000:07:00.0",
        pci_device_id=0x20B0,
        memory_total_mib=40960,
        memory_used_mib=2000,
        bus_width_bits=5120,
        cuda_cores=6912,
        compute_capability=(8, 0),
        power_limit_mw=400_000,
        power_default_limit_mw=400_000,
        fan_percent=0,
        ecc=(1, 1),
        mig_mode=(1, 1),
        mig_slots=7,
        unsupported=frozenset({"nvmlDeviceGetFanSpeed"}),
    )
    parent.migs = {
        0: FakeMig(
            name="NVIDIA A100-SXM4-40GB MIG 3g.20gb",
            uuid="MIG-aaaa0000-0000-0000-0000-000000000001",
            memory_total_mib=19968,
            memory_used_mib=13,
            gpu_instance_id=1,
            compute_instance_id=0,
            sm_count=42,
            index=0,
        ),
        2: FakeMig(
            name="NVIDIA A100-SXM4-40GB MIG 3g.20gb",
            uuid="MIG-aaaa0000-0000-0000-0000-000000000002",
            memory_total_mib=19968,
            memory_used_mib=1500,
            gpu_instance_id=2,
            compute_instance_id=0,
            sm_count=42,
            index=1,
        ),
    }
    return FakePynvml([parent])


def init_failure(error: type[real.NVMLError]) -> FakePynvml:
    """nvmlInit raises ``error`` (driver not loaded, version mismatch, ...)."""
    return FakePynvml([], init_error=error)


def driver_not_loaded() -> FakePynvml:
    return init_failure(real.NVMLError_DriverNotLoaded)


def version_mismatch() -> FakePynvml:
    return init_failure(real.NVMLError_LibRmVersionMismatch)


def no_permission() -> FakePynvml:
    """nvmlInit works but the only GPU cannot be opened (cgroup / device-file rules)."""
    return FakePynvml([rtx_4090(handle_error=real.NVMLError_NoPermission)])


def zero_devices() -> FakePynvml:
    return FakePynvml([])


def lost_during_monitoring(after_samples: int = 2) -> FakePynvml:
    """Two GPUs; the second falls off the bus after ``after_samples`` utilization reads."""
    return FakePynvml([rtx_4090(), rtx_3080_12gb(lose_after_samples=after_samples)])


#: Functions an older driver lacks (the binding raises FunctionNotFound for them).
OLD_DRIVER_MISSING = frozenset(
    {
        "nvmlDeviceGetMemoryBusWidth",
        "nvmlDeviceGetNumGpuCores",
        "nvmlSystemGetCudaDriverVersion_v2",
        "nvmlDeviceGetCurrentClocksEventReasons",
    }
)


def missing_function() -> FakePynvml:
    """An older driver: some functions missing; one the binding lacks entirely."""
    return FakePynvml(
        [rtx_4090()],
        missing=OLD_DRIVER_MISSING,
        absent=frozenset({"nvmlDeviceGetGraphicsRunningProcesses_v3"}),
    )


#: Every scenario by name, for parametrised tests.
SCENARIOS = {
    "two_gpus": two_gpus,
    "unsupported_fields": unsupported_fields,
    "mig_a100": mig_a100,
    "driver_not_loaded": driver_not_loaded,
    "version_mismatch": version_mismatch,
    "no_permission": no_permission,
    "zero_devices": zero_devices,
    "lost_during_monitoring": lost_during_monitoring,
    "missing_function": missing_function,
}
