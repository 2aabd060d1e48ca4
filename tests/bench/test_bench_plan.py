"""Planning: which tests, dtypes and sizes a backend's quick and full runs get."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpudesk.bench.plan import (
    FALLBACK_COPY_BYTES,
    MIB,
    BenchPlan,
    Capabilities,
    copy_bytes_for,
    make_plan,
    powers_of_two,
)

CPU = Capabilities(
    kind="cpu",
    tests=("gemm", "copy", "sweep"),
    gemm_dtypes=("fp64", "fp32"),
    last_level_cache_bytes=32 * MIB,
)
GPU = Capabilities(
    kind="cuda",
    tests=("gemm", "copy", "h2d", "d2h", "sweep"),
    gemm_dtypes=("fp64", "fp32", "tf32", "fp16", "bf16"),
    last_level_cache_bytes=50 * MIB,
)


def test_cpu_quick_plan() -> None:
    plan = make_plan(CPU)
    assert plan.mode == "quick"
    assert plan.tests == ("gemm", "copy", "sweep")
    assert plan.gemm_dtypes == ("fp64", "fp32")
    assert plan.gemm_size == 2048
    assert plan.sweep_sizes == (256, 512, 1024, 2048)
    assert plan.sweep_dtypes == ("fp32",)
    assert plan.copy_bytes == 128 * MIB  # 4x the 32 MiB L3
    assert plan.repetitions >= 5
    assert plan.warmup >= 1


def test_cpu_full_plan_sweeps_to_8192() -> None:
    plan = make_plan(CPU, full=True)
    assert plan.mode == "full"
    assert plan.sweep_sizes[0] == 256
    assert plan.sweep_sizes[-1] == 8192
    assert plan.gemm_size == 4096


def test_gpu_quick_plan_has_every_dtype_and_transfers() -> None:
    plan = make_plan(GPU, device_index=1)
    assert plan.device_index == 1
    assert plan.tests == ("gemm", "copy", "h2d", "d2h", "sweep")
    assert plan.gemm_dtypes == ("fp64", "fp32", "tf32", "fp16", "bf16")
    assert plan.sweep_sizes == (256, 512, 1024, 2048, 4096, 8192)
    assert plan.sweep_dtypes == ("fp16", "fp32")
    assert plan.copy_bytes == 512 * MIB  # floor above 4 x 50 MiB
    assert plan.warmup >= 3


def test_narrowing_tests_and_dtypes_drops_what_the_device_cannot_run() -> None:
    plan = make_plan(CPU, tests=["gemm", "h2d"], dtypes=["fp64", "fp16"])
    assert plan.tests == ("gemm",)  # a CPU has no host-to-device transfer
    assert plan.gemm_dtypes == ("fp64",)
    # the preferred sweep dtype was filtered out: fall back to a chosen one
    assert plan.sweep_dtypes == ("fp64",)


def test_unknown_test_or_dtype_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown test.*bogus"):
        make_plan(CPU, tests=["gemm", "bogus"])
    with pytest.raises(ValueError, match=r"unknown dtype.*fp8"):
        make_plan(CPU, dtypes=["fp8"])


def test_plan_validation() -> None:
    with pytest.raises(ValidationError, match="unknown dtype"):
        BenchPlan(tests=("gemm",), gemm_dtypes=("int4",))
    with pytest.raises(ValidationError, match="min_rep_seconds"):
        BenchPlan(tests=("gemm",), min_rep_seconds=1.0, max_rep_seconds=0.5)
    with pytest.raises(ValidationError):
        BenchPlan(tests=("gemm",), repetitions=0)


def test_steps_name_every_step_in_order() -> None:
    plan = make_plan(GPU)
    steps = plan.steps()
    assert steps[0] == "GEMM FP64 n=8192"
    assert "memory copy" in steps
    assert steps.index("H2D pageable") < steps.index("H2D pinned") < steps.index("D2H pageable")
    assert steps[-1] == "sweep FP32 n=8192"
    assert len(steps) == 5 + 1 + 4 + 2 * 6


def test_copy_bytes_and_powers() -> None:
    assert copy_bytes_for(None, 64 * MIB) == FALLBACK_COPY_BYTES
    assert copy_bytes_for(8 * MIB, 64 * MIB) == 64 * MIB
    assert copy_bytes_for(96 * MIB, 64 * MIB) == 384 * MIB
    assert powers_of_two(256, 1024) == (256, 512, 1024)
