"""The bundled presets: complete, sourced, and matching their published figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudesk.speed.shapes import shape_for
from gpudesk.workload.architecture import ModelShape, load_hf_config
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.presets import (
    ModelArchitecture,
    ModelKind,
    find_preset,
    format_param_count,
    generic_architecture,
    load_presets,
)

CONFIGS = Path(__file__).parent / "configs"

#: The issue's list (Llama 2/3.1/3.3, Qwen2.5/Qwen3 0.5-72B, DeepSeek-V3/R1, Mixtral
#: 8x22B, Gemma 2/3, Phi-3/4), the original eleven, and issue 41's most-benchmarked open
#: models of 2025-26 that published serving and llama.cpp runs use.
REQUIRED = {
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.3-70b",
    "llama-3.1-405b",
    "qwen2.5-0.5b",
    "qwen2.5-7b",
    "qwen2.5-72b",
    "qwen3-0.6b",
    "qwen3-8b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "deepseek-v3",
    "deepseek-r1",
    "mistral-7b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "gemma-2-9b",
    "gemma-2-27b",
    "gemma-3-1b",
    "gemma-3-27b",
    "phi-3-mini",
    "phi-3-medium",
    "phi-4",
    "bert-base",
    "resnet-50",
    "sdxl-unet",
    "gpt-oss-120b",
    "llama-3.2-1b",
    "llama-3.2-3b",
    "llama-4-scout-17b-16e",
    "mistral-small-24b",
    "qwen3-coder-480b-a35b",
    "glm-4.5-air",
    "kimi-k2",
}

#: Total parameters as the model cards and papers write them: the shape's own count must
#: round or cut to the figure at its last digit ("24B": 23.5B up to 25B).
CARD_PARAMS = {
    "qwen3-0.6b": "0.6B",
    "qwen3-1.7b": "1.7B",
    "qwen3-4b": "4.0B",
    "qwen3-8b": "8.2B",
    "qwen3-14b": "14.8B",
    "qwen3-32b": "32.8B",
    "qwen3-30b-a3b": "30.5B",
    "qwen3-235b-a22b": "235B",
    "qwen3-coder-480b-a35b": "480B",
    "deepseek-v3": "671B",
    "deepseek-r1": "671B",
    "kimi-k2": "1T",
    "glm-4.5-air": "106B",
    "gpt-oss-120b": "116.8B",
    "mixtral-8x22b": "141B",
    "mistral-small-24b": "24B",
    "llama-3.2-1b": "1.23B",
    "llama-3.2-3b": "3.21B",
    "gemma-3-1b": "1.0B",
    "phi-4-mini": "3.8B",
}

#: Cards whose total includes a vision encoder the preset leaves out (language model
#: only): the count is below the card's figure by less than the share given.
CARD_PARAMS_WITH_VISION = {"llama-4-scout-17b-16e": ("109B", 0.03)}

_UNITS = {"B": 1e9, "T": 1e12}


def card_range(figure: str) -> tuple[float, float]:
    """The counts a card's figure stands for: rounded ("23.57B" -> "24B") or cut
    ("106.85B" -> "106B") to its last digit."""
    number, unit = figure[:-1], _UNITS[figure[-1]]
    step = 10.0 ** -len(number.partition(".")[2]) * unit
    value = float(number) * unit
    return value - step / 2, value + step


def test_all_required_presets_exist_with_sources() -> None:
    presets = {preset.id: preset for preset in load_presets()}
    assert set(presets) >= REQUIRED
    for preset in presets.values():
        assert preset.sources, preset.id
        assert not preset.assumed
        if preset.shape is not None:
            assert "config.json" in preset.sources[0], preset.id


@pytest.mark.parametrize("preset_id", sorted(p.id for p in load_presets() if p.shape is not None))
def test_shapes_reproduce_the_published_parameter_count(preset_id: str) -> None:
    """The shape's own count against `params` (published to the unit) within 1%, or
    against the model card's rounded figure within its rounding."""
    preset = find_preset(preset_id)
    assert preset.shape is not None
    counted = preset.shape.total_params
    if preset_id in CARD_PARAMS:
        low, high = card_range(CARD_PARAMS[preset_id])
        assert low <= counted < high, counted
    elif preset_id in CARD_PARAMS_WITH_VISION:
        figure, share = CARD_PARAMS_WITH_VISION[preset_id]
        card = float(figure[:-1]) * _UNITS[figure[-1]]
        assert card * (1 - share) < counted < card, counted
    else:
        assert counted == pytest.approx(preset.params, rel=0.01)


@pytest.mark.parametrize(
    ("figure", "low", "high"),
    [("24B", 23.5e9, 25e9), ("1.23B", 1.225e9, 1.24e9), ("1T", 0.5e12, 2e12)],
)
def test_card_range_takes_the_figures_last_digit(figure: str, low: float, high: float) -> None:
    assert card_range(figure) == pytest.approx((low, high))


def test_known_published_figures() -> None:
    """Model cards: Llama 3.1 8B 8.03B; Mixtral 46.7B total / 12.9B active; DeepSeek-V3
    671B total / 37B active; BERT 110M; ResNet-50 25,557,032."""
    assert find_preset("llama-3.1-8b").params == 8_030_261_248
    mixtral = find_preset("mixtral-8x7b")
    assert round(mixtral.params / 1e9, 1) == 46.7
    assert mixtral.active_params is not None and round(mixtral.active_params / 1e9, 1) == 12.9
    deepseek = find_preset("deepseek-v3")
    assert round(deepseek.params / 1e9) == 671
    assert deepseek.active_params is not None and round(deepseek.active_params / 1e9) in (37, 38)
    assert round(find_preset("bert-base").params / 1e6, -1) == 110
    assert find_preset("resnet-50").params == 25_557_032


def test_grouped_query_attention_heads() -> None:
    def kv(preset_id: str) -> int:
        shape = find_preset(preset_id).shape
        assert shape is not None
        return shape.kv_heads

    assert kv("llama-3.1-70b") == 8
    assert kv("qwen2.5-7b") == 4
    assert kv("llama-2-7b") == 32  # full multi-head attention
    assert kv("llama-2-70b") == 8


def test_attention_and_experts_of_the_2025_presets() -> None:
    """What each config.json says beyond the plain widths: gpt-oss-120b's 128-token window
    on every other layer, Llama 4 Scout's 8,192-token chunks on 3 of 4 layers (kept as a
    window), Kimi K2's MLA latent (kv_lora_rank 512 + rope 64) and one dense layer, GLM-4.5-Air's
    shared expert and q/k/v biases."""

    def shape(preset_id: str) -> ModelShape:
        found = find_preset(preset_id).shape
        assert found is not None
        return found

    gpt_oss = shape("gpt-oss-120b")
    assert gpt_oss.kv_cached_tokens(32_768) == (18 * 32_768, 18 * 128)
    scout = shape("llama-4-scout-17b-16e")
    assert scout.kv_cached_tokens(131_072) == (12 * 131_072, 36 * 8192)
    assert scout.kv_cache_bytes(8192, 2.0) == 48 * 8192 * 2 * 8 * 128 * 2.0
    assert (scout.experts, scout.active_experts, scout.shared_experts) == (16, 1, 1)
    kimi = shape("kimi-k2")
    assert kimi.kv_values_per_token_per_layer() == 576
    assert (kimi.moe_layers, kimi.experts, kimi.shared_experts) == (60, 384, 1)
    glm = shape("glm-4.5-air")
    assert (glm.moe_layers, glm.expert_intermediate, glm.attention_bias) == (45, 1408, True)
    assert shape("qwen3-coder-480b-a35b").moe_layers == 62


def test_llama_3_2_3b_preset_is_the_speed_measurement_files_model() -> None:
    """shape_for prefers the measurement file's model of the same id: the two must agree."""
    assert shape_for("llama-3.2-3b") == find_preset("llama-3.2-3b").shape


@pytest.mark.parametrize(
    ("config", "preset_id"),
    [
        ("llama-3.1-8b", "llama-3.1-8b"),
        ("qwen2.5-7b", "qwen2.5-7b"),
        ("mixtral-8x7b", "mixtral-8x7b"),
        ("deepseek-v3", "deepseek-v3"),
        ("gemma-2-9b", "gemma-2-9b"),
    ],
)
def test_config_json_gives_the_preset_shape_and_kv_cache(config: str, preset_id: str) -> None:
    """The same KV cache from a real config.json as from the matching preset."""
    loaded = load_hf_config(CONFIGS / f"{config}.json")
    preset = find_preset(preset_id).shape
    assert preset is not None
    for tokens in (1, 4096, 32768):
        assert loaded.kv_cache_bytes(tokens, 2.0) == preset.kv_cache_bytes(tokens, 2.0)
    assert loaded.total_params == preset.total_params
    assert json.loads((CONFIGS / f"{config}.json").read_text())["vocab_size"] == preset.vocab


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
    assert model.assumed and model.shape is not None
    assert (model.shape.layers, model.shape.hidden) == (33, 4224)
    assert model.shape.kv_heads == model.shape.heads  # conservative: no grouped-query attention
    assert 12 * model.shape.layers * model.shape.hidden**2 == pytest.approx(7e9, rel=0.03)
    assert "grouped-query attention is not assumed" in (model.notes or "")
    assert "kv_heads" in model.assumed_fields


def test_given_shape_fields_are_not_assumed() -> None:
    model = generic_architecture(
        70_000_000_000, {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8}
    )
    assert model.shape is not None and model.shape.kv_heads == 8
    assert "kv_heads" not in model.assumed_fields
    assert "grouped-query" not in (model.notes or "")
    assert model.params == 70_000_000_000


@pytest.mark.parametrize("params", [1, 1000, 350_000_000, 1_500_000_000_000])
def test_generic_shape_is_valid_for_any_size(params: int) -> None:
    shape = generic_architecture(params).shape
    assert shape is not None
    assert shape.heads * shape.head_dim == shape.hidden


@pytest.mark.parametrize(
    ("value", "text"),
    [(7e9, "7B"), (350e6, "350M"), (1.5e12, "1.5T"), (8_030_261_248, "8.03B"), (999, "999")],
)
def test_format_param_count(value: float, text: str) -> None:
    assert format_param_count(value) == text


def test_incomplete_transformer_preset_is_rejected() -> None:
    with pytest.raises(ValueError, match="needs"):
        ModelArchitecture(id="x", name="x", kind=ModelKind.DECODER, params=10, sources=("s",))
