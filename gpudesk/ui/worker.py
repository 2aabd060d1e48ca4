"""One worker class that moves any long function onto a QThread.

The function is plain Python taking a :class:`gpudesk.progress.Progress`; the
worker only runs it off the GUI thread and turns its progress and outcome into
signals. Cancelling sets a flag that the function polls.
"""

from __future__ import annotations

import logging
import traceback
import weakref
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from gpudesk.progress import Cancelled, Progress, ProgressState

_log = logging.getLogger(__name__)

#: Every thread a worker started and has not yet seen finish (for the tests'
#: leaked-thread check and for a clean shutdown at exit).
_live_threads: weakref.WeakSet[QThread] = weakref.WeakSet()


def running_threads() -> list[QThread]:
    return [thread for thread in _live_threads if thread.isRunning()]


class _Runner(QObject):
    """Lives on the worker thread; calls the function once."""

    progressed = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, fn: Callable[[Progress], object], state: ProgressState) -> None:
        super().__init__()
        self._fn = fn
        self._state = state

    @Slot()
    def run(self) -> None:
        try:
            result = self._fn(self._state)
        except Cancelled:
            self.cancelled.emit()
        except Exception as exc:  # the GUI shows it; the app must not die
            _log.error("task failed:\n%s", traceback.format_exc())
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            if self._state.is_cancelled():
                self.cancelled.emit()
            else:
                self.finished.emit(result)
        finally:
            # Hand this object back to the GUI thread, where its owner drops it:
            # a QObject must not be destroyed from a thread it does not live in.
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())


class TaskWorker(QObject):
    """Runs ``fn(progress)`` on its own thread.

    Signals:
        progressed(float, str): fraction done (0..1) and the current step.
        finished(object): the function's return value.
        failed(str): the function raised; the message names what went wrong.
        cancelled(): the function stopped after :meth:`cancel`.
        done(): emitted after any of the three outcomes, once the thread ended.
    """

    progressed = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    done = Signal()

    def __init__(self, fn: Callable[[Progress], object], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._state = ProgressState(on_report=self._relay_progress)
        self._thread = QThread()
        self._runner = _Runner(fn, self._state)
        self._runner.moveToThread(self._thread)
        self._thread.started.connect(self._runner.run)
        # Signals cross threads as queued connections: slots run on the GUI thread.
        self._runner.finished.connect(self._on_finished)
        self._runner.failed.connect(self._on_failed)
        self._runner.cancelled.connect(self._on_cancelled)
        self._runner.progressed.connect(self.progressed)
        self._thread.finished.connect(self._on_thread_finished)
        self._started = False

    def _relay_progress(self, fraction: float, message: str) -> None:
        # Called on the worker thread: only emit, never touch widgets here.
        self._runner.progressed.emit(fraction, message)

    def start(self) -> None:
        if self._started:
            raise RuntimeError("a TaskWorker runs once")
        self._started = True
        _live_threads.add(self._thread)
        self._thread.start()

    def cancel(self) -> None:
        self._state.cancel()

    def is_running(self) -> bool:
        return self._thread.isRunning()

    def wait(self, timeout_ms: int = 5000) -> bool:
        """Block until the thread ended (tests and shutdown only)."""
        return bool(self._thread.wait(timeout_ms))

    def _on_finished(self, result: object) -> None:
        self._thread.quit()
        self.finished.emit(result)

    def _on_failed(self, message: str) -> None:
        self._thread.quit()
        self.failed.emit(message)

    def _on_cancelled(self) -> None:
        self._thread.quit()
        self.cancelled.emit()

    def _on_thread_finished(self) -> None:
        # QThread.finished is emitted from the thread just before it really
        # ends; wait for that, so an owner may delete this worker (and with it
        # the QThread) from a ``done`` slot without "destroyed while running".
        self._thread.wait()
        _live_threads.discard(self._thread)
        self.done.emit()

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Cancel and wait for the thread: call before the owner is destroyed."""
        self.cancel()
        self._thread.quit()
        self._thread.wait(timeout_ms)
