import string
from pathlib import Path

from catalog_factory import entry_data, to_toml, write_entry
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog, load_directory, read_entry_file
from gpudesk.paths import bundled_catalog_dir, user_catalog_dir


def _problems_by_field(directory: Path) -> dict[str, set[str]]:
    catalog = load_directory(directory)
    found: dict[str, set[str]] = {}
    for problem in catalog.problems:
        found.setdefault(problem.path.name, set()).add(problem.field)
    return found


def test_broken_files_are_reported_and_the_rest_loads(tmp_path: Path) -> None:
    write_entry(tmp_path / "nvidia", "good-one")
    (tmp_path / "nvidia" / "syntax.toml").write_text('id = "syntax"\nname = \n', "utf-8")
    write_entry(tmp_path, "wrong-type", memory_gb="lots")
    write_entry(tmp_path, "negative", bandwidth_gbs=-1.0)
    write_entry(tmp_path, "unknown-field", memory=16)
    data = entry_data("missing")
    del data["sources"]
    (tmp_path / "missing.toml").write_text(to_toml(data), "utf-8")

    catalog = load_directory(tmp_path)

    assert [entry.id for entry in catalog.entries] == ["good-one"]
    assert _problems_by_field(tmp_path) == {
        "syntax.toml": {"(toml)"},
        "wrong-type.toml": {"memory_gb"},
        "negative.toml": {"bandwidth_gbs"},
        "unknown-field.toml": {"memory"},
        "missing.toml": {"sources"},
    }
    text = str(next(p for p in catalog.problems if p.path.name == "negative.toml"))
    assert text.startswith(str(tmp_path / "negative.toml") + ": bandwidth_gbs: ")


def test_duplicate_id_within_one_source_keeps_the_first(tmp_path: Path) -> None:
    write_entry(tmp_path / "a", "same-id", memory_gb=8)
    write_entry(tmp_path / "b", "same-id", memory_gb=99)
    catalog = load_directory(tmp_path)
    assert [entry.memory_gb for entry in catalog.entries] == [8]
    assert len(catalog.problems) == 1
    assert catalog.problems[0].field == "id"
    assert "duplicate" in catalog.problems[0].message


def test_id_must_match_file_name(tmp_path: Path) -> None:
    path = tmp_path / "other-name.toml"
    path.write_text(to_toml(entry_data("real-id")), "utf-8")
    _entry, problems = read_entry_file(path)
    assert problems and problems[0].field == "id"


def test_meta_and_hidden_files_are_not_entries(tmp_path: Path) -> None:
    (tmp_path / "_meta.toml").write_text("catalog_date = 2026-01-02\n", "utf-8")
    write_entry(tmp_path, "x-gpu")
    catalog = load_directory(tmp_path)
    assert not catalog.problems
    assert str(catalog.catalog_date) == "2026-01-02"


def test_user_and_extra_folders_override_and_extend_bundled(tmp_path: Path) -> None:
    bundled = load_catalog(include_user=False)
    assert bundled.entries, "the bundled catalog must not be empty"
    first = bundled.entries[0]
    user_dir = user_catalog_dir()  # isolated per test by conftest
    write_entry(user_dir, first.id, name="Overridden by the user", sources=["my notes"])
    write_entry(tmp_path, "brand-new-gpu")
    merged = load_catalog([tmp_path])
    by_id = {entry.id: entry for entry in merged.entries}
    assert by_id[first.id].name == "Overridden by the user"
    assert merged.entries.index(by_id[first.id]) == 0, "an override keeps its place"
    assert "brand-new-gpu" in by_id
    assert len(merged.entries) == len(bundled.entries) + 1
    assert merged.origins["brand-new-gpu"] == tmp_path / "brand-new-gpu.toml"


def test_missing_extra_folder_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    catalog = load_catalog([tmp_path / "nope"], include_bundled=False, include_user=False)
    assert catalog.entries == []
    assert catalog.problems[0].field == "(folder)"


def test_bundled_catalog_is_clean() -> None:
    catalog = load_directory(bundled_catalog_dir())
    assert catalog.problems == []


_valid_text = to_toml(entry_data("fuzzed"))


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.text(alphabet=string.printable, max_size=300).map(str.encode),
        st.tuples(st.integers(0, len(_valid_text)), st.integers(0, 40), st.text(max_size=20)).map(
            lambda cut: (_valid_text[: cut[0]] + cut[2] + _valid_text[cut[0] + cut[1] :]).encode()
        ),
    )
)
def test_any_file_content_yields_an_entry_or_named_problems(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzzed.toml"
    path.write_bytes(data)
    entry, problems = read_entry_file(path)  # must never raise
    assert (entry is not None) or problems
    for problem in problems:
        assert problem.path == path
        assert problem.field and problem.message
