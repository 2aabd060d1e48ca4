"""Importing the benchmark results people post, and the SQLite store they go into.

The files under measurement_files/ and where each came from:

- llama-bench-geerlingguy-rtx4090-vulkan.md: llama-bench's markdown table as Jeff
  Geerling posted it for an RTX 4090 on Vulkan (TinyLlama 1.1B Q4_K_M), with its
  ``build:`` line, in https://github.com/geerlingguy/ai-benchmarks/issues/43
  (comment of 2025-12-09); verbatim.
- llama-bench-cann-ascend.json: llama-bench ``-o json`` for Qwen2.5 0.5B F16 on an
  Ascend 910B3 (CANN backend), from https://github.com/ggml-org/llama.cpp/pull/12994
  (2025-04-17); verbatim except that the stored excerpt ends inside ``samples_ts``, so
  that array is left out (the importer reads ``avg_ts``).
- llama-bench-cann-ascend.csv and .jsonl: the same published run written the way
  llama-bench's ``-o csv`` (a header of field names, every value double-quoted) and
  ``-o jsonl`` (one object a line) print a test; no verbatim post of those was found.
- vllm-bench-serve-llama-3.1-8b.json: the figures of ``vllm bench serve`` for
  Llama-3.1-8B-Instruct on ShareGPT posted in https://github.com/vllm-project/vllm/pull/18566
  (2025-05-22, 1000 requests, 6582.87 output tok/s), in the key names that
  ``--save-result`` writes; the post printed the summary, not the JSON.
- vllm-bench-throughput.json: the ``vllm bench throughput --output-json`` example of
  https://github.com/vllm-project/vllm/pull/29495 (2025-11-26); verbatim.
- llama-bench-pr4766-rtx4090-cuda.md, -pr16991-rtx-pro-6000-depth.md and
  -pr15616-m2-ultra-metal.md: rows of llama-bench tables (with the device line where
  there was one) from https://github.com/ggml-org/llama.cpp/pull/4766 (comment of
  2024-01-10, RTX 4090, the old "pp 512" test column),
  https://github.com/ggml-org/llama.cpp/pull/16991 (RTX PRO 6000 Blackwell, n_ubatch
  and fa columns, "@ d512" tests) and https://github.com/ggml-org/llama.cpp/pull/15616
  (2025-08-27, M2 Ultra, no params column); rows verbatim, a few of each table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import reach
from hypothesis import given, settings, strategies as st

from gpudesk.measurements.file_import import ImportFileError, ImportHints, parse_file
from gpudesk.measurements.store import (
    SCHEMA_VERSION,
    Measurement,
    MeasurementStore,
    export_document,
)

FILES = Path(__file__).parent / "measurement_files"


def _resolve(name: str) -> str | None:
    return {"NVIDIA GeForce RTX 4090": "rtx-4090"}.get(name)


def test_llama_bench_markdown_needs_the_gpu_and_refuses_mixed_tests() -> None:
    path = FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md"
    unplaced = parse_file(path, ImportHints())
    assert unplaced.rows == []
    assert "table row 1: the file names no GPU; give --gpu" in unplaced.refused
    result = parse_file(path, ImportHints(gpu_id="rtx-4090"))
    assert result.source_format == "llama-bench markdown"
    assert [(r.mode, r.seq_in, r.seq_out, r.tokens_per_s) for r in result.rows] == [
        ("prefill", 512, None, 10802.35),
        ("prefill", 4096, None, 18709.17),
        ("decode", None, 128, 762.37),
    ]
    first = result.rows[0]
    assert (first.engine, first.backend, first.quant) == ("llama.cpp", "vulkan", "q4_k_m")
    assert first.engine_version == "086a63e3a (7340)"
    # the heading above the table names the file: tinyllama-1.1b-1t-openorca.Q4_K_M.gguf
    assert first.model == "tinyllama-1.1b"
    assert "'tinyllama-1.1b-1t-openorca.Q4_K_M' names tinyllama-1.1b" in str(first.note)
    assert result.refused == ["table row 4: pp4096+tg128 mixes prefill and decode"]


def test_a_table_without_its_heading_is_placed_by_the_model_cell(tmp_path: Path) -> None:
    table = (FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md").read_text(encoding="utf-8")
    path = tmp_path / "bare.md"
    path.write_text(table[table.index("| model") :], encoding="utf-8")
    rows = parse_file(path, ImportHints(gpu_id="rtx-4090")).rows
    assert {row.model for row in rows} == {"tinyllama-1.1b"}
    # "llama 1B Q4_K - Medium", 1.10 B params
    assert "is tinyllama-1.1b by its parameter count" in str(rows[0].note)


def test_a_device_line_above_the_table_names_the_gpu(tmp_path: Path) -> None:
    table = (FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md").read_text(encoding="utf-8")
    path = tmp_path / "with-device.md"
    path.write_text(
        "ggml_cuda_init: found 1 CUDA devices:\n"
        "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n" + table,
        encoding="utf-8",
    )
    result = parse_file(path, ImportHints(resolve_gpu=_resolve))
    assert {row.gpu_id for row in result.rows} == {"rtx-4090"}
    assert result.rows[0].gpu_name == "NVIDIA GeForce RTX 4090"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("llama-bench-cann-ascend.json", "llama-bench json"),
        ("llama-bench-cann-ascend.jsonl", "llama-bench jsonl"),
        ("llama-bench-cann-ascend.csv", "llama-bench csv"),
    ],
)
def test_llama_bench_json_jsonl_and_csv_read_the_same_run(name: str, fmt: str) -> None:
    path = FILES / name
    unplaced = parse_file(path, ImportHints(resolve_gpu=_resolve))
    assert unplaced.refused == [
        "test 1: the file's GPU 'Ascend910B3' is not in the catalog; give --gpu"
    ]
    result = parse_file(path, ImportHints(gpu_id="cpu", resolve_gpu=_resolve))
    assert result.source_format == fmt
    (row,) = result.rows
    assert (row.mode, row.seq_in, row.seq_out) == ("decode", None, 128)
    assert row.tokens_per_s == pytest.approx(60.984063)
    assert (row.backend, row.quant, row.engine_version) == ("cann", "fp16", "12b17501 (5145)")
    assert row.model == "qwen2.5-0.5b"
    assert "'qwen2.5:0.5b-instruct-fp16' names qwen2.5-0.5b" in str(row.note)
    assert row.measured_at == "2025-04-17T08:51:41Z"
    assert row.gpu_name == "Ascend910B3"


def test_vllm_serve_result_is_one_serve_row_at_the_mean_lengths() -> None:
    path = FILES / "vllm-bench-serve-llama-3.1-8b.json"
    assert parse_file(path, ImportHints()).refused == [
        "vllm bench serve: vLLM's result names no GPU; give --gpu"
    ]
    (row,) = parse_file(path, ImportHints(gpu_id="h100-sxm5")).rows
    assert (row.engine, row.mode, row.model) == (
        "vllm",
        "serve",
        "llama-3.1-8b",
    )
    assert row.tokens_per_s == 6582.87
    assert (row.seq_in, row.seq_out) == (230, 203)  # 229,711 and 203,068 tokens / 1000


def test_vllm_throughput_result_needs_a_model() -> None:
    path = FILES / "vllm-bench-throughput.json"
    assert parse_file(path, ImportHints(gpu_id="a100-80gb-sxm4")).refused == [
        "vllm bench throughput: the file names no model; give --model PRESET, --gguf FILE "
        "or --config PATH"
    ]
    (row,) = parse_file(path, ImportHints(gpu_id="a100-80gb-sxm4", model="llama-3.1-8b")).rows
    assert (row.mode, row.tokens_per_s, row.seq_in, row.seq_out) == ("throughput", 1244.81, 5, 2)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "is empty"),
        (b"\xff\xfe\x00", "is not UTF-8"),
        (b"hello world\n", "is not a llama-bench result"),
        (b'{"schema_version": 1, "results": []}', "is a GPUDesk bench result"),
        (b'{"format": "gpudesk-measurements", "version": 9}', "newer than this GPUDesk"),
        (b'{"avg_ts": 1}\nnot json\n', "is not valid JSON"),
        (b'{"avg_ts": 1}\n{"nope": 2}\n', "line 2 is not a llama-bench test"),
    ],
)
def test_files_that_are_not_results_are_refused(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(content)
    with pytest.raises(ImportFileError) as caught:
        parse_file(path, ImportHints(gpu_id="rtx-4090"))
    assert words in caught.value.reason


@st.composite
def _result_texts(draw: st.DrawFn) -> str:
    """Any text, or a real result file (tests/planning/measurement_files) kept whole or
    with a span cut, replaced or inserted: random text alone is never a result file."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.text(max_size=400))
    files = sorted(FILES.iterdir())
    text = draw(st.sampled_from(files)).read_text(encoding="utf-8")
    if draw(st.booleans()):
        return text
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, min(len(text), start + 40)))
    return text[:start] + draw(st.text(max_size=20)) + text[end:]


@settings(max_examples=80, deadline=None)
@given(text=_result_texts(), gpu=st.sampled_from([None, "rtx-4090"]))
@pytest.mark.reaches(imported=20, rows=9, refused=20)
def test_any_text_is_imported_or_refused_cleanly(text: str, gpu: str | None) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f"
        path.write_text(text, encoding="utf-8")
        try:
            result = parse_file(path, ImportHints(gpu_id=gpu))
        except ImportFileError as exc:
            reach.reached("refused")
            assert exc.reason
            return
        reach.reached("imported")
        assert result.rows or result.refused  # a file read gives rows or says why not
        for row in result.rows:
            reach.reached("rows")
            assert row.tokens_per_s > 0


@settings(max_examples=40, deadline=None)
@given(
    record=st.dictionaries(
        st.sampled_from(["avg_ts", "n_prompt", "n_gen", "gpu_info", "backends", "model_type",
                         "model_filename", "test_time", "build_commit", "n_depth"]),
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
    )
)  # fmt: skip
def test_hostile_llama_bench_records_are_stored_or_refused(record: dict[str, object]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.json"
        path.write_text(json.dumps([{"avg_ts": 1.0, **record}]), encoding="utf-8")
        try:
            result = parse_file(path, ImportHints(gpu_id="rtx-4090"))
        except ImportFileError:
            return
        assert len(result.rows) + len(result.refused) == 1


def test_store_ignores_duplicates_and_keeps_a_schema_version(tmp_path: Path) -> None:
    store = MeasurementStore(tmp_path / "m.sqlite")
    assert store.rows() == []
    rows = parse_file(
        FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md", ImportHints(gpu_id="rtx-4090")
    ).rows
    assert store.add(rows) == (3, 0)
    assert store.add(rows) == (0, 3)
    stored = store.rows()
    assert [row.measurement for row in stored] == rows
    import sqlite3

    with sqlite3.connect(store.path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.remove([stored[0].id, 999]) == 1
    assert len(store.rows()) == 2


def test_export_reimports_as_the_same_rows(tmp_path: Path) -> None:
    store = MeasurementStore(tmp_path / "m.sqlite")
    row = Measurement(
        gpu_id="cpu",
        engine="llama.cpp",
        backend="cpu",
        model="tiny",
        mode="decode",
        seq_out=16,
        tokens_per_s=123.4,
        estimate_tokens_per_s=100.0,
        source="speed --verify",
        source_format="gpudesk verify",
    )
    store.add([row])
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export_document(store.rows())), encoding="utf-8")
    result = parse_file(path, ImportHints())
    assert result.rows == [row]
    other = MeasurementStore(tmp_path / "other.sqlite")
    assert other.add(result.rows) == (1, 0)


def test_a_database_that_is_not_sqlite_is_a_store_error(tmp_path: Path) -> None:
    from gpudesk.measurements.store import StoreError

    path = tmp_path / "m.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a GPUDesk measurement database"):
        MeasurementStore(path).rows()


def test_one_run_is_stored_once_whatever_it_was_called(tmp_path: Path) -> None:
    """A run's identity is what was measured, not the words it was imported with: the
    table with and without --model, and the JSON/JSONL/CSV of one run, are one row each."""
    store = MeasurementStore(tmp_path / "m.sqlite")
    table = FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md"
    assert store.add(parse_file(table, ImportHints(gpu_id="rtx-4090")).rows) == (3, 0)
    named = parse_file(table, ImportHints(gpu_id="rtx-4090", model="tinyllama-1.1b"))
    assert store.add(named.rows) == (0, 3)
    hints = ImportHints(gpu_id="ascend-910b", model="qwen2.5-0.5b")
    added = [
        store.add(parse_file(FILES / f"llama-bench-cann-ascend.{ext}", hints).rows)
        for ext in ("json", "jsonl", "csv")
    ]
    assert added == [(1, 0), (0, 1), (0, 1)]
    assert len(store.rows()) == 4


def test_a_version_1_database_is_rekeyed_and_keeps_every_row(tmp_path: Path) -> None:
    import hashlib
    import sqlite3

    from gpudesk.measurements.store import _COLUMNS

    path = tmp_path / "m.sqlite"
    table = FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md"
    rows = parse_file(table, ImportHints(gpu_id="rtx-4090")).rows
    named = parse_file(table, ImportHints(gpu_id="rtx-4090", model="tinyllama-1.1b")).rows
    columns = ", ".join(_COLUMNS)
    with sqlite3.connect(path) as connection:  # what version 1 wrote: labels in the key
        connection.execute(
            "CREATE TABLE measurement (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, "
            f"stored_at TEXT NOT NULL, {columns})"
        )
        twin = named[0].model_copy(update={"model": "a name given on import"})
        for row in [*rows, twin]:
            fields = row.model_dump(exclude={"estimate_tokens_per_s", "note", "source"})
            old_key = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
            values = row.model_dump()
            connection.execute(
                f"INSERT INTO measurement (key, stored_at, {columns}) VALUES (?, ?, "
                f"{', '.join('?' for _ in _COLUMNS)})",
                (old_key, "2026-12-01T00:00:00+00:00", *(values[name] for name in _COLUMNS)),
            )
        connection.execute("PRAGMA user_version = 1")
    store = MeasurementStore(path)
    assert len(store.rows()) == 4  # the twin stored by version 1 is kept
    assert store.add(named) == (0, 3)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


POSTED = {
    "pr4766": "llama-bench-pr4766-rtx4090-cuda.md",
    "pr16991": "llama-bench-pr16991-rtx-pro-6000-depth.md",
    "pr15616": "llama-bench-pr15616-m2-ultra-metal.md",
}


def _posted(tmp_path: Path, name: str, hints: ImportHints) -> Any:
    return parse_file(FILES / POSTED[name], hints)


def test_posted_tables_place_gpu_model_and_lengths(tmp_path: Path) -> None:
    names = {
        "NVIDIA GeForce RTX 4090": "rtx-4090",
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": "rtx-pro-6000-blackwell",
    }
    hints = ImportHints(resolve_gpu=names.get)
    old = _posted(tmp_path, "pr4766", hints)
    assert [(r.gpu_id, r.model, r.quant, r.mode, r.seq_in, r.seq_out) for r in old.rows] == [
        ("rtx-4090", "llama-2-7b", "fp16", "prefill", 512, None),
        ("rtx-4090", "llama-2-7b", "fp16", "decode", None, 128),
        ("rtx-4090", "llama-2-7b", "q4_0", "prefill", 512, None),
    ]  # CodeLlama 7B: Llama 2 7B's shape but for a vocabulary of 32,016
    deep = _posted(tmp_path, "pr16991", hints)
    assert [(r.model, r.quant, r.mode, r.seq_in, r.seq_out) for r in deep.rows] == [
        ("gpt-oss-20b", "mxfp4", "prefill", 128, None),
        ("gpt-oss-20b", "mxfp4", "decode", 512, 128),
    ]
    assert deep.refused == [
        "table row 2: pp128 @ d512 is prefill after a 512-token context, which GPUDesk "
        "does not estimate"
    ]
    metal = _posted(tmp_path, "pr15616", ImportHints(gpu_id="apple-m2-ultra-60c"))
    assert [(r.model, r.backend, r.quant) for r in metal.rows] == [
        ("qwen3-30b-a3b", "metal", "q8_0")
    ]
    assert metal.refused[0].startswith("table row 2: the file's model 'qwen2 7B Q8_0' is no")
