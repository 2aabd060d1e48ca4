"""Paints the compare column as a ring, filled with the GPU's series color when chosen.

A plain check box reads poorly on a dark base with the Fusion style; the ring
also shows the same color the GPU has in every chart.
"""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from gpudesk.render.colors import series_color
from gpudesk.ui import theme

#: The row's color slot in the compare selection (int, -1 when not chosen).
COMPARE_COLOR_SLOT_ROLE = int(Qt.ItemDataRole.UserRole) + 3

_RING_PX = 14.0
#: Half the side of a cached ring's pixmap: the ring and its pen, with room for antialiasing.
_PIXMAP_HALF_PX = 9


def _draw_ring(
    painter: QPainter, center: QPointF, slot: int, *, selected: bool, unchosen: QColor
) -> None:
    """The ring around ``center``: filled with the slot's color and ticked when chosen."""
    ring = QRectF(0, 0, _RING_PX, _RING_PX)
    ring.moveCenter(center)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    if slot >= 0:
        # On the selection color a white edge keeps the dot apart from it.
        painter.setPen(QPen(QColor("#ffffff"), 1.5) if selected else Qt.PenStyle.NoPen)
        painter.setBrush(series_color(slot))
        painter.drawEllipse(ring)
        tick = QPainterPath(QPointF(ring.left() + 3.5, ring.center().y() + 0.2))
        tick.lineTo(QPointF(ring.left() + 6.0, ring.bottom() - 3.8))
        tick.lineTo(QPointF(ring.right() - 3.2, ring.top() + 4.0))
        painter.setPen(QPen(QColor("#ffffff"), 2.0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(tick)
    else:
        painter.setPen(QPen(unchosen, 1.5))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawEllipse(ring.adjusted(1, 1, -1, -1))


def _ring_pixmap(slot: int, ratio: float, dx: float, dy: float) -> QPixmap:
    """An unselected cell's ring on a transparent pixmap, ``dx``/``dy`` off its center.

    The offsets are the half pixel by which an odd-sized cell's center falls
    between pixels, so the copy lands where direct drawing would.
    """
    side = 2 * _PIXMAP_HALF_PX
    pixmap = QPixmap(round(side * ratio), round(side * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    center = QPointF(_PIXMAP_HALF_PX + dx, _PIXMAP_HALF_PX + dy)
    _draw_ring(painter, center, slot, selected=False, unchosen=theme.muted_color())
    painter.end()
    return pixmap


_SELECTED = int(QStyle.StateFlag.State_Selected.value)


class CompareDelegate(QStyledItemDelegate):
    """Draws and toggles the compare column (mouse click, Space).

    An unselected cell's ring is drawn once per look (color slot, pixel
    ratio, cell size parity; again after a theme change) into a pixmap and copied from then on: a
    repaint of the catalog draws about 40 of them.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: ring pixmaps by (slot, pixel ratio, width and height parity); emptied on a theme change
        self._rings: dict[tuple[int, float, int, int], QPixmap] = {}
        theme.notifier().changed.connect(self._on_theme_changed)

    def _on_theme_changed(self, _dark: bool) -> None:
        self._rings.clear()

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        position = index.data(COMPARE_COLOR_SLOT_ROLE)
        slot = position if isinstance(position, int) and position >= 0 else -1
        # _value_: Flag.value is a descriptor, measurably slower per cell
        if option.state._value_ & _SELECTED:  # type: ignore[attr-defined]
            self._paint_selected(painter, option, slot)
            return
        # An unselected cell has no background of its own (no BackgroundRole):
        # the view has painted the row's, so only the ring is drawn.
        cell: QRect = option.rect  # type: ignore[attr-defined]
        left, top, width, height = cast(tuple[int, int, int, int], cell.getRect())
        ratio = painter.device().devicePixelRatioF()
        key = (slot, ratio, width % 2, height % 2)
        ring = self._rings.get(key)
        if ring is None:
            ring = self._rings[key] = _ring_pixmap(slot, ratio, width % 2 / 2, height % 2 / 2)
        painter.drawPixmap(
            left + width // 2 - _PIXMAP_HALF_PX, top + height // 2 - _PIXMAP_HALF_PX, ring
        )

    def _paint_selected(self, painter: QPainter, option: QStyleOptionViewItem, slot: int) -> None:
        # Selection background as for any cell; the view has set the states.
        widget = option.widget  # type: ignore[attr-defined]
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawPrimitive(
                QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget
            )
        rect = QRectF(option.rect)  # type: ignore[attr-defined]
        center = rect.center()
        painter.save()
        highlighted = option.palette.color(QPalette.ColorRole.HighlightedText)  # type: ignore[attr-defined]
        _draw_ring(painter, center, slot, selected=True, unchosen=highlighted)
        painter.restore()

    def editorEvent(
        self,
        event: QEvent,
        model: object,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        toggle = False
        if isinstance(event, QMouseEvent):
            if event.type() == QEvent.Type.MouseButtonRelease:
                toggle = event.button() == Qt.MouseButton.LeftButton
            elif event.type() == QEvent.Type.MouseButtonDblClick:
                return True  # a double click is two toggles, not an edit
        elif isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            toggle = event.key() in (Qt.Key.Key_Space, Qt.Key.Key_Select)
        if not toggle:
            return False
        state = index.data(Qt.ItemDataRole.CheckStateRole)
        checked = state == Qt.CheckState.Checked or state == Qt.CheckState.Checked.value
        new_state = Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked
        set_data = getattr(model, "setData", None)
        if set_data is None:
            return False
        return bool(set_data(index, new_state, Qt.ItemDataRole.CheckStateRole))
