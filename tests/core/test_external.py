"""Issue 39: one way to run an external program, bounded whatever the program does.

Each fake is a small shell or Python program that writes the PIDs it starts
to a file, so a test can check its whole process group is gone afterwards
and clean up by PID if it is not. Time bounds are generous (a loaded
two-CPU machine): what they catch is a wait for the 600 s the fakes sleep.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gpudesk import external
from gpudesk.external import (
    CallTimeoutError,
    LineBuffer,
    ToolNotFoundError,
    ToolOutputLimitError,
    ToolProcess,
    ToolStartError,
    ToolTimeoutError,
    call_with_deadline,
    run_tool,
)

#: A run with a 1 s timeout must be over within this (kill, reap and start-up included).
BOUND_S = 8.0


def _state(pid: int) -> tuple[str, int] | None:
    """(state letter, process group) of a live process, None when it is gone or a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return None if fields[0] in "ZX" else (fields[0], int(fields[2]))


def _members(pgid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (state := _state(int(entry.name))) and state[1] == pgid:
            found.append(int(entry.name))
    return found


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in process group ``pgid``, a moment after a kill.

    SIGKILL is delivered at once but a process takes a moment to die (and one
    that is running on the other CPU a moment more), so this looks again for
    up to 5 s before naming the survivors.
    """
    deadline = time.monotonic() + 5
    while (found := _members(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def gone(pid: int) -> bool:
    """True once ``pid`` is dead (looked at for up to 5 s, as :func:`group_members`)."""
    deadline = time.monotonic() + 5
    while _state(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    return _state(pid) is None


def _recorded(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()]


def _wait_recorded(path: Path, count: int) -> list[int]:
    deadline = time.monotonic() + 10
    while len(_recorded(path)) < count:
        assert time.monotonic() < deadline, "the fake never wrote its PIDs"
        time.sleep(0.02)
    return _recorded(path)


def _sh(body: str) -> list[str]:
    return ["/bin/sh", "-c", body]


def test_a_program_that_sleeps_forever_is_killed_at_the_timeout(pids: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError, match=r"^sh did not answer within 1 s$") as caught:
        run_tool(_sh(f"echo $$ >> {pids}; echo partial; exec sleep 600"), timeout_s=1)
    assert time.monotonic() - started < BOUND_S
    assert caught.value.stdout == b"partial\n" and caught.value.program == "sh"
    (pid,) = _recorded(pids)
    assert group_members(pid) == []


def test_a_grandchild_holding_stdout_does_not_hold_the_answer(pids: Path) -> None:
    # The program answers and exits; a process it started keeps the pipe open.
    started = time.monotonic()
    result = run_tool(
        _sh(f"echo $$ >> {pids}; sleep 600 & echo $! >> {pids}; echo answer; exit 3"),
        timeout_s=30,
    )
    assert time.monotonic() - started < BOUND_S
    assert (result.returncode, result.stdout, result.stderr) == (3, b"answer\n", b"")
    leader, grandchild = _recorded(pids)
    assert gone(grandchild)  # its own process group was killed with it
    assert group_members(leader) == []


def test_a_grandchild_holding_stdout_of_a_hung_program_is_killed_too(pids: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError):
        run_tool(_sh(f"echo $$ >> {pids}; sleep 600 & echo $! >> {pids}; sleep 600"), 1)
    assert time.monotonic() - started < BOUND_S
    leader, grandchild = _recorded(pids)
    assert gone(grandchild) and group_members(leader) == []


def test_a_grandchild_in_its_own_session_is_left_but_not_waited_for(pids: Path) -> None:
    # setsid takes it out of reach of the group kill; the answer must not wait for it.
    started = time.monotonic()
    result = run_tool(
        [
            sys.executable,
            "-c",
            "import os, subprocess, sys\n"
            f"child = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
            f"open({str(pids)!r}, 'a').write(f'{{child.pid}}\\n')\n"
            "print('done', flush=True)",
        ],
        timeout_s=30,
    )
    assert time.monotonic() - started < BOUND_S
    assert result.stdout == b"done\n" and result.returncode == 0


def test_a_program_ignoring_sigterm_is_killed(pids: Path) -> None:
    ignoring = [
        sys.executable,
        "-c",
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
        "time.sleep(600)",
    ]
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError):
        run_tool(ignoring, timeout_s=1)
    assert time.monotonic() - started < BOUND_S
    with ToolProcess(ignoring, timeout_s=60) as tool:
        (_, pid) = _wait_recorded(pids, 2)
        assert pid == tool.pid
        began = time.monotonic()
        tool.stop(term_wait_s=0.5)  # SIGTERM is ignored: SIGKILL follows
        assert time.monotonic() - began < BOUND_S and tool.returncode == -signal.SIGKILL
    assert group_members(pid) == []


def test_endless_output_is_stopped_at_the_cap(pids: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ToolOutputLimitError) as caught:
        run_tool(
            _sh(f"echo $$ >> {pids}; exec yes xxxxxxxxxxxxxxxx"),
            timeout_s=60,
            max_stdout_bytes=256 * 1024,
        )
    assert time.monotonic() - started < BOUND_S
    assert (caught.value.stream, caught.value.limit_bytes) == ("stdout", 256 * 1024)
    assert group_members(_recorded(pids)[0]) == []
    with pytest.raises(ToolOutputLimitError, match="on stderr"):
        run_tool(_sh("exec yes >&2"), timeout_s=60, max_stderr_bytes=1024)


def test_a_lot_of_output_at_the_cap_is_read_whole() -> None:
    size = 3 * 1024 * 1024 + 17
    result = run_tool(
        [sys.executable, "-c", f"import sys; sys.stdout.buffer.write(b'y' * {size})"],
        timeout_s=60,
        max_stdout_bytes=size,
    )
    assert result.stdout == b"y" * size and result.returncode == 0


def test_a_program_that_closes_its_pipes_and_hangs_times_out(pids: Path) -> None:
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError):
        run_tool(_sh(f"echo $$ >> {pids}; exec >&- 2>&-; exec sleep 600"), timeout_s=1)
    assert time.monotonic() - started < BOUND_S
    assert group_members(_recorded(pids)[0]) == []


def test_a_kill_that_does_not_take_is_not_waited_for(
    pids: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process in uninterruptible sleep outlives SIGKILL for a while: answer anyway."""
    swallowed: list[int] = []
    monkeypatch.setattr(os, "killpg", lambda pgid, signum: swallowed.append(signum))
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError):
        run_tool(_sh(f"echo $$ >> {pids}; exec sleep 600"), timeout_s=1)
    took = time.monotonic() - started
    assert took < 1 + external.REAP_WAIT_S + BOUND_S
    assert signal.SIGKILL in swallowed
    monkeypatch.undo()
    (pid,) = _recorded(pids)
    assert _state(pid) is not None  # still there: the daemon reaper waits for it
    reapers = [t for t in threading.enumerate() if t.name == f"reap-{pid}"]
    assert reapers and all(t.daemon for t in reapers)
    os.killpg(pid, signal.SIGKILL)  # the driver "lets go"
    for reaper in reapers:
        reaper.join(10)
    assert gone(pid)


def test_a_missing_or_unusable_program_is_a_start_error(tmp_path: Path) -> None:
    with pytest.raises(ToolNotFoundError, match="cannot run nowhere-tool"):
        run_tool([str(tmp_path / "nowhere-tool")], timeout_s=5)
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(ToolStartError) as caught:
        run_tool([str(script)], timeout_s=5)
    assert not isinstance(caught.value, ToolNotFoundError)


def test_stdin_is_closed_and_the_environment_is_passed() -> None:
    result = run_tool(
        _sh('cat; echo "[$GPUDESK_TEST_VALUE]"'), timeout_s=30, env={"GPUDESK_TEST_VALUE": "v"}
    )
    assert result.stdout_text == "[v]\n"


@settings(max_examples=12)
@given(
    payload=st.binary(max_size=50_000),  # as hex, under one argument's 128 KiB
    code=st.integers(0, 255),
    to_stderr=st.booleans(),
    lingering=st.booleans(),
)
def test_any_output_and_exit_status_come_back_whole(
    payload: bytes, code: int, to_stderr: bool, lingering: bool
) -> None:
    # Written in pieces, maybe to stderr, maybe with a child left holding the pipes.
    script = (
        "import subprocess, sys\n"
        "data = bytes.fromhex(sys.argv[1])\n"
        f"out = sys.{'stderr' if to_stderr else 'stdout'}.buffer\n"
        "for start in range(0, len(data), 7919):\n"
        "    out.write(data[start:start + 7919]); out.flush()\n"
        + ("subprocess.Popen(['sleep', '600'])\n" if lingering else "")
        + f"sys.exit({code})\n"
    )
    started = time.monotonic()
    result = run_tool([sys.executable, "-c", script, payload.hex()], timeout_s=60)
    assert time.monotonic() - started < 30
    assert result.returncode == code
    assert (result.stderr if to_stderr else result.stdout) == payload
    assert (result.stdout if to_stderr else result.stderr) == b""


@given(
    data=st.binary(max_size=400),
    cuts=st.lists(st.integers(0, 400), max_size=8),
    max_chars=st.integers(1, 50),
)
def test_line_buffer_gives_the_same_lines_however_the_bytes_arrive(
    data: bytes, cuts: list[int], max_chars: int
) -> None:
    whole = LineBuffer(max_chars)
    expected = whole.feed(data) + whole.finish()
    pieces = LineBuffer(max_chars)
    got: list[str] = []
    previous = 0
    for cut in sorted({min(cut, len(data)) for cut in cuts} | {len(data)}):
        got += pieces.feed(data[previous:cut])
        previous = cut
    got += pieces.finish()
    assert got == expected
    assert len(expected) == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    assert all(len(line) <= max_chars and "\n" not in line for line in expected)


def test_line_buffer_cuts_an_endless_line() -> None:
    buffer = LineBuffer(max_chars=10)
    for _ in range(1000):
        assert buffer.feed(b"a" * 1000) == []
    assert buffer.feed(b"tail\nnext") == ["a" * 10]
    assert buffer.finish() == ["next"]


def test_call_with_deadline_gives_the_value_or_the_exception() -> None:
    assert call_with_deadline(lambda: 42, 5) == 42
    with pytest.raises(KeyError, match="inside"):
        call_with_deadline(lambda: dict[str, int]()["inside"], 5)


def test_a_hanging_call_is_abandoned_at_its_deadline() -> None:
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(CallTimeoutError, match=r"^NVML did not answer within 0.5 s$"):
        call_with_deadline(lambda: release.wait(600), 0.5, "NVML")
    assert time.monotonic() - started < BOUND_S
    abandoned = [t for t in threading.enumerate() if t.name == "deadline: NVML"]
    assert abandoned and all(t.daemon for t in abandoned)
    release.set()
    for thread in abandoned:
        thread.join(10)


def test_a_tool_process_past_its_deadline_is_killed_by_the_next_read(pids: Path) -> None:
    """The deadline is the runner's, not each caller's: a loop that only reads ends."""
    started = time.monotonic()
    with ToolProcess(
        _sh(f"echo $$ >> {pids}; sleep 600 & echo $! >> {pids}; exec sleep 600"), timeout_s=1
    ) as tool:
        while not tool.done_reading():
            tool.read(0.05)
            assert time.monotonic() - started < BOUND_S
        assert tool.timed_out
        pid = tool.pid
    assert time.monotonic() - started < BOUND_S
    assert group_members(pid) == []
