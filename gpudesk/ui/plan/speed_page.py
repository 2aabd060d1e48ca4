"""The Plan tab's "How fast?" page: tokens/s across the catalog, its limit and its cost.

The model comes from the "Will it fit?" page's form (one model choice for both pages);
this page's own form (:class:`~gpudesk.ui.plan.speed_form.SpeedForm`) adds what speed
depends on: the mode, engine, weight and KV formats, lengths, concurrency, training
tokens. Estimates are cheap pure functions of the forms (:mod:`gpudesk.planning.speed`),
so the page recomputes live, folding bursts of edits.
"""

from __future__ import annotations

import html
import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QLabel,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpudesk.compare.axes import log_ticks
from gpudesk.planning.errors import PlanningInputError
from gpudesk.planning.speed.estimate import (
    Mode,
    NotRunnable,
    SpeedEstimate,
    SpeedRequest,
    model_costs,
)
from gpudesk.planning.speed.hardware import rates_for
from gpudesk.planning.speed.physics import ModelCosts
from gpudesk.planning.speed.planner import (
    CostSettings,
    SpeedWorkload,
    calibrate,
    estimate_for,
    rank_catalog,
    with_costs,
)
from gpudesk.planning.speed.shapes import shape_from_preset
from gpudesk.planning.speed.text import duration_text, figure_text, usd_text
from gpudesk.render.colors import series_color
from gpudesk.ui import theme
from gpudesk.ui.plan import forms
from gpudesk.ui.plan.fit_form import WorkloadForm
from gpudesk.ui.plan.speed_form import SpeedForm
from gpudesk.ui.state import AppState

#: Rows of the roofline chart: the fastest few GPUs of the table.
ROOFLINE_GPUS = 4
MEASURED_LABEL = "this machine (measured)"


class _Col:
    GPU, COUNT, SPEED, RANGE, LIMIT, COST, TIME = range(7)


class _SortItem(QTreeWidgetItem):
    """Sorts numeric columns by the number behind the text."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        column = self.treeWidget().sortColumn() if self.treeWidget() else 0
        mine = self.data(column, Qt.ItemDataRole.UserRole)
        theirs = other.data(column, Qt.ItemDataRole.UserRole)
        if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)):
            return float(mine) < float(theirs)
        return self.text(column) < other.text(column)


class SpeedPage(QWidget):
    """Its form, then ranked tokens/s for the workload, the roofline of the fastest GPUs, the basis.

    Signals:
        workload_changed(object): a new :class:`SpeedWorkload`, or None on bad input;
            the page also stores it in ``state.speed_workload`` for Compare and the PDF.
    """

    workload_changed = Signal(object)

    def __init__(
        self, state: AppState, model_form: WorkloadForm, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.model_form = model_form
        self.results: list[SpeedEstimate] = []
        self.measured_result: SpeedEstimate | None = None
        self.error: str | None = None
        self._timer = forms.update_timer(self, self.recompute_now)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._build_page())
        model_form.edited.connect(self.schedule_update)
        state.measured_changed.connect(self.schedule_update)
        state.catalog_changed.connect(self.schedule_update)
        theme.notifier().changed.connect(self._draw_roofline)

    # -- building ------------------------------------------------------------------

    def _build_page(self) -> QSplitter:
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setChildrenCollapsible(False)
        self.form = SpeedForm()
        self.form.edited.connect(self.schedule_update)
        page.addWidget(self.form)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(8, 8, 8, 8)
        self.summary_label = QLabel()
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setWordWrap(True)
        right_layout.addWidget(self.summary_label)
        self.measured_label = QLabel()
        self.measured_label.setTextFormat(Qt.TextFormat.RichText)
        self.measured_label.setWordWrap(True)
        self.measured_label.hide()
        right_layout.addWidget(self.measured_label)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        self.tree = forms.ranked_tree(
            ["GPU", "GPUs", "tokens/s", "range", "limit", "$ / 1M tokens", "first token"],
            sortable=True,
        )
        self.tree.headerItem().setToolTip(
            _Col.RANGE, "10th-90th percentile of measured / estimated in the published data"
        )
        self.tree.currentItemChanged.connect(self._on_selected)
        splitter.addWidget(self.tree)
        self.roofline = pg.PlotWidget()
        self.roofline.setMenuEnabled(False)
        self.roofline.setMinimumHeight(200)
        plot = self.roofline.getPlotItem()
        plot.setLogMode(x=True, y=True)
        plot.setLabel("bottom", "arithmetic intensity (FLOPs per byte read)")
        plot.setLabel("left", "TFLOPS")
        plot.showGrid(x=True, y=True, alpha=0.2)
        self.legend = plot.addLegend(offset=(10, 10))
        theme.follow_theme(self.roofline)
        # Where a workload has no place on a roofline (training, no result), a sentence
        # says why instead of an empty grid; one stack, so nothing below jumps.
        self.roofline_note = QLabel()
        self.roofline_note.setObjectName("rooflineNote")
        self.roofline_note.setWordWrap(True)
        self.roofline_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.roofline_note.setMargin(24)
        self.roofline_note.setStyleSheet("color: palette(placeholder-text);")
        self.roofline_stack = QStackedWidget()
        self.roofline_stack.addWidget(self.roofline)
        self.roofline_stack.addWidget(self.roofline_note)
        self.roofline_stack.setMinimumHeight(200)
        splitter.addWidget(self.roofline_stack)
        self.basis_view = QTextBrowser()
        self.basis_view.setOpenExternalLinks(True)
        self.basis_view.setMinimumHeight(90)
        splitter.addWidget(self.basis_view)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setStretchFactor(2, 1)
        right_layout.addWidget(splitter, 1)
        page.addWidget(right)
        page.setStretchFactor(1, 1)
        return page

    # -- computing -----------------------------------------------------------------

    def schedule_update(self, *_args: object) -> None:
        self._timer.start()

    def recompute_now(self) -> None:
        self._timer.stop()
        try:
            model = self.model_form.current_model()
            shape = shape_from_preset(model)
            request = self.form.current_request()
            costs = model_costs(shape, request.quant, request.kv_quant)
        except PlanningInputError as exc:
            self._show_error(str(exc))
            return
        self.form.error_label.hide()
        self.error = None
        self.form.show_model(f"{model.name}: {shape.summary()}")
        settings = CostSettings(cloud_hourly_usd=self.form.cloud_hourly_usd())
        try:
            ranked = rank_catalog(
                self.state.entries(),
                costs,
                request,
                max_count=self.form.max_count(),
                settings=settings,
            )
        except PlanningInputError as exc:
            self._show_error(str(exc))
            return
        self.results = list(ranked.results)
        self.measured_result = self._measured(costs, request, settings)
        workload = SpeedWorkload(model_name=model.name, costs=costs, request=request)
        self.state.set_speed_workload(workload)
        self.workload_changed.emit(workload)
        self._fill(request, len(ranked.not_holding))

    def _measured(
        self, costs: ModelCosts, request: SpeedRequest, settings: CostSettings
    ) -> SpeedEstimate | None:
        """The estimate with this machine's benchmark in place of the datasheet."""
        series = self.state.measured
        if series is None or series.catalog_id is None:
            return None
        entry = self.state.catalog.by_id(series.catalog_id)
        if entry is None:
            return None
        copy = series.values.get("bandwidth_gbs")
        gemm = series.values.get("bf16_tensor_tflops") or series.values.get("fp16_tensor_tflops")
        if copy is None and gemm is None:
            return None
        rates = calibrate(
            rates_for(entry), copy_gbs=copy, gemm_tflops=gemm, measured_at=series.measured_at
        )
        # The same number of cards the ranked table uses for that GPU.
        count = next((item.count for item in self.results if item.gpu_id == entry.id), 1)
        chosen = request.model_copy(update={"count": count})
        try:
            return with_costs(estimate_for(rates, costs, chosen), entry, settings)
        except (NotRunnable, PlanningInputError):
            return None

    def _show_error(self, message: str) -> None:
        self.error = message
        self.measured_label.hide()
        forms.show_error(self.form.error_label, message)
        self.results = []
        self.measured_result = None
        self.tree.clear()
        self.summary_label.setText("")
        self.basis_view.setHtml("")
        self.state.set_speed_workload(None)
        self.workload_changed.emit(None)
        self._draw_roofline()

    # -- showing -------------------------------------------------------------------

    def _fill(self, request: SpeedRequest, not_holding: int) -> None:
        self.tree.setSortingEnabled(False)
        self.tree.clear()
        train = request.mode is Mode.TRAIN
        self.tree.headerItem().setText(_Col.TIME, "run time" if train else "first token")
        self.tree.headerItem().setText(
            _Col.SPEED,
            "tokens/s (all GPUs)"
            if train
            else "output tokens/s"
            if request.mode in (Mode.DECODE, Mode.SERVE)
            else "prompt tokens/s",
        )
        for index, result in enumerate(self.results):
            item = _SortItem()
            name = result.name
            time = result.time_s if train else result.time_to_first_token_s
            time_text = (
                duration_text(time)
                if train
                else ("n/a" if time is None else f"{time * 1000:,.0f} ms")
            )
            cells = [
                (name, None),
                (
                    str(result.count)
                    if result.offload is None
                    else f"1 ({result.offload.flag})",  # llama.cpp: part in host memory
                    result.count,
                ),
                (figure_text(result.tokens_per_s), result.tokens_per_s),
                (f"{figure_text(result.low)} – {figure_text(result.high)}", result.low),
                (result.limited_by.replace("_", " "), None),
                (
                    usd_text(result.usd_per_million_tokens),
                    result.usd_per_million_tokens or math.inf,
                ),
                (time_text, time if time is not None else math.inf),
            ]
            for column, (text, sort) in enumerate(cells):
                item.setText(column, text)
                if sort is not None:
                    item.setData(column, Qt.ItemDataRole.UserRole, float(sort))
                if column > 0:
                    item.setTextAlignment(
                        column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
            item.setToolTip(_Col.GPU, result.basis)
            item.setData(_Col.GPU, Qt.ItemDataRole.UserRole, index)
            self.tree.addTopLevelItem(item)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(_Col.SPEED, Qt.SortOrder.DescendingOrder)
        first = self.tree.topLevelItem(0)
        if first is not None:
            self.tree.setCurrentItem(first)
        count = len(self.results)
        summary = (
            f"<b>{html.escape(request.label)}</b> — {count} GPU types hold it"
            + (f", {not_holding} do not" if not_holding else "")
            + "."
        )
        self.summary_label.setText(summary)
        measured = self.measured_result
        if measured is None:
            self.measured_label.hide()
        else:
            when = measured.basis.rsplit("calibrated with your benchmark of ", 1)[-1]
            self.measured_label.setText(
                f"<b>{MEASURED_LABEL.capitalize()}</b>: {html.escape(measured.name)} × "
                f"{measured.count}: <b>{figure_text(measured.tokens_per_s)}</b> tokens/s "
                f"({figure_text(measured.low)}–{figure_text(measured.high)}), limited by "
                f"{html.escape(measured.limited_by)}; calibrated with your benchmark of "
                f"{html.escape(when)} ({html.escape(measured.calibrated or '')})."
            )
            self.measured_label.show()
        self._draw_roofline()

    def _selected(self) -> SpeedEstimate | None:
        item = self.tree.currentItem()
        if item is None:
            return None
        index = item.data(_Col.GPU, Qt.ItemDataRole.UserRole)
        if isinstance(index, int) and 0 <= index < len(self.results):
            return self.results[index]
        return None

    def _on_selected(self, *_args: object) -> None:
        result = self._selected()
        if result is None:
            self.basis_view.setHtml("")
            return
        parts = [
            f"<p><b>{html.escape(result.name)}</b> × {result.count}: "
            f"{figure_text(result.tokens_per_s)} tokens/s ({figure_text(result.low)}–"
            f"{figure_text(result.high)}), limited by {html.escape(result.limited_by)}; bound "
            f"{figure_text(result.bound_tokens_per_s)} tokens/s; this is "
            f"{result.efficiency:.0%} of it.</p>",
            f"<p>{html.escape(result.basis)}.</p>",
        ]
        if result.calibrated:
            parts.append(f"<p>Calibrated: {html.escape(result.calibrated)}.</p>")
        if result.cost_basis:
            parts.append(f"<p>Cost: {html.escape(result.cost_basis)}.</p>")
        self.basis_view.setHtml("".join(parts))

    def _no_roofline_text(self) -> str:
        if any(item.mode is Mode.TRAIN for item in self.results):
            return (
                "No roofline for training: its estimate is compute-bound by construction "
                "(FLOPs per token over the GPUs' dense peak × a fitted utilisation) and "
                "does not model the bytes moved per step, so there is no arithmetic "
                "intensity to place it at. The table ranks the GPUs by that estimate."
            )
        if self.error:
            return "No roofline: the workload above has a problem to fix first."
        return "The roofline of the fastest GPUs appears here once a workload is estimated."

    def _draw_roofline(self, *_args: object) -> None:
        plot = self.roofline.getPlotItem()
        plot.clear()
        if self.legend is not None:
            self.legend.clear()
            # pyqtgraph's default legend grey is faint on both themes
            self.legend.setLabelTextColor(theme.plot_colors()[1])
        shown = ([self.measured_result] if self.measured_result else []) + self.results
        shown = [item for item in shown if item.roofline.flops_per_byte > 0][:ROOFLINE_GPUS]
        if not shown:
            self.roofline_note.setText(self._no_roofline_text())
            self.roofline_stack.setCurrentWidget(self.roofline_note)
            return
        self.roofline_stack.setCurrentWidget(self.roofline)
        intensities = [item.roofline.flops_per_byte for item in shown]
        ridges = [item.roofline.ridge_flops_per_byte for item in shown]
        low = min(min(intensities), min(ridges)) / 10
        high = max(max(intensities), max(ridges)) * 10
        xs = [low * (high / low) ** (step / 40) for step in range(41)]
        # Decades only: pyqtgraph's own log ticks label every 2..9 too, and at
        # 1920 px wide "4·10¹5·10¹6·10¹…" ran into each other.
        plot.getAxis("bottom").setTicks([log_ticks(math.log10(low), math.log10(high))])
        tflops = [
            min(item.roofline.peak_tflops, item.roofline.bandwidth_gbs * x / 1000)
            for item in shown
            for x in (low, high)
        ]
        tflops += [
            item.efficiency
            * min(
                item.roofline.peak_tflops,
                item.roofline.bandwidth_gbs * item.roofline.flops_per_byte / 1000,
            )
            for item in shown
        ]
        positive = [value for value in tflops if value > 0]
        if positive:
            plot.getAxis("left").setTicks(
                [log_ticks(math.log10(min(positive)), math.log10(max(positive)))]
            )
        for index, item in enumerate(shown):
            color = series_color(index)
            roof = item.roofline
            ys = [min(roof.peak_tflops, roof.bandwidth_gbs * x / 1000) for x in xs]
            name = f"{item.name} × {item.count}" + (
                " (measured)" if item is self.measured_result else ""
            )
            plot.plot(xs, ys, pen=pg.mkPen(color, width=2), name=name)
            achieved = min(roof.peak_tflops, roof.bandwidth_gbs * roof.flops_per_byte / 1000)
            achieved *= item.efficiency
            plot.plot(
                [roof.flops_per_byte],
                [achieved],
                pen=None,
                symbol="o",
                symbolBrush=color,
                symbolPen=pg.mkPen(color),
                symbolSize=9,
            )
        if max(intensities) > min(intensities) * 1.01:
            return  # serving: each GPU runs its own number of sequences, its own point
        line = pg.InfiniteLine(
            pos=math.log10(intensities[0]),
            angle=90,
            pen=pg.mkPen("#888888", width=1, style=Qt.PenStyle.DashLine),
            label="this workload",
            labelOpts={"position": 0.9, "color": "#888888"},
        )
        plot.addItem(line)
