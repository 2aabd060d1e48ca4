"""The live monitor: every device's current readings, and five charts over 5 minutes.

The readings come from :mod:`gpudesk.telemetry` (:class:`~gpudesk.telemetry.live.LiveSampler`),
the code ``gpudesk exporter`` and ``gpudesk monitor`` read with, so the table
(:mod:`gpudesk.ui.monitor_readings`) shows the same fields for every vendor:
utilisation, memory, temperature, power and limit, clock, fan, PCIe link,
energy and health counters. The charts plot utilisation, memory, temperature,
power and the graphics clock of the physical GPUs with live figures.

Sampling runs off the GUI thread: each tick hands one
:meth:`~gpudesk.telemetry.live.LiveSampler.sample` call to a
:class:`~gpudesk.ui.worker.TaskWorker`, and a tick is skipped while the last
one is still running (a slow driver never queues work up). Plots redraw only
while the panel is visible.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gpudesk.hardware.models import GpuSnapshot
from gpudesk.hardware.monitor import (
    DEFAULT_CAPACITY,
    MONITOR_METRICS,
    MonitorHistory,
    MonitorMetric,
    MonitorSample,
)
from gpudesk.hardware.nvml import Nvml
from gpudesk.progress import Progress
from gpudesk.render.style import ChartStyle, chart_font, chart_series_color, chart_style
from gpudesk.telemetry.live import LiveSampler
from gpudesk.telemetry.readings import DeviceReading
from gpudesk.ui import theme

# READING_COLUMNS and reading_cells stay importable from here (tests import them).
from gpudesk.ui.monitor_readings import (
    READING_COLUMNS as READING_COLUMNS,
    ReadingsTable,
    reading_cells as reading_cells,
)
from gpudesk.ui.worker import TaskWorker

SAMPLE_INTERVAL_MS = 1000


@dataclass(frozen=True, slots=True)
class _Display:
    """How one metric is shown: its unit on screen and the factor from the sampled unit."""

    unit: str
    scale: float = 1.0
    decimals: int = 0
    fixed_range: tuple[float, float] | None = None
    #: Auto-ranged axes span at least this much, so sensor noise (±0.4 °C)
    #: is not blown up to fill the plot.
    min_span: float = 0.0


_DISPLAY: dict[str, _Display] = {
    "utilization_gpu_percent": _Display("%", fixed_range=(0.0, 100.0)),
    "memory_used_mib": _Display("GiB", scale=1 / 1024, decimals=1),
    "temperature_c": _Display("°C", min_span=10.0),
    "power_draw_w": _Display("W", decimals=1, min_span=20.0),
    "sm_clock_mhz": _Display("MHz", min_span=200.0),
}
#: The window starts this wide and grows with the history to its full 5 minutes.
MIN_WINDOW_S = 30
NO_DATA_TEXT = "no data: not reported for this device"


def device_color(position: int, dark: bool) -> QColor:
    """The color of the ``position``-th physical GPU of this machine."""
    return chart_series_color(position, dark)


class MonitorPanel(QWidget):
    """Live charts for the physical GPUs of a detection result.

    Signals:
        sampled(): a sample was added to the history.
        device_lost(str): the device with this UUID stopped answering.
    """

    sampled = Signal()
    device_lost = Signal(str)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        interval_ms: int = SAMPLE_INTERVAL_MS,
        capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        super().__init__(parent)
        self.history = MonitorHistory(capacity)
        #: The newest sample, for views that show current values.
        self.last_sample: MonitorSample | None = None
        self._monitor: LiveSampler | None = None
        self._generation = 0
        self._devices: list[GpuSnapshot] = []
        self._worker: TaskWorker | None = None
        self._paused = False
        self._closed = False
        self._reported_lost: set[str] = set()
        self._style: ChartStyle = chart_style(theme.is_dark())
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.sample_now)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        title = QLabel("<b>Live monitor</b>")
        bar.addWidget(title)
        self.status_label = QLabel("")
        self.status_label.setObjectName("monitorStatus")
        bar.addWidget(self.status_label, 1)
        self.pause_button = QPushButton("Pause")
        self.pause_button.setToolTip("Stop or restart sampling (the history is kept)")
        self.pause_button.clicked.connect(self.toggle_pause)
        bar.addWidget(self.pause_button)
        layout.addLayout(bar)
        self.legend = QLabel("")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        layout.addWidget(self.legend)
        self.readings_table = ReadingsTable()
        layout.addWidget(self.readings_table)
        #: Every device's newest reading (all vendors, MIG instances too).
        self.last_readings: tuple[DeviceReading, ...] = ()
        self.empty_label = QLabel("No GPU to monitor.")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setStyleSheet("color: palette(mid); padding: 24px;")
        layout.addWidget(self.empty_label)

        self.plots: dict[str, pg.PlotWidget] = {}
        self._curves: dict[tuple[str, str], pg.PlotCurveItem] = {}
        self._no_data: dict[str, pg.TextItem] = {}
        #: Metrics whose axis runs 0..capacity (memory total, power limit).
        self._capacity_keys: set[str] = set()
        self._plot_box = QWidget()
        plots_layout = QVBoxLayout(self._plot_box)
        plots_layout.setContentsMargins(0, 0, 0, 0)
        plots_layout.setSpacing(2)
        first: pg.PlotWidget | None = None
        for position, metric in enumerate(MONITOR_METRICS):
            plot = self._make_plot(metric, last=position == len(MONITOR_METRICS) - 1)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)  # one shared time axis
            self.plots[metric.key] = plot
            plots_layout.addWidget(plot, 1)
        layout.addWidget(self._plot_box, 1)
        self._plot_box.hide()

        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        theme.notifier().changed.connect(self._restyle)
        self._update_status()

    # -- set-up -------------------------------------------------------------------

    def _make_plot(self, metric: MonitorMetric, *, last: bool) -> pg.PlotWidget:
        style = self._style
        display = _DISPLAY[metric.key]
        plot = pg.PlotWidget(background=style.background)
        theme.follow_theme(plot)  # background and axes follow light/dark
        plot.setMinimumHeight(90)
        item = plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=False, y=False)
        # No grid: its repaints cost 3-4x the curves (tests/benchmarks/monitor_tick.py).
        item.setXRange(-(self.history.capacity - 1), 0, padding=0)
        if display.fixed_range is not None:
            item.setYRange(*display.fixed_range, padding=0.02)
        else:
            item.enableAutoRange(axis="y")
        font = chart_font(11)
        for name in ("left", "bottom"):
            item.getAxis(name).setStyle(tickFont=font)
        item.getAxis("left").setWidth(48)
        if last:
            item.setLabel("bottom", "seconds ago")
        else:
            item.getAxis("bottom").setStyle(showValues=False)
        item.setTitle(self._title(metric, ""), color=style.text.name(), size="9pt")
        no_data = pg.TextItem(NO_DATA_TEXT, color=theme.muted_color(), anchor=(0.5, 0.5))
        no_data.setVisible(False)
        item.addItem(no_data, ignoreBounds=True)
        self._no_data[metric.key] = no_data
        return plot

    @staticmethod
    def _title(metric: MonitorMetric, latest: str) -> str:
        unit = _DISPLAY[metric.key].unit
        text = f"{metric.label} ({unit})"
        return f"{text}   {latest}" if latest else text

    def set_devices(
        self, nvml: Nvml, devices: Sequence[GpuSnapshot], *, sysfs_root: Path | None = None
    ) -> None:
        """Monitor the GPUs among ``devices`` with live figures (MIG, lost, Apple skipped).

        Args:
            nvml: NVML access for NVIDIA GPUs.
            devices: the detected devices.
            sysfs_root: the sysfs tree detection read, for AMD/Intel GPUs.
        """
        monitor = LiveSampler(nvml, devices, sysfs_root=sysfs_root)
        keys = [device.key for device in monitor.devices]
        if keys != [device.key for device in self._devices]:
            self.history.clear()
            self.last_sample = None
            self.last_readings = ()
            self.readings_table.setRowCount(0)
            self._reported_lost.clear()
            for (_, key), curve in self._curves.items():
                self.plots[key].removeItem(curve)
            self._curves.clear()
            self._create_curves(monitor.devices)
        self._generation += 1
        self._monitor = monitor
        self._devices = monitor.devices
        self._set_capacity_ranges(monitor.devices)
        has_devices = bool(self._devices)
        self._plot_box.setVisible(has_devices)
        self.empty_label.setVisible(not has_devices)
        self.pause_button.setEnabled(has_devices)
        self._update_legend()
        if has_devices and not self._paused and not self._closed:
            self._timer.start()
            self.sample_now()
        else:
            self._timer.stop()
        self._update_status()

    def _set_capacity_ranges(self, devices: Sequence[GpuSnapshot]) -> None:
        """Memory and power run from 0 to the largest device's total and limit, when known."""
        totals = [d.memory_total_mib for d in devices if d.memory_total_mib is not None]
        limits = [d.power_limit_w for d in devices if d.power_limit_w is not None]
        for key, top in (
            ("memory_used_mib", max(totals) / 1024 if totals else None),
            ("power_draw_w", max(limits) if limits else None),
        ):
            item = self.plots[key].getPlotItem()
            if top:
                item.setYRange(0, top, padding=0.02)
                self._capacity_keys.add(key)
            else:
                item.enableAutoRange(axis="y")
                self._capacity_keys.discard(key)

    def _create_curves(self, devices: Sequence[GpuSnapshot]) -> None:
        for position, device in enumerate(devices):
            pen = pg.mkPen(device_color(position, self._style.dark), width=2)
            for metric in MONITOR_METRICS:
                # A bare curve item: PlotDataItem's extra processing costs more than drawing.
                curve = pg.PlotCurveItem(pen=pen, connect="finite", skipFiniteCheck=False)
                self.plots[metric.key].addItem(curve)
                self._curves[(device.key, metric.key)] = curve

    def _restyle(self, *_args: object) -> None:
        """Re-color curves, legend and titles after a light/dark switch."""
        self._style = chart_style(theme.is_dark())
        for position, device in enumerate(self._devices):
            pen = pg.mkPen(device_color(position, self._style.dark), width=2)
            for metric in MONITOR_METRICS:
                curve = self._curves.get((device.key, metric.key))
                if curve is not None:
                    curve.setPen(pen)
        self._update_legend()
        for metric in MONITOR_METRICS:
            self.plots[metric.key].getPlotItem().setTitle(
                self._title(metric, ""), color=self._style.text.name(), size="9pt"
            )
        self.redraw()

    # -- sampling -------------------------------------------------------------------

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def running(self) -> bool:
        """Whether the timer is sampling."""
        return self._timer.isActive()

    def toggle_pause(self) -> None:
        if self._paused:
            self.resume()
        else:
            self.pause()

    def pause(self) -> None:
        self._paused = True
        self._timer.stop()
        self.pause_button.setText("Resume")
        self._update_status()

    def resume(self) -> None:
        self._paused = False
        self.pause_button.setText("Pause")
        if self._devices and not self._closed:
            self._timer.start()
            self.sample_now()
        self._update_status()

    def sample_now(self) -> None:
        """Take one sample on a worker thread, unless one is still running."""
        monitor = self._monitor
        if monitor is None or self._worker is not None or self._closed:
            return
        generation = self._generation

        def take(progress: Progress) -> tuple[MonitorSample, tuple[DeviceReading, ...]]:
            return monitor.sample()

        worker = TaskWorker(take, owner=self)
        worker.finished.connect(lambda sample: self._on_sample(generation, sample))
        worker.failed.connect(self._on_failed)
        worker.done.connect(self._on_worker_done)
        self._worker = worker
        worker.start()

    def _on_worker_done(self) -> None:
        self._worker = None  # the worker module keeps it until it may go

    def _on_failed(self, message: str) -> None:
        self.status_label.setText(f"sampling failed: {message}")

    def _on_sample(self, generation: int, result: object) -> None:
        if generation != self._generation or not isinstance(result, tuple):
            return  # a sample of the previous device set
        sample, readings = result
        self.last_readings = readings
        self.readings_table.show_readings(readings)
        self.history.add(sample)
        self.last_sample = sample
        for device in sample.devices:
            if device.lost and device.uuid not in self._reported_lost:
                self._reported_lost.add(device.uuid)
                self._update_legend()
                self.device_lost.emit(device.uuid)
        if self.isVisible():
            self.redraw()
        self._update_status()
        self.sampled.emit()

    # -- drawing --------------------------------------------------------------------

    def redraw(self) -> None:
        """Put the history on the plots (x = seconds before the newest sample)."""
        times = self.history.times()
        if not times:
            return
        x = np.asarray(times) - times[-1]
        # Show what exists, growing to the full window: a minute of samples must
        # not be crammed into the right fifth of a 5-minute axis.
        window = min(float(self.history.capacity - 1), max(float(MIN_WINDOW_S), -float(x[0])))
        for metric in MONITOR_METRICS:
            display = _DISPLAY[metric.key]
            item = self.plots[metric.key].getPlotItem()
            item.setXRange(-window, 0, padding=0)
            finite: list[float] = []
            latest: list[str] = []
            for position, device in enumerate(self._devices):
                uuid = device.key
                curve = self._curves.get((uuid, metric.key))
                if curve is None:
                    continue
                y = np.asarray(self.history.values(uuid, metric.key), dtype=float) * display.scale
                curve.setData(x, y)
                finite.extend(float(value) for value in y[np.isfinite(y)])
                latest.append(self._latest_text(position, uuid, metric.key, display))
            self._show_no_data(metric.key, not finite, window)
            if finite and display.fixed_range is None and display.min_span:
                self._keep_min_span(metric.key, min(finite), max(finite), display.min_span)
            item.setTitle(
                self._title(metric, "   ".join(latest)),
                color=self._style.text.name(),
                size="9pt",
            )

    def _show_no_data(self, key: str, empty: bool, window: float) -> None:
        """Say so on a plot whose metric no device reports (not an empty 0-1 axis)."""
        label = self._no_data[key]
        label.setVisible(empty)
        item = self.plots[key].getPlotItem()
        item.getAxis("left").setStyle(showValues=not empty)
        if empty:
            item.setYRange(0, 1, padding=0)
            label.setPos(-window / 2, 0.5)

    def _keep_min_span(self, key: str, low: float, high: float, span: float) -> None:
        """Auto-range, but never to less than ``span`` (capacity ranges stay as set)."""
        if key in self._capacity_keys:
            return
        item = self.plots[key].getPlotItem()
        if high - low >= span:
            item.enableAutoRange(axis="y")
            return
        middle = (low + high) / 2
        bottom = max(0.0, middle - span / 2)
        item.setYRange(bottom, bottom + span, padding=0.05)

    def _latest_text(self, position: int, uuid: str, key: str, display: _Display) -> str:
        color = device_color(position, self._style.dark).name()
        latest = self.history.latest(uuid, key)
        if self.history.is_lost(uuid):
            value = "lost"
        elif latest is None:
            value = "n/a"
        else:
            value = f"{latest * display.scale:.{display.decimals}f}"
        return f'<span style="color:{color}">GPU {self._devices[position].index}: {value}</span>'

    def _update_legend(self) -> None:
        parts = []
        for position, device in enumerate(self._devices):
            color = device_color(position, self._style.dark).name()
            name = html.escape(f"GPU {device.index}: {device.name or 'unknown'}")
            lost = device.key in self._reported_lost
            suffix = f' <b style="color:{theme.error_color().name()}">LOST</b>' if lost else ""
            parts.append(f'<span style="color:{color}">&#9632;</span> {name}{suffix}')
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(parts))
        self.legend.setVisible(bool(parts))

    def _update_status(self) -> None:
        if not self._devices:
            text = ""
        elif self._paused:
            text = "paused"
        else:
            seconds = self._timer.interval() / 1000
            text = f"every {seconds:g} s, last {len(self.history)} samples"
        if self._devices and all(device.key in self._reported_lost for device in self._devices):
            text = "every monitored GPU is lost"
        self.status_label.setText(text)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.redraw()

    # -- shutdown -------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop the timer and wait for a sample in flight; safe to call twice."""
        self._closed = True
        self._timer.stop()
        worker = self._worker
        if worker is not None:
            worker.shutdown()
            self._worker = None

    @property
    def devices(self) -> list[GpuSnapshot]:
        """The monitored devices (physical GPUs that answered at detection)."""
        return list(self._devices)

    def latest_value(self, uuid: str, key: str) -> float | None:
        """The newest sampled value (sampled unit), for tests and tooltips."""
        value = self.history.latest(uuid, key)
        return None if value is None or math.isnan(value) else value
