"""One worker class that moves any long function onto a QThread, and one rule for its life.

The function is plain Python taking a :class:`gpudesk.progress.Progress`; the
worker only runs it off the GUI thread and turns its progress and outcome into
signals. Cancelling sets a flag that the function polls.

Lifetime: every view starts its workers the same way::

    worker = TaskWorker(work, owner=self)   # no Qt parent
    worker.finished.connect(self._on_result)
    worker.done.connect(self._on_worker_done)   # may drop self._worker here
    self._worker = worker
    worker.start()

- **Who keeps it alive.** From :meth:`TaskWorker.start` until one event-loop turn
  after ``done``, this module's registry holds the worker, and the worker holds
  its QThread. The owner's attribute is only a handle (to cancel, to say "busy");
  the owner may drop it at any moment, inside its ``done`` slot included. Nothing
  else owns a worker: it has no Qt parent.
- **When it is deleted.** ``done`` is emitted once the thread has really ended.
  On the next event-loop turn the registry lets the worker go, and Python frees
  it and its QThread when the owner's handle is gone too, never inside one of its
  own signal emissions. The worker holds no reference cycle, so this is reference
  counting on the GUI thread, not the garbage collector on whatever thread it runs.
- **The owner closed** (``closeEvent``, a dialog rejected, ``aboutToQuit``): the
  owner calls :meth:`TaskWorker.shutdown`, which cancels and waits (bounded) for
  the thread. The owner still exists, so the outcome and ``done`` still reach it,
  queued, on a later turn; a closed owner ignores what it no longer needs.
- **The owner deleted while the worker runs** (a tab or dialog torn down without
  being closed): the worker sees the owner's ``destroyed``, drops every slot
  connected to its signals and emits nothing more, so no slot runs on the deleted
  widget; then it cancels and waits as for a close. A thread that outlasts the
  wait is kept, with its worker, by the registry until it ends.
- **Application exit**: ``aboutToQuit`` cancels and waits for every worker still
  in the registry, owner or no owner.

Why this pattern: a QThread destroyed while it runs aborts the process, and a
QObject deleted inside its own signal emission crashes, so the reference that
keeps a worker alive must outlive both the owner and the last signal: a Qt parent
deletes its running children with it, and an owner's attribute dies with the
owner. Qt disconnects a deleted receiver's bound-method slots itself, but not a
lambda or partial that holds the widget: those keep its Python wrapper alive and
would call into a deleted C++ object ("MonitorPanel already deleted") when a
queued result arrived after the widget was deleted. Hence the owner guard.
"""

from __future__ import annotations

import functools
import logging
import traceback
import weakref
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QMetaMethod,
    QMetaObject,
    QObject,
    QThread,
    QTimer,
    Signal,
    Slot,
)

from gpudesk.progress import Cancelled, Progress, ProgressState

_log = logging.getLogger(__name__)

#: Every started worker until one event-loop turn after its ``done``: the one
#: strong reference that keeps a worker and its QThread alive (see the module
#: docstring).
_live: set[TaskWorker] = set()
_quit_hooked = False

#: How long deleting an owner waits for its worker's thread (a close waits as long).
STOP_WAIT_MS = 5000


def running_threads() -> list[QThread]:
    """Threads of workers that have not ended (the tests' leaked-thread check)."""
    return [worker.thread_object for worker in _live if worker.thread_object.isRunning()]


def live_workers() -> list[TaskWorker]:
    """Workers the registry still holds (started, not yet released after ``done``)."""
    return list(_live)


def shutdown_all(timeout_ms: int = STOP_WAIT_MS) -> None:
    """Cancel every live worker and wait for its thread (application exit)."""
    for worker in list(_live):
        worker.shutdown(timeout_ms)


def _release(worker: TaskWorker) -> None:
    _live.discard(worker)


def _hook_application_exit() -> None:
    global _quit_hooked
    app = QCoreApplication.instance()
    if app is None or _quit_hooked:
        return
    app.aboutToQuit.connect(shutdown_all)
    _quit_hooked = True


class _Runner(QObject):
    """Lives on the worker thread; calls the function once."""

    progressed = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, fn: Callable[[Progress], object]) -> None:
        super().__init__()
        self._fn = fn
        # The progress callback must not hold the runner: a reference cycle would
        # leave the worker to the garbage collector, which may run on any thread.
        runner = weakref.ref(self)

        def relay(fraction: float, message: str) -> None:
            # Called on the worker thread: only emit, never touch widgets here.
            alive = runner()
            if alive is not None:
                alive.progressed.emit(fraction, message)

        self.state = ProgressState(on_report=relay)

    @Slot()
    def run(self) -> None:
        try:
            result = self._fn(self.state)
        except Cancelled:
            self.cancelled.emit()
        except Exception as exc:  # the GUI shows it; the app must not die
            _log.error("task failed:\n%s", traceback.format_exc())
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            if self.state.is_cancelled():
                self.cancelled.emit()
            else:
                self.finished.emit(result)
        finally:
            # Hand this object back to the GUI thread, where it is freed with its
            # worker: a QObject must not be destroyed from a thread it does not live in.
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())


class TaskWorker(QObject):
    """Runs ``fn(progress)`` on its own thread, on behalf of ``owner``.

    Args:
        fn: the work; it takes a :class:`~gpudesk.progress.Progress`.
        owner: the object the signals are for (usually the view that starts the
            worker), or None when nothing needs guarding (tests). Once it is
            destroyed the worker cancels and emits nothing more. It does not
            become the worker's Qt parent.

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

    def __init__(self, fn: Callable[[Progress], object], *, owner: QObject | None) -> None:
        super().__init__()
        self._thread = QThread()
        self._runner = _Runner(fn)
        self._state = self._runner.state
        self._runner.moveToThread(self._thread)
        self._thread.started.connect(self._runner.run)
        # Signals cross threads as queued connections: slots run on the GUI thread.
        self._runner.finished.connect(self._on_finished)
        self._runner.failed.connect(self._on_failed)
        self._runner.cancelled.connect(self._on_cancelled)
        self._runner.progressed.connect(self._on_progressed)
        self._thread.finished.connect(self._on_thread_finished)
        self._started = False
        self._orphaned = False
        if owner is not None:
            # A bound method of this worker: Qt drops the connection if the worker goes first.
            owner.destroyed.connect(self._on_owner_destroyed)

    @property
    def thread_object(self) -> QThread:
        """The QThread the function runs on (for checks; never start or delete it)."""
        return self._thread

    @property
    def orphaned(self) -> bool:
        """True once the owner was destroyed: the worker emits nothing more."""
        return self._orphaned

    def start(self) -> None:
        if self._started:
            raise RuntimeError("a TaskWorker runs once")
        self._started = True
        _hook_application_exit()
        _live.add(self)
        self._thread.start()

    def cancel(self) -> None:
        self._state.cancel()

    def is_running(self) -> bool:
        return self._thread.isRunning()

    def wait(self, timeout_ms: int = 5000) -> bool:
        """Block until the thread ended (tests and shutdown only)."""
        return bool(self._thread.wait(timeout_ms))

    def shutdown(self, timeout_ms: int = STOP_WAIT_MS) -> None:
        """Cancel and wait for the thread: the owner is closing.

        The outcome and ``done`` are still delivered (queued) to the owner, which
        still exists. If the thread outlasts ``timeout_ms`` the registry keeps it
        until it ends, so nothing is destroyed while running.
        """
        self.cancel()
        if not shiboken6.isValid(self._thread):
            # Interpreter teardown after the event loop ended (QApplication.quit()
            # without closing the window): Python deleted the thread object first.
            return
        self._thread.quit()
        if not self._thread.wait(timeout_ms):
            _log.warning("a worker did not stop within %d ms; it is left to finish", timeout_ms)

    def _on_owner_destroyed(self) -> None:
        self._orphaned = True
        # Drop the owner's slots: a lambda holding the dead widget would keep its
        # wrapper, and through the widget's handle this worker, alive for good.
        # Found through the class's static meta-object: QMetaMethod.fromSignal keeps a
        # reference, and self.metaObject() is PySide's dynamic one once a plain method of
        # this worker is connected (this one, to the owner's destroyed): from its method
        # offset it lists that slot and no signal, so the owner's slots stayed for good.
        meta: QMetaObject = TaskWorker.staticMetaObject  # type: ignore[attr-defined]  # no stub
        for index in range(meta.methodOffset(), meta.methodCount()):
            method = meta.method(index)
            if method.methodType() is QMetaMethod.MethodType.Signal and self.isSignalConnected(
                method
            ):
                getattr(self, bytes(method.name().data()).decode()).disconnect()
        # Deleting the owner stops its work as closing it does; what outlasts the
        # wait is left to the registry.
        self.shutdown(STOP_WAIT_MS)

    def _on_progressed(self, fraction: float, message: str) -> None:
        if not self._orphaned:
            self.progressed.emit(fraction, message)

    def _on_finished(self, result: object) -> None:
        self._thread.quit()
        if not self._orphaned:
            self.finished.emit(result)

    def _on_failed(self, message: str) -> None:
        self._thread.quit()
        if not self._orphaned:
            self.failed.emit(message)

    def _on_cancelled(self) -> None:
        self._thread.quit()
        if not self._orphaned:
            self.cancelled.emit()

    def _on_thread_finished(self) -> None:
        # QThread.finished is emitted from the thread just before it really
        # ends; wait for that, so that "done" means the thread is over.
        self._thread.wait()
        if not self._orphaned:
            self.done.emit()
        # Let go one event-loop turn later, outside this emission (module docstring).
        QTimer.singleShot(0, functools.partial(_release, self))


def wired_worker(
    fn: Callable[[Progress], object],
    *,
    owner: QObject,
    progressed: Callable[[float, str], object],
    finished: Callable[[object], object],
    cancelled: Callable[[], object],
    failed: Callable[[str], object],
    done: Callable[[], object],
) -> TaskWorker:
    """A :class:`TaskWorker` for ``owner`` with every outcome connected, not yet started.

    The panels that run one job at a time with a progress bar and Cancel (the
    benchmark, the llama.cpp measurement) wire the same five signals; pass bound
    methods of ``owner`` so Qt drops the connections if it goes first.
    """
    worker = TaskWorker(fn, owner=owner)
    worker.progressed.connect(progressed)
    worker.finished.connect(finished)
    worker.cancelled.connect(cancelled)
    worker.failed.connect(failed)
    worker.done.connect(done)
    return worker
