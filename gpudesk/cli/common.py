"""What every subcommand shares: exit codes, catalog loading, output helpers."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpudesk.catalog.loader import Catalog, load_catalog
from gpudesk.cli.textwidth import error_text
from gpudesk.errors import GpuDeskError

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOTHING_DETECTED = 3
#: Ctrl-C (SIGINT): 128 + 2, as the shell reports a command that SIGINT ended.
EXIT_INTERRUPTED = 130


class CliError(GpuDeskError):
    """A failure the user should read, with the exit code it maps to."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


#: A live loop's interval, in seconds: ``exporter --interval`` and ``monitor --interval``.
MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 3600.0


def interval_argument(text: str) -> float:
    """A polling interval in seconds, from :data:`MIN_INTERVAL_S` to :data:`MAX_INTERVAL_S`."""
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from exc
    if not MIN_INTERVAL_S <= value <= MAX_INTERVAL_S:
        raise argparse.ArgumentTypeError(
            f"give {MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g} seconds, not {text}"
        )
    return value


def path_argument(text: str) -> Path:
    """An argparse type for a file or folder: an empty string is not a path.

    (``Path("")`` is the current folder: ``--catalog ''`` would scan it all.)
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a file or folder name")
    if "\0" in text:
        raise argparse.ArgumentTypeError("a path cannot contain a NUL character")
    return Path(text)


def non_finite_flag(args: argparse.Namespace) -> str | None:
    """The first option holding NaN or an infinity, worded for the user, or None.

    Checked once for every subcommand (present and future): ``float("nan")``
    parses, and NaN passes every range check by comparing false.
    """
    for dest, value in vars(args).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if isinstance(item, float) and not math.isfinite(item):
                flag = "--" + dest.replace("_", "-")
                return f"argument {flag}: {item!r} is not a finite number"
    return None


def check_output_path(path: Path) -> None:
    """Fail early, before any work, for an output path that cannot be written."""
    from gpudesk.storage import check_writable

    try:
        check_writable(path)
    except OSError as exc:
        raise write_error(path, exc) from exc


def write_output(path: Path, action: Callable[[], object]) -> None:
    """Run ``action`` (which writes ``path``); an OS error becomes a one-line CliError."""
    try:
        action()
    except OSError as exc:
        raise write_error(path, exc) from exc


def write_error(path: Path, exc: OSError) -> CliError:
    """The one-line error for a failed write of ``path``: exit 2 for a file the
    user may not write (the user named it), exit 1 for anything else."""
    from gpudesk.storage import NotWritableError

    code = EXIT_USAGE if isinstance(exc, NotWritableError) else EXIT_FAILURE
    return CliError(f"cannot write {path}: {exc.strerror or exc}", code)


def load_catalog_for(args: argparse.Namespace, *, report_problems: bool = True) -> Catalog:
    """Load bundled + user + ``--catalog`` folders; problems go to stderr."""
    extra = [Path(directory) for directory in (getattr(args, "catalog", None) or [])]
    catalog = load_catalog(extra)
    if report_problems:
        for problem in catalog.problems:
            print(error_text(f"gpudesk: catalog problem: {problem}"), file=sys.stderr)
    return catalog


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def format_table(headers: list[str], rows: list[list[str]], right_aligned: set[int]) -> str:
    """A plain aligned text table, numbers right-aligned."""
    widths = [len(header) for header in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(cells: list[str]) -> str:
        parts = [
            cell.rjust(widths[index]) if index in right_aligned else cell.ljust(widths[index])
            for index, cell in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    separator = "  ".join("-" * width for width in widths)
    return "\n".join([line(headers), separator, *(line(row) for row in rows)])


def terminal_width() -> int | None:
    """The terminal's columns when output goes to one (or COLUMNS says), else None: a
    pipe or a file gets every column."""
    import os
    import shutil

    if not sys.stdout.isatty() and not os.environ.get("COLUMNS"):
        return None
    return shutil.get_terminal_size().columns


def table_width(headers: list[str], rows: list[list[str]]) -> int:
    """Characters per line of :func:`format_table`'s output."""
    widths = [len(header) for header in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))
    return sum(widths) + 2 * (len(widths) - 1)


def fit_columns(
    headers: list[str], rows: list[list[str]], width: int | None, *, keep: int = 2
) -> tuple[list[str], list[list[str]], list[str]]:
    """Drop columns from the right until the table fits ``width``; the names dropped.

    The first ``keep`` columns (what identifies a row, and a sort column) always stay.
    """
    headers, rows = list(headers), [list(row) for row in rows]
    dropped: list[str] = []
    while width is not None and len(headers) > keep and table_width(headers, rows) > width:
        dropped.insert(0, headers.pop())
        for row in rows:
            row.pop()
    return headers, rows, dropped
