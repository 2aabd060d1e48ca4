"""The process entry (``gpudesk`` and ``python -m gpudesk``): Ctrl-C at any moment exits 130.

:func:`gpudesk.cli.main` turns an interrupt during a command into exit 130;
this also covers the imports before it and the interpreter's shutdown after
(SIGINT is ignored then, so Qt's own exit handlers run to the end).
"""

from __future__ import annotations

import signal
import sys

# Nothing else at the top (not even typing): every import before run() is entered
# is a moment where Ctrl-C would still be Python's own traceback.

#: ``gpudesk.cli.common.EXIT_INTERRUPTED`` (a test keeps them equal), here so that
#: an interrupt during that very import still exits with it.
EXIT_INTERRUPTED = 130


def run() -> None:
    """Run ``gpudesk`` with ``sys.argv`` and exit with its code (never returns)."""
    code = EXIT_INTERRUPTED
    try:
        from gpudesk.cli import main

        code = main()
    except KeyboardInterrupt:
        print("gpudesk: interrupted", file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _forget_caught_interrupt()
    sys.exit(code)


def _forget_caught_interrupt() -> None:
    """Clear CPython's "a KeyboardInterrupt went unhandled" flag: we handled it.

    Under ``python -m`` the interpreter kills itself with SIGINT at exit (status
    -2, not our 130) when any string ``exec``/``eval`` ever ended in a
    KeyboardInterrupt, caught or not: ``run_eval_code_obj`` sets the flag and
    ``Py_RunMain`` reads it after our ``SystemExit``. Libraries run strings while
    they import (dataclasses, namedtuple), so a Ctrl-C there hit it. Every string
    evaluation clears the flag first, so one that ends normally clears it.
    """
    exec("", {})
