"""A small page-flow layout for QPainter documents: text, tables, fixed-size blocks.

Laying out is a pass of its own: it measures everything against the paint
device, breaks it into pages (paragraphs between lines, tables between rows,
with the header row repeated), and returns per-page drawing operations. Only
then is the number of pages known, so every page can say "Page N of M".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPaintDevice,
    QPainter,
    QPen,
    QTextLayout,
    QTextOption,
)

#: One drawing step of a laid-out page, in page (paint-rect) coordinates.
DrawOp = Callable[[QPainter], None]

TEXT_COLOR = QColor("#1a1a1a")
MUTED_COLOR = QColor("#555555")
GRID_COLOR = QColor("#b8b8b8")
HEADER_FILL = QColor("#e3e8ef")
GROUP_FILL = QColor("#f1f1f1")
STRIPE_FILL = QColor("#fafafa")


@dataclass(frozen=True, slots=True)
class Cell:
    """One table cell: text, emphasis, optional fill and a color swatch before the text."""

    text: str
    bold: bool = False
    fill: QColor | None = None
    swatch: QColor | None = None
    align_right: bool = False
    muted: bool = False


@dataclass(frozen=True, slots=True)
class TableRow:
    """A row of cells, or (``group=True``) a section label spanning all columns."""

    cells: tuple[Cell, ...]
    group: bool = False


@dataclass(frozen=True, slots=True)
class Table:
    """A table to lay out; ``column_weights`` share the body width."""

    header: tuple[Cell, ...]
    rows: tuple[TableRow, ...]
    column_weights: tuple[float, ...]
    font_size_pt: float = 8.0
    stripes: bool = True


class TextBlock:
    """Text wrapped to a width on a paint device: measured once, drawable line by line."""

    def __init__(
        self, text: str, font: QFont, width: float, device: QPaintDevice, *, anywhere: bool = True
    ) -> None:
        self.layout = QTextLayout(text, font, device)
        option = QTextOption()
        # URLs and long names have no spaces: break them rather than overflow.
        option.setWrapMode(
            QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere
            if anywhere
            else QTextOption.WrapMode.WordWrap
        )
        self.layout.setTextOption(option)
        self.line_tops: list[float] = []
        self.line_heights: list[float] = []
        self.natural_width = 0.0
        y = 0.0
        self.layout.beginLayout()
        while True:
            line = self.layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(max(width, 1.0))
            line.setPosition(QPointF(0.0, y))
            self.line_tops.append(y)
            self.line_heights.append(line.height())
            self.natural_width = max(self.natural_width, line.naturalTextWidth())
            y += line.height()
        self.layout.endLayout()
        self.height = y

    @property
    def line_count(self) -> int:
        return len(self.line_tops)

    def draw_lines(
        self, painter: QPainter, origin: QPointF, first: int, last: int, color: QColor
    ) -> None:
        """Draw lines ``first..last-1`` so that line ``first`` starts at ``origin``."""
        painter.setPen(QPen(color))
        shift = self.line_tops[first] if first < len(self.line_tops) else 0.0
        for index in range(first, last):
            line = self.layout.lineAt(index)
            line.draw(painter, QPointF(origin.x(), origin.y() - shift))


@dataclass
class Page:
    ops: list[DrawOp] = field(default_factory=list)


class Flow:
    """Places content top to bottom in ``body``, opening a new page when full.

    Args:
        device: the paint device the document is painted on (for metrics).
        body: the area of each page that content may use.
        font_family: the family every font uses (the bundled one).
        pt: device units per typographic point.
    """

    def __init__(self, device: QPaintDevice, body: QRectF, font_family: str, pt: float) -> None:
        self.device = device
        self.body = body
        self.family = font_family
        self.pt = pt
        self.pages: list[Page] = [Page()]
        self.y = body.top()

    # fonts and geometry --------------------------------------------------
    def font(self, size_pt: float, *, bold: bool = False, italic: bool = False) -> QFont:
        font = QFont(self.family)
        font.setPointSizeF(size_pt)
        font.setBold(bold)
        font.setItalic(italic)
        # Kerning and hinting differ between platforms; plain metrics keep
        # the layout identical everywhere.
        font.setKerning(False)
        font.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
        # No "fi"/"fl" ligatures: searching and copying the PDF's text must
        # find "figure", not "\ufb01gure".
        if hasattr(font, "setFeature"):  # Qt >= 6.7
            font.setFeature(QFont.Tag("liga"), 0)
        else:
            font.setStyleStrategy(QFont.StyleStrategy.PreferNoShaping)
        return font

    @property
    def page(self) -> Page:
        return self.pages[-1]

    @property
    def remaining(self) -> float:
        return self.body.bottom() - self.y

    def new_page(self) -> None:
        self.pages.append(Page())
        self.y = self.body.top()

    def ensure(self, height: float) -> None:
        """Start a new page unless ``height`` still fits (and the page is not empty)."""
        if height > self.remaining and self.y > self.body.top():
            self.new_page()

    def space(self, height_pt: float) -> None:
        if self.y > self.body.top():
            self.y = min(self.y + height_pt * self.pt, self.body.bottom())

    # text ----------------------------------------------------------------
    def text(
        self,
        text: str,
        *,
        size_pt: float = 9.5,
        bold: bool = False,
        italic: bool = False,
        color: QColor = TEXT_COLOR,
        indent_pt: float = 0.0,
        reserve_pt: float = 0.0,
        after_pt: float = 3.0,
        bullet: bool = False,
    ) -> None:
        """A paragraph; split between lines across pages.

        ``reserve_pt`` keeps the paragraph's first line together with that
        much following space (headings stay with what they introduce).
        ``bullet`` puts a bullet before the first line and indents the rest
        under the text (a hanging indent).
        """
        font = self.font(size_pt, bold=bold, italic=italic)
        indent = indent_pt * self.pt
        bullet_width = 1.1 * size_pt * self.pt if bullet else 0.0
        block = TextBlock(text, font, self.body.width() - indent - bullet_width, self.device)
        if block.line_count == 0:
            return
        self.ensure(block.line_heights[0] + reserve_pt * self.pt)
        if bullet:
            mark = TextBlock("•", font, bullet_width, self.device)
            mark_origin = QPointF(self.body.left() + indent, self.y)
            self.page.ops.append(
                lambda p: mark.draw_lines(p, mark_origin, 0, mark.line_count, color)
            )
        indent += bullet_width
        first = 0
        while first < block.line_count:
            last = first
            used = 0.0
            while last < block.line_count and used + block.line_heights[last] <= self.remaining:
                used += block.line_heights[last]
                last += 1
            if last == first:  # not even one line fits here
                if self.y == self.body.top():  # taller than a page: draw it anyway
                    used = block.line_heights[first]
                    last = first + 1
                else:
                    self.new_page()
                    continue
            self.page.ops.append(
                _lines_op(block, QPointF(self.body.left() + indent, self.y), first, last, color)
            )
            self.y += used
            first = last
            if first < block.line_count:
                self.new_page()
        self.y += after_pt * self.pt

    def heading(self, text: str, *, level: int = 1, reserve_pt: float = 60.0) -> None:
        size = {0: 20.0, 1: 14.0, 2: 11.0}.get(level, 10.0)
        self.space(10.0 if level <= 1 else 6.0)
        self.text(text, size_pt=size, bold=True, reserve_pt=reserve_pt, after_pt=4.0)

    # fixed blocks (charts, rules) -----------------------------------------
    def block(self, height: float, paint: Callable[[QPainter, QRectF], None]) -> QRectF:
        """A block of fixed height drawn by ``paint``; never split across pages."""
        self.ensure(height)
        rect = QRectF(self.body.left(), self.y, self.body.width(), height)
        self.page.ops.append(lambda p: paint(p, rect))
        self.y += height
        return rect

    def rule(self, color: QColor = GRID_COLOR) -> None:
        y = self.y

        def paint(painter: QPainter) -> None:
            painter.setPen(QPen(color, 0.6 * self.pt))
            painter.drawLine(QPointF(self.body.left(), y), QPointF(self.body.right(), y))

        self.page.ops.append(paint)
        self.y += 2 * self.pt

    # tables --------------------------------------------------------------
    def table(self, table: Table) -> None:
        """Lay out ``table``: rows are never split; the header repeats on each page."""
        widths = _column_widths(table.column_weights, self.body.width())
        pad_x = 3.0 * self.pt
        pad_y = 2.2 * self.pt
        regular = self.font(table.font_size_pt)
        bold = self.font(table.font_size_pt, bold=True)

        def measure(cells: Sequence[Cell], group: bool) -> tuple[float, list[TextBlock]]:
            blocks: list[TextBlock] = []
            if group:
                width = self.body.width() - 2 * pad_x
                blocks.append(TextBlock(cells[0].text, bold, width, self.device))
            else:
                for cell, column_width in zip(cells, widths, strict=True):
                    swatch = _swatch_size(table, self.pt) if cell.swatch is not None else 0.0
                    width = column_width - 2 * pad_x - swatch
                    font = bold if cell.bold else regular
                    blocks.append(TextBlock(cell.text, font, width, self.device, anywhere=False))
            height = max(block.height for block in blocks) + 2 * pad_y
            return height, blocks

        header_height, header_blocks = measure(table.header, False)
        measured = [measure(row.cells, row.group) for row in table.rows]

        def place_header() -> None:
            self._table_row(
                table, table.header, header_blocks, widths, header_height, HEADER_FILL, True
            )

        self.ensure(header_height + (measured[0][0] if measured else 0.0))
        place_header()
        stripe = False
        for index, (row, (height, blocks)) in enumerate(zip(table.rows, measured, strict=True)):
            needed = height
            if row.group and index + 1 < len(measured):  # keep a section label with its first row
                needed += measured[index + 1][0]
            if needed > self.remaining:
                self.new_page()
                place_header()
            if row.group:
                self._group_row(row.cells[0], blocks[0], height, pad_x, pad_y)
                stripe = False
            else:
                fill = STRIPE_FILL if (table.stripes and stripe) else None
                self._table_row(table, row.cells, blocks, widths, height, fill, False)
                stripe = not stripe
        self.y += 4 * self.pt

    def _group_row(
        self, cell: Cell, block: TextBlock, height: float, pad_x: float, pad_y: float
    ) -> None:
        rect = QRectF(self.body.left(), self.y, self.body.width(), height)

        def paint(painter: QPainter) -> None:
            painter.fillRect(rect, GROUP_FILL)
            painter.setPen(QPen(GRID_COLOR, 0.5 * self.pt))
            painter.drawLine(rect.bottomLeft(), rect.bottomRight())
            origin = QPointF(rect.left() + pad_x, rect.top() + pad_y)
            block.draw_lines(painter, origin, 0, block.line_count, TEXT_COLOR)

        self.page.ops.append(paint)
        self.y += height

    def _table_row(
        self,
        table: Table,
        cells: Sequence[Cell],
        blocks: Sequence[TextBlock],
        widths: Sequence[float],
        height: float,
        row_fill: QColor | None,
        header: bool,
    ) -> None:
        top = self.y
        left = self.body.left()
        pad_x = 3.0 * self.pt
        pad_y = 2.2 * self.pt
        swatch_size = _swatch_size(table, self.pt)
        body_width = self.body.width()
        pt = self.pt

        def paint(painter: QPainter) -> None:
            row_rect = QRectF(left, top, body_width, height)
            if row_fill is not None:
                painter.fillRect(row_rect, row_fill)
            x = left
            for cell, block, width in zip(cells, blocks, widths, strict=True):
                rect = QRectF(x, top, width, height)
                if cell.fill is not None:
                    painter.fillRect(rect, cell.fill)
                text_left = rect.left() + pad_x
                if cell.swatch is not None:
                    swatch = QRectF(
                        text_left,
                        top + pad_y + 0.15 * swatch_size,
                        swatch_size * 0.8,
                        swatch_size * 0.8,
                    )
                    painter.fillRect(swatch, cell.swatch)
                    text_left += swatch_size
                if cell.align_right:
                    text_left = rect.right() - pad_x - block.natural_width
                block.draw_lines(
                    painter,
                    QPointF(text_left, top + pad_y),
                    0,
                    block.line_count,
                    MUTED_COLOR if cell.muted else TEXT_COLOR,
                )
                x += width
            painter.setPen(QPen(GRID_COLOR, (0.8 if header else 0.4) * pt))
            painter.drawLine(row_rect.bottomLeft(), row_rect.bottomRight())
            if header:
                painter.drawLine(row_rect.topLeft(), row_rect.topRight())

        self.page.ops.append(paint)
        self.y += height


def _lines_op(block: TextBlock, origin: QPointF, first: int, last: int, color: QColor) -> DrawOp:
    def paint(painter: QPainter) -> None:
        block.draw_lines(painter, origin, first, last, color)

    return paint


def _column_widths(weights: Sequence[float], total: float) -> list[float]:
    scale = total / sum(weights)
    return [weight * scale for weight in weights]


def _swatch_size(table: Table, pt: float) -> float:
    return table.font_size_pt * 1.25 * pt


def draw_text_in(
    painter: QPainter,
    rect: QRectF,
    text: str,
    font: QFont,
    color: QColor,
    align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft,
) -> None:
    """One line of text vertically centred in ``rect``, elided ("…") if too long."""
    metrics = QFontMetricsF(font, painter.device())
    text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
    painter.setFont(font)
    painter.setPen(QPen(color))
    painter.drawText(rect, int(align | Qt.AlignmentFlag.AlignVCenter), text)
