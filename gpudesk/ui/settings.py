"""Where the desktop app keeps its settings (window layout, filters, theme)."""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_config_path
from PySide6.QtCore import QSettings


def settings_path() -> Path:
    """The settings file; read from the environment on every call (tests isolate it)."""
    return user_config_path("gpudesk", appauthor=False) / "gpudesk.conf"


def open_settings(path: Path | None = None) -> QSettings:
    """An INI-format QSettings at ``path`` (default :func:`settings_path`).

    An explicit file rather than ``QSettings()``: Qt resolves its default folder
    once per process, and QSettings already writes through a temporary file
    that replaces the old one, so a crash mid-write loses nothing.
    """
    target = settings_path() if path is None else path
    return QSettings(str(target), QSettings.Format.IniFormat)
