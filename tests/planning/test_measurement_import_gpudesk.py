"""``measurements import`` of GPUDesk's own files: ``speed --verify --json`` documents
(one tokens/s row) and ``bench --json`` results (read, checked, each figure refused:
GEMM TFLOPS and copy GB/s are not tokens/s).

The files under measurement_files/ were written by this code on this project's build
machine (2 cores of an AMD EPYC, no GPU), 2026-12-02:

- gpudesk-speed-verify.json: ``gpudesk speed --gguf tiny.gguf --engine llama.cpp
  --mode decode --gpu cpu --seq-in 32 --seq-out 32 --json --verify`` with
  llama-cpp-python 0.3.36 on a 2-layer random-weight GGUF; it carries
  ``verify.measurement``, the row that run stored.
- gpudesk-speed-verify-before-measurement-key.json: the same command run before
  ``verify.measurement`` was added (the importer rebuilds the row).
- gpudesk-bench-numpy.json: ``gpudesk bench --backend numpy --tests gemm,copy
  --dtypes fp32 --no-save --json``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from gpudesk.measurements.file_import import ImportFileError, ImportHints, parse_file
from gpudesk.measurements.store import Measurement, MeasurementStore

FILES = Path(__file__).parent / "measurement_files"
VERIFY = FILES / "gpudesk-speed-verify.json"
VERIFY_OLD = FILES / "gpudesk-speed-verify-before-measurement-key.json"
BENCH = FILES / "gpudesk-bench-numpy.json"

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=8,
)


def _load(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def _parse_document(document: Any, hints: ImportHints | None = None) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "doc.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        return parse_file(path, hints or ImportHints())


def test_verify_document_imports_the_row_that_run_stored(tmp_path: Path) -> None:
    document = _load(VERIFY)
    result = parse_file(VERIFY, ImportHints())
    assert result.source_format == "gpudesk verify"
    assert result.refused == []
    (row,) = result.rows
    stored = Measurement(**document["verify"]["measurement"], source="gpudesk speed --verify")
    assert row.key() == stored.key()  # the same row: a re-import where it ran adds nothing
    assert (row.gpu_id, row.engine, row.backend, row.mode) == ("cpu", "llama.cpp", "cpu", "decode")
    assert row.tokens_per_s == document["verify"]["measured_tokens_per_s"]
    assert row.estimate_tokens_per_s == document["verify"]["estimate_tokens_per_s"]
    store = MeasurementStore(tmp_path / "m.sqlite")
    assert store.add([stored]) == (1, 0)
    assert store.add(result.rows) == (0, 1)


def test_verify_document_from_before_the_measurement_key_is_rebuilt() -> None:
    document = _load(VERIFY_OLD)
    assert "measurement" not in document["verify"]
    (row,) = parse_file(VERIFY_OLD, ImportHints()).rows
    verify = document["verify"]
    assert (row.gpu_id, row.count, row.engine, row.backend) == ("cpu", 1, "llama.cpp", "cpu")
    assert (row.model, row.quant, row.mode) == ("gpudesk random weights", "q8_0", "decode")
    assert (row.seq_in, row.seq_out) == (32, verify["n_gen_done"])
    assert row.tokens_per_s == verify["measured_tokens_per_s"]
    assert row.engine_version == "llama-cpp-python 0.3.36"
    assert row.model_file == verify["model_path"]


def test_an_interrupted_verify_run_is_refused() -> None:
    document = _load(VERIFY_OLD)
    document["verify"]["stopped"] = "interrupted"
    result = _parse_document(document)
    assert result.rows == []
    assert result.refused == ["verify: the run was interrupted (Ctrl+C); not stored"]


def test_a_rebuilt_verify_row_without_a_gpu_asks_for_one() -> None:
    document = _load(VERIFY_OLD)
    document["results"] = []
    assert _parse_document(document).refused == ["verify: the document names no GPU; give --gpu"]
    (row,) = _parse_document(document, ImportHints(gpu_id="rtx-4090", backend="cuda")).rows
    assert (row.gpu_id, row.backend) == ("rtx-4090", "cuda")


def test_bench_result_is_read_and_each_figure_refused_as_not_tokens_per_s() -> None:
    result = parse_file(BENCH, ImportHints(gpu_id="rtx-4090"))
    assert result.source_format == "gpudesk bench"
    assert result.rows == []
    assert len(result.refused) == 2
    gemm, copy = result.refused
    assert gemm.startswith("bench GEMM FP32 on AMD EPYC (0.0437 TFLOPS): a GEMM rate")
    assert copy.startswith("bench memory copy on AMD EPYC (10.9 GB/s): a bandwidth")
    assert all("not tokens/s" in reason for reason in result.refused)


def test_a_fresh_bench_run_is_refused_figure_by_figure(tmp_path: Path) -> None:
    from gpudesk.bench.backends.numpy_backend import NumpyBackend
    from gpudesk.bench.plan import make_plan
    from gpudesk.bench.runner import run_benchmark
    from gpudesk.progress import ProgressState

    backend = NumpyBackend()
    plan = make_plan(backend.capabilities(0)).model_copy(
        update={
            "gemm_size": 64,
            "sweep_sizes": (64,),
            "copy_bytes": 2**20,
            "min_rep_seconds": 0.001,
        }
    )
    run = run_benchmark(plan, backend, ProgressState())
    path = tmp_path / "bench.json"
    path.write_text(run.to_json(), encoding="utf-8")
    result = parse_file(path, ImportHints())
    assert result.rows == []
    assert len(result.refused) == len(run.results) > 0


def test_a_broken_bench_result_names_the_field() -> None:
    document = _load(BENCH)
    document["results"][0]["unit"] = "GB/s"  # a GEMM in GB/s
    with pytest.raises(ImportFileError) as caught:
        _parse_document(document)
    assert caught.value.reason.startswith("is a GPUDesk bench result that cannot be read (")


def test_cli_import_of_a_bench_file_says_why_nothing_was_added(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from gpudesk.cli import main

    assert main(["measurements", "import", str(BENCH)]) == 2
    captured = capsys.readouterr()
    assert "gpudesk bench, 0 measurement(s)" in captured.out
    assert "nothing could be imported" in captured.err
    reasons = [line for line in captured.out.splitlines() if line.startswith("  ")]
    assert len(reasons) >= 2
    assert max(len(line) for line in reasons) <= 80  # only the lines naming the file run on


def test_cli_import_of_a_verify_file_adds_its_row_once(capsys: pytest.CaptureFixture[str]) -> None:
    from gpudesk.cli import main

    assert main(["measurements", "import", str(VERIFY), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert (first["added"], first["already_stored"]) == (1, 0)
    assert main(["measurements", "import", str(VERIFY), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["added"], again["already_stored"]) == (0, 1)


@settings(max_examples=150, deadline=None)
@given(
    part=st.sampled_from(["measurement", "verify", "workload", "results", "top"]),
    key=st.sampled_from(
        ["gpu_id", "count", "mode", "tokens_per_s", "seq_in", "seq_out", "measured_tokens_per_s",
         "n_gen_done", "stopped", "model", "engine_version", "quant", "backend", "x"]
    ),
    value=JSON_VALUES,
    old=st.booleans(),
)  # fmt: skip
def test_hostile_verify_documents_are_imported_or_refused(
    part: str, key: str, value: Any, old: bool
) -> None:
    document = _load(VERIFY_OLD if old else VERIFY)
    if part == "measurement" and not old:
        document["verify"]["measurement"][key] = value
    elif part in ("verify", "workload"):
        document[part][key] = value
    elif part == "results":
        document["results"] = value if key == "x" else [{key: value}]
    else:
        document[key] = value
    try:
        result = _parse_document(document)
    except ImportFileError:
        return
    assert len(result.rows) + len(result.refused) >= 1
    for row in result.rows:
        assert 0 < row.tokens_per_s < 1e9


@settings(max_examples=120, deadline=None)
@given(
    where=st.sampled_from(["top", "result", "device"]),
    key=st.sampled_from(["test", "dtype", "size", "value", "unit", "schema_version", "results",
                         "device", "catalog_id", "started_at", "name", "error", "x"]),
    value=JSON_VALUES,
)  # fmt: skip
def test_hostile_bench_results_never_become_measurements(where: str, key: str, value: Any) -> None:
    document = _load(BENCH)
    target = {"top": document, "result": document["results"][0], "device": document["device"]}
    target[where][key] = value
    try:
        result = _parse_document(document)
    except ImportFileError:
        return
    assert result.rows == []
    assert result.refused


def test_verify_end_to_end_then_import_on_a_fresh_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real engine writes the file; another data folder (another machine) imports it."""
    pytest.importorskip("llama_cpp")
    from gpudesk.bench.verify import write_random_gguf
    from gpudesk.cli import main
    from gpudesk.workload.architecture import make_shape

    tiny = make_shape(
        {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16,
         "intermediate": 128, "vocab": 512, "context": 256}
    )  # fmt: skip
    model = tmp_path / "tiny.gguf"
    write_random_gguf(tiny, model, max_bytes=10**8)
    argv = ["speed", "--gguf", str(model), "--engine", "llama.cpp", "--mode", "decode",
            "--gpu", "cpu", "--seq-in", "16", "--seq-out", "16", "--json", "--verify"]  # fmt: skip
    assert main(argv) == 0
    out = tmp_path / "verify.json"
    out.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["measurements", "import", str(out), "--json"]) == 0
    here = json.loads(capsys.readouterr().out)
    assert (here["added"], here["already_stored"]) == (0, 1)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "elsewhere"))
    assert main(["measurements", "import", str(out), "--json"]) == 0
    elsewhere = json.loads(capsys.readouterr().out)
    assert (elsewhere["added"], elsewhere["already_stored"]) == (1, 0)
