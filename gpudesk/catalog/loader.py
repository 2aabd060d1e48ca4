"""Loading the catalog: bundled files, the user's folder and extra folders.

Bad data never stops the rest from loading: every problem becomes a
:class:`CatalogProblem` naming the file and the field, and the file is skipped.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import tomli as tomllib  # mypyc-compiled: parses ~2.5x faster than the stdlib tomllib
from pydantic import ValidationError

from gpudesk.catalog.schema import LEGACY_CLOUD_FIELDS, CatalogEntry
from gpudesk.paths import bundled_catalog_dir, user_catalog_dir

META_FILE = "_meta.toml"
#: A GPU entry is a page of text; anything far larger is not a catalog file.
MAX_ENTRY_FILE_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class CatalogProblem:
    """One thing wrong with one catalog file."""

    path: Path
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"


@dataclass(slots=True)
class Catalog:
    """The loaded catalog: valid entries in a stable order, plus what was wrong."""

    entries: list[CatalogEntry] = field(default_factory=list)
    problems: list[CatalogProblem] = field(default_factory=list)
    #: things that loaded but should change (deprecated fields); not problems
    notices: list[CatalogProblem] = field(default_factory=list)
    #: where each entry came from (id -> file), for "open the file" and messages
    origins: dict[str, Path] = field(default_factory=dict)
    catalog_date: dt.date | None = None

    def by_id(self, entry_id: str) -> CatalogEntry | None:
        for entry in self.entries:
            if entry.id == entry_id:
                return entry
        return None


def _location(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(file)"


def read_entry_file(path: Path) -> tuple[CatalogEntry | None, list[CatalogProblem]]:
    """Parse and validate one TOML file; never raises for bad content."""
    entry, problems, _notices = read_entry(path)
    return entry, problems


def read_entry(
    path: Path,
) -> tuple[CatalogEntry | None, list[CatalogProblem], list[CatalogProblem]]:
    """Parse and validate one TOML file: ``(entry, problems, notices)``.

    Never raises for bad content. Notices name deprecated fields that still
    loaded (the pre-``cloud_rates`` price fields).
    """
    try:
        if path.stat().st_size > MAX_ENTRY_FILE_BYTES:
            return None, [_too_large(path)], []
        raw = path.read_bytes()
    except OSError as exc:
        return None, [CatalogProblem(path, "(file)", f"cannot read: {exc.strerror or exc}")], []
    if len(raw) > MAX_ENTRY_FILE_BYTES:  # grew between stat and read
        return None, [_too_large(path)], []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [CatalogProblem(path, "(file)", f"not UTF-8 text: {exc.reason}")], []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return None, [CatalogProblem(path, "(toml)", f"syntax error: {exc}")], []
    legacy = [name for name in LEGACY_CLOUD_FIELDS if name in data]
    notices = [CatalogProblem(path, ", ".join(legacy), _LEGACY_NOTICE)] if legacy else []
    try:
        entry = CatalogEntry.model_validate(data)
    except ValidationError as exc:
        problems = [
            CatalogProblem(path, _location(error["loc"]), _message(error))
            for error in exc.errors(include_url=False)
        ]
        return None, problems, notices
    if entry.id != path.stem:
        return (
            entry,
            [
                CatalogProblem(
                    path, "id", f"id {entry.id!r} differs from the file name {path.stem!r}"
                )
            ],
            notices,
        )
    return entry, [], notices


_LEGACY_NOTICE = (
    "deprecated: read as one on-demand [[cloud_rates]] item; write a "
    "[[cloud_rates]] table with provider, usd_per_gpu_hour, kind, date and source instead"
)


def _too_large(path: Path) -> CatalogProblem:
    return CatalogProblem(
        path, "(file)", f"larger than {MAX_ENTRY_FILE_BYTES // 1024} KiB: not a catalog entry"
    )


_WANTED = {
    "float_type": "a number",
    "int_type": "a whole number",
    "bool_type": "true or false",
    "date_type": "a TOML date such as 2025-01-31 (no quotes)",
    "string_type": "text in quotes",
}


def _message(error: object) -> str:
    assert isinstance(error, dict)
    kind = error.get("type")
    if kind == "extra_forbidden":
        return "unknown field (check the spelling; units belong in the name, e.g. memory_gb)"
    if kind == "missing":
        return "required field is missing"
    if kind in _WANTED:
        return f"must be {_WANTED[kind]}, not {_shown(error.get('input'))}"
    return str(error.get("msg", "invalid value"))


def _shown(value: object) -> str:
    """A TOML-like rendering of a rejected value, short enough for a message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return '"' + text.replace('"', '\\"') + '"'
    if isinstance(value, (int, float, dt.date)):
        return str(value)
    return f"a {type(value).__name__}"


def _entry_files(directory: Path) -> list[Path]:
    return sorted(
        path for path in directory.rglob("*.toml") if not path.name.startswith(("_", "."))
    )


def _read_catalog_date(directory: Path) -> dt.date | None:
    meta = directory / META_FILE
    try:
        value = tomllib.loads(meta.read_text("utf-8")).get("catalog_date")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return value if isinstance(value, dt.date) else None


def load_directory(directory: Path) -> Catalog:
    """Load one folder of entry files; a duplicate id inside it is a problem."""
    catalog = Catalog(catalog_date=_read_catalog_date(directory))
    if not directory.is_dir():
        catalog.problems.append(CatalogProblem(directory, "(folder)", "not a folder"))
        return catalog
    seen: dict[str, Path] = {}
    for path in _entry_files(directory):
        entry, problems, notices = read_entry(path)
        catalog.problems.extend(problems)
        catalog.notices.extend(notices)
        if entry is None or problems:
            continue
        if entry.id in seen:
            catalog.problems.append(
                CatalogProblem(
                    path, "id", f"duplicate id {entry.id!r}, already in {seen[entry.id]}"
                )
            )
            continue
        seen[entry.id] = path
        catalog.entries.append(entry)
        catalog.origins[entry.id] = path
    return catalog


def load_catalog(
    extra_dirs: Sequence[Path] = (),
    *,
    include_bundled: bool = True,
    include_user: bool = True,
) -> Catalog:
    """Load the bundled catalog, then the user's folder, then ``extra_dirs``.

    A later source's entry with the same ``id`` replaces the earlier one, in
    place, so user additions override or extend the bundled catalog.
    """
    sources: list[Path] = []
    if include_bundled:
        sources.append(bundled_catalog_dir())
    if include_user:
        user_dir = user_catalog_dir()
        if user_dir.is_dir():
            sources.append(user_dir)
    sources.extend(Path(directory) for directory in extra_dirs)
    return merge(load_directory(directory) for directory in sources)


def merge(parts: Iterable[Catalog]) -> Catalog:
    merged = Catalog()
    index: dict[str, int] = {}
    for part in parts:
        merged.problems.extend(part.problems)
        merged.notices.extend(part.notices)
        if part.catalog_date is not None and (
            merged.catalog_date is None or part.catalog_date > merged.catalog_date
        ):
            merged.catalog_date = part.catalog_date
        for entry in part.entries:
            if entry.id in index:
                merged.entries[index[entry.id]] = entry
            else:
                index[entry.id] = len(merged.entries)
                merged.entries.append(entry)
            merged.origins[entry.id] = part.origins[entry.id]
    return merged
