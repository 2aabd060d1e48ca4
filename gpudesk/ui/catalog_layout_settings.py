"""The Catalog tab's saved layout: column order and widths, splitter and filters."""

from __future__ import annotations

import json

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QSplitter

from gpudesk.ui.catalog_columns import COLUMN_KEYS
from gpudesk.ui.filter_panel import FilterPanel
from gpudesk.ui.frozen_table import FrozenColumnsTableView

_SETTINGS_HEADER = "catalog/header"
_SETTINGS_COLUMNS = "catalog/columns"
_SETTINGS_SPLITTER = "catalog/splitter"
_SETTINGS_FILTERS = "catalog/filters"


def save_layout(
    settings: QSettings,
    table: FrozenColumnsTableView,
    splitter: QSplitter,
    filters: FilterPanel,
) -> None:
    settings.setValue(_SETTINGS_HEADER, table.horizontalHeader().saveState())
    settings.setValue(_SETTINGS_COLUMNS, ",".join(COLUMN_KEYS))
    settings.setValue(_SETTINGS_SPLITTER, splitter.saveState())
    settings.setValue(_SETTINGS_FILTERS, json.dumps(filters.save_state()))


def restore_layout(
    settings: QSettings,
    table: FrozenColumnsTableView,
    splitter: QSplitter,
    filters: FilterPanel,
) -> bool:
    """Restore what :func:`save_layout` saved; True when the saved column layout was used."""
    restored = False
    header_state = settings.value(_SETTINGS_HEADER)
    # A saved layout from a build with other columns would scramble them.
    if isinstance(header_state, QByteArray) and settings.value(_SETTINGS_COLUMNS) == ",".join(
        COLUMN_KEYS
    ):
        header = table.horizontalHeader()
        if header.restoreState(header_state):
            restored = True
            table.sortByColumn(header.sortIndicatorSection(), header.sortIndicatorOrder())
    splitter_state = settings.value(_SETTINGS_SPLITTER)
    if isinstance(splitter_state, QByteArray):
        splitter.restoreState(splitter_state)
    saved_filters = settings.value(_SETTINGS_FILTERS)
    if isinstance(saved_filters, str):
        try:
            record = json.loads(saved_filters)
        except ValueError:
            record = None
        if isinstance(record, dict):
            filters.restore_state(record)
    return restored
