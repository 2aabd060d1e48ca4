"""Text output that fits the terminal: the width to aim for, tables whose text columns wrap.

Every text table or paragraph a subcommand prints goes through here so that it reads
at 80 columns: :func:`output_width` is ``COLUMNS`` when set, the terminal's width when
stdout is one, else 80 (a pipe, a file, a test). Nothing is dropped: text columns wrap
onto continuation lines, numbers never wrap. The helpers return strings; callers print
them as they print everything else (through the scrubbing stream of
:mod:`gpudesk.cli.output`; cells are scrubbed here first so widths match what shows).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
import unicodedata
from collections.abc import Collection, Sequence
from typing import TextIO

from gpudesk.terminal_text import scrub

#: The width when neither COLUMNS nor a terminal says: what a default terminal has.
DEFAULT_WIDTH = 80
#: Narrower than this is not worth laying out for; tables keep at least this.
MIN_WIDTH = 20
#: A wrapped text column keeps at least this many characters (or its widest cell).
MIN_COLUMN = 10
#: ... and, only where the table cannot fit otherwise, this many.
MIN_NARROW = 6
_GAP = 2


def output_width() -> int:
    """The columns text output should fit: COLUMNS, else the terminal's, else 80."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns:
        try:
            return max(MIN_WIDTH, int(columns))
        except ValueError:
            pass
    try:
        if sys.stdout is not None and sys.stdout.isatty():
            return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    except (AttributeError, ValueError, OSError):
        pass
    return DEFAULT_WIDTH


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes: wide East Asian characters count two, combining marks none."""
    if text.isascii():  # the usual case, and a 1,000-node fleet table has 300,000 cells
        return len(text)
    cells = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        cells += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return cells


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


def _wrap_cell(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        if display_width(paragraph) <= width:
            lines.append(paragraph)
            continue
        # A cell's own indent (a label under its group) carries onto its continuation lines.
        leading = paragraph[: len(paragraph) - len(paragraph.lstrip())]
        pieces = textwrap.wrap(
            paragraph,
            width,
            subsequent_indent=leading if len(leading) < width // 2 else "",
            break_on_hyphens=False,
            break_long_words=False,
        )
        # A word longer than the column (a GPU id like rtx-pro-6000-blackwell-server)
        # breaks after a hyphen where it has one, mid-word only where it has none;
        # textwrap counts characters, so a wide character can still overflow a piece.
        for piece in _split_long(pieces or [""], width):
            while display_width(piece) > width and len(piece) > 1:
                cut = len(piece)
                while cut > 1 and display_width(piece[:cut]) > width:
                    cut -= 1
                lines.append(piece[:cut])
                piece = piece[cut:]
            lines.append(piece)
    return lines


def _split_long(pieces: list[str], width: int) -> list[str]:
    """``pieces`` with each one wider than ``width`` broken after its last hyphen (or the
    dot of a host name) that fits."""
    out: list[str] = []
    for piece in pieces:
        while display_width(piece) > width:
            # A hyphen at a piece's start (a flag, a minus sign) is no break.
            cut = max(piece.rfind("-", 1, width), piece.rfind(".", 1, width)) + 1
            if cut <= 1 or not piece[: cut - 1].strip():
                break
            out.append(piece[:cut])
            piece = piece[cut:]
        out.append(piece)
    return out


def column_widths(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    wrappable: Collection[int],
    *,
    wrap_headers: bool = False,
) -> list[int]:
    """Each column's width: natural, then the widest wrappable ones narrowed until the
    table fits ``width`` (or every wrappable column is at its floor).

    With ``wrap_headers`` a header counts only its longest word: it wraps over its values.
    """
    count = len(headers)
    natural = [
        max((display_width(word) for word in header.split()), default=0)
        if wrap_headers
        else display_width(header)
        for header in headers
    ]
    for row in rows:
        for index, cell in enumerate(row[:count]):
            for line in cell.splitlines() or [""]:
                natural[index] = max(natural[index], display_width(line))
    widths = list(natural)
    budget = width - _GAP * (count - 1)
    # Down to MIN_COLUMN first; a table that still overruns (many columns) goes on to
    # MIN_NARROW rather than past the terminal's edge.
    for floor in (MIN_COLUMN, MIN_NARROW):
        floors = [min(natural[index], floor) for index in range(count)]
        while sum(widths) > budget:
            candidates = [i for i in wrappable if 0 <= i < count and widths[i] > floors[i]]
            if not candidates:
                break
            widest = max(candidates, key=lambda i: (widths[i], -i))
            widths[widest] -= 1
    return widths


def terminal_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right_aligned: Collection[int] = (),
    width: int | None = None,
    *,
    wrap: Collection[int] | None = None,
    wrap_headers: bool = False,
) -> str:
    """An aligned text table that fits ``width`` (default :func:`output_width`).

    Columns in ``right_aligned`` (numbers) never wrap; the others (or only those in
    ``wrap``) wrap onto continuation lines, the widest first, when the table would be
    wider than ``width``. Headers wrap too. With room to spare the result is the same as
    :func:`gpudesk.cli.common.format_table`'s.
    """
    target = output_width() if width is None else max(MIN_WIDTH, width)
    count = len(headers)
    # Widths are measured on what the terminal will show: the output stream scrubs
    # control characters into visible escapes (gpudesk.terminal_text), longer than the raw.
    headers = [scrub(header) for header in headers]
    cells = [[scrub(str(cell)) for cell in row] + [""] * (count - len(row)) for row in rows]
    wrappable = [i for i in range(count) if i not in right_aligned] if wrap is None else list(wrap)
    widths = column_widths(headers, cells, target, wrappable, wrap_headers=wrap_headers)

    def block(row: Sequence[str]) -> list[str]:
        wrapped = [_wrap_cell(cell, widths[index]) for index, cell in enumerate(row[:count])]
        height = max((len(lines) for lines in wrapped), default=1)
        out: list[str] = []
        for line_index in range(height):
            parts = [
                _pad(
                    lines[line_index] if line_index < len(lines) else "",
                    widths[index],
                    index in right_aligned,
                )
                for index, lines in enumerate(wrapped)
            ]
            out.append("  ".join(parts).rstrip())
        return out

    separator = "  ".join("-" * column for column in widths)
    lines = [*block(list(headers)), separator]
    for row in cells:
        lines.extend(block(row))
    return "\n".join(lines)


def wrap_paragraph(
    text: str,
    width: int | None = None,
    *,
    indent: str = "",
    subsequent_indent: str | None = None,
) -> str:
    """``text`` wrapped to ``width`` (default :func:`output_width`), each line indented.

    Words are never split at hyphens; a word longer than a line (a URL) keeps its line.
    """
    target = output_width() if width is None else max(MIN_WIDTH, width)
    follow = indent if subsequent_indent is None else subsequent_indent
    out: list[str] = []
    for paragraph in scrub(text).splitlines() or [""]:
        if not paragraph.strip():
            out.append("")
            continue
        wrapped = textwrap.wrap(
            paragraph,
            target,
            initial_indent=indent,
            subsequent_indent=follow,
            break_on_hyphens=False,
            break_long_words=False,
        )
        out.extend(wrapped or [indent + paragraph])
    return "\n".join(out)


#: A line's label: "  hint      " (a word or two, then two spaces or more) or "hint: ".
_LABEL = re.compile(r"^(\s*[^\s:]+(?: [^\s:]+)?(?::\s+|\s{2,}))\S")


def hanging_indent(line: str) -> str:
    """The indent a wrapped ``line`` continues at: under its value when it starts with a
    label (``"  hint      ..."``, ``"hint: ..."``), else its own indent plus two."""
    label = _LABEL.match(line)
    if label is not None and len(label.group(1)) <= 24:
        return " " * len(label.group(1))
    return line[: len(line) - len(line.lstrip())] + "  "


def wrap_long_lines(text: str, width: int | None = None) -> str:
    """``text`` with each line wider than ``width`` (default :func:`output_width`) wrapped
    under its label (:func:`hanging_indent`); lines that fit are left exactly as they are,
    so aligned tables that fit keep their alignment."""
    target = output_width() if width is None else max(MIN_WIDTH, width)
    out: list[str] = []
    for line in text.split("\n"):
        if display_width(line) <= target or len(line.split()) < 2:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        out.append(
            wrap_paragraph(
                line.strip(), target, indent=indent, subsequent_indent=hanging_indent(line)
            )
        )
    return "\n".join(out)


def error_text(text: str) -> str:
    """An error or warning for stderr: wrapped under its "gpudesk: " label
    (:func:`wrap_long_lines`) when a person reads it (stderr is a terminal: COLUMNS or
    its width); captured by a script or a log (``2>file``, ``2>&1 | tee``), each message
    stays one line that grep finds whole."""
    if _is_terminal(sys.stderr):
        return wrap_long_lines(text, _stderr_width())
    return text


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _stderr_width() -> int:
    """COLUMNS, else stderr's terminal's width, else 80 (stdout may be a pipe)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns:
        return output_width()
    try:
        return max(MIN_WIDTH, os.get_terminal_size(sys.stderr.fileno()).columns)
    except (AttributeError, ValueError, OSError):
        return DEFAULT_WIDTH


__all__ = [
    "DEFAULT_WIDTH",
    "display_width",
    "error_text",
    "hanging_indent",
    "output_width",
    "terminal_table",
    "wrap_long_lines",
    "wrap_paragraph",
]
