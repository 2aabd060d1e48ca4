"""What a benchmark run measures: tests, dtypes, sizes, repetitions.

A plan is built from what a backend can do on one device
(:class:`Capabilities`) and whether the user asked for the quick or the full
run. Sizes in the plan are the ones *asked for*; the runner may step them down
for free memory, out-of-memory or a too-slow single call, and says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: A test a plan can include; "sweep" is GEMM throughput over a range of sizes.
TestName = Literal["gemm", "copy", "h2d", "d2h", "sweep"]
ALL_TESTS: tuple[TestName, ...] = ("gemm", "copy", "h2d", "d2h", "sweep")
#: GEMM dtypes in display order. "tf32" is FP32 storage with TF32 tensor-core math.
ALL_DTYPES: tuple[str, ...] = ("fp64", "fp32", "tf32", "fp16", "bf16")
DeviceKindName = Literal["cpu", "cuda", "rocm", "mps"]
Mode = Literal["quick", "full"]

MIB = 1024 * 1024
#: When the last-level cache size cannot be read.
FALLBACK_COPY_BYTES = 256 * MIB


class Capabilities(BaseModel):
    """What one backend can measure on one device (known without allocating)."""

    model_config = ConfigDict(frozen=True)

    kind: DeviceKindName
    tests: tuple[TestName, ...]
    gemm_dtypes: tuple[str, ...]
    #: Largest cache the copy must defeat: CPU L3, GPU L2.
    last_level_cache_bytes: int | None = None


class BenchPlan(BaseModel):
    """One benchmark run, fully specified."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device_index: int = Field(default=0, ge=0)
    mode: Mode = "quick"
    tests: tuple[TestName, ...]
    gemm_dtypes: tuple[str, ...] = ()
    #: Square GEMM size n (n×n times n×n) for the main GEMM results.
    gemm_size: int = Field(default=2048, ge=16)
    sweep_dtypes: tuple[str, ...] = ()
    sweep_sizes: tuple[int, ...] = ()
    #: Bytes in each of the two copy buffers (read one, write the other).
    copy_bytes: int = Field(default=FALLBACK_COPY_BYTES, ge=4096)
    #: Bytes moved per host/device transfer.
    transfer_bytes: int = Field(default=256 * MIB, ge=4096)
    repetitions: int = Field(default=5, ge=1, le=1000)
    warmup: int = Field(default=1, ge=0, le=100)
    #: Timed repetitions of each sweep point (the sweep is a curve, not a headline).
    sweep_repetitions: int = Field(default=3, ge=1, le=1000)
    #: A repetition repeats the operation until it lasts at least this long,
    #: so that timer resolution and launch overhead do not dominate small sizes.
    min_rep_seconds: float = Field(default=0.02, gt=0)
    #: No single repetition (or un-sliceable call) may last longer: cancel stays prompt.
    max_rep_seconds: float = Field(default=0.25, gt=0)
    #: Share of free memory the runner lets one test allocate.
    memory_fraction: float = Field(default=0.5, gt=0, le=0.95)
    #: Sweep points that would end the run past this many seconds are skipped
    #: (noted), so a quick run keeps its promise on a slow or busy machine.
    time_budget_s: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _consistent(self) -> BenchPlan:
        unknown = [
            dtype for dtype in (*self.gemm_dtypes, *self.sweep_dtypes) if dtype not in ALL_DTYPES
        ]
        if unknown:
            raise ValueError(f"unknown dtype(s) {unknown}; known: {', '.join(ALL_DTYPES)}")
        if any(size < 16 for size in self.sweep_sizes):
            raise ValueError("sweep sizes must be at least 16")
        if self.min_rep_seconds > self.max_rep_seconds:
            raise ValueError("min_rep_seconds must not exceed max_rep_seconds")
        return self

    def steps(self) -> list[str]:
        """Human names of the steps in run order (for progress and tests)."""
        names: list[str] = []
        if "gemm" in self.tests:
            names += [f"GEMM {dtype.upper()} n={self.gemm_size}" for dtype in self.gemm_dtypes]
        if "copy" in self.tests:
            names.append("memory copy")
        for direction in ("h2d", "d2h"):
            if direction in self.tests:
                names += [f"{direction.upper()} pageable", f"{direction.upper()} pinned"]
        if "sweep" in self.tests:
            names += [
                f"sweep {dtype.upper()} n={size}"
                for dtype in self.sweep_dtypes
                for size in self.sweep_sizes
            ]
        return names


def powers_of_two(low: int, high: int) -> tuple[int, ...]:
    """256, 512, ... up to and including ``high`` (both powers of two)."""
    sizes: list[int] = []
    size = low
    while size <= high:
        sizes.append(size)
        size *= 2
    return tuple(sizes)


def copy_bytes_for(last_level_cache_bytes: int | None, floor_bytes: int) -> int:
    """A copy buffer at least 4× the last-level cache, so the copy streams from memory."""
    if last_level_cache_bytes is None or last_level_cache_bytes <= 0:
        return max(FALLBACK_COPY_BYTES, floor_bytes)
    return max(4 * last_level_cache_bytes, floor_bytes)


def make_plan(
    caps: Capabilities,
    *,
    full: bool = False,
    device_index: int = 0,
    tests: Iterable[str] | None = None,
    dtypes: Iterable[str] | None = None,
) -> BenchPlan:
    """The default quick (or full) plan for this backend and device.

    ``tests`` and ``dtypes`` narrow the plan; names the backend cannot run are
    dropped (a CPU has no host-to-device transfer).

    Raises:
        ValueError: a test or dtype name that no backend knows.
    """
    wanted_tests = _known(tests, ALL_TESTS, "test")
    wanted_dtypes = _known(dtypes, ALL_DTYPES, "dtype")
    chosen_tests = tuple(
        name
        for name in ALL_TESTS
        if name in caps.tests and (wanted_tests is None or name in wanted_tests)
    )
    gemm_dtypes = tuple(
        dtype
        for dtype in ALL_DTYPES
        if dtype in caps.gemm_dtypes and (wanted_dtypes is None or dtype in wanted_dtypes)
    )
    if caps.kind == "cpu":
        # One FP64 GEMM at n=2048 takes ~0.15 s on two recent cores, so the
        # quick run (both dtypes, copy, sweep) stays well under 30 s on a
        # small machine; the full run goes up to n=8192 (time-sliced).
        gemm_size = 4096 if full else 2048
        sweep_sizes = powers_of_two(256, 8192 if full else 2048)
        sweep_preferred: tuple[str, ...] = ("fp32",)
        copy_floor = 64 * MIB
        transfer_bytes = 64 * MIB
        warmup = 1
        # The promise is under 30 s on a 2-core machine; leave room for start-up.
        budget = None if full else 25.0
    else:
        gemm_size = 16384 if full else 8192
        sweep_sizes = powers_of_two(256, 16384 if full else 8192)
        sweep_preferred = ("fp16", "fp32")
        copy_floor = (1024 if full else 512) * MIB
        transfer_bytes = (512 if full else 256) * MIB
        warmup = 3
        # Under 15 s on a GPU, CUDA start-up (a few seconds) included.
        budget = None if full else 10.0
    sweep_dtypes = tuple(
        dtype
        for dtype in sweep_preferred
        if dtype in caps.gemm_dtypes and (wanted_dtypes is None or dtype in wanted_dtypes)
    )
    if not sweep_dtypes and gemm_dtypes:
        sweep_dtypes = gemm_dtypes[:1]
    return BenchPlan(
        device_index=device_index,
        mode="full" if full else "quick",
        tests=chosen_tests,
        gemm_dtypes=gemm_dtypes,
        gemm_size=gemm_size,
        sweep_dtypes=sweep_dtypes,
        sweep_sizes=sweep_sizes,
        copy_bytes=copy_bytes_for(caps.last_level_cache_bytes, copy_floor),
        transfer_bytes=transfer_bytes,
        warmup=warmup,
        time_budget_s=budget,
    )


def _known(names: Iterable[str] | None, known: tuple[str, ...], what: str) -> set[str] | None:
    if names is None:
        return None
    chosen = {name.strip().lower() for name in names if name.strip()}
    unknown = sorted(chosen - set(known))
    if unknown:
        raise ValueError(f"unknown {what}(s): {', '.join(unknown)}; known: {', '.join(known)}")
    return chosen
