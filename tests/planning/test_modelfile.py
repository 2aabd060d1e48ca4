"""Reading real model files header only: exact tensor bytes, shapes, hostile headers."""

from __future__ import annotations

import json
import math
import struct
import tracemalloc
from pathlib import Path

import gguf
import pytest
import reach
from hypothesis import HealthCheck, given, settings, strategies as st
from model_file_factory import expected_bytes, write_safetensors_folder, write_tiny_gguf

from gpudesk.workload.modelfile import ModelFileError, read_gguf, read_safetensors
from gpudesk.workload.quant import QuantFormat


def test_gguf_q8_0_with_q4_0_and_f16_tensors_has_exact_bytes(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    written = write_tiny_gguf(path, layers=3)
    model = read_gguf(path)
    by_name = {tensor.name: tensor for tensor in model.tensors}
    assert set(by_name) == set(written)
    for name, (kind, shape) in written.items():
        tensor = by_name[name]
        assert tensor.dtype == kind
        assert tensor.shape == tuple(reversed(shape))  # GGUF lists the row length first
        assert tensor.nbytes == expected_bytes(kind, shape), name
    total = sum(expected_bytes(kind, shape) for kind, shape in written.values())
    assert model.tensor_bytes == total
    # Q8_0: 34 bytes per 32 weights; Q4_0: 18 per 32; a 64 x 128 ffn_up is 4,608 bytes
    assert by_name["blk.0.ffn_up.weight"].nbytes == 64 * 128 // 32 * 18
    assert by_name["blk.0.attn_q.weight"].nbytes == 64 * 64 // 32 * 34
    assert by_name["output.weight"].nbytes == 256 * 64 * 2
    assert model.bytes_by_type["Q4_0"] == 3 * 4_608
    assert model.embedding_bytes == 256 * 64 // 32 * 34
    assert model.streamed_per_token_bytes == total - model.embedding_bytes
    assert model.quant is QuantFormat.Q8_0
    assert model.file_type == "MOSTLY_Q8_0"
    # the gguf package's own reader agrees, tensor by tensor
    reader = gguf.GGUFReader(path)
    assert {t.name: int(t.n_bytes) for t in reader.tensors} == {
        name: tensor.nbytes for name, tensor in by_name.items()
    }


def test_gguf_shape_comes_from_its_metadata(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, layers=3, hidden=128, heads=8, kv_heads=2, ffn=256, vocab=320)
    shape = read_gguf(path).shape
    assert shape is not None
    assert (shape.layers, shape.hidden, shape.heads, shape.kv_heads) == (3, 128, 8, 2)
    assert (shape.head_dim, shape.intermediate, shape.vocab, shape.context) == (16, 256, 320, 512)
    assert not shape.tied_embeddings
    assert shape.gated_mlp


def test_gguf_f16_file(tmp_path: Path) -> None:
    path = tmp_path / "f16.gguf"
    written = write_tiny_gguf(path, bulk="F16", mixed=None, file_type=1)
    model = read_gguf(path)
    assert model.quant is QuantFormat.FP16
    params = sum(math.prod(shape) for _, shape in written.values())
    assert model.params == params
    norms = sum(math.prod(s) for k, s in written.values() if k == "F32")
    assert model.tensor_bytes == 2 * (params - norms) + 4 * norms


def test_safetensors_folder_reads_headers_and_config(tmp_path: Path) -> None:
    total = write_safetensors_folder(tmp_path / "model", dtype="BF16", shards=2)
    model = read_safetensors(tmp_path / "model")
    assert model.tensor_bytes == total
    assert model.quant is QuantFormat.BF16
    assert model.architecture == "llama"
    assert len(model.tensors) == 3 + 2 * 9
    by_name = {tensor.name: tensor for tensor in model.tensors}
    assert by_name["model.layers.1.mlp.down_proj.weight"].shape == (64, 128)
    assert by_name["model.layers.1.mlp.down_proj.weight"].nbytes == 64 * 128 * 2
    assert model.embedding_bytes == 256 * 64 * 2
    assert model.lm_head_bytes == 256 * 64 * 2
    assert model.shape is not None and model.shape.kv_heads == 2


# -- hostile headers -----------------------------------------------------------------


def _header(tensors: int, keys: int) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, tensors, keys)


def _string(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", "does not start with 'GGUF'"),
        (b"GGML" + bytes(20), "does not start with 'GGUF'"),
        (b"GGUF" + struct.pack("<I", 7) + bytes(16), "version 7"),
        (_header(2**63, 0), "claims 9,223,372,036,854,775,808 tensors"),
        (_header(0, 2**40), "metadata keys, more than the file can hold"),
        (_header(0, 1) + struct.pack("<Q", 2**40) + b"k" * 16, "past the end"),
        (_header(0, 1) + _string(b"a") + struct.pack("<I", 99) + bytes(8), "unknown value type"),
        (
            _header(0, 1) + _string(b"a") + struct.pack("<IIQ", 9, 8, 2**62) + bytes(8),
            "array of 4,611,686,018,427,387,904 items",
        ),
        (_header(0, 1) + _string(b"a") + struct.pack("<I", 4), "ends inside the header"),
        (
            _header(1, 0) + _string(b"t") + struct.pack("<I", 9) + bytes(40),
            "9 dimensions",
        ),
        (
            _header(1, 0) + _string(b"t") + struct.pack("<IQIQ", 1, 64, 2, 0) + bytes(8),
            "truncated: tensor 't'",
        ),
        (
            _header(1, 0) + _string(b"t") + struct.pack("<IQIQ", 1, 64, 77, 0) + bytes(8),
            "unknown GGML type 77",
        ),
        (
            _header(1, 0) + _string(b"t") + struct.pack("<IQIQ", 1, 33, 8, 0) + bytes(8),
            "not whole Q8_0 blocks",
        ),
    ],
)
def test_hostile_gguf_headers_are_refused(tmp_path: Path, data: bytes, words: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(ModelFileError) as caught:
        read_gguf(path)
    assert words in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_long_array_of_strings_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    count = 500_000  # 500k empty strings: 4 MB of header, nothing of it kept
    path = tmp_path / "vocab.gguf"
    path.write_bytes(
        _header(0, 1)
        + _string(b"tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, count)
        + struct.pack("<Q", 0) * count
    )
    tracemalloc.start()
    model = read_gguf(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert model.tensors == ()
    assert peak < 2_000_000


def test_a_directory_or_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="not a regular file"):
        read_gguf(tmp_path)
    with pytest.raises(ModelFileError, match="cannot be read"):
        read_gguf(tmp_path / "missing.gguf")


@pytest.fixture(scope="module")
def valid_gguf(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    write_tiny_gguf(path, layers=1, hidden=32, heads=2, kv_heads=1, ffn=64, vocab=64)
    return path.read_bytes()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cut=st.integers(min_value=0, max_value=4_000),
    edits=st.lists(
        st.tuples(st.integers(min_value=0, max_value=1_500), st.binary(min_size=1, max_size=8)),
        max_size=4,
    ),
)
def test_mutated_gguf_is_read_or_refused_cleanly(
    tmp_path: Path, valid_gguf: bytes, cut: int, edits: list[tuple[int, bytes]]
) -> None:
    data = bytearray(valid_gguf)
    for offset, patch in edits:
        data[offset : offset + len(patch)] = patch
    if cut < len(data):
        del data[len(data) - cut :]
    path = tmp_path / "mutated.gguf"
    path.write_bytes(bytes(data))
    try:
        model = read_gguf(path)
    except ModelFileError as exc:
        assert str(path) in str(exc)
    else:
        assert model.tensor_bytes <= len(data)


def _safetensors(header: bytes, data: int = 0) -> bytes:
    return struct.pack("<Q", len(header)) + header + bytes(data)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"abc", "shorter than 8 bytes"),
        (struct.pack("<Q", 2**60), "claims a 1,152,921,504,606,846,976-byte header"),
        (struct.pack("<Q", 100) + b"{}", "is truncated"),
        (_safetensors(b"{not json"), "not valid JSON"),
        (_safetensors(b"[1]"), "not a JSON object"),
        (_safetensors(b'{"a":{"dtype":"X9","shape":[1],"data_offsets":[0,1]}}', 1), "dtype"),
        (_safetensors(b'{"a":{"dtype":"F16","shape":[4],"data_offsets":[0,4]}}', 8), "span 4"),
        (
            _safetensors(b'{"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}}', 4),
            "past the end",
        ),
        (_safetensors(b'{"a":1,"a":2}'), "appears twice"),
        (_safetensors(b'{"a":{"dtype":"F16","shape":[-1],"data_offsets":[0,0]}}'), "shape"),
    ],
)
def test_hostile_safetensors_headers_are_refused(tmp_path: Path, data: bytes, words: str) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(data)
    with pytest.raises(ModelFileError) as caught:
        read_safetensors(folder)
    assert words in str(caught.value)
    assert "model.safetensors" in str(caught.value)


def test_a_folder_without_safetensors_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"holds no \.safetensors file"):
        read_safetensors(tmp_path)


@st.composite
def _safetensors_files(draw: st.DrawFn) -> tuple[bytes, int]:
    """A safetensors file's header and data size: a valid one, one with a field mutated,
    or raw bytes (a generator of raw bytes alone never makes a header that is read)."""
    kind = draw(st.sampled_from(["valid", "mutated", "raw"]))
    if kind == "raw":
        return draw(st.binary(max_size=300)), draw(st.integers(min_value=0, max_value=64))
    entries: dict[str, object] = {}
    offset = 0
    for index in range(draw(st.integers(min_value=0, max_value=4))):
        dtype = draw(st.sampled_from(["F16", "BF16", "F32", "U8", "I64"]))
        shape = draw(st.lists(st.integers(min_value=0, max_value=4), max_size=3))
        nbytes = math.prod(shape) * {"F16": 2, "BF16": 2, "F32": 4, "U8": 1, "I64": 8}[dtype]
        entries[f"layers.{index}.weight"] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    if draw(st.booleans()):
        entries["__metadata__"] = {"format": "pt"}
    data = offset + draw(st.integers(min_value=0, max_value=8))
    if kind == "mutated":
        hostile = st.one_of(
            st.none(),
            st.booleans(),
            st.integers(min_value=-(2**70), max_value=2**70),
            st.floats(allow_nan=False),
            st.text(max_size=5),
            st.lists(st.integers(min_value=-3, max_value=2**40), max_size=10),
        )
        tensors = [name for name in entries if name != "__metadata__"]
        if tensors:
            name = draw(st.sampled_from(tensors))
            field = draw(st.sampled_from(["dtype", "shape", "data_offsets", "whole"]))
            if field == "whole":
                entries[name] = draw(hostile)
            else:
                entries[name][field] = draw(hostile)  # type: ignore[index]
        else:
            entries["x"] = draw(hostile)
        data = draw(st.integers(min_value=0, max_value=max(64, data)))
    return json.dumps(entries).encode(), data


@settings(max_examples=60, deadline=None)
@given(file=_safetensors_files())
@pytest.mark.reaches(read=7, refused=7)
def test_any_safetensors_header_is_read_or_refused_cleanly(file: tuple[bytes, int]) -> None:
    import tempfile

    header, data = file
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "x.safetensors").write_bytes(_safetensors(header, data))
        try:
            model = read_safetensors(folder)
        except ModelFileError as exc:
            reach.reached("refused")
            assert "x.safetensors" in str(exc) or "config.json" in str(exc)
            return
        reach.reached("read")
        assert model.format == "safetensors"
        assert model.tensor_bytes <= data
        assert model.tensor_bytes == sum(tensor.nbytes for tensor in model.tensors)
