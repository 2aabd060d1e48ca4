"""The reference for start-up: a bare PySide6 + pyqtgraph window with one plot.

Prints the seconds from process start to the window's first paint, measured
the same way as ``gpudesk --startup-check``.
"""

from __future__ import annotations

import os
import time

from gpudesk.ui.app import process_start_time

started_at = process_start_time()
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QEvent, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMainWindow  # noqa: E402


class FirstPaint(QObject):
    elapsed: float | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.elapsed is None:
            self.elapsed = time.time() - started_at
            QTimer.singleShot(0, QApplication.quit)
        return False


app = QApplication([])
window = QMainWindow()
window.setWindowTitle("bare")
window.setCentralWidget(pg.PlotWidget())
window.resize(1400, 860)
watcher = FirstPaint()
app.installEventFilter(watcher)  # any widget's first paint counts
window.show()
app.exec()
print(f"{watcher.elapsed:.3f}")
