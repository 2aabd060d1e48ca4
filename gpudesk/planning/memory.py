"""How much GPU memory a workload needs, part by part, with the formula of each part.

GB here means 10^9 bytes everywhere (so 7B parameters in bf16 are 14.0 GB), the same
unit vendors use for ``memory_gb``.

The parts and their rules (each part's ``source`` cites its rule):

- weights: parameters x bytes per parameter. Quantised dtypes (int8, int4, QLoRA's
  NF4) keep the embeddings and LM head in 16-bit.
- gradients / optimizer: full fine-tuning with mixed-precision AdamW is 16 bytes per
  parameter before activations: 2 (16-bit weights) + 2 (16-bit gradients) + 4 (fp32
  master weights) + 4 + 4 (Adam's two moments); the master copy is counted under
  optimizer, as Transformer Math 101 does. LoRA and QLoRA train only adapters, kept
  in fp32.
- activations: Korthikanti et al.'s per-layer count for a GPT-style block, an
  approximation (see :func:`_transformer_layer_activation_bytes`).
- KV cache: 2 x layers x KV heads x head dim x bytes x tokens x batch, so
  grouped-query attention is counted by its KV heads, not its query heads.
- overhead: a fixed amount per GPU plus a fraction for fragmentation (our choice).
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from gpudesk.planning import citations
from gpudesk.planning.errors import PlanningInputError
from gpudesk.planning.presets import ModelArchitecture, ModelKind, format_param_count

GB = 1e9  # bytes; decimal, like the vendors' memory_gb

#: Per-GPU framework overhead: CUDA context and library workspaces.
OVERHEAD_FIXED_GB = 1.0
#: Caching-allocator fragmentation, as a share of everything else.
FRAGMENTATION_FRACTION = 0.05

MAX_PARAMS = 10e12  # 10T: larger than any model anyone has trained densely
MAX_BATCH = 65_536
MAX_SEQ = 10_000_000
MAX_LORA_RANK = 4096
DEFAULT_SEQ = 2048
DEFAULT_LORA_RANK = 16

#: QLoRA's NF4 with double quantisation: 4 bits + 0.127 bits of constants per parameter.
NF4_BYTES_PER_PARAM = (4 + 0.127) / 8
#: Korthikanti et al.: 34 bytes x s x b x h per layer in 16-bit, without the attention
#: score matrices; with them, + 5 x a x s / h.
KORTHIKANTI_BYTES = 34
KORTHIKANTI_SCORE_BYTES = 5
#: Full activation checkpointing keeps each layer's 16-bit input: 2 x s x b x h bytes.
CHECKPOINT_BYTES = 2
#: Checkpointing a CNN/UNet at block boundaries keeps roughly a quarter of what autograd
#: would store (block inputs of ResNet-style blocks); a stated assumption.
CNN_CHECKPOINT_KEEP = 0.25


class Workload(StrEnum):
    INFERENCE = "inference"
    TRAIN = "train"  # full fine-tuning
    LORA = "lora"
    QLORA = "qlora"

    @property
    def label(self) -> str:
        return _WORKLOAD_LABELS[self]


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
    ADAMW = "adamw"
    ADAMW_8BIT = "adamw8bit"
    SGD = "sgd"  # with momentum

    @property
    def label(self) -> str:
        return {"adamw": "AdamW", "adamw8bit": "8-bit AdamW", "sgd": "SGD with momentum"}[
            self.value
        ]

    @property
    def state_bytes(self) -> float:
        """Bytes per trainable parameter for the optimizer's own state (no master copy)."""
        return {"adamw": 8.0, "adamw8bit": 2.0, "sgd": 4.0}[self.value]


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
    """What the user wants to run. ``seq``/``kv_dtype`` None mean "the default"."""

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


class MemoryPart(BaseModel):
    """One part of the breakdown, with the formula and its source shown to the user."""

    model_config = ConfigDict(frozen=True)

    key: PartKey
    gb: float
    formula: str
    source: str

    @property
    def label(self) -> str:
        return self.key.label


class MemoryEstimate(BaseModel):
    """The breakdown for one model and workload; sums for one GPU or N of them."""

    model_config = ConfigDict(frozen=True)

    model: ModelArchitecture
    spec: WorkloadSpec  # with seq and kv_dtype resolved (seq None only for CNN/UNet)
    parts: tuple[MemoryPart, ...]
    trainable_params: int
    #: bytes one decode step reads for a single stream (weights read + its KV cache)
    decode_bytes_per_token: float | None
    notes: tuple[str, ...]

    @property
    def total_gb(self) -> float:
        return sum(part.gb for part in self.parts)

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

    def per_gpu_gb(self, count: int) -> float:
        """Memory each of ``count`` GPUs needs with an ideal even split.

        Tensor/pipeline parallelism with sequence parallelism (or FSDP) divides weights,
        gradients, optimizer states, activations and KV cache by ``count``; the CUDA
        context and workspaces exist on every GPU, so the fixed overhead does not divide.
        """
        if count < 1:
            raise ValueError("count must be at least 1")
        return self.tensors_gb / count * (1 + FRAGMENTATION_FRACTION) + OVERHEAD_FIXED_GB

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
    return f"{value_gb:.2f} GB"


def _fmt_count(value: float) -> str:
    return f"{value:,.0f}" if value < 1e6 else f"{value / 1e9:.3g}e9"


def lora_adapter_params(model: ModelArchitecture, rank: int) -> tuple[int, str]:
    """Trainable LoRA parameters and how they were counted.

    A rank-r adapter on a d_in x d_out matrix adds r x (d_in + d_out) parameters
    (Hu et al. 2021). Transformers: every attention projection (q, k, v, o) and MLP
    projection (gate, up, down, or up and down), in every layer and expert.
    """
    if model.is_transformer:
        assert model.layers and model.hidden and model.heads and model.kv_heads
        assert model.head_dim and model.intermediate
        h, q_out, kv_out = (
            model.hidden,
            model.heads * model.head_dim,
            model.kv_heads * model.head_dim,
        )
        attention = (h + q_out) + 2 * (h + kv_out) + (q_out + h)
        mlp_matrices = 3 if model.gated_mlp else 2
        mlp = mlp_matrices * (h + model.intermediate) * (model.experts or 1)
        count = model.layers * rank * (attention + mlp)
        how = (
            f"rank {rank} on q,k,v,o and {'gate,up,down' if model.gated_mlp else 'up,down'}"
            f"{' of every expert' if model.experts else ''}: "
            f"r x (d_in + d_out) per matrix x {model.layers} layers"
        )
        return count, how
    if model.lora_params_per_rank is not None:
        return model.lora_params_per_rank * rank, (
            f"rank {rank} on the attention projections: {model.lora_params_per_rank:,} per rank"
        )
    fraction = (model.lora_fraction_at_rank_16 or 0.01) * rank / DEFAULT_LORA_RANK
    count = max(1, round(model.params * fraction))
    return count, f"assumed {fraction:.2%} of the parameters at rank {rank} (no shapes known)"


def _check(model: ModelArchitecture, spec: WorkloadSpec) -> None:
    if not 1 <= spec.batch <= MAX_BATCH:
        raise PlanningInputError(f"batch size {spec.batch} must be between 1 and {MAX_BATCH:,}")
    if spec.seq is not None and not 1 <= spec.seq <= MAX_SEQ:
        raise PlanningInputError(
            f"sequence length {spec.seq} must be between 1 and {MAX_SEQ:,} tokens"
        )
    if not 1 <= spec.lora_rank <= MAX_LORA_RANK:
        raise PlanningInputError(
            f"LoRA rank {spec.lora_rank} must be between 1 and {MAX_LORA_RANK}"
        )
    if not 1 <= model.params <= MAX_PARAMS:
        raise PlanningInputError(f"parameter count {model.params:,} is out of range")
    if spec.workload is Workload.TRAIN and spec.dtype.is_quantised:
        raise PlanningInputError(
            f"full fine-tuning needs fp32, bf16 or fp16 weights, not {spec.dtype}; "
            "for a quantised base use --mode qlora (4-bit) or --mode lora"
        )
    if spec.workload is Workload.QLORA and spec.dtype.is_quantised:
        raise PlanningInputError(
            "QLoRA always stores the base in 4-bit NF4; --dtype is its compute dtype and "
            f"must be bf16, fp16 or fp32, not {spec.dtype}"
        )


def _resolve(model: ModelArchitecture, spec: WorkloadSpec) -> WorkloadSpec:
    seq = spec.seq
    if model.is_transformer and seq is None:
        assert model.context is not None
        seq = min(DEFAULT_SEQ, model.context)
    if not model.is_transformer:
        seq = None  # images, not tokens: batch counts samples
    kv_dtype = spec.kv_dtype
    if kv_dtype is None:
        # Quantised weights still compute (and cache K/V) in 16-bit.
        kv_dtype = KvDType.FP16 if spec.dtype.is_quantised else KvDType(spec.dtype.value)
    return spec.model_copy(update={"seq": seq, "kv_dtype": kv_dtype})


def _activation_bytes_per_value(spec: WorkloadSpec) -> float:
    """fp32 runs keep fp32 activations; everything else computes in 16-bit."""
    return 4.0 if spec.dtype is DType.FP32 else 2.0


def _transformer_layer_activation_bytes(
    model: ModelArchitecture, spec: WorkloadSpec
) -> tuple[float, str]:
    """One layer's stored activations: s·b·h·(34 + 5·a·s/h) bytes in 16-bit.

    Korthikanti et al. 2022 (section 4.1) count a GPT block with a 4h MLP and dropout;
    models with SwiGLU/GeGLU MLPs or no dropout differ by tens of percent, so this is
    an approximation. FlashAttention stores no a x s x s score matrices, dropping the
    5·a·s/h term.
    """
    assert spec.seq is not None and model.hidden and model.heads
    s, b, h, a = spec.seq, spec.batch, model.hidden, model.heads
    scale = _activation_bytes_per_value(spec) / 2
    if spec.flash_attention:
        return s * b * h * KORTHIKANTI_BYTES * scale, "s·b·h·34"
    per_token_bytes = KORTHIKANTI_BYTES + KORTHIKANTI_SCORE_BYTES * a * s / h
    return s * b * h * per_token_bytes * scale, "s·b·h·(34 + 5·a·s/h)"


def _weights_part(model: ModelArchitecture, spec: WorkloadSpec, adapter_params: int) -> MemoryPart:
    p = model.params
    w = spec.workload
    if w is Workload.QLORA:
        kept = model.embedding_params
        base = (p - kept) * NF4_BYTES_PER_PARAM + kept * 2
        formula = (
            f"{_fmt_count(p - kept)} params x {NF4_BYTES_PER_PARAM:.4f} bytes (NF4 4-bit + "
            f"double-quantised constants)"
            + (f" + {_fmt_count(kept)} embedding/head params x 2 bytes" if kept else "")
        )
        source = f"{citations.QLORA}; {citations.QUANTISED_EMBEDDINGS}"
    elif spec.dtype.is_quantised:
        kept = model.embedding_params
        base = (p - kept) * spec.dtype.bytes + kept * 2
        formula = f"{_fmt_count(p - kept)} params x {spec.dtype.bytes:g} bytes ({spec.dtype})" + (
            f" + {_fmt_count(kept)} embedding/head params x 2 bytes (kept 16-bit)" if kept else ""
        )
        formula += "; quantisation scales (~1-3%) not counted"
        source = f"{citations.TRANSFORMER_MATH}; {citations.QUANTISED_EMBEDDINGS}"
    else:
        base = p * spec.dtype.bytes
        formula = f"{_fmt_count(p)} params x {spec.dtype.bytes:g} bytes ({spec.dtype})"
        source = citations.TRANSFORMER_MATH
    total = base
    if w in (Workload.LORA, Workload.QLORA):
        total += adapter_params * 4
        formula += f" + {_fmt_count(adapter_params)} LoRA adapter params x 4 bytes (fp32)"
        source += f"; {citations.PEFT_FP32_ADAPTERS}"
    return MemoryPart(
        key=PartKey.WEIGHTS,
        gb=_gb(total),
        formula=f"{formula} = {_fmt_gb(_gb(total))}",
        source=source,
    )


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
    mixed = w is Workload.TRAIN and spec.dtype is not DType.FP32
    who = (
        f"{_fmt_count(trainable)} trainable params"
        if w is Workload.TRAIN
        else f"{_fmt_count(trainable)} adapter params ({adapter_how})"
    )
    grad_bytes = 2.0 if mixed else 4.0
    grad_note = f"{spec.dtype} gradients" if mixed else "fp32 gradients"
    gradients = MemoryPart(
        key=PartKey.GRADIENTS,
        gb=_gb(trainable * grad_bytes),
        formula=(
            f"{who} x {grad_bytes:g} bytes ({grad_note}) = {_fmt_gb(_gb(trainable * grad_bytes))}"
        ),
        source=citations.TRANSFORMER_MATH + ("" if w is Workload.TRAIN else f"; {citations.LORA}"),
    )
    state = spec.optimizer.state_bytes
    master = 4.0 if mixed else 0.0
    opt_bytes = trainable * (state + master)
    parts = []
    if master:
        parts.append("4 (fp32 master weights)")
    parts.append(
        {
            "adamw": "4 + 4 (Adam momentum and variance, fp32)",
            "adamw8bit": "1 + 1 (8-bit momentum and variance)",
            "sgd": "4 (fp32 momentum)",
        }[spec.optimizer.value]
    )
    source = citations.TRANSFORMER_MATH
    if spec.optimizer is Optimizer.ADAMW_8BIT:
        source += f"; {citations.EIGHT_BIT_OPTIMIZERS}"
    summary = ""
    if w is Workload.TRAIN:
        per_param = spec.dtype.bytes + grad_bytes + state + master
        summary = f"; with weights and gradients: {per_param:g} bytes per parameter"
    optimizer = MemoryPart(
        key=PartKey.OPTIMIZER,
        gb=_gb(opt_bytes),
        formula=(
            f"{spec.optimizer.label}: {who} x ({' + '.join(parts)} = {state + master:g} bytes)"
            f" = {_fmt_gb(_gb(opt_bytes))}{summary}"
        ),
        source=source,
    )
    return gradients, optimizer


def _activations_part(model: ModelArchitecture, spec: WorkloadSpec) -> tuple[MemoryPart, list[str]]:
    notes: list[str] = []
    training = spec.workload is not Workload.INFERENCE
    value_bytes = _activation_bytes_per_value(spec)
    if model.is_transformer:
        assert spec.seq is not None and model.layers and model.hidden and model.vocab
        layer_bytes, layer_text = _transformer_layer_activation_bytes(model, spec)
        s, b, h, n_layers, v = spec.seq, spec.batch, model.hidden, model.layers, model.vocab
        scale_text = "" if value_bytes == 2 else " x 2 (fp32)"
        attn_text = (
            "FlashAttention assumed: no a·s·s score matrices stored"
            if spec.flash_attention
            else "attention score matrices stored (no FlashAttention): + 5·a·s/h"
        )
        if not training:
            total = layer_bytes
            formula = (
                f"one layer's working set, {layer_text}{scale_text} with s={s:,}, b={b}, h={h} "
                f"(inference keeps nothing for a backward pass; {attn_text}; "
                "approximation) "
            )
        else:
            logits = 4 * s * b * v
            if spec.checkpointing:
                kept = CHECKPOINT_BYTES * s * b * h * n_layers * value_bytes / 2
                total = kept + layer_bytes + logits
                formula = (
                    f"full checkpointing: 2·s·b·h{scale_text} x {n_layers} layers (layer inputs) "
                    f"+ one layer recomputed, {layer_text} + fp32 logits 4·s·b·V "
                    f"(s={s:,}, b={b}, h={h}, V={v:,}; {attn_text}; approximation) "
                )
            else:
                total = layer_bytes * n_layers + logits
                formula = (
                    f"{layer_text}{scale_text} per layer x {n_layers} layers + fp32 logits "
                    f"4·s·b·V (s={s:,}, b={b}, h={h}, V={v:,}; {attn_text}; GPT-style block "
                    "with a 4h MLP and dropout, so an approximation) "
                )
            if spec.workload in (Workload.LORA, Workload.QLORA):
                notes.append(
                    "LoRA does not shrink activations: gradients still flow through every "
                    "frozen layer to reach the adapters."
                )
            if model.experts:
                notes.append(
                    "Mixture of experts: each token's MLP activations are counted once; "
                    f"with {model.experts_per_token} experts per token they are larger."
                )
        source = citations.KORTHIKANTI
        if spec.flash_attention:
            source += f"; {citations.FLASH_ATTENTION}"
        if training and spec.checkpointing:
            source += f"; {citations.CHECKPOINTING}"
        return (
            MemoryPart(
                key=PartKey.ACTIVATIONS,
                gb=_gb(total),
                formula=f"{formula}= {_fmt_gb(_gb(total))}",
                source=source,
            ),
            notes,
        )
    # CNN / UNet: element counts per sample at the reference input.
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
        f" x {spec.batch} x {value_bytes:g} bytes"
    )
    if scores and not spec.flash_attention:
        formula += " (incl. attention scores, no FlashAttention)"
    if keep != 1.0:
        formula += f" x {keep:g} kept with checkpointing (assumption)"
    formula += f"; counted from the layer layout, an approximation = {_fmt_gb(_gb(total))}"
    source = "; ".join(model.sources[:1])
    if training and spec.checkpointing:
        source += f"; {citations.CHECKPOINTING}"
    return MemoryPart(key=PartKey.ACTIVATIONS, gb=_gb(total), formula=formula, source=source), notes


def kv_cache_bytes(model: ModelArchitecture, seq: int, batch: int, kv_bytes: float) -> float:
    """2 (K and V) x layers x KV heads x head dim x bytes x tokens x sequences."""
    assert model.layers and model.kv_heads and model.head_dim
    return 2 * model.layers * model.kv_heads * model.head_dim * kv_bytes * seq * batch


def _kv_part(model: ModelArchitecture, spec: WorkloadSpec) -> MemoryPart:
    if spec.workload is not Workload.INFERENCE:
        reason = "none: training processes whole sequences and keeps no KV cache"
    elif model.kind is ModelKind.ENCODER:
        reason = "none: an encoder reads the whole sequence at once and caches nothing"
    elif not model.is_transformer:
        reason = f"none: a {model.kind.value} has no attention cache"
    else:
        reason = ""
    if reason:
        return MemoryPart(key=PartKey.KV_CACHE, gb=0.0, formula=reason, source=citations.KV_CACHE)
    assert spec.seq is not None and spec.kv_dtype is not None
    total = kv_cache_bytes(model, spec.seq, spec.batch, spec.kv_dtype.bytes)
    formula = (
        f"2 x {model.layers} layers x {model.kv_heads} KV heads x {model.head_dim} head dim x "
        f"{spec.kv_dtype.bytes:g} bytes ({spec.kv_dtype}) x {spec.seq:,} tokens x {spec.batch} "
        f"sequence{'s' if spec.batch != 1 else ''} = {_fmt_gb(_gb(total))}"
    )
    return MemoryPart(
        key=PartKey.KV_CACHE, gb=_gb(total), formula=formula, source=citations.KV_CACHE
    )


def estimate_memory(model: ModelArchitecture, spec: WorkloadSpec) -> MemoryEstimate:
    """The memory breakdown of ``spec`` run on ``model`` on one GPU.

    Raises:
        PlanningInputError: out-of-range sizes or a dtype the workload cannot use.
    """
    _check(model, spec)
    spec = _resolve(model, spec)
    notes: list[str] = []
    if model.assumed:
        notes.append(model.notes or "Shape assumed from the parameter count.")
    elif model.notes:
        notes.append(model.notes)
    if spec.seq is not None and model.context is not None and spec.seq > model.context:
        notes.append(
            f"Sequence length {spec.seq:,} exceeds {model.name}'s context of "
            f"{model.context:,} tokens."
        )
    if spec.workload is Workload.INFERENCE and spec.checkpointing:
        notes.append("Gradient checkpointing only matters for training; ignored for inference.")
    if spec.workload is Workload.INFERENCE and spec.optimizer is not Optimizer.ADAMW:
        notes.append("The optimizer only matters for training; ignored for inference.")

    adapter_params, adapter_how = 0, ""
    if spec.workload in (Workload.LORA, Workload.QLORA):
        adapter_params, adapter_how = lora_adapter_params(model, spec.lora_rank)
    trainable = {
        Workload.INFERENCE: 0,
        Workload.TRAIN: model.params,
        Workload.LORA: adapter_params,
        Workload.QLORA: adapter_params,
    }[spec.workload]

    weights = _weights_part(model, spec, adapter_params)
    gradients, optimizer = _training_parts(model, spec, trainable, adapter_how)
    activations, activation_notes = _activations_part(model, spec)
    notes.extend(activation_notes)
    kv = _kv_part(model, spec)
    tensors_gb = weights.gb + gradients.gb + optimizer.gb + activations.gb + kv.gb
    overhead_gb = OVERHEAD_FIXED_GB + FRAGMENTATION_FRACTION * tensors_gb
    overhead = MemoryPart(
        key=PartKey.OVERHEAD,
        gb=overhead_gb,
        formula=(
            f"{OVERHEAD_FIXED_GB:g} GB per GPU (CUDA context, cuBLAS/cuDNN workspaces) + "
            f"{FRAGMENTATION_FRACTION:.0%} of the {_fmt_gb(tensors_gb)} above (allocator "
            f"fragmentation) = {_fmt_gb(overhead_gb)}; GPUDesk's choice"
        ),
        source=citations.FRAMEWORK_OVERHEAD,
    )
    decode_bytes: float | None = None
    if spec.workload is Workload.INFERENCE and model.has_kv_cache:
        assert spec.seq is not None and spec.kv_dtype is not None
        decode_bytes = weights.gb * GB * model.active_fraction + kv_cache_bytes(
            model, spec.seq, 1, spec.kv_dtype.bytes
        )
    return MemoryEstimate(
        model=model,
        spec=spec,
        parts=(weights, gradients, optimizer, activations, kv, overhead),
        trainable_params=trainable,
        decode_bytes_per_token=decode_bytes,
        notes=tuple(notes),
    )
