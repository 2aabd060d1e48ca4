"""Does a speed request fit: the memory model of ``gpudesk fit``, asked for a speed request.

``speed`` never keeps a memory model of its own. :func:`memory_spec` states a
:class:`SpeedRequest` as the :class:`WorkloadSpec` ``fit`` would be given for it,
:func:`memory_estimate` runs :func:`gpudesk.memory.breakdown.estimate_memory` on it, and
:func:`holds_at` asks :func:`gpudesk.memory.fit.check_count` against
:func:`gpudesk.memory.usable.usable_memory`. So a GPU x count holds a workload in
``speed`` exactly when it does in ``fit``.

The workload each mode needs memory for:

- **decode**: ``batch`` sequences of ``seq_in + seq_out`` tokens.
- **prefill**: ``batch`` prompts of ``seq_in`` tokens (and the ``seq_out`` tokens after).
- **serve**: one sequence of ``seq_in + seq_out`` tokens: more only fill the KV pool
  (:func:`kv_pool_bytes`), which sets how many decode together. For vLLM the pool is
  vLLM's own (:func:`vllm_instance_pool`, :mod:`gpudesk.memory.vllm_pool`: the arithmetic
  ``--emit vllm`` prints), at any ``gpu_memory_utilization`` and tensor-parallel size;
  for SGLang SGLang's own (:func:`sglang_instance_pool`, the arithmetic ``--emit sglang``
  prints) at its default ``mem_fraction_static`` for the GPU. SGLang's other memory
  (weights, CUDA context and graphs) is ``fit``'s vLLM model: both run PyTorch's CUDA
  or ROCm build with CUDA graphs, and ``fit`` has no SGLang engine of its own.
- **train**: the method (full, LoRA, QLoRA) at micro-batch ``batch`` and sequence
  ``seq_in``, with activation checkpointing when recomputation is full.
"""

from __future__ import annotations

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.memory.breakdown import (
    DType,
    Engine,
    KvDType,
    MemoryEstimate,
    MemoryPart,
    PartKey,
    Workload,
    WorkloadSpec,
    estimate_memory,
)
from gpudesk.memory.fit import check_count, exclusion, offload_for, usable_for
from gpudesk.memory.offload import DEFAULT_HOST, HostMemory, Offload
from gpudesk.memory.sglang_pool import SglangKvPool, predicted_sglang_pool
from gpudesk.memory.vllm_pool import (
    DEFAULT_UTILISATION,
    VllmEra,
    VllmKvPool,
    era_for_version,
    kv_bytes_per_token,
    vllm_kv_pool,
)
from gpudesk.speed.data import Checkpointing
from gpudesk.speed.estimate import Engine as SpeedEngine, KvFormat, Mode, SpeedRequest, TrainMethod
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.under_load import sglang_mem_fraction_static
from gpudesk.units import GB, gib_text
from gpudesk.workload.presets import architecture_from_shape
from gpudesk.workload.quant import QuantFormat, weight_bytes

#: TensorRT-LLM sizes its KV pool as kv_cache_free_gpu_mem_fraction (0.9) of what is free
TRTLLM_KV_FREE_FRACTION = 0.9

_KV_DTYPES = {
    KvFormat.FP32: KvDType.FP32,
    KvFormat.FP16: KvDType.FP16,
    KvFormat.BF16: KvDType.BF16,
    KvFormat.FP8: KvDType.FP8,
    KvFormat.Q8_0: KvDType.INT8,
    KvFormat.Q4_0: KvDType.INT4,
}


def memory_spec(request: SpeedRequest) -> WorkloadSpec:
    """The ``fit`` workload that ``request`` needs memory for (see the module docstring)."""
    request = request.resolved()
    assert request.seq_in is not None and request.seq_out is not None
    quant = request.quant
    dtype = {QuantFormat.BF16: DType.BF16, QuantFormat.FP32: DType.FP32}.get(quant, DType.FP16)
    if request.mode is Mode.TRAIN:
        workload = {
            TrainMethod.FULL: Workload.TRAIN,
            TrainMethod.LORA: Workload.LORA,
            TrainMethod.QLORA: Workload.QLORA,
        }[request.train_method]
        plain = quant in (QuantFormat.BF16, QuantFormat.FP16, QuantFormat.FP32)
        return WorkloadSpec(
            workload=workload,
            dtype=dtype if plain else DType.BF16,
            batch=request.batch,
            seq=request.seq_in,
            checkpointing=request.checkpointing is Checkpointing.FULL,
            quant=None if workload is Workload.QLORA or not plain else quant,
        )
    batch = 1 if request.mode is Mode.SERVE else request.batch
    return WorkloadSpec(
        workload=Workload.INFERENCE,
        dtype=dtype,
        batch=batch,
        seq=request.seq_in + request.seq_out,
        kv_dtype=_KV_DTYPES[request.kv_quant],
        quant=quant,
        engine=_MEMORY_ENGINE.get(request.engine) or Engine(request.engine.value),
    )


#: Speed engines whose memory ``fit`` models as another engine's (see the module)
_MEMORY_ENGINE = {SpeedEngine.SGLANG: Engine.VLLM}


def memory_estimate(costs: ModelCosts, request: SpeedRequest) -> MemoryEstimate | None:
    """``fit``'s memory estimate for ``request`` on the model ``costs`` describe.

    None when ``costs`` carries no shape (a training-only row of the measurement file).
    Weights given exactly (a model file's bytes in ``costs.in_memory_bytes``) replace the
    format's computed bytes.

    Raises:
        PlanningInputError: a request ``fit`` would refuse (the message names the field).
    """
    shape = costs.shape
    if shape is None:
        return None
    model = architecture_from_shape(shape, "model", "the speed request's shape")
    estimate = estimate_memory(model, memory_spec(request))
    if estimate.spec.workload is not Workload.INFERENCE:
        return estimate
    assert estimate.spec.quant is not None
    gguf = estimate.spec.engine is Engine.LLAMA_CPP
    computed = weight_bytes(shape, estimate.spec.quant, gguf=gguf).in_memory_bytes
    if costs.in_memory_bytes <= 0 or abs(costs.in_memory_bytes - computed) < 1:
        return estimate
    weights = estimate.part(PartKey.WEIGHTS)
    held = costs.in_memory_bytes - weights.host_gb * 1e9
    part = MemoryPart(
        key=PartKey.WEIGHTS,
        gb=held / 1e9,
        formula=(
            f"{costs.in_memory_bytes:,.0f} bytes of weights as given = {gib_text(held / GB, 2)}"
        ),
        source=weights.source,
        host_gb=weights.host_gb,
    )
    parts = tuple(part if item.key is PartKey.WEIGHTS else item for item in estimate.parts)
    return estimate.model_copy(update={"parts": parts})


def holds_at(
    entry: CatalogEntry,
    estimate: MemoryEstimate | None,
    count: int,
    *,
    apple_wired_limit_mb: int | None = None,
) -> bool:
    """Whether ``count`` of ``entry`` hold ``estimate``: ``fit``'s own test.

    A GPU ``fit`` excludes (bf16 on a GPU without it) never holds. Without an estimate
    (no shape) every count holds: nothing is known to be too big.
    """
    if estimate is None:
        return True
    if exclusion(entry, estimate) is not None:
        return False
    usable = usable_for(entry, estimate, apple_wired_limit_mb=apple_wired_limit_mb)
    return check_count(estimate, count, usable)


def kv_pool_bytes(
    entry: CatalogEntry,
    estimate: MemoryEstimate,
    count: int,
    *,
    apple_wired_limit_mb: int | None = None,
    gpu_memory_utilization: float | None = None,
    max_num_batched_tokens: int | None = None,
    tp: int | None = None,
    max_num_seqs: int | None = None,
    vllm_version: str | None = None,
    engine: SpeedEngine | None = None,
) -> float:
    """Bytes of KV cache that ``count`` GPUs hold together, all instances summed.

    Not per GPU and not per instance: the bytes are counted in the model's own K and V
    bytes per token (every layer, every KV head), so ``kv_pool_bytes / model bytes per
    token`` is the tokens the ``count`` GPUs hold together. One instance of ``tp`` GPUs
    holds ``kv_pool_bytes / (count // tp)`` of them, that is
    ``kv_pool_bytes / (count // tp) / (16 x model bytes per token)`` vLLM blocks of 16
    tokens (:func:`vllm_instance_pool` gives an instance's ``.tokens`` and ``.blocks``
    directly). With TP each GPU holds its share of the KV heads of the same tokens.

    vLLM (``estimate``'s engine): each instance is ``tp`` GPUs (default: all ``count``,
    one instance), sized by vLLM's own accounting (:func:`vllm_instance_pool`, the
    arithmetic ``--emit vllm`` prints) at ``gpu_memory_utilization`` (default 0.9), its
    profiling pass over ``max_num_batched_tokens`` (default: the spec's
    ``prefill_chunk``, else ``vllm serve``'s for the GPU) and ``max_num_seqs`` requests
    (default: ``vllm serve``'s for the GPU), as ``vllm_version`` does it (default: 0.21
    or later). Other engines: each GPU's usable memory less what the workload needs
    besides the KV cache (weights, activations, CUDA context and graphs,
    fragmentation), times ``count``; TensorRT-LLM takes 0.9 of what is left
    (kv_cache_free_gpu_mem_fraction).

    SGLang (``engine``; its memory spec says vLLM): each instance's pool as SGLang sizes
    it (:func:`sglang_instance_pool`), ``gpu_memory_utilization`` standing for
    ``--mem-fraction-static`` (default: SGLang's for the GPU and layout).

    Raises:
        ValueError: ``tp`` does not divide ``count``, or ``vllm_version`` is not one.
    """
    if engine is SpeedEngine.SGLANG and estimate.model.shape is not None:
        per_instance = tp or count
        if per_instance < 1 or count % per_instance:
            raise ValueError(f"tp {per_instance} does not divide {count} GPUs")
        sglang = sglang_instance_pool(
            entry,
            estimate,
            tp=per_instance,
            apple_wired_limit_mb=apple_wired_limit_mb,
            mem_fraction_static=gpu_memory_utilization,
            chunked_prefill_size=max_num_batched_tokens,
        )
        assert estimate.spec.kv_dtype is not None
        per_token = kv_bytes_per_token(estimate.model.shape, 1, estimate.spec.kv_dtype.bytes)
        return float(sglang.tokens * per_token * (count // per_instance))
    if estimate.spec.engine is Engine.VLLM and estimate.model.shape is not None:
        per_instance = tp or count
        if per_instance < 1 or count % per_instance:
            raise ValueError(f"tp {per_instance} does not divide {count} GPUs")
        pool = vllm_instance_pool(
            entry,
            estimate,
            tp=per_instance,
            apple_wired_limit_mb=apple_wired_limit_mb,
            gpu_memory_utilization=gpu_memory_utilization,
            max_num_batched_tokens=max_num_batched_tokens,
            max_num_seqs=max_num_seqs,
            vllm_version=vllm_version,
        )
        assert estimate.spec.kv_dtype is not None
        model_bytes_per_token = kv_bytes_per_token(
            estimate.model.shape, 1, estimate.spec.kv_dtype.bytes
        )
        return float(pool.tokens * model_bytes_per_token * (count // per_instance))
    usable = usable_for(entry, estimate, apple_wired_limit_mb=apple_wired_limit_mb)
    free = usable.usable_bytes - estimate.per_gpu_gb(count, kv_cache=False) * 1e9
    if estimate.spec.engine is Engine.TENSORRT_LLM:
        free *= TRTLLM_KV_FREE_FRACTION
    return max(0.0, free) * count


def vllm_instance_pool(
    entry: CatalogEntry,
    estimate: MemoryEstimate,
    *,
    tp: int = 1,
    apple_wired_limit_mb: int | None = None,
    gpu_memory_utilization: float | None = None,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    vllm_version: str | None = None,
) -> VllmKvPool:
    """The KV pool of one vLLM instance over ``tp`` of ``entry``, as vLLM would log it.

    ``.tokens`` is the instance's "GPU KV cache size" and ``.blocks`` its 16-token
    blocks; ``.kv_bytes`` and ``.bytes_per_token`` are per GPU. The same arithmetic as
    ``--emit vllm`` (:func:`gpudesk.memory.vllm_pool.vllm_kv_pool`); the defaults as
    :func:`kv_pool_bytes` says.

    Raises:
        ValueError: ``estimate`` has no transformer shape, or ``vllm_version`` is not a
            vLLM version.
    """
    shape = estimate.model.shape
    if shape is None or estimate.spec.kv_dtype is None:
        raise ValueError(f"{estimate.model.name} has no KV cache for vLLM to pool")
    usable = usable_for(entry, estimate, apple_wired_limit_mb=apple_wired_limit_mb)
    weights_gb = estimate.part(PartKey.WEIGHTS).gb * (estimate.fixed_gpus or 1)
    era = VllmEra.V1 if vllm_version is None else era_for_version(vllm_version)
    return vllm_kv_pool(
        shape,
        weights_gb * 1e9,
        nvidia_smi_total_bytes=usable.runtime_total_bytes,
        tensor_parallel=tp,
        utilisation=gpu_memory_utilization or DEFAULT_UTILISATION,
        max_model_len=estimate.spec.seq,
        kv_dtype_bytes=estimate.spec.kv_dtype.bytes,
        profile_tokens=max_num_batched_tokens or estimate.spec.prefill_chunk,
        gpu_name=entry.name,
        sampler_seqs=max_num_seqs,
        nvlink=bool(getattr(entry, "nvlink", False)),
        era=era,
    )


def sglang_instance_pool(
    entry: CatalogEntry,
    estimate: MemoryEstimate,
    *,
    tp: int = 1,
    apple_wired_limit_mb: int | None = None,
    mem_fraction_static: float | None = None,
    chunked_prefill_size: int | None = None,
) -> SglangKvPool:
    """The KV pool of one SGLang instance over ``tp`` of ``entry``, as SGLang would log it
    (``.tokens`` is its ``max_total_num_tokens``): the arithmetic ``--emit sglang`` prints
    (:func:`gpudesk.memory.sglang_pool.predicted_sglang_pool`) at
    ``mem_fraction_static`` (default: SGLang's own for the GPU's memory, ``tp`` and
    ``chunked_prefill_size``, :func:`gpudesk.speed.under_load.sglang_mem_fraction_static`).

    Raises:
        ValueError: ``estimate`` has no transformer shape.
    """
    shape = estimate.model.shape
    if shape is None or estimate.spec.kv_dtype is None or estimate.spec.seq is None:
        raise ValueError(f"{estimate.model.name} has no KV cache for SGLang to pool")
    usable = usable_for(entry, estimate, apple_wired_limit_mb=apple_wired_limit_mb)
    weights_gb = estimate.part(PartKey.WEIGHTS).gb * (estimate.fixed_gpus or 1)
    fraction = mem_fraction_static or sglang_mem_fraction_static(
        usable.runtime_total_bytes / 2**30, tp=tp, chunked_prefill_size=chunked_prefill_size
    )
    return predicted_sglang_pool(
        shape,
        weights_gb * 1e9,
        nvidia_smi_total_bytes=usable.runtime_total_bytes,
        tensor_parallel=tp,
        mem_fraction_static=fraction,
        kv_dtype_bytes=estimate.spec.kv_dtype.bytes,
        max_model_len=estimate.spec.seq,
    )


def need_words(
    entry: CatalogEntry,
    estimate: MemoryEstimate,
    count: int,
    *,
    apple_wired_limit_mb: int | None = None,
) -> str:
    """ "needs 17.5 GiB per GPU, each may use 16.0 GiB (16 GB as sold = 16 GiB ...)", in
    GiB like ``fit`` and the planner's own words."""
    usable = usable_for(entry, estimate, apple_wired_limit_mb=apple_wired_limit_mb)
    if usable.max_devices is not None and count > usable.max_devices:
        return f"one machine has {usable.max_devices} of it (an SoC), not {count}"
    reason = exclusion(entry, estimate)
    if reason is not None:
        return reason
    return (
        f"the workload needs {gib_text(estimate.per_gpu_gb(count))} per GPU, each may use "
        f"{gib_text(usable.usable_gb)} ({usable.basis})"
    )


def offload_at(
    entry: CatalogEntry,
    estimate: MemoryEstimate | None,
    request: SpeedRequest,
    *,
    apple_wired_limit_mb: int | None = None,
    host: HostMemory = DEFAULT_HOST,
) -> Offload | None:
    """llama.cpp decode on one ``entry`` with part of the model in host memory, as
    ``fit`` plans it (the request's ``gpu_layers`` / ``cpu_moe`` when given); None when
    it cannot (another engine or mode, an SoC, a dtype the GPU lacks, still too big)."""
    if estimate is None or request.mode is not Mode.DECODE:
        return None
    if exclusion(entry, estimate) is not None:
        return None
    usable = usable_for(entry, estimate, apple_wired_limit_mb=apple_wired_limit_mb)
    if usable.max_devices is not None:
        return None
    return offload_for(
        estimate, usable, gpu_layers=request.gpu_layers, cpu_moe=request.cpu_moe, host=host
    )
