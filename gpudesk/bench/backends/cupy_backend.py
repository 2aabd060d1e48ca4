"""The CuPy backend: CUDA GEMM, device copy and host/device transfers.

``cupy`` is imported only here, and only when the backend is used; without it
(or without a CUDA driver) the backend reports itself unavailable with the
reason. CuPy has no bfloat16 arrays, and its FP32 GEMM uses TF32 only when
the ``CUPY_TF32=1`` environment variable was set before import: then the FP32
GEMM is measured and reported as ``tf32``, set against the TF32 tensor peak.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, Literal

from pydantic import JsonValue

from gpudesk.bench.backends.base import (
    OOM_MARKERS,
    STICKY_MARKERS,
    BackendError,
    BackendStatus,
    DeviceFailed,
    DeviceInfo,
    OutOfMemory,
    TimerName,
    Workload,
    error_mentions,
)
from gpudesk.bench.plan import Capabilities

INSTALL_HINT = (
    "install it from the GPUDesk checkout with `pip install '.[cupy]'` (matching your CUDA version)"
)
#: cudaError_t / cublasStatus_t codes (CUDA runtime API and cuBLAS docs).
_CUDA_ERROR_MEMORY_ALLOCATION = 2
_CUBLAS_STATUS_ALLOC_FAILED = 3
_STICKY_CUDA_ERRORS = frozenset({214, 700, 710, 714, 715, 716, 719})


def tf32_enabled_at_import() -> bool:
    """CuPy reads ``CUPY_TF32`` once, at import: FP32 matmul then uses TF32 tensor cores."""
    return os.environ.get("CUPY_TF32") == "1"


def is_oom(cupy: Any, exc: BaseException) -> bool:
    """Out of memory in all its CuPy forms: the pool's OutOfMemoryError, a failed
    pinned host allocation (CUDARuntimeError cudaErrorMemoryAllocation), and a
    cuBLAS workspace that could not be allocated (CUBLAS_STATUS_ALLOC_FAILED)."""
    found = getattr(getattr(getattr(cupy, "cuda", None), "memory", None), "OutOfMemoryError", None)
    if isinstance(exc, MemoryError) or (isinstance(found, type) and isinstance(exc, found)):
        return True
    status = getattr(exc, "status", None)
    name = type(exc).__name__
    if name == "CUDARuntimeError" and status == _CUDA_ERROR_MEMORY_ALLOCATION:
        return True
    if name == "CUBLASError" and status == _CUBLAS_STATUS_ALLOC_FAILED:
        return True
    return error_mentions(exc, OOM_MARKERS)


def is_sticky(exc: BaseException) -> bool:
    """A CUDA error after which this process's context is unusable (illegal address...)."""
    status = getattr(exc, "status", None)
    if type(exc).__name__ in ("CUDARuntimeError", "CUDADriverError") and (
        status in _STICKY_CUDA_ERRORS
    ):
        return True
    return error_mentions(exc, STICKY_MARKERS)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace").strip("\x00").strip()
    return str(value)


class CupyBackend:
    """CuPy on CUDA devices.

    Args:
        module: the ``cupy`` module to use; imported on first use when None
            (tests pass a fake).
    """

    name = "cupy"

    def __init__(self, module: Any | None = None) -> None:
        self._cupy = module

    def _load(self) -> Any:
        if self._cupy is None:
            import cupy

            self._cupy = cupy
        return self._cupy

    def status(self) -> BackendStatus:
        try:
            cupy = self._load()
        except Exception as exc:  # ImportError, or CUDA libraries missing at import
            return BackendStatus(
                name=self.name,
                available=False,
                reason=f"CuPy is not importable ({exc}); {INSTALL_HINT}",
            )
        version = str(getattr(cupy, "__version__", "unknown"))
        try:
            count = int(cupy.cuda.runtime.getDeviceCount())
        except Exception as exc:  # CUDARuntimeError: no driver, no device
            return BackendStatus(
                name=self.name,
                available=False,
                reason=f"CUDA is not usable: {exc}",
                version=version,
            )
        if count == 0:
            return BackendStatus(
                name=self.name, available=False, reason="CuPy sees no CUDA device", version=version
            )
        return BackendStatus(name=self.name, available=True, version=version)

    def _require(self) -> Any:
        status = self.status()
        if not status.available:
            raise BackendError(status.reason)
        return self._load()

    def devices(self) -> list[DeviceInfo]:
        cupy = self._require()
        return [self._device(cupy, index) for index in range(cupy.cuda.runtime.getDeviceCount())]

    def _device(self, cupy: Any, index: int) -> DeviceInfo:
        count = int(cupy.cuda.runtime.getDeviceCount())
        if not 0 <= index < count:
            raise BackendError(f"no CUDA device {index}: CuPy sees {count}")
        props = cupy.cuda.runtime.getDeviceProperties(index)
        uuid = props.get("uuid")
        bus_id = None
        if "pciBusID" in props and "pciDeviceID" in props:
            # pciDeviceID is the slot on the bus, not the product id (that comes from NVML).
            domain, bus, slot = props.get("pciDomainID", 0), props["pciBusID"], props["pciDeviceID"]
            bus_id = f"{domain:08x}:{bus:02x}:{slot:02x}.0"
        l2 = props.get("l2CacheSize")
        return DeviceInfo(
            kind="cuda",
            index=index,
            name=_text(props.get("name", f"CUDA device {index}")),
            vendor="NVIDIA",
            memory_total_bytes=int(props["totalGlobalMem"]) if "totalGlobalMem" in props else None,
            uuid=_uuid_text(uuid),
            pci_bus_id=bus_id,
            compute_capability=f"{props.get('major', 0)}.{props.get('minor', 0)}",
            multiprocessor_count=props.get("multiProcessorCount"),
            last_level_cache_bytes=int(l2) if isinstance(l2, int) and l2 > 0 else None,
        )

    def capabilities(self, device_index: int) -> Capabilities:
        cupy = self._require()
        device = self._device(cupy, device_index)
        # With CUPY_TF32=1 an FP32 GEMM is a TF32 GEMM: it is listed (and measured) as tf32.
        fp32 = "tf32" if tf32_enabled_at_import() else "fp32"
        return Capabilities(
            kind="cuda",
            tests=("gemm", "copy", "h2d", "d2h", "sweep"),
            gemm_dtypes=("fp64", fp32, "fp16"),
            last_level_cache_bytes=device.last_level_cache_bytes,
        )

    def open(self, device_index: int) -> CupySession:
        cupy = self._require()
        device = self._device(cupy, device_index)
        try:
            cupy.cuda.Device(device_index).use()
        except Exception as exc:
            raise BackendError(f"cannot use CUDA device {device_index}: {exc}") from exc
        return CupySession(cupy, device)


def _uuid_text(value: Any) -> str | None:
    """CUDA gives the UUID as 16 raw bytes; NVML's form is 8-4-4-4-12 hex."""
    if isinstance(value, bytes | bytearray) and len(value) == 16:
        h = bytes(value).hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    if value:
        return _text(value)
    return None


class CupySession:
    """One CUDA device opened with CuPy."""

    timer: TimerName = "cuda_events"

    def __init__(self, cupy: Any, device: DeviceInfo) -> None:
        self.cupy = cupy
        self.device = device

    @contextlib.contextmanager
    def allocating(self, what: str) -> Iterator[None]:
        """Out-of-memory becomes :class:`OutOfMemory`; a sticky CUDA error :class:`DeviceFailed`."""
        try:
            yield
        except Exception as exc:
            if is_oom(self.cupy, exc):
                self.free_pools()
                raise OutOfMemory(f"{what}: {exc}") from exc
            if is_sticky(exc):
                raise DeviceFailed(f"{what}: {exc}") from exc
            raise

    def free_pools(self) -> None:
        with contextlib.suppress(Exception):
            self.cupy.get_default_memory_pool().free_all_blocks()
            self.cupy.get_default_pinned_memory_pool().free_all_blocks()

    def free_memory_bytes(self) -> int | None:
        """The driver's free memory plus the blocks CuPy's pool holds unused (reused first)."""
        free, _total = self.cupy.cuda.runtime.memGetInfo()
        pooled = 0
        with contextlib.suppress(Exception):
            pooled = int(self.cupy.get_default_memory_pool().free_bytes())
        return int(free) + max(0, pooled)

    def environment(self) -> dict[str, JsonValue]:
        runtime = self.cupy.cuda.runtime
        env: dict[str, JsonValue] = {
            "cupy": str(getattr(self.cupy, "__version__", "unknown")),
            "compute_capability": self.device.compute_capability,
            "fp32_gemm_uses_tf32": tf32_enabled_at_import(),
        }
        for key, function in (
            ("cuda_runtime", "runtimeGetVersion"),
            ("cuda_driver_api", "driverGetVersion"),
        ):
            with contextlib.suppress(Exception):
                value = int(getattr(runtime, function)())
                env[key] = f"{value // 1000}.{value % 1000 // 10}"
        return env

    def gemm(self, dtype: str, n: int) -> Workload:
        cp = self.cupy
        if dtype not in ("fp64", "fp32", "tf32", "fp16"):
            raise BackendError(f"CuPy measures fp64, fp32/tf32 and fp16 GEMM, not {dtype}")
        if dtype == "tf32" and not tf32_enabled_at_import():
            raise BackendError(
                "CuPy uses TF32 for FP32 GEMM only when CUPY_TF32=1 is set before it is "
                "imported: set it to measure tf32"
            )
        with self.allocating(f"GEMM {dtype} n={n}"):
            if dtype == "fp16":
                # cupy.random draws float32/float64 only.
                a = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
                b = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
            else:
                kind = cp.float64 if dtype == "fp64" else cp.float32
                a = cp.random.standard_normal((n, n), dtype=kind)
                b = cp.random.standard_normal((n, n), dtype=kind)
            c = cp.empty_like(a)
        return _CupyTimed(self, 2.0 * n**3, [a, b, c], lambda: cp.matmul(a, b, out=c))

    def copy(self, nbytes: int) -> Workload:
        cp = self.cupy
        count = max(1, nbytes // 4)
        with self.allocating(f"copy of {nbytes} bytes"):
            src = cp.ones(count, dtype=cp.float32)
            dst = cp.empty_like(src)
        return _CupyTimed(self, 2.0 * count * 4, [src, dst], lambda: cp.copyto(dst, src))

    def transfer(self, direction: Literal["h2d", "d2h"], pinned: bool, nbytes: int) -> Workload:
        import numpy as np

        cp = self.cupy
        with self.allocating(f"{direction} of {nbytes} bytes"):
            if pinned:
                import cupyx

                host = cupyx.empty_pinned((nbytes,), dtype=np.uint8)
                host.fill(1)
            else:
                host = np.ones(nbytes, dtype=np.uint8)
            device = cp.empty(nbytes, dtype=cp.uint8)
        stream = cp.cuda.get_current_stream()
        if direction == "h2d":
            call: Callable[[], Any] = lambda: device.set(host, stream=stream)  # noqa: E731
        else:
            call = lambda: device.get(stream=stream, out=host)  # noqa: E731
        return _CupyTimed(self, float(nbytes), [host, device], call)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.cupy.cuda.Device(self.device.index).synchronize()
        self.free_pools()


class _CupyTimed:
    """Calls ``call`` between two CUDA events; the end event is waited for."""

    sliceable = False

    def __init__(
        self, session: CupySession, work: float, arrays: list[Any], call: Callable[[], Any]
    ) -> None:
        self._session = session
        self.work = work
        self._arrays: list[Any] | None = arrays
        self._call: Callable[[], Any] | None = call

    def run(self, iterations: int, check: Callable[[], None]) -> float:
        cp = self._session.cupy
        call = self._call
        if call is None:
            raise RuntimeError("workload already released")
        start, end = cp.cuda.Event(), cp.cuda.Event()
        with self._session.allocating("running"):
            start.record()
            for _ in range(iterations):
                call()
            end.record()
            end.synchronize()
        return float(cp.cuda.get_elapsed_time(start, end)) / 1000.0

    def release(self) -> None:
        if self._arrays is None:
            return
        self._arrays = None
        self._call = None
        with contextlib.suppress(Exception):
            self._session.cupy.cuda.Device(self._session.device.index).synchronize()
        self._session.free_pools()
