"""The "Devices" view of the This machine tab: detected GPUs, diagnosis, live monitor.

Detection runs on a :class:`~gpudesk.ui.worker.TaskWorker`, never on the GUI
thread. Each device gets a card with its catalog match (a link into the
catalog); when NVML cannot be used a panel says why and what to do, and the
rest of the app keeps working.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpudesk.hardware import text
from gpudesk.hardware.detect import detect
from gpudesk.hardware.match import (
    CatalogMatch,
    match_devices,
    matched_catalog_ids,
    with_catalog_names,
)
from gpudesk.hardware.models import (
    DetectionResult,
    DeviceKind,
    DeviceSource,
    title_for,
)
from gpudesk.hardware.nvml import Nvml, default_nvml
from gpudesk.progress import Progress
from gpudesk.ui import theme
from gpudesk.ui.device_card import DeviceCard, DiagnosisPanel, card_style, escape
from gpudesk.ui.device_monitor import (
    SAMPLE_INTERVAL_MS,
    MonitorPanel,
)
from gpudesk.ui.health_panel import HealthPanel, HealthProblem
from gpudesk.ui.state import AppState
from gpudesk.ui.words import plain_words
from gpudesk.ui.worker import TaskWorker

_THROUGHPUT_TIP = (
    "Also measure BF16/FP16 GEMM and device copy against typical achieved fractions "
    "of the catalog peak (needs PyTorch or CuPy; takes longer)"
)
_HEALTH_TIP = (
    "Compare with nvidia-smi field by field and check PCIe links, throttling, ECC "
    "errors, memory repairs and the compute mode (what `gpudesk doctor` does)"
)


class DevicesView(QWidget):
    """Detected devices as cards, a diagnosis panel when NVML fails, and the live monitor.

    Args:
        state: the shared app state (catalog links, detected ids, compare).
        parent: the parent widget.
        nvml: the NVML access to use (tests pass one over a fake binding).
        autostart: detect as soon as the view exists.
        sysfs_root: the sysfs tree to read the PCI bus from; ``/sys``, or the
            folder named by ``GPUDESK_SYSFS_ROOT``, when None.

    Signals:
        detection_finished(object): the :class:`DetectionResult` was shown.
    """

    detection_finished = Signal(object)

    def __init__(
        self,
        state: AppState,
        parent: QWidget | None = None,
        *,
        nvml: Nvml | None = None,
        autostart: bool = True,
        monitor_interval_ms: int | None = None,
        sysfs_root: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.state = state
        self._nvml = nvml if nvml is not None else default_nvml()
        self._sysfs_root = sysfs_root
        self.result: DetectionResult | None = None
        self.matches: list[CatalogMatch] = []
        self.cards: list[DeviceCard] = []
        self._worker: TaskWorker | None = None
        self._closed = False
        self.setStyleSheet(card_style())
        theme.notifier().changed.connect(self._restyle_cards)

        layout = QVBoxLayout(self)
        header = QHBoxLayout()
        self.summary = QLabel("Detecting…")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        header.addWidget(self.summary, 1)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Detect this machine's GPUs again")
        self.refresh_button.clicked.connect(self.refresh)
        header.addWidget(self.refresh_button)
        self.health_throughput = QCheckBox("with throughput test")
        self.health_throughput.setToolTip(_THROUGHPUT_TIP)
        header.addWidget(self.health_throughput)
        self.health_button = QPushButton("Check health")
        self.health_button.setToolTip(_HEALTH_TIP)
        self.health_button.clicked.connect(self.check_health)
        header.addWidget(self.health_button)
        layout.addLayout(header)

        self.health = HealthPanel()
        self.health.hide()
        layout.addWidget(self.health)
        self._health_worker: TaskWorker | None = None

        self.diagnosis = DiagnosisPanel()
        self.diagnosis.hide()
        layout.addWidget(self.diagnosis)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self._cards_box = QWidget()
        self._cards_layout = QVBoxLayout(self._cards_box)
        self._cards_layout.setContentsMargins(0, 0, 6, 0)
        self._cards_layout.setSpacing(8)
        self.cpu_card = QFrame()
        self.cpu_card.setObjectName("cpuCard")
        cpu_layout = QVBoxLayout(self.cpu_card)
        cpu_layout.setContentsMargins(12, 8, 12, 8)
        self.cpu_label = QLabel("")
        self.cpu_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cpu_label.setWordWrap(True)
        cpu_layout.addWidget(self.cpu_label)
        self._cards_layout.addWidget(self.cpu_card)
        self._cards_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(420)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self._cards_box)
        self.splitter.addWidget(scroll)
        self.monitor = MonitorPanel(interval_ms=monitor_interval_ms or SAMPLE_INTERVAL_MS)
        self.monitor.device_lost.connect(self._mark_lost)
        self.monitor.sampled.connect(self._show_live_values)
        self.splitter.addWidget(self.monitor)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([560, 840])
        layout.addWidget(self.splitter, 1)

        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        if autostart:
            self.refresh()

    # -- detection ------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._worker is not None

    def _restyle_cards(self, *_args: object) -> None:
        self.setStyleSheet(card_style())

    def refresh(self) -> None:
        """Detect again on a worker thread (ignored while a detection runs)."""
        if self._worker is not None or self._closed:
            return
        nvml, root = self._nvml, self._sysfs_root

        def work(progress: Progress) -> DetectionResult:
            return detect(nvml, progress, sysfs_root=root)

        worker = TaskWorker(work, owner=self)
        worker.progressed.connect(lambda fraction, message: self.summary.setText(f"{message}…"))
        worker.finished.connect(self._on_detected)
        worker.failed.connect(self._on_failed)
        worker.done.connect(self._on_worker_done)
        self._worker = worker
        self.refresh_button.setEnabled(False)
        self.summary.setText("Detecting…")
        worker.start()

    def _on_worker_done(self) -> None:
        self._worker = None  # the worker module keeps it until it may go
        self.refresh_button.setEnabled(not self._closed)

    def _on_failed(self, message: str) -> None:
        self.summary.setText("<b>Detection failed</b>")
        self.diagnosis.show_failure(message)
        self.diagnosis.show()

    def _on_detected(self, result: object) -> None:
        if not isinstance(result, DetectionResult) or self._closed:
            return
        self.show_result(result)

    def show_result(self, result: DetectionResult) -> None:
        """Show a detection result: cards, diagnosis, monitor, and tell the app state."""
        entries = self.state.entries()
        self.matches = match_devices(result.gpus, entries)
        result = result.model_copy(
            update={"gpus": with_catalog_names(result.gpus, self.matches, entries)}
        )
        self.result = result
        self._rebuild_cards(result)
        self.summary.setText(self._summary_text(result))
        if not result.nvml_problem_matters:
            self.diagnosis.hide()
        else:
            self.diagnosis.show_result(result)
            self.diagnosis.show()
        self.cpu_label.setText(
            f"<b>CPU</b>&nbsp; {escape(text.cpu_text(result.cpu))}<br>"
            f"<b>RAM</b>&nbsp; {escape(text.ram_text(result.ram_total_gib))}"
        )
        self.state.set_detected(matched_catalog_ids(result.gpus, self.matches), result.gpus)
        self._sync_health_controls()
        if not self._closed:
            self.monitor.set_devices(self._nvml, result.gpus, sysfs_root=self._sysfs_root)
        # Nothing to monitor: give the space to the diagnosis and the CPU card.
        self.monitor.setVisible(bool(self.monitor.devices))
        self.detection_finished.emit(result)

    @staticmethod
    def _summary_text(result: DetectionResult) -> str:
        time = result.timestamp.astimezone().strftime("%H:%M:%S")
        physical = [gpu for gpu in result.gpus if gpu.kind is DeviceKind.GPU]
        if not result.usable_gpus:
            return f"<b>No GPU detected</b>, checked {time}"
        migs = len(result.gpus) - len(physical)
        count = f"{len(physical)} GPU{'s' if len(physical) != 1 else ''}"
        if migs:
            count += f" ({migs} MIG instance{'s' if migs != 1 else ''})"
        if any(gpu.source is not DeviceSource.NVML for gpu in physical):
            found = result.status_text
            if result.nvml_problem_matters:  # the diagnosis panel below names it, once
                found = found.removesuffix(f"; {title_for(result.status)}")
            return f"<b>{count}</b> &nbsp; {escape(found)}, checked {time}"
        return (
            f"<b>{count}</b> &nbsp; driver {escape(result.driver_version or text.NA)}, "
            f"CUDA {escape(result.cuda_driver_version or text.NA)}, checked {time}"
        )

    def _rebuild_cards(self, result: DetectionResult) -> None:
        for card in self.cards:
            self._cards_layout.removeWidget(card)
            card.deleteLater()
        self.cards = []
        position = 0
        #: each hint in full once: "GPU 1: … no kernel driver" repeats GPU 0's advice
        first_with_hint: dict[str, str] = {}
        for gpu, match in zip(result.gpus, self.matches, strict=True):
            color_position = None
            if gpu.has_live_figures and (gpu.uuid or gpu.source is not DeviceSource.NVML):
                color_position = position
                position += 1
            card = DeviceCard(gpu, match, result, self.state, color_position)
            card.entry_clicked.connect(self.state.show_entry)
            card.compare_clicked.connect(self.state.add_to_compare)
            if gpu.hint and gpu.hint in first_with_hint:
                card.hint_label.setText(f"The same problem as {first_with_hint[gpu.hint]} above.")
                card.hint_label.setToolTip(plain_words(gpu.hint))
            elif gpu.hint:
                first_with_hint[gpu.hint] = gpu.label.split(":")[0]
            # before the CPU card and the stretch
            self._cards_layout.insertWidget(len(self.cards), card)
            self.cards.append(card)

    def _mark_lost(self, uuid: str) -> None:
        for card in self.cards:
            if card.gpu.key == uuid:
                card.set_lost()

    def _show_live_values(self) -> None:
        sample = self.monitor.last_sample
        if sample is None or not self.isVisible():
            return
        for device in sample.devices:
            card = self.card_for(device.uuid)
            if card is not None:
                card.update_live(device)

    def card_for(self, uuid: str) -> DeviceCard | None:
        for card in self.cards:
            if card.gpu.key == uuid:
                return card
        return None

    # -- health check -----------------------------------------------------------------

    @property
    def checking_health(self) -> bool:
        return self._health_worker is not None

    def check_health(self) -> None:
        """Run the doctor's check on a worker thread (ignored while one runs)."""
        if self._health_worker is not None or self._closed:
            return
        nvml, root = self._nvml, self._sysfs_root
        entries = list(self.state.entries())
        skip_bench = not self.health_throughput.isChecked()

        def work(progress: Progress) -> object:
            from gpudesk.health import doctor

            progress.report(0.0, "reading the GPUs")
            result = detect(nvml, progress, sysfs_root=root)
            progress.report(0.2, "asking nvidia-smi")
            try:
                return doctor.check_machine(
                    result, entries, skip_bench=skip_bench, progress=progress
                )
            except doctor.NoNvidiaGpuError as exc:
                return HealthProblem(
                    "No NVIDIA GPU to check",
                    f"{title_for(exc.detection.status)}: {exc.detection.hint}",
                )
            except doctor.NvidiaSmiNotFoundError:
                return HealthProblem(
                    "nvidia-smi not found",
                    "The check compares GPUDesk's readings with nvidia-smi, which comes with "
                    "the NVIDIA driver; it is not on this machine's PATH. From a terminal, "
                    "`gpudesk doctor --nvidia-smi PATH` takes its location.",
                )
            except doctor.NvidiaSmiUnusableError as exc:
                return HealthProblem("nvidia-smi cannot be run", f"{exc.path}: {exc.reason}")

        worker = TaskWorker(work, owner=self)
        worker.progressed.connect(lambda fraction, message: self.health.show_running(message))
        worker.finished.connect(self._on_health_checked)
        worker.failed.connect(
            lambda message: self.health.show_problem(HealthProblem("The check failed", message))
        )
        worker.done.connect(self._on_health_worker_done)
        self._health_worker = worker
        self.health_button.setEnabled(False)
        self.health.show_running("starting")
        self.health.show()
        worker.start()

    def _on_health_checked(self, outcome: object) -> None:
        from gpudesk.health.doctor import DoctorReport

        if self._closed:
            return
        if isinstance(outcome, DoctorReport):
            self.health.show_report(outcome)
        elif isinstance(outcome, HealthProblem):
            self.health.show_problem(outcome)

    def _on_health_worker_done(self) -> None:
        self._health_worker = None
        self._sync_health_controls()

    def _sync_health_controls(self) -> None:
        """Check health needs a GPU to check: without one the banner already says why."""
        # The check reads NVML and nvidia-smi: GPUs seen only in sysfs (no driver
        # loaded) or on another vendor's stack give it nothing but the banner's words.
        usable = self.result is None or any(
            gpu.source is DeviceSource.NVML for gpu in self.result.usable_gpus
        )
        idle = self._health_worker is None and not self._closed
        self.health_button.setEnabled(usable and idle)
        self.health_throughput.setEnabled(usable)
        if usable:
            why = ""
        elif self.result is not None and self.result.usable_gpus:
            why = " (no GPU answers NVML, the NVIDIA driver's interface: nothing to check)"
        else:
            why = " (no GPU was detected: nothing to check)"
        self.health_button.setToolTip(_HEALTH_TIP + why)
        self.health_throughput.setToolTip(_THROUGHPUT_TIP + why)

    # -- shutdown -------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop sampling and wait for workers in flight; safe to call twice."""
        self._closed = True
        self.monitor.shutdown()
        for name in ("_worker", "_health_worker"):
            worker = getattr(self, name)
            if worker is not None:
                worker.shutdown()
                setattr(self, name, None)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)


__all__ = ["DeviceCard", "DevicesView", "DiagnosisPanel"]
