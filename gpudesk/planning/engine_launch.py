"""Engine settings that fit: launch commands sized to the GPUs, and vLLM's KV pool.

The KV pool follows vLLM's own accounting (``gpu_worker.determine_available_memory``
in V1, ``worker.determine_num_available_blocks`` in V0), per GPU:

    KV bytes = total x gpu_memory_utilization - weights - peak activation - non-torch

- **total** is what ``cudaMemGetInfo`` reports, which is nvidia-smi's total less what the
  driver keeps back: vLLM logs ``total_gpu_memory=23.58GiB`` on a 24 GiB RTX 3090
  (vllm-project/vllm issue 10517), 0.42 GiB under nvidia-smi's 24576 MiB;
  :data:`DRIVER_HELD_BYTES` is that difference.
- **weights** are the model's bytes in its format over the tensor-parallel degree.
- **peak activation** is the profiling forward pass over ``max_num_batched_tokens``
  tokens: per token the MLP's gate/up output, its activation and the hidden states in
  16-bit, 6 x (intermediate / TP + hidden) bytes. Fitted to nothing: on vLLM 0.6 the
  RTX 3090 log of issue 10517 shows 2.07 GiB of peak activation at 20,000 tokens and
  2.99 GiB at 29,000 for Llama 3.1 8B, 111 KB per token, where the formula gives 110.6 KB.
  V1 profiles ``max_num_batched_tokens`` (default 8192 for the API server on GPUs of
  70 GiB or more other than the A100, else 2048); V0 without chunked prefill profiled
  the whole ``max_model_len``.
- **the sampler** (V1 only): ``GPUModelRunner.profile_run`` (vllm/v1/worker/
  gpu_model_runner.py) runs ``self._dummy_sampler_run(last_hidden_states)`` after the
  dummy forward pass, over ``max_num_seqs`` requests (vllm PR 13594 put the sampler into
  V1's profile: it took 58,928 tokens off an H100's pool). Its tensors are one
  ``max_num_seqs x vocab`` block each: the fp32 logits, their log-softmax, the top-k/top-p
  sort's values (fp32) and indices (int64), the softmax and cumulative sum behind top-p;
  :data:`SAMPLER_BYTES_PER_LOGIT` (38 bytes) is their sum as it shows in the measured peaks,
  a fitted figure, not read off the code. The forward pass's activations are freed
  before the sampler runs, so the profiled peak is the larger of the two, not their sum.
  V1's default ``max_num_seqs`` (``EngineArgs`` batch defaults in vllm/engine/arg_utils.py)
  is 1024 on GPUs of 70 GiB or more other than the A100, else 256. V0's profile showed no
  such peak: 0.19 GiB of activation with 256 sequences and a 152,064-token vocabulary
  (vllm issue 13061), where the V1 sampler's tensors would be 1.4 GiB.
- **non-torch** memory (cuBLAS workspaces, NCCL buffers): 0.35 GiB, as the same log
  reports (0.20-0.25 GiB in other logs: vllm PR 14447 with TP 4 on RTX 3090s, issue
  13061 with TP 2 on RTX 4090s, so it does not grow with TP on GPUs without NVLink;
  an H100 pair under V0 logged 3.58 GiB, PR 10511, which this does not model).
- **per rank, then the minimum**: every TP worker profiles its own GPU and the engine
  takes the smallest block count (V0 ``DistributedExecutorBase.determine_num_available_
  blocks``: ``num_gpu_blocks = min(b[0] for b in num_blocks)``; V1's
  ``unify_kv_cache_configs`` in vllm/v1/core/kv_cache_utils.py sets every rank's
  ``num_blocks`` to the smallest), so "GPU KV cache size" with TP is one
  rank's tokens, not the sum. This predicts a clean GPU; a rank that holds more (another
  process, a display) lowers every rank's pool.
- **CUDA graphs** are captured after the KV cache is allocated and come out of the
  remaining ``1 - gpu_memory_utilization`` (``compile_or_warm_up_model``), so they do
  not reduce the pool unless vLLM is told to estimate them.

The pool is whole blocks of :data:`VLLM_BLOCK_TOKENS` tokens; a token costs
2 (K and V) x layers x KV heads / TP x head dim x the KV dtype's bytes. vLLM then logs
``GPU KV cache size: N tokens`` and ``Maximum concurrency for L tokens per request: X``
with X = N / L (vllm PR 13596).
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from gpudesk.planning.architecture import ModelShape

GIB = 2**30
#: nvidia-smi's total less cudaMemGetInfo's: 24576 MiB vs 23.58 GiB (RTX 3090, vllm#10517)
DRIVER_HELD_BYTES = int(24 * GIB - 23.58 * GIB)
#: cuBLAS/NCCL memory outside PyTorch's allocator, per GPU (vllm#10517: 0.35 GiB)
NON_TORCH_BYTES = int(0.35 * GIB)
VLLM_BLOCK_TOKENS = 16
#: V1's profiling sampler, per request per vocabulary entry (see module)
SAMPLER_BYTES_PER_LOGIT = 38.0
DEFAULT_UTILISATION = 0.9
SOURCES = (
    "vLLM V1 gpu_worker.determine_available_memory: requested = total x "
    "gpu_memory_utilization, KV = requested - non-KV (weights + peak activation + non-torch)",
    "vllm-project/vllm issue 10517 (2024-12-02): Llama-3.1-8B-Instruct on an RTX 3090, "
    "total_gpu_memory=23.58GiB, non_torch_memory=0.35GiB, peak activation by max_model_len",
    "vllm-project/vllm PR 13596: 'GPU KV cache size: N tokens', 'Maximum concurrency for L "
    "tokens per request: N/L'",
    "vllm/v1/worker/gpu_model_runner.py profile_run: _dummy_sampler_run over max_num_seqs "
    "rows (vllm PR 13594); vllm/engine/arg_utils.py batch defaults: max_num_seqs 1024 on "
    "GPUs of 70 GiB or more other than the A100, else 256",
    "with tensor parallelism the logged pool is the smallest rank's: "
    "vllm/v1/core/kv_cache_utils.py unify_kv_cache_configs",
)


def default_batched_tokens(total_bytes: int, gpu_name: str) -> int:
    """vLLM V1's default max_num_batched_tokens for ``vllm serve``."""
    if total_bytes >= 70 * GIB and "a100" not in gpu_name.lower():
        return 8192
    return 2048


def default_max_num_seqs(total_bytes: int, gpu_name: str) -> int:
    """vLLM V1's default max_num_seqs (vllm/engine/arg_utils.py batch defaults)."""
    if total_bytes >= 70 * GIB and "a100" not in gpu_name.lower():
        return 1024
    return 256


def sampler_profile_bytes(shape: ModelShape, requests: int) -> float:
    """V1's profiling sampler over ``requests`` rows of the vocabulary (see module)."""
    return requests * shape.vocab * SAMPLER_BYTES_PER_LOGIT


@dataclass(frozen=True)
class VllmKvPool:
    """vLLM's KV pool on each GPU, as it would log it."""

    total_bytes: int
    utilisation: float
    weights_bytes: float
    activation_bytes: float
    non_torch_bytes: float
    kv_bytes: float
    bytes_per_token: float
    tokens: int
    max_model_len: int

    @property
    def max_concurrency(self) -> float:
        return self.tokens / self.max_model_len if self.max_model_len else 0.0

    def log_lines(self) -> list[str]:
        return [
            f"Available KV cache memory: {self.kv_bytes / GIB:.2f} GiB",
            f"GPU KV cache size: {self.tokens:,} tokens",
            f"Maximum concurrency for {self.max_model_len:,} tokens per request: "
            f"{self.max_concurrency:.2f}x",
        ]

    def working(self) -> str:
        return (
            f"{self.total_bytes / GIB:.2f} GiB x {self.utilisation:g} = "
            f"{self.total_bytes * self.utilisation / GIB:.2f} GiB, less weights "
            f"{self.weights_bytes / GIB:.2f}, peak activation {self.activation_bytes / GIB:.2f}, "
            f"non-torch {self.non_torch_bytes / GIB:.2f} = {self.kv_bytes / GIB:.2f} GiB of KV "
            f"cache at {self.bytes_per_token:,.0f} bytes per token per GPU"
        )


def activation_bytes_per_token(shape: ModelShape, tensor_parallel: int) -> float:
    """Peak activation of vLLM's profiling forward pass per token, 16-bit (see module)."""
    width = shape.intermediate
    if shape.is_moe and shape.expert_intermediate and shape.active_experts:
        width = max(width, shape.expert_intermediate * shape.active_experts)
    return 6.0 * (width / tensor_parallel + shape.hidden)


def kv_bytes_per_token(shape: ModelShape, tensor_parallel: int, kv_bytes: float) -> float:
    """One token's K and V on one GPU: KV heads split across TP (at least one each)."""
    if shape.is_mla:
        values = shape.kv_values_per_token_per_layer()  # the latent is not split
        return values * shape.layers * kv_bytes
    heads = max(1, math.ceil(shape.kv_heads / tensor_parallel))
    return 2 * shape.layers * heads * shape.head_dim * kv_bytes


def vllm_kv_pool(
    shape: ModelShape,
    weights_bytes: float,
    *,
    nvidia_smi_total_bytes: int,
    tensor_parallel: int = 1,
    utilisation: float = DEFAULT_UTILISATION,
    max_model_len: int | None = None,
    kv_dtype_bytes: float = 2.0,
    profile_tokens: int | None = None,
    gpu_name: str = "",
    sampler_seqs: int | None = None,
) -> VllmKvPool:
    """The KV pool vLLM would allocate on each of ``tensor_parallel`` GPUs.

    ``weights_bytes`` is the whole model's; ``profile_tokens`` the tokens vLLM's
    profiling pass runs (default: V1's max_num_batched_tokens default for the GPU);
    ``sampler_seqs`` the requests V1's profiling sampler runs (default: V1's
    max_num_seqs default for the GPU; 0 for V0, whose sampler set no peak).
    """
    total = nvidia_smi_total_bytes - DRIVER_HELD_BYTES
    length = max_model_len or shape.context
    tokens_profiled = profile_tokens or default_batched_tokens(total, gpu_name)
    weights = weights_bytes / tensor_parallel
    forward = tokens_profiled * activation_bytes_per_token(shape, tensor_parallel)
    seqs = default_max_num_seqs(total, gpu_name) if sampler_seqs is None else sampler_seqs
    # logits are gathered whole on every rank: the sampler does not shrink with TP
    activation = max(forward, sampler_profile_bytes(shape, seqs))
    kv = total * utilisation - weights - activation - NON_TORCH_BYTES
    per_token = kv_bytes_per_token(shape, tensor_parallel, kv_dtype_bytes)
    blocks = max(0, math.floor(kv / (per_token * VLLM_BLOCK_TOKENS)))
    return VllmKvPool(
        total_bytes=total,
        utilisation=utilisation,
        weights_bytes=weights,
        activation_bytes=activation,
        non_torch_bytes=NON_TORCH_BYTES,
        kv_bytes=max(0.0, kv),
        bytes_per_token=per_token,
        tokens=blocks * VLLM_BLOCK_TOKENS,
        max_model_len=length,
    )


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


def _join(words: list[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)


def vllm_command(plan: LaunchPlan) -> str:
    words = ["vllm", "serve", plan.model_ref, "--tensor-parallel-size", str(plan.tensor_parallel)]
    words += ["--gpu-memory-utilization", f"{plan.utilisation:g}"]
    words += ["--max-model-len", str(plan.context)]
    words += ["--dtype", _VLLM_DTYPE.get(plan.dtype, "auto")]
    if plan.quant in _VLLM_QUANT:
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
    if plan.quant in ("awq", "gptq", "fp8"):
        words += ["--quantization", str(plan.quant)]
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


def verify_command(plan: LaunchPlan) -> str:
    """The command that checks the emitted figures on the machine."""
    if plan.engine in ("vllm",):
        return (
            f"{vllm_command(plan)} 2>&1 | grep -E 'GPU KV cache size|Maximum concurrency'; "
            f"then: vllm bench serve --model {shlex.quote(plan.model_ref)} --dataset-name random "
            f"--random-input-len 1024 --random-output-len 256 --save-result "
            f"(and gpudesk measurements import the saved JSON --gpu ...)"
        )
    if plan.engine == "sglang":
        return f"{sglang_command(plan)} 2>&1 | grep 'KV Cache is allocated'"
    return (
        f"llama-bench -m {shlex.quote(plan.model_ref)} -ngl {plan.gpu_layers} -p 512 -n 128 "
        "-o json > bench.json && gpudesk measurements import bench.json"
    )
