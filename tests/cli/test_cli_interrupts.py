"""Issue 30: under interrupts_deferred, SIGINT at any moment stops the work at its next check."""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudesk.cli.interrupts import interrupts_deferred


@settings(max_examples=100, deadline=None)
@given(steps=st.integers(min_value=1, max_value=8), data=st.data())
def test_sigint_at_any_step_raises_only_after_the_block(steps: int, data: st.DataObject) -> None:
    """The step that was running finishes (it is Qt's), no later step starts, the handler
    that was there comes back, and the caller gets KeyboardInterrupt."""
    at = data.draw(st.integers(min_value=0, max_value=steps - 1), label="interrupted step")
    before = signal.getsignal(signal.SIGINT)
    finished: list[int] = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred() as progress:
        for step in range(steps):
            progress.check()
            if step == at:
                os.kill(os.getpid(), signal.SIGINT)  # handled between bytecodes, here
            finished.append(step)
    assert finished == list(range(at + 1))
    assert signal.getsignal(signal.SIGINT) is before


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
