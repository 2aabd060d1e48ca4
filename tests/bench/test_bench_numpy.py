"""The numpy backend for real, at small sizes, and its CPU helpers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bench_fakes import CancelAfter

from gpudesk.bench.backends.numpy_backend import (
    NumpyBackend,
    NumpyGemm,
    last_level_cache_bytes,
    parse_cache_size,
)
from gpudesk.bench.plan import make_plan
from gpudesk.bench.runner import run_benchmark
from gpudesk.progress import Cancelled, ProgressState

MIB = 2**20


def small_plan():  # type: ignore[no-untyped-def]
    backend = NumpyBackend()
    return make_plan(backend.capabilities(0)).model_copy(
        update={
            "gemm_size": 128,
            "sweep_sizes": (64, 128),
            "copy_bytes": 16 * MIB,
            "min_rep_seconds": 0.002,
        }
    )


def test_numpy_end_to_end_at_a_small_size() -> None:
    result = run_benchmark(small_plan(), NumpyBackend(), ProgressState())
    assert result.ok, [row.error for row in result.results]
    assert result.backend == "numpy"
    assert result.device is not None and result.device.kind == "cpu"
    assert result.catalog_id is None
    assert [row.label for row in result.results] == ["GEMM FP64", "GEMM FP32", "memory copy"]
    for row in result.results:
        assert row.value is not None and row.value > 0
        assert row.min is not None and row.max is not None
        assert row.min <= row.value <= row.max
        assert row.repetitions == 5
        assert row.timer == "perf_counter"
        assert row.peak is None and row.fraction_of_peak is None  # a CPU has no catalog entry
    assert result.find("copy").size == 16 * MIB  # type: ignore[union-attr]
    assert [(row.dtype, row.size) for row in result.sweep] == [("fp32", 64), ("fp32", 128)]
    env = result.environment
    assert env["numpy"] == np.__version__
    assert isinstance(env["blas"], list)
    assert env["blas_threads"] is None or int(env["blas_threads"]) >= 1  # type: ignore[arg-type]
    assert result.telemetry is not None and not result.telemetry.available
    assert "CPU" in result.telemetry.reason


def test_numpy_has_no_transfers_and_one_device() -> None:
    backend = NumpyBackend()
    assert backend.status().available
    assert [device.index for device in backend.devices()] == [0]
    assert "h2d" not in backend.capabilities(0).tests
    with pytest.raises(Exception, match="one device"):
        backend.capabilities(1)


def test_cancel_inside_a_real_numpy_run() -> None:
    progress = CancelAfter(checks=30)
    with pytest.raises(Cancelled):
        run_benchmark(small_plan(), NumpyBackend(), progress)


def test_sliced_gemm_is_the_same_product_and_checks_between_panels() -> None:
    rng = np.random.default_rng(1)
    gemm = NumpyGemm(rng, np.float64, 64)
    gemm._rate_flops = 2.0 * 64**3 / 1.0  # pretend one product takes 1 s: slice it
    checks: list[int] = []
    gemm.run(1, lambda: checks.append(1))
    assert gemm._panel_rows() < 64 or len(checks) > 1
    assert gemm._c is not None and gemm._a is not None and gemm._b is not None
    np.testing.assert_allclose(gemm._c, gemm._a @ gemm._b, rtol=1e-12)
    assert len(checks) == 64 // 16  # 16-row panels at the smallest slice
    gemm.release()
    with pytest.raises(RuntimeError, match="released"):
        gemm.run(1, lambda: None)


def test_small_gemm_runs_unsliced() -> None:
    gemm = NumpyGemm(np.random.default_rng(2), np.float32, 64)
    assert gemm._panel_rows() == 64
    assert gemm.work == 2.0 * 64**3


@pytest.mark.parametrize(
    ("text", "expected"),
    [("32768K", 32 * MIB), ("1M", MIB), ("48K\n", 48 * 1024), ("512", 512), ("big", None)],
)
def test_parse_cache_size(text: str, expected: int | None) -> None:
    assert parse_cache_size(text) == expected


def test_last_level_cache_from_sysfs(tmp_path: Path) -> None:
    for name, level, kind, size in [
        ("index0", 1, "Data", "48K"),
        ("index1", 1, "Instruction", "32K"),
        ("index2", 2, "Unified", "1024K"),
        ("index3", 3, "Unified", "32768K"),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
    assert last_level_cache_bytes(tmp_path) == 32 * MIB
    assert last_level_cache_bytes(tmp_path / "missing") is None


def test_chunk_bounds_cover_every_element_once() -> None:
    import itertools

    from gpudesk.bench.backends.numpy_backend import chunk_bounds

    for count, chunks in ((10, 3), (7, 7), (5, 8), (1, 4), (1_000_003, 16)):
        bounds = chunk_bounds(count, chunks)
        assert bounds[0][0] == 0 and bounds[-1][1] == count
        assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
        sizes = [stop - start for start, stop in bounds]
        assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1


def test_copy_runs_on_a_thread_per_cpu_and_copies_everything() -> None:
    import threading

    import numpy as np

    from gpudesk.bench.backends import numpy_backend
    from gpudesk.bench.backends.numpy_backend import NumpyCopy

    seen: set[int] = set()
    real_copyto = np.copyto

    def spying_copyto(dst: object, src: object) -> None:
        seen.add(threading.get_ident())
        real_copyto(dst, src)  # type: ignore[call-overload]

    workload = NumpyCopy(4 * 2**20, threads=3)
    try:
        assert workload._src is not None and workload._dst is not None
        workload._src[:] = np.arange(workload._src.size)
        numpy_backend.np.copyto = spying_copyto  # type: ignore[assignment]
        try:
            workload.run(3, lambda: None)
        finally:
            numpy_backend.np.copyto = real_copyto
        assert np.array_equal(workload._src, workload._dst)
        pool = [t for t in threading.enumerate() if t.name.startswith("gpudesk-copy")]
        assert len(pool) == 3
        assert len(seen) >= 2 and threading.get_ident() not in seen
        assert workload.work == 2.0 * 4 * 2**20
    finally:
        workload.release()
    assert not [t for t in threading.enumerate() if t.name.startswith("gpudesk-copy")]
