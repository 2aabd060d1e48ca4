"""How fast?'s roofline: the fastest GPUs' roofs, where the workload sits on each, and
stars at what the user's own measurements of it reached.

Training has no place on a roofline (its estimate models no bytes per step): it gets
its own chart, tokens/s per GPU and MFU for the table's first GPUs. Where there is no
result, a sentence says why instead of an empty grid: one stack, so nothing below it
jumps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

from gpudesk.compare.axes import log_ticks
from gpudesk.measurements.rows import MeasuredRow
from gpudesk.render.colors import series_color
from gpudesk.speed.estimate import Mode, SpeedEstimate
from gpudesk.speed.text import figure_text
from gpudesk.ui import theme

#: Rows of the roofline chart: the fastest few GPUs of the table.
ROOFLINE_GPUS = 4
#: Bars of the training chart: the table's first GPUs (and the selected one).
TRAIN_GPUS = 10


def training_rows(
    results: Sequence[SpeedEstimate], selected: SpeedEstimate | None
) -> list[tuple[str, float, float]]:
    """(label, tokens/s per GPU, MFU) for the training chart: the table's first
    :data:`TRAIN_GPUS` GPUs in its order, the selected one always among them. MFU is the
    estimate's share of its dense peak (``efficiency``: tokens/s over the peak's bound)."""
    chosen = [item for item in results if item.mode is Mode.TRAIN][:TRAIN_GPUS]
    if selected is not None and selected.mode is Mode.TRAIN and selected not in chosen:
        chosen = [*chosen[: TRAIN_GPUS - 1], selected]
    rows = []
    for item in chosen:
        label = item.name if item.count == 1 else f"{item.name} × {item.count}"
        rows.append((label, training_per_gpu(item), item.efficiency))
    return rows


def training_per_gpu(item: SpeedEstimate) -> float:
    """Tokens/s per GPU as the table's all-GPU figure divided by the count: a calibrated
    row's ``tokens_per_s`` moves with the user's measurement while its
    ``tokens_per_s_per_gpu`` keeps the uncalibrated estimate, so the chart, the table and
    the detail line all read this one figure."""
    return item.tokens_per_s / max(1, item.count)


def no_roofline_text(results: Sequence[SpeedEstimate], error: str | None) -> str:
    """Why there is no roofline to draw, in a sentence."""
    if any(item.mode is Mode.TRAIN for item in results):
        return (
            "No roofline for training: its estimate is compute-bound by construction "
            "(FLOPs per token over the GPUs' dense peak × a fitted utilisation) and "
            "does not model the bytes moved per step, so there is no arithmetic "
            "intensity to place it at. The table ranks the GPUs by that estimate."
        )
    if error:
        return "No roofline: the workload above has a problem to fix first."
    return "The roofline of the fastest GPUs appears here once a workload is estimated."


class RooflineChart(QStackedWidget):
    """The roofline plot, or the note that says why there is none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget()
        self.plot_widget.setMenuEnabled(False)
        self.plot_widget.setMinimumHeight(200)
        plot = self.plot_widget.getPlotItem()
        plot.setLogMode(x=True, y=True)
        plot.setLabel("bottom", "arithmetic intensity (FLOPs per byte read)")
        plot.setLabel("left", "TFLOPS")
        plot.showGrid(x=True, y=True, alpha=0.2)
        # Bottom right, under the roofs: top left it covered the "this workload" line
        # and its label (the workload's intensity sits about a decade from the left edge).
        self.legend = plot.addLegend(offset=(-10, -10))
        theme.follow_theme(self.plot_widget)
        self.note = QLabel()
        self.note.setObjectName("rooflineNote")
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setMargin(24)
        self.note.setStyleSheet("color: palette(placeholder-text);")
        # Training has no roofline (no bytes per step): its own chart, tokens/s per GPU
        # and MFU for the table's first GPUs, instead of a paragraph in a blank frame.
        self.train_widget = pg.PlotWidget()
        self.train_widget.setMenuEnabled(False)
        self.train_widget.setMinimumHeight(200)
        theme.follow_theme(self.train_widget)
        #: the training chart's rows as drawn: (label, tokens/s per GPU, MFU)
        self.train_rows: list[tuple[str, float, float]] = []
        self.addWidget(self.plot_widget)
        self.addWidget(self.note)
        self.addWidget(self.train_widget)
        self.setMinimumHeight(200)
        #: the TFLOPS of the measured stars, by GPU id
        self.measured_points: dict[str, list[float]] = {}
        #: the dashed "this workload" line, when one is drawn
        self.workload_line: pg.InfiniteLine | None = None

    def draw(
        self,
        results: Sequence[SpeedEstimate],
        measured: SpeedEstimate | None,
        selected: SpeedEstimate | None,
        own_rows: Callable[[SpeedEstimate], list[MeasuredRow]],
        note: str,
    ) -> None:
        """Draw the fastest GPUs of ``results`` (``measured``, this machine's benchmark,
        first; ``selected`` always), stars from ``own_rows``, or ``note`` when none fit."""
        if any(item.mode is Mode.TRAIN for item in results):
            self._draw_training(results, selected, note)
            return
        plot = self.plot_widget.getPlotItem()
        plot.clear()
        self.measured_points = {}
        self.workload_line = None
        if self.legend is not None:
            self.legend.clear()
            # pyqtgraph's default legend grey is faint on both themes
            self.legend.setLabelTextColor(theme.plot_colors()[1])
        shown = ([measured] if measured else []) + list(results)
        shown = [item for item in shown if item.roofline.flops_per_byte > 0][:ROOFLINE_GPUS]
        if selected is not None and selected not in shown and selected.roofline.flops_per_byte:
            shown = [*shown[: ROOFLINE_GPUS - 1], selected]  # the selected GPU always shows
        if not shown:
            self.note.setText(note)
            self.setCurrentWidget(self.note)
            return
        self.setCurrentWidget(self.plot_widget)
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
            name = f"{item.name} × {item.count}" + (" (measured)" if item is measured else "")
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
            if item is not measured:
                self._mark_measured(plot, item, own_rows(item), achieved, color)
        if max(intensities) > min(intensities) * 1.01:
            return  # serving: each GPU runs its own number of sequences, its own point
        line = pg.InfiniteLine(
            pos=math.log10(intensities[0]),
            angle=90,
            pen=pg.mkPen("#888888", width=1, style=Qt.PenStyle.DashLine),
            label="this workload",
            # #888888 was 3.5:1 on the light chart; redrawn on a theme switch
            labelOpts={"position": 0.9, "color": theme.muted_color()},
        )
        self.workload_line = line
        plot.addItem(line)

    def _draw_training(
        self, results: Sequence[SpeedEstimate], selected: SpeedEstimate | None, note: str
    ) -> None:
        """Horizontal bars of tokens/s per GPU, best on top, each with its MFU."""
        rows = training_rows(results, selected)
        self.train_rows = rows
        if not rows:
            self.note.setText(note)
            self.setCurrentWidget(self.note)
            return
        self.setCurrentWidget(self.train_widget)
        plot = self.train_widget.getPlotItem()
        plot.clear()
        plot.setTitle("Training: tokens/s per GPU (MFU: share of the dense peak)")
        plot.setLabel("bottom", "tokens/s per GPU")
        ys = [len(rows) - 1 - index for index in range(len(rows))]
        values = [per_gpu for _, per_gpu, _ in rows]
        plot.addItem(
            pg.BarGraphItem(
                x0=0, y=ys, height=0.6, width=values, brush=pg.mkBrush(series_color(0)), pen=None
            )
        )
        top = max(values) or 1.0
        for y, (_, per_gpu, mfu) in zip(ys, rows, strict=True):
            text = pg.TextItem(
                f"{figure_text(per_gpu)} · {mfu:.0%} MFU",
                color=theme.muted_color(),
                anchor=(0, 0.5),
            )
            text.setPos(per_gpu + top * 0.01, y)
            plot.addItem(text)
        left = plot.getAxis("left")
        left.setTicks([[(y, label) for y, (label, _, _) in zip(ys, rows, strict=True)]])
        longest = max(self.fontMetrics().horizontalAdvance(label) for label, _, _ in rows)
        left.setWidth(longest + 16)
        plot.setXRange(0, top * 1.3, padding=0)
        plot.setYRange(-0.6, len(rows) - 0.4, padding=0)

    def _mark_measured(
        self,
        plot: pg.PlotItem,
        item: SpeedEstimate,
        rows: list[MeasuredRow],
        achieved: float,
        color: object,
    ) -> None:
        """Stars at the TFLOPS the user's measurements of this workload reached: at the
        same arithmetic intensity, TFLOPS scale with tokens/s."""
        own = [row for row in rows if row.same_workload]
        if not own or item.tokens_per_s <= 0:
            return
        ys = [achieved * row.measurement.tokens_per_s / item.tokens_per_s for row in own]
        self.measured_points[item.gpu_id] = ys
        plot.plot(
            [item.roofline.flops_per_byte] * len(ys),
            ys,
            pen=None,
            symbol="star",
            symbolBrush=color,
            symbolPen=pg.mkPen(theme.plot_colors()[1]),
            symbolSize=16,
            name=f"{item.name}: measured ({own[0].date})",
        )
