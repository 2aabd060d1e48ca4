"""Resident memory of the idle main window (optionally with extra catalog folders).

Usage: python idle_memory.py [CATALOG_DIR]  — prints the RSS in MB after the
window has shown and the event loop has idled for a second.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QTimer

from gpudesk.render.app import create_application
from gpudesk.ui.main_window import MainWindow


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


app = create_application()
extra = [Path(arg) for arg in sys.argv[1:]]
window = MainWindow(extra_dirs=extra)
window.show()
QTimer.singleShot(1000, app.quit)  # type: ignore[attr-defined]
app.exec()  # type: ignore[attr-defined]
print(f"{rss_mb():.1f} {len(window.state.entries())}")
