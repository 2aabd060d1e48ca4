"""vLLM's KV pool: the bytes and tokens of KV cache vLLM allocates on each GPU.

This is vLLM's own accounting (``gpu_worker.determine_available_memory`` in V1,
``worker.determine_num_available_blocks`` in V0), per GPU:

    KV bytes = total x gpu_memory_utilization - weights - peak activation - non-torch
               (- estimated CUDA graph memory, vLLM 0.21 and later)

It lives in ``memory`` so that the speed model (``speed.holding.kv_pool_bytes``, the
serving simulator) and ``--emit vllm`` (``engines.launch``, which re-exports it) size
the same pool. What the profiler subtracts changed between releases; :class:`VllmEra`
names each accounting and :func:`era_for_version` picks it from a version string. The
published startup logs each term is read from or checked against are in
``tests/planning/data/vllm_startup_logs.toml`` (with their vLLM version) and in the
table of ``tests/planning/test_engine_launch.py``; ``docs/vllm-kv-pool.md`` sets them
against this model.

- **total** is what ``cudaMemGetInfo`` reports, which is nvidia-smi's total less what the
  driver keeps back: vLLM logs ``total_gpu_memory=23.58GiB`` on a 24 GiB RTX 3090
  (vllm-project/vllm issue 10517), 0.42 GiB under nvidia-smi's 24576 MiB;
  :data:`DRIVER_HELD_BYTES` is that difference (on an H100's 81559 MiB it gives
  79.23 GiB; vLLM 0.19 logs ``total_memory=79.19GiB``). ``requested = total x
  gpu_memory_utilization`` is a share of the whole card, not of what is free, in every
  version since vLLM PR 2863 (V0) and PR 19312 (V1, vLLM 0.9.2).
- **weights** are the model's bytes in its format over the tensor-parallel degree.
- **the forward pass** of the profiling run over ``max_num_batched_tokens`` tokens:
  per token the MLP's gate/up output, its activation and the hidden states in 16-bit,
  6 x (intermediate / TP + hidden) bytes. On vLLM 0.6 (V0) the RTX 3090 log of issue
  10517 shows 2.07 GiB of peak activation at 20,000 tokens and 2.99 GiB at 29,000 for
  Llama 3.1 8B, 111 KB per token, where the formula gives 110.6 KB. V1 profiles
  ``max_num_batched_tokens``: for ``vllm serve`` 8192 on GPUs of 70 GiB or more other
  than the A100, else 2048; for the offline ``LLM`` class 16384 and 8192
  (``EngineArgs`` usage-context defaults, vllm/engine/arg_utils.py). V0 without
  chunked prefill profiled the whole ``max_model_len``.
- **the sampler** (V1 only): ``GPUModelRunner.profile_run`` runs
  ``_dummy_sampler_run(last_hidden_states)`` after the dummy forward pass over
  ``max_num_seqs`` requests (vllm PR 13594), while the forward pass's output hidden
  states (``max_num_batched_tokens`` x hidden in 16-bit) are still held; its tensors
  are ``max_num_seqs`` x vocab blocks (logits and what the sampler derives from them:
  the float32 logits, their sort and indices for top-k/top-p, the probabilities).
  Their size per logit changed with vLLM's version, read off the logged "torch peak
  memory increase" less those hidden states: vLLM 0.19 on an H100
  (llm-d-incubation/llm-d-planner's v0.19.0 logs) 1.89 GiB for Llama 3.1 8B
  (vocab 128,256) and 2.21 GiB for Qwen2.5 7B (152,064), 14.9 bytes per logit
  (:data:`SAMPLER_BYTES_PER_LOGIT_V0_17`), the same at TP 1, 2 and 4; the same report
  measured Qwen3-14B at 5.64 GiB on vLLM 0.15 and 0.16 and 2.23 GiB on 0.17 and 0.18, so
  before 0.17 it was 38 bytes (:data:`SAMPLER_BYTES_PER_LOGIT`; Qwen3-14B's 5.64 GiB
  gives 38.4, and vLLM 0.10.2's 1.40 GiB "torch peak memory increase" for Qwen3-8B with
  256 sequences on an RTX 4090 gives 37.9). The forward pass's activations are freed
  before the sampler runs, so the profiled peak is the larger of the two, not their
  sum. V1's default ``max_num_seqs`` is 1024 on GPUs of 70 GiB or more other than the
  A100, else 256. V0's profile showed no such peak: 0.19 GiB of activation with 256
  sequences and a 152,064-token vocabulary (vllm issue 13061).
- **non-torch** memory per GPU: what ``cudaMemGetInfo`` says is used beyond PyTorch's
  allocator, grown during the profile (cuBLAS and attention workspaces, the kernel
  images the run loads into the CUDA context, NCCL buffers). From vLLM PR 10511 (V0)
  and PR 19312 (V1, 0.9.2) only its *increase* over the snapshot taken at start-up
  counts, and the CUDA context itself is in that snapshot. At TP 1 the logs show two
  sizes: V0 from 0.7 and V1 before 0.17 log 0.01-0.08 GiB (T4, RTX 4090, RTX 4060 and
  24 GiB cards; vLLM 0.10.2 logs 0.02 GiB), :data:`NON_TORCH_BYTES_LEAN` (0.03 GiB, their
  median); vLLM 0.19 logs 0.24-0.27 GiB on an H100 and vLLM 0.6 logged 0.35 GiB on an
  RTX 3090 (issue 10517), :data:`NON_TORCH_BYTES` (0.25 GiB) for those eras. Tensor
  parallelism adds each GPU's communication buffers: over NVLink (or AMD's xGMI)
  :data:`NVLINK_TP_BYTES` (1.84 GiB: vLLM 0.19 logs 2.06-2.07 GiB at TP 2 and 2.13 GiB
  at TP 4 on H100s, less the base; V0 on eight 64 GiB ROCm GPUs logged 1.78 GiB at TP 8),
  over PCIe :data:`PCIE_TP_BYTES` (0.2 GiB: V0 0.7 logged 0.25 GiB with TP 2 on two
  RTX 4090, issue 13061, and 0.20 GiB with TP 4 on RTX 3090s, vllm PR 14447, each less
  the 0.03 GiB base).
- **CUDA graphs**: up to vLLM 0.20 they are captured after the KV cache is allocated
  and come out of the remaining ``1 - gpu_memory_utilization`` (vLLM 0.10.2's log:
  "18.82 GiB" requested, "8.8 GiB for weight, 1.4 GiB for peak activation, 0.02 GiB for
  non-torch memory, and 0.68 GiB for CUDAGraph memory", 8.60 GiB of KV cache: the graphs
  are not taken off); from 0.21 vLLM profiles them first and takes its estimate off the
  pool ("CUDA graph memory profiling is enabled (default since v0.21.0)",
  noonghunna/club-3090 issue 104). vLLM's estimate is a cost per captured graph times
  the number of graphs (vllm PR 45197 quotes ``per_graph * (len(descs) - 1)``), and the
  number follows ``max_num_seqs``: with the default compilation config PIECEWISE graphs
  are captured for the sizes 1, 2, 4, 8..256 by 8 and 272..512 by 16 up to
  ``min(2 x max_num_seqs, 512)`` and FULL decode graphs up to ``min(max_num_seqs, 512)``
  (logged "PIECEWISE=51 (largest=512), FULL=51 (largest=512)" with 1024 sequences,
  "PIECEWISE=51 (largest=512), FULL=35 (largest=256)" with 256, "PIECEWISE=35
  (largest=256), FULL=19 (largest=128)" with 128). :data:`CUDA_GRAPH_BYTES` (0.84 GiB)
  is vLLM 0.19's own estimate for Llama 3.1 8B on an H100 over those 102 graphs
  ("Estimated CUDA graph memory: 0.84 GiB total", llm-d-planner's v0.19.0 log), 8.4 MiB
  a graph; other models' estimates at 102 graphs in the same logs run 0.61 (Qwen2.5 7B)
  to 0.84 GiB (Qwen3 8B) and vLLM 0.21/0.22 logged 0.52 GiB over 86 graphs (Qwen3 8B,
  RTX A5000) and 0.37 over 54 (Qwen2.5 7B, a 48 GB card), so this term is the roughest
  of the five. Later versions changed the estimate itself: vllm issue 50780 reports it
  charging a profiling transient that grows with ``max_num_batched_tokens`` since
  0.26.0, issue 53013 a 118.65 GiB estimate, issue 49224 a 0 from the V2 model runner
  until it was fixed; none is modelled.
- **per rank, then the minimum**: every TP worker profiles its own GPU and the engine
  takes the smallest block count (V0 ``DistributedExecutorBase.determine_num_available_
  blocks``: ``num_gpu_blocks = min(b[0] for b in num_blocks)``; V1's
  ``unify_kv_cache_configs`` in vllm/v1/core/kv_cache_utils.py sets every rank's
  ``num_blocks`` to the smallest), so "GPU KV cache size" with TP is one rank's tokens,
  not the sum: the tokens one instance holds. This predicts a clean GPU; a rank that
  holds more (another process, a display) lowers every rank's pool.

The pool is whole blocks of :data:`VLLM_BLOCK_TOKENS` tokens; a token costs 2 (K and V)
x layers x KV heads / TP x head dim x the KV dtype's bytes on each GPU. vLLM then logs
``GPU KV cache size: N tokens`` (V0: ``# GPU blocks: N`` of 16 tokens) and ``Maximum
concurrency for L tokens per request: X`` with X = N / L (vllm PR 13596).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum

from gpudesk.workload.architecture import ModelShape

GIB = 2**30
#: nvidia-smi's total less cudaMemGetInfo's: 24576 MiB vs 23.58 GiB (RTX 3090, vllm#10517)
DRIVER_HELD_BYTES = int(24 * GIB - 23.58 * GIB)
#: non-torch memory a GPU grows during the profile at TP 1: vLLM 0.19, V0 before 0.7
NON_TORCH_BYTES = int(0.25 * GIB)
#: the same for V0 from 0.7 and V1 before 0.17 (median of logged 0.01-0.08 GiB)
NON_TORCH_BYTES_LEAN = int(0.03 * GIB)
#: what tensor parallelism over NVLink (or xGMI) adds to every GPU's non-torch memory
NVLINK_TP_BYTES = int(1.84 * GIB)
#: what tensor parallelism over PCIe adds to every GPU's non-torch memory
PCIE_TP_BYTES = int(0.2 * GIB)
#: vLLM 0.21+'s CUDA graph estimate taken off the pool for the default 102 graphs
CUDA_GRAPH_BYTES = int(0.84 * GIB)
#: the graphs :data:`CUDA_GRAPH_BYTES` was estimated over: 51 PIECEWISE + 51 FULL
CUDA_GRAPHS_MEASURED = 102
#: the default compilation config's capture sizes (vLLM 0.19-0.22 logs)
CUDA_GRAPH_CAPTURE_SIZES = (1, 2, 4, *range(8, 257, 8), *range(272, 513, 16))
VLLM_BLOCK_TOKENS = 16
#: V1's profiling sampler before vLLM 0.17, per request per vocabulary entry
SAMPLER_BYTES_PER_LOGIT = 38.0
#: the same from vLLM 0.17
SAMPLER_BYTES_PER_LOGIT_V0_17 = 14.9
DEFAULT_UTILISATION = 0.9


class VllmEra(StrEnum):
    """Which vLLM's memory accounting to follow (see module)."""

    #: the V0 engine up to 0.6: non-torch 0.25-0.35 GiB at TP 1, no sampler peak
    V0_EARLY = "v0-0.6"
    #: the V0 engine from 0.7 (the default until 0.8, later ``VLLM_USE_V1=0``): a lean
    #: non-torch increase, no sampler peak
    V0 = "v0"
    #: the V1 engine before 0.17: the profiling sampler at 38 bytes per logit
    V1_EARLY = "v1-0.8"
    #: V1 0.17 to 0.20: the sampler at 14.9 bytes per logit, CUDA graphs after the pool
    V1_0_17 = "v1-0.17"
    #: V1 0.21 and later: as 0.17, and the CUDA graph estimate comes off the pool
    V1 = "v1-0.21"

    @property
    def sampler_bytes_per_logit(self) -> float:
        if self in (VllmEra.V0, VllmEra.V0_EARLY):
            return 0.0
        if self is VllmEra.V1_EARLY:
            return SAMPLER_BYTES_PER_LOGIT
        return SAMPLER_BYTES_PER_LOGIT_V0_17

    @property
    def non_torch_base_bytes(self) -> int:
        """Non-torch memory one GPU grows during the profile at TP 1 (see module)."""
        if self in (VllmEra.V0, VllmEra.V1_EARLY):
            return NON_TORCH_BYTES_LEAN
        return NON_TORCH_BYTES

    @property
    def graphs_off_pool(self) -> bool:
        """Whether vLLM takes its CUDA graph estimate off the pool (0.21 and later)."""
        return self is VllmEra.V1

    @property
    def label(self) -> str:
        return {
            VllmEra.V0_EARLY: "vLLM V0 engine up to 0.6",
            VllmEra.V0: "vLLM V0 engine, 0.7 or later",
            VllmEra.V1_EARLY: "vLLM V1 0.8-0.16",
            VllmEra.V1_0_17: "vLLM V1 0.17-0.20",
            VllmEra.V1: "vLLM V1 0.21 or later",
        }[self]


_VERSION = re.compile(r"^\s*v?(\d{1,3})\.(\d{1,3})(?:\.\d{1,4})?(?:[.+\-]?[0-9A-Za-z.+\-]*)?\s*$")


def era_for_version(version: str, *, v0: bool = False) -> VllmEra:
    """The accounting of vLLM ``version`` ("0.13.0", "v0.10.2", "0.19.1rc1").

    ``v0``: the V0 engine was asked for (``VLLM_USE_V1=0``, which 0.8 to 0.10 still
    honoured); before 0.8 V0 was the default. V0 was removed in vLLM 0.11.

    Raises:
        ValueError: ``version`` is not a vLLM version, or V0 is asked of a version
            without it.
    """
    found = _VERSION.match(version)
    if found is None:
        raise ValueError(f"'{version[:40]}' is not a vLLM version such as 0.13.0")
    major, minor = int(found.group(1)), int(found.group(2))
    if major > 0:
        minor = 10_000
    if minor < 7:
        return VllmEra.V0_EARLY
    if minor < 8 or v0:
        if minor >= 11:
            raise ValueError(f"vLLM {version.strip()} has no V0 engine (removed in 0.11)")
        return VllmEra.V0
    if minor < 17:
        return VllmEra.V1_EARLY
    if minor < 21:
        return VllmEra.V1_0_17
    return VllmEra.V1


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
    "vllm-project/vllm PR 19312 (vLLM 0.9.2): V1 counts only the non-torch memory grown "
    "since its start-up snapshot; vLLM 0.10.2 logs 0.02 GiB at TP 1 (RTX 4090)",
    "llm-d-incubation/llm-d-planner accuracy/results/v0.19.0 (commit d3121e05, retrieved "
    "2026-12-02): vLLM 0.19 startup logs on H100s, TP 1-4: sampler 14.9 bytes per logit, "
    "non-torch 0.25 GiB + 1.84 GiB with TP over NVLink, CUDA graph estimate 0.84 GiB",
    "noonghunna/club-3090 issue 104: 'CUDA graph memory profiling is enabled (default "
    "since v0.21.0)'",
    "with tensor parallelism the logged pool is the smallest rank's: "
    "vllm/v1/core/kv_cache_utils.py unify_kv_cache_configs",
)


def default_batched_tokens(total_bytes: int, gpu_name: str, *, offline: bool = False) -> int:
    """vLLM V1's default max_num_batched_tokens: ``vllm serve``'s, or (``offline``) the
    ``LLM`` class's (vllm/engine/arg_utils.py usage-context defaults)."""
    if total_bytes >= 70 * GIB and "a100" not in gpu_name.lower():
        return 16384 if offline else 8192
    return 8192 if offline else 2048


def default_max_num_seqs(total_bytes: int, gpu_name: str) -> int:
    """vLLM V1's default max_num_seqs (vllm/engine/arg_utils.py batch defaults)."""
    if total_bytes >= 70 * GIB and "a100" not in gpu_name.lower():
        return 1024
    return 256


def cuda_graph_count(max_num_seqs: int) -> int:
    """Graphs vLLM captures by default for ``max_num_seqs``: PIECEWISE up to twice it and
    FULL decode graphs up to it, both at most 512 (see module)."""
    piecewise = min(2 * max_num_seqs, CUDA_GRAPH_CAPTURE_SIZES[-1])
    full = min(max_num_seqs, CUDA_GRAPH_CAPTURE_SIZES[-1])
    return sum(1 for size in CUDA_GRAPH_CAPTURE_SIZES if size <= piecewise) + sum(
        1 for size in CUDA_GRAPH_CAPTURE_SIZES if size <= full
    )


def cuda_graph_bytes(max_num_seqs: int) -> float:
    """vLLM 0.21+'s CUDA graph estimate: :data:`CUDA_GRAPH_BYTES` per measured graph."""
    return CUDA_GRAPH_BYTES * cuda_graph_count(max_num_seqs) / CUDA_GRAPHS_MEASURED


def sampler_profile_bytes(
    shape: ModelShape, requests: int, *, era: VllmEra = VllmEra.V1, held_tokens: int = 0
) -> float:
    """V1's profiling sampler over ``requests`` rows of the vocabulary, with the forward
    pass's ``held_tokens`` output hidden states still held (see module)."""
    if era.sampler_bytes_per_logit == 0.0 or requests <= 0:
        return 0.0
    return requests * shape.vocab * era.sampler_bytes_per_logit + held_tokens * shape.hidden * 2


@dataclass(frozen=True)
class VllmKvPool:
    """vLLM's KV pool on each GPU of one instance, as it would log it."""

    total_bytes: int
    utilisation: float
    weights_bytes: float
    activation_bytes: float
    non_torch_bytes: float
    #: KV cache bytes on each GPU
    kv_bytes: float
    #: one token's K and V on each GPU
    bytes_per_token: float
    #: tokens the instance holds ("GPU KV cache size"): whole blocks, the same on every rank
    tokens: int
    max_model_len: int
    cuda_graph_bytes: float = 0.0
    era: VllmEra = VllmEra.V1

    @property
    def blocks(self) -> int:
        """The instance's KV blocks of :data:`VLLM_BLOCK_TOKENS` tokens."""
        return self.tokens // VLLM_BLOCK_TOKENS

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
        graphs = f", CUDA graphs {self.cuda_graph_bytes / GIB:.2f}" if self.cuda_graph_bytes else ""
        return (
            f"{self.total_bytes / GIB:.2f} GiB x {self.utilisation:g} = "
            f"{self.total_bytes * self.utilisation / GIB:.2f} GiB, less weights "
            f"{self.weights_bytes / GIB:.2f}, peak activation {self.activation_bytes / GIB:.2f}, "
            f"non-torch {self.non_torch_bytes / GIB:.2f}{graphs} = {self.kv_bytes / GIB:.2f} GiB "
            f"of KV cache at {self.bytes_per_token:,.0f} bytes per token per GPU "
            f"({self.era.label})"
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


def non_torch_bytes(tensor_parallel: int, *, nvlink: bool, era: VllmEra = VllmEra.V1) -> int:
    """Non-torch memory one GPU grows during the profile: the era's base, and with
    tensor parallelism its communication buffers over NVLink or PCIe (see module)."""
    if tensor_parallel <= 1:
        return era.non_torch_base_bytes
    return era.non_torch_base_bytes + (NVLINK_TP_BYTES if nvlink else PCIE_TP_BYTES)


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
    nvlink: bool = False,
    era: VllmEra = VllmEra.V1,
    total_bytes: int | None = None,
    offline: bool = False,
) -> VllmKvPool:
    """The KV pool vLLM would allocate on each of ``tensor_parallel`` GPUs.

    ``weights_bytes`` is the whole model's; ``profile_tokens`` the tokens vLLM's
    profiling pass runs (default: V1's max_num_batched_tokens default for the GPU and
    entry point, ``offline`` for the ``LLM`` class); ``sampler_seqs`` the requests V1's
    profiling sampler runs (default: V1's max_num_seqs default for the GPU); ``nvlink``:
    the GPUs talk over NVLink or xGMI; ``era``: which vLLM's accounting; ``total_bytes``:
    CUDA's total where a log gives it (default: nvidia-smi's less
    :data:`DRIVER_HELD_BYTES`).
    """
    total = total_bytes if total_bytes is not None else nvidia_smi_total_bytes - DRIVER_HELD_BYTES
    length = max_model_len or shape.context
    tokens_profiled = profile_tokens or default_batched_tokens(total, gpu_name, offline=offline)
    weights = weights_bytes / tensor_parallel
    forward = tokens_profiled * activation_bytes_per_token(shape, tensor_parallel)
    seqs = default_max_num_seqs(total, gpu_name) if sampler_seqs is None else sampler_seqs
    # logits are gathered whole on every rank: the sampler does not shrink with TP
    sampler = sampler_profile_bytes(shape, seqs, era=era, held_tokens=tokens_profiled)
    activation = max(forward, sampler)
    non_torch = non_torch_bytes(tensor_parallel, nvlink=nvlink, era=era)
    graphs = cuda_graph_bytes(seqs) if era.graphs_off_pool else 0.0
    kv = total * utilisation - weights - activation - non_torch - graphs
    per_token = kv_bytes_per_token(shape, tensor_parallel, kv_dtype_bytes)
    blocks = max(0, math.floor(kv / (per_token * VLLM_BLOCK_TOKENS)))
    return VllmKvPool(
        total_bytes=total,
        utilisation=utilisation,
        weights_bytes=weights,
        activation_bytes=activation,
        non_torch_bytes=non_torch,
        kv_bytes=max(0.0, kv),
        bytes_per_token=per_token,
        tokens=blocks * VLLM_BLOCK_TOKENS,
        max_model_len=length,
        cuda_graph_bytes=graphs,
        era=era,
    )
