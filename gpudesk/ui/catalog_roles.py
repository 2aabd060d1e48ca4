"""The roles and column indexes the catalog's two models share
(:mod:`gpudesk.ui.catalog_model`, :mod:`gpudesk.ui.catalog_proxy`)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from gpudesk.ui.catalog_columns import column_index

ModelIndex = QModelIndex | QPersistentModelIndex

#: The catalog id of the row (str).
ENTRY_ID_ROLE = int(Qt.ItemDataRole.UserRole) + 1
#: The row's raw sort key (float, str, or None when missing).
SORT_KEY_ROLE = int(Qt.ItemDataRole.UserRole) + 2

_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_CHECK = int(Qt.ItemDataRole.CheckStateRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_INITIAL_ORDER = int(Qt.ItemDataRole.InitialSortOrderRole)
_ACCESSIBLE_TEXT = int(Qt.ItemDataRole.AccessibleTextRole)
#: Roles the item delegate asks of every cell that this model never sets.
_UNSET_ROLES = frozenset(
    int(role)
    for role in (
        Qt.ItemDataRole.FontRole,
        Qt.ItemDataRole.DecorationRole,
        Qt.ItemDataRole.BackgroundRole,
    )
)
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_CENTER = Qt.AlignmentFlag.AlignCenter
COMPARE_COLUMN_INDEX = column_index("compare")
NAME_COLUMN_INDEX = column_index("name")
