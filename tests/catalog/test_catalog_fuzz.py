"""Property test for catalog folders (issue 20): hostile values and hostile file kinds.

Each example writes a folder with one good entry, one entry whose fields get
hostile TOML values (booleans and strings for numbers, NaN/inf, huge and
negative numbers, deep arrays, extreme dates, markup and formula names), and
one hostile file (FIFO, /dev/zero link, huge, deeply nested, BOM, binary).
The loader never raises or hangs, the good entry always loads, every
problem names its file, whatever loads exports to JSON without NaN and to
CSV without formulas, ``gpudesk --catalog DIR list --json`` exits 0 with
strict JSON, and no file in the folder changes.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from catalog_factory import entry_data, to_toml
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk.catalog.loader import load_directory
from gpudesk.catalog.records import entries_csv, entry_record
from gpudesk.cli import main

TOML_VALUES = [
    "true",
    "false",
    '"16"',
    '""',
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e308",
    "99999999999999999999",
    "9223372036854775807",
    "0001-01-01",
    "9999-12-31",
    "1979-05-27T07:32:00Z",
    "[]",
    "[1, 2]",
    "{}",
    "{ a = 1 }",
    '"=HYPERLINK(\\"x\\")"',
    "\"<img src='/tmp/x.png'>\"",
    '"' + "x" * 5000 + '"',
    "[" * 300 + "]" * 300,
]
FIELDS = [
    *entry_data("x"),
    "fp16_tensor_tflops",
    "price_usd",
    "price_date",
    "tdp_w",
    "notes",
    "cloud_rates",
    "pci_device_ids",
    "nvml_names",
    "sparsity_speedup",
]


def _hostile_file(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "huge":
        with open(path, "wb") as handle:
            handle.truncate(2 * 2**20)
    elif kind == "deep":
        path.write_text("a = " + "[" * 20_000 + "]" * 20_000, "utf-8")
    elif kind == "deep-table":
        path.write_text("a = " + "{ b = " * 2000 + "1" + " }" * 2000, "utf-8")
    elif kind == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + to_toml(entry_data(path.stem)).encode())
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 8)
    elif kind == "folder":
        path.mkdir()
    elif kind == "loop":
        path.symlink_to(path)


def _state(folder: Path) -> dict[str, tuple[int, object]]:
    out: dict[str, tuple[int, object]] = {}
    for item in folder.rglob("*"):
        info = item.lstat()
        content = item.read_bytes() if item.is_file() and not item.is_symlink() else None
        out[str(item)] = (info.st_mode, content if content is None else hash(content))
    return out


COUNTS = {"examples": 0, "entries_loaded": 0, "problems": 0}


@pytest.mark.timeout(900)  # many examples; a slow shared machine
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    hostile_fields=st.dictionaries(
        st.sampled_from(FIELDS), st.sampled_from(TOML_VALUES), min_size=1, max_size=4
    ),
    file_kind=st.sampled_from(
        ["fifo", "zero", "huge", "deep", "deep-table", "bom", "binary", "folder", "loop"]
    ),
)
def test_any_catalog_folder_loads_what_is_good_and_names_the_rest(
    tmp_path: Path,
    hostile_fields: dict[str, str],
    file_kind: str,
) -> None:
    folder = tmp_path / "catalog"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "good.toml").write_text(to_toml(entry_data("good")), "utf-8")
    base = {k: v for k, v in entry_data("hostile").items() if k not in hostile_fields}
    text = to_toml(base) + "".join(f"{key} = {value}\n" for key, value in hostile_fields.items())
    (folder / "hostile.toml").write_text(text, "utf-8")
    _hostile_file(file_kind, folder / f"{file_kind}.toml")
    before = _state(folder)

    catalog = load_directory(folder)

    COUNTS["examples"] += 1
    COUNTS["entries_loaded"] += len(catalog.entries)
    COUNTS["problems"] += len(catalog.problems)
    assert "good" in [entry.id for entry in catalog.entries]
    for problem in catalog.problems:
        assert problem.path.parent == folder
        assert problem.field and problem.message
    for entry in catalog.entries:
        json.dumps(entry_record(entry), allow_nan=False)
    for row in csv.reader(io.StringIO(entries_csv(catalog.entries))):
        for cell in row:
            assert not cell.startswith(("=", "@")), cell

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--catalog", str(folder), "list", "--search", "good", "--json"])
    assert code == 0, err.getvalue()
    assert [item["id"] for item in json.loads(out.getvalue())] == ["good"]
    assert _state(folder) == before


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> object:
    yield None
    target = os.environ.get("GPUDESK_FUZZ_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"catalog": COUNTS}) + "\n")
