"""TaskWorker: off the GUI thread, cancellable, and one lifetime rule (gpudesk.ui.worker)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable

import pytest
import shiboken6
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from gpudesk.progress import Progress
from gpudesk.ui.worker import TaskWorker, live_workers, running_threads, shutdown_all


def test_worker_runs_off_the_gui_thread_and_reports(qtbot: QtBot) -> None:
    gui_thread = threading.get_ident()
    seen: list[tuple[float, str]] = []

    def work(progress: Progress) -> int:
        progress.report(0.5, "half")
        return threading.get_ident()

    worker = TaskWorker(work, owner=None)
    worker.progressed.connect(lambda fraction, message: seen.append((fraction, message)))
    with (
        qtbot.waitSignal(worker.done, timeout=5000),
        qtbot.waitSignal(worker.finished, timeout=5000) as blocker,
    ):
        worker.start()
    assert blocker.args[0] != gui_thread
    assert seen == [(0.5, "half")]
    assert not running_threads()


def test_worker_cancel_sets_a_flag_the_function_sees(qtbot: QtBot) -> None:
    started = threading.Event()

    def work(progress: Progress) -> None:
        started.set()
        while True:
            progress.check()
            threading.Event().wait(0.01)

    worker = TaskWorker(work, owner=None)
    with qtbot.waitSignal(worker.cancelled, timeout=5000):
        worker.start()
        assert started.wait(5)
        worker.cancel()
    assert worker.wait(5000)


def test_worker_failure_becomes_a_message(qtbot: QtBot) -> None:
    def work(progress: Progress) -> None:
        raise ValueError("catalog folder /x is unreadable")

    worker = TaskWorker(work, owner=None)
    with qtbot.waitSignal(worker.failed, timeout=5000) as blocker:
        worker.start()
    assert blocker.args == ["catalog folder /x is unreadable"]
    assert worker.wait(5000)


def test_owner_may_drop_the_worker_from_its_done_slot(qtbot: QtBot) -> None:
    # The one owner pattern: forget the handle as soon as the worker is done. The
    # registry keeps the worker one more event-loop turn, then Python frees it and
    # its QThread (which has really ended by then, or Qt would abort the process).
    owner = QObject()
    freed: list[weakref.ref[TaskWorker]] = []
    for _ in range(30):
        holder: list[TaskWorker] = [TaskWorker(lambda progress: 42, owner=owner)]
        holder[0].done.connect(holder.clear)
        freed.append(weakref.ref(holder[0]))
        with qtbot.waitSignal(holder[0].done, timeout=5000):
            holder[0].start()
    qtbot.waitUntil(lambda: all(ref() is None for ref in freed), timeout=5000)
    assert not live_workers()
    assert not running_threads()


def test_a_worker_nobody_holds_runs_to_the_end(qtbot: QtBot) -> None:
    # Start and forget: the registry, not the caller, keeps the worker and its thread.
    results: list[object] = []
    worker = TaskWorker(lambda progress: "kept alive", owner=None)
    worker.finished.connect(results.append)
    ref = weakref.ref(worker)
    worker.start()
    del worker
    qtbot.waitUntil(lambda: results == ["kept alive"], timeout=5000)
    qtbot.waitUntil(lambda: ref() is None, timeout=5000)
    assert not running_threads()


def _blocked_work(
    release: threading.Event, entered: threading.Event, saw_cancel: list[bool]
) -> Callable[[Progress], object]:
    def work(progress: Progress) -> object:
        entered.set()
        assert release.wait(10)
        saw_cancel.append(progress.is_cancelled())
        progress.report(0.9, "almost")
        return "result nobody may see"

    return work


def _release_soon(release: threading.Event) -> None:
    timer = threading.Timer(0.05, release.set)
    timer.start()


def test_deleting_the_owner_while_the_worker_runs_calls_nothing_on_it(qtbot: QtBot) -> None:
    calls: list[str] = []
    worker_ref = _orphan_a_running_worker(calls)
    qtbot.waitUntil(lambda: worker_ref() is None, timeout=5000)  # queued results came and went
    assert calls == []
    assert not live_workers()


def _orphan_a_running_worker(calls: list[str]) -> weakref.ref[TaskWorker]:
    """Start a worker whose owner is deleted mid-run; only a weak reference comes back.

    Its own function: with the assertion-pass hook (tests/reach.py) every passing assert
    snapshots the frame's locals, and a snapshot in the test's frame would keep the worker
    alive after a ``del``. This frame, and its snapshot, end on return.
    """
    release, entered = threading.Event(), threading.Event()
    saw_cancel: list[bool] = []
    owner = QLabel("owner")

    def touch_owner(what: str) -> None:
        calls.append(what)
        owner.setText(what)  # on a deleted QLabel: RuntimeError "already deleted"

    worker = TaskWorker(_blocked_work(release, entered, saw_cancel), owner=owner)
    # Lambdas keep the owner's wrapper alive: Qt cannot disconnect them by itself.
    worker.progressed.connect(lambda fraction, message: touch_owner("progressed"))
    worker.finished.connect(lambda result: touch_owner("finished"))
    worker.failed.connect(lambda message: touch_owner("failed"))
    worker.cancelled.connect(lambda: touch_owner("cancelled"))
    worker.done.connect(lambda: touch_owner("done"))
    worker.start()
    assert entered.wait(5)
    _release_soon(release)
    shiboken6.delete(owner)  # the C++ widget goes; its Python wrapper lives on in the lambdas
    assert not shiboken6.isValid(owner)
    assert worker.orphaned
    assert not worker.is_running()  # deleting the owner cancelled and waited, as a close does
    assert saw_cancel == [True]
    return weakref.ref(worker)


def _slot_holding_an_object(worker: TaskWorker) -> weakref.ref[QObject]:
    """Connect a lambda holding a fresh object; the object lives in no test's locals."""
    panel = QObject()
    worker.finished.connect(lambda result: panel.setObjectName("sampled"))
    return weakref.ref(panel)


def test_a_worker_held_by_its_deleted_owner_lets_go_of_the_owners_slots(qtbot: QtBot) -> None:
    # The monitor panel holds its sample worker and connects a lambda holding the panel:
    # deleted mid-sample, the panel's Python side (plots, 35 context menus) stayed for good.
    release, entered = threading.Event(), threading.Event()
    owner = QLabel("owner")
    worker = TaskWorker(_blocked_work(release, entered, []), owner=owner)
    panel = _slot_holding_an_object(worker)
    worker.start()
    assert entered.wait(5)
    _release_soon(release)
    shiboken6.delete(owner)
    gc.collect()
    assert panel() is None  # the owner's slot went, and what it held, while the worker lives
    assert worker.orphaned
    qtbot.waitUntil(lambda: not live_workers(), timeout=5000)


def test_a_worker_that_outlasts_its_deleted_owner_is_kept_until_it_ends(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gpudesk.ui.worker.STOP_WAIT_MS", 20)
    release, entered = threading.Event(), threading.Event()
    saw_cancel: list[bool] = []
    owner = QObject()
    calls: list[str] = []
    worker = TaskWorker(_blocked_work(release, entered, saw_cancel), owner=owner)
    worker.finished.connect(lambda result: calls.append(f"finished on {owner}"))
    worker.done.connect(lambda: calls.append(f"done on {owner}"))
    worker.start()
    assert entered.wait(5)
    shiboken6.delete(owner)  # the work ignores cancel and outlasts the 20 ms wait
    assert worker.is_running()
    thread = worker.thread_object
    del worker, thread  # nobody holds it now but the registry: no "destroyed while running"
    assert len(live_workers()) == 1
    release.set()
    qtbot.waitUntil(lambda: not live_workers(), timeout=5000)
    assert not running_threads()
    assert calls == []


def test_closing_the_owner_waits_and_still_tells_it(qtbot: QtBot) -> None:
    release, entered = threading.Event(), threading.Event()
    saw_cancel: list[bool] = []
    owner = QObject()
    outcomes: list[str] = []
    worker = TaskWorker(_blocked_work(release, entered, saw_cancel), owner=owner)
    worker.cancelled.connect(lambda: outcomes.append("cancelled"))
    worker.done.connect(lambda: outcomes.append("done"))
    worker.start()
    assert entered.wait(5)
    _release_soon(release)
    worker.shutdown()  # what an owner's closeEvent calls: cancel and wait
    assert not worker.is_running()
    qtbot.waitUntil(lambda: outcomes == ["cancelled", "done"], timeout=5000)
    assert saw_cancel == [True]


def test_application_exit_stops_the_workers_nobody_holds(qtbot: QtBot) -> None:
    release, entered = threading.Event(), threading.Event()
    saw_cancel: list[bool] = []
    TaskWorker(_blocked_work(release, entered, saw_cancel), owner=None).start()
    assert entered.wait(5)
    _release_soon(release)
    shutdown_all()  # what aboutToQuit calls
    assert not running_threads()
    assert saw_cancel == [True]
    qtbot.waitUntil(lambda: not live_workers(), timeout=5000)


_QUIT_WITHOUT_CLOSING = """
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget
from gpudesk.ui.worker import TaskWorker

app = QApplication([])
owner = QWidget()
owner.show()
owner.worker = TaskWorker(lambda progress: 42, owner=owner)
owner.worker.start()
owner.worker.wait()
QTimer.singleShot(200, app.quit)  # as a session manager may: the window is never closed
app.exec()
print("event loop over")
"""


def test_quitting_without_closing_the_owner_exits_cleanly() -> None:
    # At interpreter teardown Python may delete the QThread before the owner's
    # destroyed signal reaches the worker; that used to print a RuntimeError.
    environment = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-c", _QUIT_WITHOUT_CLOSING],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "event loop over" in done.stdout
    assert "Traceback" not in done.stderr and "RuntimeError" not in done.stderr, done.stderr


@pytest.mark.parametrize("outcome", ["finished", "failed", "cancelled"])
def test_a_wired_worker_reaches_each_slot_it_was_given(qtbot: QtBot, outcome: str) -> None:
    from gpudesk.ui.worker import wired_worker

    owner = QObject()
    seen: list[tuple[str, object]] = []

    def work(progress: Progress) -> int:
        progress.report(0.25, "a quarter")
        if outcome == "failed":
            raise RuntimeError("broke")
        if outcome == "cancelled":
            worker.cancel()
            progress.check()
        return 7

    worker = wired_worker(
        work,
        owner=owner,
        progressed=lambda fraction, message: seen.append(("progressed", (fraction, message))),
        finished=lambda result: seen.append(("finished", result)),
        cancelled=lambda: seen.append(("cancelled", None)),
        failed=lambda message: seen.append(("failed", "broke" in message)),
        done=lambda: seen.append(("done", None)),
    )
    assert not worker.is_running()  # wired, not started
    with qtbot.waitSignal(worker.done, timeout=5000):
        worker.start()
    expected = {"finished": 7, "failed": True, "cancelled": None}[outcome]
    assert seen == [("progressed", (0.25, "a quarter")), (outcome, expected), ("done", None)]
