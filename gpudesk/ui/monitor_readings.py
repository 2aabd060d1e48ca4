"""The live monitor's readings table: every device's current figures, one row each.

The cells are :mod:`gpudesk.telemetry.text`'s words for a
:class:`~gpudesk.telemetry.readings.DeviceReading`, the same fields for every
vendor: utilisation, memory, temperature, power and limit, clock, fan, PCIe
link, energy and health counters. The table only shows readings it is handed
(:meth:`ReadingsTable.show_readings`); sampling happens in
:mod:`gpudesk.ui.device_monitor`, off the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from gpudesk.telemetry import text as reading_text
from gpudesk.telemetry.readings import DeviceReading

#: The readings table: a heading and the text of each cell (gpudesk.telemetry.text's words).
READING_COLUMNS: tuple[tuple[str, Callable[[DeviceReading], str] | None], ...] = (
    ("GPU", None),
    ("Vendor", None),
    ("Util.", lambda reading: reading_text.percent(reading.utilization_ratio)),
    ("Memory", reading_text.memory),
    ("Temp.", reading_text.temperature),
    ("Power", reading_text.power),
    ("Clock", reading_text.clock),
    ("Fan", lambda reading: reading_text.percent(reading.fan_ratio)),
    ("PCIe", reading_text.pcie),
    ("Energy", reading_text.energy),
    ("Health", reading_text.health),
)


def reading_cells(reading: DeviceReading) -> list[str]:
    """One table row: every field of the common set, "n/a" where the device gives none."""
    identity = reading.identity
    index = "" if identity.index is None else f"{identity.index}: "
    name = identity.name or "unknown"
    if identity.parent_uuid:
        name = f"  MIG {identity.mig_profile or name}"
        index = ""
    cells = [f"{index}{name}", identity.vendor.value]
    if not reading.up:
        note = reading.note or "not answering"
        return [*cells, "LOST", *([""] * (len(READING_COLUMNS) - 4)), note]
    cells.extend(cell(reading) for _, cell in READING_COLUMNS[2:] if cell is not None)
    if reading.note:
        cells[-1] = f"{cells[-1]}  {reading.note}".strip()
    return cells


class ReadingsTable(QTableWidget):
    """A read-only, compact table of every device's newest reading (hidden until one comes)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(READING_COLUMNS), parent)
        self.setObjectName("monitorReadings")
        self.setHorizontalHeaderLabels([name for name, _ in READING_COLUMNS])
        self.verticalHeader().hide()
        # Compact rows: the charts below need the height more than the table needs air.
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWordWrap(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.setAccessibleName("Current readings of every GPU")
        self.hide()

    def show_readings(self, readings: Sequence[DeviceReading]) -> None:
        """Fill the table, one row per device (cells are plain text)."""
        self.setRowCount(len(readings))
        for row, reading in enumerate(readings):
            for column, cell in enumerate(reading_cells(reading)):
                item = self.item(row, column)
                if item is None:
                    item = QTableWidgetItem()
                    self.setItem(row, column, item)
                if item.text() != cell:
                    item.setText(cell)
                    item.setToolTip(cell)  # a long health cell is cut at the table's edge
        self.setVisible(bool(readings))
        height = self.horizontalHeader().height() + 2 * self.frameWidth()
        height += sum(self.rowHeight(row) for row in range(self.rowCount()))
        self.setFixedHeight(height)
