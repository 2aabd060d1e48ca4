"""``fit``'s text output: the memory breakdown, the GPUs that hold it, and the sources.

It fits 80 columns (issue 29); the JSON document is :func:`gpudesk.memory.fit_json.fit_json`.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from gpudesk.cli.common import format_table
from gpudesk.cli.textwidth import terminal_table
from gpudesk.units import GB_PER_GIB_TEXT, gib, gib_text

if TYPE_CHECKING:
    from gpudesk.memory.breakdown import MemoryEstimate
    from gpudesk.memory.fit import FitReport, GpuAnswer

#: fit's text output fits 80 columns (issue 29)
TEXT_WIDTH = 80

#: Said under ``fit``'s header when --engine was not given (speed's default differs).
FIT_DEFAULT_ENGINE_NOTE = "engine: {engine} by default (--engine chooses; speed's default is vllm)"

USABLE_NOTE = (
    "Usable: the GPU's memory as sold (GPU vendors' GB are GiB: a '24 GB' card holds "
    "24 GiB), less what the driver keeps (ECC on datacenter GDDR cards), times the "
    "engine's share (vLLM 0.9); on a Mac, the GPU wired limit (--apple-wired-limit-mb "
    "once raised). An SoC is one per machine."
)

#: The breakdown's heading: the one unit of memory sizes, and where the other appears.
MEMORY_HEADING = (
    "Memory in GiB = 2^30 bytes, as GPUs are sold (a '24 GB' card holds 24 GiB) and "
    f"nvidia-smi counts; 1 GiB = {GB_PER_GIB_TEXT} GB of 10^9 bytes, the unit model "
    "downloads are sized in"
)


def _wrap(text: str, indent: str, subsequent: str | None = None) -> str:
    return textwrap.fill(
        text,
        width=TEXT_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent if subsequent is None else subsequent,
        break_on_hyphens=False,
        break_long_words=True,
    )


def describe_workload(estimate: MemoryEstimate) -> str:
    """The workload in one line: mode, weights, engine, batch, tokens, and the rest."""
    spec = estimate.spec
    weights = spec.quant.label if spec.quant is not None else str(spec.dtype)
    bits = [spec.workload.label, f"{weights} weights"]
    if spec.quant is not None and spec.quant.value != spec.dtype.value:
        bits[1] = f"{weights} weights, {spec.dtype} compute"
    if spec.engine is not None:
        bits.append(spec.engine.value)
    bits.append(f"batch {spec.batch}")
    if spec.seq is not None:
        bits.append(f"{spec.seq:,} tokens")
    if estimate.model.has_kv_cache and spec.workload.value == "inference":
        bits.append(f"KV cache {spec.kv_dtype}")
    if spec.workload.value == "inference" and spec.concurrency is not None:
        bits.append(f"{spec.concurrency} concurrent sequences")
    if spec.workload.value != "inference":
        bits.append(spec.optimizer.label)
        bits.append("gradient checkpointing" if spec.checkpointing else "no checkpointing")
        bits.extend(
            label
            for flag, label in (
                (spec.pure_bf16, "pure bf16"),
                (spec.fused_optimizer, "step fused into backward"),
                (spec.cross_entropy.value != "full", f"{spec.cross_entropy.value} cross-entropy"),
                (spec.offload_optimizer, "optimizer offloaded"),
                (spec.offload_activations, "activations offloaded"),
                (spec.sharding.value != "none", spec.sharding.value.upper()),
            )
            if flag
        )
    if spec.gpus > 1:
        bits.append(f"per GPU of {spec.gpus} (tensor parallel {spec.tensor_parallel})")
    if spec.workload.value in ("lora", "qlora"):
        bits.append(f"LoRA rank {spec.lora_rank}")
    return ", ".join(bits)


def fit_text(
    report: FitReport,
    *,
    shape_flags: dict[str, str],
    engine_chosen: bool = True,
    answer: GpuAnswer | None = None,
) -> str:
    """The human-readable ``fit`` output; without ``engine_chosen`` a line says the
    engine is the default (``speed`` defaults to another). ``shape_flags`` names the
    flag that sets each shape field, for the line that says the shape is assumed.
    With ``answer`` (``--gpu``) the answer for that GPU stands where the catalog's
    tables would."""
    estimate = report.estimate
    lines = _header_lines(estimate, engine_chosen)
    sources = _memory_lines(estimate, shape_flags, lines)
    if answer is not None:
        lines.extend(gpu_answer_lines(answer, report))
    else:
        lines.extend(_fits_lines(report))
        lines.extend(_offload_lines(report))
        lines.extend(_left_out_lines(report))
    lines.extend(_decode_lines(estimate))
    lines.append("")
    lines.append("Sources:")
    lines.extend(
        _wrap(f"[{index}] {source}", "  ", "      ") for index, source in enumerate(sources, 1)
    )
    lines.extend(_wrap(f"model: {source}", "  ", "      ") for source in estimate.model.sources)
    return "\n".join(lines)


def _header_lines(estimate: MemoryEstimate, engine_chosen: bool) -> list[str]:
    model = estimate.model
    lines = [
        _wrap(f"{model.name}: {describe_workload(estimate)}", "", "  "),
        _wrap(model.summary(), "  "),
    ]
    spec = estimate.spec
    if not engine_chosen and spec.engine is not None and not spec.workload.is_training:
        lines.append(_wrap(FIT_DEFAULT_ENGINE_NOTE.format(engine=spec.engine.value), "  "))
    lines.append("")
    return lines


def _memory_lines(
    estimate: MemoryEstimate, shape_flags: dict[str, str], lines: list[str]
) -> list[str]:
    """Append the memory breakdown to ``lines``; return its sources, in citation order."""
    sources: list[str] = []
    lines.append(_wrap(MEMORY_HEADING, "", "  "))
    for part in estimate.parts:
        for source in part.source.split("; "):
            if source not in sources:
                sources.append(source)
        refs = ",".join(str(sources.index(source) + 1) for source in part.source.split("; "))
        lines.append(f"  {part.label:<20}{gib(part.gb):>9.2f} GiB   [{refs}]")
        lines.append(_wrap(part.formula, " " * 6))
    lines.append(
        f"  {'Total':<20}{gib(estimate.total_gb):>9.2f} GiB  = "
        f"{estimate.total_gb * 1e9 / 2**20:,.0f} MiB = {estimate.total_gb:,.2f} GB"
    )
    lines.append(f"  {'of which tensors':<20}{gib(estimate.allocated_gb):>9.2f} GiB")
    if estimate.host_gb:
        lines.append(f"  {'in host memory':<20}{gib(estimate.host_gb):>9.2f} GiB  (not on the GPU)")
    lines.append(_wrap(estimate.compares_with, "  "))
    model = estimate.model
    if model.assumed_fields:
        lines.append(
            _wrap(
                "The shape is partly assumed; give --config PATH, or "
                + ", ".join(shape_flags[f] for f in model.assumed_fields if f in shape_flags)
                + ", for the model's real shape.",
                "  ",
            )
        )
    if estimate.notes:
        lines.append("")
        lines.extend(_wrap(note, "  - ", "    ") for note in estimate.notes)
    return sources


def _fit_row(result: Any, *, with_count: bool, decode: bool) -> list[str]:
    cells = [result.gpu_id]
    if with_count:
        cells.append(f"{result.count}")
    else:  # as sold: the vendor's "24 GB" is 24 GiB
        cells.append("n/a" if result.memory_gb is None else f"{result.memory_gb:g}")
    # GiB, as the table's title says (a unit in every cell ran the table past 80 columns)
    cells += [
        f"{gib(result.usable_gb):.1f}",
        f"{gib(result.per_gpu_gb):.1f}",
        f"{gib(result.headroom_gb):+.1f}",
    ]
    if decode:
        value = result.decode_tokens_per_s_upper_bound
        cells.append("n/a" if value is None else f"{value:,.0f}")
    return cells


def _fits_lines(report: FitReport) -> list[str]:
    """The GPUs that hold it alone, then those that hold it as several."""
    from gpudesk.memory.fit import PARALLELISM_NOTE

    single = [result for result in report.fits if result.count == 1]
    multi = [result for result in report.fits if result.needs_parallelism]
    decode = report.estimate.decode_bytes_per_token is not None
    tok_s = ["tok/s<="] if decode else []
    lines = [""]
    if single:
        lines.append(f"Fits on one GPU ({len(single)}; memory in GiB):")
        rows = [_fit_row(r, with_count=False, decode=decode) for r in single]
        headers = ["GPU", "Memory", "Usable", "Need", "Headroom", *tok_s]
        table = format_table(headers, rows, right_aligned={1, 2, 3, 4, 5})
        lines.extend("  " + line for line in table.splitlines())
    else:
        lines.append("Fits on no single GPU of the catalog.")
    if multi:
        lines.append("")
        lines.append(
            _wrap(
                f"Fits on several GPUs ({len(multi)}; memory in GiB per GPU): {PARALLELISM_NOTE}:",
                "",
            )
        )
        rows = [_fit_row(r, with_count=True, decode=decode) for r in multi]
        headers = ["GPU", "GPUs", "Usable/GPU", "Need/GPU", "Headroom", *tok_s]
        table = format_table(headers, rows, right_aligned={1, 2, 3, 4, 5})
        lines.extend("  " + line for line in table.splitlines())
    if single or multi:
        lines.append("")
        lines.append(_wrap(USABLE_NOTE, ""))
    return lines


def _offload_lines(report: FitReport) -> list[str]:
    if not report.offloaded:
        return []
    lines = [
        "",
        _wrap(
            f"Fits one GPU with part in host memory ({len(report.offloaded)}; memory in "
            "GiB; llama.cpp runs those layers on the CPU, so decode is slower):",
            "",
        ),
    ]
    offload_rows = [
        [
            r.gpu_id,
            f"{gib(r.usable_gb):.1f}",
            f"{gib(r.offload.gpu_bytes / 1e9):.1f}",
            f"{gib(r.offload.host_gb):.1f}",
            r.offload.flag,
        ]
        for r in report.offloaded
        if r.offload is not None
    ]
    table = terminal_table(
        ["GPU", "Usable", "On GPU", "In host", "llama.cpp"], offload_rows, {1, 2, 3}
    )
    lines.extend("  " + line for line in table.splitlines())
    return lines


def _left_out_lines(report: FitReport) -> list[str]:
    lines: list[str] = []
    if report.excluded:
        lines.append("")
        lines.append("Not considered (dtype not supported):")
        lines.extend(f"  {r.gpu_id}: {r.excluded_reason}" for r in report.excluded)
    if report.too_small:
        lines.append("")
        lines.append(
            _wrap(
                f"Too small even as {report.counts[-1]} GPUs (an SoC: as one): "
                + ", ".join(r.gpu_id for r in report.too_small),
                "",
            )
        )
    return lines


def _decode_lines(estimate: MemoryEstimate) -> list[str]:
    from gpudesk.memory.fit import DECODE_SOURCE

    if estimate.decode_bytes_per_token is None:
        return []
    return [
        "",
        _wrap(
            "Decode tok/s is an upper bound for one stream, not a prediction: GPUs × "
            f"bandwidth / {estimate.decode_bytes_per_token / 1e9:.2f} GB read per token "
            "(the weights a token uses plus its KV cache); real decoders reach roughly "
            f"50-80% of it. {DECODE_SOURCE}",
            "",
        ),
    ]


def _gpus(count: int) -> str:
    return "one GPU" if count == 1 else f"{count} GPUs"


def gpu_answer_lines(answer: GpuAnswer, report: FitReport) -> list[str]:
    """``fit --gpu NAME``: does it fit that GPU, on how many, usable against needed
    memory, and the longest context that fits."""
    fit = answer.fit
    size = "memory size not published" if fit.memory_gb is None else f"{fit.memory_gb:g} GiB"
    lines = ["", _wrap(f"On {fit.gpu_id} ({fit.name}, {size}):", "")]
    usable = f"{gib_text(fit.usable_gb)} usable"
    if fit.excluded_reason is not None:
        lines.append(_wrap(f"Cannot run it: {fit.excluded_reason}.", "  "))
        return lines
    seq = f" at {answer.seq:,} tokens" if answer.seq is not None else ""
    if fit.fits and fit.count is not None:
        each = " each" if fit.count > 1 else ""
        verdict = (
            f"Fits on {_gpus(fit.count)}{seq}: needs {gib_text(fit.per_gpu_gb)}{each} of "
            f"{usable} ({gib_text(fit.headroom_gb, sign=True)} headroom)."
        )
        if fit.count > 1:
            from gpudesk.memory.fit import PARALLELISM_NOTE

            verdict += f" It {PARALLELISM_NOTE}."
    else:
        verdict = (
            f"Does not fit{seq} on up to {_gpus(report.counts[-1])}: needs "
            f"{gib_text(report.estimate.per_gpu_gb(report.counts[-1]))} per GPU as "
            f"{report.counts[-1]}, {usable} each."
        )
        if fit.max_devices == 1:
            verdict = (
                f"Does not fit{seq}: needs {gib_text(report.estimate.per_gpu_gb(1))}, {usable} "
                "(an SoC: one per machine)."
            )
    lines.append(_wrap(verdict, "  "))
    if fit.offload is not None and not fit.fits:
        lines.append(
            _wrap(
                f"With llama.cpp it fits one GPU with {gib_text(fit.offload.host_gb)} in host "
                f"memory ({fit.offload.flag}; those layers run on the CPU, so decode is "
                "slower).",
                "  ",
            )
        )
    lines.extend(_longest_lines(answer))
    value = fit.decode_tokens_per_s_upper_bound
    if value is not None:
        lines.append(_wrap(f"Decode: at most {value:,.0f} tokens/s for one stream.", "  "))
    lines.append("")
    lines.append(_wrap(USABLE_NOTE, ""))
    lines.append(_wrap("Without --gpu, fit lists every catalog GPU that holds it.", ""))
    return lines


def _longest_lines(answer: GpuAnswer) -> list[str]:
    if answer.max_context is None or answer.seq is None:
        return []
    longest = answer.longest
    # a training step holds whole sequences: "context" is an inference word
    what = "sequence" if answer.training else "context"
    if longest is None:
        from gpudesk.memory.fit import CONTEXT_STEP

        shortest = min(CONTEXT_STEP, answer.max_context)
        return [_wrap(f"No {what} fits, not even {shortest:,} tokens.", "  ")]
    of_model = (
        "the model's whole context"
        if longest.context == answer.max_context
        else f"the model's context: {answer.max_context:,}"
    )
    return [
        _wrap(
            f"Longest {what} that fits {_gpus(longest.count)}: {longest.context:,} tokens "
            f"({of_model}; --seq sets the length).",
            "  ",
        )
    ]
