"""``gpudesk speed ... --verify``: run the estimate's workload here with llama.cpp, print
estimate, measurement and ratio, and store the measurement (:mod:`gpudesk.bench.verify`).
With ``--engine vllm`` it measures with vLLM's Python API instead
(:mod:`gpudesk.bench.verify_vllm`; never run against a real vLLM, see there).

``--gpu cpu`` names this machine's processor: a device built from a short NumPy
measurement of its memory bandwidth and FP32 GEMM rate (it is not a catalog entry).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from gpudesk.cli.common import EXIT_USAGE, CliError
from gpudesk.cli.textwidth import wrap_paragraph

CPU_ID = "cpu"


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("measure it here")
    group.add_argument(
        "--verify",
        action="store_true",
        help="run the workload here with llama.cpp (llama-cpp-python), or with vLLM for "
        "--engine vllm (random weights of the model's shape unless --safetensors), print "
        "estimate, measurement and ratio, and store the measurement",
    )
    group.add_argument(
        "--verify-time-limit",
        type=float,
        default=300.0,
        metavar="S",
        help="stop the measurement after S seconds (default 300)",
    )
    group.add_argument(
        "--max-file-gb",
        type=float,
        default=2.0,
        metavar="GB",
        help="without --gguf: the largest random-weight GGUF --verify may write (default 2)",
    )
    group.add_argument(
        "--threads", type=int, metavar="N", help="with --verify: llama.cpp threads (default: its)"
    )


def add_this_cpu(args: argparse.Namespace, catalog: Any) -> None:
    """With ``--gpu cpu``, put this machine's processor among the devices speed knows."""
    if not any(str(name).strip().lower() == CPU_ID for name in (args.gpu or [])):
        return
    if any(entry.id == CPU_ID for entry in catalog.entries):
        return
    catalog.entries.append(this_cpu_entry())


def this_cpu_entry() -> Any:
    """This machine's processor as a device (the app's Verify builds the same one)."""
    from gpudesk.measurements.verify_here import this_cpu_entry as measured_cpu

    return measured_cpu()


def run_verify(
    args: argparse.Namespace, request: Any, results: list[Any], model: dict[str, Any]
) -> dict[str, Any] | None:
    """Measure the first result's workload here; None without ``--verify``."""
    if not getattr(args, "verify", False):
        return None
    _check_verify_flags(args, request, results)
    if args.engine == "vllm":
        return _run_verify_vllm(args, request, results, model)
    _check_llama_cpp_flags(args)
    return _run_verify_llama_cpp(args, request, results, model)


def _check_verify_flags(args: argparse.Namespace, request: Any, results: list[Any]) -> None:
    """What ``--verify`` measures (llama.cpp or vLLM, decode or prefill, one GPU)."""
    if args.engine not in ("llama.cpp", "vllm"):
        raise CliError(
            "--verify measures llama.cpp or vLLM: give --engine llama.cpp or vllm", EXIT_USAGE
        )
    if request.mode.value not in ("decode", "prefill"):
        raise CliError("--verify measures --mode decode or prefill", EXIT_USAGE)
    if not args.gpu or len(args.gpu) != 1 or not results:
        raise CliError("--verify needs one --gpu: this machine's (or cpu)", EXIT_USAGE)
    if not 1 <= args.verify_time_limit <= 86_400:
        raise CliError("--verify-time-limit must be 1 to 86,400 seconds", EXIT_USAGE)


def _check_llama_cpp_flags(args: argparse.Namespace) -> None:
    """llama.cpp's own: the random file's size, the threads, a GGUF's tokenizer, and
    llama-cpp-python installed."""
    from gpudesk.measurements.verify_here import llama_cpp_version

    if not 0.001 <= args.max_file_gb <= 10_000:
        raise CliError("--max-file-gb must be from 0.001 to 10,000", EXIT_USAGE)
    if args.threads is not None and not 1 <= args.threads <= 1024:
        raise CliError("--threads must be 1 to 1024", EXIT_USAGE)
    given = getattr(args, "model_file", None)
    if given is not None and given.has_tokenizer is False:
        # llama.cpp refuses it with only "Failed to load model from file"
        raise CliError(
            f"--verify: {given.path} has no tokenizer (no tokenizer.ggml.model key), "
            "which llama.cpp needs to load a GGUF: give the model's GGUF with its tokenizer, "
            "or --model/--config without --gguf to measure random weights of its shape",
            EXIT_USAGE,
        )
    if llama_cpp_version() is None:
        raise CliError(
            "--verify needs llama-cpp-python: pip install '.[verify]' from the GPUDesk "
            "checkout (a source build of llama.cpp where no wheel fits)",
            EXIT_USAGE,
        )


def _run_verify_llama_cpp(
    args: argparse.Namespace, request: Any, results: list[Any], model: dict[str, Any]
) -> dict[str, Any]:
    """Measure with llama-cpp-python: the model's GGUF, or random weights of its shape."""
    from gpudesk.measurements.verify_here import (
        VerifyError,
        VerifySettings,
        run_llama_cpp,
        write_random_gguf,
    )

    estimate = results[0]
    backend = getattr(args, "backend", None)
    on_cpu = estimate.gpu_id == CPU_ID or backend == "cpu"
    n_prompt = int(request.seq_in or 0)
    n_gen = int(request.seq_out or 0) if request.mode.value == "decode" else 0
    model_file = getattr(args, "model_file", None)
    shape = _shape_for(args, model_file)
    with tempfile.TemporaryDirectory(prefix="gpudesk-verify-") as folder:
        if model_file is not None:
            path = Path(model_file.path)
            written = None
        else:
            path = Path(folder) / "random-weights.gguf"
            try:
                written = write_random_gguf(
                    shape, path, ggml_type=_ggml_type(args), max_bytes=int(args.max_file_gb * 1e9)
                )
            except VerifyError as exc:
                raise CliError(f"--verify: {exc}", EXIT_USAGE) from exc
        settings = VerifySettings(
            model_path=path,
            n_prompt=n_prompt,
            n_gen=n_gen,
            n_gpu_layers=0 if on_cpu else shape.layers + 1,
            n_threads=args.threads,
            time_limit_s=args.verify_time_limit,
        )
        try:
            measured = run_llama_cpp(settings)
        except VerifyError as exc:
            raise CliError(f"--verify: {exc}", EXIT_USAGE) from exc
    value = _chosen(measured, request)
    document: dict[str, Any] = {
        "engine": "llama.cpp",
        "engine_version": f"llama-cpp-python {measured.engine_version}",
        "model_path": str(path) if model_file is not None else None,
        "random_weights_bytes": written,
        "n_prompt": n_prompt,
        "n_gen": n_gen,
        "n_gen_done": measured.n_gen_done,
        "n_gpu_layers": settings.n_gpu_layers,
        **_measured_fields(measured, estimate, value),
    }
    _keep_run(
        document,
        args,
        request,
        estimate,
        model,
        measured,
        value,
        backend=backend,
        engine_version=f"llama-cpp-python {measured.engine_version}",
    )
    return document


def _chosen(measured: Any, request: Any) -> float | None:
    """The figure the estimate is for: decode tokens/s, or prefill tokens/s."""
    if request.mode.value == "decode":
        return measured.decode_tokens_per_s  # type: ignore[no-any-return]
    return measured.prefill_tokens_per_s  # type: ignore[no-any-return]


def _measured_fields(measured: Any, estimate: Any, value: float | None) -> dict[str, Any]:
    """The part of the ``verify`` document every engine's run has."""
    return {
        "prefill_tokens_per_s": measured.prefill_tokens_per_s,
        "decode_tokens_per_s": measured.decode_tokens_per_s,
        "estimate_tokens_per_s": estimate.tokens_per_s,
        "measured_tokens_per_s": value,
        "ratio": None if not value else value / estimate.tokens_per_s,
        "seconds": round(measured.seconds, 2),
        "stopped": measured.stopped,
        "stored_id": None,
    }


def _keep_run(
    document: dict[str, Any],
    args: argparse.Namespace,
    request: Any,
    estimate: Any,
    model: dict[str, Any],
    measured: Any,
    value: float | None,
    *,
    backend: str | None,
    engine_version: str,
    engine: str = "llama.cpp",
    weights: str | None = None,
) -> None:
    """Store a run that measured its figure (an interrupted one stores nothing) and put
    the row in the document: the stored row itself, so `measurements import` of this
    --json output on another machine adds the same row (and here finds it already
    stored)."""
    if not value or measured.stopped == "interrupted":
        return
    from gpudesk.measurements.store import MeasurementStore
    from gpudesk.measurements.verify_here import VerifyError, measured_row, store_row

    model_file = getattr(args, "model_file", None)
    row = measured_row(
        estimate,
        request,
        measured,
        value,
        count=estimate.count,
        engine=engine,
        engine_version=engine_version,
        backend=backend or ("cpu" if estimate.gpu_id == CPU_ID else None),
        model=str(model.get("model") or model.get("params") or model.get("config") or "model"),
        model_file=model_file.path if model_file is not None else None,
        source="gpudesk speed --verify",
        weights=weights,
    )
    document["measurement"] = row.model_dump(mode="json", exclude={"source"})
    try:
        document["stored_id"] = store_row(MeasurementStore(), row)
    except VerifyError as exc:
        raise CliError(f"--verify: {exc}") from exc


def _ggml_type(args: argparse.Namespace) -> str:
    quant = args.quant or args.dtype or "q8_0"
    return "F16" if quant in ("fp16", "bf16", "fp32") else "Q8_0"


def _shape_for(args: argparse.Namespace, model_file: Any) -> Any:
    from gpudesk.cli.emit_args import shape_from_args

    return shape_from_args(args)


def verify_text(document: dict[str, Any]) -> str:
    value = document["measured_tokens_per_s"]
    lines = ["", f"Measured here ({document['engine']}, {document['engine_version']}):"]
    lines.append(f"  estimate     {document['estimate_tokens_per_s']:,.1f} tokens/s")
    lines.append(
        wrap_paragraph(
            "measurement  "
            + ("n/a" if not value else f"{value:,.1f} tokens/s")
            + f"  (prompt {document['n_prompt']}, generated {document['n_gen_done']}, "
            f"n_gpu_layers {document['n_gpu_layers']}, {document['seconds']:.1f} s)",
            indent="  ",
            subsequent_indent=" " * 15,
        )
    )
    if document["ratio"] is not None:
        lines.append(f"  ratio        {document['ratio']:.2f} (measured / estimated)")
    prefill = document["prefill_tokens_per_s"]
    if prefill and document["n_gen"]:
        lines.append(f"  (its prompt was processed at {prefill:,.1f} tokens/s)")
    if document["stopped"]:
        lines.append(f"  stopped early: {document['stopped']}")
    if document["stored_id"] is not None:
        lines.append(
            wrap_paragraph(
                f"Stored as measurement {document['stored_id']} (gpudesk measurements list); "
                "later estimates for this device are calibrated with it.",
                indent="  ",
            )
        )
    elif document["stopped"] == "interrupted":
        lines.append("  Interrupted: nothing stored.")
    return "\n".join(lines)


_VLLM_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


def _vllm_model(args: argparse.Namespace, model_file: Any) -> tuple[str, bool]:
    """What vLLM loads and whether its weights are random: a --safetensors folder (its own
    weights), a --config's folder or a preset's Hugging Face repository (random weights)."""
    from gpudesk.cli.emit_args import _model_ref

    if model_file is not None:
        if model_file.format != "safetensors":
            raise CliError(
                "--verify --engine vllm measures a --safetensors folder or a preset, not a GGUF",
                EXIT_USAGE,
            )
        return str(model_file.path), False
    config = getattr(args, "config", None)
    if config is not None:
        path = Path(config)
        return str(path.parent if path.is_file() else path), True
    preset = None
    if getattr(args, "model", None):
        from gpudesk.workload.presets import find_preset

        try:
            preset = find_preset(args.model)
        except Exception:  # speed accepted the name; no preset, so no repository
            preset = None
    ref = _model_ref(preset, None, argparse.Namespace(), "vllm")
    if ref == "MODEL":
        raise CliError(
            "--verify --engine vllm needs a model vLLM can load: a preset with a Hugging Face "
            "repository, --config DIR or --safetensors DIR",
            EXIT_USAGE,
        )
    return ref, True


def _run_verify_vllm(
    args: argparse.Namespace, request: Any, results: list[Any], model: dict[str, Any]
) -> dict[str, Any]:
    from gpudesk.measurements.verify_here import VerifyError, VllmSettings, run_vllm, vllm_version

    if vllm_version() is None:
        raise CliError(
            "--verify --engine vllm needs vLLM, which needs a CUDA GPU: pip install vllm",
            EXIT_USAGE,
        )
    estimate = results[0]
    if estimate.gpu_id == CPU_ID:
        raise CliError(
            "--verify --engine vllm measures a GPU: give --gpu this machine's GPU", EXIT_USAGE
        )
    model_file = getattr(args, "model_file", None)
    ref, dummy = _vllm_model(args, model_file)
    quant = request.quant.value
    if dummy and quant not in (*_VLLM_DTYPES, "fp8"):
        raise CliError(
            f"--verify --engine vllm with random weights measures bf16, fp16 or fp8, not {quant}: "
            "give --safetensors DIR of the quantized checkpoint",
            EXIT_USAGE,
        )
    shape = _shape_for(args, model_file)
    n_prompt = int(request.seq_in or 0)
    n_gen = int(request.seq_out or 0) if request.mode.value == "decode" else 0
    settings = VllmSettings(
        model=ref,
        n_prompt=max(1, n_prompt),
        n_gen=n_gen,
        vocab=shape.vocab,
        max_model_len=max(1, n_prompt) + n_gen + 16,
        tensor_parallel=estimate.count,
        dtype=_VLLM_DTYPES.get(quant, "auto"),
        quantization="fp8" if quant == "fp8" and dummy else None,
        dummy_weights=dummy,
        time_limit_s=args.verify_time_limit,
    )
    try:
        measured = run_vllm(settings)
    except VerifyError as exc:
        raise CliError(f"--verify: {exc}", EXIT_USAGE) from exc
    value = _chosen(measured, request)
    weights = (
        f"random weights (vLLM dummy loader) of {ref}'s config.json"
        if dummy
        else "the model's safetensors"
    )
    document: dict[str, Any] = {
        "engine": "vllm",
        "engine_version": f"vllm {measured.engine_version}",
        "model_path": ref,
        "random_weights_bytes": None,
        "weights": weights,
        "timing": measured.timing,
        "n_prompt": settings.n_prompt,
        "n_gen": n_gen,
        "n_gen_done": measured.n_gen_done,
        "n_gpu_layers": shape.layers + 1,
        **_measured_fields(measured, estimate, value),
    }
    _keep_run(
        document,
        args,
        request,
        estimate,
        model,
        measured,
        value,
        backend=getattr(args, "backend", None),
        engine_version=f"vllm {measured.engine_version}",
        engine="vllm",
        weights=weights,
    )
    return document
