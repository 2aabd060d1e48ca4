"""Engine settings that fit: launch commands sized to the GPUs.

vLLM's KV pool is computed in :mod:`gpudesk.memory.vllm_pool` (below the speed model,
which sizes serving with the same pool) and re-exported here, where ``--emit`` and the
tests have always found it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from gpudesk.memory.vllm_pool import (
    CUDA_GRAPH_BYTES,
    CUDA_GRAPH_CAPTURE_SIZES,
    CUDA_GRAPHS_MEASURED,
    DEFAULT_UTILISATION,
    DRIVER_HELD_BYTES,
    GIB,
    NON_TORCH_BYTES,
    NON_TORCH_BYTES_LEAN,
    NVLINK_TP_BYTES,
    PCIE_TP_BYTES,
    SAMPLER_BYTES_PER_LOGIT,
    SAMPLER_BYTES_PER_LOGIT_V0_17,
    SOURCES,
    VLLM_BLOCK_TOKENS,
    VllmEra,
    VllmKvPool,
    activation_bytes_per_token,
    cuda_graph_bytes,
    cuda_graph_count,
    default_batched_tokens,
    default_max_num_seqs,
    era_for_version,
    kv_bytes_per_token,
    non_torch_bytes,
    sampler_profile_bytes,
    vllm_kv_pool,
)
from gpudesk.terminal_text import is_clean

__all__ = [
    "COMMANDS",
    "CUDA_GRAPHS_MEASURED",
    "CUDA_GRAPH_BYTES",
    "CUDA_GRAPH_CAPTURE_SIZES",
    "DEFAULT_UTILISATION",
    "DRIVER_HELD_BYTES",
    "GIB",
    "NON_TORCH_BYTES",
    "NON_TORCH_BYTES_LEAN",
    "NVLINK_TP_BYTES",
    "PCIE_TP_BYTES",
    "SAMPLER_BYTES_PER_LOGIT",
    "SAMPLER_BYTES_PER_LOGIT_V0_17",
    "SOURCES",
    "VLLM_BLOCK_TOKENS",
    "LaunchPlan",
    "VllmEra",
    "VllmKvPool",
    "activation_bytes_per_token",
    "cuda_graph_bytes",
    "cuda_graph_count",
    "default_batched_tokens",
    "default_max_num_seqs",
    "era_for_version",
    "kv_bytes_per_token",
    "non_torch_bytes",
    "sampler_profile_bytes",
    "unprintable",
    "verify_command",
    "verify_commands",
    "vllm_kv_pool",
]


# -- launch commands -------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchPlan:
    """What to launch: the engine, the model reference and the sizes that fit."""

    engine: str
    model_ref: str
    tensor_parallel: int
    context: int
    dtype: str  # bf16 / fp16
    quant: str | None
    kv_dtype: str | None
    max_num_seqs: int | None
    utilisation: float
    gpu_layers: int
    layers: int
    flash_attention: bool = True
    #: llama.cpp --n-cpu-moe: layers whose routed experts stay in host memory
    cpu_moe: int = 0


_VLLM_QUANT = {"awq": "awq", "gptq": "gptq", "fp8": "fp8", "nf4": "bitsandbytes", "mxfp4": "mxfp4"}
_VLLM_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
_LLAMA_KV = {"fp16": "f16", "bf16": "bf16", "fp8": "q8_0", "int8": "q8_0", "int4": "q4_0"}


def unprintable(value: str) -> str | None:
    """The first character of ``value`` that no printed command or Modelfile may hold, as
    ``U+XXXX``, or None.

    Every command is printed to be pasted as printed: on one line, each word quoted
    with :func:`shlex.quote`. A control character cannot be: a newline would put the
    quoted word across lines and a tab shows as blanks, and the terminal shows the
    others (ESC, bidi marks, lone surrogates) as ``\\uXXXX`` escapes
    (:mod:`gpudesk.terminal_text`), which pasted would name another file. In a
    Modelfile, which Ollama reads line by line and never shell-parses (quotes would
    become part of the path), a newline in ``FROM`` would start an instruction of
    its own (``SYSTEM``, ``ADAPTER``).
    """
    for char in value:
        if char in "\t\n" or not is_clean(char):
            return f"U+{ord(char):04X}"
    return None


def _join(words: list[str]) -> str:
    """``words`` as one shell command line, each quoted (checked by :func:`unprintable` first)."""
    return " ".join(shlex.quote(word) for word in words)


def vllm_command(plan: LaunchPlan) -> str:
    words = ["vllm", "serve", plan.model_ref, "--tensor-parallel-size", str(plan.tensor_parallel)]
    words += ["--gpu-memory-utilization", f"{plan.utilisation:g}"]
    words += ["--max-model-len", str(plan.context)]
    words += ["--dtype", _VLLM_DTYPE.get(plan.dtype, "auto")]
    # An AWQ or GPTQ checkpoint declares its format in its config and vLLM then picks
    # its Marlin kernels where the GPU can run them; an explicit --quantization awq
    # forces the older kernel instead (vLLM's awq_marlin.py,
    # AWQMarlinConfig.override_quantization_method: "... so forcing awq")
    if plan.quant in _VLLM_QUANT and plan.quant not in ("awq", "gptq"):
        words += ["--quantization", _VLLM_QUANT[plan.quant]]
    if plan.kv_dtype in ("fp8", "int8"):
        words += ["--kv-cache-dtype", "fp8"]
    if plan.max_num_seqs:
        words += ["--max-num-seqs", str(plan.max_num_seqs)]
    return _join(words)


def sglang_command(plan: LaunchPlan) -> str:
    words = ["python", "-m", "sglang.launch_server", "--model-path", plan.model_ref]
    words += ["--tp", str(plan.tensor_parallel), "--context-length", str(plan.context)]
    words += ["--mem-fraction-static", f"{plan.utilisation:g}"]
    # SGLang reads an AWQ or GPTQ checkpoint's format from its config and asks for no
    # --quantization with one; fp8 is quantized from the bf16 weights as they load
    # (https://docs.sglang.io/advanced_features/quantization.html)
    if plan.quant == "fp8":
        words += ["--quantization", "fp8"]
    if plan.kv_dtype in ("fp8", "int8"):
        words += ["--kv-cache-dtype", "fp8_e4m3"]
    if plan.max_num_seqs:
        words += ["--max-running-requests", str(plan.max_num_seqs)]
    return _join(words)


def llama_cpp_command(plan: LaunchPlan) -> str:
    words = [
        "llama-server",
        "-m",
        plan.model_ref,
        "-c",
        str(plan.context * (plan.max_num_seqs or 1)),
    ]
    words += ["-ngl", str(plan.gpu_layers)]
    if plan.cpu_moe:
        words += ["--n-cpu-moe", str(plan.cpu_moe)]
    if plan.tensor_parallel > 1:
        words += ["-ts", ",".join("1" for _ in range(plan.tensor_parallel))]
    words += ["-fa", "on" if plan.flash_attention else "off"]
    kv = _LLAMA_KV.get(plan.kv_dtype or "fp16", "f16")
    words += ["-ctk", kv, "-ctv", kv, "-np", str(plan.max_num_seqs or 1)]
    return _join(words)


def ollama_modelfile(plan: LaunchPlan) -> str:
    return "\n".join(
        [
            f"FROM {plan.model_ref}",
            f"PARAMETER num_ctx {plan.context}",
            f"PARAMETER num_gpu {plan.gpu_layers}",
        ]
    )


COMMANDS = {
    "vllm": vllm_command,
    "sglang": sglang_command,
    "llama.cpp": llama_cpp_command,
    "ollama": ollama_modelfile,
}


def verify_commands(plan: LaunchPlan, gpu_id: str | None = None) -> list[str]:
    """The shell commands that check the emitted figures on the machine, one line each.

    For vLLM the first starts the server and shows its KV pool lines; the second,
    run in another shell once it serves, measures it and keeps the result
    (``gpudesk measurements import``, for ``gpu_id`` where given).
    """
    bench = "bench.json"
    keep = ["gpudesk", "measurements", "import", bench]
    if gpu_id is not None:
        keep += ["--gpu", gpu_id]
    if plan.tensor_parallel > 1:
        keep += ["--count", str(plan.tensor_parallel)]
    if plan.engine == "vllm":
        serve = f"{vllm_command(plan)} 2>&1 | grep -E 'GPU KV cache size|Maximum concurrency'"
        measure = ["vllm", "bench", "serve", "--model", plan.model_ref]
        measure += ["--dataset-name", "random", "--random-input-len", "1024"]
        measure += ["--random-output-len", "256", "--save-result", "--result-filename", bench]
        return [serve, f"{_join(measure)} && {_join(keep)}"]
    if plan.engine == "sglang":
        return [f"{sglang_command(plan)} 2>&1 | grep 'KV Cache is allocated'"]
    measure = ["llama-bench", "-m", plan.model_ref, "-ngl", str(plan.gpu_layers)]
    measure += ["-p", "512", "-n", "128", "-o", "json"]
    return [f"{_join(measure)} > {bench} && {_join(keep)}"]


def verify_command(plan: LaunchPlan, gpu_id: str | None = None) -> str:
    """:func:`verify_commands` as one text, a command a line."""
    return "\n".join(verify_commands(plan, gpu_id))
