"""The "Benchmark" view of the This machine tab: run the throughput test, see it against peak.

The benchmark itself is :func:`gpudesk.bench.runner.run_benchmark`, a plain
function; this panel only builds the plan from the user's choices, moves the
run onto a :class:`~gpudesk.ui.worker.TaskWorker`, shows its progress, and
shows the result: a table with "% of peak" bars, the size-sweep plot, and the
history of runs (local and imported). A finished run feeds the "this machine
(measured)" series of the compare view.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QCloseEvent, QColor, QPainter, QPen, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gpudesk.bench.backends import AUTO_ORDER, BACKEND_NAMES, get_backend
from gpudesk.bench.backends.base import Backend, BackendStatus, DeviceInfo
from gpudesk.bench.history import HistoryItem, import_run, list_runs, save_run
from gpudesk.bench.measured import measured_series
from gpudesk.bench.plan import Capabilities, TestName, make_plan
from gpudesk.bench.results import BenchResult, Measurement, ResultFileError
from gpudesk.bench.runner import run_benchmark
from gpudesk.bench.text import format_figure, size_label
from gpudesk.progress import Progress
from gpudesk.render.colors import series_color
from gpudesk.ui import theme
from gpudesk.ui.state import AppState
from gpudesk.ui.worker import TaskWorker

#: Item data role holding a row's fraction of peak (float or None).
FRACTION_ROLE = Qt.ItemDataRole.UserRole + 1

_TEST_CHOICES: tuple[tuple[TestName, str, str], ...] = (
    ("gemm", "GEMM throughput", "Square matrix multiply per precision (FLOPs = 2·n³)"),
    ("copy", "Memory copy", "Device-memory bandwidth: a large copy, bytes read + written"),
    ("h2d", "Host → device", "Transfer from pageable and pinned host memory"),
    ("d2h", "Device → host", "Transfer to pageable and pinned host memory"),
    ("sweep", "Size sweep", "GEMM throughput against n: where small batches underuse the device"),
)


@dataclass
class BackendInfo:
    """What the panel knows about one backend after checking it off the GUI thread."""

    backend: Backend
    status: BackendStatus
    devices: list[DeviceInfo] = field(default_factory=list)
    capabilities: dict[int, Capabilities] = field(default_factory=dict)
    error: str = ""


def check_backends(backends: Sequence[Backend], progress: Progress) -> list[BackendInfo]:
    """Availability, devices and capabilities of each backend (imports torch/cupy: slow)."""
    infos: list[BackendInfo] = []
    for index, backend in enumerate(backends):
        progress.check()
        progress.report(index / max(1, len(backends)), f"checking {backend.name}")
        info = BackendInfo(backend, backend.status())
        if info.status.available:
            try:
                info.devices = backend.devices()
                for device in info.devices:
                    info.capabilities[device.index] = backend.capabilities(device.index)
            except Exception as exc:  # a broken driver disables this backend only
                info.error = f"{type(exc).__name__}: {exc}"
        infos.append(info)
    return infos


# --- results table ---------------------------------------------------------------------


class ResultsModel(QAbstractTableModel):
    """The rows of one result: a thin adapter over its list of measurements."""

    COLUMNS = ("Test", "Size", "Median", "Min – max", "Unit", "Catalog peak", "% of peak", "Notes")
    PERCENT_COLUMN = 6
    _NUMERIC = frozenset({1, 2, 3, 5})

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Measurement] = []

    def set_rows(self, rows: Sequence[Measurement]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

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
            return self._tooltip(row)
        if role == Qt.ItemDataRole.ForegroundRole and row.error is not None:
            return QBrush(QColor("#c0392b"))
        return None

    def _text(self, row: Measurement, column: int) -> str:
        failed = row.value is None
        match column:
            case 0:
                return row.label
            case 1:
                return size_label(row)
            case 2:
                return "failed" if failed else format_figure(row.value)
            case 3:
                return "" if failed else f"{format_figure(row.min)} – {format_figure(row.max)}"
            case 4:
                return row.unit
            case 5:
                return format_figure(row.peak) if row.peak is not None else "n/a"
            case 6:
                # The delegate paints a bar; this text is what copy and accessibility get.
                return "" if row.fraction_of_peak is None else f"{row.fraction_of_peak:.0%}"
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
        # A CPU reaches a fraction of a TFLOPS: GFLOPS reads better there.
        top = max((row.value or 0.0) for group in by_dtype.values() for row in group)
        scale, unit = (1000.0, "GFLOPS") if top < 1.0 else (1.0, "TFLOPS")
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
                    label=f"{dtype.upper()} catalog peak {format_figure(peak)}",
                    labelOpts={"position": 0.15, "color": color, "anchors": [(0, 1), (0, 1)]},
                )  # fmt: skip
                item.addItem(line)
        # Throughput starts at zero: a cropped axis would exaggerate the curve.
        highest = max(
            [top * scale]
            + [row.peak * scale for group in by_dtype.values() for row in group if row.peak]
        )
        item.setYRange(0, highest * 1.08, padding=0)
        item.setXRange(math.log2(sizes[0]) - 0.3, math.log2(sizes[-1]) + 0.3, padding=0)


# --- the panel -------------------------------------------------------------------------


class BenchPanel(QWidget):
    """Run the benchmark, watch it, and read its result against the catalog.

    Args:
        state: the shared application state (catalog for peaks; measured series).
        parent: the parent widget.
        backends: the backends to offer (tests pass fakes); numpy, torch and
            cupy when None.
        history_folder: where runs are saved; the user data folder when None.
        autostart: check the backends at once (tests may call
            :meth:`check_backends` themselves).

    Signals:
        backends_checked(): backend availability and devices are known.
        run_finished(object): a run ended with this :class:`BenchResult`.
        run_cancelled(): a run stopped after Cancel.
        run_failed(str): a run raised (should not happen: failures are results).
    """

    backends_checked = Signal()
    run_finished = Signal(object)
    run_cancelled = Signal()
    run_failed = Signal(str)

    def __init__(
        self,
        state: AppState,
        parent: QWidget | None = None,
        *,
        backends: Sequence[Backend] | None = None,
        history_folder: Path | None = None,
        autostart: bool = True,
    ) -> None:
        super().__init__(parent)
        self.state = state
        self._backends = (
            list(backends)
            if backends is not None
            else [get_backend(name) for name in BACKEND_NAMES]
        )
        self._history_folder = history_folder
        self.infos: list[BackendInfo] = []
        self.result: BenchResult | None = None
        self.history: list[HistoryItem] = []
        self._check_worker: TaskWorker | None = None
        self._run_worker: TaskWorker | None = None
        self._closed = False

        self._build()
        self.refresh_history()
        self.show_result(None)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        if autostart:
            self.check_backends()

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        outer = QHBoxLayout(self)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(splitter)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 6, 0)
        run_box = QGroupBox("Run")
        form = QFormLayout(run_box)
        self.backend_combo = QComboBox()
        self.backend_combo.currentIndexChanged.connect(self._on_backend_changed)
        form.addRow("Backend", self.backend_combo)
        self.device_combo = QComboBox()
        self.device_combo.currentIndexChanged.connect(self._on_device_changed)
        form.addRow("Device", self.device_combo)
        self.full_check = QCheckBox("Full run (larger sizes; minutes)")
        self.full_check.setToolTip("Quick: under 15 s on a GPU, under 30 s on a small CPU")
        form.addRow("", self.full_check)
        tests_box = QWidget()
        tests_layout = QVBoxLayout(tests_box)
        tests_layout.setContentsMargins(0, 0, 0, 0)
        tests_layout.setSpacing(2)
        self.test_checks: dict[TestName, QCheckBox] = {}
        #: The user's choice per test, kept while a device that lacks it is shown.
        self._wanted: dict[TestName, bool] = {name: True for name, _, _ in _TEST_CHOICES}
        self._syncing = False
        for name, label, tip in _TEST_CHOICES:
            check = QCheckBox(label)
            check.setToolTip(tip)
            check.setChecked(True)
            check.toggled.connect(lambda on, name=name: self._on_test_toggled(name, on))
            self.test_checks[name] = check
            tests_layout.addWidget(check)
        form.addRow("Tests", tests_box)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        form.addRow(buttons)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setFormat("%p%")
        form.addRow(self.progress_bar)
        self.step_label = QLabel("Checking backends…")
        self.step_label.setWordWrap(True)
        form.addRow(self.step_label)
        left_layout.addWidget(run_box)

        history_box = QGroupBox("History")
        history_layout = QVBoxLayout(history_box)
        self.history_list = QListWidget()
        self.history_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.history_list.setWordWrap(True)
        self.history_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.history_list.setSpacing(1)
        self.history_list.currentItemChanged.connect(self._on_history_selected)
        history_layout.addWidget(self.history_list, 1)
        history_buttons = QHBoxLayout()
        self.import_button = QPushButton("Import JSON…")
        self.import_button.setToolTip(
            "Show a run saved with `gpudesk bench --json` on another machine"
        )
        self.import_button.clicked.connect(self._choose_import)
        self.measured_button = QPushButton("Use in Compare")
        self.measured_button.setToolTip(
            "Show this run as the \u201cthis machine (measured)\u201d series in Compare"
        )
        self.measured_button.clicked.connect(self.use_in_compare)
        history_buttons.addWidget(self.import_button)
        history_buttons.addWidget(self.measured_button)
        history_layout.addLayout(history_buttons)
        self.history_message = QLabel("")
        self.history_message.setWordWrap(True)
        self.history_message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.history_message.setStyleSheet("color: #c0392b;")
        self.history_message.hide()
        history_layout.addWidget(self.history_message)
        left_layout.addWidget(history_box, 1)
        splitter.addWidget(left)

        right = QSplitter(Qt.Orientation.Vertical)
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
        self.table.setModel(self.model)
        self.table.setItemDelegateForColumn(ResultsModel.PERCENT_COLUMN, PercentBarDelegate(self))
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
        right.addWidget(top)
        self.sweep_plot = SweepPlot()
        right.addWidget(self.sweep_plot)
        right.setStretchFactor(0, 1)
        right.setStretchFactor(1, 1)
        right.setSizes([470, 390])
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([330, 900])
        self._update_buttons()

    # -- backends -----------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while backends are being checked or a benchmark runs."""
        return self._check_worker is not None or self._run_worker is not None

    def check_backends(self) -> None:
        """Check availability and devices on a worker (importing torch can take seconds)."""
        if self._check_worker is not None or self._closed:
            return
        backends = list(self._backends)

        def work(progress: Progress) -> list[BackendInfo]:
            return check_backends(backends, progress)

        worker = TaskWorker(work)
        worker.finished.connect(self._on_backends)
        worker.failed.connect(
            lambda message: self.step_label.setText(f"Backend check failed: {message}")
        )
        worker.done.connect(lambda: self._on_check_done(worker))
        self._check_worker = worker
        self.step_label.setText("Checking backends…")
        self._update_buttons()
        worker.start()

    def _on_check_done(self, worker: TaskWorker) -> None:
        if self._check_worker is worker:
            self._check_worker = None
        # `done` follows QThread.finished, which fires just before the thread ends.
        worker.wait(2000)
        self._update_buttons()
        self.backends_checked.emit()

    def _on_backends(self, infos: object) -> None:
        if not isinstance(infos, list) or self._closed:
            return
        self.infos = [info for info in infos if isinstance(info, BackendInfo)]
        self.backend_combo.blockSignals(True)
        self.backend_combo.clear()
        auto = self._auto_info()
        self.backend_combo.addItem(
            f"Auto ({auto.backend.name})" if auto else "Auto (none available)", "auto"
        )
        model = self.backend_combo.model()
        for info in self.infos:
            version = f" {info.status.version}" if info.status.version else ""
            label = f"{info.backend.name}{version}"
            if not info.status.available:
                label += " — not available"
            elif info.error:
                label += " — failed"
            self.backend_combo.addItem(label, info.backend.name)
            row = self.backend_combo.count() - 1
            reason = info.status.reason or info.error
            if reason:
                self.backend_combo.setItemData(row, reason, Qt.ItemDataRole.ToolTipRole)
            if not self._usable(info) and isinstance(model, QStandardItemModel):
                item = model.item(row)
                if item is not None:
                    item.setEnabled(False)
        self.backend_combo.setCurrentIndex(0)
        self.backend_combo.blockSignals(False)
        self._on_backend_changed()
        unavailable = [info for info in self.infos if not self._usable(info)]
        lines = [f"{info.backend.name}: {info.status.reason or info.error}" for info in unavailable]
        self.step_label.setText("Ready." + ("\n" + "\n".join(lines) if lines else ""))

    @staticmethod
    def _usable(info: BackendInfo) -> bool:
        return info.status.available and not info.error and bool(info.devices)

    def _auto_info(self) -> BackendInfo | None:
        by_name = {info.backend.name: info for info in self.infos}
        order = [name for name in AUTO_ORDER if name in by_name] + [
            info.backend.name for info in self.infos if info.backend.name not in AUTO_ORDER
        ]
        for name in order:
            if self._usable(by_name[name]):
                return by_name[name]
        return None

    def selected_info(self) -> BackendInfo | None:
        """The backend the combo box stands for (Auto resolved)."""
        name = self.backend_combo.currentData()
        if name == "auto":
            return self._auto_info()
        return next((info for info in self.infos if info.backend.name == name), None)

    def _on_backend_changed(self) -> None:
        info = self.selected_info()
        self.device_combo.blockSignals(True)
        self.device_combo.clear()
        if info is not None:
            for device in info.devices:
                prefix = "CPU" if device.kind == "cpu" else f"GPU {device.index}"
                self.device_combo.addItem(f"{prefix}: {device.name}", device.index)
        self.device_combo.blockSignals(False)
        self._on_device_changed()

    def _on_device_changed(self) -> None:
        self._update_buttons()

    def _on_test_toggled(self, name: TestName, on: bool) -> None:
        if not self._syncing:
            self._wanted[name] = on
        self._update_buttons()

    def _supported_tests(self) -> set[str]:
        caps = self.selected_capabilities()
        return set(caps.tests) if caps is not None else set()

    def selected_capabilities(self) -> Capabilities | None:
        info = self.selected_info()
        index = self.device_combo.currentData()
        if info is None or not isinstance(index, int):
            return None
        return info.capabilities.get(index)

    def selected_tests(self) -> list[TestName]:
        supported = self._supported_tests()
        return [name for name in self.test_checks if self._wanted[name] and name in supported]

    def _update_buttons(self) -> None:
        running = self._run_worker is not None
        can_run = (
            not running
            and self._check_worker is None
            and self.selected_capabilities() is not None
            and bool(self.selected_tests())
        )
        self.run_button.setEnabled(can_run and not self._closed)
        self.cancel_button.setEnabled(running)
        for widget in (self.backend_combo, self.device_combo, self.full_check):
            widget.setEnabled(not running)
        # A test the device cannot run shows unticked and disabled; the user's
        # choice comes back with a device that can.
        supported = self._supported_tests()
        tips = {name: tip for name, _, tip in _TEST_CHOICES}
        self._syncing = True
        for name, check in self.test_checks.items():
            check.setEnabled(name in supported and not running)
            check.setChecked(self._wanted[name] and name in supported)
            lacking = self.selected_capabilities() is not None and name not in supported
            check.setToolTip(tips[name] + (" (not on this device)" if lacking else ""))
        self._syncing = False
        self.import_button.setEnabled(not running)

    # -- running ----------------------------------------------------------------------------

    def run(self) -> None:
        """Start a benchmark with the chosen backend, device and tests."""
        info = self.selected_info()
        caps = self.selected_capabilities()
        device_index = self.device_combo.currentData()
        tests = self.selected_tests()
        if self._run_worker is not None or info is None or caps is None or not tests:
            return
        plan = make_plan(
            caps, full=self.full_check.isChecked(), device_index=int(device_index), tests=tests
        )
        backend = info.backend
        entries = list(self.state.entries())

        def work(progress: Progress) -> BenchResult:
            return run_benchmark(plan, backend, progress, catalog=entries)

        worker = TaskWorker(work)
        worker.progressed.connect(self._on_progress)
        worker.finished.connect(self._on_finished)
        worker.cancelled.connect(self._on_cancelled)
        worker.failed.connect(self._on_failed)
        worker.done.connect(lambda: self._on_run_done(worker))
        self._run_worker = worker
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat(f"starting {backend.name} — %p%")
        self.step_label.setText(f"Running {backend.name} ({plan.mode} run)…")
        self._update_buttons()
        worker.start()

    def cancel(self) -> None:
        if self._run_worker is not None:
            self._run_worker.cancel()
            self.step_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def _on_progress(self, fraction: float, message: str) -> None:
        self.progress_bar.setValue(round(fraction * 1000))
        # The bar names the current step.
        self.progress_bar.setFormat(f"{message} — %p%")

    def _on_finished(self, result: object) -> None:
        if not isinstance(result, BenchResult):
            return
        self.progress_bar.setValue(1000)
        self.progress_bar.setFormat("%p%")
        saved: Path | None = None
        try:
            saved = save_run(result, self._history_folder)
        except OSError as exc:
            self._show_history_message(f"Could not save this run to the history: {exc}")
        if result.error is not None:
            self.step_label.setText(f"Failed: {result.error}")
        else:
            failures = sum(row.error is not None for row in result.results)
            done = f"Done in {result.duration_s:.1f} s."
            self.step_label.setText(done + (f" {failures} test(s) failed." if failures else ""))
        self.refresh_history(select=saved)
        if saved is None:
            self.show_result(result)
        series = measured_series(result)
        if series is not None:
            self.state.set_measured(series)
        self.run_finished.emit(result)

    def _on_cancelled(self) -> None:
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("%p%")
        self.step_label.setText("Cancelled.")
        self.run_cancelled.emit()

    def _on_failed(self, message: str) -> None:
        self.step_label.setText(f"Failed: {message}")
        self.run_failed.emit(message)

    def _on_run_done(self, worker: TaskWorker) -> None:
        if self._run_worker is worker:
            self._run_worker = None
        worker.wait(2000)
        self._update_buttons()

    # -- showing a result ------------------------------------------------------------------

    def show_result(self, result: BenchResult | None) -> None:
        """Fill the summary, table and sweep plot from one result (None clears them)."""
        self.result = result
        self.measured_button.setEnabled(result is not None and measured_series(result) is not None)
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
        self.sweep_plot.show_sweep(result.sweep)

    def use_in_compare(self) -> None:
        """Make the shown run the measured series of the compare view."""
        if self.result is None:
            return
        series = measured_series(self.result)
        if series is not None:
            self.state.set_measured(series)

    # -- history ----------------------------------------------------------------------------

    def refresh_history(self, select: Path | None = None) -> None:
        """Reload the history list; select ``select`` (a saved file) if given."""
        items, problems = list_runs(self._history_folder)
        self.history = items
        self.history_list.blockSignals(True)
        self.history_list.clear()
        for item in items:
            entry = QListWidgetItem(history_text(item))
            entry.setData(Qt.ItemDataRole.UserRole, str(item.path))
            tip = item.result.imported_from and f"imported from {item.result.imported_from}"
            entry.setToolTip(tip or str(item.path))
            self.history_list.addItem(entry)
        self.history_list.blockSignals(False)
        if problems:
            shown = "\n".join(str(problem) for problem in problems[:3])
            more = f"\n(and {len(problems) - 3} more)" if len(problems) > 3 else ""
            self._show_history_message(
                f"{len(problems)} history file(s) could not be read:\n{shown}{more}"
            )
        else:
            self._show_history_message("")
        if select is not None:
            for row, item in enumerate(items):
                if item.path == select:
                    self.history_list.setCurrentRow(row)
                    return

    def _on_history_selected(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is None:
            return
        path = current.data(Qt.ItemDataRole.UserRole)
        found = next((item for item in self.history if str(item.path) == path), None)
        if found is not None:
            self.show_result(found.result)

    def _show_history_message(self, text: str) -> None:
        self.history_message.setText(text)
        self.history_message.setVisible(bool(text))

    def _choose_import(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self,
            "Import a benchmark result",
            str(Path.home()),
            "JSON files (*.json);;All files (*)",
        )
        if path:
            self.import_file(Path(path))

    def import_file(self, path: Path) -> HistoryItem | None:
        """Validate and import one result file; a malformed file is named with its field."""
        try:
            item = import_run(path, self._history_folder)
        except ResultFileError as exc:
            self._show_history_message(f"Not imported: {exc}")
            return None
        except OSError as exc:
            self._show_history_message(f"Not imported: cannot save to the history: {exc}")
            return None
        self.refresh_history(select=item.path)
        return item

    # -- shutdown ---------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Cancel a run in flight and wait for the workers; safe to call twice."""
        self._closed = True
        for worker in (self._run_worker, self._check_worker):
            if worker is not None:
                worker.shutdown()
        self._run_worker = None
        self._check_worker = None

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)


def history_text(item: HistoryItem) -> str:
    """Two lines for the history list: when and how, then which device and the headline."""
    result = item.result
    when = result.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
    first = f"{when} · {result.backend} · {result.mode}"
    if item.imported:
        first += " · imported"
    if result.error is not None:
        headline = "failed"
    else:
        best = max(
            (row for row in result.results if row.test == "gemm" and row.value is not None),
            key=lambda row: row.value or 0.0,
            default=None,
        )
        headline = "" if best is None else f"{best.label} {format_figure(best.value)} TFLOPS"
    return f"{first}\n{result.device_name}" + (f" — {headline}" if headline else "")


def summary_html(result: BenchResult) -> str:
    """Rich-text lines about one run: device, backend, BLAS/CUDA, catalog, NVML, notes."""

    def esc(value: object) -> str:
        return html.escape(str(value))

    env = result.environment
    when = result.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
    kind = f" ({result.device.kind})" if result.device is not None else ""
    lines = [
        f"<b>{esc(result.device_name)}</b>{esc(kind)} — {esc(result.backend)} "
        f"{esc(env.get('backend_version') or '')}, {esc(result.mode)} run, {esc(when)}, "
        f"{result.duration_s:.1f} s"
    ]
    blas = env.get("blas")
    if isinstance(blas, list) and blas and isinstance(blas[0], dict):
        first = blas[0]
        lines.append(
            f"BLAS: {esc(first.get('library'))} {esc(first.get('version'))}, "
            f"{esc(first.get('threads'))} threads, kernel {esc(first.get('kernel'))}"
        )
    if env.get("cuda_runtime") or env.get("driver_version"):
        lines.append(
            f"CUDA runtime {esc(env.get('cuda_runtime') or 'n/a')}, "
            f"driver {esc(env.get('driver_version') or 'n/a')}"
        )
    if result.catalog_id:
        lines.append(f"Catalog peak from <b>{esc(result.catalog_id)}</b>")
    else:
        match = env.get("catalog_match")
        lines.append(
            "No catalog entry for this device: no peak to compare with"
            + (f" ({esc(match)})" if match else "")
        )
    telemetry = result.telemetry
    if telemetry is not None and telemetry.available and telemetry.samples:
        summary = telemetry.summary()
        reasons = ", ".join(telemetry.throttle_reasons()) or "none"
        lines.append(
            "During the run: SM clock "
            f"{format_figure(summary['sm_clock_mhz_median'])} MHz (median), "
            f"power up to {format_figure(summary['power_w_max'])} W, "
            f"up to {format_figure(summary['temperature_c_max'])} °C; clock events: {esc(reasons)}"
        )
    elif telemetry is not None and telemetry.reason:
        lines.append(f"Telemetry: {esc(telemetry.reason)}")
    if result.imported_from:
        lines.append(f"Imported from {esc(result.imported_from)}")
    if result.error:
        lines.append(f"<span style='color:#c0392b'><b>Failed:</b> {esc(result.error)}</span>")
    lines.extend(f"Note: {esc(note)}" for note in result.notes)
    return "<br>".join(lines)


__all__ = ["BenchPanel", "PercentBarDelegate", "ResultsModel", "SweepPlot", "check_backends"]
