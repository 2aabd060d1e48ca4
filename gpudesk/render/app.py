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
    return display_problem() is None


def _x11_problem(display: str) -> str | None:
    """None when the X server of ``display`` accepts a connection, else why not.

    Through libxcb itself (the library Qt's xcb plugin uses), so the answer
    covers sockets, TCP displays and authorisation alike.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("xcb") or "libxcb.so.1"
    try:
        xcb = ctypes.CDLL(name)
    except OSError:
        return f"DISPLAY={display}: libxcb is not installed (Debian: apt-get install libxcb1)"
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)
    try:
        error = xcb.xcb_connection_has_error(connection) if connection else 1
    finally:
        if connection:
            xcb.xcb_disconnect(connection)
    if error:
        return f"DISPLAY={display}: the X server does not answer (stale DISPLAY, or no access)"
    return None


def _wayland_problem(display: str) -> str | None:
    import socket

    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    path = display if display.startswith("/") else os.path.join(runtime, display)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(2.0)
            probe.connect(path)
    except OSError as exc:
        return f"WAYLAND_DISPLAY={display}: no compositor at {path} ({exc.strerror or exc})"
    return None


def display_problem() -> str | None:
    """None when a window can be opened, else what was tried and why it failed.

    Qt aborts the process (exit 134) with a misleading "reinstall" message
    when ``DISPLAY`` or ``WAYLAND_DISPLAY`` is set but dead, as over SSH, so
    the display is asked first. An explicit ``QT_QPA_PLATFORM`` other than
    xcb/wayland is the user's choice and is trusted.
    """
    if sys.platform in ("win32", "darwin"):
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0]
    if platform and platform not in ("xcb", "wayland"):
        return None
    x11 = os.environ.get("DISPLAY", "")
    wayland = os.environ.get("WAYLAND_DISPLAY", "")
    tried: list[str] = []
    if wayland and platform != "xcb":
        problem = _wayland_problem(wayland)
        if problem is None:
            return None
        tried.append(problem)
    if x11 and platform != "wayland":
        problem = _x11_problem(x11)
        if problem is None:
            return None
        tried.append(problem)
    if not tried:
        return "neither DISPLAY nor WAYLAND_DISPLAY is set"
    return "; ".join(tried)


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
