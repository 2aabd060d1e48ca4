"""``--gguf FILE`` and ``--safetensors DIR`` for ``fit`` and ``speed``: the real model file.

The flags join each command's "which model" group; the file is read header only
(:mod:`gpudesk.workload.modelfile`) and a file that is not what it claims is exit 2.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from gpudesk.cli.common import EXIT_USAGE, CliError, path_argument

if TYPE_CHECKING:
    from gpudesk.workload.modelfile import ModelFile
    from gpudesk.workload.presets import ModelArchitecture


def add_model_file_arguments(group: Any) -> None:
    """Add ``--gguf`` and ``--safetensors`` to a (mutually exclusive) argument group."""
    group.add_argument(
        "--gguf",
        metavar="FILE",
        type=path_argument,
        help="a GGUF model file: shape and exact weight bytes from its header (never loaded)",
    )
    group.add_argument(
        "--safetensors",
        metavar="DIR",
        type=path_argument,
        help="a folder of .safetensors files and its config.json (headers only)",
    )


def wants_model_file(args: argparse.Namespace) -> bool:
    return getattr(args, "gguf", None) is not None or getattr(args, "safetensors", None) is not None


def load_model_file(args: argparse.Namespace) -> ModelFile | None:
    """The file ``--gguf`` or ``--safetensors`` names, read; None when neither is given.

    Raises:
        CliError: exit 2, naming the file and what is wrong with it.
    """
    from gpudesk.workload.modelfile import ModelFileError, read_gguf, read_safetensors

    try:
        if getattr(args, "gguf", None) is not None:
            return read_gguf(args.gguf)
        if getattr(args, "safetensors", None) is not None:
            return read_safetensors(args.safetensors)
    except ModelFileError as exc:
        flag = "--gguf" if getattr(args, "gguf", None) is not None else "--safetensors"
        raise CliError(f"{flag} {exc}", EXIT_USAGE) from exc
    return None


def require_shape(model_file: ModelFile, flag: str) -> Any:
    if model_file.shape is None:
        raise CliError(
            f"{flag} {model_file.path}: cannot tell the model's shape ({model_file.shape_problem})",
            EXIT_USAGE,
        )
    return model_file.shape


def file_architecture(model_file: ModelFile, shape: Any) -> ModelArchitecture:
    """The model the file holds, for the memory estimate: its shape and exact parameters."""
    from gpudesk.workload.presets import ModelArchitecture, ModelKind

    return ModelArchitecture(
        id=model_file.format,
        name=model_file.name or model_file.path,
        kind=ModelKind.DECODER if shape.causal else ModelKind.ENCODER,
        params=model_file.params,
        active_params=shape.active_params if shape.is_moe else None,
        shape=shape,
        sources=(f"{model_file.format} file {model_file.path} (header)",),
    )


def model_file_json(model_file: ModelFile) -> dict[str, Any]:
    """The ``model_file`` section of ``fit --json`` and ``speed --json``: exact bytes."""
    return {
        "path": model_file.path,
        "format": model_file.format,
        "architecture": model_file.architecture,
        "name": model_file.name,
        "file_type": model_file.file_type,
        "quant": model_file.quant.value if model_file.quant is not None else None,
        "file_bytes": model_file.file_bytes,
        "tensor_count": len(model_file.tensors),
        "tensor_bytes": model_file.tensor_bytes,
        "params": model_file.params,
        "embedding_bytes": model_file.embedding_bytes,
        "lm_head_bytes": model_file.lm_head_bytes,
        "expert_bytes": model_file.expert_bytes,
        "streamed_per_token_bytes": model_file.streamed_per_token_bytes,
        "bytes_by_type": dict(model_file.bytes_by_type),
        "context": model_file.context,
        "shape_problem": model_file.shape_problem,
        "tensors": [
            {"name": t.name, "type": t.dtype, "shape": list(t.shape), "bytes": t.nbytes}
            for t in model_file.tensors
        ],
    }


def model_file_line(model_file: ModelFile) -> str:
    """One line for the text outputs: what the file holds, bytes exact."""
    return (
        f"From the file: {model_file.summary()} ({model_file.tensor_bytes / 1e9:.3f} GB exact, "
        f"{model_file.streamed_per_token_bytes / 1e9:.3f} GB read per decoded token)."
    )


# -- the hooks ``fit`` calls -----------------------------------------------------------


def fit_file_defaults(args: argparse.Namespace) -> ModelFile | None:
    """Read ``--gguf``/``--safetensors`` for ``fit``; the file's format and engine become
    the defaults of ``--quant`` and ``--engine`` (llama.cpp for GGUF) when not given."""
    model_file = load_model_file(args)
    if model_file is None:
        return None
    require_shape(model_file, "--gguf" if model_file.format == "gguf" else "--safetensors")
    if getattr(args, "quant", None) is None and model_file.quant is not None:
        args.quant = model_file.quant.value
    if getattr(args, "engine", None) is None and model_file.format == "gguf":
        args.engine = "llama.cpp"
    return model_file


def file_model(args: argparse.Namespace, model_file: ModelFile) -> ModelArchitecture:
    """The file's model, with any shape flags (``--layers`` ...) applied on top."""
    from gpudesk.workload.architecture import with_overrides

    shape = model_file.shape
    changed = {
        key[len("shape_") :]: value
        for key, value in vars(args).items()
        if key.startswith("shape_") and value is not None
    }
    if changed:
        shape = with_overrides(shape, changed)  # type: ignore[arg-type]
    return file_architecture(model_file, shape)


def with_file_weights(estimate: Any, model_file: ModelFile | None) -> Any:
    if model_file is None:
        return estimate
    from gpudesk.memory.file_weights import with_file_weights as exact

    return exact(estimate, model_file)


def add_file_and_emit(
    document: dict[str, Any],
    model_file: ModelFile | None,
    emitted: dict[str, Any] | None,
) -> dict[str, Any]:
    """``fit --json`` plus ``model_file`` (exact bytes) when a file was read and ``emit``
    (launch command, vLLM KV pool) with ``--emit``."""
    if model_file is not None:
        document["model_file"] = model_file_json(model_file)
    if emitted is not None:
        document["emit"] = emitted
    return document


def file_and_emit_text(model_file: ModelFile | None, emitted: dict[str, Any] | None) -> str:
    """What ``fit`` prints after its report for a file and ``--emit`` ("" for neither)."""
    import textwrap

    from gpudesk.cli.emit_args import emit_text

    text = ""
    if model_file is not None:
        text += "\n\n" + textwrap.fill(model_file_line(model_file), 100, break_on_hyphens=False)
    if emitted is not None:
        text += "\n" + emit_text(emitted)
    return text


# -- the hooks ``speed`` calls ---------------------------------------------------------


def speed_file_defaults(args: argparse.Namespace) -> ModelFile | None:
    """Read ``--gguf``/``--safetensors`` for ``speed``; the file's format becomes the
    default of ``--quant`` (a file in a format GPUDesk does not model needs ``--quant``)."""
    model_file = load_model_file(args)
    if model_file is None:
        return None
    flag = "--gguf" if model_file.format == "gguf" else "--safetensors"
    require_shape(model_file, flag)
    if args.quant is None and args.dtype is None:
        if model_file.quant is None:
            raise CliError(
                f"{flag} {model_file.path}: its weights are {model_file.file_type}, a format "
                "the speed model does not know; give the nearest with --quant",
                EXIT_USAGE,
            )
        args.quant = model_file.quant.value
    return model_file


def speed_file_costs(args: argparse.Namespace, model_file: ModelFile) -> tuple[Any, dict[str, Any]]:
    """The speed model's per-token costs of the file: shape from its header, weight bytes
    (held, streamed per token, input embedding) exact from its tensors."""
    import dataclasses

    from gpudesk.speed.estimate import KvFormat, model_costs
    from gpudesk.workload.quant import QuantFormat

    shape = model_file.shape
    assert shape is not None
    quant = QuantFormat(args.quant or args.dtype or "bf16")
    costs = model_costs(shape, quant, KvFormat(args.kv_quant))
    costs = dataclasses.replace(
        costs,
        in_memory_bytes=float(model_file.tensor_bytes),
        streamed_bytes=float(model_file.streamed_per_token_bytes),
        input_embedding_bytes=float(model_file.embedding_bytes),
    )
    described = {
        "model": model_file.name or model_file.path,
        "model_file": model_file_json(model_file),
        "shape": shape.summary(),
        "params_total": model_file.params,
        "params_active": shape.active_params,
        "quant": quant.value,
        "kv_quant": args.kv_quant,
        "weights_gb": round(costs.in_memory_bytes / 1e9, 6),
        "weights_streamed_per_token_gb": round(costs.streamed_bytes / 1e9, 6),
    }
    return costs, described
