"""What runs on each node: GPUDesk's own detection and, if asked, the quick benchmark.

This module is imported on the cluster's nodes by Ray (by reference, so
``gpudesk`` must be importable there). It imports no Ray and no Qt, and it
never raises for a device problem: a failed benchmark is a result with an
``error``, as ``gpudesk bench`` writes it.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any, Literal

BenchMode = Literal["none", "quick"]
BENCH_MODES: tuple[BenchMode, ...] = ("none", "quick")


def survey_this_node(bench: BenchMode = "none") -> dict[str, Any]:
    """Detect this node and, with ``bench="quick"``, benchmark each of its GPUs (or its CPU).

    Returns:
        ``{"hostname", "detection": <gpudesk detect --json>, "benches": [<gpudesk bench --json>]}``
    """
    # NVML numbers GPUs in PCI order; make CUDA agree before any backend loads it.
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.hardware.detect import detect_and_match, detection_document

    catalog = load_catalog([])
    result, matches = detect_and_match(catalog.entries)
    detection = detection_document(result, matches)
    benches: list[dict[str, Any]] = []
    if bench == "quick":
        gpu_count = len([gpu for gpu in result.physical_gpus if not gpu.lost])
        benches = _quick_benches(gpu_count, catalog.entries)
    return {"hostname": socket.gethostname(), "detection": detection, "benches": benches}


def _quick_benches(gpu_count: int, entries: Any) -> list[dict[str, Any]]:
    """One quick run per GPU with a GPU backend, else one on the CPU."""
    from gpudesk.bench.backends import choose_backend, get_backend
    from gpudesk.bench.plan import make_plan
    from gpudesk.bench.runner import run_benchmark
    from gpudesk.progress import NullProgress

    backend = choose_backend("auto")
    if backend.name == "numpy" or gpu_count == 0:
        backend, devices = get_backend("numpy"), [0]
    else:
        devices = list(range(gpu_count))
    runs: list[dict[str, Any]] = []
    for index in devices:
        plan = make_plan(backend.capabilities(index), full=False, device_index=index)
        result = run_benchmark(plan, backend, NullProgress(), catalog=entries)
        runs.append(json.loads(result.to_json()))
    return runs
