"""``--emit vllm|sglang|llama.cpp|ollama`` for ``fit`` and ``speed``: the flags read into
:func:`gpudesk.engines.emit.launch_document` (a launch command sized to the chosen GPUs,
the KV pool as vLLM or SGLang would log it, and the command that checks it), and its
text."""

from __future__ import annotations

import argparse
import re
from typing import Any

from gpudesk.cli.common import EXIT_USAGE, CliError
from gpudesk.units import gib_text

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
            "--gpu",
            metavar="NAME",
            help="answer for this catalog GPU: does it fit, on how many, the longest context "
            "(with --emit: the GPU the command is sized for)",
        )
    group.add_argument(
        "--gpu-memory-utilization",
        dest="emit_utilisation",
        type=float,
        metavar="U",
        help="with --emit: vLLM's share of GPU memory / SGLang's --mem-fraction-static "
        "(default 0.9); speed --mode serve: the same share for the simulated KV pool "
        "(default: the engine's, vLLM 0.9, SGLang's by GPU memory)",
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


def _preset_id(model: Any, model_file: Any, args: argparse.Namespace) -> str | None:
    """The preset a command's repository comes from (None: the user's own file or config)."""
    if model_file is not None or getattr(args, "config", None) is not None:
        return None
    if getattr(args, "model", None) is None:
        return None
    return getattr(model, "id", None)


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
    context_fixed: bool = False,
) -> dict[str, Any]:
    """The ``emit`` document (:func:`gpudesk.engines.emit.launch_document`) for the
    flags' utilisation and model, naming a checkpoint in the weights' format
    (:func:`gpudesk.engines.checkpoints.checkpoint_for`). ``context_fixed``: the user
    chose the context (``--seq``), so an engine pool too small for it is refused.

    Raises:
        CliError: a bad ``--gpu-memory-utilization``, or no command for this (exit 2).
    """
    from gpudesk.engines.checkpoints import checkpoint_for
    from gpudesk.engines.emit import EmitRefused, launch_document

    utilisation = _utilisation(args)
    checkpoint = checkpoint_for(
        engine,
        _preset_id(model, model_file, args),
        quant,
        _model_ref(model, model_file, args, engine),
    )
    try:
        document = launch_document(
            engine=engine,
            shape=shape,
            entry=entry,
            model_ref=checkpoint.model_ref,
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
            context_fixed=context_fixed,
        )
    except EmitRefused as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    document["model_ref"] = checkpoint.model_ref
    document["needs_checkpoint"] = checkpoint.needs_checkpoint
    if checkpoint.note is not None:
        document["notes"].insert(0, checkpoint.note)
    return document


#: the prose around a printed command fits 80 columns; commands are never wrapped
TEXT_WIDTH = 80


def _fill(text: str, indent: str, subsequent: str) -> str:
    import textwrap

    return textwrap.fill(
        text,
        TEXT_WIDTH,
        initial_indent=indent,
        subsequent_indent=subsequent,
        break_on_hyphens=False,
        break_long_words=False,
    )


def emit_text(document: dict[str, Any]) -> str:
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
        lines.append(_fill(pool["working"], "  ", "  "))
    if document["notes"]:
        lines.append("")
    for note in document["notes"]:
        lines.append(_fill(f"Note: {note}", "  ", "    "))
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
    args: argparse.Namespace,
    report: Any,
    model_file: Any,
    entry: Any,
    answer: Any,
) -> dict[str, Any] | None:
    """``fit --emit``: sized from the fit report's smallest count of ``--gpu`` that
    holds the workload, at the fit's sequence length (the longest that fits, unless
    ``--seq`` chose it; ``answer`` is the fit's :class:`~gpudesk.memory.fit.GpuAnswer`).

    Raises:
        CliError: no ``--gpu``, not an inference of a transformer, or the GPU does not
            hold it (exit 2).
    """
    if getattr(args, "emit", None) is None:
        return None
    from gpudesk.memory.breakdown import PartKey

    if entry is None:
        raise CliError("--emit needs --gpu NAME: the GPU to size the command for", EXIT_USAGE)
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
        raise CliError(_does_not_hold(entry, report, answer, args), EXIT_USAGE)
    weights = estimate.part(PartKey.WEIGHTS)
    weights_bytes = (weights.gb + weights.host_gb) * 1e9 * estimate.spec.tensor_parallel
    spec = estimate.spec
    quant = spec.quant.value if spec.quant is not None else None
    document = emit_for(
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
        context=spec.seq,
        max_num_seqs=spec.concurrency,
        gpu_layers=gpu_layers,
        cpu_moe=cpu_moe,
        context_fixed=args.seq is not None,
    )
    if args.seq is None and spec.seq is not None:
        document["notes"].insert(0, _context_note(document, spec.seq, shape.context, gpu_layers))
    return document


def _context_note(document: dict[str, Any], seq: int, model_context: int, offload: Any) -> str:
    """Why the command's context is what it is, when ``--seq`` did not say."""
    gpus = f"{document['tensor_parallel']}× {document['gpu_id']}"
    if offload is not None:
        return (
            f"the context is {seq:,} tokens, fit's default: with part of the model in host "
            "memory a longer one moves more layers to the CPU (--seq sets it)"
        )
    if document["context"] >= model_context:
        return f"the model's whole {model_context:,}-token context fits {gpus}"
    return (
        f"the context is {document['context']:,} tokens, the longest that {gpus} holds by "
        f"GPUDesk's fit (the model's is {model_context:,}; --seq sets it, or more GPUs "
        "hold more)"
    )


def _does_not_hold(entry: Any, report: Any, answer: Any, args: argparse.Namespace) -> str:
    """Why ``fit --emit`` prints no command: what each GPU needs against what it has, and
    the longest context that would fit; or, for a GPU the fit ruled out (no published
    memory size, a dtype it cannot run), the fit's reason, as ``fit --gpu`` words it."""
    excluded = answer.fit.excluded_reason if answer is not None else None
    if excluded is not None:
        return f"--emit: {entry.id} cannot run this workload: {excluded}"
    most = report.counts[-1]
    need = report.estimate.per_gpu_gb(most)
    usable = answer.fit.usable_gb if answer is not None else None
    seq = report.estimate.spec.seq
    at = f" at --seq {seq:,}" if args.seq is not None and seq is not None else ""
    upto = "on one GPU" if most == 1 else f"on up to {most} GPUs"
    text = f"--emit: {entry.id} does not hold this workload{at} {upto}"
    if usable is not None:
        text += f" (each needs {gib_text(need)} as {most}; {gib_text(usable)} usable)"
    longest = answer.longest if answer is not None else None
    if longest is not None:
        text += (
            f"; {longest.count}× holds up to {longest.context:,} tokens: give --seq "
            f"{longest.context} or leave --seq out"
        )
    return text


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
