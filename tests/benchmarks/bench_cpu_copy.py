"""Harness check: the CPU copy figure against a plain threaded numpy copy, same run.

The reference is what a user would write to measure this machine's memory
bandwidth: two float64 buffers of the size the benchmark used, one
``np.copyto`` per CPU on its own slice through a ``ThreadPoolExecutor``, a
warm-up copy, then the median of timed copies (``time.perf_counter``),
counting every byte read and written. ``gpudesk bench --backend numpy``'s
copy row must reach at least 0.85x of it.

The two are measured in rounds, alternately first (bench, reference;
reference, bench; ...), so both see the same machine; the figure is the
median over rounds of each round's ratio bench / reference (as the harness
reports it); each side's best round and the ratio of the medians are
reported beside it.

Run alone: ``python tests/benchmarks/bench_cpu_copy.py`` (exit 1 when the
target is missed). The harness runner calls :func:`measure`.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from gpudesk.bench.backends.numpy_backend import NumpyBackend
from gpudesk.bench.plan import make_plan
from gpudesk.bench.runner import run_benchmark
from gpudesk.progress import NullProgress

TARGET = 0.85


def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def plain_threaded_copy_gbs(nbytes: int, threads: int, repetitions: int = 7) -> float:
    """GB/s of a plain copy of ``nbytes`` split over ``threads`` threads (2 bytes per byte)."""
    count = nbytes // 8
    src = np.full(count, 1.5)
    dst = np.zeros(count)
    step = -(-count // threads)
    slices = [slice(start, min(start + step, count)) for start in range(0, count, step)]

    def part(piece: slice) -> None:
        np.copyto(dst[piece], src[piece])

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(part, slices))  # warm-up (and page faults)
        times = []
        for _ in range(repetitions):
            start = time.perf_counter()
            list(pool.map(part, slices))
            times.append(time.perf_counter() - start)
    return 2 * count * 8 / statistics.median(times) / 1e9


def plain_single_thread_copy_gbs(nbytes: int, repetitions: int = 7) -> float:
    """For reference: the same copy on one thread (what the benchmark used to report)."""
    return plain_threaded_copy_gbs(nbytes, 1, repetitions)


def measure(rounds: int = 5) -> dict[str, Any]:
    backend = NumpyBackend()
    plan = make_plan(backend.capabilities(0), tests=["copy"])
    threads = _threads()
    bench: list[float] = []
    plain: list[float] = []
    size = plan.copy_bytes

    def bench_round() -> int:
        row = run_benchmark(plan, backend, NullProgress()).find("copy")
        if row is None or row.value is None:
            raise RuntimeError("the benchmark's copy test failed")
        bench.append(row.value)
        return row.size

    for index in range(rounds):
        if index % 2 == 0:
            size = bench_round()
            plain.append(plain_threaded_copy_gbs(size, threads))
        else:
            plain.append(plain_threaded_copy_gbs(size, threads))
            size = bench_round()
    single = plain_single_thread_copy_gbs(size)
    ratios = [ours / theirs for ours, theirs in zip(bench, plain, strict=True)]
    ratio = statistics.median(ratios)
    return {
        "buffer_bytes": size,
        "threads": threads,
        "rounds": rounds,
        "order": "alternating: bench first in even rounds, reference first in odd rounds",
        "bench_copy_gbs": max(bench),
        "plain_threaded_copy_gbs": max(plain),
        "plain_single_thread_copy_gbs": single,
        "ratio": ratio,
        "paired_ratios": ratios,
        "ratio_of_best": max(bench) / max(plain),
        "ratio_of_medians": statistics.median(bench) / statistics.median(plain),
        "bench_rounds": bench,
        "plain_rounds": plain,
        "passed": ratio >= TARGET,
    }


def main() -> int:
    figures = measure()
    print(json.dumps(figures, indent=2))
    print(
        f"CPU copy of {figures['buffer_bytes'] / 2**20:.0f} MiB buffers on "
        f"{figures['threads']} threads: bench / plain threaded copy {figures['ratio']:.3f} "
        f"(median of {figures['rounds']} paired rounds); best rounds: bench "
        f"{figures['bench_copy_gbs']:.1f} GB/s, plain threaded copy "
        f"{figures['plain_threaded_copy_gbs']:.1f} GB/s (ratio {figures['ratio_of_best']:.3f}); "
        f"one thread: {figures['plain_single_thread_copy_gbs']:.1f} GB/s"
    )
    return 0 if figures["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
