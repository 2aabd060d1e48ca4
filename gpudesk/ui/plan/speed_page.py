"""The Plan tab's "How fast?" page: tokens/s across the catalog, its limit and its cost.

The model comes from the "Will it fit?" page's form (one model choice for both pages);
this page adds what speed depends on: the mode, engine, weight and KV formats, lengths,
concurrency, training tokens. Estimates are cheap pure functions of the form
(:mod:`gpudesk.planning.speed`), so the page recomputes live, folding bursts of edits.
"""

from __future__ import annotations

import html
import math

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QSpinBox,
    QSplitter,
    QTextBrowser,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpudesk.compare.axes import log_ticks
from gpudesk.planning.errors import PlanningInputError
from gpudesk.planning.quant import QuantFormat
from gpudesk.planning.speed.data import Checkpointing, load_measurements
from gpudesk.planning.speed.estimate import (
    Engine,
    KvFormat,
    Mode,
    NotRunnable,
    SpeedEstimate,
    SpeedRequest,
    TrainMethod,
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
from gpudesk.ui.state import AppState

MODE_TEXT = {
    Mode.DECODE: "Decode (one chat, token by token)",
    Mode.PREFILL: "Prefill (reading the prompt)",
    Mode.SERVE: "Serve (many users at once)",
    Mode.TRAIN: "Train",
}
METHOD_TEXT = {
    TrainMethod.FULL: "Full fine-tuning / pre-training",
    TrainMethod.LORA: "LoRA",
    TrainMethod.QLORA: "QLoRA (4-bit base)",
}
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
    """Ranked tokens/s for the workload, the roofline of the fastest GPUs, the basis.

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
        self._sync_enabled()

    # -- building ------------------------------------------------------------------

    def _build_page(self) -> QSplitter:
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setChildrenCollapsible(False)
        page.addWidget(self._build_form())
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
        splitter.addWidget(self.roofline)
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

    def _build_form(self) -> QWidget:
        box = QGroupBox("How fast?")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.model_label = QLabel()
        self.model_label.setWordWrap(True)
        self.model_label.setToolTip("Choose the model on the “Will it fit?” page")
        form.addRow("Model", self.model_label)

        self.mode_combo = forms.combo()
        for mode, text in MODE_TEXT.items():
            self.mode_combo.addItem(text, mode.value)
        self.mode_combo.currentIndexChanged.connect(self._on_mode_changed)
        form.addRow("Workload", self.mode_combo)

        self.engine_combo = forms.combo()
        for engine in Engine:
            self.engine_combo.addItem(engine.value, engine.value)
        self.engine_combo.setCurrentIndex(self.engine_combo.findData(Engine.LLAMA_CPP.value))
        self.engine_combo.currentIndexChanged.connect(self._on_engine_changed)
        self.engine_label = QLabel("Engine")
        form.addRow(self.engine_label, self.engine_combo)

        self.quant_combo = forms.combo()
        for quant in QuantFormat:
            self.quant_combo.addItem(quant.label, quant.value)
        self.quant_combo.setCurrentIndex(self.quant_combo.findData(QuantFormat.Q4_K_M.value))
        self.quant_combo.currentIndexChanged.connect(self.schedule_update)
        form.addRow("Weights", self.quant_combo)

        self.kv_combo = forms.combo()
        for kv in KvFormat:
            self.kv_combo.addItem(kv.value, kv.value)
        self.kv_combo.setCurrentIndex(self.kv_combo.findData(KvFormat.FP16.value))
        self.kv_combo.currentIndexChanged.connect(self.schedule_update)
        form.addRow("KV cache", self.kv_combo)

        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, 4096)
        self.batch_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Batch", self.batch_spin)

        self.concurrency_spin = QSpinBox()
        self.concurrency_spin.setRange(0, 65_536)
        self.concurrency_spin.setSpecialValueText("as many as fit")
        self.concurrency_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Users at once", self.concurrency_spin)

        self.seq_in_spin = QSpinBox()
        self.seq_in_spin.setRange(1, 1_000_000)
        self.seq_in_spin.setSingleStep(256)
        self.seq_in_spin.setValue(512)
        self.seq_in_spin.setSuffix(" tokens")
        self.seq_in_spin.valueChanged.connect(self.schedule_update)
        self.seq_in_label = QLabel("Prompt")
        form.addRow(self.seq_in_label, self.seq_in_spin)

        self.seq_out_spin = QSpinBox()
        self.seq_out_spin.setRange(1, 1_000_000)
        self.seq_out_spin.setSingleStep(128)
        self.seq_out_spin.setValue(256)
        self.seq_out_spin.setSuffix(" tokens")
        self.seq_out_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Output", self.seq_out_spin)

        self.tokens_edit = QLineEdit("1e9")
        self.tokens_edit.setToolTip("Tokens to train on: 1e9, 2.5e10, 300000000")
        self.tokens_edit.textChanged.connect(self.schedule_update)
        form.addRow("Training tokens", self.tokens_edit)

        self.method_combo = forms.combo()
        for method, text in METHOD_TEXT.items():
            self.method_combo.addItem(text, method.value)
        self.method_combo.currentIndexChanged.connect(self.schedule_update)
        form.addRow("Method", self.method_combo)

        self.recompute_combo = forms.combo()
        self.recompute_combo.addItem("none (or selective)", Checkpointing.NONE.value)
        self.recompute_combo.addItem("full (8 × N FLOPs)", Checkpointing.FULL.value)
        self.recompute_combo.currentIndexChanged.connect(self.schedule_update)
        form.addRow("Recomputation", self.recompute_combo)

        self.count_combo = forms.combo()
        for count in (1, 2, 4, 8):
            self.count_combo.addItem(f"up to {count}", count)
        self.count_combo.setCurrentIndex(3)
        self.count_combo.currentIndexChanged.connect(self.schedule_update)
        self.count_label = QLabel("GPUs per machine")
        form.addRow(self.count_label, self.count_combo)

        self.cloud_spin = forms.money_spin(0, 1000, 2, 0.1, "/GPU-hour", 0)
        self.cloud_spin.setSpecialValueText("catalog rate")
        self.cloud_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Rent price", self.cloud_spin)

        self.error_label = forms.error_label()
        form.addRow(self.error_label)
        self.note_label = forms.note_label()
        count = len(load_measurements().measurements)
        self.note_label.setText(
            "Estimates come from a model of bytes and FLOPs per token whose efficiencies "
            f"are fitted to {count} published measurements (llama.cpp, vLLM, TensorRT-LLM, "
            "training tables); each row says its basis."
        )
        form.addRow(self.note_label)
        return forms.form_scroll(box)

    # -- inputs --------------------------------------------------------------------

    def mode(self) -> Mode:
        return Mode(self.mode_combo.currentData())

    def _on_mode_changed(self) -> None:
        self._sync_enabled()
        self.schedule_update()

    def _on_engine_changed(self) -> None:
        engine = Engine(self.engine_combo.currentData())
        quant = QuantFormat(self.quant_combo.currentData())
        # GGUF formats are llama.cpp's; the other engines load 16-bit, FP8, AWQ/GPTQ.
        if engine is not Engine.LLAMA_CPP and quant.is_gguf:
            self.quant_combo.setCurrentIndex(self.quant_combo.findData(QuantFormat.BF16.value))
        elif engine is Engine.LLAMA_CPP and not quant.is_gguf and not quant.is_plain:
            self.quant_combo.setCurrentIndex(self.quant_combo.findData(QuantFormat.Q4_K_M.value))
        self.schedule_update()

    def _sync_enabled(self) -> None:
        mode = self.mode()
        train = mode is Mode.TRAIN
        self.engine_combo.setEnabled(not train)
        self.kv_combo.setEnabled(not train)
        self.batch_spin.setEnabled(mode in (Mode.DECODE, Mode.PREFILL))
        self.concurrency_spin.setEnabled(mode is Mode.SERVE)
        self.seq_out_spin.setEnabled(mode in (Mode.DECODE, Mode.SERVE))
        self.tokens_edit.setEnabled(train)
        self.method_combo.setEnabled(train)
        self.recompute_combo.setEnabled(train)
        self.quant_combo.setEnabled(not train)
        self.seq_in_label.setText("Sequence" if train else "Prompt")
        self.count_label.setText("GPUs" if train else "GPUs per machine")

    def current_request(self) -> SpeedRequest:
        """The request the controls describe.

        Raises:
            PlanningInputError: the training token count cannot be read.
        """
        mode = self.mode()
        tokens: float | None = None
        if mode is Mode.TRAIN:
            text = self.tokens_edit.text().strip().replace(",", "").replace("_", "")
            try:
                tokens = float(text)
            except ValueError:
                raise PlanningInputError(
                    f"training tokens {text!r} is not a number like 1e9"
                ) from None
        return SpeedRequest(
            mode=mode,
            engine=Engine(self.engine_combo.currentData()),
            quant=QuantFormat(self.quant_combo.currentData())
            if mode is not Mode.TRAIN
            else QuantFormat.BF16,
            kv_quant=KvFormat(self.kv_combo.currentData()),
            batch=self.batch_spin.value(),
            concurrency=self.concurrency_spin.value() or None,
            seq_in=self.seq_in_spin.value(),
            seq_out=self.seq_out_spin.value(),
            tokens=tokens,
            train_method=TrainMethod(self.method_combo.currentData()),
            checkpointing=Checkpointing(self.recompute_combo.currentData()),
        ).resolved()

    def max_count(self) -> int:
        return int(self.count_combo.currentData())

    # -- computing -----------------------------------------------------------------

    def schedule_update(self, *_args: object) -> None:
        self._timer.start()

    def recompute_now(self) -> None:
        self._timer.stop()
        try:
            model = self.model_form.current_model()
            shape = shape_from_preset(model)
            request = self.current_request()
            costs = model_costs(shape, request.quant, request.kv_quant)
        except PlanningInputError as exc:
            self._show_error(str(exc))
            return
        self.error_label.hide()
        self.error = None
        self.model_label.setText(f"{model.name}: {shape.summary()}")
        settings = CostSettings(cloud_hourly_usd=self.cloud_spin.value() or None)
        try:
            ranked = rank_catalog(
                self.state.entries(), costs, request, max_count=self.max_count(), settings=settings
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
        forms.show_error(self.error_label, message)
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
                (str(result.count), result.count),
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
            return
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
