"""The Compare tab's charts, one tab each: spec radar, price/performance scatter, bars,
and the cloud rates (:class:`~gpudesk.ui.compare_view.CompareView` puts them beside,
below or on a tab of their own next to the table).

Each chart follows :class:`~gpudesk.ui.state.AppState`'s compare selection; its numbers
come from :mod:`gpudesk.compare` and :mod:`gpudesk.render`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QMenu,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
    QWidgetAction,
)

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.rate_book import default_rate_book, rate_summary
from gpudesk.compare.limits import MIN_COMPARED
from gpudesk.compare.radar import (
    MAX_AXES,
    MIN_AXES,
    RADAR_AXES,
    NormalisationChoice,
    Reference,
    Scale,
)
from gpudesk.render.bars import DEFAULT_BAR_KEY, BarChart
from gpudesk.render.colors import gpu_colors
from gpudesk.render.radar import (
    RadarWidget,
    build_radar_normalisation,
    build_radar_series,
)
from gpudesk.render.scatter import DEFAULT_X_KEY, DEFAULT_Y_KEY, ScatterChart
from gpudesk.render.style import ChartStyle
from gpudesk.ui.accessible import copy_chart_text
from gpudesk.ui.compare_widgets import AxisPicker, metric_combo
from gpudesk.ui.price_chart import PriceRangeChart
from gpudesk.ui.state import AppState

#: Scatter and bar metric choices: every numeric figure but the year.
PLOT_KEYS: tuple[str, ...] = tuple(key for key in METRICS if key != "release_year")

#: Settings keys of what the charts keep between starts.
_SAVED = {
    name: f"compare/{name}"
    for name in ("axes", "reference", "scale", "x", "y", "bars", "log_x", "log_y", "tab")
}


def _saved_axes(value: object) -> list[str] | None:
    """A saved radar axis list if it is a JSON list of 5-8 distinct known axes, else None."""
    if not isinstance(value, str) or len(value) > 2000:
        return None
    try:
        axes = json.loads(value)
    except ValueError:
        return None
    if not isinstance(axes, list) or not all(isinstance(key, str) for key in axes):
        return None
    if len(set(axes)) != len(axes) or not set(axes) <= set(RADAR_AXES):
        return None
    return axes if MIN_AXES <= len(axes) <= MAX_AXES else None


#: The choices each saved combo may hold, and the chart tabs by title.
_COMBO_CHOICES: dict[str, frozenset[str]] = {
    "reference": frozenset(item.value for item in Reference),
    "scale": frozenset(item.value for item in Scale),
    "x": frozenset(PLOT_KEYS),
    "y": frozenset(PLOT_KEYS),
    "bars": frozenset(PLOT_KEYS),
}
CHART_TABS = ("Radar", "Price / performance", "Bars", "Cloud rates")


def saved_choices(values: dict[str, object]) -> dict[str, object]:
    """The saved chart choices that are one of the choices on offer, by name; anything
    else (a hand-edited or crafted file, a figure since renamed) is left out, so that
    control keeps its default."""
    choices: dict[str, object] = {}
    axes = _saved_axes(values.get("axes"))
    if axes is not None:
        choices["axes"] = axes
    for name, allowed in _COMBO_CHOICES.items():
        value = values.get(name)
        if isinstance(value, str) and value in allowed:
            choices[name] = value
    for name in ("log_x", "log_y"):
        value = values.get(name)
        if value in ("true", "false") or isinstance(value, bool):
            choices[name] = value in ("true", True)
    tab = values.get("tab")
    if isinstance(tab, str) and tab in CHART_TABS:
        choices["tab"] = tab
    return choices


#: What a chart's "Export PNG…/SVG…" asks for: (chart, its name, "png" or "svg").
ExportRequest = Callable[[QGraphicsView, str, str], None]


class CompareCharts(QTabWidget):
    """Radar, Price / performance, Bars and Cloud rates, drawn from ``state``."""

    def __init__(
        self, state: AppState, export: ExportRequest, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state = state
        self._export = export
        self._dark = False
        self.addTab(self._build_radar_panel(), "Radar")
        self.addTab(self._build_scatter_panel(), "Price / performance")
        self.addTab(self._build_bars_panel(), "Bars")
        self.price_chart = PriceRangeChart()
        self.price_chart.setAccessibleName("Cloud rates of the compared GPUs")
        self.addTab(self.price_chart, "Cloud rates")

    # construction ----------------------------------------------------------
    def _build_radar_panel(self) -> QWidget:
        """The radar under one row of controls: beside the chart, the axis list took about
        360 px of the panel and left a 330 px radar at 1920 px."""
        panel = QWidget()
        layout = QVBoxLayout(panel)
        controls = QHBoxLayout()
        self.axis_picker = AxisPicker()
        self.axis_picker.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.axis_picker.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.axis_picker.setFixedWidth(self.axis_picker.sizeHintForColumn(0) + 12)
        rows = self.axis_picker.count()
        self.axis_picker.setFixedHeight(
            self.axis_picker.sizeHintForRow(0) * rows + 2 * self.axis_picker.frameWidth() + 4
        )
        self.axis_picker.axes_changed.connect(self.update_radar)
        self.axis_picker.axes_changed.connect(self._name_axes_button)
        # The list opens from a button: it is needed now and then, the chart all the time.
        self.axes_button = QToolButton()
        self.axes_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.axes_button.setToolTip(f"Pick {MIN_AXES} to {MAX_AXES} figures for the radar's axes")
        axes_menu = QMenu(self.axes_button)
        picker_action = QWidgetAction(axes_menu)
        picker_action.setDefaultWidget(self.axis_picker)
        axes_menu.addAction(picker_action)
        self.axes_button.setMenu(axes_menu)
        self._name_axes_button()
        controls.addWidget(self.axes_button)
        controls.addSpacing(12)
        self.reference_combo = QComboBox()
        self.reference_combo.addItem("Selection maximum", Reference.SELECTION.value)
        self.reference_combo.addItem("Catalog maximum", Reference.CATALOG.value)
        self.reference_combo.setCurrentIndex(
            self.reference_combo.findData(NormalisationChoice().reference.value)
        )
        self.reference_combo.setToolTip("What the outer ring means on every axis")
        self.reference_combo.currentIndexChanged.connect(self.update_radar)
        controls.addWidget(QLabel("Outer ring:"))
        controls.addWidget(self.reference_combo)
        controls.addSpacing(12)
        self.scale_combo = QComboBox()
        self.scale_combo.addItem("Linear", Scale.LINEAR.value)
        self.scale_combo.addItem("Logarithmic", Scale.LOG.value)
        self.scale_combo.setToolTip(
            "Logarithmic spreads figures spanning orders of magnitude (FP64, prices)"
        )
        self.scale_combo.currentIndexChanged.connect(self.update_radar)
        controls.addWidget(QLabel("Scale:"))
        controls.addWidget(self.scale_combo)
        controls.addStretch(1)
        layout.addLayout(controls)
        self.radar = RadarWidget()
        self.radar.setAccessibleName("Spec radar of the compared GPUs")
        self.radar.setToolTip(
            "Missing figures are gaps (dashed), never zero. Hover a point for its value. "
            "Right-click to copy the data as text or export the chart."
        )
        self.axis_picker.setAccessibleName("Radar axes (5 to 8)")
        self._add_export_menu(self.radar, "radar")
        layout.addWidget(self.radar, 1)
        return panel

    def _name_axes_button(self) -> None:
        count = len(self.axis_picker.checked_axes())
        self.axes_button.setText(f"Axes ({count} of {self.axis_picker.count()})")
        self.axes_button.setAccessibleName(f"Radar axes: {count} chosen")

    def _build_scatter_panel(self) -> QWidget:
        panel = QWidget()
        layout = QVBoxLayout(panel)
        controls = QHBoxLayout()
        self.x_combo = metric_combo(PLOT_KEYS, DEFAULT_X_KEY)
        self.y_combo = metric_combo(PLOT_KEYS, DEFAULT_Y_KEY)
        self.log_x_check = QCheckBox("log")
        self.log_y_check = QCheckBox("log")
        # "log" twice says nothing to a screen reader: which axis.
        self.log_x_check.setAccessibleName("Logarithmic X axis")
        self.log_y_check.setAccessibleName("Logarithmic Y axis")
        self.x_combo.setAccessibleName("X axis figure")
        self.y_combo.setAccessibleName("Y axis figure")
        controls.addWidget(QLabel("X:"))
        controls.addWidget(self.x_combo, 1)
        controls.addWidget(self.log_x_check)
        controls.addSpacing(12)
        controls.addWidget(QLabel("Y:"))
        controls.addWidget(self.y_combo, 1)
        controls.addWidget(self.log_y_check)
        for combo in (self.x_combo, self.y_combo):
            combo.currentIndexChanged.connect(self.update_scatter)
        for check in (self.log_x_check, self.log_y_check):
            check.toggled.connect(self.update_scatter)
        layout.addLayout(controls)
        self.scatter = ScatterChart()
        self.scatter.setAccessibleName("Price / performance scatter")
        self._add_export_menu(self.scatter, "scatter")
        layout.addWidget(self.scatter, 1)
        self.scatter_note = QLabel()
        self.scatter_note.setTextFormat(Qt.TextFormat.PlainText)
        self.scatter_note.setWordWrap(True)
        layout.addWidget(self.scatter_note)
        return panel

    def _build_bars_panel(self) -> QWidget:
        panel = QWidget()
        layout = QVBoxLayout(panel)
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Figure:"))
        self.bar_combo = metric_combo(PLOT_KEYS, DEFAULT_BAR_KEY)
        self.bar_combo.setAccessibleName("Figure the bars show")
        self.bar_combo.currentIndexChanged.connect(self.update_bars)
        controls.addWidget(self.bar_combo, 1)
        controls.addStretch(1)
        layout.addLayout(controls)
        self.bars = BarChart()
        self.bars.setAccessibleName("Bars of one figure")
        self._add_export_menu(self.bars, "bars")
        layout.addWidget(self.bars, 1)
        return panel

    def _add_export_menu(self, view: QGraphicsView, name: str) -> None:
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

        def show_menu(pos: QPoint) -> None:
            menu = QMenu(view)
            menu.addAction("Copy data as text", lambda: copy_chart_text(view))
            menu.addAction("Export PNG…", lambda: self._export(view, name, "png"))
            menu.addAction("Export SVG…", lambda: self._export(view, name, "svg"))
            menu.exec(view.mapToGlobal(pos))

        view.customContextMenuRequested.connect(show_menu)

    # settings --------------------------------------------------------------
    def save_settings(self, settings: QSettings) -> None:
        """Keep the radar's axes, ring and scale, the scatter's figures and log toggles,
        the bars' figure and the chart tab for the next start."""
        settings.setValue(_SAVED["axes"], json.dumps(self.axis_picker.checked_axes()))
        settings.setValue(_SAVED["reference"], str(self.reference_combo.currentData()))
        settings.setValue(_SAVED["scale"], str(self.scale_combo.currentData()))
        settings.setValue(_SAVED["x"], str(self.x_combo.currentData()))
        settings.setValue(_SAVED["y"], str(self.y_combo.currentData()))
        settings.setValue(_SAVED["bars"], str(self.bar_combo.currentData()))
        settings.setValue(_SAVED["log_x"], "true" if self.log_x_check.isChecked() else "false")
        settings.setValue(_SAVED["log_y"], "true" if self.log_y_check.isChecked() else "false")
        settings.setValue(_SAVED["tab"], self.tabText(self.currentIndex()))

    def restore_settings(self, settings: QSettings) -> None:
        """Put back what :meth:`save_settings` kept (:func:`saved_choices` judges each)."""
        choices = saved_choices({name: settings.value(key) for name, key in _SAVED.items()})
        axes = choices.get("axes")
        if isinstance(axes, list):
            self.axis_picker.set_checked_axes(axes)
        for name, combo in (
            ("reference", self.reference_combo),
            ("scale", self.scale_combo),
            ("x", self.x_combo),
            ("y", self.y_combo),
            ("bars", self.bar_combo),
        ):
            if name in choices:
                combo.setCurrentIndex(combo.findData(choices[name]))
        for name, check in (("log_x", self.log_x_check), ("log_y", self.log_y_check)):
            if name in choices:
                check.setChecked(choices[name] is True)
        if "tab" in choices:
            titles = [self.tabText(index) for index in range(self.count())]
            self.setCurrentIndex(titles.index(str(choices["tab"])))

    # state -> charts -------------------------------------------------------
    def set_style(self, style: ChartStyle) -> None:
        """Switch every chart to ``style`` (call :meth:`refresh` after)."""
        self._dark = style.dark
        self.radar.set_style(style)
        self.scatter.set_style(style)
        self.bars.set_style(style)
        self.price_chart.set_style(style)

    def refresh(self) -> None:
        self.update_radar()
        self.update_scatter()
        self.update_bars()
        self.update_price_chart()

    def normalisation_choice(self) -> NormalisationChoice:
        return NormalisationChoice(
            Reference(str(self.reference_combo.currentData())),
            Scale(str(self.scale_combo.currentData())),
        )

    def update_radar(self) -> None:
        entries = self.state.compare_entries()
        if len(entries) < MIN_COMPARED:
            return
        axes = self.axis_picker.checked_axes()
        choice = self.normalisation_choice()
        measured = self.state.measured
        self.radar.item.set_data(
            build_radar_series(entries, axes, measured=measured, dark=self._dark),
            axes,
            build_radar_normalisation(choice, axes, self.state.entries(), entries),
            caption=choice.describe().capitalize(),
        )

    def update_scatter(self) -> None:
        entries = self.state.compare_entries()
        if len(entries) < MIN_COMPARED:
            return
        plot = self.scatter.plot
        plot.set_data(
            self.state.entries(),
            entries,
            str(self.x_combo.currentData()),
            str(self.y_combo.currentData()),
            log_x=self.log_x_check.isChecked(),
            log_y=self.log_y_check.isChecked(),
        )
        notes = []
        if plot.frontier_ids:
            notes.append("Dashed line: Pareto frontier (no GPU is better on both axes).")
        else:
            notes.append("No Pareto frontier: one of these figures has no better direction.")
        if plot.stand_ins:
            notes.append(
                "; ".join(f"{name}: {figure} figure" for name, figure in plot.stand_ins.items())
                + " (no FP16 tensor figure listed; as on the radar and the bars)."
            )
        if plot.missing_names:
            notes.append("Not plotted (a figure is n/a): " + ", ".join(plot.missing_names) + ".")
        if plot.bare_module_names:
            notes.append(
                "Off the frontier: "
                + ", ".join(plot.bare_module_names)
                + " (a used module's price, without the baseboard it needs)."
            )
        if plot.bare_module_ids:
            notes.append(
                f"{len(plot.bare_module_ids)} used modules priced without their baseboard "
                "are left out of the grey points and the frontier."
            )
        notes.append("Hover a point for its name and values.")
        self.scatter_note.setText(" ".join(notes))

    def update_price_chart(self) -> None:
        entries = self.state.compare_entries()
        book = default_rate_book()
        self.price_chart.set_data(
            entries,
            [rate_summary(entry) for entry in entries],
            [book.history(entry.id) for entry in entries],
            gpu_colors([entry.id for entry in entries]),
        )

    def update_bars(self) -> None:
        entries = self.state.compare_entries()
        if len(entries) < MIN_COMPARED:
            return
        self.bars.plot.set_data(
            entries, str(self.bar_combo.currentData()), measured=self.state.measured
        )
