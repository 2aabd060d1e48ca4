"""Check GPUDesk on a real NVIDIA GPU in one call: ``python -m gpudesk._gpucheck``.

For a GPU machine without network (a typical CUDA image with torch, CuPy,
numpy and nvidia-ml-py; see the README's development notes for the wheels it
lacks). In one process tree it runs:

1. ``gpudesk doctor --json`` (agreement with nvidia-smi, health findings);
2. ``gpudesk bench --backend torch --json`` (the quick run, timed) and
   ``--full --json``;
3. ``gpudesk bench --backend cupy --json``;
4. a plain ``torch.matmul`` BF16 loop and a plain device copy at the sizes the
   quick benchmark used, timed with CUDA events in this process;

and prints one JSON document with every output and the ratios the targets
are about (BF16 GEMM against the plain loop and the catalog's dense peak,
copy against ``bandwidth_gbs``, the quick run's wall time). Exit 0 when every
target was measured and met, 1 when one was missed, 3 when there is no CUDA
GPU to measure. ``--out FILE`` also writes the document (for
``docs/validation/<gpu>.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from gpudesk.external import ToolError, ToolTimeoutError, run_tool

#: The targets on an H200 (issue 12), checked on whatever GPU this runs on.
TARGETS = {
    "quick_run_s_at_most": 15.0,
    "bf16_over_plain_at_least": 0.95,
    "bf16_fraction_of_dense_peak_at_least": 0.75,
    "copy_fraction_of_bandwidth_at_least": 0.85,
}
STEP_TIMEOUT_S = 900.0


def _gpudesk(arguments: list[str], timeout_s: float = STEP_TIMEOUT_S) -> dict[str, Any]:
    """``python -m gpudesk ARGUMENTS``: exit code, seconds, and the JSON it printed."""
    started = time.perf_counter()
    try:
        # Only the tails are kept, but a long --full run may print much progress.
        done = run_tool(
            [sys.executable, "-m", "gpudesk", *arguments], timeout_s, max_stderr_bytes=64 << 20
        )
    except ToolTimeoutError:
        return {"exit": None, "seconds": timeout_s, "error": f"no answer in {timeout_s:.0f} s"}
    except ToolError as exc:
        return {"exit": None, "seconds": round(time.perf_counter() - started, 3), "error": str(exc)}
    step: dict[str, Any] = {
        "exit": done.returncode,
        "seconds": round(time.perf_counter() - started, 3),
    }
    stdout, stderr = done.stdout_text, done.stderr_text
    try:
        step["json"] = json.loads(stdout)
    except ValueError:
        step["stdout_tail"] = stdout[-2000:]
    if stderr.strip():
        step["stderr_tail"] = stderr[-2000:]
    return step


def _row(result: dict[str, Any] | None, test: str, dtype: str | None = None) -> dict[str, Any]:
    for row in (result or {}).get("results", []):
        wanted = row.get("test") == test and (dtype is None or row.get("dtype") == dtype)
        if wanted and row.get("value") is not None:
            return dict(row)
    return {}


def plain_torch_figures(
    torch: Any, n: int, copy_bytes: int, repetitions: int = 10
) -> dict[str, Any]:
    """A hand-written BF16 ``torch.matmul`` loop and device copy, CUDA-event timed.

    What a user would write to check the benchmark: warm-up, then the median
    of timed repetitions of ``iterations`` calls each between two events.
    """
    device = torch.device("cuda", 0)
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    c = torch.empty_like(a)
    count = max(1, copy_bytes // 4)
    src = torch.ones(count, device=device, dtype=torch.float32)
    dst = torch.empty_like(src)

    def timed(call: Any, iterations: int) -> float:
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        seconds: list[float] = []
        for _ in range(repetitions):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iterations):
                call()
            end.record()
            end.synchronize()
            seconds.append(start.elapsed_time(end) / 1000.0 / iterations)
        return statistics.median(seconds)

    gemm_s = timed(lambda: torch.matmul(a, b, out=c), 10)
    copy_s = timed(lambda: dst.copy_(src), 10)
    moved = 2.0 * count * 4
    return {
        "n": n,
        "bf16_tflops": 2.0 * n**3 / gemm_s / 1e12,
        "copy_bytes": count * 4,
        "copy_gbs": moved / copy_s / 1e9,
        "timer": "cuda_events",
        "repetitions": repetitions,
    }


def _ratio(numerator: Any, denominator: Any) -> float | None:
    if isinstance(numerator, int | float) and isinstance(denominator, int | float) and denominator:
        return float(numerator) / float(denominator)
    return None


def _within(value: Any, low: float | None, high: float | None) -> bool | None:
    """Whether a measured value meets its target; None when it was not measured."""
    if not isinstance(value, int | float):
        return None
    return (low is None or value >= low) and (high is None or value <= high)


def run_checks() -> tuple[dict[str, Any], int]:
    """Every step and the ratios; the exit code as described in the module doc."""
    report: dict[str, Any] = {"python": sys.version.split()[0], "targets": TARGETS}
    report["doctor"] = _gpudesk(["doctor", "--json"])
    quick = _gpudesk(["bench", "--backend", "torch", "--json"])
    report["bench_torch_quick"] = quick
    report["bench_torch_full"] = _gpudesk(["bench", "--backend", "torch", "--full", "--json"])
    report["bench_cupy"] = _gpudesk(["bench", "--backend", "cupy", "--json"])
    result = quick.get("json") if isinstance(quick.get("json"), dict) else None
    bf16 = _row(result, "gemm", "bf16")
    copy = _row(result, "copy")
    plain: dict[str, Any] = {}
    try:
        import torch  # type: ignore[import-not-found]

        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        plain = plain_torch_figures(
            torch, int(bf16.get("size") or 8192), int(copy.get("size") or 2**30)
        )
    except Exception as exc:  # no torch, no GPU: the report says so
        plain = {"error": f"{type(exc).__name__}: {exc}"}
    report["plain_torch"] = plain
    ratios = {
        "quick_run_s": quick.get("seconds"),
        "bf16_over_plain": _ratio(bf16.get("value"), plain.get("bf16_tflops")),
        "bf16_fraction_of_dense_peak": bf16.get("fraction_of_peak"),
        "copy_fraction_of_bandwidth": copy.get("fraction_of_peak"),
        "copy_over_plain": _ratio(copy.get("value"), plain.get("copy_gbs")),
    }
    report["ratios"] = ratios
    met: dict[str, bool | None] = {
        "quick_run_s_at_most": _within(ratios["quick_run_s"], None, TARGETS["quick_run_s_at_most"]),
        "bf16_over_plain_at_least": _within(
            ratios["bf16_over_plain"], TARGETS["bf16_over_plain_at_least"], None
        ),
        "bf16_fraction_of_dense_peak_at_least": _within(
            ratios["bf16_fraction_of_dense_peak"],
            TARGETS["bf16_fraction_of_dense_peak_at_least"],
            None,
        ),
        "copy_fraction_of_bandwidth_at_least": _within(
            ratios["copy_fraction_of_bandwidth"],
            TARGETS["copy_fraction_of_bandwidth_at_least"],
            None,
        ),
    }
    doctor_json = report["doctor"].get("json")
    met["doctor_agrees_on_every_field"] = (
        None
        if not isinstance(doctor_json, dict)
        else all(
            field.get("match") is True
            for gpu in doctor_json.get("gpus", [])
            for field in gpu.get("agreement", {}).values()
        )
        and bool(doctor_json.get("gpus"))
    )
    report["met"] = met
    if "error" in plain and result is None:
        return report, 3
    return report, 0 if all(value is True for value in met.values()) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpudesk._gpucheck", description=__doc__)
    parser.add_argument("--out", type=Path, help="also write the JSON document to this file")
    args = parser.parse_args(argv)
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # CUDA index = nvidia-smi index
    report, code = run_checks()
    try:
        text = json.dumps(report, indent=2, allow_nan=False, default=str) + "\n"
    except ValueError:  # a NaN from a broken step: keep the document valid JSON
        report["ratios"] = {key: None for key in report["ratios"]}
        text = json.dumps(report, indent=2, default=str) + "\n"
    sys.stdout.write(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
