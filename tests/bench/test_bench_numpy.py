"""The numpy backend for real, at small sizes, and its CPU helpers."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench_fakes import CancelAfter

from gpudesk.bench.backends import numpy_backend
from gpudesk.bench.backends.base import OutOfMemory
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
    # Small products run whole: no row says it was computed in panels.
    assert not any("row panels" in note for row in result.results for note in row.notes)


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
    # A cancel returns at once; the product in flight ends on its own thread (by design),
    # which a loaded machine can still be running when the call has returned.
    for thread in [t for t in threading.enumerate() if t.name == "gpudesk-gemm"]:
        thread.join(30)
        assert not thread.is_alive()


def _rate_for_call_seconds(n: int, seconds: float) -> float:
    """The FLOP rate at which one n×n product takes ``seconds``."""
    return 2.0 * n**3 / seconds


class MatmulSpy:
    """np.matmul that records the rows of each left operand (the helper thread's calls)."""

    def __init__(self) -> None:
        self.real = np.matmul
        self.rows: list[int] = []

    def __call__(self, x: Any, y: Any, out: Any = None) -> Any:
        self.rows.append(x.shape[0])
        return self.real(x, y, out=out)


def test_sliced_gemm_is_the_same_product_by_panels(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    gemm = NumpyGemm(rng, np.float64, 512)
    gemm._prepare(lambda: None)  # fill and probe first
    # one product takes 4 s at this rate: sliced into panels of about SLICE_SECONDS
    gemm._best_rate_flops = _rate_for_call_seconds(512, 4 * numpy_backend.SLICE_SECONDS)
    spy = MatmulSpy()
    monkeypatch.setattr(numpy_backend.np, "matmul", spy)
    gemm.run(1, lambda: None)
    assert spy.rows == [128, 128, 128, 128]
    assert gemm._c is not None and gemm._a is not None and gemm._b is not None
    np.testing.assert_allclose(gemm._c, spy.real(gemm._a, gemm._b), rtol=1e-12)
    gemm.release()
    with pytest.raises(RuntimeError, match="released"):
        gemm.run(1, lambda: None)


def test_cancel_returns_while_the_product_is_still_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()
    started = threading.Event()

    def blocked_matmul(x: Any, y: Any, out: Any = None) -> Any:
        started.set()
        release.wait(10)  # a product that does not end until the test says so
        return None

    gemm = NumpyGemm(np.random.default_rng(10), np.float64, 64)
    gemm._prepare(lambda: None)
    monkeypatch.setattr(numpy_backend.np, "matmul", blocked_matmul)
    progress = ProgressState()

    def check() -> None:
        if started.is_set():
            progress.cancel()
        progress.check()

    try:
        with pytest.raises(Cancelled):
            gemm.run(1, check)
        assert not release.is_set()  # the call returned with the product still in flight
        assert [t for t in threading.enumerate() if t.name == "gpudesk-gemm"]
    finally:
        release.set()
    for thread in [t for t in threading.enumerate() if t.name == "gpudesk-gemm"]:
        thread.join(10)
        assert not thread.is_alive()


def test_the_process_exits_after_a_cancel_leaves_a_product_running(tmp_path: Path) -> None:
    # A BLAS call still in flight at exit deadlocked OpenBLAS's shutdown (the helper
    # thread was a daemon); the process must wait for it and end.
    import subprocess
    import sys

    code = (
        "import threading\n"
        "import numpy as np\n"
        "from gpudesk.bench.backends.numpy_backend import NumpyGemm\n"
        "from gpudesk.progress import Cancelled, ProgressState\n"
        "gemm = NumpyGemm(np.random.default_rng(1), np.float64, 3072)\n"
        "gemm._prepare(lambda: None)\n"
        "progress = ProgressState()\n"
        "def check():\n"
        "    if any(t.name == 'gpudesk-gemm' for t in threading.enumerate()):\n"
        "        progress.cancel()\n"
        "    progress.check()\n"
        "try:\n"
        "    gemm.run(4, check)\n"
        "except Cancelled:\n"
        "    print('cancelled', flush=True)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=90, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "cancelled"


def test_out_of_memory_on_the_helper_thread_reaches_the_runner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_memory(x: Any, y: Any, out: Any = None) -> Any:
        raise MemoryError("Unable to allocate 32.0 MiB")

    gemm = NumpyGemm(np.random.default_rng(11), np.float64, 64)
    gemm._prepare(lambda: None)
    monkeypatch.setattr(numpy_backend.np, "matmul", no_memory)
    with pytest.raises(OutOfMemory, match=r"32\.0 MiB"):
        gemm.run(1, lambda: None)


def test_panels_are_never_thinner_than_the_minimum() -> None:
    gemm = NumpyGemm(np.random.default_rng(9), np.float64, 512)
    gemm._best_rate_flops = _rate_for_call_seconds(512, 100.0)  # a very slow reading
    assert gemm._panel_rows() == numpy_backend.PANEL_MIN_ROWS == 128
    small = NumpyGemm(np.random.default_rng(9), np.float64, 64)
    small._best_rate_flops = _rate_for_call_seconds(64, 100.0)
    assert small._panel_rows() == 64  # thinner than the minimum: one whole product


def test_small_gemm_runs_unsliced(monkeypatch: pytest.MonkeyPatch) -> None:
    gemm = NumpyGemm(np.random.default_rng(2), np.float32, 64)
    spy = MatmulSpy()
    monkeypatch.setattr(numpy_backend.np, "matmul", spy)
    gemm.run(3, lambda: None)
    assert spy.rows == [64, 64, 64]  # whole products
    assert gemm._panel_rows() == 64
    assert gemm._c is not None and gemm._a is not None and gemm._b is not None
    np.testing.assert_allclose(gemm._c, spy.real(gemm._a, gemm._b), rtol=1e-5)
    assert gemm.method_note is None
    assert gemm.work == 2.0 * 64**3


def test_a_product_under_the_unsliced_limit_runs_whole() -> None:
    # n=2048 FP64 takes 0.2-0.3 s on two cores; it used to be sliced at 0.25 s,
    # so the bench timed a different computation from a plain a @ b loop.
    gemm = NumpyGemm(np.random.default_rng(3), np.float64, 512)
    gemm._prepare(lambda: None)
    gemm._best_rate_flops = _rate_for_call_seconds(512, 0.3)
    assert numpy_backend.UNSLICED_LIMIT_S >= 0.3
    assert gemm._panel_rows() == 512
    gemm._best_rate_flops = _rate_for_call_seconds(512, numpy_backend.UNSLICED_LIMIT_S * 1.5)
    assert gemm._panel_rows() < 512


def test_panel_layout_is_fixed_after_the_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    gemm = NumpyGemm(np.random.default_rng(4), np.float64, 512)
    gemm._prepare(lambda: None)
    gemm._best_rate_flops = _rate_for_call_seconds(512, 4 * numpy_backend.SLICE_SECONDS)
    spy = MatmulSpy()
    monkeypatch.setattr(numpy_backend.np, "matmul", spy)
    gemm.run(1, lambda: None)  # sliced by the guess, and far faster than guessed
    assert spy.rows == [128] * 4
    # The first call's real rate chose the layout (whole products) and fixed it:
    # a slower reading later does not change how the timed calls compute.
    gemm._best_rate_flops = _rate_for_call_seconds(512, 4 * numpy_backend.SLICE_SECONDS)
    assert gemm._panel_rows() == 512
    spy.rows.clear()
    gemm.run(2, lambda: None)
    assert spy.rows == [512, 512]
    assert gemm.method_note is None


def test_matrices_are_filled_in_blocks_with_cancel_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numpy_backend, "FILL_BLOCK_ELEMENTS", 1000)
    gemm = NumpyGemm(np.random.default_rng(5), np.float64, 100)
    progress = CancelAfter(checks=3)
    with pytest.raises(Cancelled):
        gemm.run(1, progress.check)
    assert gemm._best_rate_flops is None  # cancelled before any product
    gemm.release()


def test_block_fill_is_the_generators_normal_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numpy_backend, "FILL_BLOCK_ELEMENTS", 1000)
    for dtype in (np.float64, np.float32):
        matrix = np.empty((100, 70), dtype=dtype)
        numpy_backend.fill_standard_normal(np.random.default_rng(6), matrix, lambda: None)
        expected = np.random.default_rng(6).standard_normal((100, 70), dtype=dtype)
        assert np.array_equal(matrix, expected)


class StepClock:
    """A clock on which every product of the probe lasts ``step`` seconds."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        if self.reads % 2 == 0:  # every second read ends a product
            self.now += self.step
        return self.now


def test_probe_grows_to_the_probe_size_while_products_are_quick(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(numpy_backend, "PROBE_N", 512)
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((600, 600)), rng.standard_normal((600, 600))
    flops, seconds = numpy_backend.probe_gemm(a, b, lambda: None, clock=StepClock(0.001))
    assert (flops, seconds) == (2.0 * 512**3, pytest.approx(0.001))


def test_probe_stops_growing_on_a_slow_machine() -> None:
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((600, 600)), rng.standard_normal((600, 600))
    flops, _ = numpy_backend.probe_gemm(a, b, lambda: None, clock=StepClock(1.0))
    assert flops == 2.0 * 256**3  # a slow 256 product: no larger uncancellable probe


def test_a_sliced_gemm_row_says_how_it_was_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numpy_backend, "UNSLICED_LIMIT_S", 1e-9)
    monkeypatch.setattr(numpy_backend, "SLICE_SECONDS", 1e-9)
    monkeypatch.setattr(numpy_backend, "PANEL_MIN_ROWS", 16)
    plan = small_plan().model_copy(update={"tests": ("gemm",), "gemm_dtypes": ("fp64",)})
    row = run_benchmark(plan, NumpyBackend(), ProgressState()).find("gemm", "fp64")
    assert row is not None and row.value is not None
    assert any("row panels of up to 16 rows" in note for note in row.notes), row.notes


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
    first_thread: list[int] = []
    another_thread_copied = threading.Event()
    lock = threading.Lock()

    def spying_copyto(dst: object, src: object) -> None:
        # The first thread to copy waits for another one: on a loaded machine one pool
        # thread could otherwise take every chunk before the others start (a flaky test).
        # With it held, a pool that runs its chunks on one thread times out instead.
        me = threading.get_ident()
        with lock:
            seen.add(me)
            first_thread[:] = first_thread or [me]
            if first_thread[0] != me:
                another_thread_copied.set()
        if first_thread[0] == me:
            another_thread_copied.wait(timeout=30)
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
