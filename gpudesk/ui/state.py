"""The application state shared by every tab: catalog, compare selection, local data."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from gpudesk.catalog.loader import Catalog, load_catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.limits import MAX_COMPARED
from gpudesk.measured import MeasuredSeries

if TYPE_CHECKING:
    # Only for the annotation: the first screen must not load the fleet or bench code.
    from gpudesk.fleet.document import SurveyView
    from gpudesk.hardware.models import GpuSnapshot


class AppState(QObject):
    """What the tabs share; views listen to its signals instead of to each other.

    Signals:
        catalog_changed(): the catalog was (re)loaded.
        compare_changed(): the compare selection changed.
        measured_changed(): the local measured series changed.
        detected_changed(): the detected local GPUs (or their catalog ids) changed.
        entry_requested(str): someone asked to show this catalog entry.
        fit_filter_changed(): the "fits my workload" id filter was set or cleared.
        speed_workload_changed(): the "How fast?" workload was set or cleared.
    """

    catalog_changed = Signal()
    compare_changed = Signal()
    measured_changed = Signal()
    detected_changed = Signal()
    entry_requested = Signal(str)
    fit_filter_changed = Signal()
    speed_workload_changed = Signal()

    def __init__(
        self,
        catalog: Catalog | None = None,
        extra_dirs: Sequence[Path] = (),
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.extra_dirs: list[Path] = list(extra_dirs)
        self.catalog: Catalog = catalog if catalog is not None else load_catalog(self.extra_dirs)
        self.compare_ids: list[str] = []
        self.measured: MeasuredSeries | None = None
        self.detected_catalog_ids: list[str] = []
        #: This machine's GPUs from the last detection (the benchmark lists those it cannot run).
        self.detected_gpus: list[GpuSnapshot] = []
        #: ids the planner found to fit the user's workload; None: no such filter.
        self.fit_filter_ids: set[str] | None = None
        #: The survey the Fleet tab shows, for the PDF export; None before one is opened.
        self.fleet_survey: SurveyView | None = None
        #: the Plan tab's "How fast?" workload (a planner.SpeedWorkload); None: unset
        self.speed_workload: object | None = None

    # catalog -------------------------------------------------------------
    def entries(self) -> list[CatalogEntry]:
        return self.catalog.entries

    def reload(self) -> None:
        self.set_catalog(load_catalog(self.extra_dirs))

    def set_catalog(self, catalog: Catalog) -> None:
        self.catalog = catalog
        known = {entry.id for entry in catalog.entries}
        kept = [entry_id for entry_id in self.compare_ids if entry_id in known]
        self.catalog_changed.emit()
        if kept != self.compare_ids:
            self.compare_ids = kept
            self.compare_changed.emit()

    def show_entry(self, entry_id: str) -> None:
        self.entry_requested.emit(entry_id)

    # compare selection ---------------------------------------------------
    def compare_entries(self) -> list[CatalogEntry]:
        by_id = {entry.id: entry for entry in self.catalog.entries}
        return [by_id[entry_id] for entry_id in self.compare_ids if entry_id in by_id]

    def add_to_compare(self, entry_id: str) -> bool:
        """Add one GPU; False when it is already there, unknown, or the selection is full."""
        if entry_id in self.compare_ids or len(self.compare_ids) >= MAX_COMPARED:
            return False
        if self.catalog.by_id(entry_id) is None:
            return False
        self.compare_ids.append(entry_id)
        self.compare_changed.emit()
        return True

    def remove_from_compare(self, entry_id: str) -> None:
        if entry_id in self.compare_ids:
            self.compare_ids.remove(entry_id)
            self.compare_changed.emit()

    def set_compare(self, entry_ids: Sequence[str]) -> None:
        known = {entry.id for entry in self.catalog.entries}
        cleaned: list[str] = []
        for entry_id in entry_ids:
            if entry_id in known and entry_id not in cleaned:
                cleaned.append(entry_id)
        cleaned = cleaned[:MAX_COMPARED]
        if cleaned != self.compare_ids:
            self.compare_ids = cleaned
            self.compare_changed.emit()

    # "fits my workload" filter (set by the Plan tab, shown by the catalog) --
    def set_fit_filter(self, entry_ids: Iterable[str] | None) -> None:
        """Show only these catalog ids in the catalog table; None clears the filter."""
        ids = None if entry_ids is None else set(entry_ids)
        if ids != self.fit_filter_ids:
            self.fit_filter_ids = ids
            self.fit_filter_changed.emit()

    # this machine --------------------------------------------------------
    def set_speed_workload(self, workload: object | None) -> None:
        """Store the "How fast?" workload; Compare adds a tokens/s row while one is set."""
        self.speed_workload = workload
        self.speed_workload_changed.emit()

    def set_measured(self, series: MeasuredSeries | None) -> None:
        self.measured = series
        self.measured_changed.emit()

    def set_detected(
        self, catalog_ids: Sequence[str], gpus: Sequence[GpuSnapshot] | None = None
    ) -> None:
        """Store a detection: matched catalog ids and, when given, the devices themselves."""
        ids = list(catalog_ids)
        devices = self.detected_gpus if gpus is None else list(gpus)
        if ids != self.detected_catalog_ids or devices != self.detected_gpus:
            self.detected_catalog_ids = ids
            self.detected_gpus = devices
            self.detected_changed.emit()
