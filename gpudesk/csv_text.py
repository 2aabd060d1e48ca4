"""CSV text that a spreadsheet opens as data, never as formulas.

Catalog names, notes and user files end up in CSV exports. A cell starting
with ``=``, ``+``, ``-``, ``@`` (or a tab or carriage return, which some
spreadsheets skip before looking) is run as a formula by Excel, LibreOffice
and Google Sheets: ``=HYPERLINK(...)`` or worse. OWASP's rule for CSV
injection is to prefix such a cell with a single quote, which spreadsheets
show as text. Plain numbers (``-3.5``, ``+1e9``) are left alone: they are the
data, and no spreadsheet runs them.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def safe_cell(text: str) -> str:
    """``text`` as a CSV cell that cannot become a formula."""
    if text.startswith(_FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_text(rows: Iterable[Iterable[str]]) -> str:
    """CSV (``\\n`` line ends) of ``rows``, every cell passed through :func:`safe_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow(safe_cell(cell) for cell in row)
    return buffer.getvalue()
