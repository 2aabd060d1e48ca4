"""Flags declared as data: a table of ``(names, options)`` rows that :func:`add_flags`
hands to ``add_argument`` in order (the order is the ``--help`` order)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: one flag: its names (``("--gpu",)``) and ``add_argument``'s keywords
Flag = tuple[tuple[str, ...], dict[str, Any]]


def add_flags(target: Any, flags: Sequence[Flag]) -> None:
    """Add each flag of ``flags`` to ``target`` (a parser, an argument group or a
    mutually exclusive group), in the table's order."""
    for names, options in flags:
        target.add_argument(*names, **options)
