"""Starting the desktop app: display check, QApplication (from :mod:`gpudesk.render.app`)."""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from gpudesk.render.app import create_application, display_problem

#: What to do without a display; never QT_QPA_PLATFORM=offscreen, which
#: starts an invisible window that never exits.
NO_DISPLAY_HINT = (
    "run gpudesk on a machine with a desktop, connect with `ssh -X` (X11 forwarding), "
    "or use the command line: `gpudesk list`, `gpudesk compare ...`, `gpudesk --help`"
)


def no_display_message(problem: str) -> str:
    return f"gpudesk: no display available ({problem}).\nhint: {NO_DISPLAY_HINT}"


def qt_libraries_message(exc: ImportError) -> str:
    """What to say when PySide6 is there but a system library Qt loads is not."""
    return (
        f"gpudesk: the desktop app cannot load Qt's libraries ({exc}).\n"
        "hint: install the Debian libraries of the README's Quick start (libegl1, libgl1, "
        "libfontconfig1, libxkbcommon-x11-0, libxcb-cursor0, ...); every command but the "
        "GUI works without them"
    )


#: Qt platforms that draw no window anyone can see.
INVISIBLE_PLATFORMS = ("offscreen", "minimal")


def invisible_platform_message(platform: str) -> str:
    return (
        f"gpudesk: QT_QPA_PLATFORM={platform} draws the window nowhere: nothing would "
        "show and the app would run until killed.\n"
        f"hint: unset it (`env -u QT_QPA_PLATFORM gpudesk`) on a desktop; {NO_DISPLAY_HINT}"
    )


def process_start_time() -> float:
    """Wall-clock time at which this process started (Linux: from /proc)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat_file:
            fields = stat_file.read().rsplit(")", 1)[1].split()
        start_ticks = int(fields[19])
        with open("/proc/uptime", encoding="ascii") as uptime_file:
            uptime_s = float(uptime_file.read().split()[0])
        ticks_per_s = os.sysconf("SC_CLK_TCK")
        return time.time() - uptime_s + start_ticks / ticks_per_s
    except (OSError, ValueError, IndexError):
        return _IMPORT_TIME


_IMPORT_TIME = time.time()


def freeze_long_lived_objects() -> None:
    """Hide what exists now (modules, widgets, the loaded catalog) from the cyclic collector.

    A full collection visits every tracked object: with a 10,000-entry catalog
    it took about 150 ms, a visible stall in the middle of typing or sorting.
    Frozen objects are still freed by reference counting.
    """
    gc.freeze()


def run_gui(extra_dirs: Sequence[Path] = (), *, startup_check: bool = False) -> int:
    """Open the main window; with ``startup_check`` exit after its first paint."""
    if startup_check and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if not startup_check and platform in INVISIBLE_PLATFORMS:
        print(invisible_platform_message(platform), file=sys.stderr)
        return 1
    problem = display_problem()
    if problem is not None:
        print(no_display_message(problem), file=sys.stderr)
        return 1
    started_at = process_start_time()

    try:
        # QtWidgets loads QtGui, which links libEGL, libGL, fontconfig and xkbcommon:
        # without one of them this import fails, and a traceback would say nothing useful
        from PySide6.QtCore import QEvent, QObject, QTimer
        from PySide6.QtWidgets import QApplication

        from gpudesk.ui.main_window import MainWindow
    except ImportError as exc:
        print(qt_libraries_message(exc), file=sys.stderr)
        return 1

    app = create_application()
    assert isinstance(app, QApplication)
    quit_app = app.quit
    window = MainWindow(extra_dirs=extra_dirs)
    freeze_long_lived_objects()
    window.state.catalog_changed.connect(freeze_long_lived_objects)

    if startup_check:

        class _FirstPaint(QObject):
            elapsed: float | None = None

            def eventFilter(self, watched: QObject, event: QEvent) -> bool:
                if event.type() == QEvent.Type.Paint and self.elapsed is None:
                    self.elapsed = time.time() - started_at
                    QTimer.singleShot(0, quit_app)
                return False

        window.save_on_close = False  # a smoke test leaves the user's settings alone
        first_paint = _FirstPaint()
        # The first paint of any widget in the window counts (the central widget
        # may cover the window itself entirely).
        app.installEventFilter(first_paint)
        window.show()
        app.exec()
        elapsed = first_paint.elapsed
        window.close()
        if elapsed is None:
            print("gpudesk: the main window never painted", file=sys.stderr)
            return 1
        print(f"{elapsed:.3f} s")
        return 0

    window.show()
    return int(app.exec())
