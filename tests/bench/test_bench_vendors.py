"""ROCm and MPS runs set against the matched catalog entry's peaks (real probes, fake devices)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_gpu_modules import make_fake_torch
from hardware import fake_sysfs as trees

from gpudesk.bench.backends.torch_backend import TorchBackend
from gpudesk.bench.plan import BenchPlan, make_plan
from gpudesk.bench.runner import run_benchmark
from gpudesk.bench.telemetry import SystemProbe, describe_rocm_device
from gpudesk.catalog.loader import load_catalog
from gpudesk.hardware import apple
from gpudesk.progress import ProgressState

MIB = 2**20
FIXTURES = Path(__file__).parent.parent / "hardware" / "fixtures" / "system_profiler"


def _quick(backend: TorchBackend) -> BenchPlan:
    plan = make_plan(backend.capabilities(0), tests=["gemm", "copy"])
    return plan.model_copy(
        update={
            "gemm_size": 128,
            "copy_bytes": 8 * MIB,
            "repetitions": 3,
            "warmup": 1,
            "min_rep_seconds": 0.001,
        }
    )


def test_a_rocm_run_is_matched_through_sysfs_and_gets_mi300x_peaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trees.FakeSysfs(tmp_path).add(trees.mi300x(address="0000:1a:00.0"))  # the fake's bus 0x1a
    monkeypatch.setenv("GPUDESK_SYSFS_ROOT", str(tmp_path))
    backend = TorchBackend(make_fake_torch(hip="6.2.41133"))
    catalog = load_catalog().entries
    result = run_benchmark(
        _quick(backend), backend, ProgressState(), catalog=catalog, probe=SystemProbe()
    )
    assert result.catalog_id == "mi300x"
    assert result.environment["catalog_match"] == "mi300x (by PCI device id)"
    fp16 = result.find("gemm", "fp16")
    copy = result.find("copy", "fp32") or next(r for r in result.results if r.test == "copy")
    assert fp16 is not None and fp16.peak == 1307.4  # the dense matrix figure
    assert copy.peak == 5300
    assert fp16.fraction_of_peak is not None and 0 < fp16.fraction_of_peak < 1


def test_a_rocm_device_missing_from_sysfs_falls_back_to_its_name(tmp_path: Path) -> None:
    backend = TorchBackend(make_fake_torch(hip="6.2.41133", capacity=192 * 2**30))
    (device,) = backend.devices()
    catalog_id, env, _ = describe_rocm_device(device, load_catalog().entries, tmp_path)
    assert env["sysfs"] == "not found"
    assert catalog_id == "mi300x"  # "AMD Instinct MI300X" by name


def test_an_mps_run_is_matched_to_the_apple_chip_and_its_peaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(apple.PROFILER_JSON_ENV, str(FIXTURES / "m3-max.json"))
    backend = TorchBackend(make_fake_torch(cuda=False, mps=True))
    result = run_benchmark(
        _quick(backend),
        backend,
        ProgressState(),
        catalog=load_catalog().entries,
        probe=SystemProbe(),
    )
    assert result.catalog_id == "apple-m3-max-40c"
    assert result.environment["apple_gpu_cores"] == 40
    fp32 = result.find("gemm", "fp32")
    assert fp32 is not None and fp32.peak == 14.32
    fp16 = result.find("gemm", "fp16")
    assert fp16 is not None and fp16.peak is None  # Apple publishes no matrix figure
    assert result.telemetry is None or not result.telemetry.available
