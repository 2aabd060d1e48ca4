"""``python -m gpudesk._gpucheck``: the one-call check for a real GPU machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import fake_nvml_lib as fake
from bench import fake_gpu_modules as fakes
from fake_nvidia_smi import write_fake_nvidia_smi

from gpudesk import _gpucheck


def test_plain_loop_is_timed_on_the_device_with_events() -> None:
    torch = fakes.make_fake_torch(capacity=2**30)
    figures = _gpucheck.plain_torch_figures(torch, n=256, copy_bytes=16 * 2**20, repetitions=3)
    assert 0.7 * 0.04 <= figures["bf16_tflops"] <= 1.01 * 0.04
    assert 0.7 * fakes.COPY_GBS <= figures["copy_gbs"] <= 1.01 * fakes.COPY_GBS
    assert figures["copy_bytes"] == 16 * 2**20 and figures["timer"] == "cuda_events"


def test_ratios_and_targets() -> None:
    assert _gpucheck._ratio(95.0, 100.0) == 0.95
    assert _gpucheck._ratio(1.0, 0) is None and _gpucheck._ratio(None, 2.0) is None
    result = {"results": [{"test": "gemm", "dtype": "bf16", "value": 1.0, "size": 8192}]}
    assert _gpucheck._row(result, "gemm", "bf16")["size"] == 8192
    assert _gpucheck._row(result, "copy") == {}


def test_one_json_document_without_a_gpu_backend(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    write_fake_nvidia_smi(folder)
    env = fake.environment(settings={"PATH": f"{folder}:/usr/bin:/bin"})
    out = tmp_path / "check.json"
    done = subprocess.run(
        [sys.executable, "-m", "gpudesk._gpucheck", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads(done.stdout)
    assert json.loads(out.read_text()) == report
    assert report["doctor"]["exit"] == 0
    assert report["doctor"]["json"]["ok"] is True
    assert report["met"]["doctor_agrees_on_every_field"] is True
    assert {"bench_torch_quick", "bench_torch_full", "bench_cupy", "plain_torch"} <= set(report)
    if "error" in report["plain_torch"]:  # no CUDA torch here: nothing measured, exit 3
        assert done.returncode == 3
        assert report["met"]["bf16_over_plain_at_least"] is None
