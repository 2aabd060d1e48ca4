"""Paints plain text cells from laid-out text kept between frames.

Qt's own delegate asks the model for seven roles per cell (seven calls into
Python for a Python model) and lays the text out again on every paint. A
catalog of 10,000 rows repaints about 500 cells per frame, so this delegate
asks its model once per cell (:meth:`TextCellSource.cell_paint`) and draws a
:class:`QStaticText` prepared the first time that string was painted in a
cell of that width.

Cells it cannot draw the same way as Qt's delegate — selected or focused,
disabled, or text wider than the cell (Qt elides it) — go to Qt's delegate,
so they look exactly as before.
"""

from __future__ import annotations

from typing import Protocol, cast

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QStaticText, QTextOption, QTransform
from PySide6.QtWidgets import (
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

#: Strings laid out at most; the cache is emptied when it holds more.
_CACHE_LIMIT = 20_000
#: States Qt's delegate draws more than text for (highlight, focus frame, editor).
_STATES_FOR_QT = int(
    QStyle.StateFlag.State_Selected.value
    | QStyle.StateFlag.State_HasFocus.value
    | QStyle.StateFlag.State_Editing.value
)
_ENABLED = int(QStyle.StateFlag.State_Enabled.value)
_ACTIVE = int(QStyle.StateFlag.State_Active.value)
_H_MASK = int(Qt.AlignmentFlag.AlignHorizontal_Mask.value)
_V_MASK = int(Qt.AlignmentFlag.AlignVertical_Mask.value)
_RIGHT = int(Qt.AlignmentFlag.AlignRight.value)
_HCENTER = int(Qt.AlignmentFlag.AlignHCenter.value)
_TOP = int(Qt.AlignmentFlag.AlignTop.value)
_BOTTOM = int(Qt.AlignmentFlag.AlignBottom.value)
#: Events after which the view paints with another font, palette or style.
_LOOK_CHANGES = frozenset(
    {
        QEvent.Type.FontChange,
        QEvent.Type.PaletteChange,
        QEvent.Type.StyleChange,
        QEvent.Type.ApplicationFontChange,
        QEvent.Type.ApplicationPaletteChange,
    }
)


class TextCellSource(Protocol):
    """What the delegate needs of its model, in one call per cell."""

    def cell_paint(self, row: int, column: int) -> tuple[str, int, QColor | None]:
        """The cell's display text, alignment (as int) and text colour (None: the palette's)."""
        ...


class TextCellDelegate(QStyledItemDelegate):
    """Draws a table's text cells as Qt's delegate would, with fewer calls per cell.

    Args:
        source: the view's model, answering :meth:`TextCellSource.cell_paint`.
        view: the view (its font, palette and style place the text).
    """

    def __init__(self, source: TextCellSource, view: QWidget) -> None:
        super().__init__(view)
        self._source = source
        self._laid_out: dict[tuple[str, int, int], tuple[QStaticText | None, int]] = {}
        self._font = QFont()
        self._margin = 3
        self._mirrored = False
        #: the palette's text colour (inactive, active); None until the next paint reads it
        self._text_colors: tuple[QColor, QColor] | None = None
        view.installEventFilter(self)

    def _take_look(self, option: QStyleOptionViewItem) -> None:
        """Font, colours and margin as the view paints now (after any theme or font change)."""
        widget = option.widget  # type: ignore[attr-defined]
        self._font = QFont(option.font)  # type: ignore[attr-defined]
        # Qt's text margin in a cell: the focus frame's margin plus one (QCommonStyle).
        style = widget.style() if widget is not None else QApplication.style()
        focus_margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget)
        self._margin = focus_margin + 1
        # Right-to-left layouts mirror the alignment: Qt's delegate handles those.
        self._mirrored = option.direction == Qt.LayoutDirection.RightToLeft  # type: ignore[attr-defined]
        palette = option.palette  # type: ignore[attr-defined]
        self._text_colors = (
            palette.color(QPalette.ColorGroup.Inactive, QPalette.ColorRole.Text),
            palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Text),
        )
        self._laid_out.clear()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # A theme switch reaches the view as a palette change: read the new look when painting.
        if event.type() in _LOOK_CHANGES:
            self._text_colors = None
        return False

    def cached_count(self) -> int:
        """How many layouts (string, width, alignment) are kept (for tests)."""
        return len(self._laid_out)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        # _value_: Flag.value is a descriptor, measurably slower at 500 cells a frame
        state: int = option.state._value_  # type: ignore[attr-defined]
        text_colors = self._text_colors
        if text_colors is None:
            self._take_look(option)
            text_colors = self._text_colors
            assert text_colors is not None
        if state & _STATES_FOR_QT or not state & _ENABLED or self._mirrored:
            super().paint(painter, option, index)
            return
        text, alignment, color = self._source.cell_paint(index.row(), index.column())
        if not text:
            return
        cell: QRect = option.rect  # type: ignore[attr-defined]
        left, top, cell_width, cell_height = cast(tuple[int, int, int, int], cell.getRect())
        margin = self._margin
        room = cell_width - 2 * margin
        horizontal = alignment & _H_MASK
        key = (text, room, horizontal)
        laid_out = self._laid_out.get(key)
        if laid_out is None:
            laid_out = self._lay_out(key)
        static, height = laid_out
        if static is None:
            super().paint(painter, option, index)  # Qt elides what does not fit
            return
        # As Qt's style places it (a test compares the pixels): laid out across
        # the cell less its margins, aligned within that line, and centred up
        # and down in whole pixels.
        vertical = alignment & _V_MASK
        if vertical & _TOP:
            y = top
        elif vertical & _BOTTOM:
            y = top + cell_height - height
        else:
            y = top + (cell_height - height) // 2
        painter.setPen(color if color is not None else text_colors[bool(state & _ACTIVE)])
        painter.drawStaticText(QPoint(left + margin, y), static)

    def _lay_out(self, key: tuple[str, int, int]) -> tuple[QStaticText | None, int]:
        """The text laid out in a line ``room`` pixels wide, aligned, with its rounded height.

        None instead of the layout when Qt's delegate must paint it: text wider
        than the room (Qt elides it) or of several lines (Qt lays those out its
        own way).
        """
        if len(self._laid_out) >= _CACHE_LIMIT:
            self._laid_out.clear()
        text, room, horizontal = key
        natural = QStaticText(text)
        natural.setTextFormat(Qt.TextFormat.PlainText)
        natural.prepare(QTransform(), self._font)
        size = natural.size()
        static: QStaticText | None = natural
        if size.width() > room or "\n" in text or "\u2028" in text:
            static = None
        elif horizontal & (_RIGHT | _HCENTER):
            static = QStaticText(text)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.setTextWidth(room)
            static.setTextOption(QTextOption(Qt.AlignmentFlag(horizontal)))
            static.prepare(QTransform(), self._font)
        laid_out = (static, round(size.height()))
        self._laid_out[key] = laid_out
        return laid_out
