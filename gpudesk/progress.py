"""Progress and cancellation for long work, without Qt.

Long work (benchmarks, detection, exports) is a plain function taking a
:class:`Progress`; tests pass a :class:`ProgressState` directly, the GUI's
worker passes one whose callback emits a Qt signal.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from gpudesk.errors import GpuDeskError


class Cancelled(GpuDeskError):
    """Raised inside long work when the user asked it to stop."""


class Progress(Protocol):
    def report(self, fraction: float, message: str) -> None:
        """Say how far the work is (0..1) and what it is doing now."""

    def is_cancelled(self) -> bool:
        """True once cancellation was requested; the work should stop soon."""

    def check(self) -> None:
        """Raise :class:`Cancelled` if cancellation was requested."""


class ProgressState:
    """A thread-safe :class:`Progress`: cancelling only sets a flag."""

    def __init__(self, on_report: Callable[[float, str], None] | None = None) -> None:
        self._cancel = threading.Event()
        self._on_report = on_report
        self.fraction = 0.0
        self.message = ""

    def report(self, fraction: float, message: str) -> None:
        self.fraction = min(max(fraction, 0.0), 1.0)
        self.message = message
        if self._on_report is not None:
            self._on_report(self.fraction, message)

    def cancel(self) -> None:
        self._cancel.set()

    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        if self._cancel.is_set():
            raise Cancelled()


class NullProgress(ProgressState):
    """Progress that nobody watches and nobody cancels (CLI use)."""
