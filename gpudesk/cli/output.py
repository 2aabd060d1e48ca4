"""The CLI's one output path: every text written to stdout or stderr is scrubbed.

:func:`scrubbed_streams` (entered once, in :func:`gpudesk.cli.main`) puts a
:class:`ScrubbingStream` in front of ``sys.stdout`` and ``sys.stderr`` for the
whole command, argparse's own messages included, so no subcommand, present or
future, can print a raw control character from untrusted data (see
:mod:`gpudesk.terminal_text`). Code that writes a terminal sequence of its own
(a progress line's ``\\r\\x1b[K``) says so with :func:`write_control`.

Look streams up at call time (``print(..., file=sys.stderr)``), never keep one
from import time: only the one in ``sys`` at the time of the call is scrubbed.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

from gpudesk.terminal_text import scrub


class ScrubbingStream:
    """A text stream that writes everything through :func:`scrub` to ``raw``.

    The scrub works character by character, so text split across writes (as
    ``print`` does) is scrubbed the same as in one piece. Everything else
    (``flush``, ``fileno``, ``isatty``, ``encoding``, ...) is ``raw``'s.
    """

    def __init__(self, raw: IO[str]) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(scrub(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def write_control(stream: IO[str] | ScrubbingStream, sequence: str) -> None:
    """Write a terminal control sequence of GPUDesk's own, unscrubbed."""
    raw = stream.raw if isinstance(stream, ScrubbingStream) else stream
    raw.write(sequence)


@contextlib.contextmanager
def scrubbed_streams() -> Iterator[None]:
    """Scrub ``sys.stdout`` and ``sys.stderr`` until the block ends (nesting is harmless)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, ScrubbingStream):
        sys.stdout = ScrubbingStream(sys.stdout)  # type: ignore[assignment]
    if not isinstance(sys.stderr, ScrubbingStream):
        sys.stderr = ScrubbingStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


class StderrProgress:
    """Progress on one rewritten terminal line of stderr (``[ 40%] message``, cut to 79
    columns); silent when stderr is not a terminal or ``enabled`` is False.
    ``state`` is a :class:`~gpudesk.progress.ProgressState` reporting to it."""

    def __init__(self, *, enabled: bool | None = None) -> None:
        from gpudesk.progress import ProgressState

        self._tty = sys.stderr.isatty() if enabled is None else enabled
        self.state = ProgressState(on_report=self.show)

    def show(self, fraction: float, message: str) -> None:
        if self._tty:
            write_control(sys.stderr, "\r\x1b[K")  # ours; the message is scrubbed
            sys.stderr.write(f"[{fraction:4.0%}] {message}"[:79])
            sys.stderr.flush()

    def close(self) -> None:
        if self._tty:
            write_control(sys.stderr, "\r\x1b[K")
            sys.stderr.flush()
