"""CSV text that a spreadsheet opens as data, never as formulas or terminal codes.

Catalog names, notes and user files end up in CSV exports. A cell starting
with ``=``, ``+``, ``-`` or ``@`` is run as a formula by Excel, LibreOffice
and Google Sheets: ``=HYPERLINK(...)`` or worse. OWASP's rule for CSV
injection is to prefix such a cell with a single quote, which spreadsheets
show as text. Leading spaces (and a tab or carriage return, which some
spreadsheets skip before looking, and which become spaces here) do not hide a
formula: `` =1+1`` is quoted too. Plain numbers (``-3.5``, ``+1e9``) are left
alone: they are the data, and no spreadsheet runs them.

No cell holds a control character either: a GPU name with ESC would reach a
terminal that shows the file (``cat``) as a control sequence, and a line break
inside a cell splits the row for every line-based tool. Tab, carriage return
and line feed become a space (they were layout); every other control character
(C0, DEL, C1), bidi mark and lone surrogate becomes the visible ``\\uXXXX``
escape that :func:`gpudesk.terminal_text.scrub` writes on a terminal, so a
file export and ``list --csv`` on the terminal hold the same cells, and the
cell shows what was there.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

from gpudesk.terminal_text import scrub

_FORMULA_STARTS = ("=", "+", "-", "@")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_LAYOUT = re.compile("[\t\n\r]")


def clean_cell(text: str) -> str:
    """``text`` with no control character: layout ones a space, the rest ``\\uXXXX``."""
    return scrub(_LAYOUT.sub(" ", text))


def safe_cell(text: str) -> str:
    """``text`` as a CSV cell that holds no control character and cannot become a formula."""
    text = clean_cell(text)
    bare = text.strip(" ")
    if bare.startswith(_FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(bare):
        return "'" + text
    return text


def csv_text(rows: Iterable[Iterable[str]]) -> str:
    """CSV (``\\n`` line ends) of ``rows``, every cell passed through :func:`safe_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow(safe_cell(cell) for cell in row)
    return buffer.getvalue()
