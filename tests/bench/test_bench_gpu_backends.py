"""The torch and cupy backends, run through numpy-backed fake modules.

No GPU here: these check the real backend code (availability reasons, device
description, TF32 switching, CUDA-event timing, out-of-memory step-down, and
that memory is freed) against stand-ins with the same API.
"""

from __future__ import annotations

import sys

import pytest
from bench_fakes import FixedProbe
from fake_gpu_modules import make_fake_cupy, make_fake_cupyx, make_fake_torch

from gpudesk.bench.backends import UnknownBackendError, choose_backend, get_backend
from gpudesk.bench.backends.base import BackendError
from gpudesk.bench.backends.cupy_backend import CupyBackend
from gpudesk.bench.backends.torch_backend import TorchBackend, is_oom
from gpudesk.bench.plan import BenchPlan, make_plan
from gpudesk.bench.runner import run_benchmark
from gpudesk.progress import ProgressState

MIB = 2**20


def small(plan: BenchPlan) -> BenchPlan:
    return plan.model_copy(
        update={
            "gemm_size": 128,
            "sweep_sizes": (64, 128),
            "copy_bytes": 16 * MIB,
            "transfer_bytes": 4 * MIB,
            "repetitions": 5,
            "warmup": 1,
            "min_rep_seconds": 0.001,
        }
    )


def test_missing_torch_is_unavailable_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    status = TorchBackend().status()
    assert not status.available
    assert "PyTorch is not importable" in status.reason
    assert "gpudesk[torch]" in status.reason
    with pytest.raises(BackendError, match=r"not available.*PyTorch"):
        choose_backend("torch")


def test_missing_cupy_is_unavailable_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    status = CupyBackend().status()
    assert not status.available
    assert "CuPy is not importable" in status.reason


def test_auto_falls_back_to_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert choose_backend("auto").name == "numpy"
    with pytest.raises(UnknownBackendError, match="unknown backend 'jax'"):
        get_backend("jax")


def test_cpu_only_torch_and_no_device_reasons() -> None:
    status = TorchBackend(make_fake_torch(cuda=False)).status()
    assert not status.available
    assert "CPU-only build" in status.reason
    torch = make_fake_torch()
    torch.cuda.is_available = lambda: False
    assert "sees no CUDA device" in TorchBackend(torch).status().reason


def test_torch_device_description_and_capabilities() -> None:
    backend = TorchBackend(make_fake_torch())
    (device,) = backend.devices()
    assert device.kind == "cuda"
    assert device.name == "NVIDIA Fake 80GB"
    assert device.compute_capability == "8.0"
    assert device.pci_bus_id == "00000000:1a:00.0"
    assert device.pci_device_id is None, "CUDA's pciDeviceID is a slot, not a product id"
    assert device.last_level_cache_bytes == 50 * MIB
    caps = backend.capabilities(0)
    assert caps.gemm_dtypes == ("fp64", "fp32", "tf32", "fp16", "bf16")
    old = TorchBackend(make_fake_torch(major=7)).capabilities(0)
    assert old.gemm_dtypes == ("fp64", "fp32", "fp16"), "no TF32/BF16 before Ampere"
    with pytest.raises(BackendError, match="no CUDA device 3"):
        backend.capabilities(3)


@pytest.mark.parametrize("new_api", [False, True])
def test_torch_full_run_on_the_fake(new_api: bool) -> None:
    torch = make_fake_torch(new_tf32_api=new_api)
    backend = TorchBackend(torch)
    plan = small(make_plan(backend.capabilities(0)))
    result = run_benchmark(plan, backend, ProgressState(), probe=FixedProbe(None))
    assert result.ok, [row.error for row in result.results]
    assert torch.current_device == 0
    labels = [row.label for row in result.results]
    assert labels == [
        "GEMM FP64",
        "GEMM FP32",
        "GEMM TF32",
        "GEMM FP16",
        "GEMM BF16",
        "memory copy",
        "H2D pageable",
        "H2D pinned",
        "D2H pageable",
        "D2H pinned",
    ]
    assert all(row.timer == "cuda_events" for row in result.results)
    assert result.environment["torch"] == "2.5.0+fake"
    assert result.environment["cuda_runtime"] == "12.4"
    assert result.environment["tf32_default_enabled"] is False
    # FP32 ran with TF32 off, TF32 with it on; the user's setting is restored.
    seen = set(torch.matmul_tf32)
    assert ("float32", False) in seen and ("float32", True) in seen
    assert result.find("gemm", "tf32").tf32_enabled is True  # type: ignore[union-attr]
    assert result.find("gemm", "fp32").tf32_enabled is False  # type: ignore[union-attr]
    matmul = torch.backends.cuda.matmul
    assert (matmul.fp32_precision == "ieee") if new_api else (matmul.allow_tf32 is False)
    # pinned copies are asynchronous, pageable ones are not
    assert (False, True, True) in torch.copies and (False, True, False) in torch.copies
    assert (True, False, True) in torch.copies
    assert [row.size for row in result.sweep] == [64, 128, 64, 128]
    # memory given back
    assert torch.memory.used == 0
    assert torch.empty_cache_calls >= len(result.results)


def test_torch_out_of_memory_steps_down() -> None:
    # 3 x 512^2 x 8 bytes = 6 MiB does not fit in 4 MiB; n=256 (1.5 MiB) does.
    torch = make_fake_torch(capacity=4 * MIB)
    backend = TorchBackend(torch)
    plan = small(make_plan(backend.capabilities(0), tests=["gemm"], dtypes=["fp64"]))
    plan = plan.model_copy(update={"memory_fraction": 0.95, "gemm_size": 512})
    # free-memory planning is bypassed on purpose: the device lies about free memory
    torch.cuda.mem_get_info = lambda device=None: (2**30, 2**30)
    result = run_benchmark(plan, backend, ProgressState(), probe=FixedProbe(None))
    row = result.results[0]
    assert row.error is None
    assert row.size == 256
    assert any("out of memory at n=512" in note for note in row.notes)
    assert torch.memory.used == 0


def test_torch_oom_error_recognised() -> None:
    torch = make_fake_torch()
    assert is_oom(torch, torch.cuda.OutOfMemoryError("x"))
    assert is_oom(torch, RuntimeError("CUDA error: out of memory"))
    assert not is_oom(torch, RuntimeError("illegal memory access"))


def test_cupy_full_run_on_the_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    cp = make_fake_cupy()
    monkeypatch.setitem(sys.modules, "cupyx", make_fake_cupyx())
    monkeypatch.setenv("CUPY_TF32", "1")
    backend = CupyBackend(cp)
    (device,) = backend.devices()
    assert device.name == "NVIDIA Fake PCIe"
    assert device.uuid == "00010203-0405-0607-0809-0a0b0c0d0e0f"
    assert device.pci_bus_id == "00000000:3b:00.0"
    caps = backend.capabilities(0)
    assert caps.gemm_dtypes == ("fp64", "fp32", "fp16")
    result = run_benchmark(small(make_plan(caps)), backend, ProgressState(), probe=FixedProbe(None))
    assert result.ok, [row.error for row in result.results]
    assert len(result.results) == 3 + 1 + 4
    assert result.environment["cuda_runtime"] == "12.4"
    assert result.environment["fp32_gemm_uses_tf32"] is True
    assert result.find("gemm", "fp32").tf32_enabled is True  # type: ignore[union-attr]
    assert "h2d" in cp.transfers and "d2h" in cp.transfers
    assert cp.memory.used == 0
    assert cp.freed_pools > 0


def test_cupy_without_a_driver() -> None:
    cp = make_fake_cupy()

    def no_driver() -> int:
        raise RuntimeError("cudaErrorInsufficientDriver")

    cp.cuda.runtime.getDeviceCount = no_driver
    status = CupyBackend(cp).status()
    assert not status.available
    assert "CUDA is not usable: cudaErrorInsufficientDriver" in status.reason
