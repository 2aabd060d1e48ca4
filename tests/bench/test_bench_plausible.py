"""Issue 39 item 5: imported benchmark figures are checked against physics.

A result file whose figures, whole numbers or text are impossible is refused
whole with :class:`ResultFileError` naming the field and the reason, and
nothing is saved; realistic runs still import.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
import reach
from hypothesis import given, settings, strategies as st

from gpudesk.bench.history import import_run, list_runs
from gpudesk.bench.plausible import (
    ABSOLUTE_CEILING,
    MAX_FRACTION_OF_PEAK,
    MAX_NAME_CHARS,
    PEAK_MULTIPLE,
    catalog_entry,
    text_problem,
)
from gpudesk.bench.result_file import parse_result
from gpudesk.bench.results import BenchResult, ResultFileError
from gpudesk.cli import main
from gpudesk.terminal_text import UNSAFE

FILES = Path(__file__).parents[1] / "planning" / "measurement_files"
#: The catalog's H100 SXM: BF16 dense 989.4 TFLOPS, 3,350 GB/s.
H100 = "h100-sxm5"


def _valid() -> dict[str, Any]:
    return {
        "backend": "torch",
        "device": {
            "kind": "cuda",
            "index": 0,
            "name": "NVIDIA H100 80GB HBM3",
            "memory_total_bytes": 85_520_809_984,
            "multiprocessor_count": 132,
        },
        "catalog_id": H100,
        "results": [
            {
                "test": "gemm",
                "dtype": "bf16",
                "size": 8192,
                "value": 650.0,
                "unit": "TFLOPS",
                "min": 640.0,
                "max": 655.0,
                "peak": 989.4,
                "fraction_of_peak": 650.0 / 989.4,
                "repetitions": 10,
                "warmup": 2,
                "timer": "cuda_events",
            },
            {"test": "copy", "dtype": "bytes", "size": 2**28, "value": 2900.0, "unit": "GB/s"},
        ],
        "environment": {"torch": "2.5.1", "logical_cpus": 64},
        "schema_version": 1,
        "started_at": "2026-05-01T14:03:00+00:00",
        "duration_s": 12.5,
        "notes": ["a note"],
    }


def _with(path: tuple[Any, ...], value: Any) -> str:
    document = _valid()
    target: Any = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return json.dumps(document, ensure_ascii=True)


def _refused(text: str) -> ResultFileError:
    with pytest.raises(ResultFileError) as caught:
        parse_result(text, "run.json")
    return caught.value


def test_the_valid_run_and_the_bundled_file_load() -> None:
    assert parse_result(json.dumps(_valid()), "run.json").catalog_id == H100
    bundled = (FILES / "gpudesk-bench-numpy.json").read_text("utf-8")
    assert parse_result(bundled, "numpy.json").results
    entry = catalog_entry(H100)
    assert entry is not None and entry.bf16_tensor_tflops is not None


@pytest.mark.parametrize(
    ("path", "value", "field", "words"),
    [
        # The bug's four: 1e308 TFLOPS, a 1e308 fraction, a 401-digit integer, a 1 MB name.
        (("results", 0, "value"), 1e308, "results.0.value", "catalog peak of the"),
        (("results", 0, "fraction_of_peak"), 1e308, "results.0.fraction_of_peak", "more than"),
        (("results", 0, "size"), 10**400, "results.0.size", "401-digit"),
        (("device", "index"), 10**400, "device.index", "401-digit"),
        (("environment", "logical_cpus"), 10**400, "environment.logical_cpus", "401-digit"),
        (("device", "name"), "x" * 2**20, "device.name", "1,048,576 characters"),
        # Not finite (JSON's 1e999 reads as infinity), not positive.
        (("results", 0, "value"), -650.0, "results.0.value", ""),
        (("results", 0, "value"), 0.0, "results.0.value", "not a positive figure"),
        (("results", 0, "max"), 0.0, "results.0.max", "not a positive figure"),
        (("results", 0, "fraction_of_peak"), 0.0, "results.0.fraction_of_peak", "positive"),
        (("results", 0, "peak"), 1e308, "results.0.peak", "peak"),
        # Just over twice the catalog peak; the copy over twice the H100's 3,350 GB/s.
        (("results", 0, "value"), 2 * 989.4 * 1.01, "results.0.value", "989.4"),
        (("results", 1, "value"), 7000.0, "results.1.value", "3,350"),
        # A fraction that is not value / peak, and one over the stated bound.
        (("results", 0, "fraction_of_peak"), 0.9, "results.0.fraction_of_peak", "value ÷ peak"),
        (("results", 0, "fraction_of_peak"), 2.5, "results.0.fraction_of_peak", "more than"),
        # Whole numbers: negative device index, absurd repetitions, telemetry-free bounds.
        (("device", "index"), -1, "device.index", "outside 0"),
        (("results", 0, "repetitions"), 10**12, "results.0.repetitions", "outside"),
        (("duration_s",), 1e12, "duration_s", "outside"),
        # Text: ESC, a C1 CSI, DEL, a bidi override, a newline in a one-line name.
        (("device", "name"), "NVIDIA \x1b[31mH100", "device.name", "U+001B"),
        (("backend",), "torch\x9b2J", "backend", "U+009B"),
        (("results", 0, "timer"), "cuda\x7f", "results.0.timer", "U+007F"),
        (("device", "vendor"), "NVIDIA\u202e", "device.vendor", "U+202E"),
        (("device", "name"), "H100\nfake line", "device.name", "U+000A"),
        (("notes",), ["ok", "bell\x07"], "notes.1", "U+0007"),
        (("environment", "torch"), "2.5\x1b]52;c;AAAA\x07", "environment.torch", "U+001B"),
    ],
    ids=lambda value: repr(value)[:24],
)
def test_impossible_values_are_refused_by_field(
    path: tuple[Any, ...], value: Any, field: str, words: str
) -> None:
    error = _refused(_with(path, value))
    assert error.field == field
    assert words in error.message


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_figures_are_refused(constant: str) -> None:
    text = _with(("results", 0, "value"), "MARK").replace('"MARK"', constant)
    error = _refused(text)
    assert error.field in ("(json)", "results.0.value")


def test_an_unknown_gpu_is_held_to_the_absolute_ceiling() -> None:
    document = _valid()
    document["catalog_id"] = None
    row = document["results"][0]
    row.update(value=3000.0, min=3000.0, max=3000.0, peak=None, fraction_of_peak=None)
    assert parse_result(json.dumps(document), "run.json").results[0].value == 3000.0
    row.update(value=ABSOLUTE_CEILING["TFLOPS"] * 1.5, max=ABSOLUTE_CEILING["TFLOPS"] * 1.5)
    error = _refused(json.dumps(document))
    assert error.field == "results.0.value"
    assert "no catalog peak" in error.message


def test_a_refused_import_saves_nothing_and_the_list_is_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_valid()), "utf-8")
    import_run(good, folder)
    before = sorted(folder.iterdir())
    for number, text in enumerate(
        [
            _with(("results", 0, "value"), 1e308),
            _with(("results", 0, "fraction_of_peak"), 1e308),
            _with(("results", 0, "size"), 10**400),
            _with(("device", "name"), "x" * 2**20),
        ]
    ):
        crafted = tmp_path / f"crafted-{number}.json"
        crafted.write_text(text, "utf-8")
        with pytest.raises(ResultFileError):
            import_run(crafted, folder)
        assert sorted(folder.iterdir()) == before
    items, problems = list_runs(folder)
    assert [item.result.results[0].value for item in items] == [650.0]
    assert problems == []


def test_an_import_path_with_a_control_character_reloads(tmp_path: Path) -> None:
    source = tmp_path / "run\x1b[2J.json"
    source.write_text(json.dumps(_valid()), "utf-8")
    item = import_run(source, tmp_path / "history")
    assert item.result.imported_from is not None
    assert "\x1b" not in item.result.imported_from
    items, problems = list_runs(tmp_path / "history")
    assert len(items) == 1 and problems == []


def test_the_cli_names_the_field_and_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``measurements import`` reads bench files; a refused one is a file error, exit 2."""
    crafted = tmp_path / "run.json"
    crafted.write_text(_with(("results", 0, "value"), 1e308), "utf-8")
    code = main(["measurements", "import", str(crafted)])
    captured = capsys.readouterr()
    assert code == 2
    assert "results.0.value" in captured.out
    assert "not a possible measurement" in captured.out
    assert "Traceback" not in captured.out + captured.err
    assert "Added 0" in captured.out


def test_text_rules() -> None:
    assert text_problem("NVIDIA H100 80GB HBM3") is None
    assert text_problem("line one\nline two", multiline=True) is None
    assert text_problem("x" * MAX_NAME_CHARS) is None
    assert text_problem("x" * (MAX_NAME_CHARS + 1)) is not None
    assert text_problem("a\u2028b") is not None
    assert text_problem("tab\there") is not None


# -- property ------------------------------------------------------------------------

_FIGURES = [("results", 0, name) for name in ("value", "min", "max", "peak", "fraction_of_peak")]
_WHOLE = [("results", 0, "size"), ("results", 0, "repetitions"), ("device", "index")]
_TEXT = [("device", "name"), ("backend",), ("results", 0, "timer"), ("environment", "torch")]

_HOSTILE_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e308, -0.0, 0.0, 5e-324, 989.4, 1978.8, 1979.0, 650.0, 0.657, 2.0, 2.01]),
)
_HOSTILE_INTS = st.one_of(
    st.integers(), st.sampled_from([10**400, -1, 0, 2**63, 2**20, 2**20 + 1, 4095, 4096])
)
_HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["x" * 257, "x" * 256, "\x1b[2J", "a\u202eb", "\x85", "ok", "a\nb"]),
)


def _edit(draw: st.DrawFn) -> tuple[tuple[Any, ...], Any]:
    kind = draw(st.sampled_from(["figure", "whole", "text"]))
    if kind == "figure":
        return draw(st.sampled_from(_FIGURES)), draw(_HOSTILE_FLOATS)
    if kind == "whole":
        return draw(st.sampled_from(_WHOLE)), draw(_HOSTILE_INTS)
    return draw(st.sampled_from(_TEXT)), draw(_HOSTILE_TEXT)


@st.composite
def hostile_documents(draw: st.DrawFn) -> str:
    document = copy.deepcopy(_valid())
    for _ in range(draw(st.integers(1, 3))):
        path, value = _edit(draw)
        target: Any = document
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    return json.dumps(document, ensure_ascii=True)


def _assert_possible(result: BenchResult) -> None:
    for row in result.results:
        entry = catalog_entry(result.catalog_id)
        for figure in (row.value, row.min, row.max, row.peak, row.fraction_of_peak):
            assert figure is None or (math.isfinite(figure) and figure > 0)
        if row.value is not None:
            assert row.value <= max(PEAK_MULTIPLE * 989.4, 3350 * PEAK_MULTIPLE)
            assert entry is not None
        if row.fraction_of_peak is not None:
            assert row.fraction_of_peak <= MAX_FRACTION_OF_PEAK
        assert 0 <= row.size <= 2**50
        assert row.repetitions is None or 0 <= row.repetitions <= 10**6
    assert result.device is not None
    assert 0 <= result.device.index <= 4095
    for text in (result.device.name, result.backend, *(row.timer or "" for row in result.results)):
        assert len(text) <= MAX_NAME_CHARS
        assert UNSAFE.search(text) is None
        assert "\n" not in text and "\t" not in text


@pytest.mark.reaches(accepted=25, refused=100)
@settings(max_examples=200, deadline=None)
@given(text=hostile_documents())
def test_every_accepted_import_is_possible_and_every_refused_one_saves_nothing(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    folder = tmp_path_factory.mktemp("history")
    source = folder.parent / f"{folder.name}.json"
    source.write_text(text, "utf-8")
    try:
        item = import_run(source, folder)
    except ResultFileError as exc:
        assert exc.field and exc.message
        assert list(folder.iterdir()) == []
        assert list_runs(folder) == ([], [])
        reach.reached("refused")
        return
    _assert_possible(item.result)
    items, problems = list_runs(folder)
    assert problems == [] and [found.result for found in items] == [item.result]
    reach.reached("accepted")
