"""Model-file readers are bounded by work, not only by bytes (issue 39, item 4).

A shape that cannot be (0 or negative heads, sizes that do not divide) is refused before
any arithmetic; arrays, keys, tensors and safetensors headers are refused by their counts
before they are read; every crafted header is refused or read within 2 s.

Timings: a crafted header that used to take 20-130 s is refused in milliseconds, so those
tests bound the wall clock (time.monotonic). The largest headers that are *read* take
~0.2-1 s of CPU; on a shared 2-CPU test machine their wall clock includes waiting for a
CPU, so those tests, and the property tests (hundreds of examples, any of which may
wait), bound the reader's CPU time (time.process_time) instead.
"""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st
from model_file_factory import (
    GGUF_ARRAY,
    GGUF_STRING,
    GGUF_U8,
    LLAMA_CONFIG,
    gguf_header,
    gguf_string,
    llama_metadata,
    metadata_gguf,
    write_safetensors_folder,
)
from reach import reached

from gpudesk.workload import modelfile
from gpudesk.workload.architecture import (
    ConfigFileError,
    ModelShape,
    ShapeError,
    assumed_shape,
    parse_hf_config,
    with_overrides,
)
from gpudesk.workload.modelfile import ModelFile, ModelFileError, read_gguf, read_safetensors

#: the issue's bound on reading any header
BOUND_S = 2.0


@contextmanager
def within(bound: float = BOUND_S, clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Assert that the block's reading took less than ``bound`` seconds of ``clock``."""
    start = clock()
    yield
    elapsed = clock() - start
    assert elapsed < bound, f"took {elapsed:.2f} s, more than {bound} s"


def read_or_refuse(read: Callable[[Path], ModelFile], path: Path) -> ModelFile | ModelFileError:
    """What the reader gives for ``path``: the file, or the refusal (never another error)."""
    try:
        return read(path)
    except ModelFileError as exc:
        return exc


def assert_possible(shape: ModelShape) -> None:
    """Every division the memory and speed models make is defined and whole."""
    assert shape.layers > 0 and shape.hidden > 0 and shape.vocab > 0 and shape.context > 0
    assert shape.heads > 0 and shape.kv_heads > 0 and shape.head_dim > 0
    assert shape.heads % shape.kv_heads == 0
    if shape.experts is not None:
        assert shape.active_experts is not None and 0 < shape.active_experts <= shape.experts


# -- GGUF shapes that cannot be ----------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"attention_head_count": 0}, "llama.attention.head_count is 0"),
        ({"attention_head_count": [0, 0]}, "llama.attention.head_count is every item 0"),
        ({"attention_key_length": 0}, "llama.attention.key_length is 0"),
        ({"attention_head_count_kv": 0}, "llama.attention.head_count_kv is 0"),
        ({"attention_head_count": -4}, "llama.attention.head_count is -4"),
        ({"attention_head_count": [4, -4]}, "llama.attention.head_count holds -4"),
        ({"embedding_length": -64}, "llama.embedding_length is -64"),
        ({"block_count": 0}, "llama.block_count is 0"),
        ({"context_length": 0}, "llama.context_length is 0"),
        ({"feed_forward_length": 0}, "llama.feed_forward_length is 0"),
        ({"vocab_size": 0}, "llama.vocab_size is 0"),
        ({"attention_head_count_kv": 3}, "head_count_kv 3 does not divide"),
        ({"attention_head_count_kv": 8}, "head_count_kv 8 does not divide"),
        ({"attention_head_count": 3}, "embedding_length 64 is not a multiple of"),
        ({"expert_count": 4, "expert_used_count": 0}, "llama.expert_used_count is 0"),
        ({"expert_count": 4, "expert_used_count": 5}, "expert_used_count 5 is more than"),
        ({"expert_count": -1}, "llama.expert_count is -1"),
    ],
)
def test_a_gguf_shape_that_cannot_be_is_refused_naming_the_key(
    tmp_path: Path, values: dict[str, Any], words: str
) -> None:
    path = tmp_path / "bad.gguf"
    if "attention_head_count" in values and "attention_head_count_kv" not in values:
        values = {**values, "attention_head_count_kv": None}
    metadata_gguf(path, llama_metadata(**values))
    with within(), pytest.raises(ModelFileError) as caught:
        read_gguf(path)
    assert words in str(caught.value)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"block_count": 5_000}, "llama.block_count = 5000: Input should be less than or equal"),
        ({"context_length": 2**63 - 1}, "llama.context_length = 9223372036854775807"),
    ],
)
def test_a_gguf_shape_out_of_range_has_no_shape_and_says_which_key(
    tmp_path: Path, values: dict[str, Any], words: str
) -> None:
    path = tmp_path / "big.gguf"
    metadata_gguf(path, llama_metadata(**values))
    model = read_gguf(path)
    assert model.shape is None
    assert model.shape_problem is not None and words in model.shape_problem


def test_per_layer_zero_heads_of_a_hybrid_model_are_read(tmp_path: Path) -> None:
    # Hybrid models (Jamba, Nemotron-H) give their recurrent layers 0 heads: the
    # largest value is the attention layers' count.
    path = tmp_path / "hybrid.gguf"
    metadata_gguf(path, llama_metadata(attention_head_count=[0, 4], attention_head_count_kv=[0, 2]))
    shape = read_gguf(path).shape
    assert shape is not None
    assert (shape.heads, shape.kv_heads, shape.head_dim) == (4, 2, 16)


def test_a_key_length_that_does_not_follow_from_the_width_is_kept(tmp_path: Path) -> None:
    # Gemma's head size is its own (256 with a 3072 width): nothing divides then
    path = tmp_path / "gemma-like.gguf"
    metadata_gguf(
        path,
        llama_metadata(
            attention_head_count=3, attention_head_count_kv=None, attention_key_length=256
        ),
    )
    shape = read_gguf(path).shape
    assert shape is not None and shape.head_dim == 256


# -- GGUF arrays, keys and tensors: refused by count --------------------------------------


def _array_key(name: bytes, item: int, count: int) -> bytes:
    return gguf_string(name) + struct.pack("<IIQ", GGUF_ARRAY, item, count)


def _sparse(path: Path, head: bytes, size: int) -> Path:
    """``head`` then a hole to ``size`` bytes: zeros that cost no disk (empty strings)."""
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(max(size, len(head)))
    return path


def test_the_testers_sparse_file_of_16_million_empty_strings_is_refused_at_once(
    tmp_path: Path,
) -> None:
    # 26-39 s before: every string was read one by one although the array was skipped
    count = 16_777_216
    head = gguf_header(0, 1) + _array_key(b"tokenizer.ggml.tokens", GGUF_STRING, count)
    path = _sparse(tmp_path / "sparse.gguf", head, len(head) + 8 * count + 64)
    with within(), pytest.raises(ModelFileError, match="16,777,216 items, more than 1,000,000"):
        read_gguf(path)


def test_an_array_over_the_cap_is_refused_before_the_file_size_is_looked_at(
    tmp_path: Path,
) -> None:
    path = tmp_path / "claims.gguf"
    path.write_bytes(gguf_header(0, 1) + _array_key(b"a", GGUF_U8, modelfile.MAX_ARRAY_LENGTH + 1))
    with pytest.raises(ModelFileError, match="1,000,001 items, more than 1,000,000"):
        read_gguf(path)


def test_a_million_empty_strings_are_walked_within_the_bound(tmp_path: Path) -> None:
    count = modelfile.MAX_ARRAY_LENGTH
    head = gguf_header(0, 1) + _array_key(b"tokenizer.ggml.merges", GGUF_STRING, count)
    path = _sparse(tmp_path / "merges.gguf", head, len(head) + 8 * count)
    with within(clock=time.process_time):
        model = read_gguf(path)
    assert model.tensors == ()


def test_a_long_array_of_numbers_is_seeked_over(tmp_path: Path) -> None:
    count = modelfile.MAX_ARRAY_LENGTH  # 8 MB of u64 in a hole: one seek, nothing read
    head = gguf_header(0, 2) + _array_key(b"scores", 10, count)
    tail = gguf_string(b"general.architecture") + struct.pack("<I", GGUF_STRING)
    tail += gguf_string(b"llama")
    path = tmp_path / "scores.gguf"
    with path.open("wb") as handle:
        handle.write(head)
        handle.seek(8 * count, os.SEEK_CUR)
        handle.write(tail)
    reads: list[int] = []
    real_read = modelfile._Reader.read

    def counted(self: modelfile._Reader, count: int, what: str) -> bytes:
        reads.append(count)
        return real_read(self, count, what)

    with mock.patch.object(modelfile._Reader, "read", counted), within():
        model = read_gguf(path)
    assert model.architecture == "llama"  # the key after the array was found
    assert sum(reads) < 1_000


def test_many_long_skipped_strings_cost_a_seek_each(tmp_path: Path) -> None:
    # 4,096 keys of 256 KiB strings in a 1 GiB sparse file: after each seek one page is
    # read, not a 64 KiB window (2.6 s of CPU for 16,384 such keys before)
    keys, length = 4_096, 256 * 1024
    path = tmp_path / "long-values.gguf"
    with path.open("wb") as handle:
        handle.write(gguf_header(0, keys))
        for index in range(keys):
            handle.write(
                gguf_string(f"k{index}".encode()) + struct.pack("<IQ", GGUF_STRING, length)
            )
            handle.seek(length, os.SEEK_CUR)
        handle.write(bytes(8))
    with within(clock=time.process_time):
        model = read_gguf(path)
    assert model.file_bytes > keys * length


def test_strings_in_arrays_are_capped_across_the_header(tmp_path: Path) -> None:
    count = modelfile.MAX_ARRAY_LENGTH  # three arrays of 1M: the third passes 2M in all
    path = tmp_path / "three.gguf"
    with path.open("wb") as handle:
        handle.write(gguf_header(0, 3))
        for index in range(3):
            handle.write(_array_key(f"a{index}".encode(), GGUF_STRING, count))
            handle.seek(8 * count, os.SEEK_CUR)
        handle.write(bytes(8))
    with within(clock=time.process_time), pytest.raises(ModelFileError) as caught:
        read_gguf(path)
    assert "array 'a2'" in str(caught.value)
    assert "past 2,000,000 strings in arrays" in str(caught.value)


def test_bytes_of_strings_in_arrays_are_capped(tmp_path: Path) -> None:
    half = modelfile.MAX_ARRAY_STRING_BYTES // 2 + 1  # two strings, each over half the cap
    path = tmp_path / "long.gguf"
    with path.open("wb") as handle:
        handle.write(gguf_header(0, 1) + _array_key(b"a", GGUF_STRING, 2))
        for _ in range(2):
            handle.write(struct.pack("<Q", half))
            handle.seek(half, os.SEEK_CUR)
        handle.write(bytes(8))
    with within(), pytest.raises(ModelFileError, match="bytes of strings in arrays"):
        read_gguf(path)


def test_short_values_kept_in_memory_are_capped(tmp_path: Path) -> None:
    keys = modelfile.MAX_KEPT_BYTES // 4_096 + 1  # each key a 4 KB string, kept
    text = gguf_string(b"x" * 4_096)
    path = tmp_path / "kept.gguf"
    path.write_bytes(
        gguf_header(0, keys)
        + b"".join(
            gguf_string(f"k{index}".encode()) + struct.pack("<I", GGUF_STRING) + text
            for index in range(keys)
        )
    )
    with within(), pytest.raises(ModelFileError, match="bytes of short values"):
        read_gguf(path)


@pytest.mark.parametrize(
    ("tensors", "keys", "words"),
    [
        (modelfile.MAX_TENSORS + 1, 0, "100,001 tensors, more than 100,000"),
        (0, modelfile.MAX_KEYS + 1, "16,385 metadata keys, more than 16,384"),
    ],
)
def test_tensor_and_key_counts_over_the_caps_are_refused(
    tmp_path: Path, tensors: int, keys: int, words: str
) -> None:
    path = _sparse(tmp_path / "counts.gguf", gguf_header(tensors, keys), 64 << 20)
    with within(), pytest.raises(ModelFileError, match=words):
        read_gguf(path)


def test_a_name_longer_than_any_real_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "name.gguf"
    path.write_bytes(gguf_header(1, 0) + gguf_string(b"t" * 257) + bytes(64))
    with pytest.raises(ModelFileError, match="tensor name #1 is longer than 256"):
        read_gguf(path)


def test_the_most_tensors_allowed_are_read_within_the_bound(tmp_path: Path) -> None:
    count = modelfile.MAX_TENSORS
    path = tmp_path / "tensors.gguf"
    with path.open("wb") as handle:
        handle.write(gguf_header(count, 0))
        for index in range(count):
            name = gguf_string(f"t{index}".encode())
            handle.write(name + struct.pack("<IQIQ", 1, 8, 0, 32 * index))
        handle.truncate(handle.tell() + 32 + 32 * count)
    with within(clock=time.process_time):
        model = read_gguf(path)
    assert len(model.tensors) == count


# -- safetensors: header bytes, entries and shards ---------------------------------------


def _shard(path: Path, header: bytes, data: int = 0) -> None:
    with path.open("wb") as handle:
        handle.write(struct.pack("<Q", len(header)) + header)
        handle.truncate(8 + len(header) + data)


def test_the_testers_30_mb_shard_header_is_refused_by_its_length(tmp_path: Path) -> None:
    # ~9 s per shard before, up to 4,096 shards
    folder = tmp_path / "m"
    folder.mkdir()
    length = 30_000_000
    _shard(folder / "model.safetensors", b"", 0)
    with (folder / "model.safetensors").open("r+b") as handle:
        handle.write(struct.pack("<Q", length))
        handle.truncate(8 + length)
    with within(), pytest.raises(ModelFileError, match="claims a 30,000,000-byte header"):
        read_safetensors(folder)


def test_headers_are_capped_in_all_the_shards_together(tmp_path: Path) -> None:
    write_safetensors_folder(tmp_path / "m", shards=2)
    sizes = [
        struct.unpack("<Q", path.read_bytes()[:8])[0]
        for path in sorted((tmp_path / "m").glob("*.safetensors"))
    ]
    with (
        mock.patch.object(modelfile, "MAX_SAFETENSORS_HEADERS_TOTAL", sum(sizes) - 1),
        pytest.raises(ModelFileError, match=r"headers past .* bytes in all"),
    ):
        read_safetensors(tmp_path / "m")
    with mock.patch.object(modelfile, "MAX_SAFETENSORS_HEADERS_TOTAL", sum(sizes)):
        assert read_safetensors(tmp_path / "m").tensors


def test_tensor_entries_are_counted_before_the_header_is_parsed(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    _shard(folder / "model.safetensors", b"{" * 1_000 + b" not json")
    with (
        mock.patch.object(modelfile, "MAX_SAFETENSORS_TENSORS", 998),
        pytest.raises(ModelFileError, match="past 998 tensor entries in all"),
    ):
        read_safetensors(folder)
    with pytest.raises(ModelFileError, match="not valid JSON"):
        read_safetensors(folder)


def test_json_values_are_counted_before_the_header_is_parsed(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    _shard(folder / "model.safetensors", b'{"__metadata__": [' + b"0," * 1_000 + b"0]}")
    with (
        mock.patch.object(modelfile, "MAX_SAFETENSORS_JSON_VALUES", 1_000),
        pytest.raises(ModelFileError, match="past 1,000 JSON values in all"),
    ):
        read_safetensors(folder)


def test_shards_over_the_cap_are_refused_before_any_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    for index in range(4):
        (folder / f"model-{index}.safetensors").write_bytes(b"")
    with (
        mock.patch.object(modelfile, "MAX_SHARDS", 3),
        pytest.raises(ModelFileError, match=r"holds more than 3 \.safetensors files"),
    ):
        read_safetensors(folder)


def test_a_full_shard_of_tiny_entries_is_read_or_refused_within_the_bound(
    tmp_path: Path,
) -> None:
    # the most one shard may hold: 16 MiB of the smallest entries (~240k of them)
    folder = tmp_path / "m"
    folder.mkdir()
    entry = '"t{0}":{{"dtype":"U8","shape":[1],"data_offsets":[{0},{1}]}}'
    parts: list[str] = []
    size = 2
    while True:
        text = entry.format(len(parts), len(parts) + 1)
        if size + len(text) + 1 > modelfile.MAX_SAFETENSORS_HEADER:
            break
        parts.append(text)
        size += len(text) + 1
    _shard(folder / "model.safetensors", ("{" + ",".join(parts) + "}").encode(), len(parts))
    with within(clock=time.process_time):
        found = read_or_refuse(read_safetensors, folder)
    assert not isinstance(found, ModelFileError), found
    assert len(found.tensors) == len(parts)


# -- config.json shapes that cannot be ----------------------------------------------------


@pytest.mark.parametrize(
    ("values", "key", "words"),
    [
        ({"num_attention_heads": 0}, "num_attention_heads", "must be positive, not 0"),
        ({"num_attention_heads": -4}, "num_attention_heads", "must be positive, not -4"),
        ({"head_dim": 0}, "head_dim", "must be positive, not 0"),
        ({"hidden_size": 65}, "num_attention_heads", "do not divide hidden_size 65"),
        ({"num_key_value_heads": 0}, "num_key_value_heads", "must be positive, not 0"),
        ({"num_key_value_heads": 3}, "num_key_value_heads", "multiple of the KV heads"),
        ({"num_key_value_heads": 8}, "num_key_value_heads", "more KV heads than"),
        ({"num_hidden_layers": -1}, "num_hidden_layers", "must be positive, not -1"),
        ({"num_hidden_layers": 10**9}, "num_hidden_layers", "less than or equal"),
        ({"num_attention_heads": True}, "num_attention_heads", "whole number, not true"),
        ({"sliding_window": 64, "sliding_window_pattern": 0}, "sliding_window_pattern", "0"),
    ],
)
def test_a_config_shape_that_cannot_be_is_refused_naming_the_key(
    tmp_path: Path, values: dict[str, Any], key: str, words: str
) -> None:
    config = {**LLAMA_CONFIG, **values}
    with pytest.raises(ConfigFileError) as caught:
        parse_hf_config(json.dumps(config).encode(), tmp_path / "config.json")
    assert caught.value.field == key
    assert words in caught.value.reason
    # and a safetensors folder beside that config.json: refused, naming the config
    write_safetensors_folder(tmp_path / "m")
    (tmp_path / "m" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelFileError, match=r"config\.json"):
        read_safetensors(tmp_path / "m")


@pytest.mark.parametrize("given", [{"heads": 0}, {"head_dim": 0}, {"hidden": -64}, {"layers": 0}])
def test_overrides_and_assumed_shapes_refuse_non_positive_values(given: dict[str, int]) -> None:
    shape = assumed_shape(7_000_000_000)[0]
    with pytest.raises(ShapeError) as caught:
        with_overrides(shape, given)
    assert caught.value.field in given
    with pytest.raises(ShapeError) as caught:
        assumed_shape(7_000_000_000, given)
    assert caught.value.field in given


# -- property tests -----------------------------------------------------------------------

#: shape values that can be and that cannot: 0, negative, odd, huge
_SHAPE_INT = st.one_of(
    st.sampled_from([0, 1, 2, 3, 4, 8, 64, -1, -4, 2**31 - 1, 2**32, 2**63 - 1]),
    st.integers(min_value=-(2**31), max_value=2**32),
)
#: values a real model has (so that enough examples are read, not refused)
_GOOD_INT = st.sampled_from([1, 2, 4, 8, 16, 64, 128, 256])
_SHAPE_VALUE = st.one_of(_SHAPE_INT, st.lists(_SHAPE_INT, min_size=0, max_size=4))
_SHAPE_KEYS = [
    "block_count",
    "embedding_length",
    "attention_head_count",
    "attention_head_count_kv",
    "attention_key_length",
    "context_length",
    "feed_forward_length",
    "vocab_size",
    "expert_count",
    "expert_used_count",
    "attention_sliding_window",
]


@settings(max_examples=100, deadline=None)
@given(
    changes=st.dictionaries(
        st.sampled_from(_SHAPE_KEYS), st.one_of(st.none(), _GOOD_INT, _SHAPE_VALUE)
    )
)
@pytest.mark.reaches(read=8, refused=25)
def test_any_gguf_shape_is_a_possible_shape_or_refused(changes: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "shape.gguf"
        metadata_gguf(path, llama_metadata(**changes))
        with within(clock=time.process_time):
            found = read_or_refuse(read_gguf, path)
    if isinstance(found, ModelFileError):
        reached("refused")
        assert str(path) in str(found) and "\n" not in str(found)
    elif found.shape is not None:
        reached("read")
        assert_possible(found.shape)
    else:
        assert found.shape_problem


_COUNT = st.one_of(
    st.sampled_from([0, 1, 4_096, 4_097, 1_000_000, 1_000_001, 16_777_216, 2**40, 2**64 - 1]),
    st.integers(min_value=0, max_value=5_000),
)


@settings(max_examples=60, deadline=None)
@given(
    arrays=st.lists(
        st.tuples(st.sampled_from([0, 4, 6, 8, 9, 10, 13, 2**32 - 1]), _COUNT), max_size=3
    ),
    tensors=_COUNT,
    keys=st.integers(min_value=0, max_value=3),
    hole=st.sampled_from([0, 1 << 10, 64 << 20]),
)
@pytest.mark.reaches(read=5, refused=20)
def test_any_crafted_gguf_header_is_read_or_refused_within_the_bound(
    arrays: list[tuple[int, int]], tensors: int, keys: int, hole: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "crafted.gguf"
        with path.open("wb") as handle:
            handle.write(gguf_header(tensors, keys + len(arrays)))
            for index, (item, count) in enumerate(arrays):
                handle.write(_array_key(f"a{index}".encode(), item, count))
                # the items are a hole: zeros, i.e. empty strings and zero numbers
                handle.seek(min(count, 2_000_000) * 8, os.SEEK_CUR)
            for index in range(keys):
                handle.write(gguf_string(f"k{index}".encode()) + struct.pack("<IB", GGUF_U8, 1))
            handle.truncate(handle.tell() + hole)
        with within(clock=time.process_time):
            found = read_or_refuse(read_gguf, path)
    if isinstance(found, ModelFileError):
        reached("refused")
        assert str(path) in str(found)
    else:
        reached("read")
        assert found.tensor_bytes <= found.file_bytes


_JSON_INT = st.one_of(
    st.sampled_from([0, 1, 2, 64, -1, 2**63, 2**70]), st.integers(min_value=-4, max_value=300)
)


@settings(max_examples=60, deadline=None)
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from(["F16", "BF16", "U8", "F4", "X9", 3]),
            st.lists(_JSON_INT, max_size=9),
            st.lists(_JSON_INT, min_size=0, max_size=3),
        ),
        max_size=6,
    ),
    data=st.integers(min_value=0, max_value=2_048),
    heads=st.one_of(_SHAPE_INT, st.booleans(), st.just("4")),
    kv_heads=st.one_of(st.none(), _SHAPE_INT),
)
@pytest.mark.reaches(refused=20)
def test_any_crafted_safetensors_folder_is_read_or_refused_within_the_bound(
    entries: list[tuple[Any, list[int], list[int]]],
    data: int,
    heads: Any,
    kv_heads: int | None,
) -> None:
    header = {
        f"t{index}": {"dtype": dtype, "shape": shape, "data_offsets": offsets}
        for index, (dtype, shape, offsets) in enumerate(entries)
    }
    config = {**LLAMA_CONFIG, "num_attention_heads": heads, "num_key_value_heads": kv_heads}
    with tempfile.TemporaryDirectory() as folder:
        _shard(Path(folder) / "model.safetensors", json.dumps(header).encode(), data)
        (Path(folder) / "config.json").write_text(json.dumps(config), encoding="utf-8")
        with within(clock=time.process_time):
            found = read_or_refuse(read_safetensors, Path(folder))
    if isinstance(found, ModelFileError):
        reached("refused")
        assert folder in str(found)
    else:
        assert found.tensor_bytes <= data
        assert found.shape is not None
        assert_possible(found.shape)


@settings(max_examples=150, deadline=None)
@given(
    values=st.dictionaries(
        st.sampled_from(
            [
                "hidden_size",
                "num_attention_heads",
                "num_key_value_heads",
                "head_dim",
                "num_hidden_layers",
                "intermediate_size",
                "vocab_size",
                "num_local_experts",
                "num_experts_per_tok",
                "sliding_window",
                "sliding_window_pattern",
                "max_position_embeddings",
            ]
        ),
        st.one_of(
            _GOOD_INT,
            _GOOD_INT,
            _SHAPE_INT,
            st.none(),
            st.booleans(),
            st.floats(allow_nan=False),
            st.text(max_size=4),
        ),
        max_size=3,
    )
)
@pytest.mark.reaches(read=15, refused=40)
def test_any_config_shape_is_a_possible_shape_or_refused(values: dict[str, Any]) -> None:
    config = {**LLAMA_CONFIG, **values}
    try:
        shape = parse_hf_config(json.dumps(config).encode())
    except (ConfigFileError, ShapeError) as exc:
        reached("refused")
        assert "\n" not in str(exc)
        return
    reached("read")
    assert_possible(shape)
    assert math.isfinite(shape.kv_cache_bytes(4_096, 2.0))
