"""Harness check: the CPU benchmark against a plain numpy timing loop, same process.

The plain loop is what a user would write by hand: random normal matrices,
one warm-up product, five timed ``a @ b`` with ``time.perf_counter``, the
median. The benchmark's FP64 GEMM figure (``run_benchmark`` with an FP64-only
quick plan: the same n, one warm-up, five repetitions, the median) must reach
at least 0.95x of it, and the default quick run must finish in under 30 s on
a 2-core machine.

The two sides are interleaved product by product (A/B/A/B): the loop's timed
products run in the runner's progress report after each of the bench's timed
repetitions (outside the bench's timer), so a load change from other
processes hits both sides alike instead of whichever round it fell in. On a
2-core machine with a load of 5-10, rounds measured a few seconds apart
(the earlier method) gave ratios from 0.13 to 1.4 in one run. The figure
is the median over rounds of each round's ratio bench / loop; each side's
best round and the ratio of the medians are reported beside it. The quick
run's own FP64 row (measured first) is reported on its own and kept out of
the comparison.

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

#: The bench's FP64 GEMM must reach this fraction of the plain loop's figure.
TARGET = 0.95
QUICK_LIMIT_S = 30.0


class PlainLoopBetweenRepetitions:
    """A Progress that times one plain ``a @ b`` after each of the bench's timed repetitions.

    The runner reports "<step>: repetition k" right after timed repetition k,
    outside its timer; the loop's product runs there. The loop's matrices and
    warm-up product are made before the bench starts.
    """

    def __init__(self, n: int) -> None:
        rng = np.random.default_rng()
        self.a = rng.standard_normal((n, n))
        self.b = rng.standard_normal((n, n))
        self.n = n
        self.a @ self.b  # the loop's warm-up
        self.seconds: list[float] = []

    def report(self, fraction: float, message: str) -> None:
        if ": repetition " in message:
            start = time.perf_counter()
            self.a @ self.b
            self.seconds.append(time.perf_counter() - start)

    def is_cancelled(self) -> bool:
        return False

    def check(self) -> None:
        """Never cancels."""

    def tflops(self) -> float:
        """FP64 GEMM TFLOPS of the loop: the median of its timed products."""
        return 2 * self.n**3 / statistics.median(self.seconds) / 1e12


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


def paired_ratios(bench: list[float], plain: list[float]) -> list[float]:
    """Each round's bench / plain figure (rounds in the order measured)."""
    return [ours / theirs for ours, theirs in zip(bench, plain, strict=True)]


def measure(rounds: int = 7) -> dict[str, Any]:
    """Both FP64 figures, their ratio, the quick run's wall time, and the BLAS in use."""
    backend = NumpyBackend()
    quick = make_plan(backend.capabilities(0))
    start = time.perf_counter()
    quick_result = run_benchmark(quick, backend, NullProgress())
    quick_s = time.perf_counter() - start
    first = quick_result.find("gemm", "fp64")

    fp64_plan = quick.model_copy(update={"tests": ("gemm",), "gemm_dtypes": ("fp64",)})
    bench: list[float] = []
    plain: list[float] = []
    bench_notes: list[str] = []

    for _ in range(rounds):
        loop = PlainLoopBetweenRepetitions(quick.gemm_size)
        row = run_benchmark(fp64_plan, backend, loop).find("gemm", "fp64")
        if row is None or row.value is None:
            raise RuntimeError(f"the benchmark's FP64 GEMM failed: {row and row.error}")
        if len(loop.seconds) != fp64_plan.repetitions:
            raise RuntimeError(
                f"the loop timed {len(loop.seconds)} products between the bench's "
                f"{fp64_plan.repetitions} repetitions: the runner's repetition reports changed"
            )
        bench.append(row.value)
        plain.append(loop.tflops())
        bench_notes.extend(note for note in row.notes if note not in bench_notes)
    ratios = paired_ratios(bench, plain)
    ratio = statistics.median(ratios)
    latencies = [cancel_latency_s(after_s) for after_s in (0.7, 1.5, 3.1)]
    return {
        "n": quick.gemm_size,
        "rounds": rounds,
        "order": "interleaved product by product: a loop product after each bench repetition",
        "bench_fp64_tflops": max(bench),
        "plain_fp64_tflops": max(plain),
        "ratio": ratio,
        "target": TARGET,
        "paired_ratios": ratios,
        "ratio_of_best": max(bench) / max(plain),
        "ratio_of_medians": statistics.median(bench) / statistics.median(plain),
        "within_tolerance": ratio >= TARGET,
        "bench_rounds": bench,
        "plain_rounds": plain,
        "bench_notes": bench_notes,
        "quick_run_fp64_tflops": None if first is None else first.value,
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
        f"FP64 GEMM n={figures['n']}: bench / plain loop {figures['ratio']:.3f} "
        f"(median of {figures['rounds']} paired rounds, "
        f"{min(figures['paired_ratios']):.3f}..{max(figures['paired_ratios']):.3f}; "
        f"target >= {figures['target']}); best rounds: bench "
        f"{figures['bench_fp64_tflops'] * 1000:.1f} GFLOPS, plain loop "
        f"{figures['plain_fp64_tflops'] * 1000:.1f} GFLOPS (ratio {figures['ratio_of_best']:.3f}); "
        f"quick run {figures['quick_run_s']:.1f} s; "
        f"cancel latency up to {max(figures['cancel_latency_s']):.2f} s"
    )
    ok = (
        figures["within_tolerance"] and figures["quick_run_under_limit"] and figures["quick_run_ok"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
