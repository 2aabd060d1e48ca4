"""The run summary every edge lays out: which facts, worded once."""

from __future__ import annotations

import datetime as dt

from gpudesk.bench.results import BenchResult
from gpudesk.bench.summary import run_summary


def _result(**changes: object) -> BenchResult:
    data: dict[str, object] = {
        "backend": "torch",
        "mode": "quick",
        "device": {"kind": "cuda", "name": "Fake GPU"},
        "started_at": dt.datetime(2025, 1, 2, 3, 4, tzinfo=dt.UTC),
        "duration_s": 12.34,
        "environment": {"backend_version": "2.4.0", "cuda_runtime": "12.4"},
    }
    data.update(changes)
    return BenchResult.model_validate(data)


def _texts(result: BenchResult, name: str | None = None) -> dict[str, str]:
    return {line.key: line.text for line in run_summary(result, name)}


def test_device_backend_cuda_and_catalog_peaks() -> None:
    texts = _texts(_result(catalog_id="h100-sxm5"), "NVIDIA H100 SXM5 80GB")
    assert texts["device"] == "Fake GPU (cuda)"
    assert texts["backend"].startswith("torch 2.4.0, quick run, ") and "12.3 s" in texts["backend"]
    assert texts["cuda"] == "runtime 12.4, driver n/a"
    assert texts["catalog"] == "peaks from catalog entry NVIDIA H100 SXM5 80GB"
    assert "blas" not in texts and "telemetry" not in texts and "error" not in texts


def test_no_catalog_entry_says_why_there_are_no_peaks() -> None:
    texts = _texts(_result(environment={"catalog_match": "no entry named like 'Fake GPU'"}))
    assert texts["catalog"] == (
        "no catalog entry matched, so no peaks (no entry named like 'Fake GPU')"
    )
    assert "cuda" not in texts


def test_a_cpu_has_no_catalog_peak() -> None:
    texts = _texts(_result(device={"kind": "cpu", "name": "AMD EPYC"}))
    assert texts["catalog"] == "a CPU has no catalog peak"


def test_a_failed_imported_run_says_both() -> None:
    texts = _texts(_result(error="CUDA error: out of memory", imported_from="/tmp/run.json"))
    assert texts["error"] == "CUDA error: out of memory"
    assert texts["imported"] == "imported from /tmp/run.json"
