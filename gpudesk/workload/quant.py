"""Weight formats as they are stored, tensor by tensor, and the bytes they take.

Each :class:`QuantFormat` gives every weight tensor of a :class:`ModelShape` a number of
bits per weight, scales and zero points included, with the exceptions real files make:

- Plain dtypes (fp32, bf16, fp16): every tensor at that width.
- ``int8`` / ``int4``: idealised 8 and 4 bits for the linear layers (no scales counted),
  embeddings, LM head and norms at 16 bits.
- ``nf4`` (bitsandbytes, QLoRA): 4-bit NF4 blocks of 64 with double-quantised
  constants, 4 + 8/64 + 32/(64 x 256) = 4.127 bits; embeddings, LM head, router and
  norms stay 16-bit (bitsandbytes quantises nn.Linear, transformers skips lm_head).
- ``awq`` / ``gptq``: 4-bit, one fp16 scale and one 4-bit zero per group of 128,
  4 + (16 + 4)/128 = 4.156 bits; embeddings, LM head, router and norms 16-bit.
- ``fp8``: 8-bit E4M3 linear weights (their scales are under 0.01 bit per weight);
  embeddings, LM head, router and norms 16-bit.
- ``mxfp4``: OCP microscaling, 32 E2M1 values share an 8-bit scale, 4 + 8/32 = 4.25
  bits; a mixture of experts stores only its routed experts so (as gpt-oss ships),
  a dense model its linear layers; the rest 16-bit. llama.cpp's MXFP4 GGUF keeps a
  mixture of experts' other matrices at Q8_0 (``gguf=True``).
- GGUF (``q4_0 q4_k_m q5_k_m q6_k q8_0``): llama.cpp's block formats and the mix its
  quantiser picks per tensor (``llama_tensor_get_type``): the output head Q6_K (Q8_0 for
  q8_0), ``attn_v`` and ``ffn_down`` one step up to Q6_K in the layers its
  ``use_more_bits`` rule picks (q4_k_m, q5_k_m), 8-expert models' ``attn_k``/``attn_v``
  at Q8_0, norms F32; a k-quant whose rows are not a multiple of 256 falls back to the
  32-block format of similar size.

:func:`weight_bytes` gives the bytes held in memory and the bytes **streamed per
decoded token**: every tensor a token reads once, so no input-embedding table (one row
is read), the LM head at its real bits, and of a mixture of experts only the router,
the shared experts and ``active_experts`` routed experts.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from gpudesk.workload.architecture import ModelShape, TensorGroup, TensorRole


class QuantFormat(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    NF4 = "nf4"
    AWQ = "awq"
    GPTQ = "gptq"
    MXFP4 = "mxfp4"
    Q4_0 = "q4_0"
    Q4_K_M = "q4_k_m"
    Q5_K_M = "q5_k_m"
    Q6_K = "q6_k"
    Q8_0 = "q8_0"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def is_gguf(self) -> bool:
        return self in _GGUF_BASE

    @property
    def is_plain(self) -> bool:
        """Unquantised floating point: every tensor at one width."""
        return self in (QuantFormat.FP32, QuantFormat.BF16, QuantFormat.FP16)

    @property
    def source(self) -> str:
        return _SOURCES.get(self, _SOURCES[QuantFormat.BF16])


_LABELS = {
    QuantFormat.FP32: "fp32",
    QuantFormat.BF16: "bf16",
    QuantFormat.FP16: "fp16",
    QuantFormat.FP8: "FP8 (E4M3)",
    QuantFormat.INT8: "int8 (idealised)",
    QuantFormat.INT4: "int4 (idealised)",
    QuantFormat.NF4: "NF4 (bitsandbytes, double quantisation)",
    QuantFormat.AWQ: "AWQ 4-bit, group 128",
    QuantFormat.GPTQ: "GPTQ 4-bit, group 128",
    QuantFormat.MXFP4: "MXFP4",
    QuantFormat.Q4_0: "GGUF Q4_0",
    QuantFormat.Q4_K_M: "GGUF Q4_K_M",
    QuantFormat.Q5_K_M: "GGUF Q5_K_M",
    QuantFormat.Q6_K: "GGUF Q6_K",
    QuantFormat.Q8_0: "GGUF Q8_0",
}

_GGML_SOURCE = (
    "llama.cpp ggml block layouts (ggml-common.h: Q4_0 18 bytes per 32 weights, Q8_0 34/32, "
    "Q4_K 144/256, Q5_K 176/256, Q6_K 210/256) and src/llama-quant.cpp "
    "llama_tensor_get_type (per-tensor mix), https://github.com/ggml-org/llama.cpp"
)
_SOURCES = {
    QuantFormat.BF16: "parameters × bytes per parameter (Transformer Math 101, EleutherAI 2023)",
    QuantFormat.NF4: (
        "Dettmers et al., 'QLoRA', 2023, arXiv:2305.14314, section 3: NF4 blocks of 64 with "
        "double quantisation, 0.127 bits of constants per parameter"
    ),
    QuantFormat.AWQ: (
        "Lin et al., 'AWQ', 2023, arXiv:2306.00978; AutoAWQ's GEMM format: int4 weights, "
        "fp16 scales and 4-bit zeros per group of 128"
    ),
    QuantFormat.GPTQ: (
        "Frantar et al., 'GPTQ', 2022, arXiv:2210.17323; AutoGPTQ/GPTQModel format: int4 "
        "weights, fp16 scales and 4-bit zeros per group of 128 (lm_head not quantised)"
    ),
    QuantFormat.FP8: (
        "Micikevicius et al., 'FP8 Formats for Deep Learning', 2022, arXiv:2209.05433; vLLM "
        "FP8 quantises Linear layers only"
    ),
    QuantFormat.MXFP4: (
        "OCP Microscaling Formats (MX) v1.0 specification, 2023 (32 FP4 E2M1 values + one "
        "E8M0 scale); OpenAI gpt-oss model card, 2025 (MoE weights in MXFP4, the rest bf16)"
    ),
    QuantFormat.Q4_0: _GGML_SOURCE,
    QuantFormat.Q4_K_M: _GGML_SOURCE,
    QuantFormat.Q5_K_M: _GGML_SOURCE,
    QuantFormat.Q6_K: _GGML_SOURCE,
    QuantFormat.Q8_0: _GGML_SOURCE,
}

# -- bits per weight of the storage types ----------------------------------------------

#: ggml types: bits per weight including their block scales (ggml-common.h block sizes).
GGML_BITS = {
    "F32": 32.0,
    "F16": 16.0,
    "Q4_0": 4.5,  # 2-byte scale + 16 bytes per 32
    "Q5_0": 5.5,
    "Q5_1": 6.0,
    "Q8_0": 8.5,  # 2-byte scale + 32 bytes per 32
    "Q4_K": 4.5,  # 144 bytes per 256
    "Q5_K": 5.5,  # 176 bytes per 256
    "Q6_K": 6.5625,  # 210 bytes per 256
}
#: k-quants need rows divisible by 256; llama.cpp falls back to these 32-blocks.
_K_FALLBACK = {"Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}
_QK_K = 256

NF4_BITS = 4 + 8 / 64 + 32 / (64 * 256)
GROUP128_INT4_BITS = 4 + (16 + 4) / 128
MXFP4_BITS = 4 + 8 / 32
FP8_BITS = 8.0

#: bits of a linear (quantised) weight in the non-GGUF formats
_LINEAR_BITS = {
    QuantFormat.FP32: 32.0,
    QuantFormat.BF16: 16.0,
    QuantFormat.FP16: 16.0,
    QuantFormat.FP8: FP8_BITS,
    QuantFormat.INT8: 8.0,
    QuantFormat.INT4: 4.0,
    QuantFormat.NF4: NF4_BITS,
    QuantFormat.AWQ: GROUP128_INT4_BITS,
    QuantFormat.GPTQ: GROUP128_INT4_BITS,
    QuantFormat.MXFP4: MXFP4_BITS,
}
#: the GGUF formats' base type for the bulk of the linear layers
_GGUF_BASE = {
    QuantFormat.Q4_0: "Q4_0",
    QuantFormat.Q4_K_M: "Q4_K",
    QuantFormat.Q5_K_M: "Q5_K",
    QuantFormat.Q6_K: "Q6_K",
    QuantFormat.Q8_0: "Q8_0",
}
_LINEAR_ROLES = frozenset(
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


def use_more_bits(layer: int, layers: int) -> bool:
    """llama.cpp's choice of layers that get more bits: the first and last eighth and
    every third layer between them."""
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def _ggml_type(fmt: QuantFormat, shape: ModelShape, group: TensorGroup) -> str:
    base = _GGUF_BASE[fmt]
    role = group.role
    if role is TensorRole.NORM or role is TensorRole.ROUTER:
        return "F32"
    if role is TensorRole.LM_HEAD or (role is TensorRole.TOKEN_EMBEDDING and shape.tied_embeddings):
        # The output matrix (the tied embedding when there is no separate head).
        chosen = "Q8_0" if base == "Q8_0" else "Q6_K"
    elif role is TensorRole.TOKEN_EMBEDDING:
        chosen = base
    elif role in (TensorRole.ATTN_V, TensorRole.ATTN_K) and shape.experts == 8:
        chosen = "Q8_0"  # llama.cpp: "for the 8-expert model, bumping this to Q8_0"
    elif role is TensorRole.ATTN_V:
        chosen = base
        assert group.layer is not None
        if fmt in (QuantFormat.Q4_K_M, QuantFormat.Q5_K_M) and use_more_bits(
            group.layer, shape.layers
        ):
            chosen = "Q6_K"
        elif shape.layers == 80 and chosen == "Q4_K":
            chosen = "Q5_K"  # llama.cpp's 70B rule: attn_v is 8x smaller than attn_q
    elif role is TensorRole.ATTN_OUTPUT and shape.experts == 8 and fmt is QuantFormat.Q4_K_M:
        chosen = "Q5_K"
    elif role is TensorRole.FFN_DOWN:
        chosen = base
        assert group.layer is not None
        if fmt in (QuantFormat.Q4_K_M, QuantFormat.Q5_K_M) and use_more_bits(
            group.layer, shape.layers
        ):
            chosen = "Q6_K"
    else:
        chosen = base
    if chosen in _K_FALLBACK and group.in_features % _QK_K:
        chosen = _K_FALLBACK[chosen]
    return chosen


#: llama.cpp's "MXFP4 MoE" GGUF (file type 38, as ggml-org/gpt-oss-20b-GGUF ships): routed
#: experts MXFP4, every other matrix (attention, embedding, output head) Q8_0, norms,
#: router and biases F32. A llama-server load of gpt-oss-20b-mxfp4.gguf lists 289 F32,
#: 98 Q8_0 (24 layers x q, k, v, o + embedding + output) and 72 MXFP4 tensors (24 x gate,
#: up, down experts), 11.27 GiB, 4.63 BPW (ikawrakow/ik_llama.cpp issue 822's log).
MXFP4_GGUF_SOURCE = (
    "llama.cpp 'MXFP4 MoE' GGUF (ggml-org/gpt-oss-20b-GGUF): routed experts MXFP4, other "
    "matrices Q8_0, norms and router F32 (a load log: 289 F32, 98 Q8_0, 72 MXFP4 tensors, "
    "11.27 GiB; ikawrakow/ik_llama.cpp issue 822)"
)


def tensor_bits(
    fmt: QuantFormat, shape: ModelShape, group: TensorGroup, *, gguf: bool = False
) -> float:
    """Bits per weight of one tensor group stored in ``fmt``, scales included.

    ``gguf``: the weights come as llama.cpp's GGUF (only MXFP4 differs: a mixture of
    experts' non-expert matrices are Q8_0 there, bf16 in the safetensors release)."""
    if gguf and fmt is QuantFormat.MXFP4 and shape.is_moe:
        if group.routed_expert:
            return MXFP4_BITS
        if group.role in (TensorRole.NORM, TensorRole.ROUTER):
            return GGML_BITS["F32"]
        return GGML_BITS["Q8_0"]
    if fmt.is_gguf:
        return GGML_BITS[_ggml_type(fmt, shape, group)]
    if fmt.is_plain:
        return _LINEAR_BITS[fmt]
    if group.role not in _LINEAR_ROLES:
        return 16.0
    if fmt is QuantFormat.MXFP4 and shape.is_moe and not group.routed_expert:
        return 16.0
    return _LINEAR_BITS[fmt]


class WeightBytes(BaseModel):
    """A model's weights in one format: in memory, per decoded token, and by tensor kind."""

    model_config = ConfigDict(frozen=True)

    format: QuantFormat
    params: int
    #: every tensor, the input embedding table included
    in_memory_bytes: float
    #: the input embedding table alone (llama.cpp keeps it in host memory)
    input_embedding_bytes: float
    #: bytes one decoded token reads: no embedding table, LM head, active experts only
    streamed_per_token_bytes: float
    #: bits of the bulk linear layers (the most common width among them)
    bulk_bits: float
    embedding_bits: float
    lm_head_bits: float

    @property
    def bits_per_weight(self) -> float:
        """Overall: in-memory bits / parameters."""
        return self.in_memory_bytes * 8 / self.params


def weight_bytes(shape: ModelShape, fmt: QuantFormat, *, gguf: bool = False) -> WeightBytes:
    """Bytes of ``shape``'s weights stored in ``fmt`` (see the module docstring);
    ``gguf``: as llama.cpp's GGUF file of that format (:func:`tensor_bits`)."""
    in_memory = 0.0
    streamed = 0.0
    embedding = 0.0
    embedding_bits = lm_head_bits = 0.0
    linear_bits: dict[float, int] = {}
    for group in shape.tensors():
        bits = tensor_bits(fmt, shape, group, gguf=gguf)
        in_memory += group.params * bits / 8
        if group.role is TensorRole.TOKEN_EMBEDDING:
            embedding = group.params * bits / 8
            embedding_bits = bits
            streamed += shape.hidden * bits / 8  # the one row looked up
            if shape.tied_embeddings:  # the same matrix is the LM head
                streamed += group.params * bits / 8
                lm_head_bits = bits
            continue
        if group.role is TensorRole.LM_HEAD:
            lm_head_bits = bits
        elif group.role in _LINEAR_ROLES:
            linear_bits[bits] = linear_bits.get(bits, 0) + group.params
        streamed += group.params_each * group.read_per_token * bits / 8
    bulk = max(linear_bits.items(), key=lambda item: item[1])[0] if linear_bits else 16.0
    return WeightBytes(
        format=fmt,
        params=shape.total_params,
        in_memory_bytes=in_memory,
        input_embedding_bytes=embedding,
        streamed_per_token_bytes=streamed,
        bulk_bits=bulk,
        embedding_bits=embedding_bits,
        lm_head_bits=lm_head_bits,
    )


__all__ = [
    "GGML_BITS",
    "GROUP128_INT4_BITS",
    "MXFP4_BITS",
    "NF4_BITS",
    "QuantFormat",
    "WeightBytes",
    "tensor_bits",
    "use_more_bits",
    "weight_bytes",
]
