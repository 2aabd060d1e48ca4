"""One way to run an external program, and one way to call a library that may hang.

Every program GPUDesk runs (``nvidia-smi``, ``system_profiler``, ``scontrol``,
``srun``, ``git``, ``python -m gpudesk``) goes through :class:`ToolProcess` or
:func:`run_tool`. The rule, and why:

- The program starts in its own session (so its own process group), with
  stdin closed: a timeout ends the program *and everything it started*, and
  nothing it starts can read our terminal.
- Its pipes are read without waiting for end-of-file. A wrapper script or a
  daemon it forks can keep stdout open long after the program itself has
  exited; once the program has exited, whatever it wrote is already in the
  pipe, so reading stops :data:`EXIT_GRACE_S` later and the leftovers in its
  process group are killed.
- Output is capped: a program that prints without end costs its cap, not all
  memory.
- Waiting is always bounded, the kill included. A tool stuck on a GPU that
  fell off the bus can sit in uninterruptible sleep, where even SIGKILL waits
  until the driver lets go; after :data:`REAP_WAIT_S` the reaping is left to
  a daemon thread and the caller gets its answer.

:func:`call_with_deadline` is the same rule for a Python call (an NVML query
can hang the same way): it runs in a daemon thread the caller abandons at the
deadline.

Standard library only: this is a shared bottom-layer module.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar, cast

from gpudesk.errors import GpuDeskError

__all__ = [
    "DEFAULT_MAX_STDERR_BYTES",
    "DEFAULT_MAX_STDOUT_BYTES",
    "EXIT_GRACE_S",
    "REAP_WAIT_S",
    "CallTimeoutError",
    "ExternalError",
    "LineBuffer",
    "Stream",
    "ToolError",
    "ToolNotFoundError",
    "ToolOutputLimitError",
    "ToolProcess",
    "ToolResult",
    "ToolStartError",
    "ToolTimeoutError",
    "call_with_deadline",
    "read_many",
    "run_tool",
]

Stream = Literal["stdout", "stderr"]
T = TypeVar("T")

DEFAULT_MAX_STDOUT_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_STDERR_BYTES = 1024 * 1024
#: After the program has exited, how long its pipes are still read: what it wrote is
#: already there, so anything later comes from a process it left behind.
EXIT_GRACE_S = 0.5
#: How long a killed program is waited for before a daemon thread takes over reaping it.
REAP_WAIT_S = 2.0
_CHUNK_BYTES = 64 * 1024
#: How often a running program is asked whether it has exited while its pipes are quiet.
_POLL_S = 0.05


class ExternalError(GpuDeskError):
    """An external program, or a call given a deadline, gave no usable answer."""


class ToolError(ExternalError):
    """An external program gave no usable answer; ``program`` is its name for messages."""

    def __init__(self, argv: Sequence[str], message: str) -> None:
        super().__init__(message)
        self.argv = tuple(argv)
        self.program = Path(argv[0]).name if argv else "?"


class ToolStartError(ToolError):
    """The program could not be started (``os_error`` says why)."""

    def __init__(self, argv: Sequence[str], os_error: OSError) -> None:
        name = Path(argv[0]).name if argv else "?"
        super().__init__(argv, f"cannot run {name}: {os_error.strerror or os_error}")
        self.os_error = os_error


class ToolNotFoundError(ToolStartError):
    """No such program (not on PATH, or the path given does not exist)."""


class ToolTimeoutError(ToolError):
    """No answer within ``timeout_s``; the program's process group was killed.

    ``stdout`` and ``stderr`` hold what it printed until then.
    """

    def __init__(
        self, argv: Sequence[str], timeout_s: float, stdout: bytes = b"", stderr: bytes = b""
    ) -> None:
        name = Path(argv[0]).name if argv else "?"
        super().__init__(argv, f"{name} did not answer within {timeout_s:g} s")
        self.timeout_s = timeout_s
        self.stdout = stdout
        self.stderr = stderr


class ToolOutputLimitError(ToolError):
    """The program printed more than ``limit_bytes`` on ``stream``; it was killed there."""

    def __init__(self, argv: Sequence[str], stream: Stream, limit_bytes: int) -> None:
        name = Path(argv[0]).name if argv else "?"
        super().__init__(argv, f"{name} printed more than {limit_bytes} bytes on {stream}")
        self.stream: Stream = stream
        self.limit_bytes = limit_bytes


class CallTimeoutError(ExternalError):
    """A call made through :func:`call_with_deadline` did not return in time."""

    def __init__(self, what: str, timeout_s: float) -> None:
        super().__init__(f"{what} did not answer within {timeout_s:g} s")
        self.what = what
        self.timeout_s = timeout_s


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A program that exited within its time: its exit status and what it printed.

    ``left_running`` is True when a process it started still held its pipes
    open after it exited (that process group was killed; the output is the
    program's own).
    """

    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    duration_s: float
    left_running: bool = False

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


def _reap_in_background(process: subprocess.Popen[bytes]) -> None:
    # A daemon thread may wait forever (a process in uninterruptible sleep); nobody joins it.
    threading.Thread(target=process.wait, name=f"reap-{process.pid}", daemon=True).start()


class ToolProcess:
    """One started program in its own process group, its pipes read without blocking.

    Use it where output is wanted as it comes (``srun``); :func:`run_tool`
    is the whole run for everything else. Always :meth:`close` it (or use it
    as a context manager): that kills what is left of its process group.

    Every program has a deadline, ``timeout_s`` after its start: a caller that
    wants a gentler end (SIGTERM first) ends it before then; past it, the next
    :meth:`read` or :func:`read_many` kills the process group and stops reading
    its pipes, so no loop over a stuck program can outlive the deadline.

    Raises:
        ToolNotFoundError: no such program.
        ToolStartError: it exists but cannot be started.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.argv = tuple(argv)
        self.timeout_s = timeout_s
        try:
            self._process: subprocess.Popen[bytes] = subprocess.Popen(
                list(self.argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise ToolNotFoundError(self.argv, exc) from exc
        except OSError as exc:
            raise ToolStartError(self.argv, exc) from exc
        self.started = time.monotonic()
        self.deadline = self.started + timeout_s
        self._exited_at: float | None = None
        self._killed = False
        #: True once the deadline passed with the program still running (it was killed).
        self.timed_out = False
        assert self._process.stdout is not None and self._process.stderr is not None
        self._open: dict[int, Stream] = {
            self._process.stdout.fileno(): "stdout",
            self._process.stderr.fileno(): "stderr",
        }
        for fd in self._open:
            os.set_blocking(fd, False)

    @property
    def pid(self) -> int:
        """The program's PID, which is also its process group's ID."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self.poll()

    @property
    def open_streams(self) -> tuple[Stream, ...]:
        """The pipes not yet at end-of-file."""
        return tuple(self._open.values())

    def poll(self) -> int | None:
        """The exit status once the program has exited, else None (never blocks)."""
        code = self._process.poll()
        if code is not None and self._exited_at is None:
            self._exited_at = time.monotonic()
        return code

    def done_reading(self, grace_s: float = EXIT_GRACE_S) -> bool:
        """True once both pipes are at end-of-file, or the program exited ``grace_s`` ago."""
        if not self._open:
            return True
        if self.poll() is None or self._exited_at is None:
            return False
        return time.monotonic() - self._exited_at >= grace_s

    def _fds(self) -> list[tuple[int, Stream]]:
        self._end_if_past_deadline()
        return list(self._open.items())

    def _end_if_past_deadline(self) -> None:
        """Past the deadline: kill the group and stop reading (its pipes count as done,
        even if a process stuck in the kernel keeps them open)."""
        if time.monotonic() < self.deadline or not (self._open or self.poll() is None):
            return
        self.timed_out = True
        self.kill()
        self._open.clear()

    def _read_fd(self, fd: int) -> tuple[Stream, bytes] | None:
        stream = self._open.get(fd)
        if stream is None:
            return None
        try:
            data = os.read(fd, _CHUNK_BYTES)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            del self._open[fd]
        return stream, data

    def read(self, wait_s: float) -> list[tuple[Stream, bytes]]:
        """What the pipes hold now, waiting at most ``wait_s`` for something to arrive.

        Each item is a stream and a chunk; an empty chunk means that stream
        reached end-of-file.
        """
        return [(stream, data) for _tool, stream, data in read_many([self], wait_s)]

    def wait(self, timeout_s: float) -> int | None:
        """The exit status, waiting at most ``timeout_s`` (and never past the deadline
        plus :data:`REAP_WAIT_S`); None if it is still running."""
        latest = self.deadline + REAP_WAIT_S - time.monotonic()
        try:
            self._process.wait(timeout=max(0.0, min(timeout_s, latest)))
        except subprocess.TimeoutExpired:
            return None
        return self.poll()

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the program's whole process group (gone: nothing to do)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signum)

    def kill(self, reap_wait_s: float = REAP_WAIT_S) -> None:
        """SIGKILL the process group and wait at most ``reap_wait_s`` for the program."""
        self._killed = True
        self.signal_group(signal.SIGKILL)
        self.wait(reap_wait_s)

    def stop(self, term_wait_s: float, reap_wait_s: float = REAP_WAIT_S) -> None:
        """SIGTERM the process group, give it ``term_wait_s`` to exit, then :meth:`kill`."""
        if self.poll() is None:
            self.signal_group(signal.SIGTERM)
            self.wait(term_wait_s)
        self.kill(reap_wait_s)

    def close(self, reap_wait_s: float = REAP_WAIT_S) -> None:
        """Kill what is left of the process group, close the pipes; never blocks for long.

        A program that exited cleanly, its pipes at end-of-file, is left
        alone: its group may already hold someone else's PID by now.
        """
        if not self._killed and (self.poll() is None or self._open):
            self.kill(reap_wait_s)
        for fd in list(self._open):
            del self._open[fd]
        for pipe in (self._process.stdout, self._process.stderr):
            if pipe is not None:
                pipe.close()
        if self.poll() is None:
            _reap_in_background(self._process)

    def __enter__(self) -> ToolProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def read_many(
    tools: Sequence[ToolProcess], wait_s: float
) -> list[tuple[ToolProcess, Stream, bytes]]:
    """What any of ``tools``' pipes hold now, waiting at most ``wait_s`` for something.

    An empty chunk means that stream reached end-of-file.
    """
    with selectors.DefaultSelector() as selector:
        for tool in tools:
            for fd, _stream in tool._fds():
                selector.register(fd, selectors.EVENT_READ, tool)
        if not selector.get_map():
            time.sleep(max(0.0, wait_s))
            return []
        ready = selector.select(max(0.0, wait_s))
    found: list[tuple[ToolProcess, Stream, bytes]] = []
    for key, _events in ready:
        tool = key.data
        assert isinstance(tool, ToolProcess)
        got = tool._read_fd(key.fd)
        if got is not None:
            found.append((tool, got[0], got[1]))
    return found


def run_tool(
    argv: Sequence[str],
    timeout_s: float,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    max_stdout_bytes: int = DEFAULT_MAX_STDOUT_BYTES,
    max_stderr_bytes: int = DEFAULT_MAX_STDERR_BYTES,
    exit_grace_s: float = EXIT_GRACE_S,
) -> ToolResult:
    """Run a program to its end, or to ``timeout_s``, whichever comes first.

    A non-zero exit is not an error here: the result carries the status.

    Raises:
        ToolNotFoundError: no such program.
        ToolStartError: it cannot be started.
        ToolTimeoutError: it (or a process it left holding its pipes open past its
            own exit plus ``exit_grace_s``) took longer than ``timeout_s``; the
            process group is killed first.
        ToolOutputLimitError: more output than the cap on one stream; killed there.
    """
    deadline = time.monotonic() + timeout_s
    kept: dict[Stream, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
    limits: dict[Stream, int] = {"stdout": max_stdout_bytes, "stderr": max_stderr_bytes}
    with ToolProcess(argv, timeout_s=timeout_s, env=env, cwd=cwd) as tool:
        while not tool.done_reading(exit_grace_s):
            left = deadline - time.monotonic()
            if left <= 0 or tool.timed_out:
                tool.kill()
                raise ToolTimeoutError(
                    argv, timeout_s, bytes(kept["stdout"]), bytes(kept["stderr"])
                )
            for stream, data in tool.read(min(left, _POLL_S)):
                kept[stream] += data
                if len(kept[stream]) > limits[stream]:
                    tool.kill()
                    raise ToolOutputLimitError(argv, stream, limits[stream])
        # Both pipes closed, but the program may still be running (it closed them itself).
        code = tool.wait(deadline - time.monotonic())
        if code is None or tool.timed_out:
            tool.kill()
            raise ToolTimeoutError(argv, timeout_s, bytes(kept["stdout"]), bytes(kept["stderr"]))
        took = time.monotonic() - tool.started
        left_running = bool(tool.open_streams)
    return ToolResult(
        tuple(argv), code, bytes(kept["stdout"]), bytes(kept["stderr"]), took, left_running
    )


class LineBuffer:
    """Bytes in, complete text lines out (UTF-8, bad bytes replaced, line ends removed).

    A line longer than ``max_chars`` is cut there; the rest of it is dropped
    as it arrives, so a line without end costs ``max_chars``, not memory.
    """

    def __init__(self, max_chars: int = 100_000) -> None:
        self.max_chars = max_chars
        # UTF-8 takes at most 4 bytes a character: this many bytes always hold max_chars.
        self._max_bytes = 4 * max_chars
        self._partial = bytearray()

    def feed(self, data: bytes) -> list[str]:
        """The lines ``data`` completed."""
        *complete, rest = data.split(b"\n")
        lines: list[str] = []
        for piece in complete:
            self._partial += piece[: max(0, self._max_bytes - len(self._partial))]
            lines.append(self._decode(bytes(self._partial)))
            self._partial.clear()
        self._partial += rest[: max(0, self._max_bytes - len(self._partial))]
        return lines

    def finish(self) -> list[str]:
        """The last line, if the output did not end with a newline."""
        if not self._partial:
            return []
        line = self._decode(bytes(self._partial))
        self._partial.clear()
        return [line]

    def _decode(self, raw: bytes) -> str:
        return raw.decode("utf-8", errors="replace").rstrip("\r")[: self.max_chars]


def call_with_deadline(fn: Callable[[], T], timeout_s: float, what: str = "the call") -> T:
    """``fn()``'s value or exception, or :class:`CallTimeoutError` at ``timeout_s``.

    ``fn`` runs in a daemon thread that is abandoned at the deadline: a call
    stuck in a driver cannot be interrupted, only left behind. So ``fn`` must
    not hold anything the caller needs afterwards (take locks with a timeout
    elsewhere).

    Raises:
        CallTimeoutError: no answer within ``timeout_s`` (``what`` names it).
    """
    outcome: list[tuple[bool, object]] = []
    finished = threading.Event()

    def work() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as exc:  # handed to the caller's thread, whatever it is
            outcome.append((False, exc))
        finally:
            finished.set()

    worker = threading.Thread(target=work, name=f"deadline: {what}", daemon=True)
    worker.start()
    if not finished.wait(timeout_s):
        raise CallTimeoutError(what, timeout_s)
    returned, value = outcome[0]
    if not returned:
        assert isinstance(value, BaseException)
        raise value
    return cast(T, value)
