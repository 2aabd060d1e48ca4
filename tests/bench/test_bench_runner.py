"""The runner with a fake backend: figures, step-down, cancellation, failures."""

from __future__ import annotations

import threading
import time

import pytest
from bench_fakes import (
    CancelAfter,
    CountingTelemetry,
    FakeBackend,
    FakeConfig,
    FixedProbe,
    catalog_entry,
    gemm_rate_flops,
)

from gpudesk.bench.plan import BenchPlan, Capabilities, make_plan
from gpudesk.bench.runner import (
    MIN_GEMM_N,
    fit_bytes,
    fit_gemm_size,
    run_benchmark,
    time_workload,
)
from gpudesk.progress import Cancelled, ProgressState

MIB = 2**20


def gpu_plan(**overrides: object) -> BenchPlan:
    caps = Capabilities(
        kind="cuda",
        tests=("gemm", "copy", "h2d", "d2h", "sweep"),
        gemm_dtypes=("fp64", "fp32", "tf32", "fp16", "bf16"),
        last_level_cache_bytes=50 * MIB,
    )
    return make_plan(caps).model_copy(update=overrides)


def run(backend: FakeBackend, plan: BenchPlan, **kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("probe", FixedProbe(None))
    return run_benchmark(plan, backend, ProgressState(), **kwargs)  # type: ignore[arg-type]


def test_gemm_values_are_work_over_median_time() -> None:
    backend = FakeBackend()
    result = run(backend, gpu_plan(tests=("gemm",)))
    assert result.ok
    assert [row.dtype for row in result.results] == ["fp64", "fp32", "tf32", "fp16", "bf16"]
    fp16 = result.find("gemm", "fp16")
    assert fp16 is not None
    assert fp16.size == 8192
    assert fp16.value == pytest.approx(gemm_rate_flops(160.0, 8192) / 1e12)
    assert fp16.min == pytest.approx(fp16.value)
    assert fp16.max == pytest.approx(fp16.value)
    assert fp16.unit == "TFLOPS"
    assert fp16.repetitions == 5
    assert fp16.timer == "perf_counter"
    # a repetition repeats the call until it lasts at least min_rep_seconds
    assert fp16.iterations_per_repetition is not None
    per_call = 2.0 * 8192**3 / gemm_rate_flops(160.0, 8192)
    assert fp16.iterations_per_repetition * per_call >= 0.02
    # TF32 state is recorded for FP32-storage GEMMs only
    assert result.find("gemm", "tf32").tf32_enabled is True  # type: ignore[union-attr]
    assert result.find("gemm", "fp32").tf32_enabled is False  # type: ignore[union-attr]
    assert fp16.tf32_enabled is None
    assert backend.sessions[0].live == 0, "every workload released"
    assert backend.sessions[0].closed


def test_copy_and_transfers() -> None:
    result = run(FakeBackend(), gpu_plan(tests=("copy", "h2d", "d2h")))
    copy = result.find("copy")
    assert copy is not None
    assert copy.value == pytest.approx(1000.0)
    assert copy.unit == "GB/s"
    assert copy.size == 512 * MIB
    pinned = result.find("h2d", host_memory="pinned")
    pageable = result.find("d2h", host_memory="pageable")
    assert pinned is not None and pinned.value == pytest.approx(25.0)
    assert pageable is not None and pageable.value == pytest.approx(10.0)
    assert [(row.test, row.host_memory) for row in result.results[1:]] == [
        ("h2d", "pageable"),
        ("h2d", "pinned"),
        ("d2h", "pageable"),
        ("d2h", "pinned"),
    ]


def test_sweep_gives_throughput_against_size() -> None:
    result = run(FakeBackend(), gpu_plan(tests=("sweep",), sweep_dtypes=("fp16",)))
    sizes = [row.size for row in result.sweep]
    assert sizes == [256, 512, 1024, 2048, 4096, 8192]
    values = [row.value for row in result.sweep]
    assert values == sorted(values), "small sizes underuse the device"
    assert values[0] == pytest.approx(160.0 * 256 / 768)
    assert all(row.repetitions == 3 for row in result.sweep)


def test_out_of_memory_steps_down_and_says_so() -> None:
    backend = FakeBackend(FakeConfig(oom_gemm_above=2048))
    result = run(backend, gpu_plan(tests=("gemm",), gemm_dtypes=("fp16",)))
    row = result.results[0]
    assert row.error is None
    assert row.size == 2048
    assert any("out of memory at n=8192" in note for note in row.notes)
    assert any("stepped down to n=2048" in note for note in row.notes)
    assert backend.sessions[0].live == 0


def test_out_of_memory_at_every_size_is_an_error_row() -> None:
    backend = FakeBackend(FakeConfig(oom_bytes_above=MIB))
    result = run(backend, gpu_plan(tests=("copy", "h2d")))
    assert not result.ok
    copy = result.results[0]
    assert copy.value is None
    assert copy.error is not None and "out of memory even at 16 MiB" in copy.error
    assert all(row.error for row in result.results)
    assert backend.sessions[0].live == 0


def test_sizes_fit_free_memory_before_allocating() -> None:
    # 3 x 8192^2 x 8 bytes = 1.5 GiB; half of 1 GiB free fits n=4096 (384 MiB).
    backend = FakeBackend(FakeConfig(free_bytes=2**30))
    result = run(
        backend, gpu_plan(tests=("gemm", "sweep"), gemm_dtypes=("fp64",), sweep_dtypes=("fp64",))
    )
    row = result.results[0]
    assert row.size == 4096
    assert any("fit in free memory" in note for note in row.notes)
    assert ("gemm", "fp64", 8192) not in backend.sessions[0].made, "never allocated"
    assert [p.size for p in result.sweep] == [256, 512, 1024, 2048, 4096]
    assert any("stops before n=8192" in note for note in result.notes)


def test_fit_helpers() -> None:
    assert fit_gemm_size(8192, 4, None, 0.5) == 8192
    assert fit_gemm_size(8192, 4, 2**40, 0.5) == 8192
    assert fit_gemm_size(8192, 4, 2**30, 0.5) == 4096
    assert fit_gemm_size(8192, 2, 100, 0.5) == 0
    assert fit_gemm_size(64, 8, 2**20, 0.5) == 64, "small planned sizes that fit are kept"
    assert fit_gemm_size(8192, 8, 3 * MIN_GEMM_N**2 * 8 * 2, 0.5) == MIN_GEMM_N
    assert fit_bytes(512 * MIB, 2, 2**30, 0.5, 16 * MIB) == 256 * MIB
    assert fit_bytes(512 * MIB, 2, MIB, 0.5, 16 * MIB) == 0
    assert fit_bytes(MIB, 2, None, 0.5, 16 * MIB) == MIB


def test_slow_unsliceable_call_runs_at_a_smaller_size() -> None:
    backend = FakeBackend(FakeConfig(peak_tflops={"fp64": 1.0}, gemm_dtypes=("fp64",)))
    result = run(backend, gpu_plan(tests=("gemm",), gemm_dtypes=("fp64",)))
    row = result.results[0]
    # one call at 8192 would take ~1.3 s; at 4096 ~0.17 s < max_rep_seconds (0.25)
    assert row.size == 4096
    assert any("n reduced from 8192 to 4096" in note for note in row.notes)
    assert row.iterations_per_repetition == 1


def test_sliceable_workloads_keep_their_size() -> None:
    config = FakeConfig(
        kind="cpu", peak_tflops={"fp64": 0.1}, gemm_dtypes=("fp64",), sliceable=True
    )
    result = run(
        FakeBackend(config), gpu_plan(tests=("gemm",), gemm_dtypes=("fp64",), gemm_size=4096)
    )
    assert result.results[0].size == 4096
    assert result.results[0].notes == ()


def test_time_workload_warmup_and_repetitions() -> None:
    backend = FakeBackend()
    session = backend.open(0)
    workload = session.gemm("fp32", 1024)
    seen: list[int] = []
    timing = time_workload(
        workload,
        repetitions=7,
        warmup=2,
        min_rep_seconds=0.01,
        max_rep_seconds=0.2,
        check=lambda: None,
        on_repetition=seen.append,
    )
    assert seen == [1, 2, 3, 4, 5, 6, 7]
    assert len(timing.seconds_per_call) == 7
    assert session.run_calls == 2 + 7
    assert workload.calls == 2 + 7 * timing.iterations  # type: ignore[attr-defined]


def test_peaks_and_fraction_of_peak_from_the_matched_entry() -> None:
    entry = catalog_entry()
    result = run(
        FakeBackend(),
        gpu_plan(tests=("gemm", "copy", "h2d")),
        catalog=[entry],
        probe=FixedProbe("fake-gpu"),
    )
    assert result.catalog_id == "fake-gpu"
    fp16 = result.find("gemm", "fp16")
    fp32 = result.find("gemm", "fp32")
    tf32 = result.find("gemm", "tf32")
    copy = result.find("copy")
    h2d = result.find("h2d", host_memory="pinned")
    assert fp16 is not None and fp16.peak == 200.0
    assert fp16.fraction_of_peak == pytest.approx(fp16.value / 200.0)  # type: ignore[operator]
    assert fp32 is not None and fp32.peak == 40.0  # non-tensor figure
    assert tf32 is not None and tf32.peak == 100.0  # dense tensor figure
    assert copy is not None and copy.peak == 2000.0
    assert copy.fraction_of_peak == pytest.approx(0.5)
    assert h2d is not None and h2d.peak == pytest.approx(63.008)  # PCIe 5.0 x16


def test_unmatched_device_has_no_peaks() -> None:
    result = run(
        FakeBackend(),
        gpu_plan(tests=("gemm",)),
        catalog=[catalog_entry()],
        probe=FixedProbe("not-in-catalog"),
    )
    assert result.catalog_id is None
    assert all(row.peak is None and row.fraction_of_peak is None for row in result.results)


def test_cancel_releases_everything_and_propagates() -> None:
    telemetry = CountingTelemetry()
    backend = FakeBackend()
    progress = CancelAfter(checks=12)
    with pytest.raises(Cancelled):
        run_benchmark(gpu_plan(), backend, progress, probe=FixedProbe(None, telemetry))
    session = backend.sessions[0]
    assert session.live == 0
    assert session.closed
    assert telemetry.started and telemetry.stopped
    # nothing ran after the cancel request was seen
    runs_at_cancel = session.run_calls
    assert runs_at_cancel < 40


def test_cancel_takes_effect_within_half_a_second() -> None:
    """Real (sleeping) calls of ~50 ms: a cancel lands at the next call boundary."""
    config = FakeConfig(real_time=True, peak_tflops={"fp32": 0.03}, gemm_dtypes=("fp32",))
    backend = FakeBackend(config)
    plan = gpu_plan(
        tests=("gemm",),
        gemm_dtypes=("fp32",),
        gemm_size=1024,
        repetitions=50,
        warmup=1,
        max_rep_seconds=0.2,
    )
    progress = ProgressState()
    outcome: list[BaseException] = []

    def work() -> None:
        try:
            run_benchmark(plan, backend, progress, probe=FixedProbe(None))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    time.sleep(0.6)
    cancelled_at = time.monotonic()
    progress.cancel()
    thread.join(5)
    latency = time.monotonic() - cancelled_at
    assert not thread.is_alive()
    assert outcome and isinstance(outcome[0], Cancelled)
    assert latency < 0.5
    assert backend.sessions[0].live == 0


def test_unavailable_backend_is_an_error_result() -> None:
    result = run(FakeBackend(FakeConfig(available=False)), gpu_plan())
    assert result.error == "backend fake is not available: fake says no"
    assert result.device is None
    assert result.results == ()
    assert not result.ok


def test_backend_that_cannot_open_is_an_error_result() -> None:
    result = run(FakeBackend(FakeConfig(open_error="driver crashed")), gpu_plan())
    assert result.error is not None and "could not start" in result.error
    assert "driver crashed" in result.error


def test_one_failing_test_does_not_stop_the_others() -> None:
    backend = FakeBackend(FakeConfig(failing={("gemm", "bf16")}, environment_error=True))
    result = run(backend, gpu_plan(tests=("gemm", "copy")))
    bf16 = next(row for row in result.results if row.dtype == "bf16")
    assert bf16.value is None
    assert bf16.error == "RuntimeError: gemm bf16 broke"
    assert result.find("copy") is not None
    assert result.find("gemm", "fp16") is not None
    assert not result.ok
    assert result.error is None
    assert result.environment["environment_error"] == "RuntimeError: environment exploded"


def test_progress_reports_every_step_and_ends_at_one() -> None:
    reports: list[tuple[float, str]] = []
    progress = ProgressState(on_report=lambda f, m: reports.append((f, m)))
    plan = gpu_plan(tests=("gemm", "copy"), gemm_dtypes=("fp16",))
    run_benchmark(plan, FakeBackend(), progress, probe=FixedProbe(None))
    messages = [message for _, message in reports]
    assert "GEMM FP16 n=8192" in messages
    assert "GEMM FP16 n=8192: repetition 5" in messages
    assert "memory copy" in messages
    assert reports[-1] == (1.0, "done")
    fractions = [fraction for fraction, _ in reports]
    assert fractions == sorted(fractions)


def test_probe_failure_does_not_cost_the_figures() -> None:
    class BrokenProbe:
        def describe(self, device, entries):  # type: ignore[no-untyped-def]
            raise RuntimeError("nvml fell over")

    result = run(FakeBackend(), gpu_plan(tests=("copy",)), probe=BrokenProbe())
    assert result.ok
    assert "nvml fell over" in str(result.environment["nvml"])
    assert result.telemetry is not None and not result.telemetry.available


def test_sweep_respects_the_time_budget() -> None:
    # FP32 at ~0.02 TFLOPS: n=2048 would take ~0.9 s per call, n=4096 ~7 s.
    config = FakeConfig(
        kind="cpu", sliceable=True, peak_tflops={"fp32": 0.025}, gemm_dtypes=("fp32",)
    )
    plan = gpu_plan(tests=("sweep",), sweep_dtypes=("fp32",), time_budget_s=5.0)
    result = run(FakeBackend(config), plan)
    sizes = [row.size for row in result.sweep]
    assert sizes == [256, 512, 1024, 2048]
    assert any("stops before n=4096" in note and "5 s budget" in note for note in result.notes)


def test_quick_plans_have_a_budget_and_full_plans_none() -> None:
    cpu = Capabilities(kind="cpu", tests=("gemm", "sweep"), gemm_dtypes=("fp64",))
    assert make_plan(cpu).time_budget_s == 25.0
    assert make_plan(cpu, full=True).time_budget_s is None
