"""``--emit vllm|sglang|llama.cpp|ollama`` for ``fit`` and ``speed``: the flags read into
:func:`gpudesk.engines.emit.launch_document` (a launch command sized to the chosen GPUs,
the KV pool as vLLM or SGLang would log it, and the command that checks it), and its
text."""

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
    group.add_argument(
        "--vllm-version",
        metavar="X.Y",
        help="with --emit vllm: the vLLM release whose memory accounting the KV pool "
        "follows, e.g. 0.10.2 (the profiler changed between releases; default 0.21 or later)",
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
    """The ``emit`` document (:func:`gpudesk.engines.emit.launch_document`) for the
    flags' utilisation and model.

    Raises:
        CliError: a bad ``--gpu-memory-utilization``, or no command for this (exit 2).
    """
    from gpudesk.engines.emit import EmitRefused, launch_document

    utilisation = _utilisation(args)
    try:
        return launch_document(
            engine=engine,
            shape=shape,
            entry=entry,
            model_ref=_model_ref(model, model_file, args, engine),
            tensor_parallel=tensor_parallel,
            weights_bytes=weights_bytes,
            dtype=dtype,
            quant=quant,
            kv_dtype=kv_dtype,
            kv_dtype_bytes=kv_dtype_bytes,
            context=context,
            max_num_seqs=max_num_seqs,
            utilisation=utilisation,
            gpu_layers=gpu_layers,
            cpu_moe=cpu_moe,
            vllm_version=getattr(args, "vllm_version", None),
        )
    except EmitRefused as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc


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
