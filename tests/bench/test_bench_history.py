"""History: atomic saves, newest-first listing, import of foreign files."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from gpudesk.bench.history import delete_run, history_dir, import_run, list_runs, load_run, save_run
from gpudesk.bench.results import BenchResult, ResultFileError


def make_result(hour: int, backend: str = "numpy") -> BenchResult:
    return BenchResult.model_validate(
        {
            "backend": backend,
            "device": {"kind": "cpu", "name": "Test CPU"},
            "results": [
                {"test": "gemm", "dtype": "fp64", "size": 64, "value": 0.1, "unit": "TFLOPS"}
            ],
            "started_at": dt.datetime(2026, 3, 1, hour, tzinfo=dt.UTC).isoformat(),
        }
    )


def test_history_lives_in_the_user_data_folder(tmp_path: Path) -> None:
    assert "gpudesk" in str(history_dir())
    assert history_dir().name == "history"
    path = save_run(make_result(9))
    assert path.parent == history_dir()


def test_save_list_load_round_trip(tmp_path: Path) -> None:
    first = make_result(9)
    second = make_result(11, backend="torch")
    p1 = save_run(first, tmp_path)
    p2 = save_run(second, tmp_path)
    assert p1 != p2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([p1.name, p2.name]), (
        "no temporary files left behind"
    )
    items, problems = list_runs(tmp_path)
    assert problems == []
    assert [item.result for item in items] == [second, first]  # newest first
    assert load_run(p1) == first
    assert "numpy · Test CPU" in items[1].title
    assert not items[0].imported
    delete_run(p1)
    assert [item.path for item in list_runs(tmp_path)[0]] == [p2]


def test_a_broken_history_file_is_reported_and_skipped(tmp_path: Path) -> None:
    good = save_run(make_result(9), tmp_path)
    (tmp_path / "broken.json").write_text('{"backend": "numpy"', encoding="utf-8")
    items, problems = list_runs(tmp_path)
    assert [item.path for item in items] == [good]
    assert len(problems) == 1
    assert problems[0].source.endswith("broken.json")
    assert problems[0].field == "(json)"


def test_import_a_run_from_another_machine(tmp_path: Path) -> None:
    foreign = tmp_path / "server-run.json"
    foreign.write_text(make_result(7, backend="torch").to_json(), encoding="utf-8")
    store = tmp_path / "history"
    item = import_run(foreign, store)
    assert item.imported
    assert item.result.imported_from == str(foreign)
    assert item.title.endswith("· imported")
    items, _ = list_runs(store)
    assert [i.result for i in items] == [item.result]


def test_import_of_a_malformed_file_saves_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    data = json.loads(make_result(7).to_json())
    data["results"][0]["unit"] = "furlongs"
    bad.write_text(json.dumps(data), encoding="utf-8")
    store = tmp_path / "history"
    with pytest.raises(ResultFileError) as caught:
        import_run(bad, store)
    assert caught.value.source == str(bad)
    assert caught.value.field == "results.0.unit"
    assert not store.exists() or list(store.iterdir()) == []


def test_import_of_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ResultFileError, match=r"missing.json: \(file\): cannot read"):
        import_run(tmp_path / "missing.json", tmp_path / "history")
