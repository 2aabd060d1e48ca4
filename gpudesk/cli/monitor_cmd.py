"""``gpudesk monitor``: every GPU's live readings at a terminal, once a second, in 80 columns.

``q`` (or Ctrl-C) quits, with exit 0 and the terminal as it was; ``--json``
prints one JSON document per line instead, for scripts; ``--count N`` stops
after N screens. Exit codes: 0 when quit or done, 2 for a bad flag.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import logging
import os
import select
import sys
import time
from collections.abc import Iterator
from typing import Any

from gpudesk.cli.common import EXIT_OK, interval_argument, load_catalog_for
from gpudesk.cli.output import write_control

#: Clear the screen and go home, before each screen on a terminal.
_CLEAR = "\x1b[H\x1b[2J"


def _count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10**9:
        raise argparse.ArgumentTypeError(f"give a whole number of screens from 1, not {text!r}")
    return int(text)


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``monitor`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "monitor",
        help="watch every GPU's live readings at the terminal",
        description=(
            "Show every GPU's utilisation, memory, temperature, power, clock, fan, PCIe "
            "link, energy and health counters once a second in 80 columns, from the same "
            "collection as `gpudesk exporter`. q or Ctrl-C quits (exit 0); --json prints "
            "one JSON document per line instead."
        ),
    )
    parser.add_argument("--json", action="store_true", help="one JSON document per line")
    parser.add_argument(
        "--interval",
        metavar="SECONDS",
        type=interval_argument,
        default=1.0,
        help="time between screens (default 1)",
    )
    parser.add_argument(
        "--count", metavar="N", type=_count, default=None, help="stop after N screens"
    )
    parser.set_defaults(handler=run_monitor)


@contextlib.contextmanager
def _keys() -> Iterator[int | None]:
    """stdin's descriptor in cbreak mode (keys arrive unbuffered, Ctrl-C still signals);
    None when stdin is no terminal. The terminal's mode is restored on the way out."""
    try:
        descriptor = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        yield None
        return
    if not os.isatty(descriptor):
        yield None
        return
    import termios
    import tty

    saved = termios.tcgetattr(descriptor)
    try:
        tty.setcbreak(descriptor)
        yield descriptor
    finally:
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)


def _quit_pressed(descriptor: int | None, timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for a key; True when it is q (or stdin ended)."""
    if descriptor is None:
        time.sleep(timeout_s)
        return False
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([descriptor], [], [], left)
        if not ready:
            return False
        key = os.read(descriptor, 1)
        if key in (b"q", b"Q", b""):
            return True
    return False


class ScreenNotes(logging.Handler):
    """GPUDesk's warnings while the screen is shown ("gpu0 lost: ..."), kept for the
    screen's last lines: written to stderr they landed over the screen until the next
    redraw, and the redraw then wiped them."""

    KEPT = 3

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.notes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = " ".join(record.getMessage().split())  # one line, whatever it held
        self.notes = [*self.notes, text][-self.KEPT :]

    def lines(self, width: int = 80) -> list[str]:
        return [f"note: {note}"[: width - 1] for note in self.notes]

    @classmethod
    @contextlib.contextmanager
    def installed(cls) -> Iterator[ScreenNotes]:
        """Catch the ``gpudesk`` loggers' warnings (and so keep them off stderr) until
        the block ends."""
        handler = cls()
        logger = logging.getLogger("gpudesk")
        logger.addHandler(handler)
        try:
            yield handler
        finally:
            logger.removeHandler(handler)


def run_monitor(args: argparse.Namespace) -> int:
    from gpudesk.telemetry.collector import Collector
    from gpudesk.telemetry.sources import open_sources
    from gpudesk.telemetry.text import screen_lines

    catalog = load_catalog_for(args)
    sources = open_sources(catalog.entries)
    collector = Collector(sources, interval_s=args.interval)
    collector.start()
    terminal = not args.json and sys.stdout.isatty()
    shown = 0
    try:
        collector.wait_first(min(args.interval * 5, 10.0))
        notes_kept = ScreenNotes.installed() if terminal else contextlib.nullcontext(None)
        with _keys() as keys, notes_kept as notes:
            while True:
                snapshot = collector.snapshot()
                if args.json:
                    document = snapshot.model_dump(mode="json")
                    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
                else:
                    if terminal:
                        write_control(sys.stdout, _CLEAR)
                    clock_text = dt.datetime.now().strftime("%H:%M:%S")
                    lines = screen_lines(snapshot, clock_text)
                    if notes is not None:
                        lines = [*lines, *notes.lines()]
                    sys.stdout.write("\n".join(lines) + "\n")
                    if not terminal:
                        sys.stdout.write("\n")
                sys.stdout.flush()
                shown += 1
                if args.count is not None and shown >= args.count:
                    break
                if _quit_pressed(keys, args.interval):
                    break
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a monitor is left: a clean exit, not a failure
    finally:
        collector.stop()
    return EXIT_OK
