"""Core messages made readable in widgets (the core writes for the terminal)."""

from __future__ import annotations

import re

_CODE = re.compile(r"`([^`]+)`")


def plain_words(text: str) -> str:
    """Markdown code spans as quoted text: `sudo modprobe nvidia` -> “sudo modprobe nvidia”."""
    return _CODE.sub(lambda match: f"“{match.group(1)}”", text)
