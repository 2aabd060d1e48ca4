"""Stand-ins for ``torch`` and ``cupy`` that behave like a GPU where the backends can get it wrong.

* **Asynchronous work.** A kernel call returns at once and queues its
  duration on a simulated stream (``duration = work / rate``). An event
  records the time its queued work will be done; ``synchronize()`` waits for
  it; ``elapsed_time`` between events that are not complete raises "device
  not ready", and between events created without timing raises too (torch's
  ``Event()`` defaults to ``enable_timing=False``). So a backend that drops
  ``synchronize()`` or ``enable_timing=True`` fails, and one that times the
  host loop measures launches, not the simulated rate.
* **Memory like a caching allocator.** Freed tensors stay reserved until
  ``empty_cache()``; ``mem_get_info`` counts reserved bytes as used (the
  driver's view). bf16 is stored in 2 bytes.
* **Errors like the real ones.** Out-of-memory, cuBLAS workspace failures,
  pinned host allocation failures (CuPy's ``CUDARuntimeError`` status 2) and
  sticky errors (after an illegal address every later call fails).

Nothing is computed: only durations and bytes are modelled.
"""

from __future__ import annotations

import time
import types
from typing import Any

import numpy as np

#: Simulated device rates (slow, so a call outlasts Python's own overhead).
TORCH_TFLOPS = {"float64": 0.005, "float32": 0.01, "tf32": 0.02, "float16": 0.04, "bfloat16": 0.04}
CUPY_TFLOPS = {"float64": 0.005, "float32": 0.01, "tf32": 0.02, "float16": 0.04}
COPY_GBS = 20.0
TRANSFER_GBS = {"pinned": 5.0, "pageable": 2.0}


class Stream:
    """When the simulated device finishes the work queued so far (host perf_counter time)."""

    def __init__(self) -> None:
        self.free_at = 0.0
        self.kernels = 0

    def enqueue(self, seconds: float) -> None:
        now = time.perf_counter()
        self.free_at = max(now, self.free_at) + seconds
        self.kernels += 1

    def wait(self) -> None:
        delay = self.free_at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)


def make_event_class(
    stream: Stream, not_ready: type[Exception], timing_default: bool, module: Any
) -> type:
    class FakeEvent:
        def __init__(self, enable_timing: bool | None = None, **kwargs: Any) -> None:
            if "disable_timing" in kwargs:  # CuPy's spelling
                enable_timing = not kwargs["disable_timing"]
            self.timing = timing_default if enable_timing is None else enable_timing
            self.t: float | None = None

        def record(self, stream_arg: Any = None) -> None:
            module.check_sticky()
            self.t = max(time.perf_counter(), stream.free_at)

        def query(self) -> bool:
            return self.t is not None and time.perf_counter() >= self.t

        def synchronize(self) -> None:
            module.check_sticky()
            if self.t is not None:
                delay = self.t - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)

        def elapsed_time(self, end: FakeEvent) -> float:
            module.check_sticky()
            if not (self.timing and end.timing):
                raise RuntimeError(
                    "Both events must be created with argument 'enable_timing=True'."
                )
            if not (self.query() and end.query()):
                raise not_ready("CUDA error: device not ready")
            assert self.t is not None and end.t is not None
            return (end.t - self.t) * 1000.0

    return FakeEvent


class CachingMemory:
    """Bytes in use and reserved on the fake device, like PyTorch's caching allocator."""

    def __init__(self, capacity: int, oom_type: type[BaseException]) -> None:
        self.capacity = capacity
        self.used = 0  # allocated to live tensors
        self.reserved = 0  # used + cached (still held from the driver)
        self.oom_type = oom_type
        self.peak = 0

    def allocate(self, nbytes: int) -> None:
        if self.used + nbytes > self.reserved:
            if self.used + nbytes > self.capacity:
                raise self.oom_type(f"CUDA out of memory. Tried to allocate {nbytes} bytes")
            # Grow the reservation; the allocator frees its cache first when needed.
            self.reserved = min(self.capacity, max(self.reserved, self.used + nbytes))
        self.used += nbytes
        self.peak = max(self.peak, self.used)

    def free(self, nbytes: int) -> None:
        self.used -= nbytes  # stays reserved (cached)

    def empty_cache(self) -> None:
        self.reserved = self.used


class _Sticky:
    """After a sticky error every later call raises it again, as a corrupted context does."""

    sticky: BaseException | None = None
    inject_next: BaseException | None = None

    def check_sticky(self) -> None:
        if self.sticky is not None:
            raise self.sticky


# --- torch ---------------------------------------------------------------------------


class TorchOOM(RuntimeError):
    pass


_TORCH_ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "uint8": 1}
_TORCH_STORAGE = {
    "float64": np.float64,
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": np.float16,  # 2 bytes, as bf16 is
    "uint8": np.uint8,
}


class FakeTensor:
    def __init__(self, module: Any, shape: tuple[int, ...], on_device: bool, dtype: str) -> None:
        self._module = module
        self.shape = shape
        self.on_device = on_device
        self.dtype = dtype
        self.nbytes = int(np.prod(shape)) * _TORCH_ITEMSIZE[dtype]
        self.array = np.zeros(shape, dtype=_TORCH_STORAGE[dtype]) if not on_device else None
        self._allocated = False
        if on_device:
            module.memory.allocate(self.nbytes)
            self._allocated = True
            module.live_tensors += 1

    def __del__(self) -> None:
        if getattr(self, "_allocated", False):
            self._module.memory.free(self.nbytes)
            self._module.live_tensors -= 1

    def element_size(self) -> int:
        return _TORCH_ITEMSIZE[self.dtype]

    def fill_(self, value: float) -> FakeTensor:
        if self.on_device:
            self._module.stream.enqueue(self.nbytes / (COPY_GBS * 1e9))
        return self

    def copy_(self, src: FakeTensor, non_blocking: bool = False) -> FakeTensor:
        torch = self._module
        torch.check_sticky()
        torch.copies.append((src.on_device, self.on_device, non_blocking))
        if src.on_device and self.on_device:
            torch.stream.enqueue(2 * self.nbytes / (COPY_GBS * 1e9))
        else:
            host = self if not self.on_device else src
            kind = "pinned" if host.pinned else "pageable"
            torch.stream.enqueue(self.nbytes / (TRANSFER_GBS[kind] * 1e9))
            if not non_blocking:
                torch.stream.wait()  # a pageable copy returns when it is done
        return self

    pinned = False


def make_fake_torch(
    *,
    capacity: int = 2**30,
    cuda: bool = True,
    hip: str | None = None,
    device_count: int = 1,
    major: int = 8,
    minor: int = 0,
    new_tf32_api: bool = False,
    arch_list: tuple[str, ...] | None = None,
    cublas_fails_above_n: int | None = None,
    pinned_capacity: int | None = None,
    mps: bool = False,
) -> Any:
    """A fake torch: CUDA by default, ROCm with ``hip="6.2..."``, Apple MPS with
    ``cuda=False, mps=True`` (a macOS build: no CUDA, ``torch.backends.mps`` and
    ``torch.mps`` whose ``synchronize()`` waits for the queued kernels)."""
    if arch_list is None:
        arch_list = (
            ("gfx90a", "gfx942", "gfx1100")
            if hip
            else ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
        )
    torch: Any = types.ModuleType("torch")
    sticky = _Sticky()
    torch.check_sticky = sticky.check_sticky
    torch.sticky_state = sticky
    torch.__version__ = "2.5.0+fake"
    torch.version = types.SimpleNamespace(cuda="12.4" if cuda and not hip else None, hip=hip)
    torch.float64, torch.float32, torch.float16 = "float64", "float32", "float16"
    torch.bfloat16, torch.uint8 = "bfloat16", "uint8"
    torch.memory = CachingMemory(capacity, TorchOOM)
    torch.stream = Stream()
    torch.live_tensors = 0
    torch.copies = []
    torch.matmul_tf32 = []  # TF32 state seen by each matmul, with its dtype
    torch.empty_cache_calls = 0
    torch.current_device = None
    if new_tf32_api:
        matmul_settings = types.SimpleNamespace(fp32_precision="ieee")
    else:
        matmul_settings = types.SimpleNamespace(allow_tf32=False)
    torch.backends = types.SimpleNamespace(
        cuda=types.SimpleNamespace(matmul=matmul_settings),
        cudnn=types.SimpleNamespace(version=lambda: 90100),
        mps=types.SimpleNamespace(is_available=lambda: mps, is_built=lambda: mps),
    )

    def tensor(
        shape: tuple[int, ...], device: Any, dtype: str, pin_memory: bool = False
    ) -> FakeTensor:
        sticky.check_sticky()
        if pin_memory:
            nbytes = int(np.prod(shape)) * _TORCH_ITEMSIZE[dtype]
            if pinned_capacity is not None and nbytes > pinned_capacity:
                raise RuntimeError("CUDA error: out of memory (cudaHostAlloc)")
        made = FakeTensor(torch, shape, device is not None, dtype)
        made.pinned = pin_memory
        return made

    def randn(*shape: int, device: Any = None, dtype: str = "float32") -> FakeTensor:
        made = tensor(tuple(shape), device, dtype)
        if device is not None:
            torch.stream.enqueue(made.nbytes / (COPY_GBS * 1e9))
        return made

    def randn_like(t: FakeTensor) -> FakeTensor:
        return randn(*t.shape, device="cuda" if t.on_device else None, dtype=t.dtype)

    def empty_like(t: FakeTensor) -> FakeTensor:
        return tensor(t.shape, "cuda" if t.on_device else None, t.dtype)

    def ones(
        count: int, dtype: str = "float32", device: Any = None, pin_memory: bool = False
    ) -> FakeTensor:
        return tensor((count,), device, dtype, pin_memory)

    def empty(
        count: int, dtype: str = "float32", device: Any = None, pin_memory: bool = False
    ) -> FakeTensor:
        return tensor((count,), device, dtype, pin_memory)

    def matmul(a: FakeTensor, b: FakeTensor, out: FakeTensor) -> FakeTensor:
        sticky.check_sticky()
        if sticky.inject_next is not None:
            error, sticky.inject_next = sticky.inject_next, None
            if "illegal" in str(error) or "launch failure" in str(error):
                sticky.sticky = error
            raise error
        n = a.shape[0]
        if cublas_fails_above_n is not None and n > cublas_fails_above_n:
            raise RuntimeError(
                "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"
            )
        tf32 = (
            (matmul_settings.fp32_precision == "tf32")
            if new_tf32_api
            else bool(matmul_settings.allow_tf32)
        )
        torch.matmul_tf32.append((a.dtype, tf32))
        rate = TORCH_TFLOPS["tf32" if a.dtype == "float32" and tf32 else a.dtype]
        torch.stream.enqueue(2.0 * n**3 / (rate * 1e12))
        return out

    props = types.SimpleNamespace(
        name="AMD Instinct MI300X" if hip else "NVIDIA Fake 80GB",
        gcnArchName="gfx942:sramecc+:xnack-" if hip else None,
        total_memory=capacity,
        major=major,
        minor=minor,
        multi_processor_count=132,
        uuid="58e5d4b3-1c1f-4f0e-9d6a-0123456789ab",
        pci_bus_id=0x1A,
        pci_device_id=0,
        pci_domain_id=0,
        L2_cache_size=50 * 2**20,
    )

    def empty_cache() -> None:
        torch.empty_cache_calls += 1
        torch.memory.empty_cache()

    def set_device(index: int) -> None:
        torch.current_device = index

    def synchronize(device: Any = None) -> None:
        sticky.check_sticky()
        torch.stream.wait()

    torch.cuda = types.SimpleNamespace(
        is_available=lambda: cuda,
        device_count=lambda: device_count if cuda else 0,
        get_device_properties=lambda index: props,
        get_arch_list=lambda: list(arch_list),
        set_device=set_device,
        mem_get_info=lambda device=None: (capacity - torch.memory.reserved, capacity),
        memory_reserved=lambda device=None: torch.memory.reserved,
        memory_allocated=lambda device=None: torch.memory.used,
        Event=make_event_class(torch.stream, RuntimeError, False, torch),
        synchronize=synchronize,
        empty_cache=empty_cache,
        OutOfMemoryError=TorchOOM,
    )

    def mps_synchronize() -> None:
        torch.mps_synchronize_calls += 1
        torch.stream.wait()

    torch.mps_synchronize_calls = 0
    torch.mps = types.SimpleNamespace(
        synchronize=mps_synchronize,
        empty_cache=empty_cache,
        recommended_max_memory=lambda: capacity * 3 // 4,
        driver_allocated_memory=lambda: torch.memory.reserved,
    )
    torch.device = lambda kind, index: (kind, index)
    torch.randn, torch.randn_like, torch.empty_like = randn, randn_like, empty_like
    torch.ones, torch.empty, torch.matmul = ones, empty, matmul
    return torch


# --- cupy --------------------------------------------------------------------------


class CupyOOM(MemoryError):
    pass


class CUDARuntimeError(RuntimeError):
    """Named and numbered like cupy_backends.cuda.api.runtime.CUDARuntimeError."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class CUBLASError(RuntimeError):
    """Like cupy_backends.cuda.libs.cublas.CUBLASError."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class FakeCupyArray:
    def __init__(self, module: Any, shape: tuple[int, ...], dtype: Any) -> None:
        module.check_sticky()
        self._allocated = False
        self.nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        module.memory.allocate(self.nbytes)
        self._allocated = True
        self._module = module
        self.shape = shape
        self.dtype = np.dtype(dtype)

    def __del__(self) -> None:
        if getattr(self, "_allocated", False):
            self._module.memory.free(self.nbytes)

    def astype(self, dtype: Any) -> FakeCupyArray:
        return FakeCupyArray(self._module, self.shape, dtype)

    def set(self, host: np.ndarray, stream: Any = None) -> None:
        self._transfer("h2d", host)

    def get(self, stream: Any = None, out: np.ndarray | None = None) -> np.ndarray:
        assert out is not None
        self._transfer("d2h", out)
        return out

    def _transfer(self, direction: str, host: np.ndarray) -> None:
        cp = self._module
        cp.check_sticky()
        cp.transfers.append(direction)
        kind = "pinned" if getattr(host, "pinned", False) else "pageable"
        cp.stream.enqueue(self.nbytes / (TRANSFER_GBS[kind] * 1e9))
        if kind == "pageable":
            cp.stream.wait()


class PinnedArray(np.ndarray):
    pinned = True


def make_fake_cupy(
    *,
    capacity: int = 2**30,
    devices: int = 1,
    cublas_fails_above_n: int | None = None,
) -> Any:
    cp: Any = types.ModuleType("cupy")
    sticky = _Sticky()
    cp.check_sticky = sticky.check_sticky
    cp.sticky_state = sticky
    cp.__version__ = "13.3.0+fake"
    cp.float64, cp.float32, cp.float16, cp.uint8 = np.float64, np.float32, np.float16, np.uint8
    cp.memory = CachingMemory(capacity, CupyOOM)
    cp.stream = Stream()
    cp.transfers = []
    cp.freed_pools = 0

    def standard_normal(shape: tuple[int, int], dtype: Any = np.float64) -> FakeCupyArray:
        made = FakeCupyArray(cp, tuple(shape), dtype)
        cp.stream.enqueue(made.nbytes / (COPY_GBS * 1e9))
        return made

    def empty_like(a: FakeCupyArray) -> FakeCupyArray:
        return FakeCupyArray(cp, a.shape, a.dtype)

    def ones(count: int, dtype: Any = np.float32) -> FakeCupyArray:
        return FakeCupyArray(cp, (count,), dtype)

    def empty(count: int, dtype: Any = np.float32) -> FakeCupyArray:
        return FakeCupyArray(cp, (count,), dtype)

    def matmul(a: FakeCupyArray, b: FakeCupyArray, out: FakeCupyArray) -> FakeCupyArray:
        sticky.check_sticky()
        if sticky.inject_next is not None:
            error, sticky.inject_next = sticky.inject_next, None
            if getattr(error, "status", None) in (700, 719):
                sticky.sticky = error
            raise error
        n = a.shape[0]
        if cublas_fails_above_n is not None and n > cublas_fails_above_n:
            raise CUBLASError(3, "CUBLAS_STATUS_ALLOC_FAILED")
        import os

        name = a.dtype.name
        if name == "float32" and os.environ.get("CUPY_TF32") == "1":
            name = "tf32"
        cp.stream.enqueue(2.0 * n**3 / (CUPY_TFLOPS[name] * 1e12))
        return out

    def copyto(dst: FakeCupyArray, src: FakeCupyArray) -> None:
        sticky.check_sticky()
        cp.stream.enqueue(2 * dst.nbytes / (COPY_GBS * 1e9))

    class Pool:
        def free_all_blocks(self) -> None:
            cp.freed_pools += 1
            cp.memory.empty_cache()

        def free_bytes(self) -> int:
            return int(cp.memory.reserved - cp.memory.used)

    props = {
        "name": b"NVIDIA Fake PCIe",
        "totalGlobalMem": capacity,
        "major": 9,
        "minor": 0,
        "multiProcessorCount": 114,
        "l2CacheSize": 50 * 2**20,
        "pciBusID": 0x3B,
        "pciDeviceID": 0,
        "pciDomainID": 0,
        "uuid": bytes(range(16)),
    }
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: devices,
        getDeviceProperties=lambda index: props,
        memGetInfo=lambda: (capacity - cp.memory.reserved, capacity),
        runtimeGetVersion=lambda: 12040,
        driverGetVersion=lambda: 12060,
        CUDARuntimeError=CUDARuntimeError,
    )

    def synchronize() -> None:
        sticky.check_sticky()
        cp.stream.wait()

    device = types.SimpleNamespace(use=lambda: None, synchronize=synchronize)

    def not_ready(message: str) -> CUDARuntimeError:
        return CUDARuntimeError(600, f"cudaErrorNotReady: {message}")

    event = make_event_class(cp.stream, not_ready, True, cp)  # type: ignore[arg-type]
    cp.cuda = types.SimpleNamespace(
        runtime=runtime,
        Device=lambda index=0: device,
        Event=event,
        get_elapsed_time=lambda start, end: start.elapsed_time(end),
        get_current_stream=lambda: None,
        memory=types.SimpleNamespace(OutOfMemoryError=CupyOOM),
    )
    cp.random = types.SimpleNamespace(standard_normal=standard_normal)
    cp.empty_like, cp.ones, cp.empty, cp.matmul, cp.copyto = empty_like, ones, empty, matmul, copyto
    pool = Pool()
    cp.get_default_memory_pool = lambda: pool
    cp.get_default_pinned_memory_pool = lambda: pool
    return cp


def make_fake_cupyx(pinned_capacity: int | None = None) -> Any:
    cupyx: Any = types.ModuleType("cupyx")

    def empty_pinned(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if pinned_capacity is not None and nbytes > pinned_capacity:
            raise CUDARuntimeError(2, "cudaErrorMemoryAllocation: out of memory")
        return np.empty(shape, dtype=dtype).view(PinnedArray)

    cupyx.empty_pinned = empty_pinned
    return cupyx
