"""The Plan tab: will my model fit (and on which GPUs), and is buying cheaper than renting.

Everything here is a cheap pure function of the form (``gpudesk.planning``), so the
view recomputes live; a short single-shot timer folds a burst of edits (typing,
spin-box arrows held down) into one update.
"""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.planning.cost import (
    DEFAULT_HOURS_PER_DAY,
    DEFAULT_KWH_PRICE_USD,
    DEFAULT_UTILISATION,
    CostInputs,
    CostResult,
    compute_cost,
)
from gpudesk.planning.errors import PlanningInputError
from gpudesk.planning.fit import DECODE_SOURCE, GPU_COUNTS, FitReport, fit_across
from gpudesk.planning.memory import (
    DEFAULT_LORA_RANK,
    MAX_BATCH,
    MAX_LORA_RANK,
    MAX_SEQ,
    DType,
    KvDType,
    Optimizer,
    PartKey,
    Workload,
    WorkloadSpec,
    estimate_memory,
    parse_param_count,
)
from gpudesk.planning.presets import (
    ModelArchitecture,
    find_preset,
    generic_architecture,
    load_presets,
)
from gpudesk.ui import theme
from gpudesk.ui.state import AppState

#: How long a burst of edits may last before the view recomputes.
UPDATE_DELAY_MS = 120
_CUSTOM = "__custom__"
_DEFAULT_COST_GPU = "rtx-4090"
_DEFAULT_CLOUD_HOURLY_USD = 1.0
_ERROR_COLOR = "#c0392b"

#: One color per memory part, the same in the bar and its legend.
PART_COLORS: dict[PartKey, str] = {
    PartKey.WEIGHTS: "#0072B2",
    PartKey.GRADIENTS: "#E69F00",
    PartKey.OPTIMIZER: "#D55E00",
    PartKey.ACTIVATIONS: "#009E73",
    PartKey.KV_CACHE: "#CC79A7",
    PartKey.OVERHEAD: "#8c8c8c",
}
_SHORT_LABELS = {
    PartKey.WEIGHTS: "weights",
    PartKey.GRADIENTS: "grads",
    PartKey.OPTIMIZER: "optimizer",
    PartKey.ACTIVATIONS: "activations",
    PartKey.KV_CACHE: "KV",
    PartKey.OVERHEAD: "overhead",
}
_PRICE_KINDS = {
    "launch_msrp": "launch MSRP",
    "street": "street price",
    "used": "used price",
    "estimate": "estimate",
}
BUY_COLOR = "#0072B2"
BREAK_EVEN_COLOR = "#2e7d32"
CLOUD_COLOR = "#D55E00"

_WORKLOAD_TEXT = {
    Workload.INFERENCE: "Inference",
    Workload.TRAIN: "Full fine-tuning (mixed precision)",
    Workload.LORA: "LoRA fine-tuning",
    Workload.QLORA: "QLoRA fine-tuning (4-bit base)",
}


class _FitColumn:
    GPU, COUNT, MEMORY, NEED, HEADROOM, DECODE = range(6)


class PlanView(QWidget):
    """The Plan tab: the memory estimator, the GPUs that fit, and cloud vs buy.

    Signals:
        fit_filter_requested(object): the user toggled "Show only these in the catalog":
            a ``frozenset[str]`` of the catalog ids that fit, or None to stop filtering.
            The view also calls ``state.set_fit_filter`` with the same value, and while
            the filter is on keeps it in step with each new estimate (through the state
            only, without emitting this signal again).
        fit_updated(object): a new :class:`FitReport`, or None when the input is invalid.
        cost_updated(object): a new :class:`CostResult`, or None when the input is invalid.
    """

    fit_filter_requested = Signal(object)
    fit_updated = Signal(object)
    cost_updated = Signal(object)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.report: FitReport | None = None
        self.cost_result: CostResult | None = None
        self.fit_error: str | None = None
        self.cost_error: str | None = None

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(UPDATE_DELAY_MS)
        self._timer.timeout.connect(self.recompute_now)

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self._build_fit_page(), "Will it fit?")
        self.tabs.addTab(self._build_cost_page(), "Cloud or buy?")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        self._populate_cost_gpus()
        state.catalog_changed.connect(self._on_catalog_changed)
        state.fit_filter_changed.connect(self._on_state_filter_changed)
        theme.notifier().changed.connect(self._restyle)
        self._restyle()
        self.recompute_now()

    # public API ---------------------------------------------------------------------
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
        self._recompute_cost()

    def show_cost_for(self, gpu_id: str) -> None:
        """Switch to the cost page with ``gpu_id`` chosen."""
        index = self.cost_gpu.findData(gpu_id)
        if index >= 0:
            self.cost_gpu.setCurrentIndex(index)
        self.tabs.setCurrentIndex(1)

    # fit page -----------------------------------------------------------------------
    def _build_fit_page(self) -> QWidget:
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setChildrenCollapsible(False)
        page.addWidget(self._build_fit_form())

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
        plot_item = self.bar_plot.getPlotItem()
        plot_item.hideAxis("left")
        plot_item.setLabel("bottom", "GB (10^9 bytes)")
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
        self.gpu_text = pg.TextItem("", anchor=(1.0, 0.5), color="#555555")
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
        self.fits_tree = QTreeWidget()
        self.fits_tree.setHeaderLabels(
            ["GPU", "GPUs", "Memory", "Need / GPU", "Headroom", "Decode ≤ tok/s"]
        )
        self.fits_tree.setRootIsDecorated(False)
        self.fits_tree.setUniformRowHeights(True)
        self.fits_tree.setAlternatingRowColors(True)
        self.fits_tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.fits_tree.header()
        header.setSectionResizeMode(_FitColumn.GPU, QHeaderView.ResizeMode.Stretch)
        for column in range(1, 6):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.fits_tree.headerItem().setToolTip(
            _FitColumn.DECODE,
            "Upper bound for one stream: GPUs x bandwidth / bytes read per token. "
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
        page.setSizes([340, 1000])
        return page

    def _build_fit_form(self) -> QWidget:
        box = QGroupBox("Model and workload")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        self.model_combo = _combo()
        for preset in load_presets():
            self.model_combo.addItem(preset.name, preset.id)
        self.model_combo.insertSeparator(self.model_combo.count())
        self.model_combo.addItem("Parameter count…", _CUSTOM)
        self.model_combo.setCurrentIndex(self.model_combo.findData(_CUSTOM))
        self.model_combo.currentIndexChanged.connect(self._on_model_changed)
        form.addRow("Model", self.model_combo)

        self.params_edit = QLineEdit("7B")
        self.params_edit.setPlaceholderText("e.g. 7B, 350M, 1.5T")
        self.params_edit.setToolTip("Parameter count: 7B, 350M, 1.5T, 7e9")
        self.params_edit.textChanged.connect(self.schedule_update)
        form.addRow("Parameters", self.params_edit)

        self.mode_combo = _combo()
        for workload, text in _WORKLOAD_TEXT.items():
            self.mode_combo.addItem(text, workload.value)
        self.mode_combo.currentIndexChanged.connect(self._on_mode_changed)
        form.addRow("Workload", self.mode_combo)

        self.dtype_combo = _combo()
        for dtype in DType:
            self.dtype_combo.addItem(dtype.value, dtype.value)
        self.dtype_combo.setCurrentIndex(self.dtype_combo.findData(DType.BF16.value))
        self.dtype_combo.currentIndexChanged.connect(self.schedule_update)
        self.dtype_label = QLabel("Weights dtype")
        form.addRow(self.dtype_label, self.dtype_combo)

        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, MAX_BATCH)
        self.batch_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Batch size", self.batch_spin)

        self.seq_spin = QSpinBox()
        self.seq_spin.setRange(0, MAX_SEQ)
        self.seq_spin.setSingleStep(512)
        self.seq_spin.setSpecialValueText("model default")
        self.seq_spin.setSuffix(" tokens")
        self.seq_spin.setValue(0)
        self.seq_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Sequence length", self.seq_spin)

        self.kv_combo = _combo()
        self.kv_combo.addItem("as computed", None)
        for kv_dtype in KvDType:
            self.kv_combo.addItem(kv_dtype.value, kv_dtype.value)
        self.kv_combo.currentIndexChanged.connect(self.schedule_update)
        form.addRow("KV cache dtype", self.kv_combo)

        self.checkpoint_check = QCheckBox("Gradient checkpointing")
        self.checkpoint_check.toggled.connect(self.schedule_update)
        form.addRow("", self.checkpoint_check)

        self.optimizer_combo = _combo()
        for optimizer in Optimizer:
            self.optimizer_combo.addItem(optimizer.label, optimizer.value)
        self.optimizer_combo.currentIndexChanged.connect(self.schedule_update)
        form.addRow("Optimizer", self.optimizer_combo)

        self.rank_spin = QSpinBox()
        self.rank_spin.setRange(1, MAX_LORA_RANK)
        self.rank_spin.setValue(DEFAULT_LORA_RANK)
        self.rank_spin.valueChanged.connect(self.schedule_update)
        form.addRow("LoRA rank", self.rank_spin)

        self.flash_check = QCheckBox("FlashAttention / SDPA")
        self.flash_check.setChecked(True)
        self.flash_check.setToolTip("Off: count the attention score matrices (a·s² per layer)")
        self.flash_check.toggled.connect(self.schedule_update)
        form.addRow("", self.flash_check)

        self.max_gpus_combo = _combo()
        for count in GPU_COUNTS:
            self.max_gpus_combo.addItem(f"up to {count}", count)
        self.max_gpus_combo.setCurrentIndex(len(GPU_COUNTS) - 1)
        self.max_gpus_combo.currentIndexChanged.connect(self.schedule_update)
        form.addRow("GPUs per machine", self.max_gpus_combo)

        self.fit_error_label = _error_label()
        form.addRow(self.fit_error_label)

        self.model_info = QLabel()
        self.model_info.setWordWrap(True)
        self.model_info.setTextFormat(Qt.TextFormat.RichText)
        self.model_info.setOpenExternalLinks(True)
        self.model_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.model_info.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        form.addRow(self.model_info)

        scroll = QScrollArea()
        scroll.setWidget(box)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumWidth(300)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._sync_form_enabled()
        return scroll

    def _on_model_changed(self) -> None:
        self._sync_form_enabled()
        self.schedule_update()

    def _on_mode_changed(self) -> None:
        self._sync_form_enabled()
        self.schedule_update()

    def _sync_form_enabled(self) -> None:
        custom = self.model_combo.currentData() == _CUSTOM
        self.params_edit.setEnabled(custom)
        workload = Workload(self.mode_combo.currentData())
        training = workload is not Workload.INFERENCE
        self.checkpoint_check.setEnabled(training)
        self.optimizer_combo.setEnabled(training)
        self.rank_spin.setEnabled(workload in (Workload.LORA, Workload.QLORA))
        self.kv_combo.setEnabled(not training)
        self.dtype_label.setText("Compute dtype" if workload is Workload.QLORA else "Weights dtype")

    def _current_model(self) -> ModelArchitecture:
        data = self.model_combo.currentData()
        if data == _CUSTOM:
            return generic_architecture(parse_param_count(self.params_edit.text()))
        return find_preset(str(data))

    def _current_spec(self) -> WorkloadSpec:
        kv = self.kv_combo.currentData()
        return WorkloadSpec(
            workload=Workload(self.mode_combo.currentData()),
            dtype=DType(self.dtype_combo.currentData()),
            batch=self.batch_spin.value(),
            seq=self.seq_spin.value() or None,
            kv_dtype=KvDType(kv) if kv else None,
            checkpointing=self.checkpoint_check.isChecked(),
            optimizer=Optimizer(self.optimizer_combo.currentData()),
            lora_rank=self.rank_spin.value(),
            flash_attention=self.flash_check.isChecked(),
        )

    def _recompute_fit(self) -> None:
        try:
            model = self._current_model()
            estimate = estimate_memory(model, self._current_spec())
        except PlanningInputError as exc:
            self._show_fit_error(str(exc))
            return
        max_count = int(self.max_gpus_combo.currentData())
        counts = tuple(count for count in GPU_COUNTS if count <= max_count)
        self.report = fit_across(self.state.entries(), estimate, counts)
        self.fit_error = None
        self.fit_error_label.hide()
        self._show_model_info(model)
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
        self.fit_error_label.setText(message[:1].upper() + message[1:])
        self.fit_error_label.show()
        self.model_info.setText("")
        self.total_label.setText(
            f"<span style='color:{_ERROR_COLOR}; font-size:13pt'>Cannot estimate: "
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

    def _show_model_info(self, model: ModelArchitecture) -> None:
        sources = "".join(f"<li>{_linkify(source)}</li>" for source in model.sources)
        note = f"<p><i>{html.escape(model.notes)}</i></p>" if model.notes else ""
        self.model_info.setText(
            f"<p><b>{html.escape(model.name)}</b><br>{html.escape(model.summary())}</p>"
            f"{note}<p style='margin-bottom:0'>Sources:</p><ul style='margin-top:0'>{sources}</ul>"
        )

    def _show_breakdown(self, report: FitReport) -> None:
        estimate = report.estimate
        parts = [part for part in estimate.parts if part.gb > 0]
        x0: list[float] = []
        widths: list[float] = []
        brushes: list[QColor] = []
        running = 0.0
        for part in parts:
            x0.append(running)
            widths.append(part.gb)
            brushes.append(QColor(PART_COLORS[part.key]))
            running += part.gb
        self.bar_item.setOpts(
            x0=x0, y=[0.0] * len(parts), width=widths, height=0.6, brushes=brushes, pens=brushes
        )
        # Name the segments wide enough to hold a label; the legend below names them all.
        labels = [
            (start + width / 2, _SHORT_LABELS[part.key])
            for start, width, part in zip(x0, widths, parts, strict=True)
            if width >= 0.1 * running
        ]
        self._set_segment_labels(labels)
        self._update_bar_range()

        single = sum(1 for result in report.fits if result.count == 1)
        self.total_label.setText(
            f"<span style='font-size:16pt; font-weight:bold'>{estimate.total_gb:,.2f} GB</span>"
            f"&nbsp;&nbsp;{html.escape(estimate.model.name)} · "
            f"{html.escape(_WORKLOAD_TEXT[estimate.spec.workload])} · {_spec_suffix(report)}"
            f" · fits on {single} GPU{'s' if single != 1 else ''} on its own"
        )
        muted = theme.muted_color().name()
        rows = []
        for part in estimate.parts:
            swatch = f"<span style='color:{PART_COLORS[part.key]}; font-size:14pt'>&#9632;</span>"
            if part.gb == 0:
                rows.append(
                    f"<tr style='color:{muted}'><td valign='top'>{swatch}</td>"
                    f"<td valign='top'>{html.escape(part.label)}</td>"
                    f"<td valign='top' align='right' style='padding-right:10px'>0&nbsp;GB</td>"
                    f"<td valign='top'>{html.escape(part.formula)}</td></tr>"
                )
                continue
            rows.append(
                f"<tr><td valign='top'>{swatch}</td>"
                f"<td valign='top' style='padding-right:8px'><b>{html.escape(part.label)}</b></td>"
                f"<td valign='top' align='right' style='padding-right:10px'>"
                f"<b>{part.gb:,.2f}&nbsp;GB</b></td>"
                f"<td valign='top'>{html.escape(part.formula)}<br>"
                f"<span style='color:{muted}; font-size:small'>{_linkify(part.source)}</span>"
                "</td></tr>"
            )
        notes = "".join(f"<li>{html.escape(note)}</li>" for note in estimate.notes)
        self.formula_view.setHtml(
            "<table cellspacing='0' cellpadding='2'>"
            + "".join(rows)
            + "</table>"
            + (f"<ul>{notes}</ul>" if notes else "")
            + f"<p style='color:{muted}; font-size:small'>GB = 10^9 bytes, like the vendors' "
            "memory sizes. Activations are an approximation (see the formula); the framework "
            "overhead is GPUDesk's stated choice.</p>"
        )

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
        total = self.report.estimate.total_gb if self.report is not None else 1.0
        right = max(total, 0.001)
        if self.gpu_line.isVisible():
            right = max(right, float(self.gpu_line.value()))
        self.bar_plot.getPlotItem().setXRange(0, right * 1.04, padding=0)

    def _show_fits(self, report: FitReport) -> None:
        selected = self._selected_gpu_id()
        self.fits_tree.clear()
        decode = report.estimate.decode_bytes_per_token is not None
        self.fits_tree.setColumnHidden(_FitColumn.DECODE, not decode)
        parallel_tip = (
            "Needs tensor/model parallelism across this many GPUs: an ideal even split, "
            "with the framework overhead counted on every GPU."
        )
        restore: QTreeWidgetItem | None = None
        for result in report.fits:
            count = result.count or 0
            item = QTreeWidgetItem(
                [
                    result.name,
                    f"{count}" if count == 1 else f"{count} (parallel)",
                    f"{result.memory_gb:g} GB",
                    f"{result.per_gpu_gb:,.1f} GB",
                    f"+{result.headroom_gb:,.1f} GB",
                    ""
                    if result.decode_tokens_per_s_upper_bound is None
                    else f"≤ {result.decode_tokens_per_s_upper_bound:,.0f}",
                ]
            )
            item.setData(_FitColumn.GPU, Qt.ItemDataRole.UserRole, result.gpu_id)
            item.setToolTip(_FitColumn.GPU, result.gpu_id)
            for column in range(1, 6):
                item.setTextAlignment(
                    column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
            if count > 1:
                item.setToolTip(_FitColumn.COUNT, parallel_tip)
                item.setForeground(_FitColumn.COUNT, QColor("#b36b00"))
            self.fits_tree.addTopLevelItem(item)
            if result.gpu_id == selected:
                restore = item
        if restore is not None:
            self.fits_tree.setCurrentItem(restore)
        else:
            self._hide_gpu_marker()
            self.cost_button.setEnabled(False)

        single = sum(1 for result in report.fits if result.count == 1)
        multi = len(report.fits) - single
        parts = [f"{single} GPU{'s' if single != 1 else ''} hold it on one card"]
        if multi:
            parts.append(
                f"{multi} more need {min(r.count or 0 for r in report.fits if (r.count or 0) > 1)}"
                f" or more (tensor/model parallelism; overhead counted per GPU)"
            )
        if report.too_small:
            parts.append(f"{len(report.too_small)} are too small even as {report.counts[-1]}")
        if report.excluded:
            parts.append(
                f"{len(report.excluded)} left out: no native {report.estimate.spec.dtype} "
                f"({', '.join(r.gpu_id for r in report.excluded[:4])}"
                f"{'…' if len(report.excluded) > 4 else ''})"
            )
        text = "; ".join(parts) + "."
        if decode:
            text += (
                " Decode tok/s is an upper bound for a single stream (bandwidth / bytes read "
                "per token), not a prediction."
            )
        self.fits_summary.setText(text)
        self.fits_summary.setToolTip(DECODE_SOURCE if decode else "")

    def _selected_gpu_id(self) -> str | None:
        item = self.fits_tree.currentItem()
        if item is None:
            return None
        value = item.data(_FitColumn.GPU, Qt.ItemDataRole.UserRole)
        return str(value) if value is not None else None

    def _on_fit_selected(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        self.cost_button.setEnabled(current is not None)
        if current is None or self.report is None:
            self._hide_gpu_marker()
            self._update_bar_range()
            return
        gpu_id = current.data(_FitColumn.GPU, Qt.ItemDataRole.UserRole)
        result = next((r for r in self.report.fits if r.gpu_id == gpu_id), None)
        if result is None:
            return
        # With N GPUs each holds 1/N of the tensors plus its own overhead: mark one GPU's
        # memory against one GPU's share only when N is 1, else the N GPUs' sum.
        count = result.count or 1
        self.gpu_line.setValue(result.memory_gb * count)
        label = result.name if count == 1 else f"{count} x {result.name}"
        self.gpu_text.setText(f"{label}: {result.memory_gb * count:g} GB ")
        self.gpu_text.setPos(result.memory_gb * count, 0.36)
        self.gpu_line.show()
        self.gpu_text.show()
        self._update_bar_range()

    def _on_fit_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        gpu_id = item.data(_FitColumn.GPU, Qt.ItemDataRole.UserRole)
        if gpu_id:
            self.state.show_entry(str(gpu_id))

    def _on_cost_for_selected(self) -> None:
        gpu_id = self._selected_gpu_id()
        if gpu_id is not None:
            self.show_cost_for(gpu_id)

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

    # cost page ----------------------------------------------------------------------
    def _build_cost_page(self) -> QWidget:
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setChildrenCollapsible(False)

        box = QGroupBox("Buy or rent")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.cost_gpu = _combo()
        self.cost_gpu.currentIndexChanged.connect(self._on_cost_gpu_changed)
        form.addRow("GPU", self.cost_gpu)
        self.count_spin = QSpinBox()
        self.count_spin.setRange(1, 64)
        self.count_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Number of GPUs", self.count_spin)
        self.purchase_spin = _money_spin(0, 1_000_000, 2, 50)
        self.purchase_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Purchase price (each)", self.purchase_spin)
        self.purchase_note = _note_label()
        form.addRow("", self.purchase_note)
        self.tdp_spin = _number_spin(0, 5000, 0, 1, " W")
        self.tdp_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Power (TDP, each)", self.tdp_spin)
        self.cloud_spin = _money_spin(0, 1000, 3, 0.05, " /GPU-hour", _DEFAULT_CLOUD_HOURLY_USD)
        self.cloud_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Cloud price", self.cloud_spin)
        self.cloud_note = _note_label()
        form.addRow("", self.cloud_note)
        self.hours_spin = _number_spin(0, 24, 1, 1, " h/day", DEFAULT_HOURS_PER_DAY)
        self.hours_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Running", self.hours_spin)
        self.util_spin = _number_spin(0, 100, 0, 5, " % of TDP", DEFAULT_UTILISATION * 100)
        self.util_spin.setToolTip("Average power draw while running, as a share of TDP")
        self.util_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Utilisation", self.util_spin)
        self.kwh_spin = _money_spin(0, 10, 3, 0.01, " /kWh", DEFAULT_KWH_PRICE_USD)
        self.kwh_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Electricity", self.kwh_spin)
        self.years_spin = _number_spin(0, 20, 1, 0.5, " years", 3)
        self.years_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Horizon", self.years_spin)
        self.resale_spin = _money_spin(0, 1_000_000, 2, 50)
        self.resale_spin.setToolTip("What you expect to sell each GPU for; 0 to ignore")
        self.resale_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Resale value (each)", self.resale_spin)
        self.cost_error_label = _error_label()
        form.addRow(self.cost_error_label)
        not_counted = _note_label()
        not_counted.setText(
            "GPU only: the host machine, cooling, space and admin time, and cloud storage and "
            "egress, are not counted."
        )
        form.addRow(not_counted)
        scroll = QScrollArea()
        scroll.setWidget(box)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumWidth(300)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        page.addWidget(scroll)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(8, 8, 8, 8)
        self.verdict_label = QLabel()
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextFormat(Qt.TextFormat.RichText)
        right_layout.addWidget(self.verdict_label)
        self.cost_formulas = QLabel()
        self.cost_formulas.setWordWrap(True)
        self.cost_formulas.setTextFormat(Qt.TextFormat.RichText)
        self.cost_formulas.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right_layout.addWidget(self.cost_formulas)
        self.cost_plot = pg.PlotWidget()
        self.cost_plot.setMenuEnabled(False)
        self.cost_plot.showGrid(x=True, y=True, alpha=0.15)
        plot_item = self.cost_plot.getPlotItem()
        plot_item.setLabel("bottom", "Months")
        plot_item.setLabel("left", "Cumulative cost (USD)")
        theme.follow_theme(self.cost_plot)
        self.cost_legend = plot_item.addLegend(
            offset=(10, 10), labelTextColor=theme.plot_colors()[1], brush=theme.plot_colors()[0]
        )
        self.buy_curve = self.cost_plot.plot([], [], pen=pg.mkPen(BUY_COLOR, width=2.5), name="Buy")
        self.buy_net_curve = self.cost_plot.plot(
            [],
            [],
            pen=pg.mkPen(BUY_COLOR, width=2, style=Qt.PenStyle.DashLine),
            name="Buy, net of resale",
        )
        self.cloud_curve = self.cost_plot.plot(
            [], [], pen=pg.mkPen(CLOUD_COLOR, width=2.5), name="Cloud"
        )
        self.break_even_line = pg.InfiniteLine(
            angle=90,
            movable=False,
            pen=pg.mkPen(BREAK_EVEN_COLOR, width=1.5, style=Qt.PenStyle.DashLine),
            label="",
            labelOpts={
                "position": 0.92,
                "color": BREAK_EVEN_COLOR,
                "anchors": [(0, 0.5), (0, 0.5)],
            },
        )
        self.cost_plot.addItem(self.break_even_line)
        self.break_even_point = pg.ScatterPlotItem(
            size=10, brush=pg.mkBrush(BREAK_EVEN_COLOR), pen=pg.mkPen(BREAK_EVEN_COLOR)
        )
        self.cost_plot.addItem(self.break_even_point)
        right_layout.addWidget(self.cost_plot, 1)
        page.addWidget(right)
        page.setStretchFactor(0, 0)
        page.setStretchFactor(1, 1)
        page.setSizes([330, 1000])
        return page

    def _populate_cost_gpus(self) -> None:
        previous = self.cost_gpu.currentData() or _DEFAULT_COST_GPU
        self.cost_gpu.blockSignals(True)
        self.cost_gpu.clear()
        for entry in sorted(self.state.entries(), key=lambda e: e.name.lower()):
            self.cost_gpu.addItem(entry.name, entry.id)
        index = self.cost_gpu.findData(previous)
        self.cost_gpu.setCurrentIndex(index if index >= 0 else 0)
        self.cost_gpu.blockSignals(False)
        self._fill_from_catalog()

    def _cost_entry(self) -> CatalogEntry | None:
        gpu_id = self.cost_gpu.currentData()
        return self.state.catalog.by_id(str(gpu_id)) if gpu_id is not None else None

    def _on_cost_gpu_changed(self) -> None:
        self._fill_from_catalog()
        self.schedule_update()

    def _fill_from_catalog(self) -> None:
        """Put the catalog's price, TDP and example cloud price in the (editable) fields."""
        entry = self._cost_entry()
        if entry is None:
            return
        for spin in (self.purchase_spin, self.tdp_spin, self.cloud_spin):
            spin.blockSignals(True)
        if entry.price_usd is not None:
            self.purchase_spin.setValue(entry.price_usd)
            kind = (
                _PRICE_KINDS.get(entry.price_kind.value, "price") if entry.price_kind else "price"
            )
            self.purchase_note.setText(f"Catalog: {kind}, {entry.price_date}. Edit freely.")
        else:
            self.purchase_spin.setValue(0)
            self.purchase_note.setText("The catalog has no price for this GPU: enter one.")
        if entry.tdp_w is not None:
            self.tdp_spin.setValue(entry.tdp_w)
        else:
            self.tdp_spin.setValue(0)
        if entry.cloud_hourly_usd is not None:
            self.cloud_spin.setValue(entry.cloud_hourly_usd)
            self.cloud_note.setText(
                f"Catalog example: {entry.cloud_hourly_source or 'on-demand'}, "
                f"{entry.cloud_hourly_date or 'undated'}. Use your provider's price."
            )
        else:
            self.cloud_note.setText("No catalog example: enter your provider's price.")
        for spin in (self.purchase_spin, self.tdp_spin, self.cloud_spin):
            spin.blockSignals(False)

    def _recompute_cost(self) -> None:
        entry = self._cost_entry()
        if entry is None:
            self._show_cost_error("The catalog is empty: there is no GPU to price.")
            return
        try:
            inputs = CostInputs(
                gpu_id=entry.id,
                gpu_name=entry.name,
                purchase_usd=self.purchase_spin.value(),
                tdp_w=self.tdp_spin.value(),
                cloud_hourly_usd=self.cloud_spin.value(),
                count=self.count_spin.value(),
                hours_per_day=self.hours_spin.value(),
                utilisation=self.util_spin.value() / 100,
                kwh_price_usd=self.kwh_spin.value(),
                years=self.years_spin.value(),
                resale_usd=self.resale_spin.value(),
            )
            result = compute_cost(inputs)
        except PlanningInputError as exc:
            self._show_cost_error(str(exc))
            return
        self.cost_result = result
        self.cost_error = None
        self.cost_error_label.hide()
        self._show_cost(result)
        self.cost_updated.emit(result)

    def _show_cost_error(self, message: str) -> None:
        self.cost_result = None
        self.cost_error = message
        self.cost_error_label.setText(message[:1].upper() + message[1:])
        self.cost_error_label.show()
        self.verdict_label.setText("")
        self.cost_formulas.setText("")
        for curve in (self.buy_curve, self.buy_net_curve, self.cloud_curve):
            curve.setData([], [])
        self.break_even_line.hide()
        self.break_even_point.setData([], [])
        self.cost_updated.emit(None)

    def _show_cost(self, result: CostResult) -> None:
        inputs = result.inputs
        name = html.escape(inputs.gpu_name) + (f" x {inputs.count}" if inputs.count > 1 else "")
        horizon = f"{inputs.years:g} year{'s' if inputs.years != 1 else ''}"
        months = result.break_even_months
        if months is None:
            verdict = "Buying never breaks even: the electricity alone costs at least as much."
        elif result.break_even_within_horizon:
            verdict = f"Buying breaks even after <b>{months:.1f} months</b>."
        else:
            verdict = (
                f"Buying breaks even after {months:.1f} months, beyond the {horizon}: "
                "renting is cheaper over it."
            )
        self.verdict_label.setText(
            f"<span style='font-size:14pt'>{name}: {verdict}</span><br>"
            f"Over {horizon}: buy ${result.buy_total_usd:,.0f} (net of resale) vs "
            f"cloud ${result.cloud_total_usd:,.0f}."
        )
        formulas = result.formulas()
        self.cost_formulas.setText(
            f"Power: {html.escape(formulas['power'])}<br>"
            f"Cloud: {html.escape(formulas['cloud'])}<br>"
            f"Break-even: {html.escape(formulas['break_even'])}"
        )
        months_axis = list(result.months)
        self.buy_curve.setData(months_axis, list(result.buy_cumulative_usd))
        if result.resale_total_usd > 0:
            self.buy_net_curve.setData(months_axis, list(result.buy_net_of_resale_cumulative_usd))
        else:
            self.buy_net_curve.setData([], [])
        self.cloud_curve.setData(months_axis, list(result.cloud_cumulative_usd))
        if months is not None and result.break_even_within_horizon:
            value = result.cloud_monthly_usd * months
            self.break_even_line.setValue(months)
            self.break_even_line.label.setFormat(f"break-even {months:.1f} months")
            self.break_even_line.show()
            self.break_even_point.setData([months], [value])
        else:
            self.break_even_line.hide()
            self.break_even_point.setData([], [])
        self.cost_plot.getPlotItem().enableAutoRange()

    # theme ----------------------------------------------------------------------------
    def _restyle(self, *_args: object) -> None:
        """Marker and legend colors that stay legible on the light and the dark theme."""
        background, foreground = theme.plot_colors()
        self.gpu_line.setPen(pg.mkPen(foreground, width=1.5, style=Qt.PenStyle.DashLine))
        self.gpu_text.setColor(foreground)
        green = QColor("#66bb6a") if theme.is_dark() else QColor(BREAK_EVEN_COLOR)
        self.break_even_line.setPen(pg.mkPen(green, width=1.5, style=Qt.PenStyle.DashLine))
        self.break_even_line.label.setColor(green)
        self.break_even_point.setBrush(pg.mkBrush(green))
        self.break_even_point.setPen(pg.mkPen(green))
        self.cost_legend.setLabelTextColor(foreground)
        self.cost_legend.setBrush(pg.mkBrush(background))
        if self.report is not None:
            self._show_breakdown(self.report)

    # catalog changes ----------------------------------------------------------------
    def _on_catalog_changed(self) -> None:
        self._populate_cost_gpus()
        self.recompute_now()


def _spec_suffix(report: FitReport) -> str:
    spec = report.estimate.spec
    bits = [f"{spec.dtype}", f"batch {spec.batch}"]
    if spec.seq is not None:
        bits.append(f"{spec.seq:,} tokens")
    return html.escape(", ".join(bits))


def _linkify(text: str) -> str:
    """Escape ``text`` and turn its http(s) addresses into links."""
    words = []
    for word in text.split(" "):
        stripped = word.rstrip(").,;")
        if stripped.startswith(("http://", "https://")):
            tail = word[len(stripped) :]
            url = html.escape(stripped, quote=True)
            words.append(f"<a href='{url}'>{html.escape(stripped)}</a>{html.escape(tail)}")
        else:
            words.append(html.escape(word))
    return " ".join(words)


def _combo() -> QComboBox:
    """A combo box whose width does not grow with its longest item."""
    combo = QComboBox()
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(12)
    combo.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    return combo


def _number_spin(
    minimum: float,
    maximum: float,
    decimals: int,
    step: float,
    suffix: str = "",
    value: float | None = None,
) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(minimum, maximum)
    spin.setDecimals(decimals)
    spin.setSingleStep(step)
    spin.setSuffix(suffix)
    if value is not None:
        spin.setValue(value)
    return spin


def _money_spin(
    minimum: float,
    maximum: float,
    decimals: int,
    step: float,
    suffix: str = "",
    value: float | None = None,
) -> QDoubleSpinBox:
    spin = _number_spin(minimum, maximum, decimals, step, suffix, value)
    spin.setPrefix("$")
    spin.setGroupSeparatorShown(True)
    return spin


def _error_label() -> QLabel:
    """A bold red line for bad input, hidden until there is something to say."""
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {_ERROR_COLOR}; font-weight: bold;")
    label.hide()
    return label


def _note_label() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(placeholder-text); font-size: small;")
    return label
