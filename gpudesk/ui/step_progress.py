"""A progress bar for work on a worker: busy until the first fraction, then a percentage,
always naming the current step and the seconds since it began (so it is seen to be alive)."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QProgressBar, QWidget

#: steps of the bar: a fraction is shown to a tenth of a percent
_STEPS = 1000


class StepProgressBar(QProgressBar):
    """Hidden until :meth:`begin`; :meth:`advance` takes a worker's (fraction, step)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(0, _STEPS)
        self.setTextVisible(True)
        self.setVisible(False)
        self._began = 0.0
        self._step = ""
        self._elapsed_timer = QTimer(self)
        self._elapsed_timer.setInterval(500)
        self._elapsed_timer.timeout.connect(self._show_elapsed)

    def begin(self, step: str) -> None:
        """Show the bar busy (a long first step must not look stuck at 0%) on ``step``."""
        self.setRange(0, 0)
        self.setVisible(True)
        self._began = time.monotonic()
        self._step = step
        self._show_elapsed()
        self._elapsed_timer.start()

    def advance(self, fraction: float, step: str) -> None:
        if fraction > 0 and self.maximum() == 0:
            self.setRange(0, _STEPS)
        self.setValue(round(fraction * _STEPS))
        self._step = step
        self._show_elapsed()

    def finish(self) -> None:
        self._elapsed_timer.stop()
        self.setRange(0, _STEPS)
        self.setVisible(False)

    def _show_elapsed(self) -> None:
        elapsed = time.monotonic() - self._began
        percent = "" if self.maximum() == 0 else " — %p%"
        self.setFormat(f"{self._step}{percent} ({elapsed:.0f} s)")
