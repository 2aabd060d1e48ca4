"""The page-flow layout: paragraphs split between lines, table rows never split."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pytest
from pypdf import PdfReader
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF
from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter

from gpudesk.report.layout import Cell, Flow, Table, TableRow
from gpudesk.report.pdf import PT, RESOLUTION_DPI, report_font_family

pytestmark = pytest.mark.usefixtures("qapp")


def _render(build: Callable[[Flow], None]) -> tuple[int, list[str]]:
    """Lay out with ``build`` on an A5 page; return the page count and each page's text."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(RESOLUTION_DPI)
    writer.setPageLayout(
        QPageLayout(
            QPageSize(QPageSize.PageSizeId.A5),
            QPageLayout.Orientation.Portrait,
            QMarginsF(0, 0, 0, 0),
        )
    )
    page = QRectF(writer.pageLayout().fullRectPixels(RESOLUTION_DPI))
    body = page.adjusted(20 * PT, 20 * PT, -20 * PT, -20 * PT)
    flow = Flow(writer, body, report_font_family(), PT)
    build(flow)
    painter = QPainter(writer)
    for number, laid_out in enumerate(flow.pages):
        if number:
            writer.newPage()
        for op in laid_out.ops:
            painter.save()
            op(painter)
            painter.restore()
    painter.end()
    buffer.close()
    reader = PdfReader(io.BytesIO(bytes(data.data())))
    texts = [" ".join(p.extract_text().split()) for p in reader.pages]
    assert len(texts) == len(flow.pages)
    return len(flow.pages), texts


def test_table_rows_are_never_split_and_the_header_repeats() -> None:
    rows = tuple(
        TableRow((Cell(f"row{index}top\u2028row{index}bottom"), Cell(f"v{index}")))
        for index in range(90)
    )
    table = Table(
        header=(Cell("HEADLABEL", bold=True), Cell("HEADVALUE", bold=True)),
        rows=rows,
        column_weights=(2, 1),
    )
    pages, texts = _render(lambda flow: flow.table(table))
    assert pages >= 3
    seen: list[int] = []
    for text in texts:
        assert text.startswith("HEADLABEL HEADVALUE")
        tops = [int(n) for n in re.findall(r"row(\d+)top", text)]
        bottoms = [int(n) for n in re.findall(r"row(\d+)bottom", text)]
        assert tops == bottoms  # both lines of every row on the same page
        seen.extend(tops)
    assert seen == list(range(90))


def test_a_section_label_stays_with_its_first_row() -> None:
    def build(flow: Flow) -> None:
        # fill the page so only the group row would still fit at its bottom
        filler = TableRow((Cell("filler"), Cell("x")))
        rows = [filler] * 200 + [TableRow((Cell("GROUPLABEL"),), group=True)]
        rows.append(TableRow((Cell("FIRSTROW"), Cell("1"))))
        table = Table((Cell("H"), Cell("V")), tuple(rows), (1, 1), stripes=False)
        flow.table(table)

    _, texts = _render(build)
    holder = [text for text in texts if "GROUPLABEL" in text]
    assert len(holder) == 1
    assert "FIRSTROW" in holder[0]


def test_a_long_paragraph_continues_on_the_next_page_line_by_line() -> None:
    words = " ".join(f"w{index:04d}" for index in range(1500))
    pages, texts = _render(lambda flow: flow.text(words, size_pt=10))
    assert pages >= 2
    # pypdf sometimes splits a word at a glyph-positioning step: join first
    found = [int(n) for text in texts for n in re.findall(r"w(\d{4})", text.replace(" ", ""))]
    assert found == list(range(1500))


def test_a_heading_is_not_left_alone_at_the_bottom_of_a_page() -> None:
    def build(flow: Flow) -> None:
        flow.text(" ".join(["filler"] * 2000), size_pt=10)
        flow.heading("LONELYHEADING", reserve_pt=120)
        flow.text("FOLLOWINGTEXT")

    _, texts = _render(build)
    holder = [text for text in texts if "LONELYHEADING" in text]
    assert len(holder) == 1
    assert "FOLLOWINGTEXT" in holder[0]
