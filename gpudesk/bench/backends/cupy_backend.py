"""The CuPy backend: CUDA GEMM, device copy and host/device transfers.

``cupy`` is imported only here, and only when the backend is used; without it
(or without a CUDA driver) the backend reports itself unavailable with the
reason. CuPy has no bfloat16 arrays, and its FP32 GEMM uses TF32 only when
the ``CUPY_TF32=1`` environment variable was set before import: the result
records which.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, Literal

from pydantic import JsonValue

from gpudesk.bench.backends.base import (
    BackendError,
    BackendStatus,
    DeviceInfo,
    OutOfMemory,
    TimerName,
    Workload,
)
from gpudesk.bench.plan import Capabilities

INSTALL_HINT = "install it with `pip install 'gpudesk[cupy]'` (matching your CUDA version)"


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
        return Capabilities(
            kind="cuda",
            tests=("gemm", "copy", "h2d", "d2h", "sweep"),
            gemm_dtypes=("fp64", "fp32", "fp16"),
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
        """Turn CuPy's out-of-memory errors into :class:`OutOfMemory`."""
        oom_types: tuple[type[BaseException], ...] = (MemoryError,)
        memory = getattr(self.cupy.cuda, "memory", None)
        found = getattr(memory, "OutOfMemoryError", None)
        if isinstance(found, type):
            oom_types = (*oom_types, found)
        try:
            yield
        except oom_types as exc:
            self.free_pools()
            raise OutOfMemory(f"{what}: {exc}") from exc

    def free_pools(self) -> None:
        with contextlib.suppress(Exception):
            self.cupy.get_default_memory_pool().free_all_blocks()
            self.cupy.get_default_pinned_memory_pool().free_all_blocks()

    def free_memory_bytes(self) -> int | None:
        free, _total = self.cupy.cuda.runtime.memGetInfo()
        return int(free)

    def environment(self) -> dict[str, JsonValue]:
        runtime = self.cupy.cuda.runtime
        env: dict[str, JsonValue] = {
            "cupy": str(getattr(self.cupy, "__version__", "unknown")),
            "compute_capability": self.device.compute_capability,
            "fp32_gemm_uses_tf32": os.environ.get("CUPY_TF32") == "1",
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
        if dtype not in ("fp64", "fp32", "fp16"):
            raise BackendError(f"CuPy measures fp64, fp32 and fp16 GEMM, not {dtype}")
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
