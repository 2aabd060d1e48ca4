"""The processes a fake tool starts, written to a file, and killed after the test.

Tests of hanging tools (``tests/core/test_external_callers.py``,
``tests/cli/test_cli_doctor_stuck.py``, ``tests/fleet/test_fleet_slurm_stuck.py``)
give their fakes the ``pids`` fixture's file (tests/conftest.py) to append ``$$`` and
``$!`` to: the test checks they are all gone when the command has answered, and the
fixture ends any left, by PID, so nothing the test started outlives it.
"""

from __future__ import annotations

import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Running or sleeping (a zombie or a process gone is not alive)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in "ZX"


def all_gone(path: Path, timeout_s: float = 5.0) -> bool:
    """Whether every PID in ``path`` has ended within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while any(alive(int(word)) for word in path.read_text().split()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
