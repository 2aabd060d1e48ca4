"""Harness check: the CPU benchmark against a plain numpy timing loop, same process.

The plain loop is what a user would write by hand: random normal matrices,
one warm-up product, five timed ``a @ b`` with ``time.perf_counter``, the
median. The benchmark's FP64 GEMM figure must come within 10% of it, and the
default quick run must finish in under 30 s on a 2-core machine.

The two are interleaved over a few rounds (loop, bench, loop, bench, ...).
On a shared 2-core machine other processes steal whole rounds from either
side, so the check compares each side's best round (the undisturbed figure);
the ratio of the medians is reported beside it.

Run alone: ``python tests/benchmarks/bench_cpu_accuracy.py`` (exit 1 when a
target is missed). The harness runner calls :func:`measure`.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from typing import Any

import numpy as np

from gpudesk.bench.backends.numpy_backend import NumpyBackend, blas_info
from gpudesk.bench.plan import make_plan
from gpudesk.bench.runner import run_benchmark
from gpudesk.progress import Cancelled, NullProgress, ProgressState

TOLERANCE = 0.10
QUICK_LIMIT_S = 30.0


def plain_numpy_tflops(n: int, repetitions: int = 5) -> float:
    """FP64 GEMM TFLOPS from the simplest honest timing loop."""
    rng = np.random.default_rng()
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    a @ b
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times) / 1e12


def cancel_latency_s(after_s: float = 1.5) -> float:
    """Seconds from a cancel request to the end of a full CPU run (target: under 0.5 s)."""
    backend = NumpyBackend()
    plan = make_plan(backend.capabilities(0), full=True)
    progress = ProgressState()
    ended = threading.Event()

    def work() -> None:
        try:
            run_benchmark(plan, backend, progress)
        except Cancelled:
            pass
        finally:
            ended.set()

    thread = threading.Thread(target=work)
    thread.start()
    time.sleep(after_s)
    requested = time.perf_counter()
    progress.cancel()
    ended.wait()
    latency = time.perf_counter() - requested
    thread.join()
    return latency


def measure(rounds: int = 5) -> dict[str, Any]:
    """Both FP64 figures, their ratio, the quick run's wall time, and the BLAS in use."""
    backend = NumpyBackend()
    quick = make_plan(backend.capabilities(0))
    start = time.perf_counter()
    quick_result = run_benchmark(quick, backend, NullProgress())
    quick_s = time.perf_counter() - start

    fp64_plan = quick.model_copy(update={"tests": ("gemm",), "gemm_dtypes": ("fp64",)})
    bench: list[float] = []
    plain: list[float] = []
    first = quick_result.find("gemm", "fp64")
    if first is not None and first.value is not None:
        bench.append(first.value)
    for _ in range(rounds):
        plain.append(plain_numpy_tflops(quick.gemm_size))
        row = run_benchmark(fp64_plan, backend, NullProgress()).find("gemm", "fp64")
        if row is not None and row.value is not None:
            bench.append(row.value)
    bench_tflops = max(bench)
    plain_tflops = max(plain)
    ratio = bench_tflops / plain_tflops
    ratio_of_medians = statistics.median(bench) / statistics.median(plain)
    latencies = [cancel_latency_s(after_s) for after_s in (0.7, 1.5, 3.1)]
    return {
        "n": quick.gemm_size,
        "bench_fp64_tflops": bench_tflops,
        "plain_fp64_tflops": plain_tflops,
        "ratio": ratio,
        "ratio_of_medians": ratio_of_medians,
        "within_tolerance": abs(ratio - 1.0) <= TOLERANCE,
        "bench_rounds": bench,
        "plain_rounds": plain,
        "quick_run_s": quick_s,
        "quick_run_under_limit": quick_s < QUICK_LIMIT_S,
        "quick_run_ok": quick_result.ok,
        "cancel_latency_s": latencies,
        "cancel_under_half_a_second": max(latencies) < 0.5,
        "blas": blas_info(),
    }


def main() -> int:
    figures = measure()
    print(json.dumps(figures, indent=2))
    print(
        f"FP64 GEMM n={figures['n']} (best round): bench "
        f"{figures['bench_fp64_tflops'] * 1000:.1f} GFLOPS, "
        f"plain loop {figures['plain_fp64_tflops'] * 1000:.1f} GFLOPS, "
        f"ratio {figures['ratio']:.3f} (medians: {figures['ratio_of_medians']:.3f}); "
        f"quick run {figures['quick_run_s']:.1f} s; "
        f"cancel latency up to {max(figures['cancel_latency_s']):.2f} s"
    )
    ok = (
        figures["within_tolerance"] and figures["quick_run_under_limit"] and figures["quick_run_ok"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
