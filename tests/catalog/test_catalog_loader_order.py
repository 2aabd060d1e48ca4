"""The folder loader's shortcuts keep the plain rules: file order, messages, the collector."""

from __future__ import annotations

import gc
import os
import tempfile
from pathlib import Path

import pytest
from catalog_factory import write_entry
from hypothesis import given, settings, strategies as st

from gpudesk.catalog import loader
from gpudesk.catalog.loader import load_catalog, load_directory, merge

# Characters that sort around the separator and each other: NUL sorts below all.
_NAME_CHARACTERS = st.sampled_from(["a", "b", "A", "0", "-", ".", "_", " ", "~", "é", "\u00a0"])
_NAME = st.text(_NAME_CHARACTERS, min_size=1, max_size=4).filter(
    lambda name: name not in {".", ".."}
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(_NAME, max_size=3), _NAME), min_size=1, max_size=12))
def test_entry_files_come_in_the_order_of_sorting_their_paths(
    layout: list[tuple[list[str], str]],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for folders, stem in layout:
            folder = root.joinpath(*folders)
            try:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{stem}.toml").write_text("x", "utf-8")
            except OSError:  # a name already taken by a file or folder
                continue
        problems: list[loader.CatalogProblem] = []
        listed = loader._entry_files(root, problems)
        expected = sorted(
            Path(folder) / name
            for folder, _subfolders, names in os.walk(root)
            for name in names
            if name.endswith(".toml") and not name.startswith(("_", "."))
        )
        assert [folder / name for folder, name, _text in listed] == expected
        assert [text for _folder, _name, text in listed] == [str(path) for path in expected]
        assert problems == []


def test_problems_keep_their_paths_and_messages(tmp_path: Path) -> None:
    write_entry(tmp_path / "b", "second")
    write_entry(tmp_path / "a", "first")
    write_entry(tmp_path / "c", "first")  # a duplicate of a/first.toml
    (tmp_path / "a" / "broken.toml").write_text("id = [", "utf-8")
    (tmp_path / "a" / "misnamed.toml").write_text(
        (tmp_path / "b" / "second.toml").read_text("utf-8"), "utf-8"
    )
    catalog = load_directory(tmp_path)
    assert [entry.id for entry in catalog.entries] == ["first", "second"]
    assert catalog.origins == {
        "first": tmp_path / "a" / "first.toml",
        "second": tmp_path / "b" / "second.toml",
    }
    assert [(problem.path, problem.field) for problem in catalog.problems] == [
        (tmp_path / "a" / "broken.toml", "(toml)"),
        (tmp_path / "a" / "misnamed.toml", "id"),
        (tmp_path / "c" / "first.toml", "id"),
    ]
    assert catalog.problems[1].message == ("id 'second' differs from the file name 'misnamed'")
    assert catalog.problems[2].message == (
        f"duplicate id 'first', already in {tmp_path / 'a' / 'first.toml'}"
    )


@pytest.mark.parametrize("enabled", [True, False])
def test_loading_leaves_the_garbage_collector_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    write_entry(tmp_path, "good")
    (tmp_path / "bad.toml").write_text("nope", "utf-8")
    seen_during: list[bool] = []
    real = loader._entry_from_text_safely

    def spy(*args: object) -> object:
        seen_during.append(gc.isenabled())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(loader, "_entry_from_text_safely", spy)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        catalog = load_directory(tmp_path)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen_during == [False, False]  # paused while the files load
    assert [entry.id for entry in catalog.entries] == ["good"]


def test_an_error_while_loading_still_resumes_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_entry(tmp_path, "good")

    def explode(*_args: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(loader, "_read_text_safely", explode)
    assert gc.isenabled()
    with pytest.raises(KeyboardInterrupt):
        load_directory(tmp_path)
    assert gc.isenabled()


def test_merging_takes_the_first_source_whole_and_later_ones_by_id(tmp_path: Path) -> None:
    write_entry(tmp_path / "one", "alpha")
    write_entry(tmp_path / "one", "beta")
    write_entry(tmp_path / "two", "beta", name="Beta, overridden")
    write_entry(tmp_path / "two", "gamma")
    merged = load_catalog(
        [tmp_path / "one", tmp_path / "two"], include_bundled=False, include_user=False
    )
    assert [entry.id for entry in merged.entries] == ["alpha", "beta", "gamma"]
    assert merged.by_id("beta") is not None
    assert merged.by_id("beta").name == "Beta, overridden"  # type: ignore[union-attr]
    assert merged.origins["beta"] == tmp_path / "two" / "beta.toml"
    # A first part with a repeated id (built by hand) still merges entry by entry.
    first = load_directory(tmp_path / "one")
    doubled = loader.Catalog(
        entries=[*first.entries, first.entries[0]], origins=dict(first.origins)
    )
    assert [entry.id for entry in merge([doubled]).entries] == ["alpha", "beta"]
