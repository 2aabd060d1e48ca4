"""What a benchmark backend provides to the runner.

A backend (numpy, torch, cupy) says whether it can run here and why not, lists
its devices, and opens a :class:`Session` on one device. A session makes
:class:`Workload` objects: an allocated operation that can be timed. All
measuring policy (warm-up, repetitions, median, size step-down, cancellation)
lives in the runner, so it is the same for every backend and testable with a
fake one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, JsonValue

from gpudesk.bench.devices import DeviceInfo as DeviceInfo
from gpudesk.bench.errors import BenchError
from gpudesk.bench.plan import Capabilities

#: How a run was timed: host clock (CPU), CUDA/HIP events, or the host clock between
#: two ``torch.mps.synchronize()`` calls (MPS has no timing events).
TimerName = Literal["perf_counter", "cuda_events", "mps_synchronize"]


class OutOfMemory(BenchError):
    """The device could not allocate what a workload needs (the runner steps down)."""


class BackendError(BenchError):
    """The backend cannot run at all (import, driver or device failure)."""


class DeviceFailed(BackendError):
    """A sticky CUDA error: the device context is unusable for the rest of this process.

    After an illegal address or a launch failure every later CUDA call in the
    process fails the same way, so the runner stops instead of failing each test.
    """


#: Allocation failures that are out-of-memory in all but name: cuBLAS cannot get its
#: workspace, the CUDA runtime cannot allocate (device or pinned host memory).
OOM_MARKERS: tuple[str, ...] = (
    "out of memory",
    "cublas_status_alloc_failed",
    "cudaerrormemoryallocation",
    "cuda_error_out_of_memory",
)
#: Errors after which the CUDA context is corrupt until the process exits (CUDA
#: runtime API docs, cudaError_t: "the process must be terminated and relaunched").
STICKY_MARKERS: tuple[str, ...] = (
    "illegal memory access",
    "cudaerrorillegaladdress",
    "unspecified launch failure",
    "cudaerrorlaunchfailure",
    "device-side assert",
    "cudaerrorassert",
    "misaligned address",
    "cudaerrormisalignedaddress",
    "illegal instruction",
    "cudaerrorillegalinstruction",
    "uncorrectable ecc error",
    "cudaerroreccuncorrectable",
    "hardware stack error",
    "cudaerrorhardwarestackerror",
)


def error_mentions(exc: BaseException, markers: tuple[str, ...]) -> bool:
    """Whether the error's text names one of ``markers`` (case-insensitive)."""
    text = f"{type(exc).__name__}: {exc}".lower()
    return any(marker in text for marker in markers)


class BackendStatus(BaseModel):
    """Whether a backend can run on this machine, and if not, why."""

    model_config = ConfigDict(frozen=True)

    name: str
    available: bool
    reason: str = ""
    version: str | None = None


class Workload(Protocol):
    """One allocated, timeable operation (a GEMM of size n, a copy of n bytes).

    A workload that computes its operation in a way a reader would not assume
    (the CPU GEMM by row panels) may also have a ``method_note`` string
    attribute; the runner adds it to the result row's notes.
    """

    #: FLOPs (GEMM) or bytes moved (copy: read + write; transfer: bytes sent) per call.
    work: float
    #: True when :meth:`run` can split one call into slices and check for
    #: cancellation between them (a CPU GEMM); False when one call is atomic
    #: (a GPU kernel), so the runner must keep single calls short.
    sliceable: bool

    def run(self, iterations: int, check: Callable[[], None]) -> float:
        """Run the operation ``iterations`` times; return the elapsed seconds.

        ``check`` raises :class:`gpudesk.progress.Cancelled`; call it between
        slices of a long call. Raises :class:`OutOfMemory` if running needs
        memory that is not there.
        """
        ...

    def release(self) -> None:
        """Free the memory the workload holds (idempotent)."""
        ...


class Session(Protocol):
    """A backend opened on one device."""

    device: DeviceInfo
    timer: TimerName

    def free_memory_bytes(self) -> int | None:
        """Memory that may be allocated now, or None when unknown."""
        ...

    def environment(self) -> dict[str, JsonValue]:
        """Versions and settings that explain the figures (BLAS, threads, CUDA, TF32)."""
        ...

    def gemm(self, dtype: str, n: int) -> Workload:
        """Allocate an n×n GEMM with random normal inputs. Raises :class:`OutOfMemory`."""
        ...

    def copy(self, nbytes: int) -> Workload:
        """Allocate a device-memory copy of ``nbytes``. Raises :class:`OutOfMemory`."""
        ...

    def transfer(self, direction: Literal["h2d", "d2h"], pinned: bool, nbytes: int) -> Workload:
        """Allocate a host/device transfer. Raises :class:`OutOfMemory`."""
        ...

    def close(self) -> None:
        """Free everything the session still holds."""
        ...


class Backend(Protocol):
    """A way to run the benchmark (numpy on the CPU, torch or cupy on CUDA)."""

    name: str

    def status(self) -> BackendStatus:
        """Never raises: a missing import or driver is ``available=False`` with a reason."""
        ...

    def devices(self) -> list[DeviceInfo]:
        """The devices this backend can run on. Raises :class:`BackendError`."""
        ...

    def capabilities(self, device_index: int) -> Capabilities:
        """What can be measured on this device. Raises :class:`BackendError`."""
        ...

    def open(self, device_index: int) -> Session:
        """Open a session on one device. Raises :class:`BackendError`."""
        ...


def bytes_per_element(dtype: str) -> int:
    """Storage size of one element of a GEMM dtype ("tf32" is stored as FP32)."""
    return {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}[dtype]
