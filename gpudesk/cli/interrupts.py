"""Ctrl-C while Qt paints: noted, acted on between steps, never raised inside Qt.

A ``KeyboardInterrupt`` is raised wherever Python happens to be when SIGINT
arrives, and during an export that is often inside a Python method that Qt's
C++ called (a graphics item's ``paint`` under ``QGraphicsScene.render``) or
between a painter's ``begin`` and ``end`` on a PDF writer. Unwinding from
there left Qt in states it does not survive: a SIGABRT, a SIGSEGV or a
traceback. Under :func:`interrupts_deferred` SIGINT only sets a flag; the
export checks it between steps (``Progress.check``) and stops cleanly, the
old file untouched, and the command exits 130 like any interrupted one.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from gpudesk.progress import Cancelled, ProgressState


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[ProgressState]:
    """A progress state that SIGINT cancels; ``KeyboardInterrupt`` once the block is left.

    Pass the state to the work as its ``progress`` (a ``Cancelled`` it raises
    becomes the ``KeyboardInterrupt``). Off the main thread, where Python
    cannot install a signal handler, interrupts are not deferred; where SIGINT
    is ignored (``nohup``, a shell's background job) it stays ignored.
    """
    state = ProgressState()
    main_thread = threading.current_thread() is threading.main_thread()
    if not main_thread or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield state  # off the main thread, or SIGINT ignored (nohup, a background job)
        return

    def note(signum: int, frame: FrameType | None) -> None:
        state.cancel()

    previous = signal.signal(signal.SIGINT, note)
    try:
        yield state
    except Cancelled:
        if not state.is_cancelled():
            raise
    finally:
        signal.signal(signal.SIGINT, previous)
    if state.is_cancelled():
        raise KeyboardInterrupt


__all__ = ["interrupts_deferred"]
