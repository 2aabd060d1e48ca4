"""``measurements import`` of hostile files, per format it reads: exit 0 or 2, never a
traceback; on exit 2 the output names the file; no row stored before is lost.

Each format starts from its verbatim sample (tests/planning/measurement_files, sources
in test_measurement_import.py and test_measurement_import_gpudesk.py) and hypothesis
changes it: a field's value replaced by a hostile one (NaN/infinity as text, 1e999,
which JSON reads as infinity, huge or negative numbers, nesting, long strings), a cell
of a CSV or markdown row replaced, the text cut short, or bytes put in.
"""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk.cli import main
from gpudesk.measurements.file_import import ImportHints, parse_file
from gpudesk.measurements.store import (
    MeasurementStore,
    StoredMeasurement,
    export_document,
)

FILES = Path(__file__).parents[1] / "planning" / "measurement_files"
TABLE = FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md"
#: written as the bare JSON number 1e999, which Python's json reads as infinity
HUGE = "__1e999__"

HOSTILE_VALUES = st.one_of(
    st.sampled_from(["nan", "inf", HUGE, "1e999", 10**30, -1]),
    st.sampled_from(
        [None, True, "", "nan", "inf", "-inf", "1e999", HUGE, -1, 0, 10**30, 2**63, -(2**63),
         1e308, "9" * 5000, "x" * 20_000, [], {}, [[[[]]]], "|", "\n", ",", '"', "±"]
    ),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)  # fmt: skip
HOSTILE_TEXT = st.one_of(
    st.sampled_from(["nan", "inf", "1e999", "-5", "9" * 400, "a|b", "1,5", '"', "\n", "±"]),
    st.text(max_size=40),
)


def _sample_json(name: str) -> Any:
    return json.loads((FILES / name).read_text(encoding="utf-8"))


def _dumps(document: Any) -> str:
    return json.dumps(document).replace(f'"{HUGE}"', "1e999")


def _with_value(document: Any, key: str, value: Any) -> Any:
    """``document`` (an object, or a list of them) with ``key`` set to ``value`` in its
    first object and in any nested object that has it (verify.measurement, ...)."""
    if isinstance(document, list):
        return [_with_value(document[0], key, value), *document[1:]]
    out = {}
    for name, item in document.items():
        if name == key:
            out[name] = value
        elif isinstance(item, dict):
            out[name] = _with_value(item, key, value)
        else:
            out[name] = item
    return out


def _keys(document: Any) -> list[str]:
    first = document[0] if isinstance(document, list) else document
    found: list[str] = []
    for name, item in first.items():
        found.append(name)
        if isinstance(item, dict):
            found.extend(_keys(item))
    return sorted(set(found))


JSON_SAMPLES = {
    "llama-bench json": "llama-bench-cann-ascend.json",
    "vllm bench serve": "vllm-bench-serve-llama-3.1-8b.json",
    "vllm bench throughput": "vllm-bench-throughput.json",
    "gpudesk verify": "gpudesk-speed-verify.json",
    "gpudesk verify, old": "gpudesk-speed-verify-before-measurement-key.json",
    "gpudesk bench": "gpudesk-bench-numpy.json",
}


@cache
def _export_text() -> str:
    """An export of the RTX 4090 table's rows (fixed, so every example draws alike)."""
    rows = parse_file(TABLE, ImportHints(gpu_id="rtx-4090")).rows
    stored = [
        StoredMeasurement(id=i, stored_at="2026-12-02T00:00:00+00:00", measurement=row)
        for i, row in enumerate(rows, 1)
    ]
    return json.dumps(export_document(stored))


def _export_sample() -> Any:
    return json.loads(_export_text())


def _text_of(fmt: str) -> str:
    if fmt == "gpudesk export":
        return _export_text()
    name = {
        "llama-bench jsonl": "llama-bench-cann-ascend.jsonl",
        "llama-bench csv": "llama-bench-cann-ascend.csv",
        "llama-bench markdown": TABLE.name,
    }.get(fmt) or JSON_SAMPLES[fmt]
    return (FILES / name).read_text(encoding="utf-8")


@st.composite
def _field_changed(draw: st.DrawFn, fmt: str) -> str:
    """The format's sample with one field (JSON) or cell (CSV, markdown) made hostile."""
    if fmt in JSON_SAMPLES or fmt == "gpudesk export":
        document = _export_sample() if fmt == "gpudesk export" else _sample_json(JSON_SAMPLES[fmt])
        if fmt == "gpudesk export":
            key = draw(st.sampled_from(["version", "format", "measurements", *_keys(
                document["measurements"][0])]))  # fmt: skip
            if key in ("version", "format", "measurements"):
                document[key] = draw(HOSTILE_VALUES)
            else:
                document["measurements"][0][key] = draw(HOSTILE_VALUES)
            return _dumps(document)
        key = draw(st.sampled_from(_keys(document)))
        return _dumps(_with_value(document, key, draw(HOSTILE_VALUES)))
    if fmt == "llama-bench jsonl":
        record = json.loads(_text_of(fmt).splitlines()[0])
        key = draw(st.sampled_from(sorted(record)))
        record[key] = draw(HOSTILE_VALUES)
        return _dumps(record) + "\n" + _dumps(record)
    lines = _text_of(fmt).splitlines()
    if fmt == "llama-bench csv":
        header, row = lines[0].split(","), lines[1].split(",")
        index = draw(st.integers(0, len(row) - 1))
        row[index] = draw(HOSTILE_TEXT)
        return ",".join(header) + "\n" + ",".join(row) + "\n"
    rows = [i for i, line in enumerate(lines) if line.startswith("| llama")]
    at = draw(st.sampled_from(rows))
    cells = lines[at].strip("|").split("|")
    cells[draw(st.integers(0, len(cells) - 1))] = draw(HOSTILE_TEXT)
    lines[at] = "|" + "|".join(cells) + "|"
    return "\n".join(lines)


@st.composite
def _damaged(draw: st.DrawFn, fmt: str) -> bytes:
    """The sample cut short, or with bytes put in, or one field made hostile."""
    how = draw(st.sampled_from(["field", "cut", "bytes"]))
    if how == "field":
        return draw(_field_changed(fmt)).encode("utf-8", "surrogatepass")
    data = _text_of(fmt).encode("utf-8")
    at = draw(st.integers(0, len(data)))
    if how == "cut":
        return data[:at]
    return data[:at] + draw(st.binary(min_size=1, max_size=20)) + data[at:]


FORMATS = [
    "llama-bench json", "llama-bench jsonl", "llama-bench csv", "llama-bench markdown",
    "vllm bench serve", "vllm bench throughput", "gpudesk export", "gpudesk verify",
    "gpudesk verify, old", "gpudesk bench",
]  # fmt: skip


def _stored() -> set[tuple[int, str]]:
    return {(row.id, row.measurement.key()) for row in MeasurementStore().rows()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_hostile_file_of_each_format_is_refused_by_name_and_loses_nothing(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["measurements", "import", str(TABLE), "--gpu", "rtx-4090"]) == 0
    capsys.readouterr()

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=_damaged(fmt))
    def check(data: bytes) -> None:
        before = _stored()
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "result.json"
            path.write_bytes(data)
            code = main(["measurements", "import", str(path), "--gpu", "rtx-4090"])
            out, err = capsys.readouterr()
        assert code in (0, 2), (code, out, err)
        assert "Traceback" not in out + err
        if code == 2:
            assert str(path) in out + err
        assert before <= _stored()

    check()


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f in JSON_SAMPLES or "jsonl" in f])
@pytest.mark.parametrize("value", [HUGE, "nan", "inf", "-inf"])
def test_a_non_finite_number_in_any_field_is_refused_not_a_traceback(
    fmt: str, value: str, tmp_path: Path
) -> None:
    """int() of NaN or infinity raises: each field of each JSON sample, set to one."""
    from gpudesk.measurements.file_import import ImportFileError

    if fmt == "llama-bench jsonl":
        document: Any = [json.loads(_text_of(fmt).splitlines()[0])]
    else:
        document = _sample_json(JSON_SAMPLES[fmt])
    path = tmp_path / "result.json"
    for key in _keys(document):
        changed = _with_value(document, key, value)
        text = _dumps(changed[0] if fmt == "llama-bench jsonl" else changed)
        path.write_text(text, encoding="utf-8")
        try:
            result = parse_file(path, ImportHints(gpu_id="rtx-4090"))
        except ImportFileError:
            continue
        assert all(row.tokens_per_s > 0 for row in result.rows), key
