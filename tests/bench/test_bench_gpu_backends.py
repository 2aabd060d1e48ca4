"""The torch and cupy backends, run through fake modules that behave like a GPU.

No GPU here: these check the real backend code (availability reasons, device
description, TF32 switching, CUDA-event timing against asynchronous work,
out-of-memory step-down, sticky errors, and that memory is freed) against
stand-ins with the same API and the same pitfalls (see fake_gpu_modules).
"""

from __future__ import annotations

import sys

import fake_gpu_modules as fakes
import pytest
from bench_fakes import FixedProbe
from catalog_factory import make_entry
from fake_gpu_modules import make_fake_cupy, make_fake_cupyx, make_fake_torch

from gpudesk.bench.backends import UnknownBackendError, choose_backend, get_backend
from gpudesk.bench.backends.base import BackendError
from gpudesk.bench.backends.cupy_backend import (
    CupyBackend,
    is_oom as cupy_is_oom,
    is_sticky as cupy_is_sticky,
)
from gpudesk.bench.backends.torch_backend import (
    TorchBackend,
    is_oom,
    is_sticky,
    missing_kernels,
)
from gpudesk.bench.plan import BenchPlan, make_plan
from gpudesk.bench.runner import run_benchmark
from gpudesk.progress import ProgressState

MIB = 2**20

#: Lower bound of a measured rate against the fake's true rate. The fake's kernels
#: sleep, and a loaded machine's sleeps overshoot; the upper bound (1.01) is what
#: catches a timed region without its synchronize.
TIMING_FLOOR = 0.4


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
    assert "pip install '.[torch]'" in status.reason
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
    # memory given back, cache included
    assert torch.memory.used == 0 and torch.memory.reserved == 0
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
    assert is_oom(
        torch,
        RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"),
    )
    assert not is_oom(torch, RuntimeError("illegal memory access"))
    assert is_sticky(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert is_sticky(RuntimeError("CUDA error: unspecified launch failure"))
    assert not is_sticky(RuntimeError("CUDA error: out of memory"))


def test_cupy_oom_and_sticky_errors_recognised() -> None:
    cp = make_fake_cupy()
    assert cupy_is_oom(cp, fakes.CupyOOM("pool"))
    assert cupy_is_oom(cp, fakes.CUBLASError(3, "CUBLAS_STATUS_ALLOC_FAILED"))
    assert cupy_is_oom(cp, fakes.CUDARuntimeError(2, "cudaErrorMemoryAllocation: out of memory"))
    assert not cupy_is_oom(cp, fakes.CUDARuntimeError(700, "cudaErrorIllegalAddress"))
    assert cupy_is_sticky(fakes.CUDARuntimeError(700, "cudaErrorIllegalAddress: an illegal ..."))
    assert cupy_is_sticky(fakes.CUDARuntimeError(719, "cudaErrorLaunchFailure"))
    assert not cupy_is_sticky(fakes.CUDARuntimeError(2, "cudaErrorMemoryAllocation"))


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
    # CUPY_TF32=1 makes every FP32 GEMM a TF32 one: it is listed as tf32
    assert caps.gemm_dtypes == ("fp64", "tf32", "fp16")
    entry = make_entry("fake-pcie", fp32_tflops=60.0, tf32_tensor_tflops=400.0)
    result = run_benchmark(
        small(make_plan(caps)),
        backend,
        ProgressState(),
        catalog=[entry],
        probe=FixedProbe("fake-pcie"),
    )
    assert result.ok, [row.error for row in result.results]
    assert len(result.results) == 3 + 1 + 4
    assert result.environment["cuda_runtime"] == "12.4"
    assert result.environment["fp32_gemm_uses_tf32"] is True
    assert result.find("gemm", "fp32") is None
    tf32 = result.find("gemm", "tf32")
    assert tf32 is not None and tf32.tf32_enabled is True
    assert tf32.peak == 400.0, "a TF32 row is set against the TF32 tensor peak, not FP32's"
    assert tf32.label == "GEMM TF32"
    assert "h2d" in cp.transfers and "d2h" in cp.transfers
    assert cp.memory.used == 0
    assert cp.freed_pools > 0


def test_cupy_fp32_asked_with_tf32_on_is_reported_as_tf32(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUPY_TF32", "1")
    backend = CupyBackend(make_fake_cupy())
    plan = small(make_plan(backend.capabilities(0), tests=["gemm"]))
    # a plan made elsewhere (an older GUI, a script) asking for fp32 anyway
    plan = plan.model_copy(update={"gemm_dtypes": ("fp32",)})
    entry = make_entry("fake-pcie", fp32_tflops=60.0, tf32_tensor_tflops=400.0)
    result = run_benchmark(
        plan, backend, ProgressState(), catalog=[entry], probe=FixedProbe("fake-pcie")
    )
    (row,) = result.results
    assert (row.dtype, row.peak, row.tf32_enabled) == ("tf32", 400.0, True)
    assert any("TF32" in note for note in row.notes)


def test_cupy_without_tf32_measures_fp32_and_refuses_tf32(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CUPY_TF32", raising=False)
    backend = CupyBackend(make_fake_cupy())
    assert backend.capabilities(0).gemm_dtypes == ("fp64", "fp32", "fp16")
    session = backend.open(0)
    with pytest.raises(BackendError, match="CUPY_TF32=1"):
        session.gemm("tf32", 64)


def test_cupy_without_a_driver() -> None:
    cp = make_fake_cupy()

    def no_driver() -> int:
        raise RuntimeError("cudaErrorInsufficientDriver")

    cp.cuda.runtime.getDeviceCount = no_driver
    status = CupyBackend(cp).status()
    assert not status.available
    assert "CUDA is not usable: cudaErrorInsufficientDriver" in status.reason


# --- timing against asynchronous work ------------------------------------------------


def timing_plan(backend: TorchBackend | CupyBackend, tests: list[str]) -> BenchPlan:
    plan = make_plan(backend.capabilities(0), tests=tests)
    return plan.model_copy(
        update={
            "gemm_size": 256,
            "copy_bytes": 16 * MIB,
            "transfer_bytes": 4 * MIB,
            "repetitions": 5,
            "warmup": 1,
            "min_rep_seconds": 0.02,
        }
    )


def test_the_fake_events_complete_after_the_host_call() -> None:
    """The fake is only a check if it punishes what a real GPU punishes."""
    torch = make_fake_torch()
    a = torch.randn(256, 256, device="cuda", dtype=torch.float64)
    b, c = torch.randn_like(a), torch.empty_like(a)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    # ~0.4 s of queued device work (60 x 2*256^3 at 0.005 TFLOPS = 6.7 ms each): a
    # single 6.7 ms kernel could finish while a loaded CI host stalls this thread.
    for _ in range(60):
        torch.matmul(a, b, out=c)
    end.record()
    with pytest.raises(RuntimeError, match="not ready"):
        start.elapsed_time(end)  # the kernels have not finished: no synchronize()
    end.synchronize()
    assert start.elapsed_time(end) > 60 * 6.0
    untimed = torch.cuda.Event()  # torch's default: enable_timing=False
    untimed.record()
    end.record()
    end.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        untimed.elapsed_time(end)


@pytest.mark.parametrize("new_api", [False, True])
def test_torch_figures_are_the_devices_time_not_the_launch(new_api: bool) -> None:
    """Fails if synchronize() or enable_timing=True leave the timed region, or the
    host loop is timed instead of the events."""
    torch = make_fake_torch(new_tf32_api=new_api)
    backend = TorchBackend(torch)
    result = run_benchmark(
        timing_plan(backend, ["gemm", "copy"]), backend, ProgressState(), probe=FixedProbe(None)
    )
    assert result.ok, [row.error for row in result.results]
    expected = {
        "fp64": fakes.TORCH_TFLOPS["float64"],
        "fp32": fakes.TORCH_TFLOPS["float32"],
        "tf32": fakes.TORCH_TFLOPS["tf32"],
        "fp16": fakes.TORCH_TFLOPS["float16"],
        "bf16": fakes.TORCH_TFLOPS["bfloat16"],
    }
    for row in result.results:
        rate = expected[row.dtype] if row.test == "gemm" else fakes.COPY_GBS
        assert row.value is not None
        assert TIMING_FLOOR * rate <= row.value <= 1.01 * rate, (row.label, row.value, rate)


def test_cupy_figures_are_the_devices_time_not_the_launch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CUPY_TF32", raising=False)
    backend = CupyBackend(make_fake_cupy())
    result = run_benchmark(
        timing_plan(backend, ["gemm", "copy"]), backend, ProgressState(), probe=FixedProbe(None)
    )
    assert result.ok, [row.error for row in result.results]
    expected = {"fp64": 0.005, "fp32": 0.01, "fp16": 0.04}
    for row in result.results:
        rate = expected[row.dtype] if row.test == "gemm" else fakes.COPY_GBS
        assert row.value is not None
        assert TIMING_FLOOR * rate <= row.value <= 1.01 * rate, (row.label, row.value, rate)


def test_bf16_is_two_bytes_and_planning_uses_it() -> None:
    n = 256
    # three bf16 matrices fit (384 KiB); three 4-byte ones (768 KiB) would not
    torch = make_fake_torch(capacity=3 * n * n * 2 + 4096)
    backend = TorchBackend(torch)
    plan = small(make_plan(backend.capabilities(0), tests=["gemm"], dtypes=["bf16"]))
    plan = plan.model_copy(update={"gemm_size": n, "memory_fraction": 1.0})
    result = run_benchmark(plan, backend, ProgressState(), probe=FixedProbe(None))
    (row,) = result.results
    assert row.error is None and row.size == n and not row.notes
    assert torch.memory.peak == 3 * n * n * 2


def test_free_memory_counts_the_allocators_cached_blocks() -> None:
    torch = make_fake_torch(capacity=64 * MIB)
    session = TorchBackend(torch).open(0)
    leftover = torch.ones(8 * MIB, dtype=torch.float32, device="cuda")  # 32 MiB
    del leftover  # freed to PyTorch's cache, still reserved from the driver
    driver_free, _ = torch.cuda.mem_get_info()
    assert driver_free == 32 * MIB
    assert session.free_memory_bytes() == 64 * MIB


def test_cupy_free_memory_counts_the_pools_unused_blocks() -> None:
    cp = make_fake_cupy(capacity=64 * MIB)
    session = CupyBackend(cp).open(0)
    leftover = cp.ones(8 * MIB, dtype=cp.float32)
    del leftover
    assert cp.cuda.runtime.memGetInfo()[0] == 32 * MIB
    assert session.free_memory_bytes() == 64 * MIB


def test_cublas_workspace_failure_shrinks_like_oom() -> None:
    torch = make_fake_torch(cublas_fails_above_n=256)
    backend = TorchBackend(torch)
    plan = small(make_plan(backend.capabilities(0), tests=["gemm"], dtypes=["fp16"]))
    result = run_benchmark(
        plan.model_copy(update={"gemm_size": 512}), backend, ProgressState(), probe=FixedProbe(None)
    )
    (row,) = result.results
    assert row.error is None and row.size == 256
    assert any("out of memory at n=512" in note for note in row.notes)


def test_cupy_cublas_and_pinned_host_failures_shrink_like_oom(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "cupyx", make_fake_cupyx(pinned_capacity=5 * MIB))
    backend = CupyBackend(make_fake_cupy(cublas_fails_above_n=256))
    plan = small(make_plan(backend.capabilities(0), tests=["gemm", "h2d"], dtypes=["fp32"]))
    plan = plan.model_copy(update={"gemm_size": 512, "transfer_bytes": 8 * MIB})
    result = run_benchmark(plan, backend, ProgressState(), probe=FixedProbe(None))
    gemm, pageable, pinned = result.results
    assert gemm.error is None and gemm.size == 256
    assert pageable.error is None and pageable.size == 8 * MIB
    assert pinned.error is None and pinned.size == 4 * MIB
    assert any("out of memory at 8 MiB" in note for note in pinned.notes)


def test_sticky_cuda_error_stops_the_run_with_a_clear_message() -> None:
    torch = make_fake_torch()
    backend = TorchBackend(torch)
    torch.sticky_state.inject_next = RuntimeError(
        "CUDA error: an illegal memory access was encountered"
    )
    plan = small(make_plan(backend.capabilities(0)))
    result = run_benchmark(plan, backend, ProgressState(), probe=FixedProbe(None))
    (row,) = result.results  # nothing after the failing test was attempted
    assert row.error is not None and "sticky CUDA error" in row.error
    assert result.sweep == ()
    assert result.error is not None
    assert result.error.startswith("stopped: the device failed")
    assert "illegal memory access" in result.error and "new process" in result.error


def test_cupy_sticky_error_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUPY_TF32", raising=False)
    cp = make_fake_cupy()
    backend = CupyBackend(cp)
    cp.sticky_state.inject_next = fakes.CUDARuntimeError(
        719, "cudaErrorLaunchFailure: unspecified launch failure"
    )
    result = run_benchmark(
        small(make_plan(backend.capabilities(0))), backend, ProgressState(), probe=FixedProbe(None)
    )
    assert len(result.results) == 1
    assert result.error is not None and "launch failure" in result.error


def test_torch_without_kernels_for_the_card_says_so() -> None:
    torch = make_fake_torch(major=12, minor=0)  # built up to sm_90, card is sm_120
    backend = TorchBackend(torch)
    result = run_benchmark(
        small(make_plan(backend.capabilities(0))), backend, ProgressState(), probe=FixedProbe(None)
    )
    assert result.results == ()
    assert result.error is not None
    assert "has no kernels for NVIDIA Fake 80GB" in result.error
    assert "sm_120" in result.error and "sm_90" in result.error


@pytest.mark.parametrize(
    ("arch_list", "capability", "missing"),
    [
        (["sm_80", "sm_86", "sm_90"], "8.9", False),  # sm_86 cubin runs on 8.9
        (["sm_80", "sm_86", "sm_90"], "12.0", True),
        (["sm_80", "sm_90", "compute_90"], "12.0", False),  # PTX JIT-compiles
        (["sm_90a"], "9.0", False),
        (["sm_90a"], "10.0", True),  # arch-specific: 9.0 only
        (["sm_70"], "6.1", True),
        ([], "9.0", False),  # the build does not say: let the run show it
    ],
)
def test_missing_kernels(arch_list: list[str], capability: str, missing: bool) -> None:
    assert missing_kernels(arch_list, capability) is missing


def test_rocm_torch_without_a_visible_gpu_says_why() -> None:
    status = TorchBackend(make_fake_torch(hip="6.2.41133", cuda=False)).status()
    assert not status.available
    assert "(ROCm, HIP 6.2.41133) sees no AMD GPU" in status.reason
    assert "CPU-only" not in status.reason


def test_rocm_torch_measures_the_amd_gpu_with_hip_events() -> None:
    """ROCm: the torch.cuda API on an AMD GPU, timed by (HIP) events, no TF32."""
    torch = make_fake_torch(hip="6.2.41133")
    backend = TorchBackend(torch)
    assert backend.status().available
    (device,) = backend.devices()
    assert (device.kind, device.vendor, device.name) == ("rocm", "AMD", "AMD Instinct MI300X")
    assert device.compute_capability is None  # gfx 9.4 is not a CUDA capability
    caps = backend.capabilities(0)
    assert caps.gemm_dtypes == ("fp64", "fp32", "fp16", "bf16")
    result = run_benchmark(
        timing_plan(backend, ["gemm", "copy"]), backend, ProgressState(), probe=FixedProbe(None)
    )
    assert result.ok, [row.error for row in result.results]
    assert {row.timer for row in result.results} == {"cuda_events"}
    assert result.environment["hip_runtime"] == "6.2.41133"
    assert result.environment["gcn_arch"] == "gfx942"
    for row in result.results:
        rate = (
            fakes.COPY_GBS
            if row.test == "copy"
            else fakes.TORCH_TFLOPS[
                {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}[
                    row.dtype
                ]
            ]
        )
        assert row.value is not None and TIMING_FLOOR * rate <= row.value <= 1.01 * rate, row.label


def test_rocm_torch_without_kernels_for_the_card_says_so() -> None:
    backend = TorchBackend(make_fake_torch(hip="6.2.41133", arch_list=("gfx90a",)))
    with pytest.raises(BackendError, match=r"no kernels for AMD Instinct MI300X \(gfx942\)"):
        backend.open(0)


def test_mps_measures_the_mac_gpu_between_synchronize_calls() -> None:
    """MPS: host clock between torch.mps.synchronize() calls; fails if either is dropped."""
    torch = make_fake_torch(cuda=False, mps=True)
    backend = TorchBackend(torch)
    assert backend.status().available
    (device,) = backend.devices()
    assert (device.kind, device.vendor) == ("mps", "Apple")
    caps = backend.capabilities(0)
    assert caps.gemm_dtypes == ("fp32", "fp16", "bf16") and "h2d" not in caps.tests
    result = run_benchmark(
        timing_plan(backend, ["gemm", "copy"]), backend, ProgressState(), probe=FixedProbe(None)
    )
    assert result.ok, [row.error for row in result.results]
    assert [row.label for row in result.results] == [
        "GEMM FP32",
        "GEMM FP16",
        "GEMM BF16",
        "memory copy",
    ]
    assert {row.timer for row in result.results} == {"mps_synchronize"}
    expected = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
    for row in result.results:
        rate = fakes.COPY_GBS if row.test == "copy" else fakes.TORCH_TFLOPS[expected[row.dtype]]
        assert row.value is not None and TIMING_FLOOR * rate <= row.value <= 1.01 * rate, row.label
    assert torch.mps_synchronize_calls >= 2 * len(result.results)
    assert torch.memory.used == 0


def test_mps_out_of_memory_steps_down() -> None:
    torch = make_fake_torch(cuda=False, mps=True, capacity=7 * MIB // 2)  # 3/4 free: 2.6 MiB
    backend = TorchBackend(torch)
    plan = small(make_plan(backend.capabilities(0), tests=["gemm"], dtypes=["fp32"]))
    plan = plan.model_copy(update={"gemm_size": 512})
    result = run_benchmark(plan, backend, ProgressState(), probe=FixedProbe(None))
    (row,) = result.results
    assert row.value is not None and row.size is not None and row.size < 512
