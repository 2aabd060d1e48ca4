"""Where the desktop app keeps its settings (window layout, filters, theme).

The settings file is untrusted like any other: it may be corrupt, huge, a
folder, a FIFO, or hold values no build of GPUDesk wrote. Whatever it holds,
the window opens. :func:`load_settings` checks the file before Qt reads it;
a file that cannot be used is kept aside under a new name (nothing is
deleted) and the app starts from defaults, with one sentence saying so.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import errno
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from platformdirs import user_config_path
from PySide6.QtCore import QSettings

from gpudesk.storage import FileTooLargeError, NotRegularFileError, open_regular_file

#: A settings file is a few KiB; anything this large was not written by GPUDesk.
MAX_SETTINGS_BYTES = 1024 * 1024
#: GPUDesk's JSON-valued settings nest two levels; deeper is corrupt or crafted.
MAX_JSON_DEPTH = 8


def settings_path() -> Path:
    """The settings file; read from the environment on every call (tests isolate it)."""
    return user_config_path("gpudesk", appauthor=False) / "gpudesk.conf"


def open_settings(path: Path | None = None) -> QSettings:
    """An INI-format QSettings at ``path`` (default :func:`settings_path`), checked first.

    The same as :func:`load_settings` without the problems (tests, callers that
    do not report).
    """
    return load_settings(path).settings


@dataclass
class LoadedSettings:
    """The settings to use, and what was wrong with the file (each said once)."""

    settings: QSettings
    problems: list[str] = field(default_factory=list)
    #: False when changes will not reach the file (a folder in its place, read-only).
    saveable: bool = True


def load_settings(path: Path | None = None) -> LoadedSettings:
    """Open the settings file as QSettings, or defaults when it cannot be used.

    An explicit file rather than ``QSettings()``: Qt resolves its default
    folder once per process, and QSettings already writes through a temporary
    file that replaces the old one, so a crash mid-write loses nothing.

    - Not a regular file (a folder, FIFO, device): Qt would block on a FIFO
      or fail on a folder; defaults are used for this session only (nothing
      can be saved until it is moved) and nothing there is touched.
    - Too large, unparseable, or holding a value that cannot be read back or
      nests too deeply: renamed to ``gpudesk.conf.bad-<time>`` and defaults are used.
    - A folder or file that cannot be written: said once, at start-up.
    """
    target = settings_path() if path is None else Path(path)
    problems: list[str] = []
    try:
        # The guarded open every user file gets (storage.py), then closed: Qt reads the
        # file itself, but only once it is known to be a regular file of a sane size.
        open_regular_file(target, MAX_SETTINGS_BYTES).close()
    except (FileNotFoundError, NotADirectoryError):
        pass  # none yet; whether one can be saved is checked below
    except NotRegularFileError as exc:
        kind = "a folder" if exc.errno == errno.EISDIR else exc.kind
        problems.append(
            f"The settings file {target} is {kind}, not a regular file: GPUDesk started with "
            "default settings and cannot save them until it is moved away."
        )
        return _session_only(problems)
    except FileTooLargeError:
        problems.append(_set_aside(target, "is larger than 1 MiB"))
        return _checked(target, problems)
    except OSError as exc:
        problems.append(f"The settings file {target} cannot be read ({exc.strerror}).")
        return _session_only(problems)
    settings = QSettings(str(target), QSettings.Format.IniFormat)
    reason = _unreadable_reason(settings)
    if reason is not None:
        del settings
        problems.append(_set_aside(target, reason))
    return _checked(target, problems)


def _checked(target: Path, problems: list[str]) -> LoadedSettings:
    """QSettings at ``target`` (a good file or none), with a note if it cannot be saved."""
    settings = QSettings(str(target), QSettings.Format.IniFormat)
    reason = _unsaveable_reason(target)
    if reason is not None:
        problems.append(
            f"Settings cannot be saved to {target} ({reason}): changes made now are lost "
            "when GPUDesk closes."
        )
    return LoadedSettings(settings, problems, saveable=reason is None)


def _unreadable_reason(settings: QSettings) -> str | None:
    """Why Qt could not make sense of the file, or None when every value reads back.

    Values GPUDesk stores as JSON text (filters, the compare selection) must
    parse within :data:`MAX_JSON_DEPTH` levels: deeper ones are not ours.
    """
    if settings.status() == QSettings.Status.FormatError:
        return "is not a valid settings file"
    try:
        for key in settings.allKeys():
            value = settings.value(key)
            if isinstance(value, str) and _nested_too_deeply(value):
                return f"holds a value nested too deeply ({key})"
    except RecursionError:
        return "holds a value nested too deeply"
    except Exception as exc:  # any value that fails to convert condemns the file
        return f"holds a value that cannot be read ({type(exc).__name__})"
    return None


def _nested_too_deeply(text: str) -> bool:
    """JSON text deeper than :data:`MAX_JSON_DEPTH`; text that is not JSON is left to
    its reader, which ignores a bad value and keeps the rest."""
    if not text.lstrip().startswith(("[", "{")):
        return False
    try:
        return json_depth(json.loads(text)) > MAX_JSON_DEPTH
    except ValueError:
        return False
    except RecursionError:
        return True


def json_depth(value: object) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar is 0); iterative."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in item)
    return deepest


def _set_aside(target: Path, reason: str) -> str:
    """Rename a bad settings file out of the way (kept, never deleted); say what was done."""
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
    kept = target.with_name(f"{target.name}.bad-{stamp}")
    try:
        os.replace(target, kept)
    except OSError as exc:
        return (
            f"The settings file {target} {reason} and could not be moved aside "
            f"({exc.strerror}): GPUDesk started with default settings."
        )
    return (
        f"The settings file {target} {reason}: it was kept as {kept.name} and GPUDesk "
        "started with default settings."
    )


def _unsaveable_reason(target: Path) -> str | None:
    if target.exists():
        return None if os.access(target, os.W_OK) else "the file is read-only"
    folder = target.parent
    while not folder.exists():
        if folder.parent == folder:
            return "no folder can be created for it"
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable"
    return None


def _session_only(problems: list[str]) -> LoadedSettings:
    """Defaults kept in a private temporary file for this run only (removed at exit)."""
    handle, name = tempfile.mkstemp(prefix="gpudesk-session-", suffix=".conf")
    os.close(handle)
    atexit.register(_remove, Path(name))
    return LoadedSettings(QSettings(name, QSettings.Format.IniFormat), problems, saveable=False)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
