"""The Plan tab's "Cloud or buy?" page: buying a GPU against renting it, month by month."""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.prices import STALE_AFTER_MONTHS, price_kind_label
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.cost import (
    DEFAULT_HOURS_PER_DAY,
    DEFAULT_KWH_PRICE_USD,
    DEFAULT_UTILISATION,
    CostInputs,
    CostResult,
    catalog_cost_figures,
    compute_cost,
)
from gpudesk.ui import theme
from gpudesk.ui.plan import forms
from gpudesk.ui.state import AppState
from gpudesk.workload.errors import PlanningInputError

_DEFAULT_COST_GPU = "rtx-4090"
_DEFAULT_CLOUD_HOURLY_USD = 1.0
BUY_COLOR = "#0072B2"
BREAK_EVEN_COLOR = "#2e7d32"
CLOUD_COLOR = "#D55E00"


class DollarAxis(pg.AxisItem):  # type: ignore[misc]
    """Ticks as money: "$12,000", not "12000"."""

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [f"${value * scale:,.0f}" for value in values]


class CostPage(QWidget):
    """Cloud or buy: the form (filled from the catalog, editable), the verdict and the curves.

    Signals:
        cost_updated(object): a new :class:`CostResult`, or None when the input is invalid.
    """

    cost_updated = Signal(object)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.cost_result: CostResult | None = None
        self.cost_error: str | None = None
        self._timer = forms.update_timer(self, self.recompute_now)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._build_page())
        self._populate_cost_gpus()
        theme.notifier().changed.connect(self._restyle)
        self._restyle()

    def schedule_update(self) -> None:
        """Recompute after the burst of edits settles."""
        self._timer.start()

    def recompute_now(self) -> None:
        self._timer.stop()
        self._recompute_cost()

    def select_gpu(self, gpu_id: str) -> None:
        """Choose ``gpu_id`` (when the catalog has it) and fill its figures in."""
        index = self.cost_gpu.findData(gpu_id)
        if index >= 0:
            self.cost_gpu.setCurrentIndex(index)

    def refresh_catalog(self) -> None:
        """Re-list the GPUs after a catalog change, keeping the chosen one if still there."""
        self._populate_cost_gpus()

    def _build_page(self) -> QSplitter:
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setChildrenCollapsible(False)

        box = QGroupBox("Buy or rent")
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.cost_gpu = forms.combo()
        self.cost_gpu.currentIndexChanged.connect(self._on_cost_gpu_changed)
        form.addRow("GPU", self.cost_gpu)
        self.count_spin = QSpinBox()
        self.count_spin.setRange(1, 64)
        self.count_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Number of GPUs", self.count_spin)
        self.purchase_spin = forms.money_spin(0, 1_000_000, 2, 50)
        self.purchase_spin.valueChanged.connect(self._purchase_edited)
        self.purchase_stale = False
        self.purchase_date: object = None
        form.addRow("Purchase price (each)", self.purchase_spin)
        self.purchase_note = forms.note_label()
        form.addRow("", self.purchase_note)
        self.tdp_spin = forms.number_spin(0, 5000, 0, 1, " W")
        self.tdp_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Power (TDP, each)", self.tdp_spin)
        self.cloud_spin = forms.money_spin(
            0, 1000, 3, 0.05, " /GPU-hour", _DEFAULT_CLOUD_HOURLY_USD
        )
        self.cloud_spin.valueChanged.connect(self.schedule_update)
        self.cloud_spin.valueChanged.connect(self._cloud_edited)
        #: True while the cloud price is the placeholder, not a catalog or user figure.
        self.cloud_assumed = True
        form.addRow("Cloud price", self.cloud_spin)
        self.cloud_note = forms.note_label()
        form.addRow("", self.cloud_note)
        self.hours_spin = forms.number_spin(0, 24, 1, 1, " h/day", DEFAULT_HOURS_PER_DAY)
        self.hours_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Running", self.hours_spin)
        self.util_spin = forms.number_spin(0, 100, 0, 5, " % of TDP", DEFAULT_UTILISATION * 100)
        self.util_spin.setToolTip("Average power draw while running, as a share of TDP")
        self.util_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Utilisation", self.util_spin)
        self.kwh_spin = forms.money_spin(0, 10, 3, 0.01, " /kWh", DEFAULT_KWH_PRICE_USD)
        self.kwh_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Electricity", self.kwh_spin)
        self.years_spin = forms.number_spin(0, 20, 1, 0.5, " years", 3)
        self.years_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Horizon", self.years_spin)
        self.resale_spin = forms.money_spin(0, 1_000_000, 2, 50)
        self.resale_spin.setToolTip("What you expect to sell each GPU for; 0 to ignore")
        self.resale_spin.valueChanged.connect(self.schedule_update)
        form.addRow("Resale value (each)", self.resale_spin)
        self.cost_error_label = forms.error_label()
        form.addRow(self.cost_error_label)
        not_counted = forms.note_label()
        not_counted.setText(
            "GPU only: the host machine, cooling, space and admin time, and cloud storage and "
            "egress, are not counted."
        )
        form.addRow(not_counted)
        scroll = forms.form_scroll(box)
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
        self.cost_plot = pg.PlotWidget(axisItems={"left": DollarAxis("left")})
        self.cost_plot.setMenuEnabled(False)
        self.cost_plot.showGrid(x=True, y=True, alpha=0.15)
        plot_item = self.cost_plot.getPlotItem()
        plot_item.setLabel("bottom", "Months")
        plot_item.setLabel("left", "Cumulative cost")
        theme.follow_theme(self.cost_plot)
        # The key sits above the chart: inside it, it covered the Buy line of an
        # expensive GPU (which starts high at the left).
        self.cost_key = QLabel()
        self.cost_key.setObjectName("costKey")
        self.cost_key.setTextFormat(Qt.TextFormat.RichText)
        right_layout.addWidget(self.cost_key)
        self._set_cost_key(with_resale=False)
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
        figures = catalog_cost_figures(entry)
        for spin in (self.purchase_spin, self.tdp_spin, self.cloud_spin):
            spin.blockSignals(True)
        if figures.purchase_usd is not None:
            self.purchase_spin.setValue(figures.purchase_usd)
            kind = price_kind_label(figures.price_kind, system=figures.price_system)
            if figures.price_stale:
                # A sign and words, not a colour alone.
                self.purchase_note.setText(
                    f"⚠ Catalog: {kind}, {figures.price_date}: over {STALE_AFTER_MONTHS} "
                    "months old, may be out of date. Enter today's price."
                )
            else:
                self.purchase_note.setText(f"Catalog: {kind}, {figures.price_date}. Edit freely.")
        else:
            self.purchase_spin.setValue(0)
            self.purchase_note.setText("The catalog has no price for this GPU: enter one.")
        #: the purchase price is the catalog's and over a year old (until edited)
        self.purchase_stale = figures.purchase_usd is not None and figures.price_stale
        self.purchase_date = figures.price_date
        self.tdp_spin.setValue(figures.tdp_w if figures.tdp_w is not None else 0)
        rate = figures.cloud_rate
        self.cloud_assumed = rate is None
        if rate is not None:
            self.cloud_spin.setValue(rate.usd_per_gpu_hour)
            stale = " (may be out of date)" if figures.cloud_rate_stale else ""
            self.cloud_note.setText(
                f"Lowest on-demand rate in the catalog: {rate.provider}, "
                f"{rate.date or 'undated'}{stale}. Use your provider's price."
            )
        else:
            self.cloud_note.setText(
                "The catalog has no cloud price for this GPU: the price shown is an "
                "assumption until you enter your provider's."
            )
        for spin in (self.purchase_spin, self.tdp_spin, self.cloud_spin):
            spin.blockSignals(False)

    def control_words(self, exc: PlanningInputError) -> str:
        """The cost core's typed error, worded with this page's controls and their text."""
        return forms.control_words(
            exc,
            {
                "purchase_usd": ("Purchase price (each)", self.purchase_spin),
                "tdp_w": ("Power (TDP, each)", self.tdp_spin),
                "cloud_hourly_usd": ("Cloud price", self.cloud_spin),
                "count": ("Number of GPUs", self.count_spin),
                "hours_per_day": ("Running", self.hours_spin),
                "utilisation": ("Utilisation", self.util_spin),
                "kwh_price_usd": ("Electricity", self.kwh_spin),
                "years": ("Horizon", self.years_spin),
                "resale_usd": ("Resale value (each)", self.resale_spin),
            },
        )

    def _cloud_edited(self) -> None:
        # Programmatic fills block the spin's signals: this is the user typing.
        self.cloud_assumed = False

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
            self._show_cost_error(self.control_words(exc))
            return
        self.cost_result = result
        self.cost_error = None
        self.cost_error_label.hide()
        self._show_cost(result)
        self.cost_updated.emit(result)

    def _show_cost_error(self, message: str) -> None:
        self.cost_result = None
        self.cost_error = message
        forms.show_error(self.cost_error_label, message)
        self.verdict_label.setText("")
        self.cost_formulas.setText("")
        for curve in (self.buy_curve, self.buy_net_curve, self.cloud_curve):
            curve.setData([], [])
        self.break_even_line.hide()
        self.break_even_point.setData([], [])
        self.cost_updated.emit(None)

    def _show_cost(self, result: CostResult) -> None:
        inputs = result.inputs
        name = html.escape(inputs.gpu_name) + (f" × {inputs.count}" if inputs.count > 1 else "")
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
        if self.cloud_assumed:
            verdict = (
                f"with an assumed ${inputs.cloud_hourly_usd:,.2f} per GPU-hour (no catalog "
                f"price), {verdict[0].lower()}{verdict[1:]}"
            )
        stale = (
            f"<br>⚠ With the catalog's purchase price of {self.purchase_date}, over "
            f"{STALE_AFTER_MONTHS} months old: it may be out of date."
            if self.purchase_stale
            else ""
        )
        self.verdict_label.setText(
            f"<span style='font-size:14pt'>{name}: {verdict}</span><br>"
            f"Over {horizon}: buy ${result.buy_total_usd:,.0f} (net of resale) vs "
            f"cloud ${result.cloud_total_usd:,.0f}.{stale}"
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
        self._set_cost_key(with_resale=result.resale_total_usd > 0)
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

    def _purchase_edited(self) -> None:
        """The user's own price: no longer the catalog's old one."""
        if self.purchase_stale:
            self.purchase_stale = False
            self.purchase_note.setText("Your price.")
        self.schedule_update()

    def _set_cost_key(self, *, with_resale: bool) -> None:
        """The chart's key in words with line samples in the lines' colours."""
        parts = [
            f"<span style='color:{BUY_COLOR}'>━━</span> Buy",
            f"<span style='color:{CLOUD_COLOR}'>━━</span> Cloud",
        ]
        if with_resale:
            parts.insert(1, f"<span style='color:{BUY_COLOR}'>╍╍</span> Buy, net of resale")
        self.cost_key.setText(" &nbsp;&nbsp; ".join(parts))

    def _restyle(self, *_args: object) -> None:
        """Marker and legend colors that stay legible on the light and the dark theme."""

        green = QColor("#66bb6a") if theme.is_dark() else QColor(BREAK_EVEN_COLOR)
        self.break_even_line.setPen(pg.mkPen(green, width=1.5, style=Qt.PenStyle.DashLine))
        self.break_even_line.label.setColor(green)
        self.break_even_point.setBrush(pg.mkBrush(green))
        self.break_even_point.setPen(pg.mkPen(green))
