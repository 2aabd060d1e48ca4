"""The real model file: a GGUF file or a safetensors folder, read header only.

Weights are never loaded. What is read:

- **GGUF** (llama.cpp): the fixed header, every metadata key (values kept only when
  small: numbers, short strings, short arrays), and every tensor's name, dimensions,
  GGML type and data offset. A tensor's bytes are exact: elements / block size x block
  bytes, from the ``gguf`` package's ``GGML_QUANT_SIZES`` (the llama.cpp project's own
  table), so the weights come from the file, not from a quant name. The ``gguf``
  package's own ``GGUFReader`` is not used to parse: it keeps a NumPy view of every
  element of every array (a 100 MB hostile header of one-byte arrays would be ~10 GB of
  Python objects), while this reader skips arrays it does not need and bounds every
  count by the bytes left in the file.
- **safetensors**: the 8-byte header length and the JSON header of every
  ``*.safetensors`` file in the folder (dtype, shape and byte range of each tensor),
  plus the folder's ``config.json`` for the architecture.

A file that is not what it claims (wrong magic, truncated, counts larger than the file
could hold, a tensor beyond the end of the file, huge strings, unknown types) raises
:class:`ModelFileError` naming the file and what was wrong.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import stat
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict

from gpudesk.planning.architecture import (
    ConfigFileError,
    ModelShape,
    ShapeError,
    load_hf_config,
    make_shape,
)
from gpudesk.planning.errors import PlanningInputError
from gpudesk.planning.quant import QuantFormat

#: GGUF versions this reader knows (llama.cpp writes 3; 2 differs only in nothing we read)
GGUF_VERSIONS = (2, 3)
GGUF_MAGIC = b"GGUF"
#: more tensors than any published model has (DeepSeek-V3: ~1,800; unfused MoE ~100k)
MAX_TENSORS = 1_000_000
MAX_KEYS = 100_000
#: a key or tensor name longer than this is not a real one (llama.cpp caps names at 64)
MAX_NAME_BYTES = 65_536
#: a string value longer than this is skipped, not kept (chat templates are ~10 KB)
KEEP_STRING_BYTES = 4_096
#: arrays up to this length are kept (per-layer head counts); longer ones skipped
KEEP_ARRAY_LENGTH = 4_096
#: the longest array accepted at all (vocabularies are ~262k tokens, merges ~500k)
MAX_ARRAY_LENGTH = 16_777_216
#: GGML_MAX_DIMS
MAX_DIMS = 4
MAX_ELEMENTS = 2**50
#: safetensors: the header of one shard (DeepSeek-V3's largest is a few MB)
MAX_SAFETENSORS_HEADER = 32 * 1024 * 1024
MAX_SHARDS = 4_096

_SCALARS: dict[int, str] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9

#: safetensors dtypes and their bytes per element (safetensors' Dtype enum)
SAFETENSORS_DTYPES: dict[str, float] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
    "F4": 0.5,
}  # fmt: skip

#: llama.cpp file types (general.file_type) that name one of our weight formats
_FILE_TYPE_QUANT = {
    0: QuantFormat.FP32,
    1: QuantFormat.FP16,
    2: QuantFormat.Q4_0,
    7: QuantFormat.Q8_0,
    15: QuantFormat.Q4_K_M,
    17: QuantFormat.Q5_K_M,
    18: QuantFormat.Q6_K,
    32: QuantFormat.BF16,
    38: QuantFormat.MXFP4,
}
_SAFETENSORS_QUANT = {"F32": QuantFormat.FP32, "F16": QuantFormat.FP16, "BF16": QuantFormat.BF16}


class ModelFileError(PlanningInputError):
    """A model file (or folder) that cannot be read as what it claims to be."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class FileTensor(BaseModel):
    """One tensor as the file stores it: ``shape`` in the file's own order."""

    model_config = ConfigDict(frozen=True)

    name: str
    dtype: str
    shape: tuple[int, ...]
    elements: int
    nbytes: int


class ModelFile(BaseModel):
    """What a model file says about itself; byte counts are exact, from its tensors."""

    model_config = ConfigDict(frozen=True)

    path: str
    format: str  # "gguf" or "safetensors"
    architecture: str | None
    name: str | None
    file_bytes: int
    #: llama.cpp's general.file_type name (MOSTLY_Q4_K_M), or the dominant dtype
    file_type: str | None
    #: the weight format this is, when it is one GPUDesk models (else None)
    quant: QuantFormat | None
    shape: ModelShape | None
    #: why there is no shape, when there is none
    shape_problem: str | None = None
    context: int | None
    tensors: tuple[FileTensor, ...]
    tensor_bytes: int
    params: int
    #: the input embedding table's bytes (one row per token is read)
    embedding_bytes: int
    #: the output head's bytes (0 when tied to the embedding)
    lm_head_bytes: int
    #: routed-expert tensors' bytes (mixture of experts), all experts
    expert_bytes: int
    #: bytes a decoded token reads once: all but the input embedding, and of routed
    #: experts only the active share
    streamed_per_token_bytes: int
    bytes_by_type: dict[str, int]
    #: a GGUF's tokenizer.ggml.model key is there (llama.cpp loads no file without
    #: one); None for safetensors
    has_tokenizer: bool | None = None

    def summary(self) -> str:
        kind = self.file_type or "mixed types"
        what = self.architecture or "unknown architecture"
        return (
            f"{self.format.upper()} {what}, {kind}: {len(self.tensors):,} tensors, "
            f"{self.params:,} parameters, {self.tensor_bytes:,} bytes of weights"
        )


# -- GGUF ------------------------------------------------------------------------------


class _Reader:
    """Bounded sequential reads from a file; every short read is a ModelFileError."""

    def __init__(self, handle: IO[bytes], path: Path, size: int) -> None:
        self.handle = handle
        self.path = path
        self.size = size
        self.offset = 0

    def left(self) -> int:
        return self.size - self.offset

    def read(self, count: int, what: str) -> bytes:
        if count > self.left():
            raise ModelFileError(
                self.path, f"ends inside the header ({what} at byte {self.offset:,})"
            )
        data = self.handle.read(count)
        if len(data) != count:
            raise ModelFileError(
                self.path, f"ends inside the header ({what} at byte {self.offset:,})"
            )
        self.offset += count
        return data

    def skip(self, count: int, what: str) -> None:
        if count > self.left():
            raise ModelFileError(
                self.path,
                f"ends inside the header ({what} of {count:,} bytes at byte {self.offset:,})",
            )
        self.handle.seek(count, os.SEEK_CUR)
        self.offset += count

    def unpack(self, fmt: str, what: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt), what))[0]

    def string(self, what: str, limit: int) -> str | None:
        """A GGUF string; None (skipped) when longer than ``limit`` but within the file."""
        length = self.unpack("<Q", f"{what} length")
        if length > self.left():
            raise ModelFileError(
                self.path,
                f"{what} claims {length:,} bytes at byte {self.offset:,}, past the end",
            )
        if length > limit:
            self.skip(length, what)
            return None
        raw = self.read(length, what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ModelFileError(
                self.path, f"{what} at byte {self.offset:,} is not UTF-8"
            ) from None


def _open_regular(path: Path) -> tuple[IO[bytes], int]:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ModelFileError(path, f"cannot be read ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise ModelFileError(path, f"cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ModelFileError(path, "is not a regular file")
    return os.fdopen(fd, "rb", buffering=1 << 16), info.st_size


def _value(reader: _Reader, kind: int, key: str, depth: int = 0) -> Any:
    """One metadata value; long strings and long arrays come back as None (skipped)."""
    if kind in _SCALARS:
        return reader.unpack(_SCALARS[kind], f"value of {key!r}")
    if kind == _STRING:
        return reader.string(f"value of {key!r}", KEEP_STRING_BYTES)
    if kind != _ARRAY:
        raise ModelFileError(reader.path, f"key {key!r} has unknown value type {kind}")
    if depth > 0:
        raise ModelFileError(reader.path, f"key {key!r} nests arrays in arrays")
    item = reader.unpack("<I", f"array type of {key!r}")
    length = reader.unpack("<Q", f"array length of {key!r}")
    if length > MAX_ARRAY_LENGTH or length > reader.left():
        raise ModelFileError(
            reader.path, f"key {key!r} claims an array of {length:,} items, more than it can hold"
        )
    if item in _SCALARS:
        width = struct.calcsize(_SCALARS[item])
        if length > KEEP_ARRAY_LENGTH:
            reader.skip(length * width, f"array {key!r}")
            return None
        raw = reader.read(length * width, f"array {key!r}")
        return list(struct.unpack(f"<{length}{_SCALARS[item][1]}", raw))
    if item == _STRING:
        keep = length <= KEEP_ARRAY_LENGTH
        values = []
        for _ in range(length):
            text = reader.string(f"string in array {key!r}", KEEP_STRING_BYTES if keep else 0)
            if keep:
                values.append(text)
        return values if keep else None
    if item == _ARRAY:
        raise ModelFileError(reader.path, f"key {key!r} nests arrays in arrays")
    raise ModelFileError(reader.path, f"key {key!r} is an array of unknown type {item}")


def read_gguf(path: Path | str) -> ModelFile:
    """Read a GGUF file's header: metadata, every tensor's type and exact byte size.

    Raises:
        ModelFileError: not a GGUF file, truncated, or a header the file cannot hold.
    """
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType, LlamaFileType

    target = Path(path)
    handle, size = _open_regular(target)
    with handle:
        reader = _Reader(handle, target, size)
        if reader.left() < 4 or reader.read(4, "magic") != GGUF_MAGIC:
            raise ModelFileError(target, "is not a GGUF file (it does not start with 'GGUF')")
        version = reader.unpack("<I", "version")
        if version & 0xFFFF == 0 and version:
            raise ModelFileError(target, "is a big-endian GGUF file, which is not supported")
        if version not in GGUF_VERSIONS:
            raise ModelFileError(target, f"is GGUF version {version}; this reader knows 2 and 3")
        tensor_count = reader.unpack("<Q", "tensor count")
        key_count = reader.unpack("<Q", "key count")
        # the smallest key is 8 + 0 + 4 + 1 bytes, the smallest tensor info 8 + 4 + 4 + 8
        if key_count > MAX_KEYS or key_count * 13 > reader.left():
            raise ModelFileError(
                target, f"claims {key_count:,} metadata keys, more than the file can hold"
            )
        if tensor_count > MAX_TENSORS or tensor_count * 24 > reader.left():
            raise ModelFileError(
                target, f"claims {tensor_count:,} tensors, more than the file can hold"
            )
        metadata: dict[str, Any] = {}
        for index in range(key_count):
            key = reader.string(f"key #{index + 1}", MAX_NAME_BYTES)
            if key is None:
                raise ModelFileError(target, f"key #{index + 1} is longer than {MAX_NAME_BYTES:,}")
            if key in metadata:
                raise ModelFileError(target, f"key {key!r} appears twice")
            kind = reader.unpack("<I", f"type of {key!r}")
            metadata[key] = _value(reader, kind, key)
        raw_tensors: list[tuple[str, int, tuple[int, ...], int]] = []
        names: set[str] = set()
        for index in range(tensor_count):
            name = reader.string(f"tensor name #{index + 1}", MAX_NAME_BYTES)
            if name is None:
                raise ModelFileError(target, f"tensor name #{index + 1} is too long")
            if name in names:
                raise ModelFileError(target, f"tensor {name!r} appears twice")
            names.add(name)
            n_dims = reader.unpack("<I", f"dimensions of {name!r}")
            if not 1 <= n_dims <= MAX_DIMS:
                raise ModelFileError(target, f"tensor {name!r} has {n_dims} dimensions (1-4)")
            dims = tuple(reader.unpack("<Q", f"dimension of {name!r}") for _ in range(n_dims))
            kind = reader.unpack("<I", f"type of {name!r}")
            offset = reader.unpack("<Q", f"offset of {name!r}")
            raw_tensors.append((name, kind, dims, offset))
        alignment = metadata.get("general.alignment", 32)
        if (
            not isinstance(alignment, int)
            or isinstance(alignment, bool)
            or alignment <= 0
            or alignment & (alignment - 1)
        ):
            raise ModelFileError(target, f"general.alignment {alignment!r} is not a power of two")
        data_start = reader.offset + (-reader.offset % alignment)
    data_bytes = size - data_start
    tensors: list[FileTensor] = []
    spans: list[tuple[int, int, str]] = []
    for name, kind, dims, offset in raw_tensors:
        try:
            ggml_type = GGMLQuantizationType(kind)
            block, block_bytes = GGML_QUANT_SIZES[ggml_type]
        except (ValueError, KeyError):
            raise ModelFileError(target, f"tensor {name!r} has unknown GGML type {kind}") from None
        if any(dim < 1 for dim in dims):
            raise ModelFileError(target, f"tensor {name!r} has an empty dimension {list(dims)}")
        elements = math.prod(dims)
        if elements > MAX_ELEMENTS:
            raise ModelFileError(target, f"tensor {name!r} claims {elements:,} elements")
        if dims[0] % block:
            raise ModelFileError(
                target,
                f"tensor {name!r}: rows of {dims[0]} are not whole {ggml_type.name} blocks "
                f"of {block}",
            )
        nbytes = elements // block * block_bytes
        if offset % alignment:
            raise ModelFileError(target, f"tensor {name!r} is not aligned to {alignment} bytes")
        if offset + nbytes > data_bytes:
            raise ModelFileError(
                target,
                f"is truncated: tensor {name!r} ends at byte {data_start + offset + nbytes:,}, "
                f"the file has {size:,}",
            )
        spans.append((offset, offset + nbytes, name))
        tensors.append(
            FileTensor(
                name=name, dtype=ggml_type.name, shape=dims, elements=elements, nbytes=nbytes
            )
        )
    spans.sort()
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:
            raise ModelFileError(target, f"tensors {first!r} and {second!r} overlap")
    file_type_id = metadata.get("general.file_type")
    file_type: str | None = None
    quant: QuantFormat | None = None
    if isinstance(file_type_id, int) and not isinstance(file_type_id, bool):
        try:
            file_type = LlamaFileType(file_type_id).name
        except ValueError:
            file_type = f"file type {file_type_id}"
        quant = _FILE_TYPE_QUANT.get(file_type_id)
    arch = metadata.get("general.architecture")
    arch = arch if isinstance(arch, str) else None
    shape, problem = _gguf_shape(metadata, arch, tensors)
    read = _model_file(
        target,
        "gguf",
        arch,
        metadata.get("general.name") if isinstance(metadata.get("general.name"), str) else None,
        size,
        file_type or _dominant(tensors),
        quant,
        shape,
        problem,
        tensors,
        embedding=lambda n: n == "token_embd.weight",
        head=lambda n: n == "output.weight",
        expert=lambda n: "_exps." in n,
    )
    return read.model_copy(update={"has_tokenizer": "tokenizer.ggml.model" in metadata})


def _dominant(tensors: list[FileTensor]) -> str | None:
    totals: dict[str, int] = {}
    for tensor in tensors:
        totals[tensor.dtype] = totals.get(tensor.dtype, 0) + tensor.nbytes
    return max(totals, key=lambda key: totals[key]) if totals else None


def _number(metadata: Mapping[str, Any], key: str) -> int | None:
    """An integer key; a per-layer array gives its largest value."""
    value = metadata.get(key)
    if isinstance(value, list):
        numbers = [item for item in value if isinstance(item, int) and not isinstance(item, bool)]
        return max(numbers) if numbers and len(numbers) == len(value) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _gguf_shape(
    metadata: Mapping[str, Any], arch: str | None, tensors: list[FileTensor]
) -> tuple[ModelShape | None, str | None]:
    if arch is None:
        return None, "general.architecture is missing"
    by_name = {tensor.name: tensor for tensor in tensors}
    embedding = by_name.get("token_embd.weight")

    def key(name: str) -> int | None:
        return _number(metadata, f"{arch}.{name}")

    fields: dict[str, Any] = {
        "layers": key("block_count"),
        "hidden": key("embedding_length"),
        "heads": key("attention.head_count"),
        "context": key("context_length"),
        "intermediate": key("feed_forward_length"),
    }
    missing = [f"{arch}.{k}" for k, v in zip(
        ("block_count", "embedding_length", "attention.head_count", "context_length"),
        (fields["layers"], fields["hidden"], fields["heads"], fields["context"]),
        strict=True,
    ) if v is None]  # fmt: skip
    if missing:
        return None, f"{', '.join(missing)} missing"
    fields["kv_heads"] = key("attention.head_count_kv") or fields["heads"]
    fields["head_dim"] = key("attention.key_length") or fields["hidden"] // fields["heads"]
    vocab = key("vocab_size")
    tokens = metadata.get("tokenizer.ggml.tokens")
    if vocab is None and embedding is not None and len(embedding.shape) == 2:
        vocab = embedding.shape[1]
    if vocab is None and isinstance(tokens, list):
        vocab = len(tokens)
    fields["vocab"] = vocab
    fields["tied_embeddings"] = "output.weight" not in by_name
    fields["gated_mlp"] = any(name.startswith("blk.") and ".ffn_gate" in name for name in by_name)
    fields["attention_bias"] = "blk.0.attn_q.bias" in by_name
    experts = key("expert_count")
    if experts:
        fields["experts"] = experts
        fields["active_experts"] = key("expert_used_count") or 1
        fields["shared_experts"] = key("expert_shared_count") or 0
        fields["dense_layers"] = key("leading_dense_block_count") or 0
        fields["expert_intermediate"] = key("expert_feed_forward_length")
        if fields["intermediate"] is None:
            fields["intermediate"] = fields["expert_intermediate"]
    window = key("attention.sliding_window")
    if window:
        fields["sliding_window"] = window
    kv_lora = key("attention.kv_lora_rank")
    if kv_lora:
        rope = key("rope.dimension_count")
        value_dim = key("attention.value_length")
        if rope and value_dim and fields["head_dim"] > rope:
            fields.update(
                kv_lora_rank=kv_lora,
                q_lora_rank=key("attention.q_lora_rank"),
                qk_rope_head_dim=rope,
                qk_nope_head_dim=fields["head_dim"] - rope,
                v_head_dim=value_dim,
            )
    if fields["intermediate"] is None:
        return None, f"{arch}.feed_forward_length missing"
    if fields["vocab"] is None:
        return None, "no vocabulary size (no token_embd.weight, no tokenizer tokens)"
    try:
        shape = make_shape({k: v for k, v in fields.items() if v is not None})
    except ShapeError as exc:
        return None, f"its shape cannot be: {exc}"
    return shape, None


def _model_file(
    path: Path,
    fmt: str,
    arch: str | None,
    name: str | None,
    size: int,
    file_type: str | None,
    quant: QuantFormat | None,
    shape: ModelShape | None,
    problem: str | None,
    tensors: list[FileTensor],
    *,
    embedding: Any,
    head: Any,
    expert: Any,
) -> ModelFile:
    total = sum(tensor.nbytes for tensor in tensors)
    embed = sum(tensor.nbytes for tensor in tensors if embedding(tensor.name))
    lm_head = sum(tensor.nbytes for tensor in tensors if head(tensor.name))
    experts = sum(tensor.nbytes for tensor in tensors if expert(tensor.name))
    share = 1.0
    if shape is not None and shape.experts and shape.active_experts:
        share = shape.active_experts / shape.experts
    streamed = total - embed - experts + round(experts * share)
    if shape is not None and shape.tied_embeddings:
        streamed += embed  # the tied table is the output head too: read whole per token
    by_type: dict[str, int] = {}
    for tensor in tensors:
        by_type[tensor.dtype] = by_type.get(tensor.dtype, 0) + tensor.nbytes
    return ModelFile(
        path=str(path),
        format=fmt,
        architecture=arch,
        name=name,
        file_bytes=size,
        file_type=file_type,
        quant=quant,
        shape=shape,
        shape_problem=problem,
        context=shape.context if shape is not None else None,
        tensors=tuple(tensors),
        tensor_bytes=total,
        params=sum(tensor.elements for tensor in tensors),
        embedding_bytes=embed,
        lm_head_bytes=lm_head,
        expert_bytes=experts,
        streamed_per_token_bytes=streamed,
        bytes_by_type=by_type,
    )


# -- safetensors -----------------------------------------------------------------------


def _safetensors_header(path: Path) -> tuple[dict[str, Any], int, int]:
    handle, size = _open_regular(path)
    with handle:
        head = handle.read(8)
        if len(head) != 8:
            raise ModelFileError(path, "is not a safetensors file (shorter than 8 bytes)")
        length = struct.unpack("<Q", head)[0]
        if length > MAX_SAFETENSORS_HEADER:
            raise ModelFileError(
                path,
                f"claims a {length:,}-byte header, more than {MAX_SAFETENSORS_HEADER:,}; "
                "not a safetensors file",
            )
        if length + 8 > size:
            raise ModelFileError(
                path, f"is truncated: a {length:,}-byte header in a {size:,}-byte file"
            )
        raw = handle.read(length)
    if len(raw) != length:
        raise ModelFileError(path, "is truncated inside its header")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise ValueError(f"key {key!r} appears twice")
            result[key] = value
        return result

    try:
        document = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates)
    except UnicodeDecodeError:
        raise ModelFileError(path, "its header is not UTF-8 text") from None
    except RecursionError:
        raise ModelFileError(path, "its header nests too deep") from None
    except ValueError as exc:
        raise ModelFileError(path, f"its header is not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise ModelFileError(path, "its header is not a JSON object")
    return document, 8 + length, size


def _safetensors_tensors(path: Path) -> tuple[list[FileTensor], int]:
    document, data_start, size = _safetensors_header(path)
    data_bytes = size - data_start
    tensors: list[FileTensor] = []
    spans: list[tuple[int, int, str]] = []
    for name, info in document.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise ModelFileError(path, f"tensor {name[:80]!r} is not an object")
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not isinstance(dtype, str) or dtype not in SAFETENSORS_DTYPES:
            raise ModelFileError(path, f"tensor {name[:80]!r} has unknown dtype {dtype!r:.40}")
        if (
            not isinstance(shape, list)
            or len(shape) > 8
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
        ):
            raise ModelFileError(path, f"tensor {name[:80]!r} has no valid shape")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)
        ):
            raise ModelFileError(path, f"tensor {name[:80]!r} has no valid data_offsets")
        elements = math.prod(shape)
        if elements > MAX_ELEMENTS:
            raise ModelFileError(path, f"tensor {name[:80]!r} claims {elements:,} elements")
        nbytes = elements * SAFETENSORS_DTYPES[dtype]
        begin, end = offsets
        if end - begin != nbytes:
            raise ModelFileError(
                path,
                f"tensor {name[:80]!r}: {dtype} {shape} is {nbytes:,.0f} bytes, its data_offsets "
                f"span {end - begin:,}",
            )
        if end > data_bytes:
            raise ModelFileError(
                path, f"is truncated: tensor {name[:80]!r} ends past the end of the file"
            )
        spans.append((begin, end, name))
        tensors.append(
            FileTensor(
                name=name, dtype=dtype, shape=tuple(shape), elements=elements, nbytes=int(nbytes)
            )
        )
    spans.sort()
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:
            raise ModelFileError(path, f"tensors {first[:80]!r} and {second[:80]!r} overlap")
    return tensors, size


def read_safetensors(folder: Path | str) -> ModelFile:
    """Read every ``*.safetensors`` header in ``folder`` and its ``config.json``.

    Raises:
        ModelFileError: no such folder, no safetensors file, a header that is not one,
            a tensor in two shards, or a config.json that cannot be used.
    """
    root = Path(folder)
    if root.is_file() and root.suffix == ".safetensors":
        files, root = [root], root.parent
    elif root.is_dir():
        try:
            files = sorted(root.glob("*.safetensors"))
        except OSError as exc:
            raise ModelFileError(root, f"cannot be listed ({exc.strerror})") from None
    else:
        raise ModelFileError(root, "is not a folder or a .safetensors file")
    if not files:
        raise ModelFileError(root, "holds no .safetensors file")
    if len(files) > MAX_SHARDS:
        raise ModelFileError(
            root, f"holds {len(files):,} .safetensors files, more than {MAX_SHARDS:,}"
        )
    tensors: list[FileTensor] = []
    seen: set[str] = set()
    size = 0
    for file in files:
        found, file_size = _safetensors_tensors(file)
        size += file_size
        for tensor in found:
            if tensor.name in seen:
                raise ModelFileError(file, f"tensor {tensor.name[:80]!r} is in two shards")
            seen.add(tensor.name)
        tensors.extend(found)
    shape: ModelShape | None = None
    problem: str | None = None
    arch: str | None = None
    config = root / "config.json"
    if config.is_file():
        try:
            shape = load_hf_config(config)
        except (ConfigFileError, ShapeError) as exc:
            raise ModelFileError(config, str(getattr(exc, "reason", exc))) from None
        arch = _config_model_type(config)
    else:
        problem = f"no config.json beside the safetensors files in {root}"
    dominant = _dominant(tensors)
    return _model_file(
        root,
        "safetensors",
        arch,
        root.name or None,
        size,
        dominant,
        _SAFETENSORS_QUANT.get(dominant or "")
        if shape is None or shape.checkpoint_quant is None
        else None,
        shape,
        problem,
        tensors,
        embedding=lambda n: n.endswith("embed_tokens.weight") or n.endswith("wte.weight"),
        head=lambda n: n.endswith("lm_head.weight"),
        expert=lambda n: ".experts." in n,
    )


def _config_model_type(config: Path) -> str | None:
    try:
        document = json.loads(config.read_bytes()[:1_000_000])
    except (OSError, ValueError):
        return None
    value = document.get("model_type") if isinstance(document, dict) else None
    return value if isinstance(value, str) else None


# -- using the file's bytes ------------------------------------------------------------


def with_file_weights(estimate: Any, model_file: ModelFile) -> Any:
    """``estimate`` (a MemoryEstimate) with its weights part the file's exact bytes.

    Inference only (a GGUF or safetensors file is served, not trained here): the
    weights become the file's tensor bytes, less the input embedding table where
    llama.cpp keeps it in host memory, divided by the tensor-parallel degree. The other
    parts are the estimate's own.
    """
    from gpudesk.planning.memory import Engine, MemoryPart, PartKey, Workload

    spec = estimate.spec
    if spec.workload is not Workload.INFERENCE:
        return estimate
    host = 0
    formula = f"{model_file.tensor_bytes:,} bytes of tensors in {model_file.path} (exact)"
    if spec.engine is Engine.LLAMA_CPP and model_file.lm_head_bytes:
        host = model_file.embedding_bytes
        formula += (
            f"; the {host / 1e9:.3f} GB input embedding table stays in host memory (llama.cpp)"
        )
    total = (model_file.tensor_bytes - host) / spec.tensor_parallel
    if spec.tensor_parallel > 1:
        formula += f" / {spec.tensor_parallel} (tensor parallel)"
    part = MemoryPart(
        key=PartKey.WEIGHTS,
        gb=total / 1e9,
        formula=f"{formula} = {total / 1e9:.2f} GB",
        source=f"the file's header: every tensor's GGML/safetensors type and shape "
        f"({model_file.format})",
        host_gb=host / 1e9,
    )
    parts = tuple(part if item.key is PartKey.WEIGHTS else item for item in estimate.parts)
    streamed = estimate.decode_bytes_per_token
    if streamed is not None and estimate.weights is not None:
        kv_and_rest = streamed - estimate.weights.streamed_per_token_bytes * (
            estimate.model.params / estimate.weights.params
        )
        streamed = model_file.streamed_per_token_bytes + max(0.0, kv_and_rest)
    return estimate.model_copy(update={"parts": parts, "decode_bytes_per_token": streamed})
