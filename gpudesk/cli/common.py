"""What every subcommand shares: exit codes, catalog loading, output helpers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gpudesk.catalog.loader import Catalog, load_catalog

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOTHING_DETECTED = 3


class CliError(Exception):
    """A failure the user should read, with the exit code it maps to."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def load_catalog_for(args: argparse.Namespace, *, report_problems: bool = True) -> Catalog:
    """Load bundled + user + ``--catalog`` folders; problems go to stderr."""
    extra = [Path(directory) for directory in (getattr(args, "catalog", None) or [])]
    catalog = load_catalog(extra)
    if report_problems:
        for problem in catalog.problems:
            print(f"gpudesk: catalog problem: {problem}", file=sys.stderr)
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
