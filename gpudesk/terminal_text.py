"""Untrusted text made safe to show on a terminal.

Catalog names, file names, values echoed in problems and whatever a survey
node reports can hold control characters: ESC starts the sequences that move
the cursor, recolour, retitle the window (OSC ``ESC ]``), write the clipboard
(OSC 52) or, on some terminals, answer back; U+009B is a one-byte CSI; a
carriage return overwrites what was printed; bidi overrides (U+202E) make text
read other than it is (the "Trojan Source" trick); a lone surrogate (from a
file name that is not UTF-8) fails the output encoder. :func:`scrub` turns each
into a visible ``\\uXXXX`` escape, keeping newlines and tabs, which are layout.

``\\uXXXX`` is also JSON's own escape, so JSON text that passes through
:func:`scrub` still decodes to the same data: one rule serves every output.
"""

from __future__ import annotations

import re

#: C0 controls but tab and newline, DEL, C1 controls (Unicode category Cc), the
#: bidi marks, embeddings, overrides and isolates, and lone surrogates (Cs).
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def scrub(text: str) -> str:
    """``text`` with every unsafe character replaced by its ``\\uXXXX`` escape.

    The result holds no control character but newline and tab, and is what a
    terminal shows (measure widths on it, not on ``text``).
    """
    return UNSAFE.sub(_escape, text)


def is_clean(text: str) -> bool:
    """Whether ``text`` holds nothing :func:`scrub` would replace."""
    return UNSAFE.search(text) is None


__all__ = ["UNSAFE", "is_clean", "scrub"]
