"""Tiny numpy-backed stand-ins for ``torch`` and ``cupy``: enough API for the GPU backends.

They run the real backend code paths (allocation, CUDA-event timing, TF32
switching, out-of-memory handling, release) on the CPU at small sizes.
"""

from __future__ import annotations

import time
import types
from typing import Any

import numpy as np


class DeviceMemory:
    """Counts bytes allocated on the fake device; over capacity raises the module's OOM."""

    def __init__(self, capacity: int, oom_type: type[BaseException]) -> None:
        self.capacity = capacity
        self.used = 0
        self.oom_type = oom_type
        self.peak = 0

    def allocate(self, nbytes: int) -> None:
        if self.used + nbytes > self.capacity:
            raise self.oom_type(f"CUDA out of memory. Tried to allocate {nbytes} bytes")
        self.used += nbytes
        self.peak = max(self.peak, self.used)

    def free(self, nbytes: int) -> None:
        self.used -= nbytes


class FakeEvent:
    def __init__(self, enable_timing: bool = True) -> None:
        self.t: float | None = None

    def record(self, stream: Any = None) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        """Work is synchronous here."""

    def elapsed_time(self, end: FakeEvent) -> float:
        assert self.t is not None and end.t is not None
        return (end.t - self.t) * 1000.0


# --- torch ---------------------------------------------------------------------------


class TorchOOM(RuntimeError):
    pass


class FakeTensor:
    def __init__(self, module: Any, array: np.ndarray, on_device: bool, dtype: Any) -> None:
        self._module = module
        self.array = array
        self.on_device = on_device
        self.dtype = dtype
        self.nbytes = array.nbytes
        if on_device:
            module.memory.allocate(self.nbytes)
            module.live_tensors += 1

    def __del__(self) -> None:
        if self.on_device:
            self._module.memory.free(self.nbytes)
            self._module.live_tensors -= 1

    def fill_(self, value: float) -> FakeTensor:
        self.array.fill(value)
        return self

    def copy_(self, src: FakeTensor, non_blocking: bool = False) -> FakeTensor:
        self._module.copies.append((src.on_device, self.on_device, non_blocking))
        np.copyto(self.array, src.array)
        return self


def make_fake_torch(
    *,
    capacity: int = 2**30,
    cuda: bool = True,
    device_count: int = 1,
    major: int = 8,
    new_tf32_api: bool = False,
) -> Any:
    torch: Any = types.ModuleType("torch")
    torch.__version__ = "2.5.0+fake"
    torch.version = types.SimpleNamespace(cuda="12.4" if cuda else None)
    torch.float64, torch.float32, torch.float16 = "float64", "float32", "float16"
    torch.bfloat16, torch.uint8 = "bfloat16", "uint8"
    np_types = {
        "float64": np.float64,
        "float32": np.float32,
        "float16": np.float16,
        "bfloat16": np.float32,
        "uint8": np.uint8,
    }
    torch.memory = DeviceMemory(capacity, TorchOOM)
    torch.live_tensors = 0
    torch.copies = []
    torch.matmul_tf32 = []  # TF32 state seen by each matmul, with its dtype
    torch.empty_cache_calls = 0
    torch.current_device = None
    if new_tf32_api:
        matmul = types.SimpleNamespace(fp32_precision="ieee")
    else:
        matmul = types.SimpleNamespace(allow_tf32=False)
    torch.backends = types.SimpleNamespace(
        cuda=types.SimpleNamespace(matmul=matmul),
        cudnn=types.SimpleNamespace(version=lambda: 90100),
    )
    rng = np.random.default_rng(0)

    def tensor(array: np.ndarray, device: Any, dtype: Any) -> FakeTensor:
        return FakeTensor(torch, array, device is not None, dtype)

    def alloc_check(shape: tuple[int, ...], dtype: Any, device: Any) -> None:
        # Fail before numpy allocates, as a real device would.
        nbytes = int(np.prod(shape)) * np.dtype(np_types[dtype]).itemsize
        if device is not None and torch.memory.used + nbytes > torch.memory.capacity:
            raise TorchOOM(f"CUDA out of memory. Tried to allocate {nbytes} bytes")

    def randn(*shape: int, device: Any = None, dtype: Any = "float32") -> FakeTensor:
        alloc_check(shape, dtype, device)
        return tensor(rng.standard_normal(shape).astype(np_types[dtype]), device, dtype)

    def randn_like(t: FakeTensor) -> FakeTensor:
        return randn(*t.array.shape, device="cuda" if t.on_device else None, dtype=t.dtype)

    def empty_like(t: FakeTensor) -> FakeTensor:
        alloc_check(t.array.shape, t.dtype, "cuda" if t.on_device else None)
        return tensor(np.empty_like(t.array), "cuda" if t.on_device else None, t.dtype)

    def ones(
        count: int, dtype: Any = "float32", device: Any = None, pin_memory: bool = False
    ) -> FakeTensor:
        alloc_check((count,), dtype, device)
        return tensor(np.ones(count, dtype=np_types[dtype]), device, dtype)

    def empty(
        count: int, dtype: Any = "float32", device: Any = None, pin_memory: bool = False
    ) -> FakeTensor:
        alloc_check((count,), dtype, device)
        return tensor(np.empty(count, dtype=np_types[dtype]), device, dtype)

    def matmul(a: FakeTensor, b: FakeTensor, out: FakeTensor) -> FakeTensor:
        tf32 = (
            (torch.backends.cuda.matmul.fp32_precision == "tf32")
            if new_tf32_api
            else (torch.backends.cuda.matmul.allow_tf32)
        )
        torch.matmul_tf32.append((a.dtype, tf32))
        np.matmul(a.array, b.array, out=out.array)
        return out

    props = types.SimpleNamespace(
        name="NVIDIA Fake 80GB",
        total_memory=capacity,
        major=major,
        minor=0,
        multi_processor_count=132,
        uuid="58e5d4b3-1c1f-4f0e-9d6a-0123456789ab",
        pci_bus_id=0x1A,
        pci_device_id=0,
        pci_domain_id=0,
        L2_cache_size=50 * 2**20,
    )

    def empty_cache() -> None:
        torch.empty_cache_calls += 1

    def set_device(index: int) -> None:
        torch.current_device = index

    torch.cuda = types.SimpleNamespace(
        is_available=lambda: cuda,
        device_count=lambda: device_count if cuda else 0,
        get_device_properties=lambda index: props,
        set_device=set_device,
        mem_get_info=lambda device=None: (capacity - torch.memory.used, capacity),
        Event=FakeEvent,
        synchronize=lambda device=None: None,
        empty_cache=empty_cache,
        OutOfMemoryError=TorchOOM,
    )
    torch.device = lambda kind, index: (kind, index)
    torch.randn, torch.randn_like, torch.empty_like = randn, randn_like, empty_like
    torch.ones, torch.empty, torch.matmul = ones, empty, matmul
    return torch


# --- cupy --------------------------------------------------------------------------


class CupyOOM(MemoryError):
    pass


class FakeCupyArray:
    def __init__(self, module: Any, array: np.ndarray) -> None:
        module.memory.allocate(array.nbytes)
        self._module = module
        self.array = array
        self.nbytes = array.nbytes

    def __del__(self) -> None:
        self._module.memory.free(self.nbytes)

    def astype(self, dtype: Any) -> FakeCupyArray:
        return FakeCupyArray(self._module, self.array.astype(dtype))

    def set(self, host: np.ndarray, stream: Any = None) -> None:
        self._module.transfers.append("h2d")
        np.copyto(self.array, host)

    def get(self, stream: Any = None, out: np.ndarray | None = None) -> np.ndarray:
        self._module.transfers.append("d2h")
        assert out is not None
        np.copyto(out, self.array)
        return out


def make_fake_cupy(*, capacity: int = 2**30, devices: int = 1) -> Any:
    cp: Any = types.ModuleType("cupy")
    cp.__version__ = "13.3.0+fake"
    cp.float64, cp.float32, cp.float16, cp.uint8 = np.float64, np.float32, np.float16, np.uint8
    cp.memory = DeviceMemory(capacity, CupyOOM)
    cp.transfers = []
    cp.freed_pools = 0
    rng = np.random.default_rng(0)

    def checked(nbytes: int) -> None:
        if cp.memory.used + nbytes > cp.memory.capacity:
            raise CupyOOM(f"Out of memory allocating {nbytes} bytes")

    def standard_normal(shape: tuple[int, int], dtype: Any = np.float64) -> FakeCupyArray:
        checked(int(np.prod(shape)) * np.dtype(dtype).itemsize)
        return FakeCupyArray(cp, rng.standard_normal(shape).astype(dtype))

    def empty_like(a: FakeCupyArray) -> FakeCupyArray:
        checked(a.nbytes)
        return FakeCupyArray(cp, np.empty_like(a.array))

    def ones(count: int, dtype: Any = np.float32) -> FakeCupyArray:
        checked(count * np.dtype(dtype).itemsize)
        return FakeCupyArray(cp, np.ones(count, dtype=dtype))

    def empty(count: int, dtype: Any = np.float32) -> FakeCupyArray:
        checked(count * np.dtype(dtype).itemsize)
        return FakeCupyArray(cp, np.empty(count, dtype=dtype))

    def matmul(a: FakeCupyArray, b: FakeCupyArray, out: FakeCupyArray) -> FakeCupyArray:
        np.matmul(a.array, b.array, out=out.array)
        return out

    def copyto(dst: FakeCupyArray, src: FakeCupyArray) -> None:
        np.copyto(dst.array, src.array)

    class Pool:
        def free_all_blocks(self) -> None:
            cp.freed_pools += 1

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
        memGetInfo=lambda: (capacity - cp.memory.used, capacity),
        runtimeGetVersion=lambda: 12040,
        driverGetVersion=lambda: 12060,
    )
    device = types.SimpleNamespace(use=lambda: None, synchronize=lambda: None)
    cp.cuda = types.SimpleNamespace(
        runtime=runtime,
        Device=lambda index=0: device,
        Event=FakeEvent,
        get_elapsed_time=lambda start, end: start.elapsed_time(end),
        get_current_stream=lambda: None,
        memory=types.SimpleNamespace(OutOfMemoryError=CupyOOM),
    )
    cp.random = types.SimpleNamespace(standard_normal=standard_normal)
    cp.empty_like, cp.ones, cp.empty, cp.matmul, cp.copyto = empty_like, ones, empty, matmul, copyto
    cp.get_default_memory_pool = Pool
    cp.get_default_pinned_memory_pool = Pool
    return cp


def make_fake_cupyx() -> Any:
    cupyx: Any = types.ModuleType("cupyx")
    cupyx.empty_pinned = lambda shape, dtype: np.empty(shape, dtype=dtype)
    return cupyx
