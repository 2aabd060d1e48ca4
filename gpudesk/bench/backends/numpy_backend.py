"""The CPU backend, always available: numpy GEMM (through its BLAS) and a copy on every core."""

from __future__ import annotations

import os
import platform
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np
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

_NP_DTYPES: dict[str, type[np.floating[Any]]] = {"fp64": np.float64, "fp32": np.float32}
#: The products run on a thread of their own while the calling thread checks for
#: cancel this often, so a cancel returns at once whatever n is; the product in
#: flight finishes on its thread and frees its matrices then.
CANCEL_POLL_S = 0.05
#: A product predicted (at the best rate seen) to take at most this long runs
#: whole, as a plain ``a @ b``: the same call as a user's own loop. Longer ones run
#: as row panels of about SLICE_SECONDS, so that the work left running after a
#: cancel stays short. Panels cost throughput when other processes load the
#: cores (each panel is one more join of the BLAS threads): 400-row panels of
#: n=2048 ran at 0.65x of whole products on a 2-core machine at load 6.
UNSLICED_LIMIT_S = 2.0
SLICE_SECONDS = 1.0
#: Thinner panels make the product memory-bound (each panel streams all of b):
#: 16-row panels of n=2048 ran at under 1 GFLOPS on a loaded 2-core machine,
#: which then kept the panels thin.
PANEL_MIN_ROWS = 128
#: The largest block the rate probe multiplies, and the time a probe step may take
#: before it stops growing.
PROBE_N = 1024
PROBE_STEP_SECONDS = 0.05
_CACHE_ROOT = Path("/sys/devices/system/cpu/cpu0/cache")


class NumpyBackend:
    """numpy on the CPU: FP64/FP32 GEMM through numpy's BLAS, and memory copy."""

    name = "numpy"

    def status(self) -> BackendStatus:
        return BackendStatus(name=self.name, available=True, version=np.__version__)

    def devices(self) -> list[DeviceInfo]:
        return [cpu_device()]

    def capabilities(self, device_index: int) -> Capabilities:
        _check_index(device_index)
        return Capabilities(
            kind="cpu",
            tests=("gemm", "copy", "sweep"),
            gemm_dtypes=("fp64", "fp32"),
            last_level_cache_bytes=last_level_cache_bytes(),
        )

    def open(self, device_index: int) -> NumpySession:
        _check_index(device_index)
        return NumpySession(cpu_device())


def _check_index(device_index: int) -> None:
    if device_index != 0:
        raise BackendError(f"numpy has one device (the CPU, index 0), not index {device_index}")


class NumpySession:
    """The CPU, opened for measuring."""

    timer: TimerName = "perf_counter"

    def __init__(self, device: DeviceInfo) -> None:
        self.device = device
        self._rng = np.random.default_rng(20240601)

    def free_memory_bytes(self) -> int | None:
        return available_memory_bytes()

    def environment(self) -> dict[str, JsonValue]:
        return cpu_environment()

    def gemm(self, dtype: str, n: int) -> Workload:
        if dtype not in _NP_DTYPES:
            raise BackendError(f"numpy measures fp64 and fp32 GEMM, not {dtype}")
        return NumpyGemm(self._rng, _NP_DTYPES[dtype], n)

    def copy(self, nbytes: int) -> Workload:
        return NumpyCopy(nbytes)

    def transfer(self, direction: Literal["h2d", "d2h"], pinned: bool, nbytes: int) -> Workload:
        raise BackendError("the CPU has no host-to-device transfer")

    def close(self) -> None:
        """Nothing to free: workloads release their own arrays."""


class NumpyGemm:
    """``a @ b`` on n×n random normal matrices; FLOPs = 2·n³.

    The products run on a helper thread, timed there with ``time.perf_counter``
    around the loop of calls; the calling thread waits, checking for cancel
    every :data:`CANCEL_POLL_S`. On a cancel it raises at once and the helper
    stops after the call in flight. A product predicted to take more than
    :data:`UNSLICED_LIMIT_S` is computed as row panels (``a[i:j] @ b`` into a
    preallocated result) of about :data:`SLICE_SECONDS` each, which bounds
    that leftover work; shorter products run whole, ``np.matmul(a, b,
    out=c)``: the same BLAS call as a user's own ``a @ b`` loop, into one
    preallocated result. The layout is chosen from the best
    FLOP rate seen (a probe product, then the first call) and fixed after the
    first call, so every timed repetition after the warm-up computes the
    product the same way; :attr:`method_note` says how when it was sliced.

    The matrices are filled on the first :meth:`run`, in row blocks with a
    cancellation check between blocks and before the timer starts: filling
    two 4096×4096 matrices takes longer than a cancel may wait.
    """

    sliceable = True

    def __init__(self, rng: np.random.Generator, dtype: type[np.floating[Any]], n: int) -> None:
        try:
            self._a: np.ndarray[Any, Any] | None = np.empty((n, n), dtype=dtype)
            self._b: np.ndarray[Any, Any] | None = np.empty((n, n), dtype=dtype)
        except MemoryError as exc:
            raise OutOfMemory(f"cannot allocate two {n}×{n} matrices") from exc
        self._rng = rng
        self._filled = False
        self._c: np.ndarray[Any, Any] | None = None
        self.n = n
        self.work = 2.0 * n**3
        #: The best FLOP rate seen so far (None before the probe).
        self._best_rate_flops: float | None = None
        #: Rows per panel once fixed after the first call (n: the plain product).
        self._fixed_rows: int | None = None

    @property
    def method_note(self) -> str | None:
        """How each product is computed, when it is not a plain ``a @ b``."""
        rows = self._fixed_rows
        if rows is None or rows >= self.n:
            return None
        panels = -(-self.n // rows)
        return (
            f"each n={self.n} product computed as {panels} row panels of up to {rows} rows "
            "(a @ b by row blocks, into one result), since one whole product would take "
            f"over {UNSLICED_LIMIT_S} s (panels bound the work left running after a cancel)"
        )

    def _panel_rows(self) -> int:
        """Rows per panel: n (a whole product) unless a call would pass UNSLICED_LIMIT_S."""
        if self._fixed_rows is not None:
            return self._fixed_rows
        rate = self._best_rate_flops
        if rate is None or rate <= 0:
            raise RuntimeError("the GEMM rate has not been probed")
        seconds_per_call = self.work / rate
        if seconds_per_call <= UNSLICED_LIMIT_S:
            return self.n
        rows = int(self.n * SLICE_SECONDS / seconds_per_call)
        return min(self.n, max(PANEL_MIN_ROWS, rows - rows % 16))

    def _note_rate(self, flops: float, seconds: float) -> None:
        if seconds > 0:
            rate = flops / seconds
            if self._best_rate_flops is None or rate > self._best_rate_flops:
                self._best_rate_flops = rate

    def _prepare(
        self, check: Callable[[], None]
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """Fill the matrices (in blocks, checking for cancel), probe the rate; return a, b."""
        a, b = self._a, self._b
        if a is None or b is None:
            raise RuntimeError("workload already released")
        if not self._filled:
            fill_standard_normal(self._rng, a, check)
            fill_standard_normal(self._rng, b, check)
            self._filled = True
        if self._best_rate_flops is None:
            flops, seconds = probe_gemm(a, b, check)
            self._note_rate(flops, seconds)
        return a, b

    def run(self, iterations: int, check: Callable[[], None]) -> float:
        a, b = self._prepare(check)
        rows = self._panel_rows()
        if self._c is None:
            # One result for every call: on the helper thread a fresh n×n result is a
            # fresh mmap each call (page faults inside the timer), which a loop on the
            # main thread mostly avoids through malloc's reuse; that cost the bench
            # 7% against the plain loop (paired, n=2048).
            try:
                self._c = np.empty_like(a)
            except MemoryError as exc:
                raise OutOfMemory("cannot allocate the result matrix") from exc
        job = ProductJob(a, b, self._c, rows, iterations)
        job.start()
        try:
            while not job.done.wait(CANCEL_POLL_S):
                check()
        except BaseException:
            job.stop.set()  # the helper ends after the call in flight
            raise
        elapsed = job.elapsed()
        check()
        self._note_rate(self.work * iterations, elapsed)
        if self._fixed_rows is None:
            # The first call (the warm-up) decides; the timed calls all run alike.
            self._fixed_rows = self._panel_rows()
        return elapsed

    def release(self) -> None:
        self._a = self._b = self._c = None


class ProductJob:
    """``iterations`` products ``a @ b`` into ``c`` (whole, or by row panels) on a helper thread.

    Timed on the helper around the whole loop, so the figure has no thread
    hand-off in it. ``stop`` ends the loop after the call in flight.
    """

    def __init__(
        self,
        a: np.ndarray[Any, Any],
        b: np.ndarray[Any, Any],
        c: np.ndarray[Any, Any],
        rows: int,
        iterations: int,
    ) -> None:
        self._operands: tuple[Any, Any, Any] | None = (a, b, c)
        self._rows = rows
        self._iterations = iterations
        self.done = threading.Event()
        self.stop = threading.Event()
        self._elapsed: float | None = None
        self._error: BaseException | None = None
        # Not a daemon: Python then waits for the call in flight before exiting. A
        # BLAS call still running when the process exits deadlocks OpenBLAS's own
        # shutdown (gotoblas_quit joins a worker that never wakes): seen after a cancel.
        self._thread = threading.Thread(target=self._work, name="gpudesk-gemm", daemon=False)

    def start(self) -> None:
        self._thread.start()

    def _work(self) -> None:
        assert self._operands is not None  # set until this method ends
        a, b, c = self._operands
        rows, n = self._rows, a.shape[0]
        try:
            start = time.perf_counter()
            for _ in range(self._iterations):
                for first in range(0, n, rows):
                    np.matmul(a[first : first + rows], b, out=c[first : first + rows])
                    if self.stop.is_set():
                        return
            self._elapsed = time.perf_counter() - start
        except BaseException as exc:  # handed to the calling thread
            self._error = exc
        finally:
            self._operands = None  # the job holds nothing once done
            self.done.set()

    def elapsed(self) -> float:
        """Seconds the loop took, once done. Raises the helper's error, if any."""
        if self._error is not None:
            if isinstance(self._error, MemoryError):
                raise OutOfMemory(f"out of memory computing the product: {self._error}")
            raise self._error
        if self._elapsed is None:
            raise RuntimeError("the product loop was stopped")
        return self._elapsed


#: Elements filled between two cancellation checks (about 10 ms of normal draws).
FILL_BLOCK_ELEMENTS = 1 << 20


def fill_standard_normal(
    rng: np.random.Generator, matrix: np.ndarray[Any, Any], check: Callable[[], None]
) -> None:
    """Fill a C-contiguous 2-D float matrix with standard normal draws, in row blocks."""
    rows_per_block = max(1, FILL_BLOCK_ELEMENTS // max(1, matrix.shape[1]))
    for first in range(0, matrix.shape[0], rows_per_block):
        rng.standard_normal(dtype=matrix.dtype.type, out=matrix[first : first + rows_per_block])
        check()


def probe_gemm(
    a: np.ndarray[Any, Any],
    b: np.ndarray[Any, Any],
    check: Callable[[], None],
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float]:
    """(FLOPs, seconds) of the fastest of two products of leading blocks of ``a`` and ``b``.

    The block grows from 256 to :data:`PROBE_N` (or n) while a product stays
    under :data:`PROBE_STEP_SECONDS`, so a slow machine never waits long on
    an uncancellable probe; a 256 block alone ran at less than half the rate
    of n=2048 on a 2-core machine, which sliced products that needed no slicing.
    """
    limit = min(a.shape[0], PROBE_N)
    size = min(256, limit)
    while True:
        block_a, block_b = a[:size, :size], b[:size, :size]
        seconds = []
        for _ in range(2):
            start = clock()
            block_a @ block_b
            seconds.append(clock() - start)
            check()
        best = min(seconds)
        if size >= limit or best > PROBE_STEP_SECONDS:
            return 2.0 * size**3, max(best, 1e-9)
        size = min(limit, size * 2)


def copy_threads() -> int:
    """CPUs this process may run on (its affinity mask), for the copy's thread pool."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def chunk_bounds(count: int, chunks: int) -> list[tuple[int, int]]:
    """``chunks`` nearly equal [start, stop) ranges covering ``count`` elements."""
    chunks = max(1, min(chunks, count))
    step, extra = divmod(count, chunks)
    bounds, start = [], 0
    for index in range(chunks):
        stop = start + step + (1 if index < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


class NumpyCopy:
    """``np.copyto(dst, src)`` on two buffers of ``nbytes``, split over every core.

    One core cannot saturate a memory controller, so the buffers are cut into
    one chunk per CPU and copied on a thread pool (numpy releases the GIL while
    copying); each thread first touches the pages it will copy. Bytes moved =
    2·nbytes (every byte read once and written once).
    """

    sliceable = False

    def __init__(self, nbytes: int, threads: int | None = None) -> None:
        count = max(1, nbytes // 8)
        self.threads = threads or copy_threads()
        self._chunks = chunk_bounds(count, self.threads)
        self._pool: ThreadPoolExecutor | None = None
        if len(self._chunks) > 1:
            self._pool = ThreadPoolExecutor(len(self._chunks), thread_name_prefix="gpudesk-copy")
        try:
            self._src: np.ndarray[Any, Any] | None = np.empty(count)
            self._dst: np.ndarray[Any, Any] | None = np.empty(count)
        except MemoryError as exc:
            self.release()
            raise OutOfMemory(f"cannot allocate two buffers of {nbytes} bytes") from exc
        src, dst = self._src, self._dst

        def touch(bounds: tuple[int, int]) -> None:
            # Writing now maps every page on the thread that will copy it, so the
            # first timed copy pays no page faults.
            src[bounds[0] : bounds[1]] = 1.5
            dst[bounds[0] : bounds[1]] = 0.0

        self._each(touch)
        self.work = 2.0 * count * 8

    def _each(self, function: Callable[[tuple[int, int]], None]) -> None:
        if self._pool is None:
            for bounds in self._chunks:
                function(bounds)
        else:
            # list() waits for every chunk and re-raises a worker's exception.
            list(self._pool.map(function, self._chunks))

    def run(self, iterations: int, check: Callable[[], None]) -> float:
        src, dst = self._src, self._dst
        if src is None or dst is None:
            raise RuntimeError("workload already released")

        def copy(bounds: tuple[int, int]) -> None:
            np.copyto(dst[bounds[0] : bounds[1]], src[bounds[0] : bounds[1]])

        start = time.perf_counter()
        for _ in range(iterations):
            self._each(copy)
            check()
        return time.perf_counter() - start

    def release(self) -> None:
        self._src = self._dst = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


# --- the CPU itself ----------------------------------------------------------


def cpu_device() -> DeviceInfo:
    return DeviceInfo(
        kind="cpu",
        index=0,
        name=cpu_model_name() or platform.processor() or platform.machine() or "CPU",
        vendor=_cpu_vendor(),
        memory_total_bytes=_meminfo_bytes("MemTotal"),
        threads=os.cpu_count(),
        last_level_cache_bytes=last_level_cache_bytes(),
    )


def _cpuinfo_field(name: str) -> str | None:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == name and value.strip():
            return value.strip()
    return None


def cpu_model_name() -> str | None:
    return _cpuinfo_field("model name")


def _cpu_vendor() -> str | None:
    vendor = _cpuinfo_field("vendor_id")
    return {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}.get(vendor or "", vendor)


def parse_cache_size(text: str) -> int | None:
    """Bytes from a sysfs cache size like "32768K" or "1M"; None if unreadable."""
    text = text.strip().upper()
    factor = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:], 1)
    digits = text.rstrip("KMG")
    return int(digits) * factor if digits.isdigit() else None


def last_level_cache_bytes(root: Path = _CACHE_ROOT) -> int | None:
    """The largest data or unified cache of CPU 0, from sysfs (None when unreadable)."""
    best_level, best_size = -1, None
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text().strip())
            size = parse_cache_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or size is None:
            continue
        if level > best_level:
            best_level, best_size = level, size
    return best_size


def _meminfo_bytes(key: str) -> int | None:
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        name, _, rest = line.partition(":")
        if name == key:
            parts = rest.split()
            if parts and parts[0].isdigit():
                return int(parts[0]) * 1024
    return None


def available_memory_bytes() -> int | None:
    found = _meminfo_bytes("MemAvailable")
    if found is not None:
        return found
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def blas_info() -> list[dict[str, JsonValue]]:
    """The BLAS libraries numpy loaded, with kernel and thread count (threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # an optional nicety: the figures stand without it
        return []
    found: list[dict[str, JsonValue]] = []
    for pool in threadpool_info():
        if pool.get("user_api") != "blas":
            continue
        found.append(
            {
                "library": pool.get("internal_api"),
                "version": pool.get("version"),
                "threads": pool.get("num_threads"),
                "kernel": pool.get("architecture"),
                "threading_layer": pool.get("threading_layer"),
                "file": Path(str(pool.get("filepath", ""))).name or None,
            }
        )
    return found


def cpu_environment() -> dict[str, JsonValue]:
    blas = blas_info()
    env: dict[str, JsonValue] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__,
        "cpu": cpu_model_name(),
        "logical_cpus": os.cpu_count(),
        "blas": list(blas),
        "blas_threads": blas[0]["threads"] if blas else None,
        "copy_threads": copy_threads(),
    }
    # These change which OpenBLAS kernel runs, and so the figures.
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name)
        if value is not None:
            env[name] = value
    return env
