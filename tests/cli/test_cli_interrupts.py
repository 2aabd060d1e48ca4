"""Issue 30: under interrupts_deferred, SIGINT at any moment stops the work at its next check."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st
from signal_dispositions import default_sigint_here, default_sigint_in_child

from gpudesk.cli.interrupts import interrupts_deferred


@settings(max_examples=100, deadline=None)
@given(steps=st.integers(min_value=1, max_value=8), data=st.data())
def test_sigint_at_any_step_raises_only_after_the_block(steps: int, data: st.DataObject) -> None:
    """The step that was running finishes (it is Qt's), no later step starts, the handler
    that was there comes back, and the caller gets KeyboardInterrupt."""
    at = data.draw(st.integers(min_value=0, max_value=steps - 1), label="interrupted step")
    finished: list[int] = []
    with default_sigint_here():  # a suite started with SIGINT ignored (nohup) gets it too
        before = signal.getsignal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt), interrupts_deferred() as progress:
            for step in range(steps):
                progress.check()
                if step == at:
                    os.kill(os.getpid(), signal.SIGINT)  # handled between bytecodes, here
                finished.append(step)
        assert signal.getsignal(signal.SIGINT) is before
    assert finished == list(range(at + 1))


def test_no_sigint_no_interrupt_and_other_errors_pass_through() -> None:
    with interrupts_deferred() as progress:
        progress.check()
    with pytest.raises(ValueError, match="boom"), interrupts_deferred():
        raise ValueError("boom")


def test_an_ignored_sigint_stays_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts_deferred() as progress:
            os.kill(os.getpid(), signal.SIGINT)
            progress.check()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_child_gets_ctrl_c_even_when_the_suite_ignores_it() -> None:
    """The suite under nohup or ``cmd &``: SIGINT ignored here, default in the child."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        inherited = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        )
        restored = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=default_sigint_in_child,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (inherited.stdout, restored.stdout) == ("False\n", "True\n")
