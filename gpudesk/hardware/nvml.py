"""The one place that talks to NVML (``pynvml`` from nvidia-ml-py).

Everything else gets pydantic snapshots and typed statuses from here, never a
raw ``NVMLError``. Initialisation is lazy and lock-guarded; every NVML call
holds the same lock, so shutting down at exit waits for a query in flight
(shutting NVML down under a running query can crash the process).

Each device field is read by its own call: a query the device or driver does
not support gives ``None`` ("n/a") for that field only. A function the
installed driver lacks (``NVMLError_FunctionNotFound``, or a binding without
it) is logged once per function and reads as ``None``.

Tests pass a fake module: ``Nvml(module=fake)`` or
``set_default_nvml(Nvml(module=fake))``.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from gpudesk.hardware.errors import HardwareError
from gpudesk.hardware.models import (
    MEMORY_USED_V1,
    MEMORY_USED_V2,
    DeviceKind,
    DeviceSample,
    GpuSnapshot,
    NvmlStatus,
)
from gpudesk.progress import NullProgress, Progress

_log = logging.getLogger(__name__)

# NVML return codes (stable across driver versions; nvml.h).
_ERR_NOT_SUPPORTED = 3
_ERR_NO_PERMISSION = 4
_ERR_NOT_FOUND = 6
_ERR_INSUFFICIENT_SIZE = 7
_ERR_DRIVER_NOT_LOADED = 9
_ERR_LIBRARY_NOT_FOUND = 12
_ERR_FUNCTION_NOT_FOUND = 13
_ERR_GPU_IS_LOST = 15
_ERR_LIB_RM_VERSION_MISMATCH = 18

_STATUS_BY_CODE: dict[int, NvmlStatus] = {
    _ERR_LIBRARY_NOT_FOUND: NvmlStatus.LIBRARY_NOT_FOUND,
    _ERR_DRIVER_NOT_LOADED: NvmlStatus.DRIVER_NOT_LOADED,
    _ERR_LIB_RM_VERSION_MISMATCH: NvmlStatus.VERSION_MISMATCH,
    _ERR_NO_PERMISSION: NvmlStatus.NO_PERMISSION,
    _ERR_GPU_IS_LOST: NvmlStatus.GPU_LOST,
    _ERR_FUNCTION_NOT_FOUND: NvmlStatus.DRIVER_TOO_OLD,
}

# NVML enum values used below (nvml.h); the binding's constants have the same values.
_CLOCK_SM = 1
_CLOCK_MEM = 2
_TEMPERATURE_GPU = 0
_FEATURE_ENABLED = 1
_MIG_ENABLED = 1
_MEMORY_ERROR_UNCORRECTED = 1
_ECC_COUNTER_VOLATILE = 0
_ECC_COUNTER_AGGREGATE = 1
#: nvmlComputeMode_t (1, "exclusive thread", was removed from drivers long ago).
COMPUTE_MODES: dict[int, str] = {
    0: "default",
    1: "exclusive_thread",
    2: "prohibited",
    3: "exclusive_process",
}

#: Clock-event ("throttle") reason bits, named like nvidia-smi's fields.
CLOCK_EVENT_REASONS: dict[int, str] = {
    0x001: "gpu_idle",
    0x002: "applications_clocks_setting",
    0x004: "sw_power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal_slowdown",
    0x040: "hw_thermal_slowdown",
    0x080: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}

#: Running-process queries, newest symbol first: "_v3" (R510+), "_v2" (R470+),
#: then the unversioned symbol, which fills the original two-field struct.
_PROCESS_QUERIES: tuple[tuple[str, ...], ...] = tuple(
    (f"{base}_v3", f"{base}_v2", base)
    for base in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses")
)


class _ProcessInfoV1(ctypes.Structure):
    """``nvmlProcessInfo_v1_t``: what the unversioned process queries fill (nvml.h)."""

    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class FailureKind(Enum):
    """What one failed NVML call means for the field it was reading."""

    #: The driver (or the binding) lacks the function: try an older one, else n/a.
    MISSING = "missing"
    #: The device stopped answering.
    LOST = "lost"
    #: Not supported on this device (GeForce, MIG, laptop): n/a.
    NOT_SUPPORTED = "not_supported"
    #: Nothing there (an empty MIG slot, an unknown UUID).
    NOT_FOUND = "not_found"
    #: Anything else: n/a for a field, a status for initialisation.
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class NvmlFailure:
    """One classified failure: its kind, the status a user sees, and the text."""

    kind: FailureKind
    status: NvmlStatus
    detail: str


_KIND_BY_CODE: dict[int, FailureKind] = {
    _ERR_FUNCTION_NOT_FOUND: FailureKind.MISSING,
    _ERR_GPU_IS_LOST: FailureKind.LOST,
    _ERR_NOT_SUPPORTED: FailureKind.NOT_SUPPORTED,
    _ERR_NOT_FOUND: FailureKind.NOT_FOUND,
}


def classify_failure(exc: Exception, module: Any) -> NvmlFailure:
    """The one error classifier for everything NVML or its binding can raise.

    ``NVMLError_*`` map by their code; nvidia-ml-py's ``NVMLLibraryMismatchError``
    (a plain ``Exception`` its unversioned wrappers raise when the driver lacks
    the versioned symbol) and a binding without the function read as missing;
    ctypes and any other error as a plain failure.
    """
    detail = str(exc) or type(exc).__name__
    error_class = getattr(module, "NVMLError", None)
    if isinstance(error_class, type) and isinstance(exc, error_class):
        code = getattr(exc, "value", None)
        if isinstance(code, int):
            return NvmlFailure(
                _KIND_BY_CODE.get(code, FailureKind.FAILED),
                _STATUS_BY_CODE.get(code, NvmlStatus.UNKNOWN),
                detail,
            )
        return NvmlFailure(FailureKind.FAILED, NvmlStatus.UNKNOWN, detail)
    mismatch = getattr(module, "NVMLLibraryMismatchError", None)
    if (isinstance(mismatch, type) and isinstance(exc, mismatch)) or isinstance(
        exc, AttributeError
    ):
        return NvmlFailure(FailureKind.MISSING, NvmlStatus.DRIVER_TOO_OLD, detail)
    return NvmlFailure(FailureKind.FAILED, NvmlStatus.UNKNOWN, f"{type(exc).__name__}: {detail}")


class GpuLostError(HardwareError):
    """A device stopped answering (NVML "GPU is lost"); the caller marks it lost."""


class NvmlUnavailableError(HardwareError):
    """NVML cannot be used at all; ``status`` says why."""

    def __init__(self, status: NvmlStatus, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class _Missing:
    """Marker: the function does not exist in this binding or driver."""


_MISSING = _Missing()


@dataclass(frozen=True, slots=True)
class NvmlReading:
    """What NVML said about the driver and the devices (system-wide CPU/RAM not included)."""

    status: NvmlStatus
    detail: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    nvml_version: str | None = None
    gpus: tuple[GpuSnapshot, ...] = ()


def decode_clock_event_reasons(mask: int) -> tuple[str, ...]:
    """Name the set bits of an NVML clock-event reason mask; unknown bits as hex."""
    names = [name for bit, name in CLOCK_EVENT_REASONS.items() if mask & bit]
    unknown = mask & ~sum(CLOCK_EVENT_REASONS)
    if unknown:
        names.append(f"0x{unknown:x}")
    return tuple(names)


def format_cuda_version(value: int) -> str:
    """NVML's CUDA driver version integer (12040) as "12.4"."""
    return f"{value // 1000}.{value % 1000 // 10}"


def _text(value: Any) -> str:
    # Recent bindings return str; older ones (and ctypes struct fields) give bytes.
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace").strip("\x00").strip()
    return str(value).strip()


def _watts(milliwatts: Any) -> float | None:
    return None if milliwatts is None else round(int(milliwatts) / 1000.0, 1)


def _mib(value_bytes: Any) -> int:
    return int(value_bytes) // (1024 * 1024)


#: NVML's "value not available" for unsigned long long fields (nvml.h).
_VALUE_NOT_AVAILABLE_ULL = 2**64 - 1


def _process_memory(process: Any) -> int | None:
    """A process record's ``usedGpuMemory`` in bytes; None when NVML cannot say."""
    value = getattr(process, "usedGpuMemory", None)
    if not isinstance(value, int) or value < 0 or value >= _VALUE_NOT_AVAILABLE_ULL:
        return None
    return value


_live_instances: weakref.WeakSet[Nvml] = weakref.WeakSet()


#: At exit, how long to wait for a query in flight before leaving NVML as it is.
EXIT_SHUTDOWN_WAIT_S = 2.0


@atexit.register
def _shutdown_all() -> None:
    # A query stuck in the driver (a GPU off the bus), abandoned by a caller with a
    # deadline, holds the lock for good: exit without shutting NVML down then.
    for nvml in list(_live_instances):
        nvml.shutdown(wait_s=EXIT_SHUTDOWN_WAIT_S)


class Nvml:
    """Lazy, thread-safe access to NVML.

    Args:
        module: the ``pynvml`` module to use; imported on first use when None.
            Tests pass a fake that raises the binding's real ``NVMLError_*``.
    """

    def __init__(self, module: Any | None = None) -> None:
        self._module = module
        self._lock = threading.RLock()
        self._initialised = False
        self._logged: set[str] = set()

    # -- library and initialisation -------------------------------------------------

    @property
    def module(self) -> Any:
        if self._module is None:
            import pynvml

            self._module = pynvml
        return self._module

    @property
    def initialised(self) -> bool:
        return self._initialised

    def classify(self, exc: Exception) -> NvmlFailure:
        """:func:`classify_failure` against this instance's binding."""
        return classify_failure(exc, self.module)

    def status_for(self, exc: Exception) -> NvmlStatus:
        """Map an NVML error to the status a user sees."""
        return self.classify(exc).status

    def init(self) -> None:
        """Initialise NVML once; safe to call again (a failed init is retried).

        nvidia-ml-py's ``nvmlInit`` calls ``nvmlInitWithFlags``; a driver
        without it is asked for ``nvmlInit_v2`` directly. A driver with neither
        gets :attr:`NvmlStatus.DRIVER_TOO_OLD`.

        Raises:
            NvmlUnavailableError: with the status and NVML's own message.
        """
        with self._lock:
            if self._initialised:
                return
            try:
                module = self.module
            except ImportError as exc:
                raise NvmlUnavailableError(
                    NvmlStatus.LIBRARY_NOT_FOUND, f"the nvidia-ml-py binding is missing: {exc}"
                ) from exc
            try:
                module.nvmlInit()
            except Exception as exc:
                failure = self.classify(exc)
                if failure.kind is not FailureKind.MISSING:
                    raise NvmlUnavailableError(failure.status, failure.detail) from exc
                self._init_v2(module, failure)
            self._initialised = True
            _live_instances.add(self)

    def _init_v2(self, module: Any, first: NvmlFailure) -> None:
        try:
            function = module._nvmlGetFunctionPointer("nvmlInit_v2")
            module._nvmlCheckReturn(function())
        except Exception as exc:
            failure = self.classify(exc)
            if failure.kind is FailureKind.MISSING:
                raise NvmlUnavailableError(
                    NvmlStatus.DRIVER_TOO_OLD,
                    f"the driver has neither nvmlInitWithFlags nor nvmlInit_v2 ({first.detail})",
                ) from exc
            raise NvmlUnavailableError(failure.status, failure.detail) from exc
        _log.info("initialised NVML through nvmlInit_v2 (the driver lacks nvmlInitWithFlags)")

    def shutdown(self, wait_s: float | None = None) -> None:
        """Shut NVML down; waits for a query in flight. Safe to call twice.

        Args:
            wait_s: wait at most this long for a query in flight, then leave NVML
                initialised (None: as long as it takes).
        """
        if not self._lock.acquire(timeout=-1 if wait_s is None else max(0.0, wait_s)):
            _log.info("an NVML query is still in flight after %g s: NVML left as it is", wait_s)
            return
        try:
            if not self._initialised:
                return
            self._initialised = False
            try:
                self.module.nvmlShutdown()
            except Exception as exc:
                # At exit nothing useful can be done about a failed shutdown.
                _log.debug("nvmlShutdown failed: %s", exc)
        finally:
            self._lock.release()

    # -- calls --------------------------------------------------------------------

    def _log_once(self, name: str, failure: NvmlFailure) -> None:
        if name in self._logged:
            return
        self._logged.add(name)
        if failure.kind is FailureKind.MISSING:
            _log.info("NVML function %s is not available in this driver; reads as n/a", name)
        elif failure.kind is FailureKind.NOT_SUPPORTED:
            _log.debug("NVML %s: not supported here; reads as n/a", name)
        else:
            _log.info("NVML %s failed (%s); reads as n/a", name, failure.detail)

    def call(self, name: str, *args: Any) -> Any:
        """Call an NVML function, letting its errors through (init is done first)."""
        with self._lock:
            self.init()
            function: Callable[..., Any] | None = getattr(self.module, name, None)
            if function is None:
                self._log_once(name, NvmlFailure(FailureKind.MISSING, NvmlStatus.UNKNOWN, name))
                raise NvmlUnavailableError(NvmlStatus.UNKNOWN, f"{name} is missing")
            return function(*args)

    def _query(
        self,
        name: str,
        *args: Any,
        function: Callable[..., Any] | None = None,
        label: str | None = None,
    ) -> Any:
        """One field: the value, None (n/a) or :data:`_MISSING`; never raises but for a lost GPU.

        ``function`` replaces the binding's attribute ``name`` (a direct symbol
        call); ``label`` names it in the log.
        """
        label = label or name
        with self._lock:
            if not self._initialised:
                return None
            if function is None:
                function = getattr(self.module, name, None)
            if function is None:
                self._log_once(label, NvmlFailure(FailureKind.MISSING, NvmlStatus.UNKNOWN, label))
                return _MISSING
            try:
                return function(*args)
            except Exception as exc:
                failure = self.classify(exc)
                if failure.kind is FailureKind.LOST:
                    raise GpuLostError(f"{label}: {failure.detail}") from exc
                self._log_once(label, failure)
                return _MISSING if failure.kind is FailureKind.MISSING else None

    def query(self, name: str, *args: Any) -> Any | None:
        """One NVML query: the value, or None when unsupported, missing or failed.

        Raises:
            GpuLostError: the device stopped answering.
        """
        value = self._query(name, *args)
        return None if value is _MISSING else value

    def query_first(self, names: tuple[str, ...], *args: Any) -> Any | None:
        """Try functions in order, moving on only when one is missing (older drivers)."""
        for name in names:
            value = self._query(name, *args)
            if value is not _MISSING:
                return value
        return None

    # -- system ---------------------------------------------------------------------

    def driver_version(self) -> str | None:
        value = self.query("nvmlSystemGetDriverVersion")
        return None if value is None else _text(value)

    def cuda_driver_version(self) -> str | None:
        value = self.query_first(
            ("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion")
        )
        return None if value is None else format_cuda_version(int(value))

    def nvml_version(self) -> str | None:
        value = self.query("nvmlSystemGetNVMLVersion")
        return None if value is None else _text(value)

    # -- devices --------------------------------------------------------------------

    def _unavailable(self, exc: Exception, what: str) -> NvmlUnavailableError | GpuLostError:
        failure = self.classify(exc)
        if failure.kind is FailureKind.LOST:
            return GpuLostError(f"{what}: {failure.detail}")
        status = NvmlStatus.UNKNOWN if failure.kind is FailureKind.NOT_FOUND else failure.status
        return NvmlUnavailableError(status, f"{what}: {failure.detail}")

    def device_count(self) -> int:
        """Physical GPUs NVML sees (MIG instances not counted).

        Raises:
            NvmlUnavailableError: NVML cannot be used, or cannot count devices.
        """
        try:
            return int(self.call("nvmlDeviceGetCount"))
        except NvmlUnavailableError:
            raise
        except Exception as exc:
            failure = self.classify(exc)
            raise NvmlUnavailableError(failure.status, failure.detail) from exc

    def _handle(self, function: str, key: int | str) -> Any:
        try:
            return self.call(function, key)
        except NvmlUnavailableError:
            raise
        except Exception as exc:
            raise self._unavailable(exc, f"device {key}") from exc

    def handle_by_index(self, index: int) -> Any:
        """The handle of physical GPU ``index``.

        Raises:
            GpuLostError: the GPU is lost.
            NvmlUnavailableError: any other failure, with its status.
        """
        return self._handle("nvmlDeviceGetHandleByIndex", index)

    def handle_by_uuid(self, uuid: str) -> Any:
        """The handle of the device with this UUID: "GPU-..." or a MIG instance's "MIG-...".

        NVML resolves MIG UUIDs in ``nvmlDeviceGetHandleByUUID`` itself (R470+);
        a bare UUID (as CUDA runtimes print it) is tried as a GPU, then as a MIG
        instance. Raises like :meth:`handle_by_index`.
        """
        if uuid.startswith(("GPU-", "MIG-")):
            return self._handle("nvmlDeviceGetHandleByUUID", uuid)
        try:
            return self._handle("nvmlDeviceGetHandleByUUID", f"GPU-{uuid}")
        except NvmlUnavailableError:
            return self._handle("nvmlDeviceGetHandleByUUID", f"MIG-{uuid}")

    def is_mig_handle(self, handle: Any) -> bool:
        """Whether ``handle`` is a MIG instance (False when the driver cannot say)."""
        value = self.query("nvmlDeviceIsMigDeviceHandle", handle)
        # nvidia-ml-py returns the ctypes c_uint itself here.
        return bool(getattr(value, "value", value)) if value is not None else False

    def read_device(self, handle: Any, index: int) -> GpuSnapshot:
        """Read a handle from a UUID lookup: a physical GPU, or a MIG instance with its parent."""
        if not self.is_mig_handle(handle):
            return self.read_gpu(handle, index)
        parent_handle = self.query("nvmlDeviceGetDeviceHandleFromMigDeviceHandle", handle)
        if parent_handle is None:
            return self.read_mig(handle, GpuSnapshot(), 0)
        parent_index = self.query("nvmlDeviceGetIndex", parent_handle)
        parent = self.read_gpu(parent_handle, int(parent_index) if parent_index is not None else 0)
        uuid = self.query("nvmlDeviceGetUUID", handle)
        position = 0
        for slot, mig in enumerate(self.mig_handles(parent_handle)):
            if uuid is not None and self.query("nvmlDeviceGetUUID", mig) == uuid:
                position = slot
        return self.read_mig(handle, parent, position)

    def read_all(self, progress: Progress | None = None) -> NvmlReading:
        """Read the driver and every device: physical GPUs, then each one's MIG instances.

        Never raises for NVML trouble: the reading carries a status and detail.
        """
        progress = progress or NullProgress()
        try:
            count = self.device_count()
        except NvmlUnavailableError as exc:
            return NvmlReading(status=exc.status, detail=exc.detail)
        driver, cuda, library = (
            self.driver_version(),
            self.cuda_driver_version(),
            self.nvml_version(),
        )
        gpus: list[GpuSnapshot] = []
        failures: list[NvmlUnavailableError] = []
        for index in range(count):
            progress.check()
            progress.report(index / max(count, 1), f"reading GPU {index}")
            try:
                handle = self.handle_by_index(index)
            except GpuLostError as exc:
                _log.info("%s", exc)
                gpus.append(GpuSnapshot(index=index, lost=True))
                continue
            except NvmlUnavailableError as exc:
                _log.info("cannot open GPU %d: %s", index, exc.detail)
                failures.append(exc)
                continue
            gpu = self.read_gpu(handle, index)
            instances: list[GpuSnapshot] = []
            if not gpu.lost:
                try:
                    mig_handles = self.mig_handles(handle)
                except GpuLostError:
                    gpu = gpu.model_copy(update={"lost": True})
                    mig_handles = []
                instances = [
                    self.read_mig(mig, gpu, position) for position, mig in enumerate(mig_handles)
                ]
                if gpu.mig_enabled:
                    gpu = gpu.model_copy(update={"mig_instance_count": len(instances)})
            gpus.append(gpu)
            gpus.extend(instances)
        progress.report(1.0, "done")
        status, detail = NvmlStatus.OK, None
        if any(gpu.lost for gpu in gpus):
            lost = ", ".join(str(gpu.index) for gpu in gpus if gpu.lost)
            status, detail = NvmlStatus.GPU_LOST, f"lost: GPU {lost}"
        elif count == 0:
            status, detail = NvmlStatus.NO_DEVICES, "nvmlDeviceGetCount() returned 0"
        elif failures:
            detail = "; ".join(failure.detail for failure in failures)
            if not gpus:
                status = failures[0].status
        return NvmlReading(
            status=status,
            detail=detail,
            driver_version=driver,
            cuda_driver_version=cuda,
            nvml_version=library,
            gpus=tuple(gpus),
        )

    def read_gpu(self, handle: Any, index: int) -> GpuSnapshot:
        """Read every field of one physical GPU; a lost GPU gives ``lost=True``."""
        fields: dict[str, Any] = {"kind": DeviceKind.GPU, "index": index}
        try:
            self._read_identity(handle, fields)
            self._read_memory(handle, fields)
            self._read_compute(handle, fields)
            self._read_power_thermal(handle, fields)
            self._read_pcie(handle, fields)
            self._read_features(handle, fields)
            self._read_health(handle, fields)
        except GpuLostError as exc:
            _log.warning("GPU %d lost while reading it: %s", index, exc)
            return GpuSnapshot(**fields, lost=True)
        return GpuSnapshot(**fields)

    def mig_handles(self, handle: Any) -> list[Any]:
        """Handles of the MIG instances under a physical GPU (empty when MIG is off)."""
        mode = self.query("nvmlDeviceGetMigMode", handle)
        if mode is None or int(mode[0]) != _MIG_ENABLED:
            return []
        slots = self.query("nvmlDeviceGetMaxMigDeviceCount", handle) or 0
        handles = []
        for slot in range(int(slots)):
            # An empty slot raises NVMLError_NotFound, which query() turns into None.
            mig = self.query("nvmlDeviceGetMigDeviceHandleByIndex", handle, slot)
            if mig is not None:
                handles.append(mig)
        return handles

    def read_mig(self, handle: Any, parent: GpuSnapshot, position: int) -> GpuSnapshot:
        """Read a MIG instance: its own name, UUID, memory and slice; the rest is the parent's.

        ``position`` (its order under the parent, like nvidia-smi's "MIG dev") is its index.
        """
        fields: dict[str, Any] = {
            "kind": DeviceKind.MIG,
            "index": position,
            "parent_uuid": parent.uuid,
            "parent_index": parent.index,
            "pci_bus_id": parent.pci_bus_id,
            "pci_device_id": parent.pci_device_id,
            "pci_vendor_id": parent.pci_vendor_id,
            "compute_capability": parent.compute_capability,
        }
        try:
            name = self.query("nvmlDeviceGetName", handle)
            fields["name"] = None if name is None else _text(name)
            uuid = self.query("nvmlDeviceGetUUID", handle)
            fields["uuid"] = None if uuid is None else _text(uuid)
            gi = self.query("nvmlDeviceGetGpuInstanceId", handle)
            fields["mig_gpu_instance_id"] = None if gi is None else int(gi)
            ci = self.query("nvmlDeviceGetComputeInstanceId", handle)
            fields["mig_compute_instance_id"] = None if ci is None else int(ci)
            attributes = self.query("nvmlDeviceGetAttributes", handle)
            if attributes is not None:
                fields["sm_count"] = int(attributes.multiprocessorCount)
            self._read_memory(handle, fields)
        except GpuLostError as exc:
            _log.warning("MIG instance of GPU %s lost: %s", parent.index, exc)
            return GpuSnapshot(**fields, lost=True)
        return GpuSnapshot(**fields)

    def _read_identity(self, handle: Any, fields: dict[str, Any]) -> None:
        name = self.query("nvmlDeviceGetName", handle)
        fields["name"] = None if name is None else _text(name)
        uuid = self.query("nvmlDeviceGetUUID", handle)
        fields["uuid"] = None if uuid is None else _text(uuid)
        pci = self.query("nvmlDeviceGetPciInfo", handle)
        if pci is not None:
            fields["pci_bus_id"] = _text(pci.busId)
            # pciDeviceId packs the device id (high 16 bits) and vendor id (low 16 bits).
            combined = int(pci.pciDeviceId)
            fields["pci_device_id"] = f"0x{combined >> 16:04x}"
            fields["pci_vendor_id"] = f"0x{combined & 0xFFFF:04x}"

    def memory_info(self, handle: Any) -> tuple[Any, str] | None:
        """``(memory info, source)``: ``nvmlDeviceGetMemoryInfo_v2`` where the driver has it.

        v2 (R515+) reports driver-reserved memory apart, so its "used" is what
        nvidia-smi shows; v1's "used" includes the reserved part.
        """
        version = getattr(self.module, "nvmlMemory_v2", None)
        if version is not None:
            memory = self._query(
                "nvmlDeviceGetMemoryInfo", handle, version, label="nvmlDeviceGetMemoryInfo_v2"
            )
            if memory is not None and memory is not _MISSING:
                return memory, MEMORY_USED_V2
        memory = self.query("nvmlDeviceGetMemoryInfo", handle)
        return None if memory is None else (memory, MEMORY_USED_V1)

    def _read_memory(self, handle: Any, fields: dict[str, Any]) -> None:
        found = self.memory_info(handle)
        if found is None:
            return
        memory, source = found
        fields["memory_total_mib"] = _mib(memory.total)
        fields["memory_used_mib"] = _mib(memory.used)
        fields["memory_free_mib"] = _mib(memory.free)
        fields["memory_used_source"] = source
        if source == MEMORY_USED_V2:
            fields["memory_reserved_mib"] = _mib(memory.reserved)

    def _read_compute(self, handle: Any, fields: dict[str, Any]) -> None:
        width = self.query("nvmlDeviceGetMemoryBusWidth", handle)
        fields["memory_bus_width_bits"] = None if width is None else int(width)
        cores = self.query("nvmlDeviceGetNumGpuCores", handle)
        fields["cuda_cores"] = None if cores is None else int(cores)
        capability = self.query("nvmlDeviceGetCudaComputeCapability", handle)
        if capability is not None:
            fields["compute_capability"] = f"{int(capability[0])}.{int(capability[1])}"
        for key, function, clock in (
            ("sm_clock_mhz", "nvmlDeviceGetClockInfo", _CLOCK_SM),
            ("sm_clock_max_mhz", "nvmlDeviceGetMaxClockInfo", _CLOCK_SM),
            ("memory_clock_mhz", "nvmlDeviceGetClockInfo", _CLOCK_MEM),
            ("memory_clock_max_mhz", "nvmlDeviceGetMaxClockInfo", _CLOCK_MEM),
        ):
            value = self.query(function, handle, clock)
            fields[key] = None if value is None else int(value)
        utilization = self.query("nvmlDeviceGetUtilizationRates", handle)
        if utilization is not None:
            fields["utilization_gpu_percent"] = int(utilization.gpu)
            fields["utilization_memory_percent"] = int(utilization.memory)
        reasons = self.query_first(
            ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
            handle,
        )
        if reasons is not None:
            fields["clock_event_reasons"] = decode_clock_event_reasons(int(reasons))
        fields["running_process_count"] = self._process_count(handle)

    def _processes_v1(self, symbol: str, handle: Any) -> list[Any]:
        """An unversioned process query, called by its symbol with the v1 struct.

        nvidia-ml-py's unversioned wrappers call the ``_v3`` symbol instead, so
        this is the only way to reach the query on a pre-R470 driver.
        """
        module = self.module
        function = module._nvmlGetFunctionPointer(symbol)
        count = ctypes.c_uint(0)
        code = function(handle, ctypes.byref(count), None)
        if code == 0:
            return []
        if code != _ERR_INSUFFICIENT_SIZE:
            module._nvmlCheckReturn(code)
        count.value = count.value * 2 + 5  # room for processes started meanwhile
        infos = (_ProcessInfoV1 * count.value)()
        module._nvmlCheckReturn(function(handle, ctypes.byref(count), infos))
        return list(infos[: count.value])

    def _process_count(self, handle: Any) -> int | None:
        processes = self.running_processes(handle)
        return None if processes is None else len(processes)

    def running_processes(self, handle: Any) -> dict[int, int | None] | None:
        """Compute and graphics processes on a GPU: PID -> memory used in bytes (None: n/a).

        The newest process query the driver has, compute then graphics; None when
        neither answers. A process in both lists keeps its larger figure.

        Raises:
            GpuLostError: the device stopped answering.
        """
        found: dict[int, int | None] = {}
        answered = False
        for symbols in _PROCESS_QUERIES:
            for symbol in symbols:
                if symbol.endswith(("_v2", "_v3")):
                    processes = self._query(symbol, handle)
                else:
                    processes = self._query(
                        symbol,
                        symbol,
                        handle,
                        function=self._processes_v1,
                        label=f"{symbol} (unversioned symbol)",
                    )
                if processes is _MISSING:
                    continue
                if processes is not None:
                    answered = True
                    for process in processes:
                        used = _process_memory(process)
                        pid = int(process.pid)
                        known = found.get(pid)
                        found[pid] = used if known is None else max(known, used or 0)
                break
        return found if answered else None

    def _read_power_thermal(self, handle: Any, fields: dict[str, Any]) -> None:
        fields["power_limit_w"] = _watts(self.query("nvmlDeviceGetEnforcedPowerLimit", handle))
        fields["power_default_limit_w"] = _watts(
            self.query("nvmlDeviceGetPowerManagementDefaultLimit", handle)
        )
        fields["power_draw_w"] = _watts(self.query("nvmlDeviceGetPowerUsage", handle))
        temperature = self.query("nvmlDeviceGetTemperature", handle, _TEMPERATURE_GPU)
        fields["temperature_c"] = None if temperature is None else int(temperature)
        fan = self.query("nvmlDeviceGetFanSpeed", handle)
        fields["fan_percent"] = None if fan is None else int(fan)

    def _read_pcie(self, handle: Any, fields: dict[str, Any]) -> None:
        for key, function in (
            ("pcie_gen_current", "nvmlDeviceGetCurrPcieLinkGeneration"),
            ("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
            ("pcie_width_current", "nvmlDeviceGetCurrPcieLinkWidth"),
            ("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth"),
        ):
            value = self.query(function, handle)
            fields[key] = None if value is None else int(value)

    def _read_features(self, handle: Any, fields: dict[str, Any]) -> None:
        ecc = self.query("nvmlDeviceGetEccMode", handle)
        fields["ecc_enabled"] = None if ecc is None else int(ecc[0]) == _FEATURE_ENABLED
        mig = self.query("nvmlDeviceGetMigMode", handle)
        fields["mig_enabled"] = None if mig is None else int(mig[0]) == _MIG_ENABLED

    def _read_health(self, handle: Any, fields: dict[str, Any]) -> None:
        """What ``doctor`` checks: compute mode, uncorrected ECC errors, pending page repairs."""
        mode = self.query("nvmlDeviceGetComputeMode", handle)
        if mode is not None:
            fields["compute_mode"] = COMPUTE_MODES.get(int(mode), f"mode {int(mode)}")
        if fields.get("ecc_enabled"):
            for key, counter in (
                ("ecc_uncorrected_volatile", _ECC_COUNTER_VOLATILE),
                ("ecc_uncorrected_aggregate", _ECC_COUNTER_AGGREGATE),
            ):
                value = self.query(
                    "nvmlDeviceGetTotalEccErrors", handle, _MEMORY_ERROR_UNCORRECTED, counter
                )
                fields[key] = None if value is None else int(value)
        pending = self.query("nvmlDeviceGetRetiredPagesPendingStatus", handle)
        fields["retired_pages_pending"] = None if pending is None else bool(int(pending))
        rows = self.query("nvmlDeviceGetRemappedRows", handle)
        if rows is not None:
            fields["remapped_rows_pending"] = bool(int(rows[2]))
            fields["remapped_rows_failure"] = bool(int(rows[3]))

    # -- live sampling ----------------------------------------------------------------

    def sample(self, handle: Any, uuid: str, index: int | None) -> DeviceSample:
        """One live reading: utilization, memory used, temperature, fan, power, SM clock.

        A lost device gives ``lost=True`` instead of raising.
        """
        try:
            utilization = self.query("nvmlDeviceGetUtilizationRates", handle)
            memory = self.memory_info(handle)
            temperature = self.query("nvmlDeviceGetTemperature", handle, _TEMPERATURE_GPU)
            fan = self.query("nvmlDeviceGetFanSpeed", handle)
            power = self.query("nvmlDeviceGetPowerUsage", handle)
            clock = self.query("nvmlDeviceGetClockInfo", handle, _CLOCK_SM)
        except GpuLostError:
            return DeviceSample(uuid=uuid, index=index, lost=True)
        return DeviceSample(
            uuid=uuid,
            index=index,
            utilization_gpu_percent=None if utilization is None else int(utilization.gpu),
            utilization_memory_percent=None if utilization is None else int(utilization.memory),
            memory_used_mib=None if memory is None else _mib(memory[0].used),
            temperature_c=None if temperature is None else int(temperature),
            fan_percent=None if fan is None else int(fan),
            power_draw_w=_watts(power),
            sm_clock_mhz=None if clock is None else int(clock),
        )


_default: Nvml | None = None
_default_lock = threading.Lock()


def default_nvml() -> Nvml:
    """The process-wide :class:`Nvml` (the real binding unless a test set another)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Nvml()
        return _default


def set_default_nvml(nvml: Nvml | None) -> None:
    """Replace the process-wide instance (tests); None goes back to the real binding."""
    global _default
    with _default_lock:
        previous, _default = _default, nvml
    if previous is not None and previous is not nvml:
        previous.shutdown()
