"""Every benchmark run, kept as one JSON file in the user's data folder.

Files are written atomically. Runs from other machines (``gpudesk bench
--json > run.json`` on a server) are imported by validating them like any
untrusted input and saving a copy here; a malformed file is refused with a
message naming the file and the field, and never stops the list from loading.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from gpudesk.bench.result_file import parse_result
from gpudesk.bench.results import MAX_RESULT_BYTES, BenchResult, ResultFileError
from gpudesk.paths import user_data_dir
from gpudesk.storage import (
    FileTooLargeError,
    UnsafeTargetError,
    atomic_write_text,
    read_regular_file,
)
from gpudesk.terminal_text import scrub


def history_dir() -> Path:
    return user_data_dir() / "history"


@dataclass(frozen=True, slots=True)
class HistoryItem:
    """One saved run and the file it lives in."""

    path: Path
    result: BenchResult

    @property
    def imported(self) -> bool:
        return self.result.imported_from is not None

    @property
    def title(self) -> str:
        """ "2026-05-01 14:03 · numpy · AMD EPYC" (local time), plus "imported"."""
        when = self.result.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
        text = f"{when} · {self.result.backend} · {self.result.device_name}"
        if self.result.error is not None:
            text += " · failed"
        return text + (" · imported" if self.imported else "")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "device"


def save_run(result: BenchResult, directory: Path | None = None) -> Path:
    """Write ``result`` to a new file in the history folder; return its path.

    Raises:
        OSError: the folder cannot be created or written (nothing is lost:
            no existing file is touched).
    """
    folder = directory or history_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = result.started_at.strftime("%Y%m%dT%H%M%SZ")
    name = f"{stamp}-{_slug(result.backend)}-{_slug(result.device_name)}-{uuid.uuid4().hex[:6]}"
    path = folder / f"{name}.json"
    atomic_write_text(path, result.to_json())
    return path


def load_run(path: Path) -> BenchResult:
    """Read and validate one result file.

    Raises:
        ResultFileError: unreadable, too large, not JSON or not a valid result;
            the message names the file and the field.
    """
    source = str(path)
    try:
        data = read_regular_file(path, MAX_RESULT_BYTES)
    except (UnsafeTargetError, FileTooLargeError) as exc:
        raise ResultFileError(source, "(file)", f"skipped: {exc.strerror}") from exc
    except OSError as exc:
        raise ResultFileError(source, "(file)", f"cannot read: {exc.strerror or exc}") from exc
    try:
        return parse_result(data, source)
    except ResultFileError:
        raise
    except Exception as exc:  # whatever a crafted file does, it is that file's problem
        raise ResultFileError(source, "(file)", f"cannot load: {type(exc).__name__}") from exc


def list_runs(directory: Path | None = None) -> tuple[list[HistoryItem], list[ResultFileError]]:
    """Saved runs, newest first, and the files that could not be read."""
    folder = directory or history_dir()
    items: list[HistoryItem] = []
    problems: list[ResultFileError] = []
    try:
        paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    except OSError as exc:
        problems.append(ResultFileError(str(folder), "(folder)", f"cannot read: {exc.strerror}"))
        paths = []
    for path in paths:
        try:
            items.append(HistoryItem(path, load_run(path)))
        except ResultFileError as exc:
            problems.append(exc)
    items.sort(key=lambda item: (item.result.started_at, item.path.name), reverse=True)
    return items, problems


def import_run(source: Path, directory: Path | None = None) -> HistoryItem:
    """Validate a result file from anywhere and save a copy in the history.

    Raises:
        ResultFileError: the file is malformed (nothing is saved).
        OSError: the history folder cannot be written.
    """
    result = load_run(source)
    # The path as printable text within the field's limit, so the saved copy reloads:
    # a name that is not UTF-8, or holds a control character, is shown escaped.
    where = scrub(str(source).encode("utf-8", "backslashreplace").decode("utf-8"))[:2000]
    imported = result.model_copy(update={"imported_from": where})
    return HistoryItem(save_run(imported, directory), imported)


def delete_run(path: Path) -> None:
    """Remove one saved run (a missing file is not an error)."""
    path.unlink(missing_ok=True)
