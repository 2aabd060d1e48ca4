"""``fit`` and ``speed`` with a crafted model file: exit 2, one line, no traceback.

Issue 39, item 4: a shape that cannot be, an array longer than any model needs, a
safetensors header larger than any real one, are refused before any arithmetic.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from model_file_factory import (
    GGUF_ARRAY,
    GGUF_STRING,
    LLAMA_CONFIG,
    gguf_header,
    gguf_string,
    llama_metadata,
    metadata_gguf,
    write_safetensors_folder,
)

from gpudesk.cli import main


def _zero_heads(folder: Path) -> list[str]:
    path = folder / "zero-heads.gguf"
    metadata_gguf(path, llama_metadata(attention_head_count=0, attention_head_count_kv=None))
    return ["--gguf", str(path)]


def _zero_head_list(folder: Path) -> list[str]:
    path = folder / "zero-head-list.gguf"
    metadata_gguf(path, llama_metadata(attention_head_count=[0, 0]))
    return ["--gguf", str(path)]


def _zero_key_length(folder: Path) -> list[str]:
    path = folder / "zero-key-length.gguf"
    metadata_gguf(path, llama_metadata(attention_key_length=0))
    return ["--gguf", str(path)]


def _sparse_strings(folder: Path) -> list[str]:
    # the tester's file: 16.7M empty strings in a 128 MB sparse file (26-39 s before)
    count = 16_777_216
    path = folder / "sparse.gguf"
    with path.open("wb") as handle:
        handle.write(gguf_header(0, 1) + gguf_string(b"tokenizer.ggml.tokens"))
        handle.write(struct.pack("<IIQ", GGUF_ARRAY, GGUF_STRING, count))
        handle.truncate(handle.tell() + 8 * count + 64)
    return ["--gguf", str(path)]


def _huge_safetensors_header(folder: Path) -> list[str]:
    model = folder / "model"
    write_safetensors_folder(model, shards=1)
    with (model / "model-00001-of-00001.safetensors").open("r+b") as handle:
        handle.write(struct.pack("<Q", 30_000_000))
        handle.truncate(8 + 30_000_000)
    return ["--safetensors", str(model)]


def _zero_heads_config(folder: Path) -> list[str]:
    path = folder / "config.json"
    path.write_text(json.dumps({**LLAMA_CONFIG, "num_attention_heads": 0}), encoding="utf-8")
    return ["--config", str(path)]


def _kv_heads_not_dividing_safetensors(folder: Path) -> list[str]:
    model = folder / "model"
    write_safetensors_folder(model)
    config = {**LLAMA_CONFIG, "num_key_value_heads": 3}
    (model / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return ["--safetensors", str(model)]


@pytest.mark.parametrize("command", [["fit"], ["speed", "--mode", "decode"]])
@pytest.mark.parametrize(
    ("craft", "words"),
    [
        (_zero_heads, "attention.head_count is 0"),
        (_zero_head_list, "attention.head_count is every item 0"),
        (_zero_key_length, "attention.key_length is 0"),
        (_sparse_strings, "16,777,216 items, more than 1,000,000"),
        (_huge_safetensors_header, "claims a 30,000,000-byte header"),
        (_zero_heads_config, "num_attention_heads"),
        (_kv_heads_not_dividing_safetensors, "num_key_value_heads"),
    ],
)
def test_a_crafted_model_file_is_exit_2_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    craft: Callable[[Path], list[str]],
    words: str,
) -> None:
    flags = craft(tmp_path)
    # CPU time: on a shared test machine the wall clock includes waiting for a CPU
    start = time.process_time()
    code = main([*command, *flags])
    elapsed = time.process_time() - start
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert words in captured.err
    assert "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1, captured.err
    assert elapsed < 2.0
