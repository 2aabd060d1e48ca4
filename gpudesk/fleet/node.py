"""What runs on each node: GPUDesk's own detection and, if asked, the quick benchmark.

This module is imported on the cluster's nodes by Ray (by reference, so
``gpudesk`` must be importable there). It imports no Ray and no Qt, and it
never raises for a device problem: a failed benchmark is a result with an
``error``, as ``gpudesk bench`` writes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator
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
    with _node_blas_threads(backend.name == "numpy"):
        for index in devices:
            plan = make_plan(backend.capabilities(index), full=False, device_index=index)
            result = run_benchmark(plan, backend, NullProgress(), catalog=entries)
            runs.append(json.loads(result.to_json()))
    return runs


def node_cpus() -> int:
    """The CPUs this process may run on (its affinity, as Slurm and cgroups set it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def _node_blas_threads(cpu: bool) -> Iterator[None]:
    """For a CPU run, NumPy's BLAS on all the node's CPUs, as ``gpudesk bench`` runs it.

    Ray starts tasks with OMP_NUM_THREADS=1 (a task asked for no CPUs here), so BLAS
    would use one thread: 0.54x of ``gpudesk bench`` on a 2-core machine. The result's
    ``environment.blas`` records the threads the run had.
    """
    if not cpu:
        yield
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # a dependency; without it the run keeps what BLAS has
        yield
        return
    with threadpool_limits(limits=node_cpus(), user_api="blas"):
        yield


#: The lines a Slurm task writes around its report (fleet/slurm.py reads them).
REPORT_BEGIN = "GPUDESK-NODE-REPORT-BEGIN"
REPORT_END = "GPUDESK-NODE-REPORT-END"
REPORT_LINE_CHARS = 76


def encode_report(report: dict[str, Any], nonce: str) -> str:
    """The report as a delimited block: a header, base64 lines, a trailer.

    The header carries the survey's nonce (so nothing else on the node's
    stdout can pass for a report), the Slurm node name, and the length and
    SHA-256 of the JSON, so a block that lost or gained a line is refused,
    never misread.
    """
    import base64
    import hashlib

    raw = json.dumps(report, ensure_ascii=True, allow_nan=False).encode("ascii")
    text = base64.b64encode(raw).decode("ascii")
    node = os.environ.get("SLURMD_NODENAME", "") or socket.gethostname()
    lines = [f"{REPORT_BEGIN} {nonce} {node} {len(raw)} {hashlib.sha256(raw).hexdigest()}"]
    lines.extend(
        text[start : start + REPORT_LINE_CHARS] for start in range(0, len(text), REPORT_LINE_CHARS)
    )
    lines.append(f"{REPORT_END} {nonce}")
    return "\n".join(lines) + "\n"


def slurm_task(bench: BenchMode, nonce: str) -> int:
    """What each Slurm task runs: the node report, written to stdout as one delimited block.

    Everything else written to stdout meanwhile (a library's notice, a
    site's profile script) goes to stderr at the descriptor level, so the
    block stands alone; the block itself is base64 with a checksum.
    """
    import sys

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        try:
            report = survey_this_node(bench)
        except Exception as exc:  # the node's error row says what went wrong
            report = {"hostname": socket.gethostname(), "error": f"{type(exc).__name__}: {exc}"}
        report["slurm"] = {
            name.lower(): os.environ.get(name)
            for name in ("SLURMD_NODENAME", "SLURM_JOB_ID", "SLURM_STEP_ID", "CUDA_VISIBLE_DEVICES")
        }
        sys.stdout.flush()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    os.write(1, encode_report(report, nonce).encode("ascii"))
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gpudesk.fleet.node")
    parser.add_argument("--bench", choices=BENCH_MODES, default="none")
    parser.add_argument("--nonce", required=True)
    args = parser.parse_args(argv)
    return slurm_task(args.bench, args.nonce)


if __name__ == "__main__":
    raise SystemExit(main())
