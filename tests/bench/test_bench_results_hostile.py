"""Issue 20 items 5 and 10: crafted benchmark JSON is refused, by field, and never crashes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpudesk.bench.history import import_run, list_runs, save_run
from gpudesk.bench.result_file import parse_result
from gpudesk.bench.results import ResultFileError


def _valid() -> dict[str, object]:
    return {
        "backend": "torch",
        "device": {"kind": "cuda", "name": "NVIDIA H100 80GB HBM3"},
        "results": [
            {"test": "gemm", "dtype": "bf16", "size": 8192, "value": 650.0, "unit": "TFLOPS"}
        ],
        "started_at": "2026-05-01T14:03:00+00:00",
    }


def _refused(text: str) -> ResultFileError:
    with pytest.raises(ResultFileError) as caught:
        parse_result(text, "run.json")
    return caught.value


def test_100k_deep_nesting_is_refused() -> None:
    error = _refused('{"environment": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested too deeply" in error.message


def test_moderate_nesting_in_environment_is_refused_by_location() -> None:
    data = _valid()
    deep: object = "x"
    for _ in range(40):
        deep = {"k": deep}
    data["environment"] = {"blas": deep}
    error = _refused(json.dumps(data))
    assert error.field.startswith("environment.blas")
    assert "nested deeper" in error.message


@pytest.mark.parametrize(
    "started_at",
    ["0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59", "1000-01-01T00:00:00Z"],
)
def test_extreme_start_times_are_refused(started_at: str) -> None:
    data = _valid()
    data["started_at"] = started_at
    error = _refused(json.dumps(data))
    assert error.field == "started_at"
    assert "1970" in error.message


def test_a_lone_surrogate_in_a_name_is_refused() -> None:
    text = json.dumps(_valid()).replace("NVIDIA H100", "NVIDIA \\ud800H100")
    error = _refused(text)
    assert error.field == "device.name"
    assert "surrogate" in error.message


@pytest.mark.parametrize("version", ["999", "1", 1.0, True, 0, -3, None])
def test_schema_version_must_be_a_whole_number(version: object) -> None:
    data = _valid()
    data["schema_version"] = version
    error = _refused(json.dumps(data))
    assert error.field == "schema_version"


@pytest.mark.parametrize(
    ("where", "value"),
    [("value", True), ("value", "650"), ("size", 8192.5), ("size", "8192"), ("size", False)],
)
def test_measurement_types_are_strict(where: str, value: object) -> None:
    data = _valid()
    data["results"][0][where] = value  # type: ignore[index]
    error = _refused(json.dumps(data))
    assert error.field == f"results.0.{where}"


def test_duration_true_is_not_a_number() -> None:
    data = _valid()
    data["duration_s"] = True
    assert _refused(json.dumps(data)).field == "duration_s"


def test_integers_still_count_as_numbers() -> None:
    data = _valid()
    data["results"][0]["value"] = 650  # type: ignore[index]
    assert parse_result(json.dumps(data), "run.json").results[0].value == 650.0


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, "utf-8", errors="surrogatepass")
    return path


def test_one_bad_history_file_is_skipped_and_the_rest_show(tmp_path: Path) -> None:
    good = parse_result(json.dumps(_valid()), "good.json")
    save_run(good, tmp_path)
    crafted = _valid()
    crafted["started_at"] = "0001-01-01T00:00:00+23:59"
    _write(tmp_path, "early.json", json.dumps(crafted))
    _write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    os.mkfifo(tmp_path / "fifo.json")
    items, problems = list_runs(tmp_path)
    assert [item.result.device_name for item in items] == ["NVIDIA H100 80GB HBM3"]
    assert items[0].title  # the local-time title renders
    assert sorted(Path(p.source).name for p in problems) == ["deep.json", "early.json", "fifo.json"]


def test_schema_999_as_text_is_refused_on_import_and_nothing_is_saved(tmp_path: Path) -> None:
    data = _valid()
    data["schema_version"] = "999"
    source = _write(tmp_path / "in", "run.json", json.dumps(data))
    with pytest.raises(ResultFileError, match="schema_version"):
        import_run(source, tmp_path / "history")
    assert not (tmp_path / "history").exists() or not list((tmp_path / "history").iterdir())


def test_an_import_from_a_long_non_utf8_path_reloads(tmp_path: Path) -> None:
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/\xff" + b"d" * 200))
    source = _write(folder, "run.json", json.dumps(_valid()))
    item = import_run(source, tmp_path / "history")
    items, problems = list_runs(tmp_path / "history")
    assert problems == []
    assert [i.path for i in items] == [item.path]
