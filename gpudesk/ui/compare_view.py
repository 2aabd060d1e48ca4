"""The Compare tab: side-by-side table beside its charts (:mod:`gpudesk.ui.compare_charts`).

Everything the tab shows follows :class:`~gpudesk.ui.state.AppState`: the
compare selection, the catalog, the measured series and the detected GPUs.
Numbers come from :mod:`gpudesk.compare`; this module only arranges widgets.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGraphicsView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.names import short_name
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.limits import MAX_COMPARED, MIN_COMPARED
from gpudesk.compare.radar import NormalisationChoice
from gpudesk.compare.table import Comparison, Row, build_comparison
from gpudesk.render.colors import gpu_colors
from gpudesk.render.export import export_chart
from gpudesk.render.style import ChartStyle, chart_style, measured_color
from gpudesk.storage import atomic_write_text
from gpudesk.ui import theme
from gpudesk.ui.compare_charts import PLOT_KEYS, CompareCharts
from gpudesk.ui.compare_layout import LAYOUT_WORDS, ROW_LABEL_MAX_PX, ChartLayout, CompareLayout
from gpudesk.ui.compare_speed_row import pending_rows, speed_rows
from gpudesk.ui.compare_widgets import (
    STALE_WORDS,
    AxisPicker,
    CompareTableModel,
    stale_cells,
    swatch,
)
from gpudesk.ui.state import AppState
from gpudesk.ui.worker import TaskWorker

__all__ = ["PLOT_KEYS", "AxisPicker", "ChartLayout", "CompareTableModel", "CompareView"]

EMPTY_MESSAGE = (
    f"Mark {MIN_COMPARED}-{MAX_COMPARED} GPUs in the Catalog tab (Ctrl+D) to compare them here."
)


class CompareView(CompareLayout):
    """The Compare tab.

    Signals:
        status_message(str): something worth a line in the status bar.
    """

    status_message = Signal(str)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.comparison: Comparison | None = None
        #: (row key, GPU id) -> why its price or rate may be old (:func:`stale_cells`)
        self._stale: dict[tuple[str, str], str] = {}
        self._style: ChartStyle = chart_style(theme.is_dark())
        #: the "tokens/s for ..." rows: estimated on a worker (a serving workload with an
        #: SLO takes about a second for four GPUs), kept for the (workload, GPUs,
        #: measured column) they were made for; the table shows "estimating…" meanwhile
        self._speed_ready: tuple[object, tuple[str, ...], bool, list[Row]] | None = None
        self._speed_pending: tuple[object, tuple[str, ...], bool] | None = None
        self._speed_worker: TaskWorker | None = None
        self._build()
        state.compare_changed.connect(self.refresh)
        state.catalog_changed.connect(self.refresh)
        state.measured_changed.connect(self.refresh)
        state.speed_workload_changed.connect(self._on_speed_workload_changed)
        state.detected_changed.connect(self._update_detected_button)
        self._follow_theme()
        self.apply_style(self._style)

    # construction ----------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)

        top = QHBoxLayout()
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)  # GPU names, never markup
        title_font = self.title.font()
        title_font.setBold(True)
        self.title.setFont(title_font)
        top.addWidget(self.title, 1)
        # The measured run joins only through "Use in Compare" and leaves through this ✕.
        self.remove_measured_button = QPushButton()
        self.remove_measured_button.setVisible(False)
        self.remove_measured_button.setAccessibleName("Remove the measured run")
        self.remove_measured_button.clicked.connect(lambda: self.state.set_measured(None))
        top.addWidget(self.remove_measured_button)
        self.add_detected_button = QPushButton("Add this machine's GPU")
        self.add_detected_button.setToolTip(
            "Add the GPU detected in this machine to the comparison"
        )
        self.add_detected_button.clicked.connect(self.add_detected)
        top.addWidget(self.add_detected_button)
        top.addWidget(QLabel("Charts:"))
        self.layout_combo = QComboBox()
        for choice, words in LAYOUT_WORDS.items():
            self.layout_combo.addItem(words, choice.value)
        self.layout_combo.setToolTip(
            "Where the charts go: beside the table, below it, or on a tab of their own "
            "(the table then has the whole window; chosen by itself on a small screen "
            "until you pick one)"
        )
        self.layout_combo.currentIndexChanged.connect(self._on_layout_combo)
        # A pick is the user's choice: from then on the layout no longer switches itself.
        self._layout_chosen = False
        self.layout_combo.activated.connect(self._on_layout_clicked)
        top.addWidget(self.layout_combo)
        layout.addLayout(top)

        self.stack = QStackedWidget()
        layout.addWidget(self.stack, 1)
        self.empty_label = QLabel(EMPTY_MESSAGE)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        empty_font = self.empty_label.font()
        empty_font.setPointSizeF(empty_font.pointSizeF() * 1.25)
        self.empty_label.setFont(empty_font)
        self.stack.addWidget(self.empty_label)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        self.table_panel = self._build_table_panel()
        splitter.addWidget(self.table_panel)
        charts = CompareCharts(self.state, self.export_chart_dialog)
        self.charts = charts
        self.chart_tabs = charts  # what the layout moves between splitter and tab
        # The charts' widgets, under the names the view has always had.
        self.radar, self.scatter, self.bars = charts.radar, charts.scatter, charts.bars
        self.price_chart = charts.price_chart
        self.axis_picker = charts.axis_picker
        self.reference_combo, self.scale_combo = charts.reference_combo, charts.scale_combo
        self.x_combo, self.y_combo = charts.x_combo, charts.y_combo
        self.log_x_check, self.log_y_check = charts.log_x_check, charts.log_y_check
        self.scatter_note, self.bar_combo = charts.scatter_note, charts.bar_combo
        splitter.addWidget(charts)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        # Room for the metric names and three GPU columns without scrolling.
        splitter.setSizes([660, 720])  # kept in proportion as the window resizes
        self.splitter = splitter
        # "In a tab": the table and the charts each have the whole page.
        self.layout_tabs = QTabWidget()
        self.layout_tabs.setDocumentMode(True)
        self.layout_tabs.installEventFilter(self)
        self.stack.addWidget(self.layout_tabs)
        self._layout = ChartLayout.BESIDE
        # Its first real size (the tab shown) and window resizes decide the table's room.
        splitter.installEventFilter(self)
        self.stack.addWidget(splitter)

    def _build_table_panel(self) -> QWidget:
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(0, 0, 4, 0)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Baseline:"))
        self.baseline_combo = QComboBox()
        self.baseline_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.baseline_combo.setToolTip("Show the other GPUs' ratios to this one (×1.8)")
        self.baseline_combo.currentIndexChanged.connect(self._on_baseline_changed)
        controls.addWidget(self.baseline_combo, 1)
        self.copy_button = QPushButton("Copy as text")
        self.copy_button.clicked.connect(self.copy_as_text)
        controls.addWidget(self.copy_button)
        self.csv_button = QPushButton("Export CSV…")
        self.csv_button.clicked.connect(self._export_csv_dialog)
        controls.addWidget(self.csv_button)
        layout.addLayout(controls)

        self.table_model = CompareTableModel(self)
        self.table = QTableView()
        self.table.setAccessibleName("Comparison table: one column per GPU")
        self.table.setModel(self.table_model)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.table.setAlternatingRowColors(False)
        self.table.setWordWrap(False)
        self.table.setIconSize(QSize(12, 12))
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.viewport().installEventFilter(self)
        # Row labels stay put while the GPU columns scroll; long ones elide (tooltip).
        self.table.verticalHeader().setMaximumWidth(ROW_LABEL_MAX_PX)
        self.table.installEventFilter(self)
        self.table.verticalHeader().setTextElideMode(Qt.TextElideMode.ElideMiddle)
        layout.addWidget(self.table, 1)
        self.table_note = QLabel()
        self.table_note.setTextFormat(Qt.TextFormat.PlainText)
        self.table_note.setWordWrap(True)
        layout.addWidget(self.table_note)
        return panel

    # theme -----------------------------------------------------------------
    def _follow_theme(self) -> None:
        theme.notifier().changed.connect(self._on_theme_changed)

    def _on_theme_changed(self, dark: bool) -> None:
        self.apply_style(chart_style(dark))

    def apply_style(self, style: ChartStyle) -> None:
        """Switch every chart (and the table's highlight) to ``style``."""
        self._style = style
        self.charts.set_style(style)
        self.refresh()

    # state -> widgets ------------------------------------------------------
    def entries(self) -> list[CatalogEntry]:
        return self.state.compare_entries()

    def refresh(self) -> None:
        """Rebuild everything from the state (selection, catalog, measured series)."""
        entries = self.entries()
        count = len(entries)
        self._update_detected_button()
        self._update_measured_button()
        if count < MIN_COMPARED:
            self.title.setText(
                "Compare"
                if count == 0
                else f"Compare: {short_name(entries[0])} (add at least one more)"
            )
            self.stack.setCurrentWidget(self.empty_label)
            self.comparison = None
            self.table_model.set_comparison(None, [], [], self._style.dark)
            return
        measured = self.state.measured
        self.title.setText(
            f"Comparing {count} GPUs (max {MAX_COMPARED})"
            + (" and your measured run" if measured is not None else "")
            + ": "
            + ", ".join(short_name(entry) for entry in entries)
        )
        self.stack.setCurrentWidget(self.layout_page())
        self._update_baseline_choices(entries)
        self._update_table()
        self.charts.refresh()

    def _update_measured_button(self) -> None:
        measured = self.state.measured
        self.remove_measured_button.setVisible(measured is not None)
        if measured is not None:
            self.remove_measured_button.setText(f"✕ {measured.label}")
            words = f"Remove “{measured.label}” from the comparison"
            self.remove_measured_button.setToolTip(words)
            self.remove_measured_button.setAccessibleName(words)

    def _update_detected_button(self) -> None:
        self.add_detected_button.setVisible(bool(self._detected_to_add()))

    def _detected_to_add(self) -> list[str]:
        known = {entry.id for entry in self.state.entries()}
        return [
            entry_id
            for entry_id in self.state.detected_catalog_ids
            if entry_id in known and entry_id not in self.state.compare_ids
        ]

    def add_detected(self) -> None:
        """Add the detected GPU(s) of this machine to the compare selection."""
        added = [
            entry_id for entry_id in self._detected_to_add() if self.state.add_to_compare(entry_id)
        ]
        if not added:
            self.status_message.emit(f"The comparison already holds {MAX_COMPARED} GPUs")

    def _update_baseline_choices(self, entries: list[CatalogEntry]) -> None:
        current = self.baseline_combo.currentData()
        self.baseline_combo.blockSignals(True)
        self.baseline_combo.clear()
        self.baseline_combo.addItem("none (show values)", None)
        colors = gpu_colors([entry.id for entry in entries])
        for color, entry in zip(colors, entries, strict=True):
            self.baseline_combo.addItem(swatch(color), short_name(entry), entry.id)
        position = self.baseline_combo.findData(current) if current is not None else 0
        self.baseline_combo.setCurrentIndex(max(0, position))
        self.baseline_combo.blockSignals(False)

    def baseline_id(self) -> str | None:
        value = self.baseline_combo.currentData()
        return None if value is None else str(value)

    def set_baseline(self, entry_id: str | None) -> None:
        position = self.baseline_combo.findData(entry_id) if entry_id is not None else 0
        if position < 0:
            raise KeyError(entry_id)
        self.baseline_combo.setCurrentIndex(position)

    def _on_baseline_changed(self) -> None:
        if len(self.entries()) >= MIN_COMPARED:
            self._update_table()

    def _on_speed_workload_changed(self) -> None:
        if len(self.entries()) >= MIN_COMPARED:
            self._update_table()

    def _speed_rows(self, entries: list[CatalogEntry], with_measured: bool) -> list[Row]:
        """The "tokens/s for ..." row while the Plan tab's "How fast?" has a workload:
        the estimated rows once the worker has them, "estimating…" until then."""
        workload = self.state.speed_workload
        if workload is None or not entries:
            return []
        ids = tuple(entry.id for entry in entries)
        ready = self._speed_ready
        if ready is not None and ready[0] is workload and ready[1:3] == (ids, with_measured):
            return ready[3]
        pending = self._speed_pending
        if pending is None or pending[0] is not workload or pending[1:] != (ids, with_measured):
            self._start_speed_rows(workload, entries, with_measured)
        return pending_rows(workload, len(entries), with_measured)

    def _start_speed_rows(
        self, workload: object, entries: list[CatalogEntry], with_measured: bool
    ) -> None:
        if self._speed_worker is not None:
            self._speed_worker.cancel()  # its result is for another key: dropped below
        key = (workload, tuple(entry.id for entry in entries), with_measured)
        self._speed_pending = key
        chosen = list(entries)
        worker = TaskWorker(
            lambda _progress: speed_rows(workload, chosen, with_measured), owner=self
        )
        worker.finished.connect(lambda rows: self._on_speed_rows(key, rows))
        worker.failed.connect(lambda message: self._on_speed_failed(key, message))
        worker.done.connect(self._on_speed_worker_done)
        self._speed_worker = worker
        worker.start()

    def _on_speed_rows(self, key: tuple[object, tuple[str, ...], bool], rows: object) -> None:
        if key != self._speed_pending or not isinstance(rows, list):
            return  # a newer workload or selection asked since
        self._speed_pending = None
        self._speed_ready = (*key, rows)
        if len(self.entries()) >= MIN_COMPARED:
            self._update_table()

    def _on_speed_failed(self, key: tuple[object, tuple[str, ...], bool], message: str) -> None:
        if key == self._speed_pending:
            self._speed_pending = None
            self.status_message.emit(f"tokens/s row not estimated: {message}")

    def _on_speed_worker_done(self) -> None:
        # an older worker ends after a newer one started: keep the newer's handle
        if self._speed_worker is not None and not self._speed_worker.is_running():
            self._speed_worker = None

    def _update_table(self) -> None:
        entries = self.entries()
        measured = self.state.measured
        self.comparison = build_comparison(
            entries,
            baseline_id=self.baseline_id(),
            measured=measured,
            extra_rows=self._speed_rows(entries, measured is not None),
        )
        headers = [short_name(entry) for entry in entries]
        colors = gpu_colors([entry.id for entry in entries])
        baseline = self.baseline_id()
        if baseline is not None:
            headers = [
                f"{header}\n(baseline)" if entry.id == baseline else header
                for header, entry in zip(headers, entries, strict=True)
            ]
        if measured is not None:
            # "Xeon … (measured, numpy)" on two lines: on one it was cut at both ends.
            headers.append(measured.label.replace(" (measured", "\n(measured", 1))
            colors.append(measured_color(False))
        stale = stale_cells(entries, dt.date.today())
        self._stale = stale
        self.table_model.set_comparison(
            self.comparison, headers, colors, self._style.dark, stale=stale
        )
        self._give_table_room()
        self._fit_row_labels()
        self._fit_columns()
        # The splitter may not be laid out yet (the first time it is shown).
        self._soon(CompareLayout._give_table_room)
        notes = [
            "Best value in each row highlighted (price: lowest; TDP has no best, see per watt)."
        ]
        if baseline is not None:
            notes.append("Other columns show each value with its ratio to the baseline (×2.7).")
        if measured is not None:
            notes.append(f"“{measured.label}”: measured figures only (— not measured).")
        if stale:
            notes.append(STALE_WORDS)
        self.table_note.setText(" ".join(notes))

    def normalisation_choice(self) -> NormalisationChoice:
        return self.charts.normalisation_choice()

    # actions ---------------------------------------------------------------
    def copy_as_text(self) -> None:
        if self.comparison is None:
            return
        QGuiApplication.clipboard().setText(self.comparison.to_text(self._stale))
        self.status_message.emit("Comparison copied as text")

    def export_csv(self, path: Path) -> None:
        """Write the table as CSV (raises OSError)."""
        if self.comparison is None:
            raise ValueError("nothing to export: fewer than two GPUs selected")
        atomic_write_text(path, self.comparison.to_csv(self._stale))

    def _export_csv_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self, "Export the comparison as CSV", "gpu-comparison.csv", "CSV files (*.csv)"
        )
        if name:
            self._report_write(Path(name), lambda path: self.export_csv(path))

    def export_chart_dialog(self, view: QGraphicsView, name: str, image_format: str) -> None:
        suffix = image_format.lower()
        chosen, _ = QFileDialog.getSaveFileName(
            self,
            f"Export the {name} chart as {suffix.upper()}",
            f"gpu-{name}.{suffix}",
            f"{suffix.upper()} images (*.{suffix})",
        )
        if chosen:
            path = Path(chosen)
            if path.suffix.lower() != f".{suffix}":
                path = path.with_name(path.name + f".{suffix}")
            self._report_write(path, lambda target: export_chart(view, target, suffix))

    def _report_write(self, path: Path, write: Callable[[Path], None]) -> None:
        try:
            write(path)
        except OSError as exc:
            QMessageBox.warning(
                self, "Export failed", f"Could not write {path}:\n{exc.strerror or exc}"
            )
            return
        self.status_message.emit(f"Wrote {path}")
