"""The catalog's filter panel: search, segment, vendor, kind and status, memory, price,
year, features."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, TypeGuard

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.names import KIND_LABELS, STATUS_LABELS
from gpudesk.catalog.query import SHOWN_BY_DEFAULT, CatalogFilter, Feature
from gpudesk.catalog.schema import Kind, Segment, Status

#: Typing pauses this long before the table filters again.
TEXT_DELAY_MS = 150
_YEAR_LIMITS = (2010, 2030)  # the schema's release_year bounds

_FEATURE_LABELS = {
    Feature.ECC: "ECC memory",
    Feature.MIG: "MIG (multi-instance)",
    Feature.NVLINK: "NVLink",
    Feature.TENSOR_CORES: "Tensor cores",
}


class FilterPanel(QWidget):
    """Widgets that build a :class:`CatalogFilter`.

    Text changes are rate-limited (:data:`TEXT_DELAY_MS`); every other change
    applies at once.

    Signals:
        filter_changed(object): the new :class:`CatalogFilter`.
    """

    filter_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._emitting_blocked = True  # until every widget exists
        self._data_years: tuple[int, int] = _YEAR_LIMITS
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)

        self.search = QLineEdit()
        self.search.setPlaceholderText("Search GPUs… (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Searches name, architecture and notes; every word must occur. Names that"
            " match exactly or start with the text come first (Ctrl+F; Escape clears)"
        )
        self._text_timer = QTimer(self)
        self._text_timer.setSingleShot(True)
        self._text_timer.setInterval(TEXT_DELAY_MS)
        self._text_timer.timeout.connect(self._emit)
        self.search.textChanged.connect(self._text_timer.start)
        self.search.returnPressed.connect(self.flush)
        clear_search = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.search)
        clear_search.setContext(Qt.ShortcutContext.WidgetShortcut)
        clear_search.activated.connect(self.clear_search)
        layout.addWidget(self.search)

        segment_box = QGroupBox("Segment")
        segment_layout = QVBoxLayout(segment_box)
        self.segment_boxes: dict[Segment, QCheckBox] = {}
        for segment in Segment:
            box = QCheckBox(segment.value.capitalize())
            box.setChecked(True)
            box.toggled.connect(self._emit)
            segment_layout.addWidget(box)
            self.segment_boxes[segment] = box
        layout.addWidget(segment_box)

        self.vendor_group = QGroupBox("Vendor")
        self._vendor_layout = QVBoxLayout(self.vendor_group)
        self.vendor_boxes: dict[str, QCheckBox] = {}
        layout.addWidget(self.vendor_group)

        # Kinds and statuses the data holds, one box each (set_kinds_and_statuses);
        # announced parts start unticked: not on sale yet, the box says how many.
        self.kind_group = QGroupBox("Kind and status")
        self._kind_layout = QVBoxLayout(self.kind_group)
        self.kind_boxes: dict[Kind, QCheckBox] = {}
        self.status_boxes: dict[Status, QCheckBox] = {}
        self.kind_group.setVisible(False)
        layout.addWidget(self.kind_group)

        limits_box = QGroupBox("Memory, price, year")
        limits = QFormLayout(limits_box)
        limits.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.min_memory = QSpinBox()
        self.min_memory.setRange(0, 2048)
        self.min_memory.setSingleStep(8)
        self.min_memory.setSpecialValueText("any")
        self.min_memory.setSuffix(" GiB")
        self.min_memory.setToolTip(
            "Memory at least this many GiB, as sold: a vendor's '80 GB' is 80 GiB"
        )
        self.min_memory.valueChanged.connect(self._emit)
        limits.addRow("Memory ≥", self.min_memory)
        self.max_price = QSpinBox()
        self.max_price.setRange(0, 1_000_000)
        self.max_price.setSingleStep(500)
        self.max_price.setGroupSeparatorShown(True)
        self.max_price.setSpecialValueText("any")
        self.max_price.setSuffix(" USD")
        self.max_price.setToolTip("Price at most this many USD (hides GPUs without a price)")
        self.max_price.valueChanged.connect(self._emit)
        limits.addRow("Price ≤", self.max_price)
        self.min_year = QSpinBox()
        self.max_year = QSpinBox()
        for spin in (self.min_year, self.max_year):
            spin.setRange(*_YEAR_LIMITS)
            spin.valueChanged.connect(self._on_year_changed)
        self.min_year.setValue(_YEAR_LIMITS[0])
        self.max_year.setValue(_YEAR_LIMITS[1])
        self.min_year.setToolTip("Released in or after this year")
        self.max_year.setToolTip("Released in or before this year")
        limits.addRow("Year from", self.min_year)
        limits.addRow("Year to", self.max_year)
        for spin in (self.min_memory, self.max_price, self.min_year, self.max_year):
            # The widest value ("1,000,000 USD") must not set the panel's width.
            spin.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            spin.setMinimumWidth(spin.fontMetrics().horizontalAdvance("12,000 GiB") + 30)
        layout.addWidget(limits_box)

        feature_box = QGroupBox("Required features")
        feature_layout = QVBoxLayout(feature_box)
        self.feature_boxes: dict[Feature, QCheckBox] = {}
        for feature, label in _FEATURE_LABELS.items():
            box = QCheckBox(label)
            box.toggled.connect(self._emit)
            feature_layout.addWidget(box)
            self.feature_boxes[feature] = box
        layout.addWidget(feature_box)

        self.reset_button = QPushButton("Reset filters")
        self.reset_button.clicked.connect(self.reset)
        layout.addWidget(self.reset_button)
        layout.addStretch(1)
        self._emitting_blocked = False

    # data-dependent choices --------------------------------------------------
    def set_vendors(self, vendors: Sequence[str]) -> None:
        """One check box per vendor in the data; unticked vendors stay unticked."""
        unticked = {name.lower() for name, box in self.vendor_boxes.items() if not box.isChecked()}
        for box in self.vendor_boxes.values():
            self._vendor_layout.removeWidget(box)
            box.deleteLater()
        self.vendor_boxes = {}
        for vendor in vendors:
            box = QCheckBox(vendor)
            box.setChecked(vendor.lower() not in unticked)
            box.toggled.connect(self._emit)
            self._vendor_layout.addWidget(box)
            self.vendor_boxes[vendor] = box
        self.vendor_group.setVisible(bool(vendors))
        # Boxes added after the panel was built would come last in Tab order (after
        # Reset filters): put them back between the segments and the limits.
        chain = [
            *self.segment_boxes.values(),
            *self.vendor_boxes.values(),
            *self.kind_boxes.values(),
            *self.status_boxes.values(),
            self.min_memory,
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    def set_kinds_and_statuses(
        self, kinds: Sequence[Kind], status_counts: dict[Status, int]
    ) -> None:
        """One box per kind (when the data holds more than one) and per status in the
        data; a box the user unticked stays unticked, and announced parts start hidden,
        their box saying how many there are."""
        kinds_off = {kind for kind, box in self.kind_boxes.items() if not box.isChecked()}
        statuses_on = {status for status, box in self.status_boxes.items() if box.isChecked()}
        had_statuses = set(self.status_boxes)
        for box in (*self.kind_boxes.values(), *self.status_boxes.values()):
            self._kind_layout.removeWidget(box)
            box.deleteLater()
        self.kind_boxes, self.status_boxes = {}, {}
        for kind in kinds if len(kinds) > 1 else ():
            box = QCheckBox(KIND_LABELS[kind])
            box.setChecked(kind not in kinds_off)
            box.toggled.connect(self._emit)
            self._kind_layout.addWidget(box)
            self.kind_boxes[kind] = box
        shown = [status for status in Status if status_counts.get(status)]
        for status in shown if len(shown) > 1 else ():
            count = status_counts[status]
            box = QCheckBox(f"{STATUS_LABELS[status]} ({count:,})")
            if status is Status.ANNOUNCED:
                box.setToolTip(
                    f"{count:,} announced part{'s' if count != 1 else ''}: figures the vendor "
                    "published, not on sale yet (hidden unless ticked)"
                )
            new = status not in had_statuses
            box.setChecked(status in SHOWN_BY_DEFAULT if new else status in statuses_on)
            box.toggled.connect(self._emit)
            self._kind_layout.addWidget(box)
            self.status_boxes[status] = box
        self.kind_group.setVisible(bool(self.kind_boxes or self.status_boxes))
        self._emit()

    def announced_hidden(self) -> bool:
        """Whether the data has announced parts and the filter hides them."""
        box = self.status_boxes.get(Status.ANNOUNCED)
        return box is not None and not box.isChecked()

    def set_year_bounds(self, first: int, last: int) -> None:
        """The catalog's release years; spin boxes at the old bound follow the new one."""
        old_first, old_last = self._data_years
        self._data_years = (first, last)
        with _Blocked(self):
            if self.min_year.value() <= old_first or self.min_year.value() < first:
                self.min_year.setValue(first)
            if self.max_year.value() >= old_last or self.max_year.value() > last:
                self.max_year.setValue(last)
        self._emit()

    # reading ---------------------------------------------------------------
    def criteria(self) -> CatalogFilter:
        segments = frozenset(seg for seg, box in self.segment_boxes.items() if box.isChecked())
        vendors = frozenset(name for name, box in self.vendor_boxes.items() if box.isChecked())
        kinds = frozenset(kind for kind, box in self.kind_boxes.items() if box.isChecked())
        statuses = frozenset(s for s, box in self.status_boxes.items() if box.isChecked())
        first, last = self._data_years
        return CatalogFilter(
            text=self.search.text().strip(),
            segments=None if len(segments) == len(self.segment_boxes) else segments,
            vendors=None if len(vendors) == len(self.vendor_boxes) else vendors,
            kinds=None if len(kinds) == len(self.kind_boxes) else kinds,
            # Statuses the data does not hold need no box: without one, "all" is None.
            statuses=None if len(statuses) == len(self.status_boxes) else statuses,
            min_memory_gb=float(self.min_memory.value()) or None,
            max_price_usd=float(self.max_price.value()) or None,
            min_year=self.min_year.value() if self.min_year.value() > first else None,
            max_year=self.max_year.value() if self.max_year.value() < last else None,
            features=frozenset(
                feature for feature, box in self.feature_boxes.items() if box.isChecked()
            ),
        )

    def is_default(self) -> bool:
        return self.criteria() == self.default_criteria()

    def default_criteria(self) -> CatalogFilter:
        """What Reset filters gives: everything but announced parts, if any."""
        statuses = frozenset(self.status_boxes) & SHOWN_BY_DEFAULT
        hides = len(statuses) < len(self.status_boxes)
        return CatalogFilter(statuses=statuses if hides else None)

    # acting ----------------------------------------------------------------
    def flush(self) -> None:
        """Apply pending typing now."""
        self._text_timer.stop()
        self._emit()

    def clear_search(self) -> None:
        """Empty the search box and apply it now (Escape in the box)."""
        if self.search.text():
            self.search.clear()
            self.flush()

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def reset(self) -> None:
        with _Blocked(self):
            self.search.clear()
            for box in (
                *self.segment_boxes.values(),
                *self.vendor_boxes.values(),
                *self.kind_boxes.values(),
            ):
                box.setChecked(True)
            for status, box in self.status_boxes.items():
                box.setChecked(status in SHOWN_BY_DEFAULT)
            for box in self.feature_boxes.values():
                box.setChecked(False)
            self.min_memory.setValue(0)
            self.max_price.setValue(0)
            self.min_year.setValue(self._data_years[0])
            self.max_year.setValue(self._data_years[1])
        self._text_timer.stop()
        self._emit()

    def _on_year_changed(self) -> None:
        # Keep the range the right way round: moving one end pushes the other.
        sender = self.sender()
        if self.min_year.value() > self.max_year.value():
            with _Blocked(self):
                if sender is self.min_year:
                    self.max_year.setValue(self.min_year.value())
                else:
                    self.min_year.setValue(self.max_year.value())
        self._emit()

    def _emit(self) -> None:
        if not self._emitting_blocked:
            self.filter_changed.emit(self.criteria())

    # settings --------------------------------------------------------------
    def save_state(self) -> dict[str, Any]:
        """A JSON-ready record of the panel (for QSettings)."""
        first, last = self._data_years
        return {
            "text": self.search.text(),
            "segments_off": [
                s.value for s, box in self.segment_boxes.items() if not box.isChecked()
            ],
            "vendors_off": [v for v, box in self.vendor_boxes.items() if not box.isChecked()],
            "kinds_off": [k.value for k, box in self.kind_boxes.items() if not box.isChecked()],
            "statuses_on": [s.value for s, box in self.status_boxes.items() if box.isChecked()],
            "min_memory_gb": self.min_memory.value(),
            "max_price_usd": self.max_price.value(),
            "min_year": self.min_year.value() if self.min_year.value() > first else None,
            "max_year": self.max_year.value() if self.max_year.value() < last else None,
            "features": [f.value for f, box in self.feature_boxes.items() if box.isChecked()],
        }

    def restore_state(self, saved: dict[str, Any]) -> None:
        """Restore :meth:`save_state`'s record; unknown or bad values are ignored."""
        with _Blocked(self):
            text = saved.get("text")
            if isinstance(text, str):
                self.search.setText(text)
            off = _strings(saved.get("segments_off"))
            for segment, box in self.segment_boxes.items():
                box.setChecked(segment.value not in off)
            vendors_off = {name.lower() for name in _strings(saved.get("vendors_off"))}
            for vendor, box in self.vendor_boxes.items():
                box.setChecked(vendor.lower() not in vendors_off)
            kinds_off = _strings(saved.get("kinds_off"))
            for kind, box in self.kind_boxes.items():
                box.setChecked(kind.value not in kinds_off)
            if isinstance(saved.get("statuses_on"), list):
                statuses_on = _strings(saved.get("statuses_on"))
                for status, box in self.status_boxes.items():
                    box.setChecked(status.value in statuses_on)
            for spin, key in (
                (self.min_memory, "min_memory_gb"),
                (self.max_price, "max_price_usd"),
            ):
                value = saved.get(key)
                if _fits(value, spin):
                    spin.setValue(value)
            first, last = self._data_years
            min_year, max_year = saved.get("min_year"), saved.get("max_year")
            self.min_year.setValue(min_year if _fits(min_year, self.min_year) else first)
            self.max_year.setValue(max_year if _fits(max_year, self.max_year) else last)
            features = _strings(saved.get("features"))
            for feature, box in self.feature_boxes.items():
                box.setChecked(feature.value in features)
        self._text_timer.stop()
        self._emit()


def _fits(value: object, spin: QSpinBox) -> TypeGuard[int]:
    """A saved whole number the spin box can show (a crafted 2**40 overflows Qt's int)."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and spin.minimum() <= value <= spin.maximum()
    )


def _strings(value: object) -> set[str]:
    if not isinstance(value, list):
        return set()
    return {item for item in value if isinstance(item, str)}


class _Blocked:
    """Apply several widget changes as one filter change."""

    def __init__(self, panel: FilterPanel) -> None:
        self._panel = panel
        self._was = False

    def __enter__(self) -> None:
        self._was = self._panel._emitting_blocked
        self._panel._emitting_blocked = True

    def __exit__(self, *_exc: object) -> None:
        self._panel._emitting_blocked = self._was
