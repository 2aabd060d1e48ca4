"""Model architectures for the estimator: bundled presets and the bare-count fallback.

The presets live in ``presets.toml`` beside this module, each with the config.json and
paper its numbers were copied from. A bare parameter count ("7B") gets an assumed
decoder shape (:func:`generic_architecture`), marked ``assumed`` with the fields that
were guessed, so every output can say so.
"""

from __future__ import annotations

import difflib
import functools
import tomllib
from collections.abc import Mapping
from enum import StrEnum
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpudesk.workload import citations
from gpudesk.workload.architecture import ModelShape, assumed_shape
from gpudesk.workload.errors import PlanningInputError

PRESETS_FILE = "presets.toml"


class ModelKind(StrEnum):
    DECODER = "decoder"  # GPT-style: KV cache at inference
    ENCODER = "encoder"  # BERT-style: whole sequence at once, no KV cache
    CNN = "cnn"
    UNET = "unet"


class ModelArchitecture(BaseModel):
    """The numbers the estimator needs about one model.

    Transformers carry their :class:`ModelShape` (from a preset or a config.json);
    CNNs and UNets carry activation element counts per sample at ``reference_input``
    instead. ``params`` is the published count when there is one, else the shape's own.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    kind: ModelKind
    params: int = Field(default=0, ge=0)
    #: parameters one token uses (mixture of experts); None means all of them
    active_params: int | None = Field(default=None, gt=0)
    shape: ModelShape | None = None
    activation_elements_per_sample: float | None = Field(default=None, gt=0)
    attention_score_elements_per_sample: float | None = Field(default=None, ge=0)
    inference_activation_elements_per_sample: float | None = Field(default=None, gt=0)
    inference_attention_score_elements_per_sample: float | None = Field(default=None, ge=0)
    lora_params_per_rank: int | None = Field(default=None, gt=0)
    lora_fraction_at_rank_16: float | None = Field(default=None, gt=0, lt=1)
    reference_input: str | None = None
    sources: tuple[str, ...] = Field(min_length=1)
    notes: str | None = None
    #: True for the shape guessed from a bare parameter count
    assumed: bool = False
    #: which shape fields were guessed (empty when none were)
    assumed_fields: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _counts_from_shape(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("shape"), dict | ModelShape):
            shape = data["shape"]
            shape = shape if isinstance(shape, ModelShape) else ModelShape.model_validate(shape)
            data = {**data, "shape": shape}
            if not data.get("params"):
                data["params"] = shape.total_params
            if data.get("active_params") is None and shape.is_moe:
                data["active_params"] = shape.active_params
        return data

    @model_validator(mode="after")
    def _complete_for_kind(self) -> ModelArchitecture:
        if self.is_transformer:
            if self.shape is None:
                raise ValueError(f"a {self.kind} preset needs a shape")
            if self.kind is ModelKind.ENCODER and self.shape.causal:
                raise ValueError("an encoder's shape must not be causal")
        elif (
            self.activation_elements_per_sample is None
            or self.inference_activation_elements_per_sample is None
        ):
            raise ValueError(
                f"a {self.kind} preset needs activation_elements_per_sample and "
                "inference_activation_elements_per_sample"
            )
        if self.params < 1:
            raise ValueError("params must be at least 1")
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
    def active_fraction(self) -> float:
        """Share of the weights one token reads (1.0 for dense models)."""
        if self.active_params is None:
            return 1.0
        return self.active_params / self.params

    def summary(self) -> str:
        """One line for people: the shape, or the reference input."""
        if self.shape is not None:
            text = self.shape.summary()
            if self.assumed_fields:
                text += f" (assumed: {', '.join(self.assumed_fields)})"
            return text
        return f"{self.kind.value}, activations per {self.reference_input}"


def generic_architecture(
    params: int, given: Mapping[str, int | None] | None = None
) -> ModelArchitecture:
    """A decoder for a bare parameter count: the shape fields not ``given`` are assumed.

    See :func:`gpudesk.workload.architecture.assumed_shape` for the rules; the result is
    marked ``assumed`` and names the assumed fields, so every output can say so.
    """
    shape, assumed = assumed_shape(params, given)
    parts = [
        f"{shape.layers} layers" if "layers" in assumed else "",
        f"hidden {shape.hidden}" if "hidden" in assumed else "",
        f"{shape.heads} heads of {shape.head_dim}" if "heads" in assumed else "",
        f"a {shape.intermediate:,}-wide MLP" if "intermediate" in assumed else "",
        f"a {shape.vocab:,}-token vocabulary" if "vocab" in assumed else "",
    ]
    guessed = ", ".join(part for part in parts if part)
    notes = f"Shape assumed from the parameter count: {guessed}." if guessed else ""
    if "kv_heads" in assumed:
        notes += (
            " KV heads assumed equal to the attention heads: grouped-query attention is not "
            "assumed, so the KV cache is the largest such a model could have."
        )
    return ModelArchitecture(
        id="custom",
        name=f"{format_param_count(params)} parameters",
        kind=ModelKind.DECODER,
        params=params,
        shape=shape,
        sources=(citations.GPT3_SHAPES,),
        notes=notes.strip() or None,
        assumed=bool(assumed),
        assumed_fields=assumed,
    )


def architecture_from_shape(
    shape: ModelShape, name: str, source: str, params: int | None = None
) -> ModelArchitecture:
    """A model described by its shape alone (a config.json), counted from the shape."""
    return ModelArchitecture(
        id="config",
        name=name,
        kind=ModelKind.DECODER if shape.causal else ModelKind.ENCODER,
        params=params or shape.total_params,
        shape=shape,
        sources=(source,),
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
    text = resources.files("gpudesk.workload").joinpath(PRESETS_FILE).read_text("utf-8")
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
