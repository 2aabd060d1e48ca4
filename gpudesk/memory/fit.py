"""Which catalog GPUs hold a workload, on 1, 2, 4 or 8 of them, and how fast it could decode.

:func:`check_count` is the one answer to "do N of this GPU hold this workload": ``fit``,
``speed`` (:mod:`gpudesk.memory.breakdown` builds the same memory estimate from a speed
request), Compare's tokens/s row, the Plan tab and the report all come through it.

Memory available per GPU is :func:`gpudesk.memory.usable.usable_memory`: the catalog's
``memory_gb`` read as GiB, less what the driver keeps, times the engine's share (vLLM
0.9); on Apple silicon the GPU wired limit. More than one GPU means tensor/model
parallelism, with the framework overhead counted again on every GPU; an SoC is one per
machine; an estimate made for a named GPU count (sharded training) is checked at that
count only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.memory.breakdown import GB, MAX_SEQ, DType, Engine, MemoryEstimate, Workload
from gpudesk.memory.offload import DEFAULT_HOST, HostMemory, Offload, plan_offload
from gpudesk.memory.usable import GIB, UsableMemory, usable_memory
from gpudesk.workload import citations

GPU_COUNTS: tuple[int, ...] = (1, 2, 4, 8)

#: NVIDIA architectures before Ampere: no bfloat16 arithmetic.
_PRE_AMPERE = ("kepler", "maxwell", "pascal", "volta", "turing")

PARALLELISM_NOTE = (
    "needs tensor/model parallelism (an ideal even split; the framework overhead is "
    "counted on every GPU)"
)
DECODE_LABEL = "single-stream decode upper bound (memory-bandwidth bound, tokens/s)"
DECODE_SOURCE = citations.DECODE_BOUND
BF16_SOURCE = citations.BF16_SUPPORT


class GpuFit(BaseModel):
    """One GPU's answer: how many it takes, the headroom, the decode upper bound."""

    model_config = ConfigDict(frozen=True)

    gpu_id: str
    name: str
    #: None: the vendor published no memory size (an announced part): excluded, and the
    #: usable and headroom figures below are no figures (JSON gives null)
    memory_gb: float | None
    #: what the workload may use of each GPU (GB = 10^9 bytes, and GiB as nvidia-smi adds up)
    usable_gb: float = 0.0
    usable_gib: float = 0.0
    usable_basis: str = ""
    #: the most of this device one set can have (1 for an SoC), None: no limit
    max_devices: int | None = None
    #: the fewest GPUs (of GPU_COUNTS) that hold the workload; None: not even the most
    count: int | None
    #: memory each GPU needs at ``count`` (or at the largest count when it does not fit)
    per_gpu_gb: float
    #: usable_gb - per_gpu_gb
    headroom_gb: float
    #: tokens/s <= count x bandwidth / bytes per token; None when not a decoder inference
    decode_tokens_per_s_upper_bound: float | None
    excluded_reason: str | None = None
    #: llama.cpp on one GPU that does not hold it all: what stays in host memory
    offload: Offload | None = None

    @property
    def fits(self) -> bool:
        return self.count is not None and self.excluded_reason is None

    @property
    def needs_parallelism(self) -> bool:
        return self.fits and self.count is not None and self.count > 1


class FitReport(BaseModel):
    """Every catalog GPU checked against one estimate."""

    model_config = ConfigDict(frozen=True)

    estimate: MemoryEstimate
    results: tuple[GpuFit, ...]
    counts: tuple[int, ...] = GPU_COUNTS

    @property
    def fits(self) -> list[GpuFit]:
        """GPUs that hold the workload: fewest GPUs first, then the smallest card."""
        chosen = [result for result in self.results if result.fits]
        return sorted(
            chosen, key=lambda r: (r.count or 0, r.memory_gb or 0.0, -r.headroom_gb, r.gpu_id)
        )

    @property
    def excluded(self) -> list[GpuFit]:
        return [result for result in self.results if result.excluded_reason is not None]

    @property
    def too_small(self) -> list[GpuFit]:
        return [
            result
            for result in self.results
            if result.count is None and result.excluded_reason is None and result.offload is None
        ]

    @property
    def offloaded(self) -> list[GpuFit]:
        """llama.cpp on one GPU with part of the model in host memory: least host first."""
        chosen = [r for r in self.results if r.offload is not None and r.excluded_reason is None]
        return sorted(chosen, key=lambda r: (r.offload.host_gb if r.offload else 0.0, r.gpu_id))

    def fitting_ids(self, max_count: int = GPU_COUNTS[-1]) -> frozenset[str]:
        return frozenset(
            result.gpu_id
            for result in self.fits
            if result.count is not None and result.count <= max_count
        )


def bf16_supported(entry: CatalogEntry) -> bool | None:
    """Whether a GPU computes in bfloat16: True, False, or None when unknown.

    NVIDIA needs compute capability 8.0 (Ampere); older architectures are recognised
    by name when the capability is missing. Other vendors: known only when the catalog
    gives a bf16 tensor rate.
    """
    if entry.bf16_tensor_tflops is not None:
        return True
    if entry.vendor.lower() == "nvidia":
        if entry.compute_capability is not None:
            major = int(entry.compute_capability.split(".")[0])
            return major >= 8
        if (entry.architecture or "").lower() in _PRE_AMPERE:
            return False
    return None


def _needs_bf16(estimate: MemoryEstimate) -> bool:
    # QLoRA and int8/int4 inference compute in the spec's dtype when it is a float one.
    # llama.cpp never does: ggml dequantises to fp16/fp32 for its kernels, so GGUF and
    # MXFP4 models run on Pascal and Turing cards.
    spec = estimate.spec
    if spec.workload is Workload.INFERENCE and spec.engine is Engine.LLAMA_CPP:
        return False
    return spec.dtype is DType.BF16


def decode_upper_bound(estimate: MemoryEstimate, bandwidth_gbs: float, count: int) -> float | None:
    """tokens/s <= count x bandwidth / bytes read per token, for one stream.

    An upper bound: real decoders reach roughly half to four fifths of it, and compute,
    kernel launches and communication between GPUs are ignored.
    """
    if estimate.decode_bytes_per_token is None or estimate.decode_bytes_per_token <= 0:
        return None
    return count * bandwidth_gbs * GB / estimate.decode_bytes_per_token


def estimate_engine(estimate: MemoryEstimate) -> str | None:
    """The engine whose memory share applies: None (transformers) for training."""
    if estimate.spec.workload.is_training or estimate.spec.engine is None:
        return None
    return estimate.spec.engine.value


def usable_for(
    entry: CatalogEntry, estimate: MemoryEstimate, *, apple_wired_limit_mb: int | None = None
) -> UsableMemory:
    """``entry``'s usable memory for the engine ``estimate`` runs on."""
    return usable_memory(
        entry, estimate_engine(estimate), apple_wired_limit_mb=apple_wired_limit_mb
    )


def exclusion(entry: CatalogEntry, estimate: MemoryEstimate) -> str | None:
    """Why ``entry`` cannot run ``estimate`` at all (a dtype it lacks, or no memory size
    published: nothing can be checked against a gap), else None."""
    if entry.memory_gb is None:
        return "its vendor has published no memory size yet: no fit to check"
    if _needs_bf16(estimate) and bf16_supported(entry) is False:
        capability = entry.compute_capability or entry.architecture
        return f"no native bf16 ({capability}, needs compute capability 8.0+); use fp16"
    return None


def check_count(estimate: MemoryEstimate, count: int, usable: UsableMemory) -> bool:
    """Whether ``count`` devices with ``usable`` memory each hold ``estimate``.

    The one test of "does it hold": the memory each of ``count`` devices needs
    (:meth:`MemoryEstimate.per_gpu_gb`) is at most what each may use, and the set has
    no more devices than one machine can (an SoC: one).
    """
    if usable.max_devices is not None and count > usable.max_devices:
        return False
    return estimate.per_gpu_gb(count) * GB <= usable.usable_bytes


def fit_entry(
    entry: CatalogEntry,
    estimate: MemoryEstimate,
    counts: Sequence[int] = GPU_COUNTS,
    *,
    apple_wired_limit_mb: int | None = None,
    gpu_layers: int | None = None,
    cpu_moe: int | None = None,
    host: HostMemory = DEFAULT_HOST,
) -> GpuFit:
    """Check one GPU at each count in ``counts``, smallest first.

    llama.cpp on a GPU that one does not hold (or with ``gpu_layers`` / ``cpu_moe``
    given): ``offload`` says what stays in host memory on one GPU, if the rest then fits
    (beside the count that holds it all, when one does).
    """
    excluded = exclusion(entry, estimate)
    if entry.memory_gb is None:
        return GpuFit(
            gpu_id=entry.id,
            name=entry.name,
            memory_gb=None,
            count=None,
            per_gpu_gb=estimate.per_gpu_gb(min(counts)),
            # nothing usable is known: usable and headroom are no figures (JSON: null)
            headroom_gb=0.0,
            decode_tokens_per_s_upper_bound=None,
            excluded_reason=excluded,
        )
    usable = usable_for(entry, estimate, apple_wired_limit_mb=apple_wired_limit_mb)
    allowed = [c for c in counts if usable.max_devices is None or c <= usable.max_devices]
    allowed = allowed or [min(counts)]
    chosen: int | None = None
    forced = gpu_layers is not None or cpu_moe is not None
    if not forced:
        for count in allowed:
            if check_count(estimate, count, usable):
                chosen = count
                break
    offload = None
    # One GPU with part in host memory; an SoC's host memory is the same memory.
    if chosen != 1 and excluded is None and 1 in counts and usable.max_devices is None:
        offload = offload_for(estimate, usable, gpu_layers=gpu_layers, cpu_moe=cpu_moe, host=host)
    at = chosen if chosen is not None else allowed[-1]
    per_gpu = estimate.per_gpu_gb(at)
    if chosen is None and offload is not None:
        per_gpu = offload.gpu_bytes / GB
    decode = None
    bandwidth = entry.bandwidth_gbs  # none published (announced): no bound, never 0
    inference = estimate.spec.workload is Workload.INFERENCE
    if chosen is not None and excluded is None and inference and bandwidth is not None:
        decode = decode_upper_bound(estimate, bandwidth, chosen)
    return GpuFit(
        gpu_id=entry.id,
        name=entry.name,
        memory_gb=entry.memory_gb,
        usable_gb=usable.usable_gb,
        usable_gib=usable.usable_bytes / GIB,
        usable_basis=usable.basis,
        max_devices=usable.max_devices,
        count=chosen,
        per_gpu_gb=per_gpu,
        headroom_gb=usable.usable_gb - per_gpu,
        decode_tokens_per_s_upper_bound=decode,
        excluded_reason=excluded,
        offload=offload,
    )


def offload_for(
    estimate: MemoryEstimate,
    usable: UsableMemory,
    *,
    gpu_layers: int | None = None,
    cpu_moe: int | None = None,
    host: HostMemory = DEFAULT_HOST,
) -> Offload | None:
    """llama.cpp's partial offload onto one GPU of ``usable`` memory (None: not even so)."""
    return plan_offload(
        estimate, usable.usable_bytes, gpu_layers=gpu_layers, cpu_moe=cpu_moe, host=host
    )


#: contexts are sized in whole blocks of this many tokens: llama.cpp allocates its KV
#: cache in cells of 256 tokens, and vLLM's blocks of 16 divide it
CONTEXT_STEP = 256

#: the estimate of one workload at a given sequence length (tokens)
EstimateAt = Callable[[int], MemoryEstimate]


def largest_context(
    estimate_at: EstimateAt, usable: UsableMemory, count: int, max_context: int
) -> int | None:
    """The longest sequence, up to ``max_context``, that ``count`` devices of ``usable``
    memory hold (:func:`check_count`): ``max_context`` itself or a whole number of
    :data:`CONTEXT_STEP` tokens; None when not even the shortest of those fits.

    Memory grows with the sequence (KV cache, activations), so a bisection finds it.
    """

    def holds(seq: int) -> bool:
        return check_count(estimate_at(seq), count, usable)

    if max_context < 1:
        return None
    if holds(max_context):
        return max_context
    if max_context <= CONTEXT_STEP or not holds(CONTEXT_STEP):
        return None
    # holds(low * STEP) is true; nothing above high * STEP (below max_context) is known to
    low, high = 1, (max_context - 1) // CONTEXT_STEP
    while low < high:
        middle = (low + high + 1) // 2
        if holds(middle * CONTEXT_STEP):
            low = middle
        else:
            high = middle - 1
    return low * CONTEXT_STEP


class ContextFit(BaseModel):
    """The fewest GPUs that hold a workload at all, and the longest context they hold."""

    model_config = ConfigDict(frozen=True)

    count: int
    context: int


def fit_longest_context(
    entry: CatalogEntry,
    estimate_at: EstimateAt,
    counts: Sequence[int],
    max_context: int,
    *,
    apple_wired_limit_mb: int | None = None,
) -> ContextFit | None:
    """The fewest of ``counts`` GPUs of ``entry`` that hold the workload at its shortest
    context, and the longest context (up to ``max_context``) those hold; None when no
    count does, or the GPU cannot run it (:func:`exclusion`)."""
    # a model may declare more context than an estimate accepts (Llama 4 Scout: 10,485,760)
    max_context = min(max_context, MAX_SEQ)
    shortest = estimate_at(min(CONTEXT_STEP, max_context))
    if exclusion(entry, shortest) is not None:
        return None
    usable = usable_for(entry, shortest, apple_wired_limit_mb=apple_wired_limit_mb)
    for count in sorted(set(counts)):
        if usable.max_devices is not None and count > usable.max_devices:
            break
        context = largest_context(estimate_at, usable, count, max_context)
        if context is not None:
            return ContextFit(count=count, context=context)
    return None


class GpuAnswer(BaseModel):
    """``fit --gpu``'s answer for one GPU: the fit at the asked sequence length, and the
    longest sequence the GPUs hold (at the count that holds the asked one, else at the
    fewest that hold the workload at all)."""

    model_config = ConfigDict(frozen=True)

    fit: GpuFit
    #: the sequence length the fit was checked at (None: the workload has none)
    seq: int | None
    #: the model's own context (None: no transformer shape)
    max_context: int | None
    #: None: no shape, or not even CONTEXT_STEP tokens fit on any count
    longest: ContextFit | None
    #: a training workload: the length is a training sequence's, not a context
    training: bool = False


def answer_for(
    entry: CatalogEntry,
    report: FitReport,
    estimate_at: EstimateAt,
    *,
    apple_wired_limit_mb: int | None = None,
) -> GpuAnswer:
    """Does ``report``'s workload fit ``entry``, on how many, and the longest context.

    Raises:
        ValueError: ``entry`` is not one of the GPUs ``report`` checked.
    """
    fit = next((result for result in report.results if result.gpu_id == entry.id), None)
    if fit is None:
        raise ValueError(f"{entry.id} is not in the fit report")
    shape = report.estimate.model.shape
    max_context = shape.context if shape is not None else None
    longest = None
    if max_context is not None and report.estimate.spec.seq is not None:
        counts = [fit.count] if fit.fits and fit.count is not None else list(report.counts)
        longest = fit_longest_context(
            entry, estimate_at, counts, max_context, apple_wired_limit_mb=apple_wired_limit_mb
        )
    return GpuAnswer(
        fit=fit,
        seq=report.estimate.spec.seq,
        max_context=max_context,
        longest=longest,
        training=report.estimate.spec.workload.is_training,
    )


def fit_across(
    entries: Iterable[CatalogEntry],
    estimate: MemoryEstimate,
    counts: Sequence[int] = GPU_COUNTS,
    *,
    apple_wired_limit_mb: int | None = None,
    gpu_layers: int | None = None,
    cpu_moe: int | None = None,
    host: HostMemory = DEFAULT_HOST,
) -> FitReport:
    """Check every GPU in ``entries`` against ``estimate``.

    ``apple_wired_limit_mb``: the ``iogpu.wired_limit_mb`` a Mac's GPU limit was raised
    to (None: macOS's default)."""
    ordered = sorted(set(counts))
    if not ordered or ordered[0] < 1:
        raise ValueError("counts must be positive")
    if estimate.fixed_gpus is not None:  # the figures are already per GPU for that count
        ordered = [estimate.fixed_gpus]
    return FitReport(
        estimate=estimate,
        results=tuple(
            fit_entry(
                entry,
                estimate,
                ordered,
                apple_wired_limit_mb=apple_wired_limit_mb,
                gpu_layers=gpu_layers,
                cpu_moe=cpu_moe,
                host=host,
            )
            for entry in entries
        ),
        counts=tuple(ordered),
    )


__all__ = [
    "BF16_SOURCE",
    "CONTEXT_STEP",
    "DECODE_LABEL",
    "DECODE_SOURCE",
    "GPU_COUNTS",
    "PARALLELISM_NOTE",
    "ContextFit",
    "EstimateAt",
    "FitReport",
    "GpuAnswer",
    "GpuFit",
    "answer_for",
    "bf16_supported",
    "check_count",
    "decode_upper_bound",
    "exclusion",
    "fit_across",
    "fit_entry",
    "fit_longest_context",
    "largest_context",
    "offload_for",
    "usable_for",
]
