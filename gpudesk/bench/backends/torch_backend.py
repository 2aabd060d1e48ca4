"""The PyTorch backend: GEMM, device copy and host/device transfers on NVIDIA, AMD and Apple.

``torch`` is imported only here, and only when the backend is used; without
it (or without a GPU) the backend reports itself unavailable with the reason.

- CUDA builds: NVIDIA GPUs. Timing uses CUDA events around the calls and
  waits for the end event, so the GPU's work is measured, not the launch
  (kernel launches are asynchronous).
- ROCm builds (``torch.version.hip`` set): AMD GPUs through the same
  ``torch.cuda`` API (HIP behind the CUDA names), timed with the same events
  (HIP events). TF32 is not offered: ROCm maps it only on some Instinct parts.
- Apple ``mps``: one device, the Mac's GPU. MPS has no timing events, so the
  host clock is read between two ``torch.mps.synchronize()`` calls, which
  wait for every queued kernel. No FP64 (MPS has none), no TF32, and no
  host/device transfer (unified memory: there is no bus to measure).
"""

from __future__ import annotations

import contextlib
import time
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
    "install it from the GPUDesk checkout with `pip install '.[torch]'` (a CUDA build "
    "of PyTorch; the ROCm build for AMD GPUs; the default macOS build for Apple's MPS)"
)


def _dtype(torch: Any, name: str) -> Any:
    return {
        "fp64": torch.float64,
        "fp32": torch.float32,
        "tf32": torch.float32,
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
    }[name]


def is_oom(torch: Any, exc: BaseException) -> bool:
    """Whether ``exc`` means "not enough memory": CUDA OOM (typed since torch 1.13),
    a cuBLAS workspace that could not be allocated, or a failed pinned host allocation."""
    oom_type = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    if isinstance(oom_type, type) and isinstance(exc, oom_type):
        return True
    return isinstance(exc, RuntimeError | MemoryError) and error_mentions(exc, OOM_MARKERS)


def is_sticky(exc: BaseException) -> bool:
    """Whether ``exc`` is a CUDA error that leaves the context unusable (illegal address...)."""
    return isinstance(exc, RuntimeError) and error_mentions(exc, STICKY_MARKERS)


TorchBuildKind = Literal["cuda", "rocm", "cpu"]


def torch_build(torch: Any) -> tuple[TorchBuildKind, str | None]:
    """Which GPU runtime this PyTorch was built for, and its version.

    A ROCm build also answers ``torch.cuda.*`` (HIP behind the CUDA names) but
    has ``torch.version.hip`` set and ``torch.version.cuda`` None.
    """
    version = getattr(torch, "version", None)
    hip = getattr(version, "hip", None)
    if hip:
        return "rocm", str(hip)
    cuda = getattr(version, "cuda", None)
    if cuda:
        return "cuda", str(cuda)
    return "cpu", None


def mps_available(torch: Any) -> bool:
    """Whether this torch can use Apple's Metal GPU (``torch.backends.mps``)."""
    mps = getattr(getattr(torch, "backends", None), "mps", None)
    try:
        return bool(mps is not None and mps.is_available())
    except Exception:
        return False


def _sm(capability: str) -> int:
    major, _, minor = capability.partition(".")
    return int(major) * 10 + int(minor or 0)


def missing_kernels(arch_list: list[str], capability: str) -> bool:
    """Whether a torch built for ``arch_list`` (``get_arch_list()``) has no kernels for the card.

    A ``sm_XY`` cubin runs on the same major version at minor >= Y; ``compute_XY``
    PTX is compiled by the driver for any card at XY or later; ``sm_XYa``
    (architecture-specific) runs on XY only (CUDA C Programming Guide,
    "Binary Compatibility" and "PTX Compatibility").
    """
    if not arch_list:
        return False  # an unusual build that does not say: let the run show it
    card = _sm(capability)
    for arch in arch_list:
        kind, _, number = arch.partition("_")
        specific = number.endswith(("a", "f"))
        digits = number.rstrip("af")
        if not digits.isdigit():
            continue
        built = int(digits)
        if kind == "compute" and built <= card:
            return False
        if kind == "sm" and (
            built == card or (not specific and built // 10 == card // 10 and built <= card)
        ):
            return False
    return True


class TorchBackend:
    """PyTorch on CUDA (NVIDIA), ROCm (AMD) and MPS (Apple) devices.

    Args:
        module: the ``torch`` module to use; imported on first use when None
            (tests pass a fake).
    """

    name = "torch"

    def __init__(self, module: Any | None = None) -> None:
        self._torch = module

    def _load(self) -> Any:
        if self._torch is None:
            import torch

            self._torch = torch
        return self._torch

    def status(self) -> BackendStatus:
        try:
            torch = self._load()
        except Exception as exc:  # ImportError, or a broken install (OSError on a .so)
            return BackendStatus(
                name=self.name,
                available=False,
                reason=f"PyTorch is not importable ({exc}); {INSTALL_HINT}",
            )
        version = str(getattr(torch, "__version__", "unknown"))
        try:
            build, runtime = torch_build(torch)
            if build == "cpu" and mps_available(torch):
                return BackendStatus(name=self.name, available=True, version=version)
            if build == "rocm" and (
                not torch.cuda.is_available() or torch.cuda.device_count() == 0
            ):
                reason = (
                    f"PyTorch {version} (ROCm, HIP {runtime}) sees no AMD GPU (amdgpu driver "
                    "not loaded, no access to /dev/kfd and /dev/dri (render and video "
                    "groups), or hidden by HIP_VISIBLE_DEVICES)"
                )
                return BackendStatus(
                    name=self.name, available=False, reason=reason, version=version
                )
            if build == "cpu":
                reason = f"PyTorch {version} is a CPU-only build; {INSTALL_HINT}"
                return BackendStatus(
                    name=self.name, available=False, reason=reason, version=version
                )
            if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
                reason = (
                    "PyTorch sees no CUDA device (no NVIDIA GPU, driver not loaded, "
                    "or hidden by CUDA_VISIBLE_DEVICES)"
                )
                return BackendStatus(
                    name=self.name, available=False, reason=reason, version=version
                )
        except Exception as exc:
            return BackendStatus(
                name=self.name,
                available=False,
                reason=f"CUDA failed to initialise: {exc}",
                version=version,
            )
        return BackendStatus(name=self.name, available=True, version=version)

    def _kind(self, torch: Any) -> Literal["cuda", "rocm", "mps"]:
        build, _ = torch_build(torch)
        if build == "rocm":
            return "rocm"
        if build == "cpu":
            return "mps"  # status() said available: a CPU build is available only with MPS
        return "cuda"

    def devices(self) -> list[DeviceInfo]:
        torch = self._require()
        if self._kind(torch) == "mps":
            return [_mps_device(torch)]
        return [self._device(torch, index) for index in range(torch.cuda.device_count())]

    def _require(self) -> Any:
        status = self.status()
        if not status.available:
            raise BackendError(status.reason)
        return self._load()

    def _device(self, torch: Any, index: int) -> DeviceInfo:
        if self._kind(torch) == "mps":
            if index != 0:
                raise BackendError(f"no MPS device {index}: a Mac has one GPU, device 0")
            return _mps_device(torch)
        count = torch.cuda.device_count()
        if not 0 <= index < count:
            raise BackendError(f"no CUDA device {index}: PyTorch sees {count}")
        props = torch.cuda.get_device_properties(index)
        uuid = getattr(props, "uuid", None)
        bus = getattr(props, "pci_bus_id", None)
        # cudaDeviceProp.pciDeviceID is the slot on the bus, not the product id:
        # it only builds the bus id; the product id comes from NVML.
        slot = getattr(props, "pci_device_id", None)
        domain = getattr(props, "pci_domain_id", 0) or 0
        bus_id = None
        if isinstance(bus, int) and isinstance(slot, int):
            bus_id = f"{domain:08x}:{bus:02x}:{slot:02x}.0"
        l2 = getattr(props, "L2_cache_size", None)
        rocm = self._kind(torch) == "rocm"
        return DeviceInfo(
            kind="rocm" if rocm else "cuda",
            index=index,
            name=str(props.name),
            vendor="AMD" if rocm else "NVIDIA",
            memory_total_bytes=int(props.total_memory),
            uuid=None if uuid is None else str(uuid),
            pci_bus_id=bus_id,
            # ROCm's major.minor is the gfx version, not a CUDA compute capability.
            compute_capability=None if rocm else f"{props.major}.{props.minor}",
            multiprocessor_count=getattr(props, "multi_processor_count", None),
            last_level_cache_bytes=int(l2) if isinstance(l2, int) and l2 > 0 else None,
        )

    def capabilities(self, device_index: int) -> Capabilities:
        torch = self._require()
        device = self._device(torch, device_index)
        if device.kind == "mps":
            return Capabilities(
                kind="mps", tests=("gemm", "copy", "sweep"), gemm_dtypes=("fp32", "fp16", "bf16")
            )
        if device.kind == "rocm":
            return Capabilities(
                kind="rocm",
                tests=("gemm", "copy", "h2d", "d2h", "sweep"),
                gemm_dtypes=("fp64", "fp32", "fp16", "bf16"),
                last_level_cache_bytes=device.last_level_cache_bytes,
            )
        major = int((device.compute_capability or "0.0").split(".")[0])
        # TF32 and BF16 tensor cores arrived with Ampere (compute capability 8.0).
        dtypes = (
            ("fp64", "fp32", "tf32", "fp16", "bf16") if major >= 8 else ("fp64", "fp32", "fp16")
        )
        return Capabilities(
            kind="cuda",
            tests=("gemm", "copy", "h2d", "d2h", "sweep"),
            gemm_dtypes=dtypes,
            last_level_cache_bytes=device.last_level_cache_bytes,
        )

    def open(self, device_index: int) -> TorchSession | TorchMpsSession:
        torch = self._require()
        device = self._device(torch, device_index)
        if device.kind == "mps":
            return TorchMpsSession(torch, device)
        arch_list = _arch_list(torch)
        if device.kind == "rocm":
            arch = _gcn_arch(torch, device_index)
            if arch_list and arch and arch not in arch_list:
                raise BackendError(
                    f"PyTorch {torch.__version__} has no kernels for {device.name} ({arch}): "
                    f"it was built for {', '.join(arch_list)}. Install a ROCm build of "
                    "PyTorch that supports this GPU"
                )
            try:
                torch.cuda.set_device(device_index)
            except Exception as exc:
                raise BackendError(f"cannot use ROCm device {device_index}: {exc}") from exc
            return TorchSession(torch, device)
        capability = device.compute_capability or "0.0"
        if missing_kernels(arch_list, capability):
            raise BackendError(
                f"PyTorch {torch.__version__} has no kernels for {device.name} (compute "
                f"capability {capability}, sm_{_sm(capability)}): it was built for "
                f"{', '.join(arch_list)}. Install a PyTorch build that supports this GPU "
                "(a newer CUDA wheel)"
            )
        try:
            torch.cuda.set_device(device_index)
        except Exception as exc:
            raise BackendError(f"cannot use CUDA device {device_index}: {exc}") from exc
        return TorchSession(torch, device)


def _gcn_arch(torch: Any, index: int) -> str | None:
    """The AMD GPU's gfx target ("gfx942" from "gfx942:sramecc+:xnack-"), when ROCm says."""
    with contextlib.suppress(Exception):
        name = getattr(torch.cuda.get_device_properties(index), "gcnArchName", None)
        if isinstance(name, str) and name:
            return name.split(":")[0]
    return None


def _mps_device(torch: Any) -> DeviceInfo:
    """The Mac's GPU; its name and cores come from system_profiler when the run is matched."""
    memory = None
    with contextlib.suppress(Exception):
        memory = int(torch.mps.recommended_max_memory())
    return DeviceInfo(
        kind="mps", index=0, name="Apple GPU (MPS)", vendor="Apple", memory_total_bytes=memory
    )


def _arch_list(torch: Any) -> list[str]:
    """``torch.cuda.get_arch_list()``: the GPU architectures this build has kernels for."""
    try:
        return [str(arch) for arch in torch.cuda.get_arch_list()]
    except Exception:  # old torch without it, or CUDA not initialisable: unknown
        return []


class _Tf32:
    """Reads and sets TF32 for matmul through whichever API this torch has."""

    def __init__(self, torch: Any) -> None:
        self._matmul = torch.backends.cuda.matmul
        # torch >= 2.9 has fp32_precision ("ieee"/"tf32") and warns on allow_tf32.
        self._new_api = hasattr(self._matmul, "fp32_precision")
        self.saved = self.get()

    def get(self) -> bool:
        if self._new_api:
            return str(self._matmul.fp32_precision) == "tf32"
        return bool(self._matmul.allow_tf32)

    def set(self, enabled: bool) -> None:
        if self._new_api:
            self._matmul.fp32_precision = "tf32" if enabled else "ieee"
        else:
            self._matmul.allow_tf32 = enabled

    def restore(self) -> None:
        self.set(self.saved)


class TorchSession:
    """One CUDA device opened with PyTorch."""

    timer: TimerName = "cuda_events"

    def __init__(self, torch: Any, device: DeviceInfo) -> None:
        self.torch = torch
        self.device = device
        self.cuda_device = torch.device("cuda", device.index)
        self.tf32 = _Tf32(torch)

    @contextlib.contextmanager
    def allocating(self, what: str) -> Iterator[None]:
        """Out-of-memory becomes :class:`OutOfMemory`; a sticky CUDA error :class:`DeviceFailed`."""
        try:
            yield
        except Exception as exc:
            if is_oom(self.torch, exc):
                with contextlib.suppress(Exception):
                    self.torch.cuda.empty_cache()
                raise OutOfMemory(f"{what}: {exc}") from exc
            if is_sticky(exc):
                raise DeviceFailed(f"{what}: {exc}") from exc
            raise

    def free_memory_bytes(self) -> int | None:
        """The driver's free memory plus what PyTorch's allocator caches but does not use.

        ``mem_get_info`` counts blocks the caching allocator holds as used, but
        a new tensor reuses them first.
        """
        cuda = self.torch.cuda
        free, _total = cuda.mem_get_info(self.cuda_device)
        cached = 0
        with contextlib.suppress(Exception):
            cached = int(cuda.memory_reserved(self.cuda_device)) - int(
                cuda.memory_allocated(self.cuda_device)
            )
        return int(free) + max(0, cached)

    def environment(self) -> dict[str, JsonValue]:
        torch = self.torch
        cudnn = None
        with contextlib.suppress(Exception):
            cudnn = torch.backends.cudnn.version()
        return {
            "torch": str(torch.__version__),
            "torch_build": torch_build(torch)[0],
            "torch_arch_list": list(_arch_list(torch)),
            "cuda_runtime": getattr(torch.version, "cuda", None),
            "hip_runtime": getattr(torch.version, "hip", None),
            "gcn_arch": _gcn_arch(torch, self.device.index) if self.device.kind == "rocm" else None,
            "cudnn": cudnn,
            "compute_capability": self.device.compute_capability,
            # What the user's own code would get for FP32 matmul; the "fp32" test
            # runs with TF32 off and the "tf32" test with it on, whatever this says.
            "tf32_default_enabled": self.tf32.saved,
            "fp32_gemm_uses_tf32": False,
        }

    def gemm(self, dtype: str, n: int) -> Workload:
        torch = self.torch
        with self.allocating(f"GEMM {dtype} n={n}"):
            a = torch.randn(n, n, device=self.cuda_device, dtype=_dtype(torch, dtype))
            b = torch.randn_like(a)
            c = torch.empty_like(a)
        tf32: bool | None = {"fp32": False, "tf32": True}.get(dtype)
        return _TorchTimed(self, 2.0 * n**3, [a, b, c], lambda: torch.matmul(a, b, out=c), tf32)

    def copy(self, nbytes: int) -> Workload:
        torch = self.torch
        count = max(1, nbytes // 4)
        with self.allocating(f"copy of {nbytes} bytes"):
            src = torch.ones(count, device=self.cuda_device, dtype=torch.float32)
            dst = torch.empty_like(src)
        return _TorchTimed(self, 2.0 * count * 4, [src, dst], lambda: dst.copy_(src), None)

    def transfer(self, direction: Literal["h2d", "d2h"], pinned: bool, nbytes: int) -> Workload:
        torch = self.torch
        with self.allocating(f"{direction} of {nbytes} bytes"):
            # torch.empty documents pin_memory; fill so every host page is touched now.
            host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned).fill_(1)
            device = torch.empty(nbytes, dtype=torch.uint8, device=self.cuda_device)
        # non_blocking only overlaps from pinned memory; pageable copies stage
        # through a driver buffer, which is what this test shows.
        if direction == "h2d":
            call: Callable[[], Any] = lambda: device.copy_(host, non_blocking=pinned)  # noqa: E731
        else:
            call = lambda: host.copy_(device, non_blocking=pinned)  # noqa: E731
        return _TorchTimed(self, float(nbytes), [host, device], call, None)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.tf32.restore()
            self.torch.cuda.synchronize(self.cuda_device)
            self.torch.cuda.empty_cache()


class _TorchTimed:
    """Calls ``call`` between two CUDA events; the end event is waited for."""

    sliceable = False

    def __init__(
        self,
        session: TorchSession,
        work: float,
        tensors: list[Any],
        call: Callable[[], Any],
        tf32: bool | None,
    ) -> None:
        self._session = session
        self.work = work
        self._tensors: list[Any] | None = tensors
        self._call: Callable[[], Any] | None = call
        self._tf32 = tf32

    def run(self, iterations: int, check: Callable[[], None]) -> float:
        session = self._session
        torch = session.torch
        call = self._call
        if call is None:
            raise RuntimeError("workload already released")
        if self._tf32 is not None:
            session.tf32.set(self._tf32)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        with session.allocating("running"):
            start.record()
            for _ in range(iterations):
                call()
            end.record()
            end.synchronize()
        return float(start.elapsed_time(end)) / 1000.0

    def release(self) -> None:
        if self._tensors is None:
            return
        self._tensors = None
        self._call = None
        torch = self._session.torch
        with contextlib.suppress(Exception):
            torch.cuda.synchronize(self._session.cuda_device)
        torch.cuda.empty_cache()


class TorchMpsSession:
    """Apple's GPU opened with PyTorch's ``mps`` device."""

    timer: TimerName = "mps_synchronize"

    def __init__(self, torch: Any, device: DeviceInfo) -> None:
        self.torch = torch
        self.device = device
        self.mps_device = torch.device("mps", 0)

    @contextlib.contextmanager
    def allocating(self, what: str) -> Iterator[None]:
        """ "MPS backend out of memory" becomes :class:`OutOfMemory`."""
        try:
            yield
        except Exception as exc:
            if isinstance(exc, RuntimeError | MemoryError) and error_mentions(exc, OOM_MARKERS):
                with contextlib.suppress(Exception):
                    self.torch.mps.empty_cache()
                raise OutOfMemory(f"{what}: {exc}") from exc
            raise

    def free_memory_bytes(self) -> int | None:
        """What Metal recommends the GPU may use, less what this process's MPS holds."""
        mps = self.torch.mps
        try:
            limit = int(mps.recommended_max_memory())
            held = int(mps.driver_allocated_memory())
        except Exception:
            return None
        return max(0, limit - held)

    def environment(self) -> dict[str, JsonValue]:
        return {
            "torch": str(self.torch.__version__),
            "torch_build": "mps",
            "timer_note": "host clock between torch.mps.synchronize() calls",
        }

    def gemm(self, dtype: str, n: int) -> Workload:
        torch = self.torch
        with self.allocating(f"GEMM {dtype} n={n}"):
            a = torch.randn(n, n, device=self.mps_device, dtype=_dtype(torch, dtype))
            b = torch.randn_like(a)
            c = torch.empty_like(a)
        return _MpsTimed(self, 2.0 * n**3, [a, b, c], lambda: torch.matmul(a, b, out=c))

    def copy(self, nbytes: int) -> Workload:
        torch = self.torch
        count = max(1, nbytes // 4)
        with self.allocating(f"copy of {nbytes} bytes"):
            src = torch.ones(count, device=self.mps_device, dtype=torch.float32)
            dst = torch.empty_like(src)
        return _MpsTimed(self, 2.0 * count * 4, [src, dst], lambda: dst.copy_(src))

    def transfer(self, direction: Literal["h2d", "d2h"], pinned: bool, nbytes: int) -> Workload:
        raise BackendError("an Apple GPU shares the host's memory: there is no transfer to time")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.torch.mps.synchronize()
            self.torch.mps.empty_cache()


class _MpsTimed:
    """Calls ``call`` between two ``torch.mps.synchronize()``: the host clock spans the GPU work."""

    sliceable = False

    def __init__(
        self, session: TorchMpsSession, work: float, tensors: list[Any], call: Callable[[], Any]
    ) -> None:
        self._session = session
        self.work = work
        self._tensors: list[Any] | None = tensors
        self._call: Callable[[], Any] | None = call

    def run(self, iterations: int, check: Callable[[], None]) -> float:
        mps = self._session.torch.mps
        call = self._call
        if call is None:
            raise RuntimeError("workload already released")
        with self._session.allocating("running"):
            mps.synchronize()  # earlier work (allocation, random fill) is not timed
            start = time.perf_counter()
            for _ in range(iterations):
                call()
            mps.synchronize()
            return time.perf_counter() - start

    def release(self) -> None:
        if self._tensors is None:
            return
        self._tensors = None
        self._call = None
        with contextlib.suppress(Exception):
            self._session.torch.mps.synchronize()
            self._session.torch.mps.empty_cache()
