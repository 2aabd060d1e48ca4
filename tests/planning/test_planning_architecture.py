"""ModelShape counts and config.json loading, against published figures.

Parameter counts: the model cards (Llama 3.1 8B 8.03B; Mixtral 46.7B total, 12.9B
active; DeepSeek-V3 671B total, 37B active, without its 14B multi-token-prediction
module; Gemma 2 9B 9.24B). KV cache: 2 x layers x KV heads x head dim x bytes x tokens.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk.workload.architecture import (
    MAX_CONFIG_BYTES,
    ConfigFileError,
    ModelShape,
    ShapeError,
    assumed_shape,
    load_hf_config,
    make_shape,
    parse_hf_config,
    with_overrides,
)

CONFIGS = Path(__file__).parent / "configs"


def _config(name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads((CONFIGS / f"{name}.json").read_text())
    return data


def _write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("name", "total", "active", "rel"),
    [
        ("llama-3.1-8b", 8_030_261_248, 8_030_261_248, 1e-9),
        ("qwen2.5-7b", 7_615_616_512, 7_615_616_512, 1e-9),
        ("gemma-2-9b", 9_241_705_984, 9_241_705_984, 1e-3),
        ("mixtral-8x7b", 46_702_792_704, 12_879_925_248, 1e-9),
        ("deepseek-v3", 671e9, 37e9, 0.02),
    ],
)
def test_config_files_give_the_published_parameter_counts(
    name: str, total: float, active: float, rel: float
) -> None:
    shape = load_hf_config(CONFIGS / f"{name}.json")
    assert shape.total_params == pytest.approx(total, rel=rel)
    assert shape.active_params == pytest.approx(active, rel=rel)


def test_folder_holding_a_config_json_loads(tmp_path: Path) -> None:
    _write(tmp_path, _config("llama-3.1-8b"))
    assert load_hf_config(tmp_path).kv_heads == 8


def test_what_the_loader_reads_from_each_family() -> None:
    qwen = load_hf_config(CONFIGS / "qwen2.5-7b.json")
    assert qwen.attention_bias and qwen.sliding_window is None  # use_sliding_window false
    gemma = load_hf_config(CONFIGS / "gemma-2-9b.json")
    assert gemma.tied_embeddings  # absent key: Gemma2Config's default
    assert (gemma.head_dim, gemma.sliding_window, gemma.sliding_layers) == (256, 4096, 21)
    deepseek = load_hf_config(CONFIGS / "deepseek-v3.json")
    assert deepseek.is_mla and deepseek.is_moe
    assert (deepseek.experts, deepseek.active_experts, deepseek.shared_experts) == (256, 8, 1)
    assert deepseek.dense_layers == 3 and deepseek.checkpoint_quant == "fp8"
    mixtral = load_hf_config(CONFIGS / "mixtral-8x7b.json")
    assert mixtral.sliding_window is None  # "sliding_window": null


def test_kv_cache_counts_kv_heads_not_query_heads() -> None:
    """Llama-2-70B, 4,096 tokens, fp16: 2 x 80 x 8 x 128 x 2 x 4096 = 1.342 GB."""
    shape = make_shape(
        {
            "layers": 80,
            "hidden": 8192,
            "heads": 64,
            "kv_heads": 8,
            "head_dim": 128,
            "intermediate": 28672,
            "vocab": 32000,
            "context": 4096,
        }
    )
    assert shape.kv_cache_bytes(4096, 2.0) == 2 * 80 * 8 * 128 * 2 * 4096
    assert shape.kv_cache_bytes(4096, 2.0) / 1e9 == pytest.approx(1.342, abs=1e-3)


def test_sliding_window_layers_cache_only_the_window() -> None:
    gemma = load_hf_config(CONFIGS / "gemma-2-9b.json")
    per_token_layer = 2 * 8 * 256 * 2  # bytes, bf16
    # 21 global layers x 8192 tokens + 21 local layers x 4096 tokens
    assert gemma.kv_cache_bytes(8192, 2.0) == per_token_layer * (21 * 8192 + 21 * 4096)
    # below the window every layer holds every token
    assert gemma.kv_cache_bytes(1000, 2.0) == per_token_layer * 42 * 1000


def test_mla_caches_the_latent_or_the_expanded_heads() -> None:
    """DeepSeek-V3: (512 + 64) values per token per layer when the latent is cached;
    128 heads x (128 + 64 + 128) when K and V are expanded per head."""
    shape = load_hf_config(CONFIGS / "deepseek-v3.json")
    assert shape.kv_values_per_token_per_layer(mla_latent=True) == 576
    assert shape.kv_values_per_token_per_layer(mla_latent=False) == 128 * 320
    assert shape.kv_cache_bytes(1, 2.0, mla_latent=True) == 61 * 576 * 2


def test_overrides_replace_fields_and_keep_derived_head_dim() -> None:
    shape = load_hf_config(CONFIGS / "llama-3.1-8b.json")
    changed = with_overrides(shape, {"kv_heads": 32, "layers": None})
    assert changed.kv_heads == 32 and changed.layers == 32
    wider = with_overrides(shape, {"hidden": 8192, "heads": 64})
    assert wider.head_dim == 128
    gemma = load_hf_config(CONFIGS / "gemma-2-9b.json")
    assert with_overrides(gemma, {"heads": 32}).head_dim == 256  # explicit head_dim stays
    with pytest.raises(ShapeError) as caught:
        with_overrides(shape, {"kv_heads": 5})
    assert caught.value.field == "kv_heads"


def test_assumed_shape_says_what_was_assumed() -> None:
    """GPT-3 175B given its real shape: 96 layers, hidden 12288, 96 heads of 128."""
    shape, assumed = assumed_shape(175_000_000_000, {"layers": 96, "hidden": 12288, "heads": 96})
    assert (shape.head_dim, shape.kv_heads, shape.intermediate) == (128, 96, 4 * 12288)
    assert "kv_heads" in assumed and "layers" not in assumed
    bare, assumed = assumed_shape(70_000_000_000)
    assert bare.kv_heads == bare.heads  # no GQA assumed
    assert {"layers", "hidden", "heads", "kv_heads"} <= set(assumed)


# --- bad files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"num_key_value_heads": True}, "num_key_value_heads"),
        ({"num_key_value_heads": "8"}, "num_key_value_heads"),
        ({"num_key_value_heads": 8.0}, "num_key_value_heads"),
        ({"num_key_value_heads": -8}, "num_key_value_heads"),
        ({"num_key_value_heads": 5}, "num_key_value_heads"),
        ({"hidden_size": None}, "hidden_size"),
        ({"num_hidden_layers": 10**9}, "num_hidden_layers"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings"),
        ({"num_local_experts": 8, "num_experts_per_tok": 9}, "num_experts_per_tok"),
        ({"num_local_experts": 8}, "num_experts_per_tok"),
        ({"layer_types": ["sliding_attention"], "sliding_window": 4096}, "layer_types"),
        ({"quantization_config": [1]}, "quantization_config"),
    ],
)
def test_malformed_fields_are_named(tmp_path: Path, change: dict[str, object], field: str) -> None:
    document = {**_config("llama-3.1-8b"), **change}
    with pytest.raises(ConfigFileError) as caught:
        load_hf_config(_write(tmp_path, document))
    assert caught.value.field == field
    assert field in str(caught.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (b"{", "not valid JSON"),
        (b"[]", "not a JSON object"),
        (b'{"hidden_size": NaN}', "not valid JSON"),
        (b'{"a": 1, "a": 2}', "appears twice"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nests deeper"),
        (b'{"a":' * 40 + b"1" + b"}" * 40, "nests deeper"),
    ],
)
def test_malformed_files_are_reported(text: bytes, fragment: str) -> None:
    with pytest.raises(ConfigFileError, match=fragment):
        parse_hf_config(text)


def test_only_regular_files_of_bounded_size(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="cannot be read"):
        load_hf_config(tmp_path)  # a folder without config.json
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(ConfigFileError, match="more than"):
        load_hf_config(big)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(ConfigFileError, match="not a regular file"):
        load_hf_config(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(CONFIGS / "llama-3.1-8b.json")  # the HF cache is made of symlinks
    assert load_hf_config(link).layers == 32


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_keys = st.sampled_from(
    [
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "intermediate_size",
        "vocab_size",
        "max_position_embeddings",
        "num_local_experts",
        "num_experts_per_tok",
        "n_shared_experts",
        "first_k_dense_replace",
        "kv_lora_rank",
        "qk_rope_head_dim",
        "sliding_window",
        "layer_types",
        "tie_word_embeddings",
        "text_config",
        "quantization_config",
        "model_type",
    ]
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    base=st.sampled_from(["llama-3.1-8b", "deepseek-v3", "gemma-2-9b", "mixtral-8x7b"]),
    changes=st.dictionaries(_keys, _json_values | st.integers(0, 300_000), max_size=4),
)
def test_any_config_either_loads_or_raises_a_typed_error(
    base: str, changes: dict[str, object]
) -> None:
    """Whatever the values, the loader gives a valid shape or a ConfigFileError; counts
    stay finite and positive."""
    document = {**_config(base), **changes}
    try:
        text = json.dumps(document, allow_nan=True).encode()
    except (ValueError, RecursionError):
        return
    try:
        shape = parse_hf_config(text)
    except ConfigFileError as exc:
        assert str(exc)
        return
    assert isinstance(shape, ModelShape)
    assert shape.total_params > 0 and shape.active_params <= shape.total_params
    assert shape.kv_cache_bytes(4096, 2.0) >= 0
