"""Ctrl-C that lands inside a string ``exec`` still exits 130 under ``python -m``.

CPython remembers a KeyboardInterrupt that ended any string evaluation and,
under ``-m``, kills itself with SIGINT at exit (status -2) even after the
program caught it and asked for 130. Imports run such strings (dataclasses,
namedtuple), so a real Ctrl-C during start-up hit it about once in 60 runs
(``test_a_real_ctrl_c_exits_130_or_finishes``, CI of stop 34).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from signal_dispositions import default_sigint_in_child

# The command's work is a string exec that SIGINTs its own process and keeps
# running, so the KeyboardInterrupt is raised inside the evaluated string.
_PROGRAM = """
import gpudesk._entry as entry
import gpudesk.cli as cli

def interrupted_inside_a_string(argv=None):
    exec("import os, signal\\nos.kill(os.getpid(), signal.SIGINT)\\nwhile True: pass", {})
    return 0

cli.main = interrupted_inside_a_string
entry.run()
"""


def test_an_interrupt_inside_a_string_exec_exits_130_under_dash_m(tmp_path: Path) -> None:
    (tmp_path / "interrupted_in_a_string.py").write_text(_PROGRAM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    result = subprocess.run(
        [sys.executable, "-m", "interrupted_in_a_string"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
        preexec_fn=default_sigint_in_child,
    )
    assert (result.returncode, result.stderr) == (130, "gpudesk: interrupted\n")
