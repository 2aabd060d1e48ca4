"""The bundled presets: complete, sourced, and self-consistent."""

from __future__ import annotations

import pytest

from gpudesk.planning.errors import PlanningInputError
from gpudesk.planning.presets import (
    ModelArchitecture,
    ModelKind,
    find_preset,
    format_param_count,
    generic_architecture,
    load_presets,
)

REQUIRED = {
    "llama-3.1-8b",
    "llama-3.1-70b",
    "mistral-7b",
    "mixtral-8x7b",
    "qwen2.5-7b",
    "qwen2.5-72b",
    "gemma-2-9b",
    "phi-3-mini",
    "bert-base",
    "resnet-50",
    "sdxl-unet",
}


def _params_from_shape(model: ModelArchitecture) -> int:
    """Linear weights of the blocks plus embeddings (norms and biases ignored, < 0.1%)."""
    assert model.layers and model.hidden and model.heads and model.kv_heads
    assert model.head_dim and model.intermediate and model.vocab
    h = model.hidden
    q, kv = model.heads * model.head_dim, model.kv_heads * model.head_dim
    attention = h * q * 2 + h * kv * 2
    mlp = (3 if model.gated_mlp else 2) * h * model.intermediate * (model.experts or 1)
    embeddings = model.vocab * h * (1 if model.tied_embeddings else 2)
    if model.kind is ModelKind.ENCODER:
        embeddings = (model.vocab + model.context + 2) * h if model.context else embeddings
    return model.layers * (attention + mlp) + embeddings


def test_all_required_presets_exist_with_sources() -> None:
    presets = {preset.id: preset for preset in load_presets()}
    assert set(presets) >= REQUIRED
    for preset in presets.values():
        assert preset.sources, preset.id
        assert not preset.assumed


@pytest.mark.parametrize("preset_id", sorted(REQUIRED - {"resnet-50", "sdxl-unet"}))
def test_transformer_shapes_reproduce_the_published_parameter_count(preset_id: str) -> None:
    preset = find_preset(preset_id)
    assert _params_from_shape(preset) == pytest.approx(preset.params, rel=0.01)


def test_known_published_figures() -> None:
    """Model cards: Llama 3.1 8B 8.03B, Mixtral 46.7B total / 12.9B active, BERT 110M."""
    assert find_preset("llama-3.1-8b").params == 8_030_261_248
    mixtral = find_preset("mixtral-8x7b")
    assert round(mixtral.params / 1e9, 1) == 46.7
    assert mixtral.active_params is not None and round(mixtral.active_params / 1e9, 1) == 12.9
    assert round(find_preset("bert-base").params / 1e6, -1) == 110
    assert find_preset("resnet-50").params == 25_557_032


def test_grouped_query_attention_heads() -> None:
    assert find_preset("llama-3.1-70b").kv_heads == 8
    assert find_preset("qwen2.5-7b").kv_heads == 4
    assert find_preset("phi-3-mini").kv_heads == 32  # full multi-head attention


@pytest.mark.parametrize("name", ["llama-3.1-8b", "Llama 3.1 8B", "LLAMA-3.1-8b", " mistral-7b "])
def test_find_preset_is_forgiving(name: str) -> None:
    assert find_preset(name).id in {"llama-3.1-8b", "mistral-7b"}


def test_unknown_preset_lists_them_all() -> None:
    with pytest.raises(PlanningInputError) as info:
        find_preset("llama-4-400b")
    message = str(info.value)
    assert "unknown model preset" in message
    for preset_id in REQUIRED:
        assert preset_id in message


def test_generic_shape_for_7b() -> None:
    """12 x L x h^2 ~ 7e9 with h ~ 128 L: L = 33, h = 4224 (Kaplan 2020, GPT-3 table 2.1)."""
    model = generic_architecture(7_000_000_000)
    assert model.assumed
    assert model.layers == 33
    assert model.hidden == 4224
    assert model.kv_heads == model.heads  # conservative: no grouped-query attention
    assert 12 * model.layers * model.hidden**2 == pytest.approx(7e9, rel=0.03)
    assert "assumed" in (model.notes or "")


@pytest.mark.parametrize("params", [1, 1000, 350_000_000, 1_500_000_000_000])
def test_generic_shape_is_valid_for_any_size(params: int) -> None:
    model = generic_architecture(params)
    assert model.hidden is not None and model.heads is not None and model.head_dim is not None
    assert model.heads * model.head_dim == model.hidden


@pytest.mark.parametrize(
    ("value", "text"),
    [(7e9, "7B"), (350e6, "350M"), (1.5e12, "1.5T"), (8_030_261_248, "8.03B"), (999, "999")],
)
def test_format_param_count(value: float, text: str) -> None:
    assert format_param_count(value) == text


def test_incomplete_transformer_preset_is_rejected() -> None:
    with pytest.raises(ValueError, match="needs"):
        ModelArchitecture(id="x", name="x", kind=ModelKind.DECODER, params=10, sources=("s",))
