"""The ``--emit`` document: a launch command sized to the chosen GPUs, the KV pool as
vLLM or SGLang would log it, the command that checks it, and notes on what it assumes.

``fit --emit`` and ``speed --emit`` read their flags into the keywords of
:func:`launch_document`; what cannot be printed is an :class:`EmitRefused`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from gpudesk.engines.launch import (
    COMMANDS,
    SOURCES,
    LaunchPlan,
    VllmEra,
    VllmKvPool,
    era_for_version,
    unprintable,
    verify_command,
    vllm_kv_pool,
)
from gpudesk.memory.sglang_pool import (
    SOURCES as SGLANG_SOURCES,
    SglangKvPool,
    predicted_sglang_pool,
)
from gpudesk.memory.usable import usable_memory
from gpudesk.terminal_text import scrub
from gpudesk.workload.errors import PlanningInputError

#: the shortest --max-model-len / --context-length a fitted context is cut to
VLLM_MIN_LEN = 256


class EmitRefused(PlanningInputError):
    """No launch command for this: no room for a KV cache, or a model path that a
    printed command cannot carry. The message names the engine (``--emit vllm: ...``)."""


def launch_document(
    *,
    engine: str,
    shape: Any,
    entry: Any,
    model_ref: str,
    tensor_parallel: int,
    weights_bytes: float,
    dtype: str,
    quant: str | None,
    kv_dtype: str | None,
    kv_dtype_bytes: float,
    context: int | None,
    max_num_seqs: int | None,
    utilisation: float,
    gpu_layers: int | None = None,
    cpu_moe: int = 0,
    vllm_version: str | None = None,
    context_fixed: bool = False,
) -> dict[str, Any]:
    """The ``emit`` document: command, KV pool (vLLM, SGLang), the check, and the working.

    ``vllm_version``: the vLLM release whose memory accounting the pool follows
    (:func:`gpudesk.engines.launch.era_for_version`); None: 0.21 or later.
    ``context_fixed``: the user chose ``context``, so a pool too small for one request
    of it is refused rather than the context cut to fit. The document's ``context`` is
    the tokens per request the command allows.

    Raises:
        EmitRefused: the GPUs leave no room for a KV cache (or, with ``context_fixed``,
            for one request of ``context``), ``model_ref`` holds a control character,
            or ``vllm_version`` is not a vLLM version.
    """
    usable = usable_memory(entry, "vllm")
    nvlink = bool(getattr(entry, "nvlink", False))
    length = context or shape.context
    notes: list[str] = []
    kv_pool: dict[str, Any] | None = None
    if engine == "vllm":
        era = _era(vllm_version)
        pool_for = partial(
            vllm_kv_pool,
            shape,
            weights_bytes,
            nvidia_smi_total_bytes=usable.runtime_total_bytes,
            tensor_parallel=tensor_parallel,
            utilisation=utilisation,
            kv_dtype_bytes=kv_dtype_bytes,
            gpu_name=entry.name,
            sampler_seqs=max_num_seqs,
            nvlink=nvlink,
            era=era,
        )
        pool, length = _vllm_pool(pool_for, engine, tensor_parallel, entry.id, length, notes)
        check_context(engine, context_fixed, context, length)
        kv_pool = _vllm_pool_json(pool, pool_for, tensor_parallel, nvlink, notes)
    elif engine == "sglang":
        sglang_for = partial(
            predicted_sglang_pool,
            shape,
            weights_bytes,
            nvidia_smi_total_bytes=usable.runtime_total_bytes,
            tensor_parallel=tensor_parallel,
            mem_fraction_static=utilisation,
            kv_dtype_bytes=kv_dtype_bytes,
        )
        sglang_pool, length = _sglang_pool(
            sglang_for, engine, tensor_parallel, entry.id, length, notes, nvlink=nvlink
        )
        check_context(engine, context_fixed, context, length)
        kv_pool = _sglang_pool_json(sglang_pool, usable.runtime_total_bytes)
    check_printable(engine, model_ref)
    plan = LaunchPlan(
        engine=engine,
        model_ref=model_ref,
        tensor_parallel=tensor_parallel,
        context=length,
        dtype=dtype,
        quant=quant,
        kv_dtype=kv_dtype,
        max_num_seqs=max_num_seqs,
        utilisation=utilisation,
        gpu_layers=shape.layers + 1 if gpu_layers is None else gpu_layers,
        layers=shape.layers,
        cpu_moe=cpu_moe,
    )
    document = _command_document(plan, entry.id, notes)
    document["context"] = length
    if kv_pool is not None:
        document["kv_pool"] = kv_pool
    return document


def _command_document(plan: LaunchPlan, gpu_id: str, notes: list[str]) -> dict[str, Any]:
    """The document's command, the check and the notes (the KV pool is added after)."""
    return {
        "engine": plan.engine,
        "gpu_id": gpu_id,
        "tensor_parallel": plan.tensor_parallel,
        "command": COMMANDS[plan.engine](plan),
        "check": verify_command(plan, gpu_id),
        "notes": notes,
    }


def _vllm_pool(
    pool_for: Callable[..., VllmKvPool],
    engine: str,
    tensor_parallel: int,
    gpu_id: str,
    length: int,
    notes: list[str],
) -> tuple[VllmKvPool, int]:
    """vLLM's pool at ``length``, or at the longest context that fits it (and a note)."""
    pool = pool_for(max_model_len=length)
    check_room(engine, tensor_parallel, gpu_id, pool.tokens, pool.working())
    if pool.tokens < length:
        fitted = fitted_length(pool.tokens)
        notes.append(
            f"the model's {length:,}-token context does not fit the {pool.tokens:,}-token "
            f"pool: vLLM would refuse to start, so --max-model-len is {fitted:,}"
        )
        length = fitted
        pool = pool_for(max_model_len=length)
    return pool, length


def _sglang_pool(
    sglang_for: Callable[..., SglangKvPool],
    engine: str,
    tensor_parallel: int,
    gpu_id: str,
    length: int,
    notes: list[str],
    *,
    nvlink: bool,
) -> tuple[SglangKvPool, int]:
    """SGLang's pool at ``length``, or at the longest context that fits it (and a note);
    with tensor parallelism over NVLink, a note on its all-reduce buffers."""
    sglang_pool = sglang_for(max_model_len=length)
    check_room(engine, tensor_parallel, gpu_id, sglang_pool.tokens, sglang_pool.working())
    if sglang_pool.tokens < length:
        fitted = fitted_length(sglang_pool.tokens)
        notes.append(
            f"the model's {length:,}-token context does not fit the "
            f"{sglang_pool.tokens:,}-token pool: one request that long could not be held, "
            f"so --context-length is {fitted:,}"
        )
        length = fitted
        sglang_pool = sglang_for(max_model_len=length)
    if tensor_parallel > 1 and nvlink:
        notes.append(
            "with tensor parallelism over NVLink SGLang's custom all-reduce buffers come "
            "out of the free memory before the weights load; no published log gave that "
            "figure, so the pool may be smaller than this"
        )
    return sglang_pool, length


def _vllm_pool_json(
    pool: VllmKvPool,
    pool_for: Callable[..., VllmKvPool],
    tensor_parallel: int,
    nvlink: bool,
    notes: list[str],
) -> dict[str, Any]:
    """vLLM's ``kv_pool``; the notes on vLLM 0.17-0.20 and tensor parallelism go to
    ``notes``."""
    pool_0_17 = pool_for(max_model_len=pool.max_model_len, era=VllmEra.V1_0_17)
    if pool.era is VllmEra.V1:
        notes.append(
            f"the pool is vLLM 0.21's and later (its CUDA graph estimate, "
            f"{pool.cuda_graph_bytes / 2**30:.2f} GiB, comes off the pool); vLLM 0.17-0.20 "
            f"would log {pool_0_17.tokens:,} tokens (--vllm-version names another release)"
        )
    else:
        notes.append(f"the pool follows the accounting of {pool.era.label}")
    if tensor_parallel > 1:
        link = "NVLink" if nvlink else "PCIe"
        notes.append(
            f"with tensor parallelism this is one clean GPU's pool ({link}: "
            f"{pool.non_torch_bytes / 2**30:.2f} GiB of NCCL/all-reduce and other non-torch "
            "memory per GPU) and vLLM logs the smallest rank's: a GPU that holds anything "
            "else (another process, a display) lowers every rank's pool"
        )
    return {
        "gpu_kv_cache_tokens": pool.tokens,
        "max_model_len": pool.max_model_len,
        "max_concurrency": round(pool.max_concurrency, 2),
        "available_kv_cache_gib": round(pool.kv_bytes / 2**30, 2),
        "total_gib": round(pool.total_bytes / 2**30, 2),
        "weights_gib": round(pool.weights_bytes / 2**30, 2),
        "peak_activation_gib": round(pool.activation_bytes / 2**30, 2),
        "non_torch_gib": round(pool.non_torch_bytes / 2**30, 2),
        "cuda_graph_gib": round(pool.cuda_graph_bytes / 2**30, 2),
        "vllm_versions": pool.era.label,
        "gpu_kv_cache_tokens_vllm_0_17_to_0_20": pool_0_17.tokens,
        "bytes_per_token": pool.bytes_per_token,
        "log_lines": pool.log_lines(),
        "working": pool.working(),
        "sources": list(SOURCES),
        "predicted_for": "vllm",
    }


def _sglang_pool_json(sglang_pool: SglangKvPool, runtime_total_bytes: float) -> dict[str, Any]:
    """SGLang's ``kv_pool``: the same keys as vLLM's; the terms SGLang does not have are
    null."""
    return {
        "gpu_kv_cache_tokens": sglang_pool.tokens,
        "max_model_len": sglang_pool.max_model_len,
        "max_concurrency": round(sglang_pool.max_concurrency, 2),
        "available_kv_cache_gib": round(sglang_pool.kv_bytes / 2**30, 2),
        "total_gib": round(runtime_total_bytes / 2**30, 2),
        "weights_gib": round(sglang_pool.weights_bytes / 2**30, 2),
        "peak_activation_gib": None,
        "non_torch_gib": None,
        "cuda_graph_gib": None,
        "vllm_versions": None,
        "gpu_kv_cache_tokens_vllm_0_17_to_0_20": None,
        "bytes_per_token": sglang_pool.bytes_per_token,
        "log_lines": sglang_pool.log_lines(),
        "working": sglang_pool.working(),
        "sources": list(SGLANG_SOURCES),
        "predicted_for": "sglang",
        "free_before_weights_gib": round(sglang_pool.free_at_start_bytes / 2**30, 2),
    }


def _era(vllm_version: str | None) -> VllmEra:
    """The accounting of ``vllm_version`` (None: the current one).

    Raises:
        EmitRefused: not a vLLM version.
    """
    if vllm_version is None:
        return VllmEra.V1
    try:
        return era_for_version(vllm_version)
    except ValueError as exc:
        raise EmitRefused(f"--emit vllm: --vllm-version {scrub(str(exc))}") from exc


def check_printable(engine: str, model_ref: str) -> None:
    """Refuse a model path that the printed command or Modelfile could not carry as printed.

    Raises:
        EmitRefused: ``model_ref`` holds a control character.
    """
    bad = unprintable(model_ref)
    if bad is None:
        return
    where = (
        "a Modelfile line (Ollama would read what follows as instructions of its own)"
        if engine == "ollama"
        else "a command printed to paste on one line"
    )
    raise EmitRefused(
        f"--emit {engine}: the model path '{scrub(model_ref)}' holds a control character "
        f"({bad}), which {where} cannot carry; rename it"
    )


def check_context(engine: str, context_fixed: bool, asked: int | None, length: int) -> None:
    """Refuse a context the user chose that the engine's pool cut.

    Raises:
        EmitRefused: ``context_fixed`` and ``length`` is below ``asked``.
    """
    if context_fixed and asked is not None and length < asked:
        raise EmitRefused(
            f"--emit {engine}: one request of --seq {asked:,} tokens does not fit the KV "
            f"pool {engine} would have; at most {length:,} does (give --seq {length} or "
            "leave --seq out)"
        )


def check_room(engine: str, tensor_parallel: int, gpu_id: str, tokens: int, working: str) -> None:
    """Refuse a pool of no tokens.

    Raises:
        EmitRefused: ``tokens`` is 0.
    """
    if tokens == 0:
        raise EmitRefused(
            f"--emit {engine}: {tensor_parallel}× {gpu_id} leaves no room for a KV cache "
            f"({working}); use more GPUs or a smaller format"
        )


def fitted_length(tokens: int) -> int:
    """The context a pool of ``tokens`` holds: whole KiB-tokens, at least VLLM_MIN_LEN."""
    return max(VLLM_MIN_LEN, tokens // 1024 * 1024 or tokens)
