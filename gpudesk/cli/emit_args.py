"""``--emit vllm|sglang|llama.cpp|ollama`` for ``fit`` and ``speed``: a launch command
sized to the chosen GPUs, the KV pool as vLLM or SGLang would log it, and the command
that checks it (:mod:`gpudesk.engines.launch`, :mod:`gpudesk.engines.sglang_pool`)."""

from __future__ import annotations

import argparse
import re
from typing import Any

from gpudesk.cli.common import EXIT_USAGE, CliError

ENGINES = ("vllm", "sglang", "llama.cpp", "ollama")


def add_emit_arguments(parser: argparse.ArgumentParser, *, with_gpu: bool) -> None:
    group = parser.add_argument_group("engine settings")
    group.add_argument(
        "--emit",
        choices=ENGINES,
        help="print a launch command sized to the GPU (--gpu) and, for vLLM and SGLang, the "
        "KV pool it will log",
    )
    if with_gpu:
        group.add_argument(
            "--gpu", metavar="NAME", help="with --emit: the catalog GPU to size the command for"
        )
    group.add_argument(
        "--gpu-memory-utilization",
        dest="emit_utilisation",
        type=float,
        metavar="U",
        help="with --emit: vLLM's share of GPU memory / SGLang's --mem-fraction-static "
        "(default 0.9)",
    )


def _model_ref(model: Any, model_file: Any, args: argparse.Namespace, engine: str) -> str:
    if model_file is not None:
        return str(model_file.path)
    if getattr(args, "config", None) is not None:
        return str(args.config)
    for source in getattr(model, "sources", ()) or ():
        found = re.match(r"https://huggingface\.co/([^/\s]+/[^/\s]+)", source)
        if found:
            ref = found.group(1)
            return f"{ref.split('/')[-1]}.gguf" if engine in ("llama.cpp", "ollama") else ref
    return "MODEL"


def _utilisation(args: argparse.Namespace) -> float:
    value = getattr(args, "emit_utilisation", None)
    if value is None:
        return 0.9
    if not 0.05 <= value <= 1.0:
        raise CliError("--gpu-memory-utilization must be from 0.05 to 1", EXIT_USAGE)
    return float(value)


def emit_for(
    *,
    engine: str,
    shape: Any,
    model: Any,
    model_file: Any,
    args: argparse.Namespace,
    entry: Any,
    tensor_parallel: int,
    weights_bytes: float,
    dtype: str,
    quant: str | None,
    kv_dtype: str | None,
    kv_dtype_bytes: float,
    context: int | None,
    max_num_seqs: int | None,
    gpu_layers: int | None = None,
    cpu_moe: int = 0,
) -> dict[str, Any]:
    """The ``emit`` document: command, KV pool (vLLM), the check, and the working."""
    from gpudesk.engines.launch import (
        COMMANDS,
        SOURCES,
        LaunchPlan,
        VllmEra,
        VllmKvPool,
        verify_command,
        vllm_kv_pool,
    )
    from gpudesk.engines.sglang_pool import SglangKvPool, predicted_sglang_pool
    from gpudesk.memory.usable import usable_memory

    utilisation = _utilisation(args)
    usable = usable_memory(entry, "vllm")
    length = context or shape.context
    notes: list[str] = []
    pool = None
    sglang_pool = None
    nvlink = bool(getattr(entry, "nvlink", False))
    if engine == "vllm":

        def pool_for(max_model_len: int, era: VllmEra = VllmEra.V1) -> VllmKvPool:
            return vllm_kv_pool(
                shape,
                weights_bytes,
                nvidia_smi_total_bytes=usable.runtime_total_bytes,
                tensor_parallel=tensor_parallel,
                utilisation=utilisation,
                max_model_len=max_model_len,
                kv_dtype_bytes=kv_dtype_bytes,
                gpu_name=entry.name,
                sampler_seqs=max_num_seqs,
                nvlink=nvlink,
                era=era,
            )

        pool = pool_for(length)
        _check_room(engine, tensor_parallel, entry.id, pool.tokens, pool.working())
        if pool.tokens < length:
            fitted = _fitted_length(pool.tokens)
            notes.append(
                f"the model's {length:,}-token context does not fit the {pool.tokens:,}-token "
                f"pool: vLLM would refuse to start, so --max-model-len is {fitted:,}"
            )
            length = fitted
            pool = pool_for(length)
    elif engine == "sglang":

        def sglang_for(max_model_len: int) -> SglangKvPool:
            return predicted_sglang_pool(
                shape,
                weights_bytes,
                nvidia_smi_total_bytes=usable.runtime_total_bytes,
                tensor_parallel=tensor_parallel,
                mem_fraction_static=utilisation,
                kv_dtype_bytes=kv_dtype_bytes,
                max_model_len=max_model_len,
            )

        sglang_pool = sglang_for(length)
        _check_room(engine, tensor_parallel, entry.id, sglang_pool.tokens, sglang_pool.working())
        if sglang_pool.tokens < length:
            fitted = _fitted_length(sglang_pool.tokens)
            notes.append(
                f"the model's {length:,}-token context does not fit the "
                f"{sglang_pool.tokens:,}-token pool: one request that long could not be held, "
                f"so --context-length is {fitted:,}"
            )
            length = fitted
            sglang_pool = sglang_for(length)
        if tensor_parallel > 1 and nvlink:
            notes.append(
                "with tensor parallelism over NVLink SGLang's custom all-reduce buffers come "
                "out of the free memory before the weights load; no published log gave that "
                "figure, so the pool may be smaller than this"
            )
    pool_0_17 = None
    if pool is not None and engine == "vllm":
        pool_0_17 = pool_for(pool.max_model_len, VllmEra.V1_0_17)
        notes.append(
            f"the pool is vLLM 0.21's and later (its CUDA graph estimate, "
            f"{pool.cuda_graph_bytes / 2**30:.2f} GiB, comes off the pool); vLLM 0.17-0.20 "
            f"would log {pool_0_17.tokens:,} tokens"
        )
    if pool is not None and tensor_parallel > 1:
        link = "NVLink" if nvlink else "PCIe"
        notes.append(
            f"with tensor parallelism this is one clean GPU's pool ({link}: "
            f"{pool.non_torch_bytes / 2**30:.2f} GiB of NCCL/all-reduce and other non-torch "
            "memory per GPU) and vLLM logs the smallest rank's: a GPU that holds anything "
            "else (another process, a display) lowers every rank's pool"
        )
    model_ref = _model_ref(model, model_file, args, engine)
    _check_printable(engine, model_ref)
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
    document: dict[str, Any] = {
        "engine": engine,
        "gpu_id": entry.id,
        "tensor_parallel": tensor_parallel,
        "command": COMMANDS[engine](plan),
        "check": verify_command(plan, entry.id),
        "notes": notes,
    }
    if pool is not None:
        document["kv_pool"] = {
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
            "gpu_kv_cache_tokens_vllm_0_17_to_0_20": (
                pool_0_17.tokens if pool_0_17 is not None else None
            ),
            "bytes_per_token": pool.bytes_per_token,
            "log_lines": pool.log_lines(),
            "working": pool.working(),
            "sources": list(SOURCES),
            "predicted_for": "vllm",
        }
    if sglang_pool is not None:
        from gpudesk.engines.sglang_pool import SOURCES as SGLANG_SOURCES

        # the same keys as vLLM's pool; the terms SGLang does not have are null
        document["kv_pool"] = {
            "gpu_kv_cache_tokens": sglang_pool.tokens,
            "max_model_len": sglang_pool.max_model_len,
            "max_concurrency": round(sglang_pool.max_concurrency, 2),
            "available_kv_cache_gib": round(sglang_pool.kv_bytes / 2**30, 2),
            "total_gib": round(usable.runtime_total_bytes / 2**30, 2),
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
    return document


def _check_printable(engine: str, model_ref: str) -> None:
    """Refuse a model path that the printed command or Modelfile could not carry as printed."""
    from gpudesk.engines.launch import unprintable
    from gpudesk.terminal_text import scrub

    bad = unprintable(model_ref)
    if bad is None:
        return
    where = (
        "a Modelfile line (Ollama would read what follows as instructions of its own)"
        if engine == "ollama"
        else "a command printed to paste on one line"
    )
    raise CliError(
        f"--emit {engine}: the model path '{scrub(model_ref)}' holds a control character "
        f"({bad}), which {where} cannot carry; rename it",
        EXIT_USAGE,
    )


def _check_room(engine: str, tensor_parallel: int, gpu_id: str, tokens: int, working: str) -> None:
    if tokens == 0:
        raise CliError(
            f"--emit {engine}: {tensor_parallel}× {gpu_id} leaves no room for a KV cache "
            f"({working}); use more GPUs or a smaller format",
            EXIT_USAGE,
        )


def _fitted_length(tokens: int) -> int:
    return max(VLLM_MIN_LEN, tokens // 1024 * 1024 or tokens)


VLLM_MIN_LEN = 256


def emit_text(document: dict[str, Any]) -> str:
    import textwrap

    lines = [
        "",
        f"Launch ({document['engine']}, {document['tensor_parallel']}× {document['gpu_id']}):",
    ]
    lines.append("  " + document["command"].replace("\n", "\n  "))
    pool = document.get("kv_pool")
    if pool is not None:
        lines.append("")
        engine_name = {"vllm": "vLLM", "sglang": "SGLang"}.get(
            pool.get("predicted_for", "vllm"), "vLLM"
        )
        lines.append(f"KV pool as {engine_name} will log it (predicted, per GPU):")
        lines.extend(f"  {line}" for line in pool["log_lines"])
        lines.append(
            textwrap.fill(pool["working"], 100, initial_indent="  ", subsequent_indent="  ")
        )
    for note in document["notes"]:
        lines.append(
            textwrap.fill(f"Note: {note}", 100, initial_indent="  ", subsequent_indent="  ")
        )
    lines.append("")
    # Commands are never wrapped: a line broken at a space would run its first half alone.
    checks = document["check"].split("\n")
    if len(checks) > 1:
        lines.append("Check it (the second line in another shell, once the server is up):")
    else:
        lines.append("Check it:")
    lines.extend(f"  {command}" for command in checks)
    return "\n".join(lines)


# -- fit ----------------------------------------------------------------------------------


def fit_emit(
    args: argparse.Namespace, report: Any, model_file: Any, catalog: Any
) -> dict[str, Any] | None:
    """``fit --emit``: sized from the fit report's smallest count of ``--gpu`` that holds."""
    if getattr(args, "emit", None) is None:
        return None
    from gpudesk.catalog.query import NameLookupError, find_entry
    from gpudesk.memory.breakdown import PartKey

    if args.gpu is None:
        raise CliError("--emit needs --gpu NAME: the GPU to size the command for", EXIT_USAGE)
    try:
        entry = find_entry(catalog.entries, args.gpu)
    except NameLookupError as exc:
        raise CliError(f"--gpu: {exc}", EXIT_USAGE) from exc
    estimate = report.estimate
    shape = estimate.model.shape
    if shape is None or estimate.spec.workload.value != "inference":
        raise CliError("--emit needs an inference workload of a transformer", EXIT_USAGE)
    counts = sorted(r.count for r in report.fits if r.gpu_id == entry.id)
    offload = next(
        (
            r.offload
            for r in getattr(report, "results", ())
            if r.gpu_id == entry.id and getattr(r, "offload", None) is not None
        ),
        None,
    )
    gpu_layers: int | None = None
    cpu_moe = 0
    if estimate.spec.tensor_parallel > 1:
        tp = estimate.spec.tensor_parallel
    elif counts:
        tp = counts[0]
    elif offload is not None and args.emit in ("llama.cpp", "ollama"):
        tp, gpu_layers, cpu_moe = 1, offload.gpu_layers, offload.cpu_moe
    else:
        raise CliError(
            f"--emit: {entry.id} does not hold this workload on up to {report.counts[-1]} GPUs",
            EXIT_USAGE,
        )
    weights = estimate.part(PartKey.WEIGHTS)
    weights_bytes = (weights.gb + weights.host_gb) * 1e9 * estimate.spec.tensor_parallel
    spec = estimate.spec
    quant = spec.quant.value if spec.quant is not None else None
    return emit_for(
        engine=args.emit,
        shape=shape,
        model=estimate.model,
        model_file=model_file,
        args=args,
        entry=entry,
        tensor_parallel=tp,
        weights_bytes=weights_bytes,
        dtype=spec.dtype.value,
        quant=quant,
        kv_dtype=spec.kv_dtype.value if spec.kv_dtype is not None else None,
        kv_dtype_bytes=spec.kv_dtype.bytes if spec.kv_dtype is not None else 2.0,
        context=args.seq,
        max_num_seqs=spec.concurrency,
        gpu_layers=gpu_layers,
        cpu_moe=cpu_moe,
    )


# -- speed --------------------------------------------------------------------------------


def shape_from_args(args: argparse.Namespace) -> Any:
    """The model shape ``speed``'s flags name (file, preset, config or parameter count)."""
    model_file = getattr(args, "model_file", None)
    if model_file is not None:
        return model_file.shape
    from gpudesk.memory.breakdown import parse_param_count
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.architecture import assumed_shape, load_hf_config

    if args.model is not None:
        return shape_for(args.model)
    if args.config is not None:
        return load_hf_config(args.config)
    return assumed_shape(parse_param_count(args.params))[0]


def speed_emit(
    args: argparse.Namespace, request: Any, results: list[Any], catalog: Any
) -> dict[str, Any] | None:
    """``speed --emit``: sized for the first result's GPU and count."""
    if getattr(args, "emit", None) is None:
        return None
    if not results:
        raise CliError("--emit: no GPU holds this workload", EXIT_USAGE)
    from gpudesk.workload.quant import weight_bytes

    first = results[0]
    entry = next((e for e in catalog.entries if e.id == first.gpu_id), None)
    if entry is None:
        raise CliError(f"--emit: {first.gpu_id} is not a catalog GPU", EXIT_USAGE)
    shape = shape_from_args(args)
    model_file = getattr(args, "model_file", None)
    if model_file is not None:
        weights = float(model_file.tensor_bytes)
    else:
        weights = float(weight_bytes(shape, request.quant).in_memory_bytes)
    kv = str(getattr(request.kv_quant, "value", request.kv_quant))
    kv_bytes = {"fp16": 2.0, "bf16": 2.0, "fp32": 4.0, "fp8": 1.0, "q8_0": 1.0625, "q4_0": 0.5625}
    model = None
    if args.model is not None:
        from gpudesk.workload.presets import find_preset

        try:
            model = find_preset(args.model)
        except ValueError:
            model = None
    quant = request.quant.value
    context = None
    if request.seq_in or request.seq_out:
        context = int((request.seq_in or 0) + (request.seq_out or 0)) or None
    return emit_for(
        engine=args.emit,
        shape=shape,
        model=model,
        model_file=model_file,
        args=args,
        entry=entry,
        tensor_parallel=first.count,
        weights_bytes=weights,
        dtype=quant if quant in ("bf16", "fp16", "fp32") else "bf16",
        quant=quant,
        kv_dtype="fp8" if kv in ("fp8", "q8_0") else kv,
        kv_dtype_bytes=kv_bytes.get(kv, 2.0),
        context=context,
        max_num_seqs=getattr(request, "concurrency", None),
    )
