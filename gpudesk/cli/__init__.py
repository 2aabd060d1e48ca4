"""The ``gpudesk`` command: the GUI with no arguments, subcommands otherwise.

Nothing here imports Qt unless the GUI (or a chart/PDF export) is asked for:
headless GPU servers may lack Qt's system libraries.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from gpudesk import __version__
from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CliError,
    non_finite_flag,
    path_argument,
)
from gpudesk.cli.exit_codes import error_line, exit_code_for
from gpudesk.cli.output import scrubbed_streams
from gpudesk.cli.parsing import SuggestingParser
from gpudesk.cli.textwidth import error_text
from gpudesk.errors import GpuDeskError
from gpudesk.progress import Cancelled

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

#: The subcommands' modules (gpudesk.cli.NAME), in --help's order. Imported when
#: the parser is built: a plain GUI start needs none of them (see _gui_start).
_COMMAND_MODULE_NAMES = (
    "catalog_cmds",
    "compare_cmd",
    "detect_cmd",
    "doctor_cmd",
    "bench_cmd",
    "plan_cmds",
    "prices_cmd",
    "fleet_cmd",
    "speed_cmd",
    "measurements_cmd",
    "monitor_cmd",
    "exporter_cmd",
    "desktop_cmd",
)


def _command_modules() -> list[ModuleType]:
    return [importlib.import_module(f"{__name__}.{name}") for name in _COMMAND_MODULE_NAMES]


class _Parser(SuggestingParser):
    """argparse's parser with did-you-mean and fitted help (:mod:`gpudesk.cli.parsing`),
    except that a failed write of ``--help`` or ``--version`` is raised.

    argparse ignores an ``OSError`` while it prints, so ``gpudesk fleet --help >
    /dev/full`` printed nothing and exited 0, or ended in a traceback when the
    interpreter flushed the text at exit. Raised here, :func:`_main` words it as
    every other output error. What goes to stderr (a usage error) still ignores a
    failed write, so a usage error keeps its exit 2. Every subparser is one of
    these: ``add_subparsers`` makes them of the parent's class.
    """

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if not message:
            return
        stream = sys.stderr if file is None else file
        if stream is sys.stderr:
            with contextlib.suppress(OSError, ValueError):
                stream.write(message)
            return
        stream.write(message)
        flush = getattr(stream, "flush", None)
        if flush is not None:
            flush()  # a full disk or a closed pipe is seen now, inside our handlers


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpudesk",
        description="Choose, compare and check GPUs for machine learning.",
    )
    parser.add_argument("--version", action="version", version=f"gpudesk {__version__}")
    _add_catalog_option(parser, default=None)
    parser.add_argument(
        "--debug",
        action="store_true",
        help="print the traceback of an error before its one line (before the command: "
        "gpudesk --debug list)",
    )
    parser.add_argument(
        "--startup-check",
        action="store_true",
        help="open the main window offscreen, wait for its first paint, print the time "
        "(like '0.293 s'), exit",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    gui = subparsers.add_parser("gui", help="open the desktop app (the default)")
    gui.set_defaults(handler=_run_gui)
    for module in _command_modules():
        module.register(subparsers)
    # The global options work after the subcommand too (`gpudesk list --catalog DIR`);
    # SUPPRESS keeps a subcommand that was not given one from erasing the global value.
    for command in subparsers.choices.values():
        _add_catalog_option(command, default=argparse.SUPPRESS)
    return parser


def _add_catalog_option(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--catalog",
        action="append",
        metavar="DIR",
        type=path_argument,
        default=default,
        help="extra catalog folder (repeatable); its entries override same-id ones",
    )


def _run_gui(args: argparse.Namespace) -> int:
    from gpudesk.ui.app import run_gui

    extra = [Path(directory) for directory in (args.catalog or [])]
    return run_gui(extra, startup_check=bool(args.startup_check))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; all it prints goes through the scrubbed streams (cli/output.py)."""
    with scrubbed_streams():
        return _main(argv)


def _gui_start(argv: Sequence[str]) -> argparse.Namespace | None:
    """The arguments of a plain GUI start, read without building the whole parser.

    ``gpudesk`` with nothing or only ``--catalog DIR``, ``--startup-check`` and
    ``--debug`` (spelled out in full) opens the window; building the parser would import
    every subcommand's module first (price history, hardware probes, planning:
    about 0.1 s of a 0.7 s start). Anything else, a bad folder name included,
    is None: the whole parser reads it and words any error as always.
    """
    catalogs: list[Path] = []
    startup_check = debug = False
    tokens = iter(argv)
    for token in tokens:
        if token == "--startup-check":
            startup_check = True
            continue
        if token == "--debug":
            debug = True
            continue
        if token == "--catalog":
            value = next(tokens, None)
        elif token.startswith("--catalog="):
            value = token.removeprefix("--catalog=")
        else:
            return None
        if value is None or value.startswith("-"):
            return None
        try:
            catalogs.append(path_argument(value))
        except argparse.ArgumentTypeError:
            return None
    return argparse.Namespace(
        catalog=catalogs or None, debug=debug, startup_check=startup_check, command=None
    )


def _main(argv: Sequence[str] | None) -> int:
    """Parse and run; every failure is one line on stderr and its exit code.

    Writing the output can fail in any command, ``--help`` and ``--version``
    included: a full disk or ``/dev/full`` is one line and exit 1, a closed pipe
    (``gpudesk list | head``) a quiet exit 0, as for other Unix tools. Any other
    :class:`~gpudesk.errors.GpuDeskError` a command lets through is one line and
    the code of its type (``gpudesk.cli.exit_codes``); ``gpudesk --debug`` prints
    the traceback before that line. An error that is not GPUDesk's own is a bug:
    Python's traceback, as always.
    """
    parsed: list[argparse.Namespace] = []
    try:
        return _parse_and_run(argv, parsed)
    except CliError as exc:
        _trace_if_debug(parsed)
        _say(f"gpudesk: {exc}")
        return exc.exit_code
    except (KeyboardInterrupt, Cancelled):
        _trace_if_debug(parsed)
        _say("gpudesk: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `gpudesk list | head` closes the pipe early; that is not a failure.
        _silence_stdout()
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.close()
        return 0
    except OSError as exc:
        # Writing our own output failed (`gpudesk list > /dev/full`) or a file
        # we did not expect to touch misbehaved: one line, never a traceback.
        _trace_if_debug(parsed)
        _silence_stdout()
        where = f" {exc.filename}" if exc.filename else " the output"
        _say(f"gpudesk: cannot write{where}: {exc.strerror or exc}")
        return EXIT_FAILURE
    except GpuDeskError as exc:
        _trace_if_debug(parsed)
        _say(error_line(exc))
        return exit_code_for(exc)


def _trace_if_debug(parsed: list[argparse.Namespace]) -> None:
    """Print the traceback being handled on stderr when ``--debug`` was given."""
    if parsed and getattr(parsed[0], "debug", False):
        with contextlib.suppress(OSError, ValueError):
            traceback.print_exc(file=sys.stderr)


def _parse_and_run(argv: Sequence[str] | None, parsed: list[argparse.Namespace]) -> int:
    """Parse ``argv`` and run its command; the arguments are put in ``parsed`` once read."""
    args = _gui_start(sys.argv[1:] if argv is None else argv)
    if args is None:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
            problem = non_finite_flag(args)
            if problem is not None:
                parser.error(problem)  # exits 2, like every other bad argument
        except SystemExit:
            # --help, --version or a usage error: what it printed is flushed here,
            # where a failure is worded, not by the interpreter at exit.
            sys.stdout.flush()
            raise
    parsed.append(args)
    handler = getattr(args, "handler", None)
    if handler is None:
        handler = _run_gui
    result: int = handler(args)
    sys.stdout.flush()  # so that a full disk or a closed pipe is seen here
    return result


def _say(line: str) -> None:
    """Print ``line`` on stderr (wrapped at a terminal: :func:`error_text`; a message can
    name a file, a field and a list of choices, 600 columns); if stderr itself cannot
    be written, there is no one to tell."""
    with contextlib.suppress(OSError, ValueError):
        print(error_text(line), file=sys.stderr)
        sys.stderr.flush()


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "build_parser", "main"]
