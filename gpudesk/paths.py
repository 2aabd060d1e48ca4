"""Where GPUDesk finds its bundled data and keeps the user's."""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_data_path

_PACKAGE_DIR = Path(__file__).resolve().parent


def bundled_dir(name: str) -> Path:
    """Return a bundled top-level folder (``catalog`` or ``resources``).

    In a wheel the folders are installed under ``gpudesk/_data``; in a source
    checkout (or an editable install) they sit beside the package.
    """
    installed = _PACKAGE_DIR / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / name


def bundled_catalog_dir() -> Path:
    return bundled_dir("catalog")


def resources_dir() -> Path:
    return bundled_dir("resources")


def user_data_dir() -> Path:
    """The per-user data folder (history, user catalog); not created here."""
    return user_data_path("gpudesk", appauthor=False)


def user_catalog_dir() -> Path:
    return user_data_dir() / "catalog"
