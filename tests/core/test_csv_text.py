"""Issue 20 item 7: CSV cells never become spreadsheet formulas (OWASP's rule)."""

from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from gpudesk.csv_text import csv_text, safe_cell


def test_formula_starts_get_a_quote() -> None:
    for text in ("=1+1", "+A1", "-A1+2", "@SUM(A1)", "\t=1", "\r=1", "-", "+", "=", "@"):
        assert safe_cell(text) == "'" + text


def test_plain_numbers_and_text_stay() -> None:
    for text in ("-3.5", "+1e9", "-0.25", "1,000", "RTX 4090", "", "'quoted", "a=b"):
        assert safe_cell(text) == text


@given(st.lists(st.lists(st.text(max_size=30), max_size=5), max_size=5))
def test_no_cell_of_any_row_reads_back_as_a_formula(rows: list[list[str]]) -> None:
    parsed = list(csv.reader(io.StringIO(csv_text(rows), newline="")))
    for row in parsed:
        for cell in row:
            if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
                float(cell)  # only a plain number may start so
