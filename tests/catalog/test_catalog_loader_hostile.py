"""Issue 20 items 2, 3 and 12: catalog folders holding things that are not entry files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import tomli
from catalog_factory import entry_data, to_toml, write_entry
from hypothesis import given, settings, strategies as st

from gpudesk.catalog import loader
from gpudesk.catalog.loader import (
    MAX_ENTRY_FILE_BYTES,
    load_catalog,
    load_directory,
    read_entry_file,
)
from gpudesk.paths import user_catalog_dir


def _problems(directory: Path) -> dict[str, str]:
    return {problem.path.name: problem.message for problem in load_directory(directory).problems}


def test_a_fifo_entry_and_a_fifo_meta_file_are_skipped_without_hanging(tmp_path: Path) -> None:
    write_entry(tmp_path, "good")
    os.mkfifo(tmp_path / "stuck.toml")
    os.mkfifo(tmp_path / "_meta.toml")
    started = time.monotonic()
    catalog = load_directory(tmp_path)
    assert time.monotonic() - started < 5
    assert [entry.id for entry in catalog.entries] == ["good"]
    problems = _problems(tmp_path)
    assert "a FIFO" in problems["stuck.toml"]
    assert "a FIFO" in problems["_meta.toml"]


def test_a_symlink_to_dev_zero_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    assert "character device" in _problems(tmp_path)["zero.toml"]


def test_a_file_over_the_size_cap_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with open(big, "wb") as handle:
        handle.truncate(MAX_ENTRY_FILE_BYTES + 1)
    assert "larger than 256 KiB" in _problems(tmp_path)["big.toml"]


def test_deep_nesting_is_that_files_problem(tmp_path: Path) -> None:
    write_entry(tmp_path, "good")
    (tmp_path / "deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", "utf-8")
    catalog = load_directory(tmp_path)
    assert [entry.id for entry in catalog.entries] == ["good"]
    assert _problems(tmp_path)["deep.toml"] == "nested too deeply"


def test_any_exception_while_reading_one_file_is_that_files_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_entry(tmp_path, "good")
    write_entry(tmp_path, "cursed")
    real = loader.CatalogEntry.model_validate

    def explode(data: object) -> object:
        if isinstance(data, dict) and data.get("id") == "cursed":
            raise MemoryError("simulated")
        return real(data)

    monkeypatch.setattr(loader.CatalogEntry, "model_validate", explode)
    catalog = load_directory(tmp_path)
    assert [entry.id for entry in catalog.entries] == ["good"]
    assert "MemoryError" in _problems(tmp_path)["cursed.toml"]


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + to_toml(entry_data("bom")).encode("utf-8"))
    entry, problems = read_entry_file(path)
    assert problems == []
    assert entry is not None and entry.id == "bom"


def test_an_unreadable_subfolder_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root reads every folder whatever its mode, so the refusal is simulated at os.scandir.
    write_entry(tmp_path / "ok", "good")
    locked = tmp_path / "locked"
    write_entry(locked, "hidden")
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if Path(str(path)) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    catalog = load_directory(tmp_path)
    assert [entry.id for entry in catalog.entries] == ["good"]
    assert [(p.path, p.field, p.message) for p in catalog.problems] == [
        (locked, "(folder)", "cannot read: Permission denied")
    ]


def test_a_user_catalog_that_is_not_a_folder_is_reported() -> None:
    folder = user_catalog_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("oops", "utf-8")
    catalog = load_catalog()
    assert any(p.path == folder and p.message == "not a folder" for p in catalog.problems)
    assert catalog.entries  # the bundled catalog still loads


def test_a_folder_name_too_long_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    catalog = load_directory(tmp_path / ("x" * 300))
    assert catalog.problems[0].field == "(folder)"
    assert "too long" in catalog.problems[0].message


def test_catalog_date_of_the_wrong_type_is_reported(tmp_path: Path) -> None:
    (tmp_path / "_meta.toml").write_text('catalog_date = "yesterday"\n', "utf-8")
    catalog = load_directory(tmp_path)
    assert catalog.catalog_date is None
    assert [p.field for p in catalog.problems] == ["catalog_date"]


_PARSER_CASES = {
    "plain.toml": None,  # a valid entry from the factory
    "syntax.toml": 'id = "syntax"\nname = "unterminated\n',
    "duplicate.toml": 'id = "duplicate"\nid = "again"\n',
    "control.toml": 'id = "control"\nname = "bell \x07"\n',
    "overflow.toml": to_toml(entry_data("overflow")) + "tdp_w = 99999999999999999999999\n",
    "huge-float.toml": to_toml(entry_data("huge-float")).replace("20.0", "1e400"),
    "nan.toml": to_toml(entry_data("nan")).replace("20.0", "nan"),
    "deep.toml": "x = " + "[" * 3000 + "]" * 3000 + "\n",
    "second-bom.toml": "\ufeff\ufeff" + to_toml(entry_data("second-bom")),
    "surrogate.toml": 'id = "surrogate"\nname = "\\uD800"\n',
    "datetime.toml": to_toml(entry_data("datetime")) + "price_date = 2025-01-02T03:04:05+01:00\n",
}


def _loaded(directory: Path) -> tuple[list[object], list[tuple[str, str, str]]]:
    catalog = load_directory(directory)
    return catalog.entries, [(p.path.name, p.field, p.message) for p in catalog.problems]


def test_the_fast_toml_parser_loads_and_rejects_exactly_as_tomli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Rust parser only speeds loading up: entries, problems and messages are tomli's."""
    assert loader._fast_loads is not None  # the fast path is installed and under test
    for name, text in _PARSER_CASES.items():
        if text is None:
            write_entry(tmp_path, name.removesuffix(".toml"))
        else:
            (tmp_path / name).write_text(text, "utf-8")
    fast = _loaded(tmp_path)
    monkeypatch.setattr(loader, "_fast_loads", None)
    reference = _loaded(tmp_path)
    assert fast == reference
    problems = {name: message for name, _field, message in reference[1]}
    assert problems["syntax.toml"].startswith("syntax error: ")
    assert problems["deep.toml"] == "nested too deeply"
    assert [entry.id for entry in fast[0]] == ["plain"]  # type: ignore[attr-defined]


@given(st.text(alphabet='ab=[]{}."\\\n 1.e-+#:T', max_size=60))
@settings(max_examples=200, deadline=None)
def test_the_fast_toml_parser_agrees_with_tomli_on_any_text(text: str) -> None:
    reference: object
    try:
        reference = tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        reference = f"syntax error: {exc}"
    except RecursionError:
        reference = "nested too deeply"
    data, problem = loader._parse_toml(Path("x.toml"), text)
    assert (data if problem is None else problem.message) == reference
