"""The ``QApplication`` factory shared by the window, the PDF report and chart export.

Qt is imported inside the functions: importing this module costs nothing, so
the CLI can ask :func:`display_available` before it decides to load Qt.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

#: Keeps the application :func:`ensure_application` made alive (Qt needs one instance).
_offscreen_app: object | None = None


def display_available() -> bool:
    """Whether Qt can open a window here, judged before Qt would abort()."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def create_application(argv: Sequence[str] | None = None) -> object:
    """The QApplication with GPUDesk's names, bundled fonts and icon (the existing one if any)."""
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtGui import QFontDatabase, QGuiApplication, QIcon
    from PySide6.QtWidgets import QApplication

    from gpudesk import __version__
    from gpudesk.paths import resources_dir

    existing = QApplication.instance()
    if existing is not None:
        return existing
    QCoreApplication.setOrganizationName("GPUDesk")
    QCoreApplication.setApplicationName("gpudesk")
    QCoreApplication.setApplicationVersion(__version__)
    QGuiApplication.setDesktopFileName("gpudesk")
    app = QApplication(list(argv) if argv is not None else [sys.argv[0]])
    app.setApplicationDisplayName("GPUDesk")
    for font_file in sorted((resources_dir() / "fonts").glob("*.ttf")):
        QFontDatabase.addApplicationFont(str(font_file))
    app.setWindowIcon(QIcon(str(resources_dir() / "icons" / "gpudesk.svg")))
    return app


def ensure_application() -> None:
    """Make sure a QApplication exists (the CLI has none): offscreen unless told otherwise.

    Painting a report or a chart file needs no screen, and a stale ``DISPLAY``
    over SSH must not abort the export, so only an explicit
    ``QT_QPA_PLATFORM`` chooses another platform.
    """
    global _offscreen_app
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is not None:
        return
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _offscreen_app = create_application()
