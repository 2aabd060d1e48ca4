"""``gpudesk speed``: how fast a model runs on catalog GPUs, and what a token costs.

Module-level imports stay cheap: the planning modules load inside the handler.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

from gpudesk.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    load_catalog_for,
    path_argument,
)
from gpudesk.cli.emit_args import add_emit_arguments
from gpudesk.cli.flag_tables import Flag, add_flags
from gpudesk.cli.model_file_args import add_model_file_arguments
from gpudesk.cli.output import StderrProgress
from gpudesk.cli.speed_output import (
    DEFAULT_ENGINE,
    RESULT_KEYS as RESULT_KEYS,
    speed_json,
    speed_text,
)
from gpudesk.cli.speed_prices import SORT_KEYS, max_price_argument
from gpudesk.cli.verify_args import add_verify_arguments

if TYPE_CHECKING:
    from gpudesk.speed.estimate import SpeedEstimate, SpeedRequest
    from gpudesk.speed.hardware import DeviceRates
    from gpudesk.speed.physics import ModelCosts

_MODES = ("decode", "prefill", "serve", "train")
_ENGINES = ("llama.cpp", "vllm", "sglang", "tensorrt-llm", "transformers")
_DTYPES = ("fp32", "bf16", "fp16")
_QUANTS = tuple(
    [
        "fp32",
        "bf16",
        "fp16",
        "fp8",
        "int8",
        "int4",
        "nf4",
        "awq",
        "gptq",
        "mxfp4",
        "q4_0",
        "q4_k_m",
        "q5_k_m",
        "q6_k",
        "q8_0",
    ]
)
_KV = ("fp16", "bf16", "fp8", "q8_0", "q4_0", "fp32")
_METHODS = ("full", "lora", "qlora")
_BACKENDS = ("cuda", "rocm", "vulkan", "metal", "sycl", "cpu")
_CHECKPOINTING = ("none", "selective", "full")

#: SpeedRequest / CostSettings field -> the flag a person typed.
FLAG_FOR_FIELD = {
    "count": "--count",
    "batch": "--batch",
    "concurrency": "--concurrency",
    "seq_in": "--seq-in",
    "seq_out": "--seq-out",
    "context": "--context",
    "tokens": "--tokens",
    "mfu": "--mfu",
    "backend": "--backend",
    "tp": "--tp",
    "pp": "--pp",
    "cp": "--cp",
    "ep": "--ep",
    "dp": "--dp",
    "rate": "--rate",
    "num_prompts": "--num-prompts",
    "random_range_ratio": "--random-range-ratio",
    "dataset": "--dataset",
    "slo": "--slo",
    "max_num_seqs": "--max-num-seqs",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "max_model_len": "--max-model-len",
    "gpu_memory_utilization": "--gpu-memory-utilization",
}


def rate_argument(text: str) -> float:
    """``--rate``: requests/s above 0, or inf."""
    if text.strip().lower() in ("inf", "infinity"):
        return math.inf
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of requests/s or inf") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: a rate must be above 0 (or inf)")
    return value


SPEED_DESCRIPTION = (
    "Estimate tokens/s (with a range, the limit that applies and its basis) for a model "
    "on catalog GPUs, from a model fitted to published measurements and calibrated with "
    "this machine's benchmark when there is one; and USD per 1M tokens or per training "
    "run, renting and owning. Without --gpu, every catalog GPU that holds the workload "
    "on up to --count cards is ranked."
)
#: what the model is (one of them; the model-file flags follow)
SPEED_MODEL_FLAGS: tuple[Flag, ...] = (
    (("--model",), {"metavar": "PRESET", "help": "a bundled preset (gpudesk fit --list-models)"}),
    (("--params",), {"metavar": "N", "help": "parameter count (7B, 350M): an assumed shape"}),
    (
        ("--config",),
        {
            "metavar": "PATH",
            "type": path_argument,
            "help": "a Hugging Face config.json or its folder",
        },
    ),
)
SPEED_FLAGS: tuple[Flag, ...] = (
    (
        ("--mode",),
        {
            "choices": _MODES,
            "default": "decode",
            "help": "the workload (default decode: generating tokens, --batch requests at once)",
        },
    ),
    (
        ("--gpu",),
        {"action": "append", "metavar": "NAME", "help": "catalog id or name (repeatable)"},
    ),
    (("--all",), {"action": "store_true", "help": "rank every catalog GPU (the default)"}),
    (
        ("--count",),
        {
            "type": int,
            "metavar": "N",
            "help": "GPUs: with --gpu, how many (default 1); else the most to consider (default 8)",
        },
    ),
    (("--dtype",), {"choices": _DTYPES, "help": "weight dtype when --quant is not given"}),
    (("--quant",), {"choices": _QUANTS, "help": "weight format (default bf16)"}),
    (
        ("--kv-quant",),
        {"choices": _KV, "default": "fp16", "help": "KV-cache format (default fp16)"},
    ),
    (
        ("--engine",),
        {
            "choices": _ENGINES,
            "help": "inference engine (default vllm; fit's default is transformers)",
        },
    ),
    (
        ("--backend",),
        {
            "choices": _BACKENDS,
            "help": "llama.cpp backend (default: the GPU vendor's: cuda, rocm, metal, sycl)",
        },
    ),
    (
        ("--tp",),
        {
            "type": int,
            "metavar": "N",
            "help": "tensor-parallel size; serve/decode: tp × pp × dp GPUs in all (--tp 8 "
            "alone is 8 GPUs); train: must divide --count",
        },
    ),
    (
        ("--pp",),
        {"type": int, "metavar": "N", "help": "pipeline-parallel size (serve, decode, train)"},
    ),
    (
        ("--dp",),
        {"type": int, "metavar": "N", "help": "serve/decode: copies of the model (data parallel)"},
    ),
    (("--cp",), {"type": int, "metavar": "N", "help": "train: context-parallel size"}),
    (
        ("--ep",),
        {
            "type": int,
            "metavar": "N",
            "help": "expert-parallel size: a mixture of experts' experts over N GPUs "
            "(serve: N divides tp × dp)",
        },
    ),
    (
        ("--batch",),
        {"type": int, "default": 1, "metavar": "B", "help": "decode/prefill batch (default 1)"},
    ),
    (
        ("--concurrency",),
        {
            "type": int,
            "metavar": "C",
            "help": "serve: at most C requests in flight, as vllm bench serve "
            "--max-concurrency (default: no cap). Until 2026-12 it meant sequences decoding "
            "at once: that is --max-num-seqs now",
        },
    ),
    (
        ("--rate",),
        {
            "type": rate_argument,
            "metavar": "R",
            "help": "serve: requests per second, Poisson arrivals; inf (the default) sends "
            "them all at once",
        },
    ),
    (
        ("--num-prompts",),
        {
            "type": int,
            "default": 1000,
            "metavar": "N",
            "help": "serve: requests in the simulated benchmark (default 1000)",
        },
    ),
    (
        ("--dataset",),
        {
            "choices": ("random", "sharegpt"),
            "default": "random",
            "help": "serve: how request lengths are drawn, as vllm bench serve's "
            "--dataset-name: random (--seq-in/--seq-out, spread by --random-range-ratio) or "
            "sharegpt (ShareGPT's heavy-tailed lengths averaging --seq-in and --seq-out, "
            "which must be 5 to 1000; default random)",
        },
    ),
    (
        ("--random-range-ratio",),
        {
            "type": float,
            "default": 0.0,
            "metavar": "R",
            "help": "serve: draw each prompt and output length uniformly from len x (1 - R) "
            "to len x (1 + R), as vllm bench serve does (default 0: fixed lengths)",
        },
    ),
    (
        ("--slo",),
        {
            "metavar": "BOUNDS",
            "help": "serve: ttft=MS,tpot=MS[,e2e=MS][,p=PCT]: goodput and the highest request "
            "rate at which PCT%% (default 90) of requests meet every bound",
        },
    ),
    (
        ("--max-num-seqs",),
        {
            "type": int,
            "metavar": "N",
            "help": "serve: the engine's cap on requests running at once (default: the "
            "engine's for the GPU, vLLM 256 or 1024; SGLang's --max-running-requests, "
            "2048-4096 from its KV pool)",
        },
    ),
    (
        ("--max-num-batched-tokens",),
        {
            "type": int,
            "metavar": "N",
            "help": "serve: tokens per engine step (default: the engine's, vLLM 2048 or 8192; "
            "SGLang's --chunked-prefill-size, 2048 to 16384 by GPU memory)",
        },
    ),
    (
        ("--max-model-len",),
        {"type": int, "metavar": "N", "help": "serve: the longest request the engine accepts"},
    ),
    (
        ("--seq-in",),
        {"type": int, "metavar": "N", "help": "prompt tokens (train: sequence length)"},
    ),
    (("--seq-out",), {"type": int, "metavar": "N", "help": "generated tokens"}),
    (
        ("--context",),
        {"type": int, "metavar": "N", "help": "decode: KV-cache length (default in + out/2)"},
    ),
    (("--tokens",), {"type": float, "metavar": "N", "help": "train: tokens to train on (1e9)"}),
    (("--method",), {"choices": _METHODS, "default": "full", "help": "train: full, lora, qlora"}),
    (
        ("--checkpointing",),
        {
            "choices": _CHECKPOINTING,
            "default": "none",
            "help": "train: activation recomputation",
        },
    ),
    (("--mfu",), {"type": float, "metavar": "F", "help": "train: utilisation to assume (0-1)"}),
    (
        ("--sort",),
        {
            "choices": SORT_KEYS,
            "help": "order: tokens_s (the ranking, the default), usd_per_tokens_s (purchase "
            "price per tokens/s, cheapest first) or price (purchase price, cheapest first); "
            "GPUs without a catalog price come last",
        },
    ),
    (
        ("--max-price-usd",),
        {
            "type": max_price_argument,
            "metavar": "N",
            "help": "only GPUs whose purchase price, for all their GPUs (the catalog's price "
            "× the count), is at most N USD; those without a catalog price are left out "
            "and named",
        },
    ),
    (("--cloud-hourly",), {"type": float, "metavar": "USD", "help": "rent price per GPU-hour"}),
    (
        ("--years",),
        {"type": float, "default": 3.0, "metavar": "Y", "help": "owning: years to amortise over"},
    ),
    (
        ("--no-calibration",),
        {
            "action": "store_true",
            "help": "ignore this machine's benchmark history and your stored measurements",
        },
    ),
)


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``speed``."""
    from gpudesk.cli.plan_cmds import add_apple_wired_limit, add_offload_arguments

    speed = subparsers.add_parser(
        "speed",
        help="how fast: tokens/s for decode, prefill, serving or training, and $ per token",
        description=SPEED_DESCRIPTION,
    )
    what = speed.add_mutually_exclusive_group()
    add_flags(what, SPEED_MODEL_FLAGS)
    add_model_file_arguments(what)
    add_flags(speed, SPEED_FLAGS)
    add_offload_arguments(speed)
    add_apple_wired_limit(speed)
    speed.add_argument("--json", action="store_true", help="machine-readable output")
    add_verify_arguments(speed)
    add_emit_arguments(speed, with_gpu=False)
    speed.set_defaults(handler=run_speed)


def _usage(message: str) -> CliError:
    return CliError(message, EXIT_USAGE)


def _model_costs(args: argparse.Namespace) -> tuple[ModelCosts, dict[str, Any]]:
    from gpudesk.memory.breakdown import parse_param_count
    from gpudesk.speed.estimate import Engine, KvFormat, Mode, model_costs
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.architecture import assumed_shape, load_hf_config
    from gpudesk.workload.errors import PlanningInputError
    from gpudesk.workload.quant import QuantFormat

    model_file = getattr(args, "model_file", None)
    if model_file is not None:
        from gpudesk.cli.model_file_args import speed_file_costs

        return speed_file_costs(args, model_file)
    if args.model is None and args.params is None and args.config is None:
        raise _usage(
            "give --model PRESET, --params N, --config PATH, --gguf FILE or --safetensors DIR"
        )
    quant_name = args.quant or args.dtype or "bf16"
    described: dict[str, Any] = {}
    try:
        if args.model is not None:
            shape = shape_for(args.model)
            described["model"] = args.model
        elif args.params is not None:
            shape, assumed = assumed_shape(parse_param_count(args.params))
            described["params"] = args.params
            described["assumed_fields"] = list(assumed)
        else:
            shape = load_hf_config(args.config)
            described["config"] = str(args.config)
    except PlanningInputError as exc:
        flag = "--model" if args.model else "--params" if args.params else "--config"
        raise _usage(f"{flag}: {exc}") from exc
    quant = QuantFormat(quant_name)
    if args.mode == "train" and args.method == "qlora":
        quant = QuantFormat.NF4
    gguf = Engine(args.engine).weights_in_gguf(Mode(args.mode))
    costs = model_costs(shape, quant, KvFormat(args.kv_quant), gguf=gguf)
    described.update(
        {
            "shape": shape.summary(),
            "params_total": shape.total_params,
            "params_active": shape.active_params,
            "quant": quant.value,
            "kv_quant": args.kv_quant,
            "weights_gb": round(costs.in_memory_bytes / 1e9, 3),
            "weights_streamed_per_token_gb": round(costs.streamed_bytes / 1e9, 3),
        }
    )
    return costs, described


def _request(args: argparse.Namespace) -> SpeedRequest:
    from gpudesk.speed.data import Checkpointing
    from gpudesk.speed.estimate import (
        Backend,
        Engine,
        KvFormat,
        Mode,
        SpeedInputError,
        SpeedRequest,
        TrainMethod,
    )
    from gpudesk.workload.quant import QuantFormat

    if args.tokens is not None and not math.isfinite(args.tokens):
        raise _usage("--tokens must be a finite number such as 1e9")
    if args.mfu is not None and not math.isfinite(args.mfu):
        raise _usage("--mfu must be a number above 0 and at most 1")
    slo = _slo(args)
    _check_serving_flags(args)
    count = _count(args)
    request = SpeedRequest(
        mode=Mode(args.mode),
        engine=Engine(args.engine),
        quant=QuantFormat(args.quant or args.dtype or "bf16"),
        kv_quant=KvFormat(args.kv_quant),
        count=count,
        backend=Backend(args.backend) if args.backend else None,
        tp=args.tp,
        pp=args.pp,
        cp=args.cp,
        ep=args.ep,
        dp=args.dp,
        batch=args.batch,
        concurrency=args.concurrency,
        rate=None if args.rate is None or math.isinf(args.rate) else args.rate,
        num_prompts=args.num_prompts,
        random_range_ratio=args.random_range_ratio,
        dataset=args.dataset,
        slo_ttft_ms=slo.ttft_ms if slo else None,
        slo_tpot_ms=slo.tpot_ms if slo else None,
        slo_e2e_ms=slo.e2e_ms if slo else None,
        slo_share=slo.share if slo else 0.9,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens,
        max_model_len=args.max_model_len,
        gpu_memory_utilization=args.emit_utilisation if args.mode == "serve" else None,
        seq_in=args.seq_in,
        seq_out=args.seq_out,
        context=args.context,
        tokens=args.tokens,
        train_method=TrainMethod(args.method),
        checkpointing=Checkpointing(args.checkpointing),
        mfu=args.mfu,
        gpu_layers=args.gpu_layers,
        cpu_moe=args.cpu_moe,
    )
    try:
        resolved = request.resolved()
        if args.count is not None and not args.gpu and not _layout_count(args):
            request.model_copy(update={"count": args.count}).resolved()
    except SpeedInputError as exc:
        raise _usage(f"{FLAG_FOR_FIELD.get(exc.field, exc.field)}: {exc}") from exc
    return resolved


class RankProgress(StderrProgress):
    """Ranking under load takes seconds: which GPU it is at, on one rewritten line of a
    terminal's stderr (nothing when stderr is a file or a pipe, or for other modes)."""

    def __init__(self, *, enabled: bool) -> None:
        super().__init__(enabled=enabled)

    def gpu(self, done: int, total: int, name: str) -> None:
        """``rank_catalog``'s ``on_gpu``."""
        self.show(done / max(1, total), f"ranking under load: {name} ({done + 1} of {total})")


_SERVE_ONLY = (
    ("rate", "--rate"),
    ("slo", "--slo"),
    ("max_num_seqs", "--max-num-seqs"),
    ("max_num_batched_tokens", "--max-num-batched-tokens"),
    ("max_model_len", "--max-model-len"),
    ("concurrency", "--concurrency"),
)


def _check_serving_flags(args: argparse.Namespace) -> None:
    """Flags of one mode given with another: said, not ignored."""
    if args.mode != "serve":
        for name, flag in _SERVE_ONLY:
            if getattr(args, name) is not None:
                raise _usage(f"{flag} applies to --mode serve")
        if args.num_prompts != 1000:
            raise _usage("--num-prompts applies to --mode serve")
        if args.random_range_ratio != 0.0:
            raise _usage("--random-range-ratio applies to --mode serve")
        if args.dataset != "random":
            raise _usage("--dataset applies to --mode serve")
    if args.mode == "train" and args.dp is not None:
        raise _usage(
            "--dp applies to --mode serve and decode (training's data parallelism "
            "is what tp × pp × cp leaves of --count)"
        )
    if args.mode not in ("train",) and args.cp is not None:
        raise _usage("--cp is a training layout: give it with --mode train")
    if args.mode == "prefill" and any(
        getattr(args, name) is not None for name in ("tp", "pp", "dp", "ep")
    ):
        raise _usage("--tp/--pp/--dp/--ep apply to --mode serve, decode and train")


def _slo(args: argparse.Namespace) -> Any:
    if args.slo is None:
        return None
    from gpudesk.speed.under_load import SloError, parse_slo

    try:
        return parse_slo(args.slo)
    except SloError as exc:
        raise _usage(f"--slo: {exc}") from exc


def _layout_count(args: argparse.Namespace) -> int | None:
    """GPUs the serve/decode layout flags name (tp × pp × dp), when tp is given."""
    if args.mode not in ("serve", "decode") or args.tp is None:
        return None
    return int(args.tp * (args.pp or 1) * (args.dp or 1))


def _count(args: argparse.Namespace) -> int:
    """The GPU count of the request: --count; for serve/decode also what --tp × --pp ×
    --dp name (they must agree); 1 when ranking without either."""
    named = _layout_count(args)
    if named is not None:
        if args.count is not None and args.count != named:
            raise _usage(
                f"--count {args.count} and --tp × --pp × --dp = {named} disagree; give one"
            )
        return named
    if args.count is not None and (args.gpu or args.mode == "train"):
        return int(args.count)
    return 1


def _check_cost_flags(args: argparse.Namespace) -> None:
    if args.cloud_hourly is not None and not (
        math.isfinite(args.cloud_hourly) and 0 < args.cloud_hourly <= 10_000
    ):
        raise _usage("--cloud-hourly must be a price above 0 and at most 10,000 USD")
    if not (math.isfinite(args.years) and 0 < args.years <= 20):
        raise _usage("--years must be above 0 and at most 20")


def calibrations(args: argparse.Namespace, entries: Any) -> dict[str, DeviceRates]:
    """This machine's benchmarks (newest per catalog GPU), as calibrated rates."""
    if args.no_calibration:
        return {}
    from gpudesk.bench.history import list_runs
    from gpudesk.speed.hardware import rates_for
    from gpudesk.speed.planner import calibrate, calibration_figures

    items, _problems = list_runs()
    figures = calibration_figures([item.result for item in items])
    by_id = {entry.id: entry for entry in entries}
    out: dict[str, DeviceRates] = {}
    for gpu_id, (copy, gemm, when) in figures.items():
        entry = by_id.get(gpu_id)
        if entry is not None:
            out[gpu_id] = calibrate(
                rates_for(entry), copy_gbs=copy, gemm_tflops=gemm, measured_at=when
            )
    return out


def host_memories(args: argparse.Namespace, calibrated: dict[str, Any]) -> dict[str, Any]:
    """This machine's host bandwidth (its CPU benchmark) for this machine's GPUs: the
    GPUs with a benchmark here; other GPUs get the stated default."""
    if args.no_calibration or not calibrated:
        return {}
    from gpudesk.bench.history import list_runs
    from gpudesk.speed.planner import host_memory_figure

    items, _problems = list_runs()
    host = host_memory_figure(item.result for item in items)
    return {} if host is None else dict.fromkeys(calibrated, host)


def run_speed(args: argparse.Namespace) -> int:
    _check_flags(args)
    engine_chosen = args.engine is not None
    if not engine_chosen:
        args.engine = DEFAULT_ENGINE
    from gpudesk.cli.model_file_args import speed_file_defaults

    args.model_file = speed_file_defaults(args)
    from gpudesk.cli.plan_cmds import apple_wired_limit
    from gpudesk.speed.holding import memory_estimate
    from gpudesk.workload.errors import PlanningInputError

    wired = apple_wired_limit(args)
    request = _request(args)
    costs, model = _model_costs(args)
    try:  # what ``fit`` would refuse, refused here in the same words
        memory_estimate(costs, request)
    except PlanningInputError as exc:
        raise _usage(f"the workload: {exc}") from exc
    from gpudesk.cli.plan_cmds import offload_flags

    offload_flags(args, request.engine.value, costs.shape)
    if request.mode.value != "decode" and (args.gpu_layers is not None or args.cpu_moe is not None):
        raise _usage("--gpu-layers/--cpu-moe: partial offload is estimated for --mode decode")
    catalog = load_catalog_for(args)
    from gpudesk.cli.verify_args import add_this_cpu, run_verify

    add_this_cpu(args, catalog)
    results, not_holding, not_supported = _estimates(args, catalog, costs, request, wired)
    from gpudesk.cli.measurements_cmd import calibrated_results

    # calibrated with what was stored before this run: a --verify run's own row would
    # make the table's estimate its measurement (its ratio is to the uncalibrated one)
    calibrated_before = calibrated_results(args, results)
    verified = run_verify(args, request, results, model)
    results = calibrated_before
    _print_speed(
        args, catalog, request, model, results, not_holding, not_supported, verified, engine_chosen
    )
    return EXIT_OK


def _check_flags(args: argparse.Namespace) -> None:
    """The flags that contradict each other, and the cost flags' ranges."""
    if args.all and args.gpu:
        raise _usage("--all ranks every GPU: give it or --gpu, not both")
    if args.quant and args.dtype and args.quant in _DTYPES and args.quant != args.dtype:
        raise _usage(f"--dtype {args.dtype} and --quant {args.quant} disagree; give one")
    _check_cost_flags(args)


def _estimates(
    args: argparse.Namespace,
    catalog: Any,
    costs: ModelCosts,
    request: SpeedRequest,
    wired: int | None,
) -> tuple[list[SpeedEstimate], list[str], list[tuple[str, str]]]:
    """The estimates for the ``--gpu`` GPUs, or every catalog GPU ranked; the GPUs that
    do not hold the workload (ranking only); and those the engine cannot run it on, with
    the reason (never estimated).

    Raises:
        CliError: no ``--gpu`` GPU can run the request, or one does not hold it.
    """
    from gpudesk.catalog.query import NameLookupError, find_entry
    from gpudesk.speed.estimate import NotRunnable
    from gpudesk.speed.planner import (
        CostSettings,
        estimates_for_entries,
        rank_catalog,
        split_supported,
    )

    settings = CostSettings(cloud_hourly_usd=args.cloud_hourly, years=args.years)
    calibrated = calibrations(args, catalog.entries)
    if not args.gpu:
        progress = RankProgress(enabled=request.mode.value == "serve" and sys.stderr.isatty())
        try:
            ranked = rank_catalog(
                catalog.entries,
                costs,
                request,
                max_count=_layout_count(args) or args.count or 8,
                settings=settings,
                calibrated=calibrated,
                apple_wired_limit_mb=wired,
                hosts=host_memories(args, calibrated),
                on_gpu=progress.gpu,
            )
        finally:
            progress.close()
        return list(ranked.results), list(ranked.not_holding), list(ranked.not_supported)
    entries = []
    for name in args.gpu:
        try:
            entries.append(find_entry(catalog.entries, name))
        except NameLookupError as exc:
            raise _usage(f"--gpu: {exc}") from exc
    entries, refused = split_supported(entries, request)
    if not entries:
        raise _usage(
            "--gpu: not supported: " + "; ".join(f"{gpu}: {reason}" for gpu, reason in refused)
        )
    try:
        results = estimates_for_entries(
            entries,
            costs,
            request,
            settings=settings,
            calibrated=calibrated,
            apple_wired_limit_mb=wired,
            hosts=host_memories(args, calibrated),
        )
    except NotRunnable as exc:
        raise _usage(f"--gpu/--count: {exc}") from exc
    return results, [], refused


def _print_speed(
    args: argparse.Namespace,
    catalog: Any,
    request: SpeedRequest,
    model: dict[str, Any],
    results: list[SpeedEstimate],
    not_holding: list[str],
    not_supported: list[tuple[str, str]],
    verified: dict[str, Any] | None,
    engine_chosen: bool,
) -> None:
    """Print the JSON document or the text: the estimates, the cloud rates, the
    ``--verify`` measurement and the ``--emit`` command."""
    from gpudesk.cli.emit_args import emit_text, speed_emit
    from gpudesk.cli.price_lines import rate_lines, rate_records
    from gpudesk.cli.speed_prices import prices_for, sorted_results, within_price
    from gpudesk.cli.verify_args import verify_text

    by_id = {entry.id: entry for entry in catalog.entries}
    prices = prices_for(results, by_id)
    results, over_price, unpriced = within_price(results, prices, args.max_price_usd)
    results = sorted_results(results, prices, args.sort)
    document = speed_json(request, model, results, not_holding, not_supported, prices)
    if args.max_price_usd is not None:
        document["over_max_price"] = over_price
        document["no_price"] = unpriced
    cloud_rates = {} if args.cloud_hourly is not None else rate_records(results, by_id)
    if verified is not None:
        document["verify"] = verified
    emitted = speed_emit(args, request, results, catalog)
    if emitted is not None:
        document["emit"] = emitted
    if args.json:
        from gpudesk.cli.common import print_json

        document["cloud_rates"] = cloud_rates
        print_json(document)
    else:
        print(
            speed_text(
                request,
                model,
                results,
                not_holding,
                not_supported,
                engine_chosen=engine_chosen,
                prices=prices,
                names={gpu_id: entry.name for gpu_id, entry in by_id.items()},
                **_empty_note(args),
            )
        )
        if args.max_price_usd is not None:
            print(_price_limit_text(args.max_price_usd, over_price, unpriced))
        if cloud_rates:
            print("\n".join(rate_lines(results, by_id)))
        if verified is not None:
            print(verify_text(verified))
        if emitted is not None:
            print(emit_text(emitted))


def _empty_note(args: argparse.Namespace) -> dict[str, str]:
    """What to say when no GPU is left: with --max-price-usd, that none is within it."""
    if args.max_price_usd is None:
        return {}
    return {
        "empty": f"No GPU that holds the workload costs at most ${args.max_price_usd:,.0f} "
        "(the catalog's price × the count)."
    }


def _price_limit_text(max_usd: float, over: list[str], unpriced: list[str]) -> str:
    """What ``--max-price-usd`` left out: the GPUs over it and those without a price."""
    from gpudesk.cli.textwidth import wrap_paragraph

    lines = []
    if over:
        lines += ["", f"Over --max-price-usd {max_usd:,.0f} ({len(over)}): " + ", ".join(over)]
    if unpriced:
        lines += [
            "",
            f"Left out, no catalog price to compare ({len(unpriced)}): " + ", ".join(unpriced),
        ]
    return "\n".join(wrap_paragraph(line) for line in lines)
