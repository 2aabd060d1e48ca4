"""Property test for benchmark JSON from anywhere (issue 20): history files and imports.

A valid ``gpudesk bench --json`` document gets one to three hostile edits
(a value replaced by a boolean, a number as text, NaN, a huge or negative
number, deep nesting, an extreme date, a lone surrogate, a wrong schema
version), or is replaced by arbitrary JSON text. Whatever comes in:
``parse_result`` raises only :class:`ResultFileError` (naming the file) or
returns a result whose JSON is strict (no NaN/Infinity), reloads equal and
renders in the CLI and history list; in a history folder the bad file is
listed as a problem and the good run still shows; no file changes on import.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk.bench.history import import_run, list_runs, save_run
from gpudesk.bench.result_file import parse_result
from gpudesk.bench.results import BenchResult, ResultFileError
from gpudesk.cli.bench_cmd import render_text


def _valid() -> dict[str, Any]:
    return {
        "backend": "torch",
        "device": {"kind": "cuda", "name": "NVIDIA H100 80GB HBM3", "index": 0},
        "catalog_id": "h100-sxm",
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
                "fraction_of_peak": 0.657,
                "repetitions": 10,
                "warmup": 2,
                "timer": "cuda-event",
            },
            {"test": "copy", "dtype": "bytes", "size": 2**28, "value": 2900.0, "unit": "GB/s"},
        ],
        "sweep": [],
        "environment": {"torch": "2.5.1", "blas": [{"library": "cublas"}]},
        "schema_version": 1,
        "mode": "quick",
        "started_at": "2026-05-01T14:03:00+00:00",
        "duration_s": 12.5,
        "notes": ["a note"],
    }


HOSTILE: list[Any] = [
    True,
    False,
    None,
    "650",
    "",
    "\ud800",
    "x\udfffy",
    -1,
    0,
    2**64,
    -(2**64),
    1e308,
    [],
    {},
    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
    "0001-01-01T00:00:00+23:59",
    "9999-12-31T23:59:59-23:59",
    "1969-12-31T23:59:59Z",
    "not a date",
    "999",
    "<img src=x>",
    "=1+1",
    "x" * 3000,
]
_NAN_MARK = "__NAN__"


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


PATHS = [*_paths(_valid()), ("schema_version",), ("imported_from",), ("telemetry",)]


def _set(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    target: Any = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


@st.composite
def documents(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(
            st.one_of(
                st.text(max_size=200),
                st.recursive(
                    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)),
                    lambda inner: (
                        st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
                    ),
                    max_leaves=30,
                ).map(json.dumps),
                st.integers(1, 200_000).map(lambda depth: "[" * depth + "]" * depth),
            )
        )
    document = _valid()
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        # A copy: HOSTILE's [] and {} are shared objects; set in place twice, one could
        # end up inside itself (json.dumps: "Circular reference detected").
        value = copy.deepcopy(draw(st.one_of(st.sampled_from(HOSTILE), st.just(_NAN_MARK))))
        try:
            _set(document, path, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit replaced the parent
    text = json.dumps(document, ensure_ascii=True)
    return text.replace(f'"{_NAN_MARK}"', draw(st.sampled_from(["NaN", "Infinity", "-Infinity"])))


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON")

    return json.loads(text, parse_constant=refuse)


COUNTS = {"documents": 0, "accepted": 0, "refused": 0}


@pytest.mark.timeout(900)  # many examples; a slow shared machine
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=documents())
def test_any_result_json_is_refused_by_field_or_loads_strictly(tmp_path: Path, text: str) -> None:
    COUNTS["documents"] += 1
    try:
        result = parse_result(text, "run.json")
    except ResultFileError as exc:
        COUNTS["refused"] += 1
        assert exc.source == "run.json"
        assert exc.field and exc.message
        return
    COUNTS["accepted"] += 1
    assert isinstance(result, BenchResult)
    again = result.to_json()
    _strict(again)
    assert parse_result(again, "again.json") == result
    render_text(result)


@pytest.mark.timeout(900)  # many examples; a slow shared machine
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=documents())
def test_a_bad_history_file_never_hides_the_good_ones(tmp_path: Path, text: str) -> None:
    folder = tmp_path / "history"
    shutil.rmtree(folder, ignore_errors=True)
    good = save_run(parse_result(json.dumps(_valid()), "good"), folder)
    crafted = folder / "crafted.json"
    crafted.write_bytes(text.encode("utf-8", "surrogatepass"))
    items, problems = list_runs(folder)
    assert good in [item.path for item in items]
    for item in items:
        assert item.title
    assert len(items) + len(problems) == 2
    source = tmp_path / "import-me.json"
    source.write_bytes(crafted.read_bytes())
    before = source.read_bytes()
    try:
        imported = import_run(source, folder)
    except ResultFileError:
        assert len(os.listdir(folder)) == 2  # nothing saved
    else:
        assert imported.path.exists()
        _strict(imported.path.read_text("utf-8"))
    assert source.read_bytes() == before


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> object:
    yield None
    target = os.environ.get("GPUDESK_FUZZ_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"bench_json": COUNTS}) + "\n")
