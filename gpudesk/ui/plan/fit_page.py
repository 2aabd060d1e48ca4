"""The Plan tab's "Will it fit?" page: the memory estimate, its breakdown and the GPUs that fit.

Everything here is a cheap pure function of the form (:mod:`gpudesk.memory.fit`), so
the page recomputes live; :func:`.forms.update_timer` folds a burst of edits into
one update. The words and table rows it shows are built in :mod:`.fit_results`.
"""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.names import short_name
from gpudesk.memory.breakdown import estimate_memory
from gpudesk.memory.fit import DECODE_SOURCE, GPU_COUNTS, FitReport, fit_across
from gpudesk.ui import theme
from gpudesk.ui.plan import forms
from gpudesk.ui.plan.fit_form import WorkloadForm
from gpudesk.ui.plan.fit_results import (
    FIT_HEADERS,
    GIB_NOTE,
    PART_COLORS,
    SHORT_LABELS,
    FitColumn,
    breakdown_html,
    fit_item,
    fits_summary,
    total_html,
)
from gpudesk.ui.state import AppState
from gpudesk.units import gib
from gpudesk.workload.errors import PlanningInputError

__all__ = ["PART_COLORS", "FitPage"]


class FitPage(QWidget):
    """The memory estimator and the GPUs that hold the workload.

    Signals:
        fit_filter_requested(object): the user toggled "Show only these in the catalog":
            a ``frozenset[str]`` of the catalog ids that fit, or None to stop filtering.
            The page also calls ``state.set_fit_filter`` with the same value, and while
            the filter is on keeps it in step with each new estimate (through the state
            only, without emitting this signal again).
        fit_updated(object): a new :class:`FitReport`, or None when the input is invalid.
        cost_requested(str): "Cloud or buy for this GPU…" was pressed for this catalog id.
    """

    fit_filter_requested = Signal(object)
    fit_updated = Signal(object)
    cost_requested = Signal(str)

    def _gpu_name(self, gpu_id: str) -> str:
        """A GPU's short name for prose (ids are for files and scripts)."""
        entry = next((item for item in self.state.entries() if item.id == gpu_id), None)
        return short_name(entry) if entry is not None else gpu_id

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.report: FitReport | None = None
        self.fit_error: str | None = None
        self._timer = forms.update_timer(self, self.recompute_now)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.form = WorkloadForm()
        self.form.edited.connect(self.schedule_update)
        layout.addWidget(self._build_page())
        state.fit_filter_changed.connect(self._on_state_filter_changed)
        theme.notifier().changed.connect(self._restyle)
        self._restyle()

    @property
    def fitting_ids(self) -> frozenset[str]:
        """Catalog ids that hold the current workload (on up to the chosen GPU count)."""
        return self.report.fitting_ids() if self.report is not None else frozenset()

    def schedule_update(self) -> None:
        """Recompute after the burst of edits settles."""
        self._timer.start()

    def recompute_now(self) -> None:
        self._timer.stop()
        self._recompute_fit()

    def _build_page(self) -> QSplitter:
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setChildrenCollapsible(False)
        page.addWidget(self.form)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(8, 8, 8, 8)
        self.total_label = QLabel()
        self.total_label.setTextFormat(Qt.TextFormat.RichText)
        self.total_label.setWordWrap(True)
        right_layout.addWidget(self.total_label)

        self.bar_plot = pg.PlotWidget()
        self.bar_plot.setMenuEnabled(False)
        self.bar_plot.setMouseEnabled(x=False, y=False)
        self.bar_plot.hideButtons()
        self.bar_plot.setFixedHeight(96)
        self.bar_plot.setToolTip(GIB_NOTE)
        plot_item = self.bar_plot.getPlotItem()
        plot_item.hideAxis("left")
        plot_item.setLabel("bottom", "GiB (2³⁰ bytes)")
        plot_item.setYRange(-0.5, 0.5, padding=0)
        theme.follow_theme(self.bar_plot)
        self.bar_item = pg.BarGraphItem(x0=[], y=[], width=[], height=0.6)
        self.bar_plot.addItem(self.bar_item)
        self.gpu_line = pg.InfiniteLine(
            angle=90,
            movable=False,
            pen=pg.mkPen("#555555", width=1.5, style=Qt.PenStyle.DashLine),
        )
        self.gpu_line.hide()
        self.bar_plot.addItem(self.gpu_line)
        self.gpu_text = pg.TextItem("", anchor=(1.0, 0.5), color=theme.muted_color())
        self.gpu_text.hide()
        self.bar_plot.addItem(self.gpu_text)
        self.segment_texts: list[pg.TextItem] = []
        right_layout.addWidget(self.bar_plot)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        self.formula_view = QTextBrowser()
        self.formula_view.setOpenExternalLinks(True)
        self.formula_view.setMinimumHeight(120)
        splitter.addWidget(self.formula_view)

        fits_box = QWidget()
        fits_layout = QVBoxLayout(fits_box)
        fits_layout.setContentsMargins(0, 4, 0, 0)
        self.fits_summary = QLabel()
        self.fits_summary.setWordWrap(True)
        fits_layout.addWidget(self.fits_summary)
        self.fits_tree = forms.ranked_tree(FIT_HEADERS, sortable=True)
        # Fewest GPUs first, then the least usable memory that holds it; arrows show it.
        self.fits_tree.sortByColumn(FitColumn.COUNT, Qt.SortOrder.AscendingOrder)
        self.fits_tree.headerItem().setToolTip(
            FitColumn.COUNT,
            "Sorted by GPUs needed, then usable memory per GPU; click a header to sort by it",
        )
        for column in (FitColumn.MEMORY, FitColumn.NEED, FitColumn.HEADROOM):
            self.fits_tree.headerItem().setToolTip(column, GIB_NOTE)
        self.fits_tree.headerItem().setToolTip(
            FitColumn.DECODE,
            "Upper bound for one stream: GPUs × bandwidth / bytes read per token. "
            "Real decoders reach roughly 50-80% of it.",
        )
        self.fits_tree.itemDoubleClicked.connect(self._on_fit_double_clicked)
        self.fits_tree.currentItemChanged.connect(self._on_fit_selected)
        fits_layout.addWidget(self.fits_tree)

        buttons = QHBoxLayout()
        self.filter_button = QPushButton("Show only these in the catalog")
        self.filter_button.setCheckable(True)
        self.filter_button.setToolTip(
            "Filter the Catalog tab to the GPUs that hold this workload (fits my workload)"
        )
        self.filter_button.toggled.connect(self._on_filter_toggled)
        buttons.addWidget(self.filter_button)
        self.cost_button = QPushButton("Cloud or buy for this GPU…")
        self.cost_button.setEnabled(False)
        self.cost_button.clicked.connect(self._on_cost_for_selected)
        buttons.addWidget(self.cost_button)
        buttons.addStretch(1)
        hint = QLabel("Double-click a GPU to open it in the catalog.")
        hint.setStyleSheet("color: palette(placeholder-text);")
        buttons.addWidget(hint)
        fits_layout.addLayout(buttons)
        splitter.addWidget(fits_box)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 340])
        right_layout.addWidget(splitter, 1)

        page.addWidget(right)
        page.setStretchFactor(0, 0)
        page.setStretchFactor(1, 1)
        page.setSizes([420, 1000])  # the form's longest rows are the training options
        return page

    def _recompute_fit(self) -> None:
        try:
            model = self.form.current_model()
            estimate = estimate_memory(model, self.form.current_spec())
        except PlanningInputError as exc:
            self._show_fit_error(self.form.words(exc))
            return
        max_count = self.form.max_gpus()
        counts = tuple(count for count in GPU_COUNTS if count <= max_count)
        self.report = fit_across(self.state.entries(), estimate, counts)
        self.fit_error = None
        self.form.show_model(model)
        self._show_breakdown(self.report)
        self._show_fits(self.report)
        if self.filter_button.isChecked():
            # Keep the catalog's filter in step, quietly: the request signal is for the
            # user's own click (the main window then switches to the catalog).
            self.state.set_fit_filter(self.fitting_ids)
        self.fit_updated.emit(self.report)

    def _show_fit_error(self, message: str) -> None:
        self.report = None
        self.fit_error = message
        self.form.show_error(message)
        self.total_label.setText(
            f"<span style='color:{forms.error_color()}; font-size:13pt'>Cannot estimate: "
            f"{html.escape(message)}</span>"
        )
        self.bar_item.setOpts(x0=[], y=[], width=[], height=0.6, brushes=[])
        self._set_segment_labels([])
        self._hide_gpu_marker()
        self.formula_view.clear()
        self.fits_tree.clear()
        self.fits_summary.setText("")
        self.cost_button.setEnabled(False)
        if self.filter_button.isChecked():
            self.state.set_fit_filter(frozenset())
        self.fit_updated.emit(None)

    def _show_breakdown(self, report: FitReport) -> None:
        estimate = report.estimate
        parts = [part for part in estimate.parts if part.gb > 0]
        x0: list[float] = []
        widths: list[float] = []
        brushes: list[QColor] = []
        running = 0.0
        for part in parts:  # in GiB, the page's unit
            x0.append(running)
            widths.append(gib(part.gb))
            brushes.append(QColor(PART_COLORS[part.key]))
            running += gib(part.gb)
        self.bar_item.setOpts(
            x0=x0, y=[0.0] * len(parts), width=widths, height=0.6, brushes=brushes, pens=brushes
        )
        # Name the segments wide enough to hold a label; the legend below names them all.
        labels = [
            (start + width / 2, SHORT_LABELS[part.key])
            for start, width, part in zip(x0, widths, parts, strict=True)
            if width >= 0.1 * running
        ]
        self._set_segment_labels(labels)
        self._update_bar_range()

        self.total_label.setText(total_html(report))
        self.formula_view.setHtml(breakdown_html(estimate))

    def _set_segment_labels(self, labels: list[tuple[float, str]]) -> None:
        for text in self.segment_texts:
            self.bar_plot.removeItem(text)
        self.segment_texts = []
        for x, label in labels:
            text = pg.TextItem(label, anchor=(0.5, 0.5), color="#ffffff")
            text.setPos(x, 0)
            self.bar_plot.addItem(text)
            self.segment_texts.append(text)

    def _hide_gpu_marker(self) -> None:
        self.gpu_line.hide()
        self.gpu_text.hide()

    def _update_bar_range(self) -> None:
        total = gib(self.report.estimate.total_gb) if self.report is not None else 1.0
        right = max(total, 0.001)
        if self.gpu_line.isVisible():
            right = max(right, float(self.gpu_line.value()))
        self.bar_plot.getPlotItem().setXRange(0, right * 1.04, padding=0)

    def _show_fits(self, report: FitReport) -> None:
        selected = self._selected_gpu_id()
        self.fits_tree.setSortingEnabled(False)
        self.fits_tree.clear()
        decode = report.estimate.decode_bytes_per_token is not None
        self.fits_tree.setColumnHidden(FitColumn.DECODE, not decode)
        restore: QTreeWidgetItem | None = None
        for result in report.fits:
            item = fit_item(result)
            self.fits_tree.addTopLevelItem(item)
            if result.gpu_id == selected:
                restore = item
        self.fits_tree.setSortingEnabled(True)  # sorts the rows by the column chosen
        if restore is not None:
            self.fits_tree.setCurrentItem(restore)
        else:
            self._hide_gpu_marker()
            self.cost_button.setEnabled(False)

        self.fits_summary.setText(fits_summary(report, self._gpu_name))
        self.fits_summary.setToolTip(DECODE_SOURCE if decode else "")

    def _selected_gpu_id(self) -> str | None:
        item = self.fits_tree.currentItem()
        if item is None:
            return None
        value = item.data(FitColumn.GPU, Qt.ItemDataRole.UserRole)
        return str(value) if value is not None else None

    def _on_fit_selected(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        self.cost_button.setEnabled(current is not None)
        if current is None or self.report is None:
            self._hide_gpu_marker()
            self._update_bar_range()
            return
        gpu_id = current.data(FitColumn.GPU, Qt.ItemDataRole.UserRole)
        result = next((r for r in self.report.fits if r.gpu_id == gpu_id), None)
        if result is None:
            return
        # With N GPUs each holds 1/N of the tensors plus its own overhead: mark one GPU's
        # memory against one GPU's share only when N is 1, else the N GPUs' sum.
        count = result.count or 1
        usable = result.usable_gib * count  # what the workload may use, GiB like the bar
        self.gpu_line.setValue(usable)
        label = result.name if count == 1 else f"{count} × {result.name}"
        self.gpu_text.setText(f"{label}: {usable:,.1f} GiB usable ")
        self.gpu_text.setPos(usable, 0.36)
        self.gpu_line.show()
        self.gpu_text.show()
        self._update_bar_range()

    def _on_fit_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        gpu_id = item.data(FitColumn.GPU, Qt.ItemDataRole.UserRole)
        if gpu_id:
            self.state.show_entry(str(gpu_id))

    def _on_cost_for_selected(self) -> None:
        gpu_id = self._selected_gpu_id()
        if gpu_id is not None:
            self.cost_requested.emit(gpu_id)

    # "fits my workload" filter ------------------------------------------------------
    def _on_filter_toggled(self, checked: bool) -> None:
        self._apply_filter(self.fitting_ids if checked else None)

    def _apply_filter(self, ids: frozenset[str] | None) -> None:
        self.fit_filter_requested.emit(ids)
        self.state.set_fit_filter(ids)

    def _on_state_filter_changed(self) -> None:
        # Someone else (the catalog's "clear filters") dropped the filter: follow suit.
        if self.state.fit_filter_ids is None and self.filter_button.isChecked():
            self.filter_button.blockSignals(True)
            self.filter_button.setChecked(False)
            self.filter_button.blockSignals(False)

    def _restyle(self, *_args: object) -> None:
        """Marker colors that stay legible on the light and the dark theme."""
        _background, foreground = theme.plot_colors()
        self.gpu_line.setPen(pg.mkPen(foreground, width=1.5, style=Qt.PenStyle.DashLine))
        self.gpu_text.setColor(foreground)
        if self.report is not None:
            self._show_breakdown(self.report)
