"""``gpudesk fit`` and ``gpudesk cost``: will a model fit, and cloud or buy.

Module-level imports stay cheap: the planning modules load inside the handlers.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from gpudesk.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    load_catalog_for,
    path_argument,
)
from gpudesk.cli.emit_args import add_emit_arguments, fit_emit
from gpudesk.cli.flag_tables import Flag, add_flags
from gpudesk.cli.model_file_args import add_model_file_arguments
from gpudesk.cli.textwidth import output_width, terminal_table, wrap_paragraph

if TYPE_CHECKING:
    from gpudesk.catalog.schema import CatalogEntry
    from gpudesk.cost import CostResult
    from gpudesk.workload.errors import PlanningInputError

_MODES = ("inference", "train", "lora", "qlora")
_DTYPES = ("fp32", "bf16", "fp16", "int8", "int4")
_KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
_OPTIMIZERS = ("adamw", "adamw8bit", "paged_adamw", "paged_adamw8bit", "sgd")
_QUANTS = (
    "fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "awq", "gptq", "mxfp4",
    "q4_0", "q4_k_m", "q5_k_m", "q6_k", "q8_0",
)  # fmt: skip
_ENGINES = ("transformers", "vllm", "llama.cpp", "tensorrt-llm")
_SHARDING = ("none", "zero1", "zero2", "zero3", "fsdp")
#: the engine whose memory ``fit --emit ENGINE`` sizes with when --engine is not given:
#: SGLang, like vLLM, prefills in chunks and keeps a fixed share of memory for its pool
_EMIT_ENGINE = {"vllm": "vllm", "sglang": "vllm", "llama.cpp": "llama.cpp", "ollama": "llama.cpp"}
#: the WorkloadSpec field each ``fit`` flag sets, for wording the core's errors
FIT_FLAGS = {
    "workload": "--mode",
    "dtype": "--dtype",
    "quant": "--quant",
    "batch": "--batch",
    "seq": "--seq",
    "lora_rank": "--lora-rank",
    "concurrency": "--concurrency",
    "prefill_chunk": "--prefill-chunk",
    "ubatch": "--ubatch",
    "gpus": "--gpus",
    "tensor_parallel": "--tensor-parallel",
}
#: shape flags and the ModelShape field each sets (the core names fields, not flags)
SHAPE_FLAGS = {
    "layers": "--layers",
    "hidden": "--hidden",
    "heads": "--heads",
    "kv_heads": "--kv-heads",
    "head_dim": "--head-dim",
    "intermediate": "--intermediate",
    "vocab": "--vocab",
    "experts": "--experts",
    "active_experts": "--active-experts",
}


FIT_DESCRIPTION = (
    "Estimate the GPU memory a model needs (weights, gradients, optimizer states, "
    "activations, KV cache, framework overhead; in GiB = 2^30 bytes) and list the "
    "catalog GPUs that hold it on 1, 2, 4 or 8 cards (an SoC: one). A GPU sold as '24 GB' "
    "holds 24 GiB; what a workload may use is that less what the driver keeps, times the "
    "engine's share (vLLM 0.9); on a Mac, the GPU wired limit."
)
#: what the model is (one of them; the model-file flags follow)
FIT_MODEL_FLAGS: tuple[Flag, ...] = (
    (("--params",), {"metavar": "N", "help": "parameter count: 7B, 350M, 1.5T, 7e9"}),
    (("--model",), {"metavar": "PRESET", "help": "a bundled model preset (see --list-models)"}),
    (
        ("--config",),
        {
            "metavar": "PATH",
            "type": path_argument,
            "help": "a Hugging Face config.json, or a folder holding one (read from disk only)",
        },
    ),
    (("--list-models",), {"action": "store_true", "help": "list the model presets and exit"}),
)
#: the workload, before the training and inference groups
FIT_WORKLOAD_FLAGS: tuple[Flag, ...] = (
    (
        ("--mode",),
        {"choices": _MODES, "default": "inference", "help": "workload (default inference)"},
    ),
    (
        ("--dtype",),
        {"choices": _DTYPES, "default": "bf16", "help": "compute / weight dtype (default bf16)"},
    ),
    (
        ("--quant",),
        {
            "choices": _QUANTS,
            "help": "how the weights are stored (default: the dtype; nf4 for qlora): GGUF "
            "q4_0 ... q8_0 with llama.cpp's per-tensor mix, awq/gptq 4-bit g128, fp8, nf4, "
            "mxfp4",
        },
    ),
    (("--batch",), {"type": int, "default": 1, "metavar": "N", "help": "batch size (default 1)"}),
    (
        ("--seq",),
        {
            "type": int,
            "metavar": "N",
            "help": "sequence length in tokens (default 2048 or the context)",
        },
    ),
    (("--kv-dtype",), {"choices": _KV_DTYPES, "help": "KV-cache dtype (default: as computed)"}),
    (
        ("--checkpointing",),
        {"action": "store_true", "help": "gradient checkpointing (training)"},
    ),
    (("--optimizer",), {"choices": _OPTIMIZERS, "default": "adamw", "help": "default adamw"}),
)
FIT_TRAINING_FLAGS: tuple[Flag, ...] = (
    (
        ("--pure-bf16",),
        {"action": "store_true", "help": "bf16 weights and moments, no fp32 master copy"},
    ),
    (
        ("--fused-optimizer",),
        {
            "action": "store_true",
            "help": "optimizer step fused into backward (no full gradient buffer)",
        },
    ),
    (
        ("--cross-entropy",),
        {
            "choices": ("full", "chunked", "fused"),
            "default": "full",
            "help": "loss: full fp32 logits (default), chunked (torchtune) or fused (Liger/CCE)",
        },
    ),
    (
        ("--lora-bf16",),
        {"action": "store_true", "help": "LoRA adapters in bf16 (default fp32, as PEFT)"},
    ),
    (
        ("--offload-optimizer",),
        {
            "action": "store_true",
            "help": "optimizer states and master weights in CPU memory (ZeRO-Offload)",
        },
    ),
    (
        ("--offload-activations",),
        {
            "action": "store_true",
            "help": "checkpointed activations in CPU memory (with --checkpointing)",
        },
    ),
    (
        ("--sharding",),
        {
            "choices": _SHARDING,
            "default": "none",
            "help": "ZeRO stage across the data-parallel GPUs (fsdp = zero3)",
        },
    ),
    (
        ("--gpus",),
        {"type": int, "metavar": "N", "help": "per-GPU figures for N GPUs (default: try 1-8)"},
    ),
    (
        ("--tensor-parallel",),
        {"type": int, "default": 1, "metavar": "T", "help": "tensor-parallel degree"},
    ),
)
FIT_INFERENCE_FLAGS: tuple[Flag, ...] = (
    (
        ("--engine",),
        {
            "choices": _ENGINES,
            "help": "inference engine (default transformers; llama.cpp for GGUF formats; "
            "speed's default is vllm)",
        },
    ),
    (
        ("--concurrency",),
        {
            "type": int,
            "metavar": "N",
            "help": "sequences sharing the KV cache (default: --batch)",
        },
    ),
    (
        ("--prefill-chunk",),
        {
            "type": int,
            "metavar": "N",
            "help": "tokens per prefill step (vLLM max_num_batched_tokens, TensorRT-LLM "
            "max_num_tokens; default 8192)",
        },
    ),
    (
        ("--ubatch",),
        {"type": int, "metavar": "N", "help": "llama.cpp micro-batch -ub (default 512)"},
    ),
)
#: after the groups: LoRA, attention and how many GPUs to try
FIT_OTHER_FLAGS: tuple[Flag, ...] = (
    (
        ("--lora-rank",),
        {"type": int, "default": 16, "metavar": "R", "help": "LoRA rank (default 16)"},
    ),
    (
        ("--no-flash-attention",),
        {
            "action": "store_true",
            "help": "count the attention score matrices (no FlashAttention / SDPA)",
        },
    ),
    (
        ("--max-gpus",),
        {
            "type": int,
            "choices": (1, 2, 4, 8),
            "default": 8,
            "help": "largest GPU count to consider (default 8)",
        },
    ),
)
COST_DESCRIPTION = (
    "Compare buying a GPU (price + electricity - resale) with renting it by the hour; "
    "prints the break-even in months and the cumulative costs."
)
COST_ARGUMENTS: tuple[Flag, ...] = (
    (("name",), {"metavar": "NAME", "help": "catalog id or name, e.g. rtx-4090 or '4090'"}),
    (
        ("--cloud-hourly",),
        {
            "type": float,
            "metavar": "USD",
            "help": "cloud price per GPU-hour (default: the lowest on-demand rate GPUDesk holds "
            "for this GPU; 'gpudesk prices NAME' lists them)",
        },
    ),
    (("--hours-per-day",), {"type": float, "default": 8.0, "metavar": "H", "help": "default 8"}),
    (
        ("--utilisation", "--utilization"),
        {
            "dest": "utilisation",
            "type": float,
            "default": 0.8,
            "metavar": "U",
            "help": "average power draw as a fraction of TDP while running, 0-1 (default 0.8)",
        },
    ),
    (
        ("--kwh-price",),
        {"type": float, "default": 0.15, "metavar": "USD", "help": "electricity (default 0.15)"},
    ),
    (("--years",), {"type": float, "default": 3.0, "metavar": "Y", "help": "horizon (default 3)"}),
    (
        ("--purchase-usd",),
        {"type": float, "metavar": "N", "help": "price per GPU (default: the catalog's)"},
    ),
    (
        ("--resale-usd",),
        {
            "type": float,
            "default": 0.0,
            "metavar": "N",
            "help": "resale value per GPU (default 0)",
        },
    ),
    (
        ("--tdp-w",),
        {"type": float, "metavar": "W", "help": "power per GPU (default: the catalog's)"},
    ),
    (
        ("--count",),
        {"type": int, "default": 1, "metavar": "N", "help": "number of GPUs (default 1)"},
    ),
    (("--json",), {"action": "store_true", "help": "machine-readable output"}),
)


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``fit`` and ``cost``."""
    fit = subparsers.add_parser(
        "fit",
        help="will a model fit: memory breakdown and the catalog GPUs that hold it",
        description=FIT_DESCRIPTION,
    )
    what = fit.add_mutually_exclusive_group()
    add_flags(what, FIT_MODEL_FLAGS)
    add_model_file_arguments(what)
    shape = fit.add_argument_group(
        "model shape", "override the preset's, the config's or the assumed shape"
    )
    for field, flag in SHAPE_FLAGS.items():
        shape.add_argument(
            flag, dest=f"shape_{field}", type=int, metavar="N", help=field.replace("_", " ")
        )
    add_flags(fit, FIT_WORKLOAD_FLAGS)
    add_flags(fit.add_argument_group("training"), FIT_TRAINING_FLAGS)
    serve = fit.add_argument_group("inference")
    add_flags(serve, FIT_INFERENCE_FLAGS)
    add_offload_arguments(serve)
    add_flags(fit, FIT_OTHER_FLAGS)
    add_apple_wired_limit(fit)
    fit.add_argument("--json", action="store_true", help="machine-readable output")
    add_emit_arguments(fit, with_gpu=True)
    fit.set_defaults(handler=run_fit)

    cost = subparsers.add_parser(
        "cost",
        help="cloud or buy: break-even months for a catalog GPU",
        description=COST_DESCRIPTION,
    )
    add_flags(cost, COST_ARGUMENTS)
    cost.set_defaults(handler=run_cost)


# fit -----------------------------------------------------------------------------------


def add_offload_arguments(group: Any) -> None:
    """``--gpu-layers`` and ``--cpu-moe`` (llama.cpp's -ngl and --n-cpu-moe), for ``fit``
    and ``speed``."""
    group.add_argument(
        "--gpu-layers",
        type=int,
        metavar="N",
        help="llama.cpp -ngl: layers on the GPU, of the model's layers + 1 (the output "
        "layer); the rest stay in host memory (default: all that fit)",
    )
    group.add_argument(
        "--cpu-moe",
        type=int,
        metavar="N",
        help="llama.cpp --n-cpu-moe: keep the expert tensors of the first N layers in host "
        "memory (a mixture of experts)",
    )


def offload_flags(args: argparse.Namespace, engine: str | None, shape: Any) -> dict[str, Any]:
    """The checked ``--gpu-layers`` / ``--cpu-moe`` as fit_across's keywords.

    Raises:
        CliError: given for another engine, or out of the model's range (exit 2).
    """
    gpu_layers = getattr(args, "gpu_layers", None)
    cpu_moe = getattr(args, "cpu_moe", None)
    if gpu_layers is None and cpu_moe is None:
        return {}
    flag = "--gpu-layers" if gpu_layers is not None else "--cpu-moe"
    if engine != "llama.cpp":
        raise CliError(f"{flag} is llama.cpp's: give --engine llama.cpp", EXIT_USAGE)
    if shape is None:
        raise CliError(f"{flag}: the model has no layers to offload", EXIT_USAGE)
    if gpu_layers is not None and not 0 <= gpu_layers <= shape.layers + 1:
        raise CliError(
            f"--gpu-layers {gpu_layers}: must be from 0 to {shape.layers + 1} "
            f"({shape.layers} layers + the output layer)",
            EXIT_USAGE,
        )
    if cpu_moe is not None:
        if not shape.is_moe:
            raise CliError(f"--cpu-moe {cpu_moe}: the model has no experts", EXIT_USAGE)
        if not 0 <= cpu_moe <= shape.layers:
            raise CliError(
                f"--cpu-moe {cpu_moe}: must be from 0 to {shape.layers} (its layers)", EXIT_USAGE
            )
    return {"gpu_layers": gpu_layers, "cpu_moe": cpu_moe}


def add_apple_wired_limit(parser: argparse.ArgumentParser) -> None:
    """``--apple-wired-limit-mb``, shared by ``fit`` and ``speed``."""
    parser.add_argument(
        "--apple-wired-limit-mb",
        type=int,
        metavar="MIB",
        help="Apple silicon: the GPU wired limit you set with sudo sysctl "
        "iogpu.wired_limit_mb=MIB (default: macOS's, 2/3 of memory up to 36 GiB, 3/4 above)",
    )


def apple_wired_limit(args: argparse.Namespace) -> int | None:
    """The checked ``--apple-wired-limit-mb``.

    Raises:
        CliError: not a whole number of MiB from 1 to 2 TiB (exit 2).
    """
    from gpudesk.memory.usable import MAX_WIRED_LIMIT_MB

    value: int | None = getattr(args, "apple_wired_limit_mb", None)
    if value is not None and not 1 <= value <= MAX_WIRED_LIMIT_MB:
        raise CliError(
            f"--apple-wired-limit-mb {value}: must be from 1 to {MAX_WIRED_LIMIT_MB:,} MiB",
            EXIT_USAGE,
        )
    return value


def run_fit(args: argparse.Namespace) -> int:
    from gpudesk.cli.fit_output import fit_text
    from gpudesk.cli.model_file_args import (
        add_file_and_emit,
        file_and_emit_text,
        file_model,
        fit_file_defaults,
    )
    from gpudesk.memory.fit import answer_for, fit_across
    from gpudesk.memory.fit_json import fit_json, gpu_answer_json
    from gpudesk.workload.errors import PlanningInputError
    from gpudesk.workload.presets import load_presets

    if args.list_models:
        _print_presets(load_presets(), as_json=args.json)
        return EXIT_OK
    engine_given = getattr(args, "engine", None) is not None or args.emit is not None
    model_file = fit_file_defaults(args)
    if args.params is None and args.model is None and args.config is None and not model_file:
        raise CliError(
            "give --params N (e.g. 7B), --model PRESET (see --list-models), --config PATH, "
            "--gguf FILE or --safetensors DIR",
            EXIT_USAGE,
        )
    catalog = load_catalog_for(args)
    entry = gpu_entry(args, catalog)
    try:
        model = file_model(args, model_file) if model_file else _fit_model(args)
        estimate_at = _estimator(model, _fit_spec(args), model_file)
        estimate = estimate_at(args.seq)
    except PlanningInputError as exc:
        raise CliError(_flag_words(exc), EXIT_USAGE) from exc
    wired = apple_wired_limit(args)
    counts = tuple(count for count in (1, 2, 4, 8) if count <= args.max_gpus)
    engine = estimate.spec.engine.value if estimate.spec.engine is not None else None
    offload = offload_flags(args, engine, estimate.model.shape)
    sized = args.emit is not None and args.seq is None
    if entry is not None and sized:
        estimate = _longest_fitting(entry, estimate, estimate_at, counts, wired)
    report = fit_across(catalog.entries, estimate, counts, apple_wired_limit_mb=wired, **offload)
    answer = None
    if entry is not None:
        answer = answer_for(entry, report, estimate_at, apple_wired_limit_mb=wired)
    emitted = fit_emit(args, report, model_file, entry, answer)
    resized = emitted is not None and emitted["context"] != report.estimate.spec.seq
    if entry is not None and emitted is not None and sized and resized:
        # the engine's own KV pool holds less than the fit's share: report the command's
        report = fit_across(
            catalog.entries,
            estimate_at(emitted["context"]),
            counts,
            apple_wired_limit_mb=wired,
            **offload,
        )
        answer = answer_for(entry, report, estimate_at, apple_wired_limit_mb=wired)
    if args.json:
        from gpudesk.cli.common import print_json

        document = fit_json(report)
        if answer is not None:
            document["gpu"] = gpu_answer_json(answer)
        print_json(add_file_and_emit(document, model_file, emitted))
    else:
        text = fit_text(report, shape_flags=SHAPE_FLAGS, engine_chosen=engine_given, answer=answer)
        print(text + file_and_emit_text(model_file, emitted))
    return EXIT_OK


def gpu_entry(args: argparse.Namespace, catalog: Any) -> CatalogEntry | None:
    """The catalog GPU ``--gpu`` names (None without it).

    Raises:
        CliError: a name that matches no GPU, with the closest ones, or several (exit 2).
    """
    if args.gpu is None:
        return None
    from gpudesk.catalog.query import NameLookupError, find_entry
    from gpudesk.terminal_text import scrub

    try:
        return find_entry(catalog.entries, args.gpu)
    except NameLookupError as exc:
        # on the error's one line: a newline or tab in the name is shown, not obeyed
        name = scrub(args.gpu).replace("\n", "\\n").replace("\t", "\\t")
        if exc.ambiguous:
            raise CliError(
                f"--gpu {name}: matches several GPUs: {', '.join(exc.candidates)}", EXIT_USAGE
            ) from exc
        text = f"--gpu {name}: no catalog GPU has that name"
        if exc.candidates:
            text += f"; did you mean {' or '.join(exc.candidates[:3])}?"
        raise CliError(f"{text} ('gpudesk list' shows them all)", EXIT_USAGE) from exc


def _estimator(model: Any, spec: Any, model_file: Any) -> Any:
    """The memory estimate of ``spec`` on ``model`` at a sequence length (None: the
    default), with a model file's exact weights."""
    from gpudesk.cli.model_file_args import with_file_weights
    from gpudesk.memory.breakdown import estimate_memory

    def estimate_at(seq: int | None) -> Any:
        at = spec if seq is None else spec.model_copy(update={"seq": seq})
        return with_file_weights(estimate_memory(model, at), model_file)

    return estimate_at


def _longest_fitting(
    entry: CatalogEntry, estimate: Any, estimate_at: Any, counts: tuple[int, ...], wired: Any
) -> Any:
    """``fit --emit`` without ``--seq``: the estimate at the longest context (up to the
    model's) that the fewest GPUs of ``entry`` holding it at all hold; ``estimate``
    itself when no count does (llama.cpp's offload plan, or the refusal, follows)."""
    from gpudesk.memory.fit import fit_longest_context

    shape = estimate.model.shape
    if shape is None or estimate.spec.seq is None or estimate.spec.workload.is_training:
        return estimate
    at_counts = (estimate.fixed_gpus,) if estimate.fixed_gpus is not None else counts
    longest = fit_longest_context(
        entry, estimate_at, at_counts, shape.context, apple_wired_limit_mb=wired
    )
    return estimate if longest is None else estimate_at(longest.context)


def _shape_overrides(args: argparse.Namespace) -> dict[str, int | None]:
    return {field: getattr(args, f"shape_{field}") for field in SHAPE_FLAGS}


def _fit_model(args: argparse.Namespace) -> Any:
    """The model the flags describe: a preset, a config.json or a bare count, reshaped."""
    from gpudesk.memory.breakdown import parse_param_count
    from gpudesk.workload.architecture import load_hf_config, with_overrides
    from gpudesk.workload.presets import architecture_from_shape, find_preset, generic_architecture

    overrides = _shape_overrides(args)
    changed = {key: value for key, value in overrides.items() if value is not None}
    if args.config is not None:
        shape = with_overrides(load_hf_config(args.config), changed)
        return architecture_from_shape(shape, f"config {args.config}", f"{args.config}")
    if args.model is not None:
        preset = find_preset(args.model)
        if not changed or preset.shape is None:
            return preset
        shape = with_overrides(preset.shape, changed)
        what = ", ".join(f"{SHAPE_FLAGS[key]} {value}" for key, value in changed.items())
        return preset.model_copy(
            update={
                "name": f"{preset.name} ({what})",
                "shape": shape,
                "params": shape.total_params,
                "active_params": shape.active_params if shape.is_moe else None,
            }
        )
    return generic_architecture(parse_param_count(args.params), overrides)


def _fit_spec(args: argparse.Namespace) -> Any:
    from gpudesk.memory.breakdown import (
        CrossEntropy,
        DType,
        Engine,
        KvDType,
        Optimizer,
        Sharding,
        Workload,
        WorkloadSpec,
    )
    from gpudesk.workload.quant import QuantFormat

    sharding = "zero3" if args.sharding == "fsdp" else args.sharding
    return WorkloadSpec(
        workload=Workload(args.mode),
        dtype=DType(args.dtype),
        batch=args.batch,
        seq=args.seq,
        kv_dtype=KvDType(args.kv_dtype) if args.kv_dtype else None,
        checkpointing=args.checkpointing,
        optimizer=Optimizer(args.optimizer),
        lora_rank=args.lora_rank,
        flash_attention=not args.no_flash_attention,
        quant=QuantFormat(args.quant) if args.quant else None,
        engine=_spec_engine(args, Engine),
        concurrency=args.concurrency,
        prefill_chunk=args.prefill_chunk,
        ubatch=args.ubatch,
        pure_bf16=args.pure_bf16,
        fused_optimizer=args.fused_optimizer,
        cross_entropy=CrossEntropy(args.cross_entropy),
        lora_bf16=args.lora_bf16,
        offload_optimizer=args.offload_optimizer,
        offload_activations=args.offload_activations,
        sharding=Sharding(sharding),
        gpus=args.gpus if args.gpus is not None else max(1, args.tensor_parallel),
        tensor_parallel=args.tensor_parallel,
    )


def _spec_engine(args: argparse.Namespace, engine_type: Any) -> Any:
    """``--engine``; without it, for an inference, the engine ``--emit`` launches."""
    if args.engine:
        return engine_type(args.engine)
    if args.emit and args.mode == "inference":
        return engine_type(_EMIT_ENGINE[args.emit])
    return None


def _flag_words(exc: Exception) -> str:
    """The core's typed errors, worded with the flags that set the field."""
    from gpudesk.workload.architecture import ConfigFileError, ShapeError
    from gpudesk.workload.errors import PlanningInputError

    if isinstance(exc, ShapeError) and exc.field in SHAPE_FLAGS:
        return f"{SHAPE_FLAGS[exc.field]} {exc.value}: {exc.reason}"
    if isinstance(exc, ShapeError):
        return f"the model shape ({exc.field} = {exc.value!r}): {exc.reason}"
    if isinstance(exc, ConfigFileError):
        where = f"field {exc.field!r} " if exc.field else ""
        return f"--config {exc.path}: {where}{exc.reason}"
    if isinstance(exc, PlanningInputError):
        return flag_words(exc, FIT_FLAGS)
    return str(exc)


def _print_presets(presets: Any, *, as_json: bool) -> None:
    from gpudesk.cli.common import print_json
    from gpudesk.workload.presets import format_param_count

    if as_json:
        print_json([preset.model_dump(mode="json", exclude={"assumed"}) for preset in presets])
        return
    rows = [
        [preset.id, preset.name, format_param_count(preset.params), preset.summary()]
        for preset in presets
    ]
    print(terminal_table(["Preset", "Name", "Params", "Architecture"], rows, right_aligned={2}))
    print("\nSources: gpudesk fit --list-models --json (each preset lists its own).")


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


# cost ----------------------------------------------------------------------------------


#: The flag that sets each cost input (the core names fields, not flags).
COST_FLAGS = {
    "purchase_usd": "--purchase-usd",
    "tdp_w": "--tdp-w",
    "cloud_hourly_usd": "--cloud-hourly",
    "count": "--count",
    "hours_per_day": "--hours-per-day",
    "utilisation": "--utilisation",
    "kwh_price_usd": "--kwh-price",
    "years": "--years",
    "resale_usd": "--resale-usd",
}


def flag_words(exc: PlanningInputError, flags: dict[str, str]) -> str:
    """A planning core's typed error, worded with the flags that set each field.

    ``--hours-per-day 30: must be above 0 and at most 24``; a missing input gets
    "give one with FLAG"; a working alternative becomes "use --mode qlora --dtype bf16".
    """
    if not exc.problems:
        return str(exc)
    parts = []
    for problem in exc.problems:
        flag = flags.get(problem.field)
        if flag is None:
            parts.append(str(exc))
            continue
        if problem.missing:
            parts.append(f"{problem.reason}; give one with {flag}")
            continue
        value = f"{problem.value:g}" if isinstance(problem.value, float) else problem.value
        text = f"{flag} {value}: {problem.reason}"
        fix = [f"{flags[field]} {fixed}" for field, fixed in problem.fix.items() if field in flags]
        parts.append(text + (f"; use {' '.join(fix)}" if fix else ""))
    return "; ".join(dict.fromkeys(parts))


def cost_flag_words(exc: PlanningInputError) -> str:
    """The cost core's typed error, worded with ``cost``'s flags."""
    return flag_words(exc, COST_FLAGS)


def run_cost(args: argparse.Namespace) -> int:
    from gpudesk.catalog.query import NameLookupError, find_entry
    from gpudesk.cost import compute_cost, cost_inputs_for
    from gpudesk.workload.errors import PlanningInputError

    catalog = load_catalog_for(args)
    try:
        entry = find_entry(catalog.entries, args.name)
    except NameLookupError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    try:
        inputs = cost_inputs_for(
            entry,
            cloud_hourly_usd=args.cloud_hourly,
            purchase_usd=args.purchase_usd,
            tdp_w=args.tdp_w,
            count=args.count,
            hours_per_day=args.hours_per_day,
            utilisation=args.utilisation,
            kwh_price_usd=args.kwh_price,
            years=args.years,
            resale_usd=args.resale_usd,
        )
        result = compute_cost(inputs)
    except PlanningInputError as exc:
        raise CliError(cost_flag_words(exc), EXIT_USAGE) from exc
    provenance = _cost_provenance(entry, args)
    at_median = None if args.cloud_hourly is not None else _cost_at_median(entry, inputs)
    if args.json:
        from gpudesk.cli.common import print_json

        document = cost_json(result, provenance)
        if at_median is not None:
            document["at_median_cloud_rate"] = {
                "usd_per_gpu_hour": round(at_median.inputs.cloud_hourly_usd, 4),
                "cloud_monthly_usd": round(at_median.cloud_monthly_usd, 2),
                "break_even_months": _round(at_median.break_even_months, 2),
            }
        print_json(document)
    else:
        text = cost_text(result, provenance)
        if at_median is not None:
            months = at_median.break_even_months
            text += "\n" + wrap_paragraph(
                "At the median on-demand rate "
                f"(${at_median.inputs.cloud_hourly_usd:,.2f}/GPU-hour): "
                f"cloud {_usd(at_median.cloud_monthly_usd)}/month, "
                + (
                    "buying never breaks even."
                    if months is None
                    else f"break-even after {months:.1f} months."
                )
            )
        print(text)
    return EXIT_OK


def _cost_at_median(entry: CatalogEntry, inputs: Any) -> Any:
    """The same cost at the median provider's rate (None with fewer than two providers)."""
    from gpudesk.cost import catalog_cost_figures, compute_cost

    figures = catalog_cost_figures(entry)
    if figures.cloud_median_usd is None or figures.cloud_provider_count < 2:
        return None
    return compute_cost(inputs.model_copy(update={"cloud_hourly_usd": figures.cloud_median_usd}))


def _cost_provenance(entry: CatalogEntry, args: argparse.Namespace) -> dict[str, str]:
    """Where each input came from, in words, with a staleness warning where one applies."""
    from gpudesk.catalog.prices import price_kind_label, stale_note
    from gpudesk.cost import catalog_cost_figures

    figures = catalog_cost_figures(entry)
    if args.purchase_usd is not None:
        purchase = "argument"
    else:
        kind = price_kind_label(figures.price_kind, short=True, system=figures.price_system)
        purchase = f"catalog ({kind}, {figures.price_date})"
        if figures.price_system is not None:
            purchase += "; the whole computer's launch price, not the chip's"
        if figures.price_stale:
            purchase += f"; {stale_note('price', figures.price_date)}"
    rate = figures.cloud_rate
    if args.cloud_hourly is not None:
        cloud = "argument"
    elif rate is None:
        cloud = "catalog"
    else:
        seen = rate.date.isoformat() if rate.date else "undated"
        cloud = f"lowest on-demand catalog rate: {rate.provider}, seen {seen}"
        if rate.note:
            cloud = f"lowest on-demand catalog rate: {rate.provider} {rate.note}, seen {seen}"
        if rate.source:
            cloud += f" ({rate.source})"
        if figures.cloud_rate_stale:
            cloud += f"; {stale_note('rate', rate.date)}"
        if figures.cloud_median_usd is not None and figures.cloud_provider_count > 1:
            cloud += (
                f"; median ${figures.cloud_median_usd:,.2f} across "
                f"{figures.cloud_provider_count} providers (gpudesk prices {entry.id})"
            )
    return {
        "purchase": purchase,
        "cloud_hourly": cloud,
        "tdp": "argument" if args.tdp_w is not None else "catalog",
    }


def cost_json(result: CostResult, provenance: dict[str, str]) -> dict[str, Any]:
    """The ``cost --json`` document: break_even_months (null when never) and the series."""
    return {
        "gpu_id": result.inputs.gpu_id,
        "gpu_name": result.inputs.gpu_name,
        "inputs": result.inputs.model_dump(mode="json"),
        "provenance": provenance,
        "break_even_months": _round(result.break_even_months, 2),
        "break_even_within_horizon": result.break_even_within_horizon,
        "power_monthly_usd": round(result.power_monthly_usd, 2),
        "cloud_monthly_usd": round(result.cloud_monthly_usd, 2),
        "upfront_usd": round(result.upfront_usd, 2),
        "resale_usd": round(result.resale_total_usd, 2),
        "buy_total_usd": round(result.buy_total_usd, 2),
        "cloud_total_usd": round(result.cloud_total_usd, 2),
        "formulas": result.formulas(),
        "series": {
            "months": list(result.months),
            "buy_usd": [round(value, 2) for value in result.buy_cumulative_usd],
            "buy_net_of_resale_usd": [
                round(value, 2) for value in result.buy_net_of_resale_cumulative_usd
            ],
            "cloud_usd": [round(value, 2) for value in result.cloud_cumulative_usd],
        },
        "not_counted": "host machine, cooling, space, admin time; cloud storage and egress",
    }


def _usd(value: float) -> str:
    return f"${value:,.2f}"


#: Where a cost line's formula and source start, under its figure.
_COST_DETAIL_INDENT = " " * 16


def cost_text(result: CostResult, provenance: dict[str, str]) -> str:
    """The human-readable ``cost`` output."""
    inputs = result.inputs
    formulas = result.formulas()
    count = f" × {inputs.count}" if inputs.count > 1 else ""
    horizon = f"{inputs.years:g} year{'s' if inputs.years != 1 else ''}"
    if result.break_even_months is None:
        verdict = (
            "Buying never breaks even: the electricity alone costs at least as much as renting."
        )
    elif result.break_even_within_horizon:
        verdict = f"Buying breaks even after {result.break_even_months:.1f} months."
    else:
        verdict = (
            f"Buying breaks even after {result.break_even_months:.1f} months, beyond the "
            f"{horizon} horizon: renting is cheaper over it."
        )
    width = output_width()

    def item(label: str, value: str, *details: str) -> list[str]:
        # The figure on its label's line; formulas and sources wrap beneath it, so the
        # output reads at 80 columns however long a provider's name or page is.
        return [f"  {label:<10}  {value:>18}".rstrip()] + [
            wrap_paragraph(detail, width, indent=_COST_DETAIL_INDENT) for detail in details
        ]

    lines = [
        wrap_paragraph(f"{inputs.gpu_name}{count}: buy or rent, over {horizon}", width),
        "",
        wrap_paragraph(verdict, width),
        "",
        *item("Purchase", _usd(result.upfront_usd), provenance["purchase"]),
        *item("Resale", _usd(result.resale_total_usd)),
        *item(
            "Power",
            f"{_usd(result.power_monthly_usd)}/month",
            formulas["power"],
            f"TDP from the {provenance['tdp']}",
        ),
        *item(
            "Cloud",
            f"{_usd(result.cloud_monthly_usd)}/month",
            formulas["cloud"],
            f"hourly price: {provenance['cloud_hourly']}",
        ),
        *item("Break-even", "", formulas["break_even"]),
        "",
    ]
    rows = []
    for month in result.months:
        if (month % 12 == 0 and month > 0) or month == result.months[-1]:
            rows.append(
                [
                    f"{month / 12:g}",
                    f"${result.buy_net_of_resale_cumulative_usd[month]:,.2f}",
                    f"${result.cloud_cumulative_usd[month]:,.2f}",
                ]
            )
    table = terminal_table(
        ["Year", "Buy (net of resale)", "Cloud"], rows, right_aligned={1, 2}, width=width - 2
    )
    lines.extend("  " + line for line in table.splitlines())
    lines.append("")
    lines.append(
        wrap_paragraph(
            "Not counted: the host machine, cooling, space and admin time; cloud storage and "
            "egress. Utilisation is the average power draw as a share of TDP while running.",
            width,
        )
    )
    return "\n".join(lines)
