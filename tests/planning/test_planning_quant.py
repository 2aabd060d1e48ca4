"""Quantised weight sizes against published GGUF files and llama.cpp's own load log.

References (file sizes in GB = 10^9 bytes as the model cards print them):
- TheBloke, Llama-2-7B-GGUF and Llama-2-13B-GGUF / Llama-2-70B-GGUF model cards,
  "Provided files" tables, https://huggingface.co/TheBloke/Llama-2-7B-GGUF
- bartowski, Mixtral-8x22B-v0.1-GGUF model card (llama.cpp b2636),
  https://huggingface.co/bartowski/Mixtral-8x22B-v0.1-GGUF
- llama.cpp load log of a Llama-3-8B Q4_K_M (mradermacher quant) on an RTX 3070:
  "type q4_K: 193 tensors, type q6_K: 33 tensors", "model size = 4.58 GiB (4.89 BPW)",
  "CPU buffer size = 281.81 MiB", "CUDA0 buffer size = 4403.49 MiB",
  https://github.com/developer0hye/llama-3-korean-bllossom-8b-q4-docker (README)
"""

from __future__ import annotations

import pytest

from gpudesk.workload.architecture import ModelShape, TensorRole, make_shape
from gpudesk.workload.quant import (
    GROUP128_INT4_BITS,
    NF4_BITS,
    QuantFormat,
    tensor_bits,
    use_more_bits,
    weight_bytes,
)

MIB = 2**20


def _llama(layers: int, hidden: int, heads: int, kv: int, inter: int, vocab: int) -> ModelShape:
    return make_shape(
        {
            "layers": layers,
            "hidden": hidden,
            "heads": heads,
            "kv_heads": kv,
            "head_dim": hidden // heads,
            "intermediate": inter,
            "vocab": vocab,
            "context": 4096,
        }
    )


LLAMA2_7B = _llama(32, 4096, 32, 32, 11008, 32000)
LLAMA2_13B = _llama(40, 5120, 40, 40, 13824, 32000)
LLAMA2_70B = _llama(80, 8192, 64, 8, 28672, 32000)
LLAMA3_8B = _llama(32, 4096, 32, 8, 14336, 128256)
MIXTRAL_8X22B = make_shape(
    {
        **_llama(56, 6144, 48, 8, 16384, 32000).model_dump(),
        "experts": 8,
        "active_experts": 2,
    }
)


@pytest.mark.parametrize(
    ("shape", "fmt", "file_gb"),
    [
        (LLAMA2_7B, QuantFormat.Q4_0, 3.83),
        (LLAMA2_7B, QuantFormat.Q4_K_M, 4.08),
        (LLAMA2_7B, QuantFormat.Q5_K_M, 4.78),
        (LLAMA2_7B, QuantFormat.Q6_K, 5.53),
        (LLAMA2_7B, QuantFormat.Q8_0, 7.16),
        (LLAMA2_13B, QuantFormat.Q4_K_M, 7.87),
        (LLAMA2_13B, QuantFormat.Q8_0, 13.83),
        (LLAMA2_70B, QuantFormat.Q4_0, 38.87),
        (LLAMA2_70B, QuantFormat.Q4_K_M, 41.42),
        (MIXTRAL_8X22B, QuantFormat.Q4_K_M, 85.58),
        (MIXTRAL_8X22B, QuantFormat.Q5_K_M, 99.96),
    ],
)
def test_gguf_sizes_match_published_files(
    shape: ModelShape, fmt: QuantFormat, file_gb: float
) -> None:
    """Within 0.5%: the file also holds metadata and the tokenizer (a few MB)."""
    assert weight_bytes(shape, fmt).in_memory_bytes / 1e9 == pytest.approx(file_gb, rel=0.005)


def test_q4_k_m_tensor_mix_matches_llama_cpp_log() -> None:
    """193 Q4_K and 33 Q6_K tensors (16 attn_v + 16 ffn_down + output), 4.89 bits per
    weight, 281.81 MiB on the CPU (the embedding table) and 4403.49 MiB on the GPU."""
    counts: dict[float, int] = {}
    for group in LLAMA3_8B.tensors():
        if group.role is TensorRole.NORM:
            continue
        bits = tensor_bits(QuantFormat.Q4_K_M, LLAMA3_8B, group)
        counts[bits] = counts.get(bits, 0) + group.count
    assert counts == {4.5: 193, 6.5625: 33}
    weights = weight_bytes(LLAMA3_8B, QuantFormat.Q4_K_M)
    assert weights.bits_per_weight == pytest.approx(4.89, abs=0.01)
    assert weights.input_embedding_bytes / MIB == pytest.approx(281.81, abs=0.01)
    gpu = weights.in_memory_bytes - weights.input_embedding_bytes
    assert gpu / MIB == pytest.approx(4403.49, rel=0.001)
    assert weights.lm_head_bits == 6.5625 and weights.embedding_bits == 4.5


def test_use_more_bits_picks_first_last_eighth_and_every_third() -> None:
    chosen = [layer for layer in range(32) if use_more_bits(layer, 32)]
    assert chosen == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]


def test_bitsandbytes_and_group_formats_keep_embeddings_and_head_16_bit() -> None:
    """NF4: 4 + 8/64 + 32/16384 = 4.127 bits (QLoRA section 3); AWQ/GPTQ group 128:
    4 + 20/128 = 4.156 bits; embeddings and LM head at 16."""
    assert round(NF4_BITS, 3) == 4.127
    assert GROUP128_INT4_BITS * 128 == 4 * 128 + 20
    for fmt, bits in ((QuantFormat.NF4, NF4_BITS), (QuantFormat.AWQ, GROUP128_INT4_BITS)):
        weights = weight_bytes(LLAMA3_8B, fmt)
        linear = LLAMA3_8B.total_params - 2 * LLAMA3_8B.embedding_params
        norms = sum(g.params for g in LLAMA3_8B.tensors() if g.role is TensorRole.NORM)
        expected = (linear - norms) * bits / 8 + (2 * LLAMA3_8B.embedding_params + norms) * 2
        assert weights.in_memory_bytes == pytest.approx(expected)
        assert (weights.embedding_bits, weights.lm_head_bits, weights.bulk_bits) == (16, 16, bits)


def test_streamed_bytes_skip_the_embedding_table() -> None:
    weights = weight_bytes(LLAMA3_8B, QuantFormat.BF16)
    table = LLAMA3_8B.embedding_params * 2
    assert weights.streamed_per_token_bytes == pytest.approx(
        weights.in_memory_bytes - table + LLAMA3_8B.hidden * 2
    )


def test_moe_streams_only_the_active_experts() -> None:
    """Mixtral 8x22B: 141B held, ~39B active per token; bf16 streams 2 bytes per active
    parameter, less the embedding table."""
    weights = weight_bytes(MIXTRAL_8X22B, QuantFormat.BF16)
    assert MIXTRAL_8X22B.total_params / 1e9 == pytest.approx(140.6, abs=0.1)
    assert MIXTRAL_8X22B.active_params / 1e9 == pytest.approx(39.2, abs=0.1)
    table = MIXTRAL_8X22B.embedding_params
    expected = (MIXTRAL_8X22B.active_params - table) * 2 + MIXTRAL_8X22B.hidden * 2
    assert weights.streamed_per_token_bytes == pytest.approx(expected)


def test_mxfp4_quantises_only_routed_experts_of_a_moe() -> None:
    """gpt-oss style: experts at 4.25 bits, attention, router, embeddings at 16."""
    weights = weight_bytes(MIXTRAL_8X22B, QuantFormat.MXFP4)
    experts = sum(g.params for g in MIXTRAL_8X22B.tensors() if g.routed_expert)
    rest = MIXTRAL_8X22B.total_params - experts
    assert weights.in_memory_bytes == pytest.approx(experts * 4.25 / 8 + rest * 2)


def test_tied_embedding_is_stored_once_and_streamed_as_the_head() -> None:
    tied = make_shape({**LLAMA3_8B.model_dump(), "tied_embeddings": True})
    weights = weight_bytes(tied, QuantFormat.Q4_K_M)
    assert weights.lm_head_bits == 6.5625  # llama.cpp quantises the shared matrix as output
    assert tied.total_params == LLAMA3_8B.total_params - LLAMA3_8B.embedding_params
    head = tied.embedding_params * 6.5625 / 8
    assert weights.streamed_per_token_bytes > head


@pytest.mark.parametrize("fmt", list(QuantFormat))
def test_every_format_is_between_its_bulk_and_16_bits(fmt: QuantFormat) -> None:
    weights = weight_bytes(LLAMA2_70B, fmt)
    assert weights.bits_per_weight >= min(weights.bulk_bits, 16) - 1e-9
    assert weights.streamed_per_token_bytes < weights.in_memory_bytes
    assert fmt.label and fmt.source


def test_gpt_oss_mxfp4_gguf_keeps_the_non_expert_matrices_at_q8_0() -> None:
    """ggml-org's gpt-oss-20b MXFP4 GGUF: 289 F32, 98 Q8_0 and 72 MXFP4 tensors, 11.27 GiB,
    4.63 bits per weight (a llama-server load log, ikawrakow/ik_llama.cpp issue 822)."""
    from gpudesk.speed.shapes import shape_for

    shape = shape_for("gpt-oss-20b")
    gguf = weight_bytes(shape, QuantFormat.MXFP4, gguf=True)
    assert gguf.in_memory_bytes / 2**30 == pytest.approx(11.27, rel=0.01)
    assert gguf.bits_per_weight == pytest.approx(4.63, abs=0.03)
    release = weight_bytes(shape, QuantFormat.MXFP4)  # OpenAI's safetensors: the rest bf16
    assert release.in_memory_bytes > gguf.in_memory_bytes
    assert gguf.streamed_per_token_bytes < 0.75 * release.streamed_per_token_bytes
