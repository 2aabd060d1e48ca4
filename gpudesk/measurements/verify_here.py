"""Measure an estimate on this machine, for the app: what ``speed ... --verify`` runs.

The same measurement as the CLI's ``--verify`` (:mod:`gpudesk.bench.verify`):
llama.cpp through ``llama-cpp-python``, the estimate's prompt in one evaluation
(prefill) and its output decoded one token at a time, on the user's GGUF file or on
a random-weight GGUF of the model's exact shape (never downloaded weights). Here it
is a plain function of a :class:`VerifyJob` and a :class:`~gpudesk.progress.Progress`,
so the app runs it on a worker thread with progress and Cancel: a cancelled run
stores nothing and raises :class:`~gpudesk.progress.Cancelled`.

``cpu`` is this machine's processor: a device built from a short NumPy measurement of
its memory bandwidth and FP32 GEMM rate (:func:`this_cpu_entry`), not a catalog entry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import tempfile
from pathlib import Path
from typing import Any

# Measuring here is this package's concern: the CLI and the GUI reach the engines'
# runners through these names, never bench.verify itself (an import-linter contract).
from gpudesk.bench import verify as llama_cpp_engine, verify_vllm as vllm_engine
from gpudesk.bench.verify import (
    VerifyError as VerifyError,
    VerifyResult,
    VerifySettings as VerifySettings,
    run_llama_cpp as run_llama_cpp,
    write_random_gguf as write_random_gguf,
)
from gpudesk.bench.verify_vllm import (
    VllmSettings as VllmSettings,
    run_vllm as run_vllm,
)
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.measurements.store import Measurement, MeasurementStore, StoreError
from gpudesk.progress import Cancelled, Progress
from gpudesk.speed.estimate import Engine, Mode, SpeedEstimate, SpeedRequest
from gpudesk.speed.physics import ModelCosts
from gpudesk.workload.architecture import ModelShape

CPU_ID = "cpu"
#: what to run when llama-cpp-python is missing (from a checkout: the extra)
INSTALL_HINT = "pip install '.[verify]'  (from the GPUDesk checkout)"
VERIFY_MODES = (Mode.DECODE, Mode.PREFILL)


def llama_cpp_version() -> str | None:
    """The installed llama-cpp-python's version, or None: asked of bench.verify at each
    call, not bound at import, so what is installed now (or a test's stand-in) counts."""
    return llama_cpp_engine.llama_cpp_version()


def vllm_version() -> str | None:
    """The installed vLLM's version, or None (asked of bench.verify_vllm at each call)."""
    return vllm_engine.vllm_version()


def this_cpu_entry() -> CatalogEntry:
    """This machine's processor as a device the speed model can estimate (about 0.6 s)."""
    import platform

    from gpudesk.bench.verify import measure_cpu

    copy_gbs, gemm_tflops = measure_cpu()
    memory_gib = 8.0
    with contextlib.suppress(ValueError, OSError, AttributeError):
        memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    name = (platform.processor() or platform.machine() or "CPU")[:80]
    year = dt.date.today().year
    return CatalogEntry.model_validate(
        {
            "id": CPU_ID,
            "name": f"This machine's CPU ({name})",
            "vendor": "CPU",
            "segment": "consumer",
            "kind": "soc",
            "architecture": "cpu",
            "release_year": year if year <= 2030 else 2030,
            "memory_gb": round(max(1.0, min(memory_gib, 2048.0)), 1),
            "memory_type": "system RAM",
            "bandwidth_gbs": round(max(copy_gbs, 0.1), 2),
            "fp32_tflops": round(max(gemm_tflops, 0.001), 4),
            "sources": [
                "measured on this machine by gpudesk speed: NumPy copy of 64 MiB "
                f"({copy_gbs:.1f} GB/s read + write) and a 1024^3 FP32 matmul "
                f"({gemm_tflops * 1000:.0f} GFLOP/s), best of 0.6 s"
            ],
        }
    )


def why_not(request: SpeedRequest) -> str | None:
    """Why this workload cannot be measured here, or None when it can."""
    if llama_cpp_version() is None:
        return f"Measuring needs llama-cpp-python: {INSTALL_HINT}."
    if request.engine is not Engine.LLAMA_CPP:
        return "Measuring runs llama.cpp: choose the engine llama.cpp."
    if request.mode not in VERIFY_MODES:
        return "Measuring runs decode or prefill: choose one of those workloads."
    return None


@dataclasses.dataclass(frozen=True)
class VerifyJob:
    """One measurement to run.

    ``entry`` is the device (a detected catalog GPU, all layers on it), or None for
    this machine's CPU (measured in the run, no layers offloaded). ``costs`` and
    ``shape`` are the model's (from a preset, or from ``model_file``'s header when
    the user gave their GGUF); ``model`` is the name the row is stored under.
    """

    model: str
    shape: ModelShape
    costs: ModelCosts
    request: SpeedRequest
    entry: CatalogEntry | None = None
    model_file: Path | None = None
    max_file_bytes: int = 2_000_000_000
    time_limit_s: float = 300.0
    n_threads: int | None = None


@dataclasses.dataclass(frozen=True)
class VerifyOutcome:
    estimate: SpeedEstimate
    measured: VerifyResult
    tokens_per_s: float | None
    stored: Measurement | None
    stored_id: int | None
    #: the device the estimate is for (this machine's CPU, measured in the run)
    entry: CatalogEntry

    @property
    def ratio(self) -> float | None:
        if not self.tokens_per_s:
            return None
        return self.tokens_per_s / self.estimate.tokens_per_s


def run_job(job: VerifyJob, progress: Progress, store: MeasurementStore) -> VerifyOutcome:
    """Estimate, measure and store one :class:`VerifyJob`.

    Raises:
        Cancelled: the user cancelled; nothing is stored.
        VerifyError: the engine is missing, the model cannot be written or loaded,
            the workload does not fit here, or the row cannot be stored.
    """
    from gpudesk.speed.estimate import NotRunnable
    from gpudesk.speed.planner import estimates_for_entries

    problem = why_not(job.request)
    if problem is not None:
        raise VerifyError(problem)
    progress.report(0.0, "measuring this machine's CPU" if job.entry is None else "estimating")
    entry = job.entry if job.entry is not None else this_cpu_entry()
    progress.check()
    request = job.request.model_copy(update={"count": 1})
    try:
        (estimate,) = estimates_for_entries([entry], job.costs, request)
    except NotRunnable as exc:
        raise VerifyError(f"{entry.name}: {exc}") from None
    n_prompt = int(request.seq_in or 0)
    n_gen = int(request.seq_out or 0) if request.mode is Mode.DECODE else 0
    with tempfile.TemporaryDirectory(prefix="gpudesk-verify-") as folder:
        if job.model_file is not None:
            path = job.model_file
        else:
            path = Path(folder) / "random-weights.gguf"
            progress.report(0.02, "writing random weights of the model's shape")
            ggml = "F16" if request.quant.value in ("fp16", "bf16", "fp32") else "Q8_0"
            shape: Any = job.shape  # a planning ModelShape has every field the writer reads
            write_random_gguf(shape, path, ggml_type=ggml, max_bytes=job.max_file_bytes)
        progress.check()
        settings = VerifySettings(
            model_path=path,
            n_prompt=n_prompt,
            n_gen=n_gen,
            n_gpu_layers=0 if job.entry is None else job.shape.layers + 1,
            n_threads=job.n_threads,
            time_limit_s=job.time_limit_s,
        )

        def step(fraction: float, message: str) -> None:
            progress.report(0.05 + 0.95 * fraction, message)

        measured = run_llama_cpp(settings, should_stop=progress.is_cancelled, on_step=step)
    if measured.stopped in ("cancelled", "interrupted"):
        raise Cancelled()
    value = (
        measured.decode_tokens_per_s
        if request.mode is Mode.DECODE
        else measured.prefill_tokens_per_s
    )
    stored = stored_id = None
    if value:
        stored = _row(job, request, estimate, measured, value)
        stored_id = store_row(store, stored)
    return VerifyOutcome(estimate, measured, value, stored, stored_id, entry)


def _row(
    job: VerifyJob,
    request: SpeedRequest,
    estimate: SpeedEstimate,
    measured: VerifyResult,
    value: float,
) -> Measurement:
    return measured_row(
        estimate,
        request,
        measured,
        value,
        count=1,
        engine="llama.cpp",
        engine_version=f"llama-cpp-python {measured.engine_version}",
        backend="cpu" if job.entry is None else None,
        model=job.model,
        model_file=str(job.model_file) if job.model_file is not None else None,
        source="gpudesk app: Verify on this machine",
    )


def measured_row(
    estimate: SpeedEstimate,
    request: SpeedRequest,
    measured: Any,
    value: float,
    *,
    count: int,
    engine: str,
    engine_version: str,
    backend: str | None,
    model: str,
    model_file: str | None,
    source: str,
    weights: str | None = None,
) -> Measurement:
    """The row a verify run stores, the app's and ``speed --verify``'s (llama.cpp or
    vLLM): ``measured`` has ``n_gen_done`` and ``stopped``; ``weights`` says what was
    measured (default: the model's file, or random weights of its shape)."""
    if weights is None:
        weights = (
            "the model's file" if model_file is not None else "random weights of the model's shape"
        )
    return Measurement(
        gpu_id=estimate.gpu_id,
        gpu_name=estimate.name[:200],
        count=count,
        engine=engine,
        engine_version=engine_version[:80],
        backend=backend,
        model=model[:300],
        model_file=model_file[:1000] if model_file is not None else None,
        quant=request.quant.value,
        mode=request.mode.value,
        seq_in=request.seq_in or None,
        seq_out=(measured.n_gen_done or None) if request.mode is Mode.DECODE else None,
        tokens_per_s=value,
        estimate_tokens_per_s=estimate.tokens_per_s,
        measured_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        source=source,
        source_format="gpudesk verify",
        note=(f"stopped: {measured.stopped}; " if measured.stopped else "") + weights,
    )


def store_row(store: MeasurementStore, row: Measurement) -> int | None:
    """Store a verify run's row; its id (the one already there when it was stored before).

    Raises:
        VerifyError: the database could not take it.
    """
    try:
        store.add([row])
        found = [item for item in store.rows() if item.measurement.key() == row.key()]
    except (StoreError, OSError) as exc:
        raise VerifyError(f"the measurement could not be stored: {exc}") from None
    return found[-1].id if found else None


def file_costs(model_file: Any, quant: Any, kv_quant: Any) -> ModelCosts:
    """The speed model's costs of a read GGUF: its shape, and its exact weight bytes."""
    from gpudesk.speed.estimate import model_costs

    costs = model_costs(model_file.shape, quant, kv_quant)
    return dataclasses.replace(
        costs,
        in_memory_bytes=float(model_file.tensor_bytes),
        streamed_bytes=float(model_file.streamed_per_token_bytes),
        input_embedding_bytes=float(model_file.embedding_bytes),
    )
