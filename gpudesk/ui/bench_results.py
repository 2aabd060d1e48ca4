"""The Benchmark panel's result widgets: the results table model, its "% of peak" bar
delegate, the size-sweep plot and the pane that shows one result with them."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLabel,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gpudesk.bench.peaks import peak_field
from gpudesk.bench.results import UNIT_FOR_TEST, BenchResult, Measurement
from gpudesk.bench.summary import run_summary
from gpudesk.bench.text import format_figure, format_fraction_of_peak, size_label
from gpudesk.catalog.metrics import METRICS
from gpudesk.render.colors import series_color
from gpudesk.render.text import plain_tooltip
from gpudesk.ui import theme
from gpudesk.ui.words import flops_scale

#: Item data role holding a row's fraction of peak (float or None).
FRACTION_ROLE = Qt.ItemDataRole.UserRole + 1


# --- results table ---------------------------------------------------------------------


def peak_label(row: Measurement) -> str | None:
    """Which catalog figure the row is set against: "TF32 tensor, dense" for a TF32 GEMM."""
    if row.peak is None:
        return None
    field = peak_field(row.test, row.dtype)
    metric = METRICS.get(field) if field else None
    return metric.label if metric is not None else None


class ResultsModel(QAbstractTableModel):
    """The rows of one result: a thin adapter over its list of measurements."""

    COLUMNS = ("Test", "Size", "Median", "Min – max", "Unit", "Catalog peak", "% of peak", "Notes")
    PEAK_COLUMN = 5
    PERCENT_COLUMN = 6
    NOTES_COLUMN = 7
    _NUMERIC = frozenset({1, 2, 3, 5})

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Measurement] = []

    def set_rows(self, rows: Sequence[Measurement]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def refresh_colors(self) -> None:
        """Views repaint failed rows in the current theme's error colour."""
        if self.rows:
            last = self.index(len(self.rows) - 1, len(self.COLUMNS) - 1)
            self.dataChanged.emit(self.index(0, 0), last, [Qt.ItemDataRole.ForegroundRole])

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column)
        if role == FRACTION_ROLE and column == self.PERCENT_COLUMN:
            return row.fraction_of_peak
        if role == Qt.ItemDataRole.TextAlignmentRole and column in self._NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(self._tooltip(row))
        if role == Qt.ItemDataRole.ForegroundRole and row.error is not None:
            return QBrush(theme.error_color())
        return None

    def _text(self, row: Measurement, column: int) -> str:
        failed = row.value is None
        # A CPU's GEMM in GFLOPS ("20.0", not "0.020 TFLOPS"), its range and peak alike.
        factor, unit = flops_scale(row.value if row.value is not None else row.peak, row.unit)

        def shown(value: float | None) -> str:
            return format_figure(None if value is None else value * factor)

        match column:
            case 0:
                return row.label
            case 1:
                return size_label(row)
            case 2:
                return "failed" if failed else shown(row.value)
            case 3:
                return "" if failed else f"{shown(row.min)} – {shown(row.max)}"
            case 4:
                return unit
            case 5:
                return shown(row.peak) if row.peak is not None else "n/a"
            case 6:
                # The delegate paints a bar; this text is what copy and accessibility get.
                return format_fraction_of_peak(row.fraction_of_peak)
            case _:
                return row.error or "; ".join(row.notes)

    def _tooltip(self, row: Measurement) -> str:
        lines = [f"{row.label}, {size_label(row)}"]
        if row.repetitions is not None:
            lines.append(
                f"median of {row.repetitions} timed repetitions "
                f"({row.iterations_per_repetition or 1} call(s) each, {row.warmup or 0} warm-up), "
                f"timer: {row.timer}"
            )
        if row.tf32_enabled is not None:
            lines.append(f"TF32 {'enabled' if row.tf32_enabled else 'disabled'}")
        peak_name = peak_label(row)
        if peak_name is not None:
            lines.append(f"compared with the catalog's {peak_name} peak")
        if row.fraction_of_peak is not None and row.fraction_of_peak > 1.05:
            lines.append(
                "above the catalog's peak: boost clocks, FP64 tensor cores, "
                "or a conservative catalog figure"
            )
        if row.error:
            lines.append(f"error: {row.error}")
        lines.extend(row.notes)
        return "\n".join(lines)


def fraction_color(fraction: float) -> QColor:
    """Green from 75% of peak, amber from 50%, red below (GEMM reaches 75–90% when healthy).

    Clearly above 100% is blue: boost clocks, FP64 tensor cores or a low catalog figure.
    """
    if fraction > 1.05:
        return QColor(60, 130, 230, 170)
    if fraction >= 0.75:
        return QColor(46, 160, 67, 170)
    if fraction >= 0.5:
        return QColor(230, 162, 0, 170)
    return QColor(210, 60, 50, 170)


class PercentBarDelegate(QStyledItemDelegate):
    """Paints a fraction of peak as a bar with its percentage; 100% fills the cell."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        fraction = index.data(FRACTION_ROLE)
        if not isinstance(fraction, float):
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget  # type: ignore[attr-defined]
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = opt.rect.adjusted(4, 4, -4, -4)  # type: ignore[attr-defined]
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(opt.palette.alternateBase())  # type: ignore[attr-defined]
        painter.drawRect(rect)
        width = round(rect.width() * max(0.0, min(fraction, 1.0)))
        painter.setBrush(fraction_color(fraction))
        painter.drawRect(QRect(rect.left(), rect.top(), width, rect.height()))
        painter.setPen(QPen(opt.palette.text().color()))  # type: ignore[attr-defined]
        painter.drawText(
            rect.adjusted(4, 0, -4, 0),
            int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
            f"{fraction:.0%}",
        )
        painter.restore()


# --- sweep plot ------------------------------------------------------------------------


class SweepPlot(pg.PlotWidget):  # type: ignore[misc]
    """GEMM throughput against n (log₂ axis), one curve per dtype, with catalog peaks."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        theme.follow_theme(self)
        item = self.getPlotItem()
        item.setLabel("bottom", "Matrix size n")
        item.setLabel("left", "Throughput (TFLOPS)")
        item.getAxis("left").enableAutoSIPrefix(False)
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setMenuEnabled(False)
        item.hideButtons()
        self.legend = item.addLegend(offset=(10, 10))
        self.setMinimumHeight(200)
        #: (dtype, sizes, values) of the curves shown, for tests.
        self.curves: list[tuple[str, list[int], list[float]]] = []
        #: the y axis's unit: TFLOPS, or GFLOPS for figures under 1 TFLOPS (a CPU's)
        self.unit: str = UNIT_FOR_TEST["gemm"]
        self.message = pg.TextItem("", anchor=(0.5, 0.5))
        item.addItem(self.message, ignoreBounds=True)

    def show_sweep(self, rows: Sequence[Measurement], empty_text: str = "") -> None:
        """Plot the sweep rows; ``empty_text`` is shown when there are none."""
        item = self.getPlotItem()
        foreground = theme.plot_colors()[1]
        self.legend.setLabelTextColor(foreground)
        self.message.setColor(foreground)
        for element in list(item.items):
            if element is not self.message:
                item.removeItem(element)
        self.legend.clear()
        self.curves = []
        by_dtype: dict[str, list[Measurement]] = {}
        for row in rows:
            if row.value is not None:
                by_dtype.setdefault(row.dtype, []).append(row)
        sizes = sorted({row.size for group in by_dtype.values() for row in group})
        if len(sizes) == 1:
            # One point is no curve: say where its figure is instead of a lone dot.
            empty_text = (
                f"One matrix size measured (n = {sizes[0]}): the table above has its figure; "
                "a size sweep needs two or more sizes"
            )
            sizes = []
        if not sizes:
            self.message.setText(empty_text or "No size sweep in this run")
            self.message.setPos(0.5, 0.5)
            item.getAxis("bottom").setTicks([[]])
            item.getAxis("left").setTicks([[]])
            item.setXRange(0, 1)
            item.setYRange(0, 1)
            return
        self.message.setText("")
        item.getAxis("left").setTicks(None)
        item.getAxis("bottom").setTicks([[(math.log2(size), str(size)) for size in sizes]])
        # GPUs in TFLOPS, as the table, the catalog and the JSON; a CPU's figures
        # (under 1 TFLOPS) in GFLOPS, where a TFLOPS axis read "5e-05".
        top = max((row.value or 0.0) for group in by_dtype.values() for row in group)
        unit: str = UNIT_FOR_TEST["gemm"]
        scale = 1.0
        if unit == "TFLOPS" and 0 < top < 1.0:
            unit, scale = "GFLOPS", 1000.0
        self.unit = unit
        item.setLabel("left", f"Throughput ({unit})")
        for index, (dtype, group) in enumerate(by_dtype.items()):
            group.sort(key=lambda row: row.size)
            xs = [math.log2(row.size) for row in group]
            ys = [float(row.value or 0.0) * scale for row in group]
            color = series_color(index)
            item.plot(
                xs, ys, pen=pg.mkPen(color, width=2), symbol="o", symbolSize=7,
                symbolBrush=color, symbolPen=None, name=dtype.upper(),
            )  # fmt: skip
            self.curves.append((dtype, [row.size for row in group], ys))
            peak = next((row.peak for row in group if row.peak is not None), None)
            if peak is not None:
                line = pg.InfiniteLine(
                    pos=peak * scale, angle=0,
                    pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine),
                    label=(
                        f"{dtype.upper()} catalog peak {format_figure(peak * scale)} {unit}"
                    ),
                    labelOpts={"position": 0.15, "color": color, "anchors": [(0, 1), (0, 1)]},
                )  # fmt: skip
                item.addItem(line)
        # Throughput starts at zero: a cropped axis would exaggerate the curve.
        highest = max(
            [top] + [row.peak for group in by_dtype.values() for row in group if row.peak]
        )
        item.setYRange(0, highest * scale * 1.08, padding=0)
        item.setXRange(math.log2(sizes[0]) - 0.3, math.log2(sizes[-1]) + 0.3, padding=0)


# --- the results side of the panel ------------------------------------------------------


class ResultsPane(QSplitter):
    """One result: its summary, the table of measurements against peak, the size sweep."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(6, 0, 0, 0)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top_layout.addWidget(self.summary)
        self.model = ResultsModel(self)
        self.table = QTableView()
        self.table.setAccessibleName("Benchmark results: one row per test")
        self.table.setModel(self.model)
        self.table.setItemDelegateForColumn(
            ResultsModel.PERCENT_COLUMN, PercentBarDelegate(self.table)
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ResultsModel.PERCENT_COLUMN, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(ResultsModel.PERCENT_COLUMN, 150)
        header.setStretchLastSection(True)
        top_layout.addWidget(self.table, 1)
        self.addWidget(top)
        self.sweep_plot = SweepPlot()
        self.addWidget(self.sweep_plot)
        self.setStretchFactor(0, 1)
        self.setStretchFactor(1, 1)
        self.setSizes([470, 390])
        self._result: BenchResult | None = None
        theme.notifier().changed.connect(self._on_theme_changed)

    def _on_theme_changed(self, *_args: object) -> None:
        """The summary's and the table's error text take the new theme's colour."""
        if self._result is not None:
            self.summary.setText(summary_html(self._result))
        self.model.refresh_colors()

    def show_result(self, result: BenchResult | None) -> None:
        """Fill the summary, table and sweep plot from one result (None clears them)."""
        self._result = result
        if result is None:
            self.summary.setText(
                "Run the benchmark to measure this machine, or pick a past run in the history."
            )
            self.model.set_rows([])
            self.sweep_plot.show_sweep(
                [], "Run the benchmark to see GEMM throughput against matrix size"
            )
            return
        self.summary.setText(summary_html(result))
        self.model.set_rows(result.results)
        self._hide_empty_columns()
        self.sweep_plot.show_sweep(result.sweep)

    def _hide_empty_columns(self) -> None:
        """A CPU run has no catalog peak and few notes: hide columns that are empty in every row."""
        for column in (
            ResultsModel.PEAK_COLUMN,
            ResultsModel.PERCENT_COLUMN,
            ResultsModel.NOTES_COLUMN,
        ):
            texts = {self.model._text(row, column) for row in self.model.rows} - {"", "n/a"}
            self.table.setColumnHidden(column, bool(self.model.rows) and not texts)


def summary_html(result: BenchResult) -> str:
    """Rich text of :func:`gpudesk.bench.summary.run_summary`: device and backend, notes last."""
    lines: list[str] = []
    for line in run_summary(result):
        text = html.escape(line.text)
        if line.key == "device":
            lines.append(f"<b>{text}</b>")
        elif line.key == "backend":
            lines[-1] += f" — {text}"
        elif line.key == "error":
            color = theme.error_color().name()
            lines.append(f"<span style='color:{color}'><b>Failed:</b> {text}</span>")
        else:
            lines.append(f"{html.escape(line.label)}: {text}")
    lines.extend(f"Note: {html.escape(note)}" for note in result.notes)
    return "<br>".join(lines)
