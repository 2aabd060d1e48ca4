"""Small real model files for tests: GGUF written by the ``gguf`` package, safetensors
headers written by hand to the format's specification (8-byte length, JSON header)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFWriter
from gguf.quants import quantize

#: bytes per block and values per block, as ggml.c defines them (written out here so
#: the test does not take them from the table the reader uses)
BLOCK = {"F32": (1, 4), "F16": (1, 2), "Q8_0": (32, 34), "Q4_0": (32, 18)}


def llama_tensors(
    layers: int, hidden: int, kv_heads: int, head_dim: int, ffn: int, vocab: int
) -> list[tuple[str, tuple[int, ...]]]:
    """llama.cpp's tensor names with NumPy shapes (rows, columns)."""
    kv = kv_heads * head_dim
    names: list[tuple[str, tuple[int, ...]]] = [("token_embd.weight", (vocab, hidden))]
    for i in range(layers):
        names += [
            (f"blk.{i}.attn_norm.weight", (hidden,)),
            (f"blk.{i}.attn_q.weight", (hidden, hidden)),
            (f"blk.{i}.attn_k.weight", (kv, hidden)),
            (f"blk.{i}.attn_v.weight", (kv, hidden)),
            (f"blk.{i}.attn_output.weight", (hidden, hidden)),
            (f"blk.{i}.ffn_norm.weight", (hidden,)),
            (f"blk.{i}.ffn_gate.weight", (ffn, hidden)),
            (f"blk.{i}.ffn_up.weight", (ffn, hidden)),
            (f"blk.{i}.ffn_down.weight", (hidden, ffn)),
        ]
    names += [("output_norm.weight", (hidden,)), ("output.weight", (vocab, hidden))]
    return names


def write_tiny_gguf(
    path: Path,
    *,
    layers: int = 2,
    hidden: int = 64,
    heads: int = 4,
    kv_heads: int = 2,
    ffn: int = 128,
    vocab: int = 256,
    context: int = 512,
    bulk: str = "Q8_0",
    mixed: str | None = "Q4_0",
    file_type: int = 7,
    seed: int = 0,
) -> dict[str, tuple[str, tuple[int, ...]]]:
    """A llama-architecture GGUF: 2-D weights in ``bulk`` (``ffn_up`` in ``mixed``), norms
    F32, the output head F16. Returns each tensor's type and NumPy shape."""
    rng = np.random.default_rng(seed)
    writer = GGUFWriter(str(path), "llama")
    writer.add_name("tiny-test")
    writer.add_block_count(layers)
    writer.add_embedding_length(hidden)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_context_length(context)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(hidden // heads)
    writer.add_file_type(file_type)
    writer.add_vocab_size(vocab)
    written: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, shape in llama_tensors(layers, hidden, kv_heads, hidden // heads, ffn, vocab):
        values = (rng.standard_normal(shape) * 0.02).astype(np.float32)
        kind = "F32" if len(shape) == 1 else "F16" if name == "output.weight" else bulk
        if mixed and ".ffn_up." in name:
            kind = mixed
        if kind == "F32":
            writer.add_tensor(name, values)
        elif kind == "F16":
            writer.add_tensor(name, values.astype(np.float16))
        else:
            qtype = GGMLQuantizationType[kind]
            data = quantize(values, qtype)
            writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
        written[name] = (kind, shape)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return written


def expected_bytes(kind: str, shape: tuple[int, ...]) -> int:
    block, size = BLOCK[kind]
    elements = int(np.prod(shape))
    return elements // block * size


def safetensors_bytes(tensors: dict[str, tuple[str, list[int], int]]) -> bytes:
    """A safetensors file: name -> (dtype, shape, bytes per element); zero-filled data."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape, width) in tensors.items():
        size = int(np.prod(shape)) * width
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


LLAMA_CONFIG = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 256,
    "max_position_embeddings": 512,
    "tie_word_embeddings": False,
}


def write_safetensors_folder(folder: Path, dtype: str = "BF16", shards: int = 2) -> int:
    """A two-shard Hugging Face llama folder; returns the exact tensor bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(LLAMA_CONFIG), encoding="utf-8")
    width = {"BF16": 2, "F16": 2, "F32": 4}[dtype]
    names = [
        ("model.embed_tokens.weight", [256, 64]),
        ("lm_head.weight", [256, 64]),
        ("model.norm.weight", [64]),
    ]
    for i in range(2):
        p = f"model.layers.{i}."
        names += [
            (p + "self_attn.q_proj.weight", [64, 64]),
            (p + "self_attn.k_proj.weight", [32, 64]),
            (p + "self_attn.v_proj.weight", [32, 64]),
            (p + "self_attn.o_proj.weight", [64, 64]),
            (p + "mlp.gate_proj.weight", [128, 64]),
            (p + "mlp.up_proj.weight", [128, 64]),
            (p + "mlp.down_proj.weight", [64, 128]),
            (p + "input_layernorm.weight", [64]),
            (p + "post_attention_layernorm.weight", [64]),
        ]
    total = 0
    for shard in range(shards):
        part = {name: (dtype, shape, width) for name, shape in names[shard::shards]}
        total += sum(int(np.prod(shape)) * width for _, shape, _ in part.values())
        (folder / f"model-{shard + 1:05d}-of-{shards:05d}.safetensors").write_bytes(
            safetensors_bytes(part)
        )
    return total


# -- hand-made GGUF headers (for crafted, hostile files) -------------------------------

#: GGUF value types (gguf.GGUFValueType), written out so a test does not take them from
#: the reader's own table
GGUF_U8, GGUF_U32, GGUF_I32, GGUF_STRING, GGUF_ARRAY, GGUF_U64, GGUF_I64 = 0, 4, 5, 8, 9, 10, 11
_INT_FORMATS = {GGUF_U8: "<B", GGUF_U32: "<I", GGUF_I32: "<i", GGUF_U64: "<Q", GGUF_I64: "<q"}


def gguf_string(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def gguf_header(tensors: int, keys: int) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, tensors, keys)


def _int_kind(values: list[int]) -> int:
    low, high = min(values, default=0), max(values, default=0)
    if low < 0:
        return GGUF_I32 if low >= -(2**31) and high < 2**31 else GGUF_I64
    return GGUF_U32 if high < 2**32 else GGUF_U64


def gguf_value(value: int | str | list[int]) -> bytes:
    """A value's type and bytes: the narrowest integer type that holds it."""
    if isinstance(value, str):
        return struct.pack("<I", GGUF_STRING) + gguf_string(value.encode())
    if isinstance(value, list):
        kind = _int_kind(value)
        items = b"".join(struct.pack(_INT_FORMATS[kind], item) for item in value)
        return struct.pack("<IIQ", GGUF_ARRAY, kind, len(value)) + items
    kind = _int_kind([value])
    return struct.pack("<I", kind) + struct.pack(_INT_FORMATS[kind], value)


def metadata_gguf(
    path: Path,
    metadata: dict[str, int | str | list[int]],
    tensors: dict[str, tuple[int, ...]] | None = None,
) -> None:
    """A GGUF of the given keys and F32 tensors (dimensions in ggml's order), zero data.

    Written by hand, so any value can be written (0 heads, negative widths). The data
    is a hole (the file is sparse), so large tensors cost no disk.
    """
    tensors = {"token_embd.weight": (64, 256)} if tensors is None else tensors
    head = gguf_header(len(tensors), len(metadata))
    for key, value in metadata.items():
        head += gguf_string(key.encode()) + gguf_value(value)
    offset = 0
    for name, dims in tensors.items():
        head += gguf_string(name.encode()) + struct.pack(
            f"<I{len(dims)}QIQ", len(dims), *dims, 0, offset
        )
        offset += -(-int(np.prod(dims)) * 4 // 32) * 32
    head += bytes(-len(head) % 32)
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(len(head) + offset)


def llama_metadata(
    **values: int | str | list[int] | None,
) -> dict[str, int | str | list[int]]:
    """A small llama shape's GGUF keys (hidden 64, 4 heads, 2 KV heads), some replaced.

    ``values`` names keys without the ``llama.`` prefix and with ``_`` for ``.``
    (``attention_head_count=0``); a value of None removes the key.
    """
    metadata: dict[str, int | str | list[int]] = {
        "general.architecture": "llama",
        "llama.block_count": 2,
        "llama.embedding_length": 64,
        "llama.feed_forward_length": 128,
        "llama.attention.head_count": 4,
        "llama.attention.head_count_kv": 2,
        "llama.context_length": 512,
    }
    for name, value in values.items():
        key = "llama." + name.replace("attention_", "attention.").replace("rope_", "rope.")
        if value is None:
            metadata.pop(key, None)
        else:
            metadata[key] = value
    return metadata
