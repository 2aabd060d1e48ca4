"""Subcommands registered by this module (being built; see the open issues)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add this module's subcommands to ``subparsers``."""
