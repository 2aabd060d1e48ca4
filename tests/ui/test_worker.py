import threading

from pytestqt.qtbot import QtBot

from gpudesk.progress import Progress
from gpudesk.ui.worker import TaskWorker, running_threads


def test_worker_runs_off_the_gui_thread_and_reports(qtbot: QtBot) -> None:
    gui_thread = threading.get_ident()
    seen: list[tuple[float, str]] = []

    def work(progress: Progress) -> int:
        progress.report(0.5, "half")
        return threading.get_ident()

    worker = TaskWorker(work)
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

    worker = TaskWorker(work)
    with qtbot.waitSignal(worker.cancelled, timeout=5000):
        worker.start()
        assert started.wait(5)
        worker.cancel()
    assert worker.wait(5000)


def test_worker_failure_becomes_a_message(qtbot: QtBot) -> None:
    def work(progress: Progress) -> None:
        raise ValueError("catalog folder /x is unreadable")

    worker = TaskWorker(work)
    with qtbot.waitSignal(worker.failed, timeout=5000) as blocker:
        worker.start()
    assert blocker.args == ["catalog folder /x is unreadable"]
    assert worker.wait(5000)


def test_owner_may_drop_the_worker_from_its_done_slot(qtbot: QtBot) -> None:
    # A common owner pattern: forget the worker as soon as it is done. The
    # QThread must have really ended by then, or Qt aborts the process.
    holder: list[TaskWorker] = []
    for _ in range(30):
        worker = TaskWorker(lambda progress: 42)
        holder.append(worker)

        def forget() -> None:
            holder[0].deleteLater()
            holder.clear()

        worker.done.connect(forget)
        with qtbot.waitSignal(worker.destroyed, timeout=5000):
            worker.start()
            del worker
    assert not running_threads()
