"""Signal dispositions the interrupt tests set for themselves, however the suite was started.

A suite started in the background (``bash .ci/run &`` from a script, ``nohup``,
many CI runners) inherits SIGINT as *ignored*, and so does every process it
starts: Python then installs no KeyboardInterrupt handler, a Ctrl-C sent to a
child does nothing, and a test expecting exit 130 sees the command finish. So a
test that sends SIGINT sets the disposition it needs: in a child it starts
(:func:`default_sigint_in_child`, a ``preexec_fn``) or in this process
(:func:`default_sigint_here`).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


def default_sigint_in_child() -> None:
    """Run in the child between fork and exec: SIGINT back to its default, so Python
    started there turns Ctrl-C into KeyboardInterrupt as it does at a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def default_sigint_here() -> Iterator[None]:
    """Python's own SIGINT handler in this process for the block, then the one before."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
