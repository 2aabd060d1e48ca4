"""A transformer's shape as its ``config.json`` states it, and what follows from it.

:class:`ModelShape` holds the numbers a memory or speed model needs: layers, widths,
heads and KV heads (grouped-query attention), mixture-of-experts sizes, the sliding
window and multi-head latent attention (MLA, DeepSeek-V2/V3) ranks. From them it counts
parameters (total, and active per token), lists the weight tensors (for quantisation
rules that differ per tensor) and sizes the KV cache.

:func:`load_hf_config` reads a Hugging Face ``config.json`` (a file, or a folder holding
one) from disk only. The file is untrusted: regular files only, at most
:data:`MAX_CONFIG_BYTES`, strict JSON (no NaN, no duplicate keys, bounded nesting),
strict types (a boolean is not a number). Errors are :class:`ConfigFileError` naming the
JSON key; bad shape values (from a file or from overrides) are :class:`ShapeError`
naming the :class:`ModelShape` field. Neither knows about command-line flags.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpudesk.storage import FileTooLargeError, read_refusal, read_regular_file
from gpudesk.workload.errors import PlanningInputError

#: config.json files are a few KB; a megabyte leaves room for label maps.
MAX_CONFIG_BYTES = 1_000_000
MAX_CONFIG_DEPTH = 32
CONFIG_NAME = "config.json"

_MAX_LAYERS = 2_000
_MAX_WIDTH = 1_000_000
_MAX_HEADS = 16_384
_MAX_VOCAB = 20_000_000
_MAX_CONTEXT = 100_000_000
_MAX_EXPERTS = 16_384


class ShapeError(PlanningInputError):
    """A shape value that cannot be: ``field`` is the :class:`ModelShape` field name."""

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(f"{field} = {value!r}: {reason}")


class ConfigFileError(PlanningInputError):
    """A ``config.json`` that cannot be used; ``field`` is its JSON key (None: the file)."""

    def __init__(self, path: Path, field: str | None, reason: str) -> None:
        self.path = path
        self.field = field
        self.reason = reason
        where = f"field {field!r}: " if field else ""
        super().__init__(f"{path}: {where}{reason}")


class TensorRole(StrEnum):
    """What a weight tensor does; quantisers choose bits by role."""

    TOKEN_EMBEDDING = "token_embedding"
    LM_HEAD = "lm_head"
    ATTN_Q = "attn_q"
    ATTN_K = "attn_k"
    ATTN_V = "attn_v"
    ATTN_OUTPUT = "attn_output"
    #: MLA's low-rank projections (q_a, q_b, kv_a, kv_b)
    ATTN_LATENT = "attn_latent"
    FFN_GATE = "ffn_gate"
    FFN_UP = "ffn_up"
    FFN_DOWN = "ffn_down"
    ROUTER = "router"
    #: norms and biases: kept at 16 or 32 bits by every format
    NORM = "norm"


class TensorGroup(BaseModel):
    """``count`` tensors of ``params_each`` parameters in one layer (or outside layers).

    ``count`` > 1 only for routed experts. ``read_per_token`` is how many of the
    ``count`` one decoded token reads: all of them for dense tensors, the active experts
    for routed ones, none for the input embedding table (one row is negligible).
    """

    model_config = ConfigDict(frozen=True)

    role: TensorRole
    layer: int | None
    params_each: int
    count: int = 1
    #: row length as stored (input features); k-quants need it divisible by 256
    in_features: int
    read_per_token: float = 1.0
    routed_expert: bool = False

    @property
    def params(self) -> int:
        return self.params_each * self.count


class ModelShape(BaseModel):
    """A decoder (or encoder) transformer's shape, as its config.json gives it.

    Widths follow Hugging Face's names: ``hidden`` is hidden_size, ``intermediate`` the
    dense MLP width, ``expert_intermediate`` one expert's MLP width. ``sliding_layers``
    is how many layers attend within ``sliding_window`` tokens (the rest attend to the
    whole context). MLA fields are set together or not at all.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    layers: int = Field(gt=0, le=_MAX_LAYERS)
    hidden: int = Field(gt=0, le=_MAX_WIDTH)
    heads: int = Field(gt=0, le=_MAX_HEADS)
    kv_heads: int = Field(gt=0, le=_MAX_HEADS)
    head_dim: int = Field(gt=0, le=_MAX_WIDTH)
    intermediate: int = Field(gt=0, le=_MAX_WIDTH)
    vocab: int = Field(gt=0, le=_MAX_VOCAB)
    context: int = Field(gt=0, le=_MAX_CONTEXT)
    tied_embeddings: bool = False
    gated_mlp: bool = True
    #: biases on the q, k and v projections (Qwen2)
    attention_bias: bool = False
    causal: bool = True
    experts: int | None = Field(default=None, gt=0, le=_MAX_EXPERTS)
    active_experts: int | None = Field(default=None, gt=0, le=_MAX_EXPERTS)
    shared_experts: int = Field(default=0, ge=0, le=_MAX_EXPERTS)
    expert_intermediate: int | None = Field(default=None, gt=0, le=_MAX_WIDTH)
    #: leading layers with a dense MLP in a mixture-of-experts model (DeepSeek)
    dense_layers: int = Field(default=0, ge=0, le=_MAX_LAYERS)
    sliding_window: int | None = Field(default=None, gt=0, le=_MAX_CONTEXT)
    sliding_layers: int = Field(default=0, ge=0, le=_MAX_LAYERS)
    kv_lora_rank: int | None = Field(default=None, gt=0, le=_MAX_WIDTH)
    q_lora_rank: int | None = Field(default=None, gt=0, le=_MAX_WIDTH)
    qk_rope_head_dim: int | None = Field(default=None, gt=0, le=_MAX_WIDTH)
    qk_nope_head_dim: int | None = Field(default=None, gt=0, le=_MAX_WIDTH)
    v_head_dim: int | None = Field(default=None, gt=0, le=_MAX_WIDTH)
    #: the checkpoint's own quantisation (config.json quantization_config.quant_method)
    checkpoint_quant: str | None = Field(default=None, max_length=40)

    @model_validator(mode="after")
    def _consistent(self) -> ModelShape:
        if self.kv_heads > self.heads:
            raise ValueError("kv_heads: more KV heads than attention heads")
        if self.heads % self.kv_heads:
            raise ValueError("kv_heads: attention heads must be a multiple of the KV heads")
        if (self.experts is None) != (self.active_experts is None):
            raise ValueError("active_experts: experts and active_experts go together")
        if self.experts is not None and self.active_experts is not None:
            if self.active_experts > self.experts:
                raise ValueError("active_experts: more active experts than experts")
            if self.dense_layers >= self.layers:
                raise ValueError("dense_layers: every layer dense leaves no expert layer")
        elif self.shared_experts or self.dense_layers:
            raise ValueError("experts: shared experts or dense layers need routed experts")
        if self.sliding_layers > self.layers:
            raise ValueError("sliding_layers: more sliding-window layers than layers")
        if self.sliding_layers and self.sliding_window is None:
            raise ValueError("sliding_window: sliding-window layers need a window")
        mla = (self.kv_lora_rank, self.qk_rope_head_dim, self.qk_nope_head_dim, self.v_head_dim)
        if any(value is not None for value in mla) and any(value is None for value in mla):
            raise ValueError(
                "kv_lora_rank: MLA needs kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim "
                "and v_head_dim together"
            )
        return self

    # -- what kind of model ------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return self.experts is not None

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def is_gqa(self) -> bool:
        return self.kv_heads < self.heads

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    # -- tensors and parameter counts --------------------------------------------------

    def tensors(self) -> tuple[TensorGroup, ...]:
        """Every weight tensor, grouped per layer; norms and biases as one group each."""
        groups: list[TensorGroup] = [
            TensorGroup(
                role=TensorRole.TOKEN_EMBEDDING,
                layer=None,
                params_each=self.vocab * self.hidden,
                in_features=self.hidden,
                read_per_token=0.0,
            )
        ]
        for layer in range(self.layers):
            groups.extend(self._attention_tensors(layer))
            groups.extend(self._mlp_tensors(layer))
            groups.append(
                TensorGroup(
                    role=TensorRole.NORM,
                    layer=layer,
                    params_each=self._norm_and_bias_params(),
                    in_features=self.hidden,
                )
            )
        groups.append(
            TensorGroup(
                role=TensorRole.NORM, layer=None, params_each=self.hidden, in_features=self.hidden
            )
        )
        if not self.tied_embeddings:
            groups.append(
                TensorGroup(
                    role=TensorRole.LM_HEAD,
                    layer=None,
                    params_each=self.vocab * self.hidden,
                    in_features=self.hidden,
                )
            )
        return tuple(groups)

    def _norm_and_bias_params(self) -> int:
        count = 2 * self.hidden  # the pre-attention and pre-MLP norms
        if self.attention_bias:
            count += (self.heads + 2 * self.kv_heads) * self.head_dim
        if self.is_mla:
            assert self.kv_lora_rank is not None
            count += self.kv_lora_rank + (self.q_lora_rank or 0)
        return count

    def _attention_tensors(self, layer: int) -> list[TensorGroup]:
        h = self.hidden
        if self.is_mla:
            assert self.kv_lora_rank and self.qk_rope_head_dim and self.qk_nope_head_dim
            assert self.v_head_dim
            qk_dim = self.qk_nope_head_dim + self.qk_rope_head_dim
            q_parts: list[tuple[int, int]]
            if self.q_lora_rank:
                q_parts = [
                    (h * self.q_lora_rank, h),
                    (self.q_lora_rank * self.heads * qk_dim, self.q_lora_rank),
                ]
            else:
                q_parts = [(h * self.heads * qk_dim, h)]
            parts = [
                *q_parts,
                (h * (self.kv_lora_rank + self.qk_rope_head_dim), h),
                (
                    self.kv_lora_rank * self.heads * (self.qk_nope_head_dim + self.v_head_dim),
                    self.kv_lora_rank,
                ),
            ]
            latent = [
                TensorGroup(role=TensorRole.ATTN_LATENT, layer=layer, params_each=p, in_features=f)
                for p, f in parts
            ]
            out = self.heads * self.v_head_dim
            return [
                *latent,
                TensorGroup(
                    role=TensorRole.ATTN_OUTPUT, layer=layer, params_each=out * h, in_features=out
                ),
            ]
        q_out = self.heads * self.head_dim
        kv_out = self.kv_heads * self.head_dim
        return [
            TensorGroup(role=TensorRole.ATTN_Q, layer=layer, params_each=h * q_out, in_features=h),
            TensorGroup(role=TensorRole.ATTN_K, layer=layer, params_each=h * kv_out, in_features=h),
            TensorGroup(role=TensorRole.ATTN_V, layer=layer, params_each=h * kv_out, in_features=h),
            TensorGroup(
                role=TensorRole.ATTN_OUTPUT, layer=layer, params_each=q_out * h, in_features=q_out
            ),
        ]

    def _mlp_group(
        self, layer: int, width: int, count: int, read: float, routed: bool
    ) -> list[TensorGroup]:
        h = self.hidden
        roles = [TensorRole.FFN_GATE, TensorRole.FFN_UP] if self.gated_mlp else [TensorRole.FFN_UP]
        groups = [
            TensorGroup(
                role=role,
                layer=layer,
                params_each=h * width,
                count=count,
                in_features=h,
                read_per_token=read,
                routed_expert=routed,
            )
            for role in roles
        ]
        groups.append(
            TensorGroup(
                role=TensorRole.FFN_DOWN,
                layer=layer,
                params_each=width * h,
                count=count,
                in_features=width,
                read_per_token=read,
                routed_expert=routed,
            )
        )
        return groups

    def _mlp_tensors(self, layer: int) -> list[TensorGroup]:
        if not self.is_moe or layer < self.dense_layers:
            return self._mlp_group(layer, self.intermediate, 1, 1.0, routed=False)
        assert self.experts is not None and self.active_experts is not None
        width = self.expert_intermediate or self.intermediate
        groups = [
            TensorGroup(
                role=TensorRole.ROUTER,
                layer=layer,
                params_each=self.experts * self.hidden,
                in_features=self.hidden,
            ),
            *self._mlp_group(layer, width, self.experts, float(self.active_experts), routed=True),
        ]
        if self.shared_experts:
            groups.extend(
                self._mlp_group(
                    layer, width, self.shared_experts, float(self.shared_experts), routed=False
                )
            )
        return groups

    @property
    def total_params(self) -> int:
        """Every parameter held in memory (a tied embedding counted once)."""
        return sum(group.params for group in self.tensors())

    @property
    def active_params(self) -> int:
        """Parameters one token uses, embedding and LM head included (the model cards'
        convention for "active" parameters of a mixture of experts)."""
        total = 0.0
        for group in self.tensors():
            if group.role is TensorRole.TOKEN_EMBEDDING:
                total += group.params
            else:
                total += group.params_each * group.read_per_token
        return round(total)

    @property
    def embedding_params(self) -> int:
        """The input embedding table (vocab x hidden)."""
        return self.vocab * self.hidden

    @property
    def lm_head_params(self) -> int:
        """The output projection's own parameters: 0 when tied to the embedding."""
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    # -- KV cache ----------------------------------------------------------------------

    def kv_values_per_token_per_layer(self, *, mla_latent: bool = True) -> int:
        """Cached values per token per layer.

        Grouped-query attention: K and V per KV head, 2 x kv_heads x head_dim. MLA:
        the compressed latent plus the shared RoPE key, kv_lora_rank + qk_rope_head_dim,
        when the engine caches the latent (vLLM, SGLang, TensorRT-LLM, llama.cpp);
        expanded per-head K (nope + rope) and V when it does not (transformers).
        """
        if self.is_mla:
            assert self.kv_lora_rank and self.qk_rope_head_dim and self.qk_nope_head_dim
            assert self.v_head_dim
            if mla_latent:
                return self.kv_lora_rank + self.qk_rope_head_dim
            return self.heads * (self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim)
        return 2 * self.kv_heads * self.head_dim

    def kv_cached_tokens(self, tokens: int) -> tuple[int, int]:
        """(full-attention layers x tokens, sliding layers x min(tokens, window))."""
        full_layers = self.layers - self.sliding_layers
        window = self.sliding_window or tokens
        return full_layers * tokens, self.sliding_layers * min(tokens, window)

    def kv_cache_bytes(
        self, tokens: int, bytes_per_value: float, *, mla_latent: bool = True
    ) -> float:
        """Bytes of K/V cache for one sequence of ``tokens`` tokens.

        Sliding-window layers keep at most the window; full-attention layers every
        token. Multiply by the number of sequences.
        """
        full, sliding = self.kv_cached_tokens(tokens)
        per_layer_token = self.kv_values_per_token_per_layer(mla_latent=mla_latent)
        return (full + sliding) * per_layer_token * bytes_per_value

    # -- words -------------------------------------------------------------------------

    def summary(self) -> str:
        """One line for people."""
        if self.is_mla:
            attention = (
                f"{self.heads} heads, MLA (KV latent {self.kv_lora_rank} + rope "
                f"{self.qk_rope_head_dim})"
            )
        else:
            attention = f"{self.heads} heads ({self.kv_heads} KV heads × {self.head_dim})"
        text = (
            f"{self.layers} layers, hidden {self.hidden}, {attention}, "
            f"vocab {self.vocab:,}, context {self.context:,}"
        )
        if self.is_moe:
            text += f", {self.experts} experts ({self.active_experts} per token"
            text += f", {self.shared_experts} shared)" if self.shared_experts else ")"
        if self.sliding_layers:
            text += f", {self.sliding_layers} of {self.layers} layers with a "
            text += f"{self.sliding_window:,}-token window"
        return text


def make_shape(fields: Mapping[str, Any]) -> ModelShape:
    """Build a :class:`ModelShape`, turning pydantic's errors into :class:`ShapeError`.

    Raises:
        ShapeError: a value out of range or inconsistent; names the field.
    """
    try:
        return ModelShape.model_validate(dict(fields))
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = [str(part) for part in error["loc"]]
        message = str(error["msg"]).removeprefix("Value error, ")
        field = loc[0] if loc else message.split(":", 1)[0]
        if not loc and ":" in message:
            field, message = (part.strip() for part in message.split(":", 1))
        value = fields.get(field)
        raise ShapeError(field, value, message) from None


def _check_given(values: Mapping[str, Any]) -> None:
    """Given fields must be shape fields, and counts and widths positive.

    Checked before the widths are divided (hidden / heads), so that a 0 is a
    :class:`ShapeError`, not a ZeroDivisionError.
    """
    for key, value in values.items():
        if key not in ModelShape.model_fields:
            raise ShapeError(key, value, "not a shape field")
        if isinstance(value, int) and not isinstance(value, bool) and value <= 0:
            if key not in ("shared_experts", "dense_layers", "sliding_layers"):
                raise ShapeError(key, value, "must be positive")
            if value < 0:
                raise ShapeError(key, value, "cannot be negative")


def with_overrides(shape: ModelShape, overrides: Mapping[str, int | None]) -> ModelShape:
    """``shape`` with the given fields replaced (None values are skipped).

    Raises:
        ShapeError: an unknown field, or a result that cannot be.
    """
    update = {key: value for key, value in overrides.items() if value is not None}
    _check_given(update)
    # A head_dim that was hidden / heads follows new widths; an explicit one (Gemma's 256)
    # stays. Multi-head attention stays multi-head when only the heads change.
    derived_head_dim = shape.head_dim * shape.heads == shape.hidden
    widths_changed = "hidden" in update or "heads" in update
    if widths_changed and "head_dim" not in update and derived_head_dim:
        hidden, heads = update.get("hidden", shape.hidden), update.get("heads", shape.heads)
        if hidden % heads == 0:
            update["head_dim"] = hidden // heads
    if "heads" in update and "kv_heads" not in update and shape.kv_heads == shape.heads:
        update["kv_heads"] = update["heads"]
    return make_shape({**shape.model_dump(), **update})


#: The assumed shape's rules (see :func:`assumed_shape`).
ASSUMED_HIDDEN_PER_LAYER = 128
ASSUMED_HEAD_DIM = 128
ASSUMED_VOCAB = 32_000
ASSUMED_CONTEXT = 131_072


def assumed_shape(
    params: int, given: Mapping[str, int | None] | None = None
) -> tuple[ModelShape, tuple[str, ...]]:
    """A dense decoder shape for a bare parameter count, and the fields that were assumed.

    Fields in ``given`` are taken as they are; the others follow from them and the count:
    non-embedding parameters ~ 12 x layers x hidden^2 (Kaplan et al. 2020) with
    hidden ~ 128 x layers (GPT-3 6.7B-175B); heads of 128 (64 when 128 does not divide
    hidden); **KV heads = heads** (multi-head attention, no GQA assumed, so the largest
    KV cache); a 4 x hidden plain MLP; a 32,000-token vocabulary; untied embeddings.

    Raises:
        ShapeError: a given value out of range, or an inconsistent result.
    """
    chosen = {key: value for key, value in (given or {}).items() if value is not None}
    _check_given(chosen)
    fields: dict[str, Any] = dict(chosen)
    if "layers" not in fields:
        if "hidden" in fields:
            fields["layers"] = max(1, round(params / (12 * fields["hidden"] ** 2)))
        else:
            fields["layers"] = max(
                1, round((params / (12 * ASSUMED_HIDDEN_PER_LAYER**2)) ** (1 / 3))
            )
    if "hidden" not in fields:
        fields["hidden"] = max(64, round((params / (12 * fields["layers"])) ** 0.5 / 64) * 64)
    hidden = fields["hidden"]
    if "heads" not in fields:
        head_dim = fields.get("head_dim") or (
            ASSUMED_HEAD_DIM if hidden % ASSUMED_HEAD_DIM == 0 else 64
        )
        fields["heads"] = max(1, hidden // head_dim)
    if "head_dim" not in fields:
        fields["head_dim"] = max(1, hidden // fields["heads"])
    fields.setdefault("kv_heads", fields["heads"])
    fields.setdefault("intermediate", 4 * hidden)
    fields.setdefault("vocab", ASSUMED_VOCAB)
    fields.setdefault("context", ASSUMED_CONTEXT)
    fields.setdefault("gated_mlp", False)
    assumed = tuple(
        name
        for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab")
        if name not in chosen
    )
    return make_shape(fields), assumed


# -- config.json -----------------------------------------------------------------------

#: model_type values whose config class ties the embeddings when the key is absent
#: (transformers' defaults: GemmaConfig, Gemma2Config, Gemma3TextConfig, GPT2Config).
_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "gpt2", "bert"})
#: model_type values with a plain (non-gated) MLP
_PLAIN_MLP = frozenset({"gpt2", "gpt_neox", "gptj", "opt", "falcon", "bert", "phi", "bloom"})
_ENCODERS = frozenset({"bert", "roberta", "xlm-roberta", "deberta", "deberta-v2", "electra"})
#: q, k and v carry biases in these families regardless of attention_bias
_QKV_BIAS = frozenset({"qwen2", "qwen2_moe"})

_ALIASES: dict[str, tuple[str, ...]] = {
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "heads": ("num_attention_heads", "n_head"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads"),
    "intermediate": ("intermediate_size", "n_inner", "ffn_dim"),
    "vocab": ("vocab_size",),
    "context": ("max_position_embeddings", "n_positions", "max_seq_len"),
    "head_dim": ("head_dim",),
    "experts": ("num_local_experts", "n_routed_experts", "num_experts"),
    "active_experts": ("num_experts_per_tok", "num_experts_per_token"),
    "shared_experts": ("n_shared_experts",),
    "expert_intermediate": ("moe_intermediate_size",),
    "dense_layers": ("first_k_dense_replace",),
    "kv_lora_rank": ("kv_lora_rank",),
    "q_lora_rank": ("q_lora_rank",),
    "qk_rope_head_dim": ("qk_rope_head_dim",),
    "qk_nope_head_dim": ("qk_nope_head_dim",),
    "v_head_dim": ("v_head_dim",),
}
_REQUIRED = ("hidden", "layers", "heads", "vocab")


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {key!r} appears twice")
        result[key] = value
    return result


def _depth(value: Any, limit: int) -> int:
    stack: list[tuple[Any, int]] = [(value, 1)]
    deepest = 0
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > limit:
            return depth
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return deepest


def _read_regular_file(path: Path) -> bytes:
    """The file's bytes: a regular file (symlinks followed, as in the HF cache) only,
    through the shared guarded reader (never blocks on a FIFO, names what it is)."""
    try:
        return read_regular_file(path, MAX_CONFIG_BYTES)
    except FileTooLargeError:
        raise ConfigFileError(path, None, f"is more than {MAX_CONFIG_BYTES:,} bytes") from None
    except OSError as exc:
        raise ConfigFileError(path, None, read_refusal(exc)) from None


def parse_hf_config(data: bytes, path: Path = Path(CONFIG_NAME)) -> ModelShape:
    """A :class:`ModelShape` from the bytes of a config.json (``path`` names it in errors).

    Raises:
        ConfigFileError: not JSON, not an object, a key of the wrong type, a missing key.
        ShapeError: values that cannot form a model (e.g. KV heads not dividing heads).
    """
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigFileError(path, None, f"is more than {MAX_CONFIG_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
        document = json.loads(
            text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates
        )
    except UnicodeDecodeError:
        raise ConfigFileError(path, None, "is not UTF-8 text") from None
    except RecursionError:
        raise ConfigFileError(path, None, f"nests deeper than {MAX_CONFIG_DEPTH} levels") from None
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise ConfigFileError(path, None, f"is not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise ConfigFileError(path, None, "is not a JSON object")
    if _depth(document, MAX_CONFIG_DEPTH) > MAX_CONFIG_DEPTH:
        raise ConfigFileError(path, None, f"nests deeper than {MAX_CONFIG_DEPTH} levels")
    return _shape_from_document(document, path)


def load_hf_config(path: Path | str) -> ModelShape:
    """Read a Hugging Face config.json, or the one in the folder ``path``; never the network.

    Raises:
        ConfigFileError: unreadable, not a regular file, too large, malformed, or a key
            of the wrong type; the message names the key.
        ShapeError: values that cannot form a model.
    """
    target = Path(path)
    if target.is_dir():
        target = target / CONFIG_NAME
    return parse_hf_config(_read_regular_file(target), target)


def _shown(value: object) -> str:
    """A JSON value as the file writes it (true, not True), cut short."""
    text = json.dumps(value, allow_nan=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _key_int(config: Mapping[str, Any], key: str, path: Path) -> int | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigFileError(path, key, f"must be a whole number, not {_shown(value)}")
    if value <= 0:
        raise ConfigFileError(path, key, f"must be positive, not {value}")
    return value


def _key_bool(config: Mapping[str, Any], key: str, path: Path) -> bool | None:
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise ConfigFileError(path, key, f"must be true or false, not {_shown(value)}")
    return value


def _key_str(config: Mapping[str, Any], key: str, path: Path) -> str | None:
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 100:
        raise ConfigFileError(path, key, "must be a short string")
    return value


def _field(config: Mapping[str, Any], name: str, path: Path) -> tuple[int | None, str]:
    """The first alias present for a shape field: (value, the key it came from)."""
    for key in _ALIASES[name]:
        value = _key_int(config, key, path)
        if value is not None:
            return value, key
    return None, _ALIASES[name][0]


def _sliding_layers(config: Mapping[str, Any], model_type: str, layers: int, path: Path) -> int:
    layer_types = config.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or not all(isinstance(t, str) for t in layer_types):
            raise ConfigFileError(path, "layer_types", "must be a list of strings")
        if len(layer_types) != layers:
            raise ConfigFileError(
                path, "layer_types", f"lists {len(layer_types)} layers, not {layers}"
            )
        return sum(1 for kind in layer_types if kind == "sliding_attention")
    pattern = _key_int(config, "sliding_window_pattern", path)
    if pattern is not None:  # Gemma 3: every pattern-th layer is global
        return layers - layers // pattern
    if model_type == "gemma2":  # alternating local and global layers, local first
        return (layers + 1) // 2
    return layers


def _shape_from_document(document: Mapping[str, Any], path: Path) -> ModelShape:
    top_type = _key_str(document, "model_type", path) or ""
    config: Mapping[str, Any] = document
    text_config = document.get("text_config")
    if text_config is not None:  # multimodal wrappers (Gemma 3, Llama 4): the language model
        if not isinstance(text_config, dict):
            raise ConfigFileError(path, "text_config", "must be a JSON object")
        config = {**{"model_type": top_type}, **text_config}
    model_type = (_key_str(config, "model_type", path) or top_type).lower()

    fields: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name in _ALIASES:
        value, key = _field(config, name, path)
        sources[name] = key
        if value is not None:
            fields[name] = value
    for name in _REQUIRED:
        if name not in fields:
            raise ConfigFileError(path, _ALIASES[name][0], "is missing")
    hidden, heads = fields["hidden"], fields["heads"]
    if "head_dim" not in fields:
        if hidden % heads:
            raise ConfigFileError(
                path, "num_attention_heads", f"{heads} heads do not divide hidden_size {hidden}"
            )
        fields["head_dim"] = hidden // heads
    if "kv_heads" not in fields:
        multi_query = _key_bool(config, "multi_query", path)
        fields["kv_heads"] = 1 if multi_query else heads
    if "intermediate" not in fields:
        if "expert_intermediate" in fields:
            fields["intermediate"] = fields["expert_intermediate"]
        else:
            fields["intermediate"] = 4 * hidden
    if "context" not in fields:
        fields["context"] = 4096
    tied = _key_bool(config, "tie_word_embeddings", path)
    if tied is None:
        tied = _key_bool(document, "tie_word_embeddings", path)
    fields["tied_embeddings"] = tied if tied is not None else model_type in _TIED_BY_DEFAULT
    fields["gated_mlp"] = model_type not in _PLAIN_MLP
    fields["causal"] = model_type not in _ENCODERS
    bias = _key_bool(config, "attention_bias", path)
    fields["attention_bias"] = bool(bias) or model_type in _QKV_BIAS
    if "experts" not in fields:
        for name in ("active_experts", "shared_experts", "expert_intermediate", "dense_layers"):
            fields.pop(name, None)
    elif "active_experts" not in fields:
        raise ConfigFileError(path, "num_experts_per_tok", "is missing for a mixture of experts")

    window = _key_int(config, "sliding_window", path)
    use_window = _key_bool(config, "use_sliding_window", path)
    if window is not None and use_window is not False and window < fields["context"]:
        fields["sliding_window"] = window
        fields["sliding_layers"] = _sliding_layers(config, model_type, fields["layers"], path)

    quant = document.get("quantization_config")
    if quant is not None:
        if not isinstance(quant, dict):
            raise ConfigFileError(path, "quantization_config", "must be a JSON object")
        method = _key_str(quant, "quant_method", path)
        if method is not None:
            fields["checkpoint_quant"] = method[:40]
    try:
        return make_shape(fields)
    except ShapeError as exc:
        key = sources.get(exc.field, exc.field)
        raise ConfigFileError(path, key, exc.reason) from None


__all__ = [
    "CONFIG_NAME",
    "MAX_CONFIG_BYTES",
    "ConfigFileError",
    "ModelShape",
    "ShapeError",
    "TensorGroup",
    "TensorRole",
    "assumed_shape",
    "load_hf_config",
    "make_shape",
    "parse_hf_config",
    "with_overrides",
]
