"""Paints the compare column as a ring, filled with the GPU's series color when chosen.

A plain check box reads poorly on a dark base with the Fusion style; the ring
also shows the same color the GPU has in every chart.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QKeyEvent, QMouseEvent, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from gpudesk.render.colors import series_color
from gpudesk.ui import theme

#: The row's color slot in the compare selection (int, -1 when not chosen).
COMPARE_COLOR_SLOT_ROLE = int(Qt.ItemDataRole.UserRole) + 3

_RING_PX = 14.0


class CompareDelegate(QStyledItemDelegate):
    """Draws and toggles the compare column (mouse click, Space)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        # Selection and alternating background as for any cell; the view has
        # already set those states in the option (no initStyleOption: cheaper).
        widget = option.widget  # type: ignore[attr-defined]
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawPrimitive(
                QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, widget
            )
        position = index.data(COMPARE_COLOR_SLOT_ROLE)
        chosen = isinstance(position, int) and position >= 0
        selected = bool(option.state & QStyle.StateFlag.State_Selected)  # type: ignore[attr-defined]
        rect = QRectF(option.rect)  # type: ignore[attr-defined]
        ring = QRectF(0, 0, _RING_PX, _RING_PX)
        ring.moveCenter(rect.center())
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        if chosen:
            assert isinstance(position, int)
            # On the selection color a white edge keeps the dot apart from it.
            painter.setPen(QPen(QColor("#ffffff"), 1.5) if selected else Qt.PenStyle.NoPen)
            painter.setBrush(series_color(position))
            painter.drawEllipse(ring)
            tick = QPainterPath(QPointF(ring.left() + 3.5, ring.center().y() + 0.2))
            tick.lineTo(QPointF(ring.left() + 6.0, ring.bottom() - 3.8))
            tick.lineTo(QPointF(ring.right() - 3.2, ring.top() + 4.0))
            painter.setPen(QPen(QColor("#ffffff"), 2.0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(tick)
        else:
            color = (
                option.palette.color(QPalette.ColorRole.HighlightedText)  # type: ignore[attr-defined]
                if selected
                else theme.muted_color()
            )
            painter.setPen(QPen(color, 1.5))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(ring.adjusted(1, 1, -1, -1))
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
