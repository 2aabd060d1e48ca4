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

The work is bounded, not only the bytes: every count is refused before the items it
counts are read, at caps well above any published model (any GGUF array: 1,000,000 items,
:data:`MAX_ARRAY_LENGTH`, where the largest vocabularies are ~262k tokens and merges
~515k; strings in arrays: 2,000,000 and 64 MiB per header; 16,384 keys; 100,000 tensors;
safetensors: a 16 MiB header per shard, 64 MiB, 300,000 tensor entries and 2,000,000
JSON values over all shards, 4,096 shards), so any crafted header is refused or read
within about a second. A shape that cannot be (0 or negative heads or widths, KV heads
that do not divide the heads, a width the heads do not divide) is refused before any
arithmetic, naming the key and its value.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import math
import os
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict

from gpudesk.storage import open_regular_file, read_refusal, read_regular_file
from gpudesk.workload.architecture import (
    MAX_CONFIG_BYTES,
    ConfigFileError,
    ModelShape,
    ShapeError,
    load_hf_config,
    make_shape,
)
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.quant import QuantFormat

#: GGUF versions this reader knows (llama.cpp writes 3; 2 differs only in nothing we read)
GGUF_VERSIONS = (2, 3)
GGUF_MAGIC = b"GGUF"
# Every cap below bounds the reader's work, not only its memory: each is checked on a
# count before the items it counts are read, so a crafted header of any shape is refused
# or read within a couple of seconds (tests/planning/test_modelfile_bounds.py times them).
#: more tensors than any published GGUF has (DeepSeek-V3: 1,025 with fused experts; an
#: unfused mixture of experts a few tens of thousands)
MAX_TENSORS = 100_000
#: real GGUF files have ~30-60 metadata keys
MAX_KEYS = 16_384
#: a key or tensor name longer than this is not a real one (llama.cpp caps tensor names
#: at 64 bytes, GGML_MAX_NAME)
MAX_NAME_BYTES = 256
#: a string value longer than this is skipped, not kept (chat templates are ~10 KB)
KEEP_STRING_BYTES = 4_096
#: arrays of numbers up to this length are kept (per-layer head counts); longer skipped
KEEP_ARRAY_LENGTH = 4_096
#: the longest array accepted at all: the largest vocabularies are ~262k tokens
#: (Gemma 3: 262,144), merges ~515k (Gemma 3's GGUF), so no real array comes near
MAX_ARRAY_LENGTH = 1_000_000
#: strings in arrays are walked one by one (their lengths vary), so a header holds at
#: most this many of them in all (Gemma 3's tokens and merges: ~777k) ...
MAX_ARRAY_STRINGS = 2_000_000
#: ... and at most this many bytes of them (real tokenizers: ~10 MB)
MAX_ARRAY_STRING_BYTES = 64 * 1024 * 1024
#: bytes of small values kept in memory (short strings; numbers in short arrays at 8
#: bytes each); real headers keep a few KB
MAX_KEPT_BYTES = 4 * 1024 * 1024
#: GGML_MAX_DIMS
MAX_DIMS = 4
MAX_ELEMENTS = 2**50
#: safetensors: the header of one shard (DeepSeek-V3's are ~100 KB; the format's own
#: reader allows 100 MB, but parsing that much JSON takes seconds)
MAX_SAFETENSORS_HEADER = 16 * 1024 * 1024
#: safetensors: the headers of all shards together (Kimi K2's ~210k tensor entries are
#: ~27 MB of JSON)
MAX_SAFETENSORS_HEADERS_TOTAL = 64 * 1024 * 1024
#: safetensors: tensor entries in all shards together (Kimi K2 INT4: ~210k); counted as
#: the JSON objects in each header before it is parsed (each entry is one)
MAX_SAFETENSORS_TENSORS = 300_000
#: safetensors: JSON values in all headers together, counted as commas before parsing
#: (parsing costs per value; a real entry has 5, Kimi K2's headers ~1.1M in all)
MAX_SAFETENSORS_JSON_VALUES = 2_000_000
MAX_SHARDS = 4_096
#: Model files are read by seeking, never whole: their size alone is no reason to refuse.
_NO_SIZE_LIMIT = 2**62

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


@dataclass(frozen=True, slots=True)
class FileTensor:
    """One tensor as the file stores it: ``shape`` in the file's own order.

    A plain dataclass, not a pydantic model: a header holds up to :data:`MAX_TENSORS`
    of them, already checked field by field, and pydantic's construction costs ~5 us
    each (a 100k-tensor header: 0.5 s more).
    """

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


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a header is read.

    A header builds up to ~10^6 small objects, none in a cycle, and the collector's
    repeated passes over them cost more than the reading (Kimi K2's 210k safetensors
    entries: 1.8 s of CPU with it, 0.8 s without).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# -- GGUF ------------------------------------------------------------------------------


_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_STRUCTS = {kind: struct.Struct(fmt) for kind, fmt in _SCALARS.items()}
_DIMS = {count: struct.Struct(f"<{count}Q") for count in range(1, MAX_DIMS + 1)}
_TYPE_OFFSET = struct.Struct("<IQ")
#: bytes read at a time when reading on: 64 KiB ...
_WINDOW = 64 * 1024
#: ... and after a seek, 4 KiB, doubling back to 64 KiB: a header of 16,384 skipped
#: 1 MiB strings costs a seek and one page each (0.3 s), not 64 KiB each (2.6 s of CPU
#: on a sparse file, whose holes the kernel fills with zeros page by page)
_FIRST_WINDOW = 4 * 1024


class _Reader:
    """Bounded sequential reads through a small window; a short read is a ModelFileError.

    Every read is checked against the bytes left in the file before it is made, and the
    header's totals (strings walked in arrays, bytes kept) against their caps.
    """

    def __init__(self, handle: IO[bytes], path: Path, size: int) -> None:
        self.handle = handle
        self.path = path
        self.size = size
        #: file offset of the next byte
        self.offset = 0
        self._window = b""
        self._pos = 0  # where ``offset`` is in ``_window``
        self._chunk = _FIRST_WINDOW  # the next read's size
        self.array_strings = 0
        self.array_string_bytes = 0
        self.kept_bytes = 0

    def left(self) -> int:
        return self.size - self.offset

    def _ends(self, what: str) -> ModelFileError:
        return ModelFileError(self.path, f"ends inside the header ({what} at byte {self.offset:,})")

    def _have(self, count: int, what: str) -> None:
        """Make the next ``count`` bytes (within the file) available in the window."""
        if count > self.left():
            raise self._ends(what)
        held = len(self._window) - self._pos
        if held >= count:
            return
        parts = [self._window[self._pos :]]
        wanted = max(self._chunk, count - held)
        self._chunk = min(2 * self._chunk, _WINDOW)
        while wanted > 0:  # an unbuffered read may return less than asked
            more = self.handle.read(wanted)
            if not more:
                break
            parts.append(more)
            wanted -= len(more)
        self._window = b"".join(parts)
        self._pos = 0
        if len(self._window) < count:  # the file shrank while it was read
            raise self._ends(what)

    def read(self, count: int, what: str) -> bytes:
        self._have(count, what)
        data = self._window[self._pos : self._pos + count]
        self._pos += count
        self.offset += count
        return data

    def skip(self, count: int, what: str) -> None:
        if count > self.left():
            raise ModelFileError(
                self.path,
                f"ends inside the header ({what} of {count:,} bytes at byte {self.offset:,})",
            )
        self.offset += count
        if count <= len(self._window) - self._pos:
            self._pos += count
            return
        self.handle.seek(self.offset)
        self._window, self._pos, self._chunk = b"", 0, _FIRST_WINDOW

    def unpack(self, layout: struct.Struct, what: str) -> Any:
        """The one value ``layout`` holds."""
        self._have(layout.size, what)
        value = layout.unpack_from(self._window, self._pos)[0]
        self._pos += layout.size
        self.offset += layout.size
        return value

    def values(self, layout: struct.Struct, what: str) -> tuple[Any, ...]:
        """Every value ``layout`` holds."""
        self._have(layout.size, what)
        found = layout.unpack_from(self._window, self._pos)
        self._pos += layout.size
        self.offset += layout.size
        return found

    def keep(self, count: int, what: str) -> None:
        """Count ``count`` more bytes kept in memory against :data:`MAX_KEPT_BYTES`."""
        self.kept_bytes += count
        if self.kept_bytes > MAX_KEPT_BYTES:
            raise ModelFileError(
                self.path,
                f"keeps more than {MAX_KEPT_BYTES:,} bytes of short values (at {what}); "
                "no model's header needs that many",
            )

    def string(self, what: str, limit: int) -> str | None:
        """A GGUF string; None (skipped) when longer than ``limit`` but within the file."""
        length = self.unpack(_U64, f"{what} length")
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

    def skip_strings(self, count: int, what: str) -> None:
        """Walk past ``count`` strings of an array, within the header's string caps.

        Their lengths differ, so each is looked at; the walk runs over the window's bytes
        (no call per string) and is bounded by :data:`MAX_ARRAY_STRINGS` and
        :data:`MAX_ARRAY_STRING_BYTES`, checked before each step.
        """
        self.array_strings += count
        if self.array_strings > MAX_ARRAY_STRINGS:
            raise ModelFileError(
                self.path,
                f"{what} takes the header past {MAX_ARRAY_STRINGS:,} strings in arrays; "
                "no model's header holds that many",
            )
        budget = MAX_ARRAY_STRING_BYTES - self.array_string_bytes
        unpack_from = _U64.unpack_from
        while count:
            self._have(8, f"string length in {what}")
            window, pos = self._window, self._pos
            end = len(window)
            start = pos
            while count and pos + 8 <= end:
                length = unpack_from(window, pos)[0]
                after = pos + 8 + length
                if after > end or length > budget:
                    break
                budget -= length
                pos = after
                count -= 1
            self._pos = pos
            self.offset += pos - start
            if count and pos + 8 <= end:
                # the next string runs past the window (or past the budget): the budget
                # bounds what is read, so it is read, not seeked over
                length = unpack_from(window, pos)[0]
                if length > budget:
                    raise ModelFileError(
                        self.path,
                        f"{what} takes the header past {MAX_ARRAY_STRING_BYTES:,} bytes of "
                        "strings in arrays; no model's header holds that many",
                    )
                if 8 + length > self.left():
                    raise ModelFileError(
                        self.path,
                        f"a string in {what} claims {length:,} bytes at byte "
                        f"{self.offset:,}, past the end",
                    )
                self.skip(8 + length, what)
                budget -= length
                count -= 1
        self.array_string_bytes = MAX_ARRAY_STRING_BYTES - budget


def _open_regular(path: Path, buffering: int = 1 << 16) -> tuple[IO[bytes], int]:
    """``path`` opened for reading, and its size; a regular file only (the shared
    guarded reader: never blocks on a FIFO, names what the path is instead)."""
    try:
        handle = open_regular_file(path, _NO_SIZE_LIMIT, buffering)
    except OSError as exc:
        raise ModelFileError(path, read_refusal(exc)) from None
    try:
        size = os.fstat(handle.fileno()).st_size
    except OSError as exc:
        handle.close()
        raise ModelFileError(path, f"cannot be read ({exc.strerror})") from None
    return handle, size


def _value(reader: _Reader, kind: int, key: str, lengths: dict[str, int]) -> Any:
    """One metadata value; long strings and arrays come back as None (skipped).

    Arrays of strings are never kept (no shape needs one): their length goes into
    ``lengths``. Every array is refused by its count before any item is read.
    """
    layout = _STRUCTS.get(kind)
    if layout is not None:
        return reader.unpack(layout, f"value of {key!r}")
    if kind == _STRING:
        text = reader.string(f"value of {key!r}", KEEP_STRING_BYTES)
        if text is not None:
            reader.keep(len(text), f"key {key!r}")
        return text
    if kind != _ARRAY:
        raise ModelFileError(reader.path, f"key {key!r} has unknown value type {kind}")
    item = reader.unpack(_U32, f"array type of {key!r}")
    length = reader.unpack(_U64, f"array length of {key!r}")
    if length > MAX_ARRAY_LENGTH:
        raise ModelFileError(
            reader.path,
            f"key {key!r} claims an array of {length:,} items, more than {MAX_ARRAY_LENGTH:,} "
            "(no model's vocabulary or merges come near)",
        )
    item_layout = _STRUCTS.get(item)
    # an item is at least one byte (a string at least its 8-byte length)
    if length * (item_layout.size if item_layout else 8) > reader.left():
        raise ModelFileError(
            reader.path, f"key {key!r} claims an array of {length:,} items, more than it can hold"
        )
    if item_layout is not None:
        size = length * item_layout.size
        if length > KEEP_ARRAY_LENGTH:
            reader.skip(size, f"array {key!r}")
            return None
        reader.keep(8 * length, f"key {key!r}")
        raw = reader.read(size, f"array {key!r}")
        return [value for (value,) in item_layout.iter_unpack(raw)]
    if item == _STRING:
        reader.skip_strings(length, f"array {key!r}")
        lengths[key] = length
        return None
    if item == _ARRAY:
        raise ModelFileError(reader.path, f"key {key!r} nests arrays in arrays")
    raise ModelFileError(reader.path, f"key {key!r} is an array of unknown type {item}")


@_collector_paused()
def read_gguf(path: Path | str) -> ModelFile:
    """Read a GGUF file's header: metadata, every tensor's type and exact byte size.

    Raises:
        ModelFileError: not a GGUF file, truncated, or a header the file cannot hold.
    """
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType, LlamaFileType

    target = Path(path)
    handle, size = _open_regular(target, buffering=0)  # _Reader keeps its own window
    with handle:
        reader = _Reader(handle, target, size)
        if reader.left() < 4 or reader.read(4, "magic") != GGUF_MAGIC:
            raise ModelFileError(target, "is not a GGUF file (it does not start with 'GGUF')")
        version = reader.unpack(_U32, "version")
        if version & 0xFFFF == 0 and version:
            raise ModelFileError(target, "is a big-endian GGUF file, which is not supported")
        if version not in GGUF_VERSIONS:
            raise ModelFileError(target, f"is GGUF version {version}; this reader knows 2 and 3")
        tensor_count = reader.unpack(_U64, "tensor count")
        key_count = reader.unpack(_U64, "key count")
        # the smallest key is 8 + 0 + 4 + 1 bytes, the smallest tensor info 8 + 4 + 4 + 8
        if key_count * 13 > reader.left():
            raise ModelFileError(
                target, f"claims {key_count:,} metadata keys, more than the file can hold"
            )
        if key_count > MAX_KEYS:
            raise ModelFileError(
                target, f"claims {key_count:,} metadata keys, more than {MAX_KEYS:,}"
            )
        if tensor_count * 24 > reader.left():
            raise ModelFileError(
                target, f"claims {tensor_count:,} tensors, more than the file can hold"
            )
        if tensor_count > MAX_TENSORS:
            raise ModelFileError(
                target,
                f"claims {tensor_count:,} tensors, more than {MAX_TENSORS:,} "
                "(no published model has that many)",
            )
        metadata: dict[str, Any] = {}
        string_arrays: dict[str, int] = {}
        for index in range(key_count):
            key = reader.string(f"key #{index + 1}", MAX_NAME_BYTES)
            if key is None:
                raise ModelFileError(target, f"key #{index + 1} is longer than {MAX_NAME_BYTES:,}")
            if key in metadata:
                raise ModelFileError(target, f"key {key!r} appears twice")
            kind = reader.unpack(_U32, f"type of {key!r}")
            metadata[key] = _value(reader, kind, key, string_arrays)
        raw_tensors: list[tuple[str, int, tuple[int, ...], int]] = []
        names: set[str] = set()
        for index in range(tensor_count):
            name = reader.string(f"tensor name #{index + 1}", MAX_NAME_BYTES)
            if name is None:
                raise ModelFileError(
                    target, f"tensor name #{index + 1} is longer than {MAX_NAME_BYTES:,}"
                )
            if name in names:
                raise ModelFileError(target, f"tensor {name!r} appears twice")
            names.add(name)
            n_dims = reader.unpack(_U32, f"dimensions of {name!r}")
            if not 1 <= n_dims <= MAX_DIMS:
                raise ModelFileError(target, f"tensor {name!r} has {n_dims} dimensions (1-4)")
            dims = reader.values(_DIMS[n_dims], f"dimensions of {name!r}")
            kind, offset = reader.values(_TYPE_OFFSET, f"type and offset of {name!r}")
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
    types: dict[int, tuple[str, int, int]] = {}  # one enum look-up per type, not per tensor
    for name, kind, dims, offset in raw_tensors:
        if kind not in types:
            try:
                ggml_type = GGMLQuantizationType(kind)
                types[kind] = (ggml_type.name, *GGML_QUANT_SIZES[ggml_type])
            except (ValueError, KeyError):
                raise ModelFileError(
                    target, f"tensor {name!r} has unknown GGML type {kind}"
                ) from None
        type_name, block, block_bytes = types[kind]
        if any(dim < 1 for dim in dims):
            raise ModelFileError(target, f"tensor {name!r} has an empty dimension {list(dims)}")
        elements = math.prod(dims)
        if elements > MAX_ELEMENTS:
            raise ModelFileError(target, f"tensor {name!r} claims {elements:,} elements")
        if dims[0] % block:
            raise ModelFileError(
                target,
                f"tensor {name!r}: rows of {dims[0]} are not whole {type_name} blocks of {block}",
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
            FileTensor(name=name, dtype=type_name, shape=dims, elements=elements, nbytes=nbytes)
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
    shape, problem = _gguf_shape(target, metadata, arch, tensors, string_arrays)
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


#: GGUF shape keys (after ``{arch}.``) that may be 0: 0 experts is a dense model, a
#: window or rank of 0 is none. Every other shape key is refused when 0 (an array: when
#: every item is 0; hybrid models give their recurrent layers 0 heads).
_ZERO_MEANS_NONE = frozenset(
    {
        "expert_count",
        "expert_shared_count",
        "leading_dense_block_count",
        "attention.sliding_window",
        "attention.kv_lora_rank",
        "attention.q_lora_rank",
    }
)


#: the GGUF key (after ``{arch}.``) each shape field comes from, to name it in errors
_GGUF_KEYS = {
    "layers": "block_count",
    "hidden": "embedding_length",
    "heads": "attention.head_count",
    "kv_heads": "attention.head_count_kv",
    "head_dim": "attention.key_length",
    "intermediate": "feed_forward_length",
    "vocab": "vocab_size",
    "context": "context_length",
    "experts": "expert_count",
    "active_experts": "expert_used_count",
    "shared_experts": "expert_shared_count",
    "dense_layers": "leading_dense_block_count",
    "expert_intermediate": "expert_feed_forward_length",
    "sliding_window": "attention.sliding_window",
    "kv_lora_rank": "attention.kv_lora_rank",
    "q_lora_rank": "attention.q_lora_rank",
    "qk_rope_head_dim": "rope.dimension_count",
    "v_head_dim": "attention.value_length",
}


def _number(path: Path, metadata: Mapping[str, Any], key: str, zero_ok: bool) -> int | None:
    """An integer key; a per-layer array gives its largest value.

    Raises:
        ModelFileError: a negative value, or 0 where no model can have 0.
    """
    value = metadata.get(key)
    if isinstance(value, list):
        numbers = [item for item in value if isinstance(item, int) and not isinstance(item, bool)]
        if not numbers or len(numbers) != len(value):
            return None
        if min(numbers) < 0:
            raise ModelFileError(path, f"{key} holds {min(numbers)}; it cannot be negative")
        number = max(numbers)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        return None
    if number < 0:
        raise ModelFileError(path, f"{key} is {number}; it cannot be negative")
    if number == 0 and not zero_ok:
        shown = "every item 0" if isinstance(value, list) else "0"
        raise ModelFileError(path, f"{key} is {shown}; a model needs at least 1")
    return number


def _gguf_shape(
    path: Path,
    metadata: Mapping[str, Any],
    arch: str | None,
    tensors: list[FileTensor],
    string_arrays: Mapping[str, int],
) -> tuple[ModelShape | None, str | None]:
    """The shape the metadata gives, or why there is none.

    Every value is checked before it is divided or subtracted (one place, here): none
    negative, heads and widths positive, KV heads dividing the heads, the embedding width
    a multiple of the heads when the head size follows from it.

    Raises:
        ModelFileError: a value no model can have, naming its key.
    """
    if arch is None:
        return None, "general.architecture is missing"
    by_name = {tensor.name: tensor for tensor in tensors}
    embedding = by_name.get("token_embd.weight")

    def key(name: str) -> int | None:
        return _number(path, metadata, f"{arch}.{name}", zero_ok=name in _ZERO_MEANS_NONE)

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
    heads, hidden = fields["heads"], fields["hidden"]
    kv_heads = key("attention.head_count_kv") or heads
    if kv_heads > heads or heads % kv_heads:
        raise ModelFileError(
            path,
            f"{arch}.attention.head_count_kv {kv_heads} does not divide "
            f"{arch}.attention.head_count {heads}",
        )
    head_dim = key("attention.key_length")
    if head_dim is None:
        if hidden % heads:
            raise ModelFileError(
                path,
                f"{arch}.embedding_length {hidden} is not a multiple of "
                f"{arch}.attention.head_count {heads} (and no {arch}.attention.key_length)",
            )
        head_dim = hidden // heads
    fields["kv_heads"], fields["head_dim"] = kv_heads, head_dim
    vocab = key("vocab_size")
    if vocab is None and embedding is not None and len(embedding.shape) == 2:
        vocab = embedding.shape[1]
    if vocab is None:
        vocab = string_arrays.get("tokenizer.ggml.tokens") or None
    fields["vocab"] = vocab
    fields["tied_embeddings"] = "output.weight" not in by_name
    fields["gated_mlp"] = any(name.startswith("blk.") and ".ffn_gate" in name for name in by_name)
    fields["attention_bias"] = "blk.0.attn_q.bias" in by_name
    experts = key("expert_count")
    if experts:
        fields["experts"] = experts
        active = key("expert_used_count") or 1
        if active > experts:
            raise ModelFileError(
                path,
                f"{arch}.expert_used_count {active} is more than {arch}.expert_count {experts}",
            )
        fields["active_experts"] = active
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
                q_lora_rank=key("attention.q_lora_rank") or None,
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
        name = f"{arch}.{_GGUF_KEYS[exc.field]}" if exc.field in _GGUF_KEYS else exc.field
        return None, f"its shape cannot be: {name} = {exc.value!r}: {exc.reason}"
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
    # one pass, not one per sum: a header holds up to MAX_TENSORS tensors
    total = embed = lm_head = experts = 0
    by_type: dict[str, int] = {}
    for tensor in tensors:
        name, nbytes = tensor.name, tensor.nbytes
        total += nbytes
        by_type[tensor.dtype] = by_type.get(tensor.dtype, 0) + nbytes
        if embedding(name):
            embed += nbytes
        if head(name):
            lm_head += nbytes
        if expert(name):
            experts += nbytes
    share = 1.0
    if shape is not None and shape.experts and shape.active_experts:
        share = shape.active_experts / shape.experts
    streamed = total - embed - experts + round(experts * share)
    if shape is not None and shape.tied_embeddings:
        streamed += embed  # the tied table is the output head too: read whole per token
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


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # in C; the loop below runs only when a key repeats
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key[:80]!r} appears twice")
            seen.add(key)
    return result


class _Budget:
    """What the shards of one folder may still hold, checked before each is parsed."""

    def __init__(self) -> None:
        self.header_bytes = MAX_SAFETENSORS_HEADERS_TOTAL
        self.tensors = MAX_SAFETENSORS_TENSORS
        self.values = MAX_SAFETENSORS_JSON_VALUES

    def spend(self, path: Path, raw: bytes) -> None:
        """Count a header's objects and values (C-speed scans) before it is parsed.

        Raises:
            ModelFileError: the folder's headers hold more than the caps allow.
        """
        # every entry is an object; less the outer one
        self.tensors -= max(0, raw.count(b"{") - 1)
        if self.tensors < 0:
            raise ModelFileError(
                path,
                f"takes the folder past {MAX_SAFETENSORS_TENSORS:,} tensor entries in all; "
                "no published model has that many",
            )
        self.values -= raw.count(b",") + 1
        if self.values < 0:
            raise ModelFileError(
                path,
                f"takes the folder's headers past {MAX_SAFETENSORS_JSON_VALUES:,} JSON values "
                "in all; no model's headers come near",
            )


def _safetensors_header(path: Path, budget: _Budget) -> tuple[dict[str, Any], int, int]:
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
        if length > budget.header_bytes:
            raise ModelFileError(
                path,
                f"takes the folder's headers past {MAX_SAFETENSORS_HEADERS_TOTAL:,} bytes in "
                "all; no model's headers come near",
            )
        budget.header_bytes -= length
        raw = handle.read(length)
    if len(raw) != length:
        raise ModelFileError(path, "is truncated inside its header")
    budget.spend(path, raw)
    try:
        document = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except UnicodeDecodeError:
        raise ModelFileError(path, "its header is not UTF-8 text") from None
    except RecursionError:
        raise ModelFileError(path, "its header nests too deep") from None
    except ValueError as exc:
        raise ModelFileError(path, f"its header is not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise ModelFileError(path, "its header is not a JSON object")
    return document, 8 + length, size


def _bad_ints(values: Any, most: int) -> bool:
    """Not a list of at most ``most`` whole numbers >= 0 (a JSON true is not one)."""
    if type(values) is not list or len(values) > most:
        return True
    # a loop, not any() over a generator: this runs twice per tensor entry, and the
    # generator's frame costs ~0.1 s over a 300k-entry folder
    for value in values:  # noqa: SIM110
        if type(value) is not int or value < 0:
            return True
    return False


def _safetensors_tensors(path: Path, budget: _Budget) -> tuple[list[FileTensor], int]:
    document, data_start, size = _safetensors_header(path, budget)
    data_bytes = size - data_start
    tensors: list[FileTensor] = []
    spans: list[tuple[int, int, str]] = []
    for name, info in document.items():
        if name == "__metadata__":
            continue
        if type(info) is not dict:
            raise ModelFileError(path, f"tensor {name[:80]!r} is not an object")
        dtype: Any = info.get("dtype")
        shape: Any = info.get("shape")
        offsets: Any = info.get("data_offsets")
        width = SAFETENSORS_DTYPES.get(dtype) if type(dtype) is str else None
        if width is None:
            raise ModelFileError(path, f"tensor {name[:80]!r} has unknown dtype {dtype!r:.40}")
        if _bad_ints(shape, 8):
            raise ModelFileError(path, f"tensor {name[:80]!r} has no valid shape")
        if _bad_ints(offsets, 2) or len(offsets) != 2:
            raise ModelFileError(path, f"tensor {name[:80]!r} has no valid data_offsets")
        elements = math.prod(shape)
        if elements > MAX_ELEMENTS:
            raise ModelFileError(path, f"tensor {name[:80]!r} claims {elements:,} elements")
        nbytes = elements * width
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
        tensors.append(FileTensor(name, dtype, tuple(shape), elements, int(nbytes)))
    spans.sort()
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:
            raise ModelFileError(path, f"tensors {first[:80]!r} and {second[:80]!r} overlap")
    return tensors, size


@_collector_paused()
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
            # one more than the cap is enough to refuse: a folder of 100k shards is
            # not listed whole
            files = sorted(itertools.islice(root.glob("*.safetensors"), MAX_SHARDS + 1))
        except OSError as exc:
            raise ModelFileError(root, f"cannot be listed ({exc.strerror})") from None
    else:
        raise ModelFileError(root, "is not a folder or a .safetensors file")
    if not files:
        raise ModelFileError(root, "holds no .safetensors file")
    if len(files) > MAX_SHARDS:
        raise ModelFileError(
            root,
            f"holds more than {MAX_SHARDS:,} .safetensors files; no published model has "
            "that many shards",
        )
    tensors: list[FileTensor] = []
    seen: set[str] = set()
    size = 0
    budget = _Budget()
    for file in files:
        found, file_size = _safetensors_tensors(file, budget)
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
    if os.path.lexists(config):  # a FIFO or a loop there is refused, not taken for none
        try:
            shape = load_hf_config(config)
        except ConfigFileError as exc:
            where = f"field {exc.field!r}: " if exc.field else ""
            raise ModelFileError(config, where + exc.reason) from None
        except ShapeError as exc:
            raise ModelFileError(config, str(exc)) from None
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
        document = json.loads(read_regular_file(config, MAX_CONFIG_BYTES))
    except (OSError, ValueError):
        return None
    value = document.get("model_type") if isinstance(document, dict) else None
    return value if isinstance(value, str) else None
