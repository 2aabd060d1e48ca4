"""Issue 20 item 7: CSV cells never become spreadsheet formulas (OWASP's rule)."""

from __future__ import annotations

import csv
import io

import pytest
import reach
from hypothesis import given, strategies as st

from gpudesk.csv_text import csv_text, safe_cell
from gpudesk.terminal_text import is_clean


def test_formula_starts_get_a_quote() -> None:
    for text in ("=1+1", "+A1", "-A1+2", "@SUM(A1)", "-", "+", "=", "@", " =1"):
        assert safe_cell(text) == "'" + text
    # a tab or carriage return in front is a space now, and still quoted
    assert safe_cell("\t=1") == safe_cell("\r=1") == "' =1"


def test_plain_numbers_and_text_stay() -> None:
    for text in ("-3.5", "+1e9", "-0.25", "1,000", "RTX 4090", "", "'quoted", "a=b"):
        assert safe_cell(text) == text


#: Any text, a formula (or a number) behind a sign, or a plain number: st.text() alone
#: starts a cell with a formula character in few examples.
_CELLS = st.one_of(
    st.text(max_size=30),
    st.builds(
        lambda start, rest: start + rest,
        st.sampled_from(["=", "+", "-", "@", " =", "\t=", "\r+", "  @"]),
        st.sampled_from(["1+1", "SUM(A1:A9)", "3.5", "1e9", "cmd|' /C calc'!A0"])
        | st.text(max_size=20),
    ),
    st.floats(allow_nan=False).map(str),
)


@given(st.lists(st.lists(_CELLS, max_size=5), max_size=5))
@pytest.mark.reaches(number=23, quoted=34)
def test_no_cell_of_any_row_reads_back_as_a_formula(rows: list[list[str]]) -> None:
    parsed = list(csv.reader(io.StringIO(csv_text(rows), newline="")))
    assert [len(row) for row in parsed] == [len(row) for row in rows]
    for original, row in zip(rows, parsed, strict=True):
        for given_cell, cell in zip(original, row, strict=True):
            if cell.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r")):
                reach.reached("number")
                float(cell)  # only a plain number may start so
            elif cell.startswith("'") and not given_cell.startswith("'"):
                reach.reached("quoted")  # the quote goes only in front of a formula start
                assert cell[1:].lstrip(" ").startswith(("=", "+", "-", "@"))


# -- issue 39 item 6: no control bytes in a cell -------------------------------------------


def test_control_characters_become_escapes_and_layout_a_space() -> None:
    assert safe_cell("RTX\x1b]0;pwned\x07 4090") == "RTX\\u001b]0;pwned\\u0007 4090"
    assert safe_cell("a\nb\tc\rd") == "a b c d"
    assert safe_cell("\x7f\x85\x9b\u202e\ud800") == "\\u007f\\u0085\\u009b\\u202e\\ud800"
    assert safe_cell(" -3.5") == " -3.5"  # a number with a space is still a number


@given(st.lists(st.lists(st.text(max_size=30), max_size=5), max_size=5))
def test_no_cell_holds_a_control_character_and_each_row_is_one_line(
    rows: list[list[str]],
) -> None:
    text = csv_text(rows)
    assert text.count("\n") == len(rows)
    assert is_clean(text.replace("\n", ""))
    assert "\t" not in text and "\r" not in text
