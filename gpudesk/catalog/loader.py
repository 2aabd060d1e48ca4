"""Loading the catalog: bundled files, the user's folder and extra folders.

Bad data never stops the rest from loading: every problem becomes a
:class:`CatalogProblem` naming the file and the field, and the file is skipped.
"""

from __future__ import annotations

import datetime as dt
import gc
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli as tomllib  # mypyc-compiled: parses ~2.5x faster than the stdlib tomllib
from pydantic import ValidationError

from gpudesk.catalog.schema import LEGACY_CLOUD_FIELDS, CatalogEntry
from gpudesk.paths import bundled_catalog_dir, user_catalog_dir
from gpudesk.storage import FileTooLargeError, UnsafeTargetError, read_regular_file

_fast_loads: Callable[[str], Any] | None
try:  # Rust: parses a catalog file ~5x faster than tomli (10,000 files: 0.08 s vs 0.4 s)
    from rtoml import loads as _fast_loads
except ImportError:  # pragma: no cover - a platform without its wheel: tomli alone
    _fast_loads = None

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

    Never raises: whatever goes wrong with one file (unreadable, not a regular
    file, over :data:`MAX_ENTRY_FILE_BYTES`, not UTF-8, bad TOML, nested too
    deeply, invalid fields, or anything unexpected) becomes that file's
    problem. Notices name deprecated fields that still loaded (the
    pre-``cloud_rates`` price fields).
    """
    text, problem = _read_text_safely(path, os.fspath(path))
    if text is None:
        return None, [problem] if problem else [], []
    return _entry_from_text_safely(path, text, path.stem)


_Loaded = tuple[CatalogEntry | None, list[CatalogProblem], list[CatalogProblem]]


def _cannot_load(path: Path, exc: Exception) -> CatalogProblem:
    return CatalogProblem(path, "(file)", f"cannot load: {type(exc).__name__}: {exc}")


def _read_text_safely(path: Path, path_text: str) -> tuple[str | None, CatalogProblem | None]:
    """:func:`_read_text`, with anything unexpected that file's problem."""
    try:
        return _read_text(path, path_text)
    except Exception as exc:  # a bad file must never stop the rest from loading
        return None, _cannot_load(path, exc)


def _entry_from_text_safely(path: Path, text: str, stem: str) -> _Loaded:
    """:func:`_entry_from_text`, with anything unexpected that file's problem."""
    try:
        return _entry_from_text(path, text, stem)
    except Exception as exc:  # a bad file must never stop the rest from loading
        return None, [_cannot_load(path, exc)], []


def _read_text(
    path: Path, path_text: str | None = None
) -> tuple[str | None, CatalogProblem | None]:
    """The file's text, or the problem that stops it being read (never raises for I/O).

    ``path_text`` is ``str(path)`` when the caller has it: opening by the text
    spares formatting the Path again (10,000 files: about 30 ms).
    """
    try:
        raw = read_regular_file(path if path_text is None else path_text, MAX_ENTRY_FILE_BYTES)
    except UnsafeTargetError as exc:
        return None, CatalogProblem(path, "(file)", f"skipped: {exc.strerror}, not a regular file")
    except FileTooLargeError:
        return None, _too_large(path)
    except OSError as exc:
        return None, CatalogProblem(path, "(file)", f"cannot read: {exc.strerror or exc}")
    try:
        # "utf-8-sig": editors on Windows save a byte-order mark first.
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, CatalogProblem(path, "(file)", f"not UTF-8 text: {exc.reason}")


def _parse_toml(path: Path, text: str) -> tuple[dict[str, Any] | None, CatalogProblem | None]:
    """The file's TOML as a dict, or its problem.

    tomli is the reference: a file the fast parser rejects (or might read more
    leniently: a second byte-order mark) is parsed again by tomli, so every
    rejection, and its message, is tomli's.
    """
    if _fast_loads is not None and not text.startswith("\ufeff"):
        try:
            data = _fast_loads(text)
        except Exception:  # any refusal: tomli decides and words it
            pass
        else:
            if isinstance(data, dict):
                return data, None
    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        return None, CatalogProblem(path, "(toml)", f"syntax error: {exc}")
    except RecursionError:
        return None, CatalogProblem(path, "(toml)", "nested too deeply")


def _entry_from_text(path: Path, text: str, stem: str) -> _Loaded:
    """Parse and validate one file's text; ``stem`` is the file name without ``.toml``."""
    data, problem = _parse_toml(path, text)
    if data is None:
        return None, [problem] if problem else [], []
    legacy = [name for name in LEGACY_CLOUD_FIELDS if name in data]
    notices = [CatalogProblem(path, ", ".join(legacy), _LEGACY_NOTICE)] if legacy else []
    if "device_type" in data:
        notices.append(CatalogProblem(path, "device_type", _DEVICE_TYPE_NOTICE))
    try:
        entry = CatalogEntry.model_validate(data)
    except ValidationError as exc:
        problems = [
            CatalogProblem(path, _location(error["loc"]), _message(error))
            for error in exc.errors(include_url=False)
        ]
        return None, problems, notices
    except RecursionError:
        return None, [CatalogProblem(path, "(file)", "nested too deeply")], notices
    if entry.id != stem:
        return (
            entry,
            [CatalogProblem(path, "id", f"id {entry.id!r} differs from the file name {stem!r}")],
            notices,
        )
    return entry, [], notices


_LEGACY_NOTICE = (
    "deprecated: read as one on-demand [[cloud_rates]] item; write a "
    "[[cloud_rates]] table with provider, usd_per_gpu_hour, kind, date and source instead"
)


_DEVICE_TYPE_NOTICE = (
    'deprecated: read as kind (gpu -> "gpu", soc -> "soc", accelerator -> "asic"); '
    'write kind = "gpu" | "soc" | "tpu" | "npu" | "asic" instead'
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
    # A validator's own words, without pydantic's "Value error, " in front.
    return str(error.get("msg", "invalid value")).removeprefix("Value error, ")


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


def _entry_files(directory: Path, problems: list[CatalogProblem]) -> list[tuple[Path, str, str]]:
    """Every ``*.toml`` entry file below ``directory``; unreadable folders are problems.

    Each file is ``(folder, name, path as text)``, in the order of sorting
    their Paths. Symlinked folders are not followed (a link loop cannot trap
    the walk); symlinked files are, and are then checked like any other file.
    """

    def unreadable(error: OSError) -> None:
        where = Path(error.filename) if error.filename else directory
        problems.append(
            CatalogProblem(where, "(folder)", f"cannot read: {error.strerror or error}")
        )

    # Sorted as sorting the Paths would (by their parts), without 60,000 Path
    # comparisons for a 10,000-file folder, and without a Path per file here
    # (3 to 4 us each). The key is the parts joined by NUL, which no name
    # holds: as NUL sorts below every other character, comparing joined keys
    # orders as comparing the parts tuples. Keys are unique (one per path), so
    # the tuples sort by their key alone.
    found: list[tuple[str, Path, str, str]] = []
    join = os.path.join
    for folder, _subfolders, names in os.walk(directory, onerror=unreadable):
        folder_path = Path(folder)
        prefix = "\0".join(folder_path.parts) + "\0"
        found.extend(
            (prefix + name, folder_path, name, join(folder, name))
            for name in names
            if name.endswith(".toml") and not name.startswith(("_", "."))
        )
    found.sort()
    return [(folder_path, name, text) for _key, folder_path, name, text in found]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a folder loads.

    Loading allocates tens of thousands of small containers and frees none of
    them, so the collector's passes over the growing heap find nothing (10,000
    files: about 0.1 s of them). Objects freed by reference counting go at
    once as usual. A nested or concurrent pause leaves the collector to the
    outermost one that found it running.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _read_catalog_date(directory: Path) -> tuple[dt.date | None, list[CatalogProblem]]:
    meta = directory / META_FILE
    try:
        os.lstat(meta)
    except FileNotFoundError:
        return None, []  # optional
    except OSError:
        pass  # reported by the read below
    try:
        text, problem = _read_text(meta)
        if text is None:
            return None, [problem] if problem else []
        data, problem = _parse_toml(meta, text)
    except Exception as exc:  # as for entry files: the file's problem, never a crash
        return None, [CatalogProblem(meta, "(file)", f"cannot load: {type(exc).__name__}: {exc}")]
    if data is None:
        return None, [problem] if problem else []
    value = data.get("catalog_date")
    if value is None:
        return None, []
    if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
        return None, [CatalogProblem(meta, "catalog_date", "must be a TOML date (2026-05-01)")]
    return value, []


def load_directory(directory: Path) -> Catalog:
    """Load one folder of entry files; a duplicate id inside it is a problem."""
    catalog = Catalog()
    try:
        is_folder = directory.is_dir()
    except OSError as exc:  # a name too long, a link loop
        catalog.problems.append(
            CatalogProblem(directory, "(folder)", f"cannot read: {exc.strerror or exc}")
        )
        return catalog
    if not is_folder:
        catalog.problems.append(CatalogProblem(directory, "(folder)", "not a folder"))
        return catalog
    catalog.catalog_date, meta_problems = _read_catalog_date(directory)
    catalog.problems.extend(meta_problems)
    with _collector_paused():
        _load_entry_files(directory, catalog)
    return catalog


#: Files read in one go before any is parsed (see :func:`_load_entry_files`).
_READ_BATCH_FILES = 512


def _load_entry_files(directory: Path, catalog: Catalog) -> None:
    """Load every entry file below ``directory`` into ``catalog``, in path order.

    Files are read in batches, each batch's system calls together, then parsed
    and validated one by one: interleaving a file's read with its parse made
    the whole load about 1.7x slower (10,000 files, 0.8 s against 0.47 s of
    CPU time), as each system call leaves the parser's code and data cold.
    """
    origins = catalog.origins  # id -> file: also the duplicate check
    files = _entry_files(directory, catalog.problems)
    for start in range(0, len(files), _READ_BATCH_FILES):
        batch = [
            (path, name, *_read_text_safely(path, path_text))
            for path, name, path_text in (
                (folder_path / name, name, path_text)
                for folder_path, name, path_text in files[start : start + _READ_BATCH_FILES]
            )
        ]
        for path, name, text, read_problem in batch:
            if text is None:
                if read_problem is not None:
                    catalog.problems.append(read_problem)
                continue
            entry, problems, notices = _entry_from_text_safely(path, text, name[:-5])
            if notices:
                catalog.notices.extend(notices)
            if problems:
                catalog.problems.extend(problems)
                continue
            if entry is None:
                continue
            if entry.id in origins:
                catalog.problems.append(
                    CatalogProblem(
                        path, "id", f"duplicate id {entry.id!r}, already in {origins[entry.id]}"
                    )
                )
                continue
            catalog.entries.append(entry)
            origins[entry.id] = path


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
        if user_folder_present(user_dir):
            sources.append(user_dir)
    sources.extend(Path(directory) for directory in extra_dirs)
    return merge(load_directory(directory) for directory in sources)


def user_folder_present(user_dir: Path) -> bool:
    """Whether the user's catalog folder should be loaded: it exists in any form.

    A missing folder is normal (nothing added yet); anything else there (a
    file, an unreadable folder) is loaded so that its problem is reported.
    """
    try:
        os.lstat(user_dir)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


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
        if not merged.entries and _ids_distinct(part.entries):
            # The first source (usually the bundled catalog, or the one folder
            # given): taken whole, as the loop below would, in one pass each.
            merged.entries = list(part.entries)
            index = {entry.id: row for row, entry in enumerate(merged.entries)}
            merged.origins = {entry_id: part.origins[entry_id] for entry_id in index}
            continue
        for entry in part.entries:
            if entry.id in index:
                merged.entries[index[entry.id]] = entry
            else:
                index[entry.id] = len(merged.entries)
                merged.entries.append(entry)
            merged.origins[entry.id] = part.origins[entry.id]
    return merged


def _ids_distinct(entries: Sequence[CatalogEntry]) -> bool:
    return len({entry.id for entry in entries}) == len(entries)
