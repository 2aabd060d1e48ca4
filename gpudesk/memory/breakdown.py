"""How much GPU memory a workload needs, part by part, with the formula of each part.

The ``*_gb`` fields count in GB = 10^9 bytes (so 7B parameters in bf16 are 14.0 GB);
the formulas, written for people, end in GiB = 2^30 bytes (13.04 GiB), the unit every
screen and command shows memory in (:mod:`gpudesk.units`). The catalog's ``memory_gb``
is the vendor's GB, which is GiB: :mod:`gpudesk.memory.usable` turns it into the bytes
a workload may use. Each part's ``source`` cites its rule.

- **weights**: the model's tensors in their stored format (:mod:`gpudesk.workload.quant`:
  plain dtypes, NF4, AWQ/GPTQ, FP8, MXFP4, GGUF mixes), plus LoRA adapters (fp32 as PEFT
  keeps them, or bf16). llama.cpp keeps the input embedding table in host memory.
- **gradients / optimizer**: mixed-precision AdamW is 16 bytes per parameter before
  activations (2 weights + 2 gradients + 4 fp32 master + 4 + 4 moments; the master is
  counted under optimizer, as Transformer Math 101 does). Pure bf16 drops the master
  copy and keeps the moments in bf16; 8-bit optimizers keep 1 + 1 byte; fusing the
  step into backward keeps only one tensor's gradient at a time. Paged optimizer
  states live in unified memory that is evicted to the host when the GPU runs short,
  and CPU offload keeps states and master weights in host memory: both are shown as
  host memory, not required on the GPU. ZeRO-1/2/3 (FSDP) shard optimizer states,
  gradients and weights across the data-parallel GPUs; tensor parallelism splits all
  of them (with sequence parallelism, activations too).
- **activations** (training): what autograd keeps, per layer and token, counted tensor
  by tensor from the shape (Korthikanti et al.'s 34·s·b·h for GPT-style blocks), with
  checkpointing keeping each layer's input; the peak adds the larger of the loss phase
  (logits: full fp32, chunked or fused cross-entropy) and one recomputed layer.
  **activations** (inference): the working set of the tokens one forward pass holds,
  which the engine bounds: the whole prompt (transformers), a prefill chunk (vLLM,
  TensorRT-LLM) or a micro-batch (llama.cpp).
- **KV cache**: per layer and token, K and V per KV head (grouped-query attention),
  MLA's latent when the engine caches it, sliding-window layers capped at the window;
  times the sequences that share the pool.
- **overhead**: the CUDA context (and vLLM's CUDA graphs) once per GPU plus the caching
  allocator's fragmentation: GPUDesk's stated assumptions.

``allocated_gb`` (everything but the overhead) is what ``torch.cuda.max_memory_allocated``
reports for PyTorch workloads: that figure excludes the CUDA context and cached free
blocks. ``total_gb`` is what the process needs of the card (what nvidia-smi shows).
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from gpudesk.units import (
    GB as GB,  # memory.fit reads the model's unit here too
    gib_text,
)
from gpudesk.workload import citations
from gpudesk.workload.architecture import ModelShape, TensorGroup, TensorRole
from gpudesk.workload.errors import InputProblem, PlanningInputError
from gpudesk.workload.presets import ModelArchitecture, ModelKind, format_param_count
from gpudesk.workload.quant import QuantFormat, WeightBytes, weight_bytes

#: CUDA context of a PyTorch process with lazy module loading (CUDA 11.7+).
OVERHEAD_FIXED_GB = 0.5
#: PyTorch caching-allocator fragmentation, as a share of the tensors it manages.
FRAGMENTATION_FRACTION = 0.05

MAX_PARAMS = 10e12  # 10T: larger than any model anyone has trained densely
MAX_BATCH = 65_536
MAX_SEQ = 10_000_000
MAX_LORA_RANK = 4096
MAX_GPUS = 4096
DEFAULT_SEQ = 2048
DEFAULT_LORA_RANK = 16

#: Korthikanti et al.: 34 bytes x s x b x h per GPT layer in 16-bit, without the
#: attention score matrices; with them (and dropout), + 5 x a x s / h.
KORTHIKANTI_BYTES = 34
KORTHIKANTI_SCORE_BYTES = 5
#: Full activation checkpointing keeps each layer's 16-bit input: 2 x s x b x h bytes.
CHECKPOINT_BYTES = 2
#: Checkpointing a CNN/UNet at block boundaries keeps roughly a quarter of what autograd
#: would store (block inputs of ResNet-style blocks); a stated assumption.
CNN_CHECKPOINT_KEEP = 0.25
#: torchtune's CEWithChunkedOutputLoss splits the logits into 8 chunks.
CE_CHUNKS = 8
#: With offloading, the checkpointed inputs of this many layers stay on the GPU
#: (the one in use and the one being prefetched).
OFFLOAD_RESIDENT_LAYERS = 2


class Workload(StrEnum):
    INFERENCE = "inference"
    TRAIN = "train"  # full fine-tuning
    LORA = "lora"
    QLORA = "qlora"

    @property
    def label(self) -> str:
        return _WORKLOAD_LABELS[self]

    @property
    def is_training(self) -> bool:
        return self is not Workload.INFERENCE


_WORKLOAD_LABELS = {
    Workload.INFERENCE: "inference",
    Workload.TRAIN: "full fine-tuning",
    Workload.LORA: "LoRA fine-tuning",
    Workload.QLORA: "QLoRA fine-tuning (4-bit base)",
}


class DType(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    INT8 = "int8"
    INT4 = "int4"

    @property
    def bytes(self) -> float:
        return _DTYPE_BYTES[self.value]

    @property
    def is_quantised(self) -> bool:
        return self in (DType.INT8, DType.INT4)


class KvDType(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"

    @property
    def bytes(self) -> float:
        return _DTYPE_BYTES[self.value]


_DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


class Optimizer(StrEnum):
    ADAMW = "adamw"  # torch.optim.AdamW: two moments in the parameters' dtype
    ADAMW_8BIT = "adamw8bit"  # bitsandbytes AdamW8bit
    PAGED_ADAMW = "paged_adamw"  # bitsandbytes PagedAdamW (32-bit states)
    PAGED_ADAMW_8BIT = "paged_adamw8bit"
    SGD = "sgd"  # with momentum

    @property
    def label(self) -> str:
        return _OPTIMIZER_LABELS[self]

    @property
    def paged(self) -> bool:
        return self in (Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT)

    def state_bytes(self, param_bytes: float) -> float:
        """Bytes of optimizer state per trainable parameter of ``param_bytes`` bytes."""
        if self in (Optimizer.ADAMW_8BIT, Optimizer.PAGED_ADAMW_8BIT):
            return 2.0  # two 8-bit moments (block constants < 0.01 byte)
        if self is Optimizer.PAGED_ADAMW:
            return 8.0  # bitsandbytes' 32-bit states whatever the parameter dtype
        if self is Optimizer.SGD:
            return param_bytes
        return 2 * param_bytes


_OPTIMIZER_LABELS = {
    Optimizer.ADAMW: "AdamW",
    Optimizer.ADAMW_8BIT: "8-bit AdamW",
    Optimizer.PAGED_ADAMW: "paged AdamW (32-bit states)",
    Optimizer.PAGED_ADAMW_8BIT: "paged 8-bit AdamW",
    Optimizer.SGD: "SGD with momentum",
}


class Engine(StrEnum):
    TRANSFORMERS = "transformers"
    VLLM = "vllm"
    LLAMA_CPP = "llama.cpp"
    TENSORRT_LLM = "tensorrt-llm"


class CrossEntropy(StrEnum):
    FULL = "full"  # fp32 log-probabilities of every token, and their gradient
    CHUNKED = "chunked"  # torchtune: bf16 logits, fp32 one chunk at a time
    FUSED = "fused"  # Liger / Cut Cross-Entropy: logits never materialised


class Sharding(StrEnum):
    NONE = "none"  # plain data parallelism: every GPU holds everything
    ZERO1 = "zero1"  # optimizer states sharded
    ZERO2 = "zero2"  # + gradients
    ZERO3 = "zero3"  # + weights (FSDP full sharding)


class PartKey(StrEnum):
    WEIGHTS = "weights"
    GRADIENTS = "gradients"
    OPTIMIZER = "optimizer"
    ACTIVATIONS = "activations"
    KV_CACHE = "kv_cache"
    OVERHEAD = "overhead"

    @property
    def label(self) -> str:
        return {
            "weights": "Weights",
            "gradients": "Gradients",
            "optimizer": "Optimizer states",
            "activations": "Activations",
            "kv_cache": "KV cache",
            "overhead": "Framework overhead",
        }[self.value]


class WorkloadSpec(BaseModel):
    """What the user wants to run. None fields mean "the default" (resolved per model)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workload: Workload = Workload.INFERENCE
    dtype: DType = DType.BF16
    batch: int = 1
    seq: int | None = None
    kv_dtype: KvDType | None = None
    checkpointing: bool = False
    optimizer: Optimizer = Optimizer.ADAMW
    lora_rank: int = DEFAULT_LORA_RANK
    #: FlashAttention / PyTorch SDPA: no s x s score matrices are kept
    flash_attention: bool = True
    #: how the weights are stored; None: the dtype (NF4 for QLoRA)
    quant: QuantFormat | None = None
    #: inference engine; None: transformers
    engine: Engine | None = None
    #: sequences sharing the KV cache at inference; None: the batch
    concurrency: int | None = None
    #: tokens per prefill step (vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens)
    prefill_chunk: int | None = None
    #: llama.cpp's physical micro-batch (-ub)
    ubatch: int | None = None
    #: training without fp32 master weights; moments in bf16
    pure_bf16: bool = False
    #: optimizer step fused into backward: each gradient applied and freed at once
    fused_optimizer: bool = False
    cross_entropy: CrossEntropy = CrossEntropy.FULL
    #: LoRA adapters (and so their gradients and AdamW moments) in bf16, not fp32
    lora_bf16: bool = False
    #: optimizer states and fp32 master weights in host memory (ZeRO-Offload)
    offload_optimizer: bool = False
    #: checkpointed layer inputs in host memory (torchtune activation offloading)
    offload_activations: bool = False
    sharding: Sharding = Sharding.NONE
    #: GPUs the estimate is per-GPU for; 1: fit on 1, 2, 4 or 8 with an ideal split
    gpus: int = 1
    tensor_parallel: int = 1


class MemoryPart(BaseModel):
    """One part of the breakdown, with the formula and its source shown to the user."""

    model_config = ConfigDict(frozen=True)

    key: PartKey
    gb: float
    formula: str
    source: str
    #: what this part keeps in host memory instead of the GPU (paged, offloaded)
    host_gb: float = 0.0

    @property
    def label(self) -> str:
        return self.key.label


class MemoryEstimate(BaseModel):
    """The breakdown for one model and workload, per GPU."""

    model_config = ConfigDict(frozen=True)

    model: ModelArchitecture
    spec: WorkloadSpec  # with seq, kv_dtype, quant and engine resolved
    parts: tuple[MemoryPart, ...]
    trainable_params: int
    #: bytes one decode step reads for a single stream (weights read + its KV cache)
    decode_bytes_per_token: float | None
    notes: tuple[str, ...]
    #: the weights in their format (None for CNN/UNet presets)
    weights: WeightBytes | None = None
    #: fixed per-GPU overhead (CUDA context, CUDA graphs) inside the overhead part
    fixed_overhead_gb: float = OVERHEAD_FIXED_GB
    fragmentation_fraction: float = FRAGMENTATION_FRACTION
    #: share of the card the engine lets itself use (vLLM: gpu_memory_utilization)
    usable_fraction: float = 1.0
    #: what ``allocated_gb`` and ``total_gb`` compare with
    compares_with: str = ""

    @property
    def total_gb(self) -> float:
        return sum(part.gb for part in self.parts)

    @property
    def allocated_gb(self) -> float:
        """Tensors only: comparable with PyTorch's max_memory_allocated."""
        return self.tensors_gb

    @property
    def host_gb(self) -> float:
        return sum(part.host_gb for part in self.parts)

    def part(self, key: PartKey) -> MemoryPart:
        for part in self.parts:
            if part.key is key:
                return part
        raise KeyError(key)

    def breakdown_gb(self) -> dict[str, float]:
        return {part.key.value: part.gb for part in self.parts}

    @property
    def tensors_gb(self) -> float:
        """Everything but the framework overhead: what can be split across GPUs."""
        return sum(part.gb for part in self.parts if part.key is not PartKey.OVERHEAD)

    @property
    def fixed_gpus(self) -> int | None:
        """The GPU count the figures are already per-GPU for, when the user gave one."""
        return self.spec.gpus if self.spec.gpus > 1 else None

    def per_gpu_gb(self, count: int, *, kv_cache: bool = True) -> float:
        """Memory each of ``count`` GPUs needs.

        When the spec names its GPUs, the parts already are per-GPU and only that count
        is meaningful. Otherwise an ideal tensor-parallel split with sequence
        parallelism: weights, gradients, optimizer states and activations divide by
        ``count``; the KV cache divides by at most the KV heads (an MLA latent is not
        split by heads, so every GPU holds all of it); the CUDA context exists on
        every GPU, so the fixed overhead does not divide. ``kv_cache=False``: everything
        but the KV cache (what a serving engine's KV pool is sized beside).
        """
        if count < 1:
            raise ValueError("count must be at least 1")
        kv = self.part(PartKey.KV_CACHE).gb
        fragmentation = self.part(PartKey.OVERHEAD).gb - self.fixed_overhead_gb
        share = fragmentation / self.tensors_gb if self.tensors_gb else 0.0
        if self.fixed_gpus is not None or count == 1:
            return self.total_gb - (0.0 if kv_cache else kv * (1 + share))
        kv_split = count
        shape = self.model.shape
        if shape is not None:
            kv_split = 1 if shape.is_mla else min(count, shape.kv_heads)
        tensors = (self.tensors_gb - kv) / count + (kv / kv_split if kv_cache else 0.0)
        return tensors * (1 + share) + self.fixed_overhead_gb

    @property
    def is_decoder_inference(self) -> bool:
        return self.spec.workload is Workload.INFERENCE and self.model.has_kv_cache


_PARAM_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmbt]?)\s*$", re.I)
_PARAM_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_param_count(text: str) -> int:
    """'7B' -> 7e9, '350M', '1.5T', '125k', '7e9', '7000000000' all work.

    Raises:
        PlanningInputError: not a number like these, zero or negative, or absurd (> 10T).
    """
    cleaned = text.strip().replace(",", "").replace("_", "")
    if cleaned.startswith("-"):
        raise PlanningInputError(f"parameter count {text!r} is negative")
    match = _PARAM_PATTERN.match(cleaned)
    if match is None:
        raise PlanningInputError(
            f"parameter count {text!r} is not a number like 7B, 350M, 1.5T or 7e9"
        )
    value = float(match.group(1)) * _PARAM_SCALE[match.group(2).lower()]
    if not math.isfinite(value) or value < 1:
        raise PlanningInputError(f"parameter count {text!r} must be at least 1")
    if value > MAX_PARAMS:
        raise PlanningInputError(
            f"parameter count {text!r} is absurd: more than {format_param_count(MAX_PARAMS)}"
        )
    return round(value)


def _gb(value_bytes: float) -> float:
    return value_bytes / GB


def _fmt_gb(value_gb: float) -> str:
    """A formula's amount, counted in GB (10^9 bytes), as people read it: "13.04 GiB"."""
    return gib_text(value_gb, 2)


def _fmt_count(value: float) -> str:
    return f"{value:,.0f}" if value < 1e6 else format_param_count(value)


_LORA_ROLES = frozenset(
    {
        TensorRole.ATTN_Q,
        TensorRole.ATTN_K,
        TensorRole.ATTN_V,
        TensorRole.ATTN_OUTPUT,
        TensorRole.ATTN_LATENT,
        TensorRole.FFN_GATE,
        TensorRole.FFN_UP,
        TensorRole.FFN_DOWN,
    }
)


def _linear_groups(shape: ModelShape) -> list[TensorGroup]:
    return [group for group in shape.tensors() if group.role in _LORA_ROLES]


def lora_adapter_params(model: ModelArchitecture, rank: int) -> tuple[int, str]:
    """Trainable LoRA parameters and how they were counted.

    A rank-r adapter on a d_in x d_out matrix adds r x (d_in + d_out) parameters
    (Hu et al. 2021), here on every linear layer of every block (attention and MLP
    projections, every expert), as QLoRA does.
    """
    shape = model.shape
    if shape is not None:
        count = 0
        for group in _linear_groups(shape):
            d_out = group.params_each // group.in_features
            count += rank * (group.in_features + d_out) * group.count
        how = (
            f"rank {rank} on every linear layer (attention and MLP projections"
            f"{', every expert' if shape.is_moe else ''}): r × (d_in + d_out) per matrix"
        )
        return count, how
    if model.lora_params_per_rank is not None:
        return model.lora_params_per_rank * rank, (
            f"rank {rank} on the attention projections: {model.lora_params_per_rank:,} per rank"
        )
    fraction = (model.lora_fraction_at_rank_16 or 0.01) * rank / DEFAULT_LORA_RANK
    count = max(1, round(model.params * fraction))
    return count, f"assumed {fraction:.2%} of the parameters at rank {rank} (no shapes known)"


def _weight_format(spec: WorkloadSpec) -> QuantFormat:
    if spec.quant is not None:
        return spec.quant
    if spec.workload is Workload.QLORA:
        return QuantFormat.NF4
    return QuantFormat(spec.dtype.value)


def _problem(
    message: str, field: str, value: object, reason: str, fix: dict[str, str] | None = None
) -> PlanningInputError:
    """An error on one :class:`WorkloadSpec` field: the message in the core's words, the
    field, value, reason and a working alternative as data for the edges to word."""
    return PlanningInputError(message, problems=[InputProblem(field, value, reason, fix or {})])


def _check(model: ModelArchitecture, spec: WorkloadSpec) -> None:
    if not 1 <= model.params <= MAX_PARAMS:
        raise PlanningInputError(f"parameter count {model.params:,} is out of range")
    for field, noun, value, top, unit in (
        ("batch", "batch size", spec.batch, MAX_BATCH, ""),
        ("seq", "sequence length", spec.seq, MAX_SEQ, " tokens"),
        ("lora_rank", "LoRA rank", spec.lora_rank, MAX_LORA_RANK, ""),
        ("concurrency", "concurrency", spec.concurrency, MAX_BATCH, ""),
        ("prefill_chunk", "prefill chunk", spec.prefill_chunk, MAX_SEQ, ""),
        ("ubatch", "micro-batch", spec.ubatch, MAX_BATCH, ""),
        ("gpus", "GPU count", spec.gpus, MAX_GPUS, ""),
    ):
        if value is not None and not 1 <= value <= top:
            reason = f"must be between 1 and {top:,}{unit}"
            raise _problem(f"{noun} {value} {reason}", field, value, reason)
    if spec.tensor_parallel < 1 or spec.gpus % spec.tensor_parallel:
        reason = f"must divide the GPU count {spec.gpus}"
        raise _problem(
            f"tensor-parallel degree {spec.tensor_parallel} {reason}",
            "tensor_parallel",
            spec.tensor_parallel,
            reason,
        )
    fmt = _weight_format(spec)
    # The weight format comes from the quant when one is given, else from the dtype.
    fmt_field, fmt_value = ("quant", fmt.value) if spec.quant is not None else ("dtype", fmt.value)
    w = spec.workload
    if w is Workload.TRAIN and not fmt.is_plain:
        reason = (
            "cannot be fully fine-tuned (that needs fp32, bf16 or fp16 weights); a quantised "
            "base can only be trained through LoRA adapters"
        )
        # int8/int4 as the dtype: QLoRA (NF4 base, bf16 compute); a stored format: LoRA
        # on it; a GGUF file cannot be trained at all.
        if fmt.is_gguf:
            reason = "is an inference format: it cannot be trained"
            fix = {"workload": Workload.INFERENCE.value}
        elif spec.quant is None:
            fix = {"workload": Workload.QLORA.value, "dtype": DType.BF16.value}
        else:
            fix = {"workload": Workload.LORA.value}
        raise _problem(
            f"full fine-tuning needs fp32, bf16 or fp16 weights, not {fmt.label}; "
            "a quantised base can only be trained through LoRA adapters (LoRA or QLoRA)",
            fmt_field,
            fmt_value,
            reason,
            fix,
        )
    if w is Workload.QLORA and spec.dtype.is_quantised:
        reason = "cannot be QLoRA's compute dtype: it stores the base in 4-bit NF4 and computes "
        reason += "in bf16, fp16 or fp32"
        raise _problem(
            "QLoRA stores the base in 4-bit NF4 and computes in bf16, fp16 or fp32, "
            f"not {spec.dtype}",
            "dtype",
            spec.dtype.value,
            reason,
            {"dtype": DType.BF16.value},
        )
    if w.is_training and fmt.is_gguf:
        reason = "is an inference format: it cannot be trained"
        raise _problem(
            f"{fmt.label} {reason}", fmt_field, fmt_value, reason, {"workload": "inference"}
        )
    if model.shape is None and not (fmt.is_plain or fmt in (QuantFormat.INT8, QuantFormat.INT4)):
        reason = (
            f"is a per-tensor transformer format; {model.name} has no transformer shape, so "
            "only fp32, bf16, fp16, int8 or int4 apply"
        )
        raise _problem(f"{fmt.label} {reason}", fmt_field, fmt_value, reason)
    if spec.pure_bf16 and w is Workload.TRAIN and spec.dtype is not DType.BF16:
        reason = "cannot be trained in pure bf16, which needs bf16 weights"
        raise _problem(
            f"pure bf16 training needs bf16 weights, not {spec.dtype}",
            "dtype",
            spec.dtype.value,
            reason,
            {"dtype": DType.BF16.value},
        )


def _resolve(model: ModelArchitecture, spec: WorkloadSpec) -> WorkloadSpec:
    seq = spec.seq
    shape = model.shape
    if shape is not None and seq is None:
        seq = min(DEFAULT_SEQ, shape.context)
    if shape is None:
        seq = None  # images, not tokens: batch counts samples
    fmt = _weight_format(spec)
    kv_dtype = spec.kv_dtype
    if kv_dtype is None:
        # Quantised weights still compute (and cache K/V) in 16-bit.
        kv_dtype = KvDType(spec.dtype.value) if fmt.is_plain else KvDType.FP16
    engine = spec.engine
    if spec.workload is Workload.INFERENCE and engine is None:
        engine = Engine.LLAMA_CPP if fmt.is_gguf else Engine.TRANSFORMERS
    return spec.model_copy(
        update={"seq": seq, "kv_dtype": kv_dtype, "quant": fmt, "engine": engine}
    )


def _sequences(spec: WorkloadSpec) -> int:
    return spec.concurrency if spec.concurrency is not None else spec.batch


def _data_parallel(spec: WorkloadSpec) -> int:
    return spec.gpus // spec.tensor_parallel


def _act_bytes(spec: WorkloadSpec) -> float:
    """fp32 runs keep fp32 activations; everything else computes in 16-bit."""
    return 4.0 if spec.dtype is DType.FP32 else 2.0


# -- the shape's activation counts ----------------------------------------------------


def _mlp_width(shape: ModelShape) -> int:
    """Intermediate values one token creates in an MLP: routed experts it visits count."""
    if not shape.is_moe:
        return shape.intermediate
    assert shape.active_experts is not None
    width = shape.expert_intermediate or shape.intermediate
    routed = (shape.active_experts + shape.shared_experts) * width
    return max(shape.intermediate if shape.dense_layers else 0, routed)


def _attention_widths(shape: ModelShape) -> tuple[int, int]:
    """(query width, key/value width) per token as attention computes them."""
    if shape.is_mla:
        assert shape.qk_nope_head_dim and shape.qk_rope_head_dim and shape.v_head_dim
        q = shape.heads * (shape.qk_nope_head_dim + shape.qk_rope_head_dim)
        return q, (q + shape.heads * shape.v_head_dim) // 2
    return shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim


def layer_saved_bytes_per_token(shape: ModelShape, flash: bool, seq: int) -> tuple[float, str]:
    """Bytes one layer keeps for backward per token, in 16-bit.

    GPT-style blocks (plain MLP, dropout): Korthikanti et al.'s 34·h, plus 5·a·s for the
    score matrices without FlashAttention. Gated-MLP blocks without dropout (Llama,
    Qwen, Mistral, Gemma, DeepSeek) counted the same way tensor by tensor: 4·h for the
    two norms' inputs, 2·h + 4·q + 4·kv for attention (its input, Q, K, V and the output
    projection's input), 2·h + 8·i for the MLP (its input, gate, up, activation and
    product), with i the intermediate values a token creates (its active experts for a
    mixture of experts); without FlashAttention, 6·a·s for the fp32 softmax and its
    16-bit copy.
    """
    h, a = shape.hidden, shape.heads
    if not shape.gated_mlp:
        per_token = KORTHIKANTI_BYTES * h * (shape.intermediate / (4 * h))
        text = "34×h"
        if not flash:
            per_token += KORTHIKANTI_SCORE_BYTES * a * seq
            text = "h×(34 + 5×a×s/h)"
        return per_token, text
    q, kv = _attention_widths(shape)
    i = _mlp_width(shape)
    per_token = 4 * h + (2 * h + 4 * q + 4 * kv) + (2 * h + 8 * i)
    text = "8×h + 4×q + 4×kv + 8×i"
    if not flash:
        per_token += 6 * a * seq
        text += " + 6×a×s"
    return float(per_token), text


# -- parts --------------------------------------------------------------------------


def _plain_weight_bits(fmt: QuantFormat) -> float:
    return {"fp32": 32.0, "bf16": 16.0, "fp16": 16.0, "int8": 8.0, "int4": 4.0}[fmt.value]


def _largest_layer_params(shape: ModelShape) -> int:
    per_layer: dict[int, int] = {}
    for group in shape.tensors():
        if group.layer is not None:
            per_layer[group.layer] = per_layer.get(group.layer, 0) + group.params
    return max(per_layer.values(), default=0)


def _weights_part(
    model: ModelArchitecture, spec: WorkloadSpec, adapter_params: int
) -> tuple[MemoryPart, WeightBytes | None]:
    assert spec.quant is not None
    fmt = spec.quant
    p = model.params
    stored: WeightBytes | None = None
    host = 0.0
    if model.shape is not None:
        stored = weight_bytes(model.shape, fmt, gguf=spec.engine is Engine.LLAMA_CPP)
        scale = p / stored.params  # a published count a little off the shape's own
        base = stored.in_memory_bytes * scale
        formula = (
            f"{_fmt_count(p)} params in {fmt.label}: {stored.bits_per_weight:.3g} bits per "
            f"weight overall (bulk {stored.bulk_bits:.4g}, embeddings "
            f"{stored.embedding_bits:.4g}, LM head {stored.lm_head_bits:.4g})"
        )
        if spec.engine is Engine.LLAMA_CPP and not model.shape.tied_embeddings:
            host = stored.input_embedding_bytes * scale
            base -= host
            formula += (
                f"; the {_fmt_gb(_gb(host))} input embedding table stays in host memory (llama.cpp)"
            )
        source = fmt.source
        if not fmt.is_plain and not fmt.is_gguf:
            source += f"; {citations.QUANTISED_EMBEDDINGS}"
    else:
        bits = _plain_weight_bits(fmt)
        base = p * bits / 8
        formula = f"{_fmt_count(p)} params × {bits / 8:g} bytes ({fmt.label})"
        source = citations.TRANSFORMER_MATH
    tp, dp = spec.tensor_parallel, _data_parallel(spec)
    total = base / tp
    if tp > 1:
        formula += f" / {tp} (tensor parallel)"
    if spec.sharding is Sharding.ZERO3 and dp > 1 and spec.workload.is_training:
        total /= dp
        formula += f" / {dp} (ZeRO-3/FSDP shards)"
        source += f"; {citations.ZERO}"
    if spec.workload in (Workload.LORA, Workload.QLORA):
        adapter_bytes = 2.0 if spec.lora_bf16 else 4.0
        total += adapter_params * adapter_bytes / tp
        formula += (
            f" + {_fmt_count(adapter_params)} LoRA adapter params × {adapter_bytes:g} bytes "
            f"({'bf16' if spec.lora_bf16 else 'fp32'})"
        )
        source += f"; {citations.PEFT_FP32_ADAPTERS}"
    return (
        MemoryPart(
            key=PartKey.WEIGHTS,
            gb=_gb(total),
            formula=f"{formula} = {_fmt_gb(_gb(total))}",
            source=source,
            host_gb=_gb(host),
        ),
        stored,
    )


def _stored_bytes(fmt: QuantFormat) -> float:
    """Bytes per weight of a plain format (training weights are always plain)."""
    return _plain_weight_bits(fmt) / 8 if fmt.is_plain else 2.0


def _largest_tensor_params(model: ModelArchitecture) -> int:
    if model.shape is None:
        return model.params
    return max(group.params_each for group in model.shape.tensors())


def _training_parts(
    model: ModelArchitecture, spec: WorkloadSpec, trainable: int, adapter_how: str
) -> tuple[MemoryPart, MemoryPart]:
    w = spec.workload
    if w is Workload.INFERENCE:
        none = "none: inference computes no gradients and keeps no optimizer state"
        return (
            MemoryPart(
                key=PartKey.GRADIENTS, gb=0.0, formula=none, source=citations.TRANSFORMER_MATH
            ),
            MemoryPart(
                key=PartKey.OPTIMIZER, gb=0.0, formula=none, source=citations.TRANSFORMER_MATH
            ),
        )
    full = w is Workload.TRAIN
    if full:
        param_bytes = 2.0 if spec.dtype is not DType.FP32 else 4.0
        mixed = spec.dtype is not DType.FP32 and not spec.pure_bf16
        who = f"{_fmt_count(trainable)} trainable params"
    else:
        param_bytes = 2.0 if spec.lora_bf16 else 4.0
        mixed = False
        who = f"{_fmt_count(trainable)} adapter params ({adapter_how})"
    tp, dp = spec.tensor_parallel, _data_parallel(spec)
    source = citations.TRANSFORMER_MATH + ("" if full else f"; {citations.LORA}")

    # Gradients: in the parameters' dtype; a fused step keeps one tensor's at a time.
    grad_count = float(trainable)
    grad_text = f"{who} × {param_bytes:g} bytes"
    if spec.fused_optimizer and full:
        grad_count = float(_largest_tensor_params(model))
        grad_text = (
            f"optimizer step fused into backward: only the largest tensor's gradient "
            f"({_fmt_count(grad_count)} params) × {param_bytes:g} bytes at a time"
        )
        source += f"; {citations.FUSED_OPTIMIZER}"
    grad_bytes = grad_count * param_bytes / tp
    if spec.sharding in (Sharding.ZERO2, Sharding.ZERO3) and dp > 1 and not spec.fused_optimizer:
        grad_bytes /= dp
        grad_text += f" / {dp} (ZeRO-2/3 shards)"
    if tp > 1:
        grad_text += f" / {tp} (tensor parallel)"
    gradients = MemoryPart(
        key=PartKey.GRADIENTS,
        gb=_gb(grad_bytes),
        formula=f"{grad_text} = {_fmt_gb(_gb(grad_bytes))}",
        source=source,
    )

    # Optimizer: states in their dtype, plus the fp32 master copy of mixed precision.
    state = spec.optimizer.state_bytes(4.0 if mixed else param_bytes)
    master = 4.0 if mixed else 0.0
    pieces = []
    if master:
        pieces.append("4 (fp32 master weights)")
    pieces.append(f"{state:g} ({spec.optimizer.label} states)")
    opt_bytes = trainable * (state + master) / tp
    opt_text = f"{spec.optimizer.label}: {who} × ({' + '.join(pieces)} = {state + master:g} bytes)"
    opt_source = citations.TRANSFORMER_MATH
    if spec.optimizer is not Optimizer.ADAMW and spec.optimizer is not Optimizer.SGD:
        opt_source += f"; {citations.EIGHT_BIT_OPTIMIZERS}"
    if spec.sharding is not Sharding.NONE and dp > 1:
        opt_bytes /= dp
        opt_text += f" / {dp} (ZeRO shards)"
        opt_source += f"; {citations.ZERO}"
    if tp > 1:
        opt_text += f" / {tp} (tensor parallel)"
    host = 0.0
    if spec.offload_optimizer:
        host, opt_bytes = opt_bytes, 0.0
        opt_text += "; offloaded: all of it in host memory (the step runs on the CPU)"
        opt_source += f"; {citations.ZERO_OFFLOAD}"
    elif spec.optimizer.paged:
        paged = trainable * state / tp
        if spec.sharding is not Sharding.NONE and dp > 1:
            paged /= dp
        host, opt_bytes = paged, opt_bytes - paged
        opt_text += (
            f"; the {_fmt_gb(_gb(paged))} of paged states live in unified memory that is "
            "evicted to host memory when the GPU runs short, so they are not required on it"
        )
        opt_source += f"; {citations.PAGED_OPTIMIZERS}"
    if full:
        per_param = param_bytes + param_bytes + state + master
        opt_text += f"; with weights and gradients: {per_param:g} bytes per parameter"
    optimizer = MemoryPart(
        key=PartKey.OPTIMIZER,
        gb=_gb(opt_bytes),
        formula=f"{opt_text} = {_fmt_gb(_gb(opt_bytes))}",
        source=opt_source,
        host_gb=_gb(host),
    )
    return gradients, optimizer


def _logits_bytes(spec: WorkloadSpec, tokens: int, vocab: int, hidden: int) -> tuple[float, str]:
    """The loss phase's peak: what the logits and their gradient hold."""
    if spec.cross_entropy is CrossEntropy.FUSED:
        return 8.0 * tokens * hidden, "fused cross-entropy: one chunk of logits, 8×T×h"
    if spec.cross_entropy is CrossEntropy.CHUNKED:
        value = 2.0 * tokens * vocab + 8.0 * tokens * vocab / CE_CHUNKS
        return value, f"chunked cross-entropy: 16-bit logits 2×T×V + fp32 chunk 8×T×V/{CE_CHUNKS}"
    return 8.0 * tokens * vocab, "fp32 log-probabilities and their gradient, 8×T×V"


def _training_activations(
    model: ModelArchitecture, spec: WorkloadSpec, notes: list[str]
) -> tuple[float, str, str]:
    shape = model.shape
    assert shape is not None and spec.seq is not None
    s, b = spec.seq, spec.batch
    tokens = s * b
    scale = _act_bytes(spec) / 2
    tp = spec.tensor_parallel
    per_token, layer_text = layer_saved_bytes_per_token(shape, spec.flash_attention, s)
    layer = per_token * tokens * scale / tp
    layers = shape.layers
    logits, logits_text = _logits_bytes(spec, tokens, shape.vocab, shape.hidden)
    logits /= tp
    # Backward of one layer: gradients of its widest tensors exist for a moment.
    transient = 2.0 * (2 * _mlp_width(shape) + 2 * shape.hidden) * tokens * scale / tp
    dequant = 0.0
    assert spec.quant is not None
    if not spec.quant.is_plain:
        dequant = 2.0 * max(g.params_each for g in _linear_groups(shape)) / tp
    gathered = 0.0
    if spec.sharding is Sharding.ZERO3 and _data_parallel(spec) > 1 and not spec.quant.is_gguf:
        # Two layers' full weights at a time: the one computing and the one prefetched.
        gathered = 2 * _largest_layer_params(shape) * _stored_bytes(spec.quant) / tp
    if spec.checkpointing:
        resident = OFFLOAD_RESIDENT_LAYERS if spec.offload_activations else layers
        kept = CHECKPOINT_BYTES * shape.hidden * tokens * scale * resident / tp
        layer_phase = layer + transient
        kept_text = f"checkpointed inputs 2×s×b×h × {resident} layers" + (
            " (the rest offloaded to host memory)" if spec.offload_activations else ""
        )
    else:
        kept = layer * layers
        layer_phase = transient
        kept_text = f"{layer_text} per token × {layers} layers"
    peak_phase = max(logits, layer_phase)
    total = kept + peak_phase + dequant + gathered
    phase = logits_text if logits >= layer_phase else "one layer recomputed and its gradients"
    formula = (
        f"{kept_text} ({_fmt_gb(_gb(kept))}) + the larger backward phase: {phase} "
        f"({_fmt_gb(_gb(peak_phase))}; logits {_fmt_gb(_gb(logits))}, layer "
        f"{_fmt_gb(_gb(layer_phase))})"
    )
    if dequant:
        formula += f" + one dequantised weight ({_fmt_gb(_gb(dequant))})"
    if gathered:
        formula += f" + two ZeRO-3 layers gathered at a time ({_fmt_gb(_gb(gathered))})"
    formula += f"; s={s:,}, b={b}, h={shape.hidden}, V={shape.vocab:,}"
    if scale != 1:
        formula += ", fp32 values"
    if tp > 1:
        formula += f", / {tp} (tensor + sequence parallel)"
    formula += "; an approximation"
    if spec.workload in (Workload.LORA, Workload.QLORA):
        notes.append(
            "LoRA does not shrink activations: gradients still flow through every "
            "frozen layer to reach the adapters."
        )
    source = citations.KORTHIKANTI
    if spec.flash_attention:
        source += f"; {citations.FLASH_ATTENTION}"
    if spec.checkpointing:
        source += f"; {citations.CHECKPOINTING}"
    if spec.cross_entropy is not CrossEntropy.FULL:
        source += f"; {citations.CHUNKED_CE}"
    return total, formula, source


#: default tokens per forward pass of each engine (see :func:`_inference_activations`)
VLLM_MAX_BATCHED_TOKENS = 8192
TRTLLM_MAX_NUM_TOKENS = 8192
LLAMA_CPP_UBATCH = 512
VLLM_MAX_NUM_SEQS = 256
VLLM_GPU_MEMORY_UTILIZATION = 0.9
#: KV block sizes (tokens): vLLM 16, TensorRT-LLM 32; llama.cpp pads its context to 256
KV_BLOCK_TOKENS = {Engine.VLLM: 16, Engine.TENSORRT_LLM: 32, Engine.LLAMA_CPP: 256}
#: per-GPU fixed overhead by engine: CUDA context (+ vLLM's CUDA graphs)
ENGINE_FIXED_GB = {
    Engine.TRANSFORMERS: OVERHEAD_FIXED_GB,
    Engine.VLLM: OVERHEAD_FIXED_GB + 0.5,
    Engine.TENSORRT_LLM: OVERHEAD_FIXED_GB,
    Engine.LLAMA_CPP: 0.3,
}


def _inference_activations(model: ModelArchitecture, spec: WorkloadSpec) -> tuple[float, str, str]:
    """The forward pass's working set, bounded by how the engine batches tokens.

    transformers runs the whole prompt of every sequence at once; vLLM and TensorRT-LLM
    prefill in chunks of at most ``prefill_chunk`` tokens and size their activation
    memory for a full chunk at start-up; llama.cpp reserves a compute buffer for one
    micro-batch of ``ubatch`` tokens, in fp32, whose largest tensor is the logits.
    """
    shape = model.shape
    assert shape is not None and spec.seq is not None and spec.engine is not None
    seqs = _sequences(spec)
    s = spec.seq
    q, kv = _attention_widths(shape)
    i = _mlp_width(shape)
    h, v, a = shape.hidden, shape.vocab, shape.heads
    engine = spec.engine
    tp = spec.tensor_parallel
    if engine is Engine.LLAMA_CPP:
        ub = spec.ubatch or LLAMA_CPP_UBATCH
        n_ctx = s * seqs
        widest = max(v, 2 * i, 0 if spec.flash_attention else a * n_ctx)
        total = 4.0 * ub * (h + widest)
        formula = (
            f"llama.cpp compute buffer for a {ub}-token micro-batch in fp32: "
            f"4 × {ub} × (h + max(V, 2×i{'' if spec.flash_attention else ', a×n_ctx'})) "
            f"with h={h}, V={v:,}, i={i:,}"
        )
        return total / tp, formula, citations.LLAMA_CPP_BUFFERS
    per_token = 2.0 * (3 * h + 2 * q + 2 * kv + 3 * i) * _act_bytes(spec) / 2
    if engine is Engine.TRANSFORMERS:
        tokens = s * seqs
        what = f"the whole prompt at once, {seqs} × {s:,} tokens"
        logits = 4.0 * seqs * v
        scores = 0.0 if spec.flash_attention else 6.0 * a * s * s * seqs
    else:
        default = VLLM_MAX_BATCHED_TOKENS if engine is Engine.VLLM else TRTLLM_MAX_NUM_TOKENS
        tokens = spec.prefill_chunk or default
        what = f"a prefill chunk of {tokens:,} tokens"
        rows = VLLM_MAX_NUM_SEQS if engine is Engine.VLLM else seqs
        logits = 8.0 * rows * v  # fp32 logits and probabilities of the sampled rows
        scores = 0.0  # paged/flash attention kernels only
    total = (per_token * tokens + logits + scores) / tp
    formula = (
        f"{engine.value}: {what} × 2×(3×h + 2×q + 2×kv + 3×i) bytes (h={h}, q={q}, kv={kv}, "
        f"i={i:,}) + fp32 logits of the sampled rows"
    )
    if scores:
        formula += " + fp32/16-bit attention scores 6×a×s² (no FlashAttention)"
    source = citations.KORTHIKANTI
    if engine is Engine.VLLM:
        source += f"; {citations.VLLM_MEMORY}"
    elif engine is Engine.TENSORRT_LLM:
        source += f"; {citations.TRTLLM_MEMORY}"
    return total, formula, source


def _activations_part(model: ModelArchitecture, spec: WorkloadSpec) -> tuple[MemoryPart, list[str]]:
    notes: list[str] = []
    training = spec.workload.is_training
    if model.shape is not None:
        if training:
            total, formula, source = _training_activations(model, spec, notes)
        else:
            total, formula, source = _inference_activations(model, spec)
        return (
            MemoryPart(
                key=PartKey.ACTIVATIONS,
                gb=_gb(total),
                formula=f"{formula} = {_fmt_gb(_gb(total))}",
                source=source,
            ),
            notes,
        )
    # CNN / UNet: element counts per sample at the reference input.
    value_bytes = _act_bytes(spec)
    assert model.activation_elements_per_sample and model.inference_activation_elements_per_sample
    if training:
        elements = model.activation_elements_per_sample
        scores = model.attention_score_elements_per_sample or 0.0
    else:
        elements = model.inference_activation_elements_per_sample
        scores = model.inference_attention_score_elements_per_sample or 0.0
    score_values = 0.0 if spec.flash_attention else scores * KORTHIKANTI_SCORE_BYTES / 2
    per_sample_values = elements + score_values
    keep = CNN_CHECKPOINT_KEEP if (training and spec.checkpointing) else 1.0
    total = per_sample_values * spec.batch * value_bytes * keep
    what = "stored for backward" if training else "live at once (inference)"
    formula = (
        f"{per_sample_values:.3g} values per sample ({what}, per {model.reference_input})"
        f" × {spec.batch} × {value_bytes:g} bytes"
    )
    if scores and not spec.flash_attention:
        formula += " (incl. attention scores, no FlashAttention)"
    if keep != 1.0:
        formula += f" × {keep:g} kept with checkpointing (assumption)"
    formula += f"; counted from the layer layout, an approximation = {_fmt_gb(_gb(total))}"
    source = "; ".join(model.sources[:1])
    if training and spec.checkpointing:
        source += f"; {citations.CHECKPOINTING}"
    return MemoryPart(key=PartKey.ACTIVATIONS, gb=_gb(total), formula=formula, source=source), notes


def kv_cache_bytes(model: ModelArchitecture, seq: int, batch: int, kv_bytes: float) -> float:
    """K/V bytes for ``batch`` sequences of ``seq`` tokens, as the architecture caches them
    (GQA by KV heads, MLA's latent, sliding-window layers capped at the window)."""
    assert model.shape is not None
    return model.shape.kv_cache_bytes(seq, kv_bytes) * batch


def _kv_part(model: ModelArchitecture, spec: WorkloadSpec) -> MemoryPart:
    if spec.workload.is_training:
        reason = "none: training processes whole sequences and keeps no KV cache"
    elif model.kind is ModelKind.ENCODER:
        reason = "none: an encoder reads the whole sequence at once and caches nothing"
    elif model.shape is None:
        reason = f"none: a {model.kind.value} has no attention cache"
    else:
        reason = ""
    if reason:
        return MemoryPart(key=PartKey.KV_CACHE, gb=0.0, formula=reason, source=citations.KV_CACHE)
    shape = model.shape
    assert shape is not None and spec.seq is not None and spec.kv_dtype is not None
    engine = spec.engine or Engine.TRANSFORMERS
    latent = engine is not Engine.TRANSFORMERS
    seqs = _sequences(spec)
    block = KV_BLOCK_TOKENS.get(engine, 1)
    if engine is Engine.LLAMA_CPP:  # one context for all slots, padded
        per_seq_tokens = math.ceil(spec.seq * seqs / block) * block / seqs
    else:
        per_seq_tokens = math.ceil(spec.seq / block) * block
    per_seq = shape.kv_cache_bytes(round(per_seq_tokens), spec.kv_dtype.bytes, mla_latent=latent)
    tp = spec.tensor_parallel
    split = 1 if shape.is_mla and latent else min(tp, shape.kv_heads)
    total = per_seq * seqs / split
    per_layer = shape.kv_values_per_token_per_layer(mla_latent=latent)
    if shape.is_mla:
        what = (
            f"MLA latent (kv_lora_rank {shape.kv_lora_rank} + rope {shape.qk_rope_head_dim}) = "
            f"{per_layer} values"
            if latent
            else f"MLA expanded per head ({shape.heads} heads) = {per_layer:,} values"
        )
    else:
        what = f"2 × {shape.kv_heads} KV heads × {shape.head_dim} head dim = {per_layer:,} values"
    full, sliding = shape.kv_cached_tokens(round(per_seq_tokens))
    formula = (
        f"{what} per token per layer × {spec.kv_dtype.bytes:g} bytes ({spec.kv_dtype}) × "
        f"{shape.layers} layers × {round(per_seq_tokens):,} tokens"
    )
    if shape.sliding_layers:
        formula += (
            f" ({shape.sliding_layers} sliding-window layers hold at most "
            f"{shape.sliding_window:,}: {full + sliding:,} layer-tokens in all)"
        )
    formula += f" × {seqs} sequence{'s' if seqs != 1 else ''}"
    if block > 1:
        formula += f" ({engine.value} allocates in blocks of {block} tokens)"
    if split > 1:
        formula += f" / {split} (tensor parallel)"
    formula += f" = {_fmt_gb(_gb(total))}"
    return MemoryPart(
        key=PartKey.KV_CACHE, gb=_gb(total), formula=formula, source=citations.KV_CACHE
    )


def _compares_with(spec: WorkloadSpec) -> str:
    if spec.workload.is_training or spec.engine is Engine.TRANSFORMERS:
        return (
            "The tensors (every part but the overhead) compare with PyTorch's "
            "torch.cuda.max_memory_allocated(), which excludes the CUDA context and the "
            "caching allocator's free blocks; the total compares with nvidia-smi's figure for "
            "the process."
        )
    if spec.engine is Engine.VLLM:
        return (
            "vLLM claims gpu_memory_utilization (0.9) of the card and fills what the weights "
            "and activations leave with KV blocks; the total is what the workload needs of "
            "that share, so a card fits when the total is at most 0.9 × its memory (the "
            "vendor's GB read as GiB)."
        )
    if spec.engine is Engine.LLAMA_CPP:
        return (
            "The tensors compare with the sum of llama.cpp's logged model, KV and compute "
            "buffers (CUDA0, ROCm0, Vulkan0, Metal, SYCL0); the total adds the runtime's "
            "context."
        )
    return (
        "TensorRT-LLM sizes its KV pool from free memory (free_gpu_memory_fraction 0.9); "
        "the total is what the workload needs with the KV cache it asks for."
    )


def estimate_memory(model: ModelArchitecture, spec: WorkloadSpec) -> MemoryEstimate:
    """The memory breakdown of ``spec`` run on ``model``, per GPU.

    Raises:
        PlanningInputError: out-of-range sizes or a format the workload cannot use.
    """
    _check(model, spec)
    spec = _resolve(model, spec)
    notes: list[str] = []
    if model.notes:
        notes.append(model.notes)
    shape = model.shape
    if spec.seq is not None and shape is not None and spec.seq > shape.context:
        notes.append(
            f"Sequence length {spec.seq:,} exceeds {model.name}'s context of "
            f"{shape.context:,} tokens."
        )
    training = spec.workload.is_training
    if not training and spec.checkpointing:
        notes.append("Gradient checkpointing only matters for training; ignored for inference.")
    if not training and spec.optimizer is not Optimizer.ADAMW:
        notes.append("The optimizer only matters for training; ignored for inference.")
    if training and spec.engine is not None:
        notes.append("The inference engine only matters for inference; ignored for training.")

    adapter_params, adapter_how = 0, ""
    if spec.workload in (Workload.LORA, Workload.QLORA):
        adapter_params, adapter_how = lora_adapter_params(model, spec.lora_rank)
    trainable = {
        Workload.INFERENCE: 0,
        Workload.TRAIN: model.params,
        Workload.LORA: adapter_params,
        Workload.QLORA: adapter_params,
    }[spec.workload]

    weights, stored = _weights_part(model, spec, adapter_params)
    gradients, optimizer = _training_parts(model, spec, trainable, adapter_how)
    activations, activation_notes = _activations_part(model, spec)
    notes.extend(activation_notes)
    kv = _kv_part(model, spec)
    tensors = (weights, gradients, optimizer, activations, kv)
    tensors_gb = sum(part.gb for part in tensors)
    engine = spec.engine if not training else Engine.TRANSFORMERS
    assert engine is not None
    fixed = ENGINE_FIXED_GB[engine]
    if engine in (Engine.TRANSFORMERS,):
        fragmented_gb, what = tensors_gb, f"the {_fmt_gb(tensors_gb)} above"
    elif engine is Engine.VLLM:
        fragmented_gb, what = activations.gb, "the activations (the KV pool is one block)"
    else:
        fragmented_gb, what = 0.0, ""
    fragmentation = FRAGMENTATION_FRACTION * fragmented_gb
    overhead_gb = fixed + fragmentation
    # The workload is sized before a GPU is chosen, so llama.cpp's words cover every
    # backend it runs on (an Apple row must not read "CUDA context").
    fixed_text = {
        Engine.TRANSFORMERS: "the CUDA context",
        Engine.VLLM: "the CUDA context (0.5) and CUDA graphs (0.5)",
        Engine.TENSORRT_LLM: "the CUDA context",
        Engine.LLAMA_CPP: "the GPU runtime's context (CUDA, ROCm, Vulkan, Metal or SYCL, "
        "no PyTorch)",
    }[engine]
    # GPUDesk's round figure is quoted as chosen (decimal GB, as its source says), then
    # converted once: the sum reads in GiB like every other part.
    formula = f"{fixed:g} GB (10^9 bytes) = {_fmt_gb(fixed)} per GPU for {fixed_text}"
    if fragmentation:
        formula += (
            f" + {FRAGMENTATION_FRACTION:.0%} of {what} (allocator fragmentation)"
            f" = {_fmt_gb(overhead_gb)}"
        )
    formula += "; GPUDesk's choice, counted once per GPU"
    overhead = MemoryPart(
        key=PartKey.OVERHEAD, gb=overhead_gb, formula=formula, source=citations.FRAMEWORK_OVERHEAD
    )
    decode_bytes: float | None = None
    if not training and model.has_kv_cache and stored is not None and shape is not None:
        assert spec.seq is not None and spec.kv_dtype is not None
        scale = model.params / stored.params
        decode_bytes = stored.streamed_per_token_bytes * scale + shape.kv_cache_bytes(
            spec.seq, spec.kv_dtype.bytes, mla_latent=engine is not Engine.TRANSFORMERS
        )
    host = weights.host_gb + optimizer.host_gb
    if host:
        notes.append(f"{_fmt_gb(host)} live in host memory instead of the GPU (not counted).")
    return MemoryEstimate(
        model=model,
        spec=spec,
        parts=(weights, gradients, optimizer, activations, kv, overhead),
        trainable_params=trainable,
        decode_bytes_per_token=decode_bytes,
        notes=tuple(notes),
        weights=stored,
        fixed_overhead_gb=fixed,
        fragmentation_fraction=FRAGMENTATION_FRACTION if fragmentation else 0.0,
        usable_fraction=VLLM_GPU_MEMORY_UTILIZATION if engine is Engine.VLLM else 1.0,
        compares_with=_compares_with(spec),
    )
