"""Model architectures for the estimator: bundled presets and the bare-count fallback.

The presets live in ``presets.toml`` beside this module, each with the sources its
numbers were copied from. A bare parameter count ("7B") gets a generic decoder shape
(:func:`generic_architecture`), marked ``assumed`` so every output can say so.
"""

from __future__ import annotations

import difflib
import functools
import math
import tomllib
from enum import StrEnum
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpudesk.planning import citations
from gpudesk.planning.errors import PlanningInputError

PRESETS_FILE = "presets.toml"

#: The generic shape's assumptions (see :func:`generic_architecture`).
GENERIC_HIDDEN_PER_LAYER = 128
GENERIC_HEAD_DIM = 128
GENERIC_VOCAB = 32_000


class ModelKind(StrEnum):
    DECODER = "decoder"  # GPT-style: KV cache at inference
    ENCODER = "encoder"  # BERT-style: whole sequence at once, no KV cache
    CNN = "cnn"
    UNET = "unet"


_TRANSFORMER_FIELDS = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "vocab",
    "intermediate",
    "context",
)


class ModelArchitecture(BaseModel):
    """The numbers the estimator needs about one model.

    Transformers carry their shapes; CNNs and UNets carry activation element counts per
    sample at ``reference_input`` instead.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    kind: ModelKind
    params: int = Field(gt=0)
    #: parameters one token uses (mixture of experts); None means all of them
    active_params: int | None = Field(default=None, gt=0)
    layers: int | None = Field(default=None, gt=0)
    hidden: int | None = Field(default=None, gt=0)
    heads: int | None = Field(default=None, gt=0)
    kv_heads: int | None = Field(default=None, gt=0)
    head_dim: int | None = Field(default=None, gt=0)
    vocab: int | None = Field(default=None, gt=0)
    intermediate: int | None = Field(default=None, gt=0)
    context: int | None = Field(default=None, gt=0)
    gated_mlp: bool = False
    tied_embeddings: bool = False
    experts: int | None = Field(default=None, gt=0)
    experts_per_token: int | None = Field(default=None, gt=0)
    activation_elements_per_sample: float | None = Field(default=None, gt=0)
    attention_score_elements_per_sample: float | None = Field(default=None, ge=0)
    inference_activation_elements_per_sample: float | None = Field(default=None, gt=0)
    inference_attention_score_elements_per_sample: float | None = Field(default=None, ge=0)
    lora_params_per_rank: int | None = Field(default=None, gt=0)
    lora_fraction_at_rank_16: float | None = Field(default=None, gt=0, lt=1)
    reference_input: str | None = None
    sources: tuple[str, ...] = Field(min_length=1)
    notes: str | None = None
    #: True for the generic shape guessed from a bare parameter count
    assumed: bool = False

    @model_validator(mode="after")
    def _complete_for_kind(self) -> ModelArchitecture:
        if self.is_transformer:
            missing = [name for name in _TRANSFORMER_FIELDS if getattr(self, name) is None]
            if missing:
                raise ValueError(f"a {self.kind} preset needs {', '.join(missing)}")
        elif (
            self.activation_elements_per_sample is None
            or self.inference_activation_elements_per_sample is None
        ):
            raise ValueError(
                f"a {self.kind} preset needs activation_elements_per_sample and "
                "inference_activation_elements_per_sample"
            )
        if self.active_params is not None and self.active_params > self.params:
            raise ValueError("active_params cannot exceed params")
        return self

    @property
    def is_transformer(self) -> bool:
        return self.kind in (ModelKind.DECODER, ModelKind.ENCODER)

    @property
    def has_kv_cache(self) -> bool:
        """Only decoders generate token by token and so keep a KV cache."""
        return self.kind is ModelKind.DECODER

    @property
    def embedding_params(self) -> int:
        """Input embedding plus (untied) output head: what quantisers leave in 16-bit."""
        if not self.is_transformer or self.vocab is None or self.hidden is None:
            return 0
        copies = 1 if self.tied_embeddings else 2
        return min(self.params, copies * self.vocab * self.hidden)

    @property
    def active_fraction(self) -> float:
        """Share of the weights one token reads (1.0 for dense models)."""
        if self.active_params is None:
            return 1.0
        return self.active_params / self.params

    def summary(self) -> str:
        """One line for people: the shape, or the reference input."""
        if self.is_transformer:
            shape = (
                f"{self.layers} layers, hidden {self.hidden}, {self.heads} heads "
                f"({self.kv_heads} KV heads x {self.head_dim}), vocab {self.vocab:,}, "
                f"context {self.context:,}"
            )
            if self.experts:
                shape += f", {self.experts} experts ({self.experts_per_token} per token)"
            return shape
        return f"{self.kind.value}, activations per {self.reference_input}"


def generic_architecture(params: int) -> ModelArchitecture:
    """A dense decoder shape for a bare parameter count, plainly an assumption.

    Non-embedding parameters ~ 12 x layers x hidden^2 (Kaplan et al. 2020) and
    hidden ~ 128 x layers (GPT-3 6.7B-175B), solved for layers; multi-head attention
    (KV heads = heads, larger than grouped-query models), a 4 x hidden MLP and a
    32,000-token vocabulary.
    """
    layers = max(1, round((params / (12 * GENERIC_HIDDEN_PER_LAYER**2)) ** (1 / 3)))
    hidden = max(64, round(math.sqrt(params / (12 * layers)) / 64) * 64)
    head_dim = GENERIC_HEAD_DIM if hidden % GENERIC_HEAD_DIM == 0 else 64
    heads = hidden // head_dim
    return ModelArchitecture(
        id="custom",
        name=f"{format_param_count(params)} parameters",
        kind=ModelKind.DECODER,
        params=params,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=heads,
        head_dim=head_dim,
        vocab=GENERIC_VOCAB,
        intermediate=4 * hidden,
        context=131_072,
        gated_mlp=False,
        tied_embeddings=False,
        sources=(citations.GPT3_SHAPES,),
        notes=(
            "Shape assumed from the parameter count (GPT-3-like, full multi-head attention: "
            "models with grouped-query attention need a smaller KV cache). Pick a preset "
            "for exact numbers."
        ),
        assumed=True,
    )


def format_param_count(params: float) -> str:
    """7_000_000_000 -> '7B', 350_000_000 -> '350M', 1_500_000_000_000 -> '1.5T'."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if params >= scale:
            value = params / scale
            text = f"{value:.2f}".rstrip("0").rstrip(".")
            return f"{text}{suffix}"
    return str(int(params))


@functools.cache
def load_presets() -> tuple[ModelArchitecture, ...]:
    """The bundled presets, in file order. A broken file is a bug, so it raises."""
    text = resources.files("gpudesk.planning").joinpath(PRESETS_FILE).read_text("utf-8")
    data = tomllib.loads(text)
    presets: list[ModelArchitecture] = []
    for index, item in enumerate(data.get("preset", [])):
        try:
            presets.append(ModelArchitecture.model_validate(item))
        except ValidationError as exc:
            raise RuntimeError(f"{PRESETS_FILE}: preset #{index + 1}: {exc}") from exc
    return tuple(presets)


def _normalise(text: str) -> str:
    return "".join(char for char in text.lower() if char.isalnum() or char == ".")


def find_preset(name: str) -> ModelArchitecture:
    """A preset by id or name, case- and punctuation-insensitive ("Llama 3.1 8B" works).

    Raises:
        PlanningInputError: no preset matched; the message lists them all.
    """
    presets = load_presets()
    wanted = _normalise(name)
    for preset in presets:
        if wanted in (_normalise(preset.id), _normalise(preset.name)):
            return preset
    ids = [preset.id for preset in presets]
    close = difflib.get_close_matches(name.strip().lower(), ids, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise PlanningInputError(f"unknown model preset {name!r}.{hint} Presets: {', '.join(ids)}")
