"""Issue 20 items 2, 3 and 12: catalog folders holding things that are not entry files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from catalog_factory import entry_data, to_toml, write_entry

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
