"""Issue 39 item 5: imported tokens/s figures are checked against physics.

A measurement file with a figure no run can give (not finite, not positive,
over :data:`MAX_TOKENS_PER_S_PER_GPU` a GPU), a whole number out of bounds or
text that is not one printable short line is refused whole
(:class:`ImportFileError`, naming the row, the field and the reason) and
nothing from it is stored; real files still import.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import reach
from hypothesis import given, settings, strategies as st

from gpudesk.cli import main
from gpudesk.measurements.checks import (
    MAX_NAME_CHARS,
    MAX_TOKENS_PER_S_PER_GPU,
    TEXT_FIELDS,
)
from gpudesk.measurements.file_import import ImportFileError, ImportHints, parse_file
from gpudesk.measurements.store import EXPORT_FORMAT, MeasurementStore
from gpudesk.terminal_text import UNSAFE

FILES = Path(__file__).parent / "measurement_files"


def _row(**changes: Any) -> dict[str, Any]:
    return {
        "gpu_id": "rtx-4090",
        "engine": "llama.cpp",
        "backend": "cuda",
        "model": "tinyllama-1.1b",
        "quant": "q4_k_m",
        "mode": "decode",
        "seq_out": 128,
        "tokens_per_s": 250.0,
        "source": "run.json",
        "source_format": "llama-bench json",
        **changes,
    }


def _export(*rows: dict[str, Any]) -> str:
    return json.dumps({"format": EXPORT_FORMAT, "version": 1, "measurements": list(rows)})


#: What a llama-bench file leaves to the user: the GPU and the model.
HINTS = ImportHints(gpu_id="rtx-4090", model="tinyllama-1.1b")


def _refused(tmp_path: Path, text: str) -> str:
    path = tmp_path / "m.json"
    path.write_text(text, "utf-8")
    with pytest.raises(ImportFileError) as caught:
        parse_file(path, HINTS)
    return caught.value.reason


def test_real_files_still_import() -> None:
    for path in sorted(FILES.iterdir()):
        result = parse_file(path, HINTS)
        assert all(0 < row.tokens_per_s <= MAX_TOKENS_PER_S_PER_GPU for row in result.rows)


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"tokens_per_s": 1e308}, "tokens_per_s: 1e+308 tokens/s is more than"),
        ({"tokens_per_s": 2e8}, "not a possible measurement"),
        ({"tokens_per_s": -5.0}, "not a positive figure"),
        ({"tokens_per_s": 0}, "not a positive figure"),
        ({"estimate_tokens_per_s": 1e308}, "estimate_tokens_per_s"),
        ({"count": 10**400}, "count: a 401-digit number is outside 1 to 100,000"),
        ({"seq_out": -1}, "seq_out: -1 is outside"),
        ({"concurrency": 10**7}, "concurrency"),
        ({"model": "m" * 2**20}, "model: 1,048,576 characters, more than 256"),
        ({"gpu_name": "RTX\x1b[2J 4090"}, "gpu_name: a control character (U+001B)"),
        ({"engine_version": "b1\x9b31m"}, "U+009B"),
        ({"measured_at": "2025\u202e-01-01"}, "U+202E"),
        ({"backend": "cu\nda"}, "U+000A"),
        ({"note": "bell\x07"}, "note: a control character (U+0007)"),
    ],
    ids=lambda value: repr(value)[:30],
)
def test_an_impossible_row_refuses_the_file(
    tmp_path: Path, changes: dict[str, Any], words: str
) -> None:
    reason = _refused(tmp_path, _export(_row(), _row(**changes)))
    assert reason.startswith("measurement 2: ")
    assert words in reason
    assert "nothing in this file was imported" in reason


def test_infinity_from_1e999_is_refused(tmp_path: Path) -> None:
    text = _export(_row(tokens_per_s="MARK")).replace('"MARK"', "1e999")
    assert "tokens_per_s: inf is not a finite number" in _refused(tmp_path, text)


@pytest.mark.parametrize("rate", [1e308, 0, -1.5])
def test_llama_bench_rates_are_checked(tmp_path: Path, rate: float) -> None:
    record = {"avg_ts": rate, "n_prompt": 0, "n_gen": 128, "model_filename": "tinyllama.gguf"}
    reason = _refused(tmp_path, json.dumps([record]))
    assert reason.startswith("test 1: tokens_per_s: ")


def test_a_control_character_in_a_llama_bench_gpu_name_refuses_the_file(tmp_path: Path) -> None:
    record = {"avg_ts": 90.0, "n_prompt": 0, "n_gen": 128, "gpu_info": "RTX 4090\x1b]0;x\x07"}
    assert "gpu_name: a control character (U+001B)" in _refused(tmp_path, json.dumps([record]))


def test_a_path_with_a_control_character_is_stored_escaped(tmp_path: Path) -> None:
    path = tmp_path / "run\x1b[2J.json"
    path.write_text(json.dumps([{"avg_ts": 90.0, "n_prompt": 0, "n_gen": 128}]), "utf-8")
    (row,) = parse_file(path, HINTS).rows
    assert "\x1b" not in row.source
    assert "\\u001b" in row.source


def test_the_cli_names_the_field_and_stores_nothing_from_a_refused_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(_export(_row(), _row(tokens_per_s=1e308)), "utf-8")
    code = main(["measurements", "import", str(bad)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "measurement 2: tokens_per_s" in out and "not a possible measurement" in out
    assert "Traceback" not in out + err
    assert MeasurementStore().rows() == []
    # A good file beside it is stored; the bad one still adds nothing.
    good = tmp_path / "good.json"
    good.write_text(_export(_row()), "utf-8")
    assert main(["measurements", "import", str(bad), str(good)]) == 0
    assert [stored.measurement.tokens_per_s for stored in MeasurementStore().rows()] == [250.0]


def test_an_infinite_figure_makes_the_file_no_json_and_stores_nothing(tmp_path: Path) -> None:
    # Found by the property below: json.dumps writes Infinity, which no JSON reader takes.
    path = tmp_path / "m.json"
    path.write_text(_export(_row(), _row(tokens_per_s=math.inf)), "utf-8")
    store = MeasurementStore(tmp_path / "m.sqlite")
    with pytest.raises(ImportFileError, match="is not valid JSON"):
        parse_file(path, ImportHints())
    assert store.rows() == []


# -- property ------------------------------------------------------------------------

_FIGURES = st.one_of(
    # an infinity makes the file no JSON at all: its own example test below
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(),
    st.sampled_from([1e308, 0, -1, 5e-324, 250.0, 1e8, 1.0000001e8, 10**400]),
)
_WHOLE = st.one_of(st.integers(), st.sampled_from([10**400, 0, -1, 100_000, 100_001]))
_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["x" * 257, "x" * 256, "\x1b[2J", "a\u202eb", "\x85", "ok", "a\nb"]),
)
_EDITS = st.one_of(
    st.tuples(st.sampled_from(["tokens_per_s", "estimate_tokens_per_s"]), _FIGURES),
    st.tuples(st.sampled_from(["count", "seq_in", "seq_out", "concurrency"]), _WHOLE),
    st.tuples(st.sampled_from(sorted(TEXT_FIELDS)), _TEXT),
)


@pytest.mark.reaches(accepted=20, refused=40)
@settings(max_examples=120, deadline=None)
@given(edits=st.lists(_EDITS, min_size=1, max_size=3))
def test_every_accepted_row_is_possible_and_a_refused_file_stores_nothing(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[str, Any]]
) -> None:
    folder = tmp_path_factory.mktemp("import")
    path = folder / "m.json"
    path.write_text(_export(_row(), _row(**dict(edits))), "utf-8")
    store = MeasurementStore(folder / "m.sqlite")
    try:
        result = parse_file(path, ImportHints())
    except ImportFileError as exc:
        assert exc.reason.startswith("measurement 2: ")
        assert store.rows() == []
        reach.reached("refused")
        return
    store.add(result.rows)
    for stored in store.rows():
        row = stored.measurement
        ceiling = MAX_TOKENS_PER_S_PER_GPU * row.count
        for figure in (row.tokens_per_s, row.estimate_tokens_per_s):
            assert figure is None or (math.isfinite(figure) and 0 < figure <= ceiling)
        for name, (limit, multiline) in TEXT_FIELDS.items():
            text = getattr(row, name)
            assert text is None or (len(text) <= limit and UNSAFE.search(text) is None)
            assert text is None or multiline or "\n" not in text
        assert len(row.model) <= MAX_NAME_CHARS
    if len(result.rows) == 2:
        reach.reached("accepted")
