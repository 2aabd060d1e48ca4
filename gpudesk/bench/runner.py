"""Run a benchmark plan: a pure function of plan, backend and progress.

Measuring policy, the same for every backend:

* sizes fit in ``memory_fraction`` of the free memory before anything is
  allocated; an out-of-memory error halves the size and tries again, noted
  in the result;
* warm-up calls first, then at least ``repetitions`` timed repetitions; a
  repetition repeats the call until it lasts ``min_rep_seconds`` (timer
  resolution) but never beyond ``max_rep_seconds`` (cancel stays prompt);
  the median per-call time gives ``value``, the extremes ``min``/``max``;
* an operation that cannot be split (a GPU kernel) and whose single call
  would exceed ``max_rep_seconds`` is run at a smaller size, noted;
* cancellation is checked between calls, repetitions and steps, and inside
  sliced calls; :class:`gpudesk.progress.Cancelled` propagates after every
  buffer is released;
* a test that fails becomes a result row with ``error``; a backend that
  cannot start becomes a result with ``error``. Nothing here raises for that;
* a sticky device error (:class:`DeviceFailed`: an illegal address, a launch
  failure) ends the run: that test's row says so, later tests are not run, and
  the result's ``error`` tells the user to restart, since every later call in
  the process would fail the same way;
* a GEMM in FP32 storage that the backend ran with TF32 tensor-core math is a
  ``tf32`` row, set against the TF32 peak, never an FP32 row.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from gpudesk.bench.backends.base import (
    Backend,
    DeviceFailed,
    OutOfMemory,
    Session,
    Workload,
    bytes_per_element,
)
from gpudesk.bench.peaks import with_peak
from gpudesk.bench.plan import BenchPlan
from gpudesk.bench.results import (
    UNIT_FOR_TEST,
    BenchResult,
    Measurement,
    ResultTest,
    Telemetry,
    finite_or_none,
)
from gpudesk.bench.telemetry import DeviceProbe, NoTelemetry, SystemProbe, TelemetrySource
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.progress import Cancelled, Progress

MIN_GEMM_N = 256
MIN_COPY_BYTES = 16 * 1024 * 1024
MIN_TRANSFER_BYTES = 4 * 1024 * 1024
#: Size at which an un-sliceable GEMM is probed to predict the planned size's call time.
PROBE_N = 1024
_GIB = 1024**3


@dataclass(frozen=True, slots=True)
class Timing:
    """Per-call seconds of each timed repetition."""

    seconds_per_call: list[float]
    iterations: int

    def rates(self, work: float, scale: float) -> tuple[float | None, float | None, float | None]:
        """(median, min, max) of work per second divided by ``scale``."""
        floor = 1e-12  # a zero reading would divide by zero
        median = statistics.median(self.seconds_per_call)
        slowest = max(self.seconds_per_call)
        fastest = min(self.seconds_per_call)
        return (
            finite_or_none(work / max(median, floor) / scale),
            finite_or_none(work / max(slowest, floor) / scale),
            finite_or_none(work / max(fastest, floor) / scale),
        )


def time_workload(
    workload: Workload,
    *,
    repetitions: int,
    warmup: int,
    min_rep_seconds: float,
    max_rep_seconds: float,
    check: Callable[[], None],
    on_repetition: Callable[[int], None] | None = None,
) -> Timing:
    """Warm up, choose calls per repetition, time the repetitions.

    Raises:
        Cancelled: through ``check``.
        OutOfMemory: from the workload.
    """
    per_call: float | None = None
    for _ in range(warmup):
        per_call = workload.run(1, check)
        check()
    iterations = 1
    if per_call is not None and per_call > 0:
        wanted = math.ceil(min_rep_seconds / per_call)
        allowed = max(1, math.floor(max_rep_seconds / per_call))
        iterations = max(1, min(wanted, allowed))
    seconds: list[float] = []
    for index in range(repetitions):
        elapsed = workload.run(iterations, check)
        seconds.append(elapsed / iterations)
        check()
        if on_repetition is not None:
            on_repetition(index + 1)
    return Timing(seconds, iterations)


def fit_gemm_size(n: int, element_bytes: int, free_bytes: int | None, fraction: float) -> int:
    """The largest n' ≤ n (halving) whose three n'×n' matrices fit in ``fraction`` of free memory.

    A size that fits is kept even below :data:`MIN_GEMM_N`; halving stops
    there. Returns 0 when nothing fits.
    """
    if free_bytes is None:
        return n
    budget = free_bytes * fraction
    if 3 * n * n * element_bytes <= budget:
        return n
    while n > MIN_GEMM_N and 3 * n * n * element_bytes > budget:
        n = max(MIN_GEMM_N, n // 2)
    return n if 3 * n * n * element_bytes <= budget else 0


def fit_bytes(
    nbytes: int, buffers: int, free_bytes: int | None, fraction: float, floor: int
) -> int:
    """The largest size ≤ nbytes (halving, not below ``floor``) whose ``buffers`` copies fit.

    Returns 0 when nothing fits.
    """
    if free_bytes is None:
        return nbytes
    budget = free_bytes * fraction
    if buffers * nbytes <= budget:
        return nbytes
    while nbytes > floor and buffers * nbytes > budget:
        nbytes = max(floor, nbytes // 2)
    return nbytes if buffers * nbytes <= budget else 0


def _gib(nbytes: float) -> str:
    return f"{nbytes / _GIB:.2f} GiB"


def _size_text(test: str, size: int) -> str:
    return f"n={size}" if test == "gemm" else f"{size / 2**20:.0f} MiB"


class _Run:
    """One run's mutable state: the session, progress accounting and notes."""

    def __init__(self, plan: BenchPlan, session: Session, progress: Progress) -> None:
        self.plan = plan
        self.session = session
        self.progress = progress
        self.steps = plan.steps()
        self.step_index = 0
        self.notes: list[str] = []
        #: Whether the last workload made could split its calls (CPU) or not (GPU).
        self.last_sliceable = False
        self.t0 = time.monotonic()
        #: Set by a sticky device error: the run stops.
        self.device_failure: str | None = None

    def device_failed(
        self, test: ResultTest, dtype: str, size: int, exc: DeviceFailed, notes: list[str]
    ) -> Measurement:
        """The row of the test that met a sticky device error; marks the run as stopped."""
        self.device_failure = str(exc)
        return self.error_row(
            test, dtype, size, f"the device failed (sticky CUDA error): {exc}", notes
        )

    # -- progress -----------------------------------------------------------------

    def begin(self, name: str, repetitions: int) -> Callable[[int], None]:
        self.progress.check()
        total = max(1, len(self.steps))
        base = self.step_index
        self.progress.report(base / total, name)

        def on_repetition(done: int) -> None:
            fraction = (base + done / max(1, repetitions)) / total
            self.progress.report(min(fraction, (base + 1) / total), f"{name}: repetition {done}")

        return on_repetition

    def end(self) -> None:
        self.step_index += 1

    # -- one measured row, with out-of-memory step-down -------------------------------

    def measure(
        self,
        *,
        test: ResultTest,
        dtype: str,
        size: int,
        make: Callable[[int], Workload],
        floor: int,
        shrink: Callable[[int], int],
        repetitions: int,
        warmup: int,
        notes: list[str],
        on_repetition: Callable[[int], None] | None = None,
        host_memory: Literal["pageable", "pinned"] | None = None,
        tf32_enabled: bool | None = None,
    ) -> Measurement:
        unit = UNIT_FOR_TEST[test]
        scale = 1e12 if test == "gemm" else 1e9
        while True:
            workload: Workload | None = None
            try:
                workload = make(size)
                self.last_sliceable = workload.sliceable
                timing = time_workload(
                    workload,
                    repetitions=repetitions,
                    warmup=warmup,
                    min_rep_seconds=self.plan.min_rep_seconds,
                    max_rep_seconds=self.plan.max_rep_seconds,
                    check=self.progress.check,
                    on_repetition=on_repetition,
                )
                value, low, high = timing.rates(workload.work, scale)
                if value is None:
                    raise ValueError("the timer measured no time")
                method = getattr(workload, "method_note", None)
                row_notes = (*notes, method) if isinstance(method, str) and method else notes
                return Measurement(
                    test=test,
                    dtype=dtype,
                    size=size,
                    value=value,
                    unit=unit,
                    min=low,
                    max=high,
                    repetitions=repetitions,
                    warmup=warmup,
                    iterations_per_repetition=timing.iterations,
                    timer=self.session.timer,
                    host_memory=host_memory,
                    tf32_enabled=tf32_enabled,
                    notes=tuple(row_notes),
                )
            except OutOfMemory as exc:
                smaller = shrink(size)
                if smaller < floor:
                    return self.error_row(
                        test,
                        dtype,
                        size,
                        f"out of memory even at {_size_text(test, size)}: {exc}",
                        notes,
                        host_memory,
                    )
                notes.append(
                    f"out of memory at {_size_text(test, size)}; "
                    f"stepped down to {_size_text(test, smaller)}"
                )
                size = smaller
            except Cancelled:
                raise
            except DeviceFailed as exc:
                return self.device_failed(test, dtype, size, exc, notes)
            except Exception as exc:  # one failing test must not end the run
                return self.error_row(
                    test, dtype, size, f"{type(exc).__name__}: {exc}", notes, host_memory
                )
            finally:
                if workload is not None:
                    workload.release()

    def error_row(
        self,
        test: ResultTest,
        dtype: str,
        size: int,
        message: str,
        notes: list[str],
        host_memory: Literal["pageable", "pinned"] | None = None,
    ) -> Measurement:
        return Measurement(
            test=test,
            dtype=dtype,
            size=max(0, size),
            value=None,
            unit=UNIT_FOR_TEST[test],
            host_memory=host_memory,
            notes=tuple(notes),
            error=message[:2000],
        )

    # -- tests --------------------------------------------------------------------------

    def limit_call_time(self, dtype: str, n: int, notes: list[str]) -> int:
        """Shrink n for an un-sliceable GEMM whose single call would outlast a repetition."""
        if n <= PROBE_N:
            return n
        try:
            probe = self.session.gemm(dtype, PROBE_N)
        except OutOfMemory:
            return n  # the measurement itself steps down
        try:
            if probe.sliceable:
                return n
            probe.run(1, self.progress.check)
            seconds = probe.run(1, self.progress.check)
        finally:
            probe.release()
        estimate = seconds * (n / PROBE_N) ** 3
        planned = n
        while n > PROBE_N and estimate > self.plan.max_rep_seconds:
            n //= 2
            estimate /= 8
        if n != planned:
            notes.append(
                f"n reduced from {planned} to {n}: one call at n={planned} would take about "
                f"{seconds * (planned / PROBE_N) ** 3:.2f} s (calls must stay under "
                f"{self.plan.max_rep_seconds} s to cancel promptly)"
            )
        return n

    def gemm(self, dtype: str, tf32_enabled: bool | None) -> Measurement:
        on_rep = self.begin(f"GEMM {dtype.upper()} n={self.plan.gemm_size}", self.plan.repetitions)
        notes: list[str] = []
        row = self._gemm(dtype, tf32_enabled, on_rep, notes)
        return as_tf32_if_it_was(row)

    def _gemm(
        self,
        dtype: str,
        tf32_enabled: bool | None,
        on_rep: Callable[[int], None],
        notes: list[str],
    ) -> Measurement:
        planned = self.plan.gemm_size
        free = self.session.free_memory_bytes()
        element = bytes_per_element(dtype)
        n = fit_gemm_size(planned, element, free, self.plan.memory_fraction)
        try:
            if n == 0:
                return self.error_row(
                    "gemm",
                    dtype,
                    planned,
                    f"not enough free memory for n={MIN_GEMM_N} ({_gib(free or 0)} free)",
                    notes,
                )
            if n != planned:
                notes.append(
                    f"n reduced from {planned} to {n} to fit in free memory ({_gib(free or 0)})"
                )
            n = self.limit_call_time(dtype, n, notes)
            return self.measure(
                test="gemm",
                dtype=dtype,
                size=n,
                make=lambda size: self.session.gemm(dtype, size),
                floor=MIN_GEMM_N,
                shrink=lambda size: size // 2,
                repetitions=self.plan.repetitions,
                warmup=self.plan.warmup,
                notes=notes,
                on_repetition=on_rep,
                tf32_enabled=tf32_enabled,
            )
        except Cancelled:
            raise
        except DeviceFailed as exc:
            return self.device_failed("gemm", dtype, n, exc, notes)
        except Exception as exc:
            return self.error_row("gemm", dtype, n, f"{type(exc).__name__}: {exc}", notes)
        finally:
            self.end()

    def copy(self, cache_bytes: int | None) -> Measurement:
        on_rep = self.begin("memory copy", self.plan.repetitions)
        notes: list[str] = []
        planned = self.plan.copy_bytes
        free = self.session.free_memory_bytes()
        nbytes = fit_bytes(planned, 2, free, self.plan.memory_fraction, MIN_COPY_BYTES)
        try:
            if nbytes == 0:
                return self.error_row(
                    "copy", "bytes", planned, f"not enough free memory ({_gib(free or 0)})", notes
                )
            if nbytes != planned:
                notes.append(
                    f"buffers reduced to {_size_text('copy', nbytes)} to fit in free memory"
                )
            row = self.measure(
                test="copy",
                dtype="bytes",
                size=nbytes,
                make=self.session.copy,
                floor=MIN_COPY_BYTES,
                shrink=lambda size: size // 2,
                repetitions=self.plan.repetitions,
                warmup=self.plan.warmup,
                notes=notes,
                on_repetition=on_rep,
            )
            if cache_bytes and row.value is not None and row.size < 4 * cache_bytes:
                row = row.model_copy(
                    update={
                        "notes": (
                            *row.notes,
                            "buffers are smaller than 4x the last-level cache: "
                            "the figure may include cache bandwidth",
                        )
                    }
                )
            return row
        finally:
            self.end()

    def transfer(self, direction: Literal["h2d", "d2h"], pinned: bool) -> Measurement:
        kind: Literal["pageable", "pinned"] = "pinned" if pinned else "pageable"
        on_rep = self.begin(f"{direction.upper()} {kind}", self.plan.repetitions)
        notes: list[str] = []
        planned = self.plan.transfer_bytes
        free = self.session.free_memory_bytes()
        nbytes = fit_bytes(planned, 1, free, self.plan.memory_fraction, MIN_TRANSFER_BYTES)
        try:
            if nbytes == 0:
                return self.error_row(
                    direction,
                    "bytes",
                    planned,
                    f"not enough free memory ({_gib(free or 0)})",
                    notes,
                    kind,
                )
            if nbytes != planned:
                notes.append(f"buffer reduced to {_size_text(direction, nbytes)} to fit")
            return self.measure(
                test=direction,
                dtype="bytes",
                size=nbytes,
                make=lambda size: self.session.transfer(direction, pinned, size),
                floor=MIN_TRANSFER_BYTES,
                shrink=lambda size: size // 2,
                repetitions=self.plan.repetitions,
                warmup=self.plan.warmup,
                notes=notes,
                on_repetition=on_rep,
                host_memory=kind,
            )
        finally:
            self.end()

    def sweep(self, dtype: str, tf32_enabled: bool | None) -> list[Measurement]:
        points: list[Measurement] = []
        last: tuple[int, float] | None = None  # (n, seconds per call) of the previous point
        stopped = False
        for n in self.plan.sweep_sizes:
            on_rep = self.begin(f"sweep {dtype.upper()} n={n}", self.plan.sweep_repetitions)
            try:
                if stopped:
                    continue
                free = self.session.free_memory_bytes()
                if fit_gemm_size(n, bytes_per_element(dtype), free, self.plan.memory_fraction) != n:
                    self.notes.append(
                        f"sweep {dtype.upper()} stops before n={n}: three {n}x{n} matrices "
                        f"do not fit in {self.plan.memory_fraction:.0%} of {_gib(free or 0)} free"
                    )
                    stopped = True
                    continue
                if last is not None:
                    estimate = last[1] * (n / last[0]) ** 3
                    if not self.last_sliceable and estimate > self.plan.max_rep_seconds:
                        self.notes.append(
                            f"sweep {dtype.upper()} stops before n={n}: one call would take "
                            f"about {estimate:.2f} s"
                        )
                        stopped = True
                        continue
                    # warm-up plus the repetitions, each at least min_rep_seconds long
                    point_s = estimate + self.plan.sweep_repetitions * max(
                        estimate, self.plan.min_rep_seconds
                    )
                    budget = self.plan.time_budget_s
                    elapsed = time.monotonic() - self.t0
                    if budget is not None and elapsed + point_s > budget:
                        self.notes.append(
                            f"sweep {dtype.upper()} stops before n={n}: about {point_s:.1f} s "
                            f"more would pass the {self.plan.mode} run's {budget:.0f} s budget"
                        )
                        stopped = True
                        continue
                row = self.measure(
                    test="gemm",
                    dtype=dtype,
                    size=n,
                    make=lambda size: self.session.gemm(dtype, size),
                    floor=n,  # a sweep point is its size: no step-down
                    shrink=lambda size: size // 2,
                    repetitions=self.plan.sweep_repetitions,
                    warmup=1,
                    notes=[],
                    on_repetition=on_rep,
                    tf32_enabled=tf32_enabled,
                )
                if row.value is None:
                    self.notes.append(f"sweep {dtype.upper()} stops at n={n}: {row.error}")
                    stopped = True
                    continue
                points.append(row)
                last = (n, 2.0 * n**3 / (row.value * 1e12))
            finally:
                self.end()
        return points


def as_tf32_if_it_was(row: Measurement) -> Measurement:
    """An FP32-storage GEMM that ran with TF32 math is a TF32 row (TF32 peak, TF32 label)."""
    if row.test != "gemm" or row.dtype != "fp32" or row.tf32_enabled is not True:
        return row
    note = "FP32 storage with TF32 tensor-core math (the backend's setting): reported as TF32"
    return row.model_copy(update={"dtype": "tf32", "notes": (*row.notes, note)})


def _tf32_setting(environment: dict[str, JsonValue], dtype: str) -> bool | None:
    """TF32 state for an FP32-storage GEMM on CUDA, as the session reported it."""
    if dtype == "tf32":
        return True
    if dtype == "fp32":
        value = environment.get("fp32_gemm_uses_tf32")
        return value if isinstance(value, bool) else None
    return None


def _steps(
    plan: BenchPlan,
    run: _Run,
    environment: dict[str, JsonValue],
    cache_bytes: int | None,
    results: list[Measurement],
    sweep: list[Measurement],
) -> list[Callable[[], None]]:
    """The plan's tests in order, each appending its rows when called."""

    def gemm(dtype: str) -> Callable[[], None]:
        tf32 = _tf32_setting(environment, dtype)
        return lambda: results.append(run.gemm(dtype, tf32))

    def transfer(direction: Literal["h2d", "d2h"], pinned: bool) -> Callable[[], None]:
        return lambda: results.append(run.transfer(direction, pinned))

    def sweep_of(dtype: str) -> Callable[[], None]:
        tf32 = _tf32_setting(environment, dtype)
        return lambda: sweep.extend(as_tf32_if_it_was(row) for row in run.sweep(dtype, tf32))

    steps: list[Callable[[], None]] = []
    if "gemm" in plan.tests:
        steps.extend(gemm(dtype) for dtype in plan.gemm_dtypes)
    if "copy" in plan.tests:
        steps.append(lambda: results.append(run.copy(cache_bytes)))
    directions: tuple[Literal["h2d", "d2h"], ...] = ("h2d", "d2h")
    for direction in directions:
        if direction in plan.tests:
            steps.extend(transfer(direction, pinned) for pinned in (False, True))
    if "sweep" in plan.tests:
        steps.extend(sweep_of(dtype) for dtype in plan.sweep_dtypes)
    return steps


def run_benchmark(
    plan: BenchPlan,
    backend: Backend,
    progress: Progress,
    *,
    catalog: Sequence[CatalogEntry] = (),
    probe: DeviceProbe | None = None,
) -> BenchResult:
    """Run ``plan`` on ``backend`` and return the result; never raises for backend trouble.

    Args:
        plan: what to measure (see :func:`gpudesk.bench.plan.make_plan`).
        backend: numpy, torch or cupy (or a fake in tests).
        progress: receives the current step; cancelling stops the run within
            about ``plan.max_rep_seconds``.
        catalog: entries to match the device against (for peaks).
        probe: NVML context and telemetry; :class:`SystemProbe` when None.

    Raises:
        Cancelled: the user cancelled; every buffer was released first.
    """
    started_at = dt.datetime.now(dt.UTC)
    t0 = time.monotonic()

    def failed(message: str) -> BenchResult:
        return BenchResult(
            backend=backend.name,
            device=None,
            mode=plan.mode,
            started_at=started_at,
            duration_s=time.monotonic() - t0,
            error=message,
        )

    status = backend.status()
    if not status.available:
        return failed(f"backend {backend.name} is not available: {status.reason}")
    progress.report(0.0, f"starting {backend.name}")
    try:
        session = backend.open(plan.device_index)
    except Exception as exc:  # a backend that cannot start is a result, not a crash
        return failed(f"backend {backend.name} could not start: {type(exc).__name__}: {exc}")

    telemetry_source: TelemetrySource = NoTelemetry("not started")
    telemetry: Telemetry | None = None
    try:
        device = session.device
        try:
            environment: dict[str, JsonValue] = dict(session.environment())
        except Exception as exc:
            environment = {"environment_error": f"{type(exc).__name__}: {exc}"}
        environment["backend_version"] = status.version
        environment["timer"] = session.timer
        try:
            catalog_id, extra, telemetry_source = (probe or SystemProbe()).describe(device, catalog)
        except Exception as exc:  # NVML trouble must not cost the figures
            catalog_id, extra = None, {"nvml": f"unavailable: {type(exc).__name__}: {exc}"}
            telemetry_source = NoTelemetry(str(extra["nvml"]))
        environment.update(extra)
        entry = next((item for item in catalog if item.id == catalog_id), None)

        run = _Run(plan, session, progress)
        results: list[Measurement] = []
        sweep: list[Measurement] = []
        steps = _steps(plan, run, environment, device.last_level_cache_bytes, results, sweep)
        telemetry_source.start()
        try:
            for step in steps:
                step()
                if run.device_failure is not None:
                    break
        finally:
            telemetry = telemetry_source.stop()
        run_error = None
        if run.device_failure is not None:
            run_error = (
                f"stopped: the device failed with a sticky CUDA error ({run.device_failure}); "
                "this process cannot use it again, so the remaining tests were not run. "
                "Run the benchmark again in a new process; if it recurs, check `nvidia-smi` "
                "and the kernel log (`dmesg`) for Xid errors"
            )
        progress.report(1.0, "done")
        return BenchResult(
            backend=backend.name,
            device=device,
            catalog_id=catalog_id if entry is not None else None,
            results=tuple(with_peak(row, entry) for row in results),
            sweep=tuple(with_peak(row, entry) for row in sweep),
            environment=environment,
            mode=plan.mode,
            started_at=started_at,
            duration_s=time.monotonic() - t0,
            telemetry=telemetry,
            notes=tuple(run.notes),
            error=run_error[:2000] if run_error else None,
        )
    except Cancelled:
        raise
    except Exception as exc:
        return failed(f"backend {backend.name} failed: {type(exc).__name__}: {exc}")
    finally:
        # Closing after a failure may fail again; the figures stand.
        with contextlib.suppress(Exception):
            session.close()
