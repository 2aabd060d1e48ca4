"""A detected device's card and the diagnosis panel of This machine → Devices (the
widgets behind :class:`~gpudesk.ui.devices_view.DevicesView`)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpudesk.hardware import text
from gpudesk.hardware.match import (
    CatalogMatch,
)
from gpudesk.hardware.models import (
    DetectionResult,
    DeviceKind,
    DeviceSample,
    DeviceSource,
    GpuSnapshot,
    title_for,
)
from gpudesk.ui import theme
from gpudesk.ui.device_monitor import device_color
from gpudesk.ui.state import AppState
from gpudesk.ui.words import plain_words


def card_style() -> str:
    """The cards' style sheet in the current theme (a lost card's border in the theme's
    error colour, the hint in its warning colour); re-read it after a theme switch."""
    error = theme.error_color().name()
    warning = theme.severity_color("warning").name()
    return f"""
QFrame#deviceCard, QFrame#cpuCard {{
    border: 1px solid palette(mid);
    border-radius: 6px;
    background: palette(base);
}}
QFrame#deviceCard[lost="true"] {{ border: 2px solid {error}; }}
QFrame#deviceCard[mig="true"] {{ margin-left: 22px; }}
QLabel#fieldName {{ color: palette(placeholder-text); }}
QLabel#deviceHint {{ color: {warning}; }}
"""


#: Card fields shown on a row of their own.
_WIDE_FIELDS = frozenset(
    {"Memory", "PCIe", "Utilization", "Clock events", "PCI bus", "UUID", "For models", "Found by"}
)


#: Card fields the live monitor keeps current.
_LIVE_FIELDS = ("Memory", "SM clock", "Power draw", "Temperature", "Fan", "Utilization")


def escape(value: str) -> str:
    return html.escape(value, quote=True)


def _catalog_html(match: CatalogMatch, state: AppState) -> str:
    """The catalog line of a card: a link to the entry, or the closest candidates."""
    method = match.description.partition(" (")[2].rstrip(")")
    if match.catalog_id is not None:
        entry = state.catalog.by_id(match.catalog_id)
        name = entry.name if entry is not None else match.catalog_id
        link = f'<a href="{escape(match.catalog_id)}">{escape(name)}</a>'
        return f"{link} <span style='color:gray'>({escape(method)})</span>"
    if match.candidates:
        links = ", ".join(f'<a href="{escape(c)}">{escape(c)}</a>' for c in match.candidates)
        return f"not in catalog; closest: {links}"
    return "not in catalog"


class DeviceCard(QFrame):
    """One GPU or MIG instance: identity, catalog match and its fields ("n/a" when unsupported).

    Signals:
        entry_clicked(str): a catalog link was clicked (the catalog id).
        compare_clicked(str): "Compare" was clicked (the matched catalog id).
    """

    entry_clicked = Signal(str)
    compare_clicked = Signal(str)

    def __init__(
        self,
        gpu: GpuSnapshot,
        match: CatalogMatch,
        result: DetectionResult,
        state: AppState,
        color_position: int | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.gpu = gpu
        self.match = match
        self.state = state
        self._result = result
        self.setObjectName("deviceCard")
        self.setProperty("lost", gpu.lost)
        self.setProperty("mig", gpu.kind is DeviceKind.MIG)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)

        header = QHBoxLayout()
        self._color_position = color_position
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        header.addWidget(self.title, 1)
        self.lost_badge = QLabel()
        self.lost_badge.setToolTip("This device stopped answering (NVML: GPU is lost)")
        self.lost_badge.setVisible(gpu.lost)
        header.addWidget(self.lost_badge)
        self._restyle_header()
        theme.notifier().changed.connect(self._restyle_header)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Add the matched catalog entry to the compare view")
        self.compare_button.setVisible(match.catalog_id is not None and gpu.kind is DeviceKind.GPU)
        self.compare_button.clicked.connect(self._compare)
        header.addWidget(self.compare_button)
        layout.addLayout(header)

        self.hint_label = QLabel(plain_words(gpu.hint or ""))
        self.hint_label.setObjectName("deviceHint")
        self.hint_label.setWordWrap(True)
        self.hint_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint_label.setVisible(bool(gpu.hint))

        self.catalog_label = QLabel(f"Catalog: {_catalog_html(match, state)}")
        self.catalog_label.setTextFormat(Qt.TextFormat.RichText)
        self.catalog_label.setWordWrap(True)
        self.catalog_label.linkActivated.connect(self.entry_clicked)
        layout.addWidget(self.catalog_label)
        layout.addWidget(self.hint_label)

        grid = QGridLayout()
        grid.setHorizontalSpacing(14)
        grid.setVerticalSpacing(3)
        self.values: dict[str, QLabel] = {}
        row = column = 0
        for name, value in self._fields(gpu, result):
            # Long values (UUID, bus id, lists) take a whole row; short ones two per row.
            wide = name in _WIDE_FIELDS
            if wide and column:
                row, column = row + 1, 0
            label = QLabel(name)
            label.setObjectName("fieldName")
            shown = QLabel(value)
            shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            shown.setWordWrap(True)
            grid.addWidget(label, row, column * 2, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(
                shown, row, column * 2 + 1, 1, 3 if wide else 1, Qt.AlignmentFlag.AlignTop
            )
            self.values[name] = shown
            if wide or column:
                row, column = row + 1, 0
            else:
                column = 1
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        layout.addLayout(grid)

    @staticmethod
    def _fields(gpu: GpuSnapshot, result: DetectionResult) -> list[tuple[str, str]]:
        na = text.NA
        if gpu.source is not DeviceSource.NVML:
            return DeviceCard._bus_fields(gpu, result)
        if gpu.kind is DeviceKind.MIG:
            return [
                ("Memory", text.memory_text(gpu)),
                ("SMs", text.count_text(gpu.sm_count)),
                ("GPU instance", text.count_text(gpu.mig_gpu_instance_id)),
                ("Compute instance", text.count_text(gpu.mig_compute_instance_id)),
                ("Compute cap.", gpu.compute_capability or na),
                ("Parent GPU", f"GPU {gpu.parent_index}"),
                ("UUID", gpu.uuid or na),
            ]
        return [
            ("Memory", f"{text.memory_size_text(gpu)} ({text.memory_text(gpu)})"),
            ("Memory bus", text.bus_width_text(gpu)),
            ("CUDA cores", text.count_text(gpu.cuda_cores)),
            ("Driver", result.driver_version or na),
            ("CUDA", result.cuda_driver_version or na),
            ("Compute cap.", gpu.compute_capability or na),
            ("Processes", text.count_text(gpu.running_process_count)),
            ("SM clock", text.clock_text(gpu.sm_clock_mhz, gpu.sm_clock_max_mhz)),
            ("Mem. clock", text.clock_text(gpu.memory_clock_mhz, gpu.memory_clock_max_mhz)),
            ("Power draw", na if gpu.power_draw_w is None else f"{gpu.power_draw_w:.1f} W"),
            ("Power limit", text.power_limit_text(gpu)),
            ("Temperature", text.temperature_text(gpu).replace(" C", " °C")),
            ("Fan", text.fan_text(gpu)),
            ("ECC", text.on_off(gpu.ecc_enabled)),
            ("MIG", text.mig_text(gpu)),
            ("PCIe", text.pcie_text(gpu)),
            ("Utilization", text.utilization_text(gpu)),
            ("Clock events", text.clock_events_text(gpu)),
            ("PCI bus", f"{gpu.pci_bus_id or na}  (device id {gpu.pci_device_id or na})"),
            ("UUID", gpu.uuid or na),
        ]

    @staticmethod
    def _bus_fields(gpu: GpuSnapshot, result: DetectionResult) -> list[tuple[str, str]]:
        """A GPU found by sysfs, amdsmi or system_profiler: what that source tells."""
        na = text.NA
        found_by = f"{gpu.vendor or 'unknown vendor'}, via {gpu.source.value}"
        if gpu.source is DeviceSource.SYSTEM_PROFILER:
            for_models = na
            if gpu.memory_for_models_mib is not None:
                for_models = (
                    f"{gpu.memory_for_models_mib / 1024:.1f} GiB "
                    "(what macOS lets the GPU wire by default)"
                )
            return [
                ("Memory", f"{text.memory_size_text(gpu)} unified"),
                ("GPU cores", text.count_text(gpu.gpu_core_count)),
                ("OS", result.os_version or na),
                ("For models", for_models),
                ("Found by", found_by),
            ]
        identity = [
            ("Kernel driver", gpu.kernel_driver or "none bound"),
            ("PCIe", text.pcie_text(gpu)),
            ("PCI bus", f"{gpu.pci_bus_id or na}  ({text.pci_ids_text(gpu)})"),
            ("Found by", found_by),
        ]
        if gpu.driver_loaded is False:
            return identity  # without a driver the bus tells nothing more
        return [
            ("Memory", f"{text.memory_size_text(gpu)} ({text.memory_text(gpu)})"),
            ("Kernel driver", gpu.kernel_driver or "none bound"),
            ("Core clock", text.clock_text(gpu.sm_clock_mhz, gpu.sm_clock_max_mhz)),
            ("Mem. clock", text.clock_text(gpu.memory_clock_mhz, gpu.memory_clock_max_mhz)),
            ("Power draw", na if gpu.power_draw_w is None else f"{gpu.power_draw_w:.1f} W"),
            ("Power limit", text.power_limit_text(gpu)),
            ("Temperature", text.temperature_text(gpu).replace(" C", " °C")),
            ("Fan", text.fan_text(gpu)),
            ("PCIe", text.pcie_text(gpu)),
            ("Utilization", text.utilization_text(gpu)),
            ("PCI bus", f"{gpu.pci_bus_id or na}  ({text.pci_ids_text(gpu)})"),
            ("Found by", found_by),
        ]

    def update_live(self, sample: DeviceSample) -> None:
        """Show the monitor's newest reading in the fields that change."""
        if sample.lost:
            self.set_lost()
            return
        live = self.gpu.model_copy(
            update={
                "memory_used_mib": sample.memory_used_mib,
                "memory_free_mib": None,
                "utilization_gpu_percent": sample.utilization_gpu_percent,
                "utilization_memory_percent": sample.utilization_memory_percent,
                "temperature_c": sample.temperature_c,
                "fan_percent": sample.fan_percent,
                "power_draw_w": sample.power_draw_w,
                "sm_clock_mhz": sample.sm_clock_mhz,
            }
        )
        shown = dict(self._fields(live, self._result))
        for name in (*_LIVE_FIELDS, "Core clock"):
            label = self.values.get(name)
            if label is not None and name in shown and label.text() != shown[name]:
                label.setText(shown[name])

    def _compare(self) -> None:
        """Add the matched entry to Compare, and say on the button what happened."""
        catalog_id = self.match.catalog_id
        if catalog_id is None:
            return
        already = catalog_id in self.state.compare_ids
        self.compare_clicked.emit(catalog_id)
        if catalog_id in self.state.compare_ids:
            self.compare_button.setText("In Compare ✓")
            self.compare_button.setToolTip(
                f"{catalog_id} was already in the Compare tab"
                if already
                else f"Added {catalog_id} to the Compare tab"
            )
        else:
            self.compare_button.setToolTip("Compare is full (6 GPUs): remove one there first")

    def _restyle_header(self, *_args: object) -> None:
        """The title's swatch and the red words in the current theme's colours."""
        swatch = ""
        if self._color_position is not None:
            color = device_color(self._color_position, dark=theme.is_dark()).name()
            swatch = f'<span style="color:{color}">&#9632;</span> '
        error = theme.error_color().name()
        state_text = ""
        if self.gpu.driver_loaded is False:
            state_text = f' <b style="color:{error}">driver not loaded</b>'
        self.title.setText(f"{swatch}<b>{escape(self.gpu.label)}</b>{state_text}")
        self.lost_badge.setText(f'<b style="color:{error}">LOST</b>')

    def set_lost(self) -> None:
        """Mark the device lost (it stopped answering while monitored)."""
        self.lost_badge.show()
        self.setProperty("lost", True)
        self.style().unpolish(self)
        self.style().polish(self)

    @property
    def is_lost(self) -> bool:
        return self.lost_badge.isVisibleTo(self)


class DiagnosisPanel(QFrame):
    """Why NVML cannot be used (or a GPU was lost) and what to do about it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("diagnosis")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 10)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.works = QLabel(
            "Everything else works without a GPU: the catalog, comparisons, planning, "
            "PDF reports and the CPU benchmark."
        )
        self.works.setWordWrap(True)
        for widget in (self.title, self.hint, self.detail, self.works):
            layout.addWidget(widget)
        theme.notifier().changed.connect(self._restyle)
        self._restyle()

    def _restyle(self, *_args: object) -> None:
        background, foreground = theme.banner_colors()
        self.setStyleSheet(
            f"QFrame#diagnosis {{ background: {background.name()}; color: {foreground.name()};"
            f" border: 1px solid #d4a017; border-radius: 6px; }}"
            f" QFrame#diagnosis QLabel {{ color: {foreground.name()}; background: transparent; }}"
        )

    def show_result(self, result: DetectionResult) -> None:
        usable = bool(result.usable_gpus)
        # The summary line above already says "No GPU detected": the title gives the cause.
        self.title.setText(f"<b>{escape(title_for(result.status))}</b>")
        self.hint.setText(plain_words(result.hint))
        # The raw status code is for bug reports: the title above already says it in words.
        self.detail.setText(f"Technical detail: {result.detail}" if result.detail else "")
        self.detail.setVisible(bool(result.detail))
        self.works.setVisible(not usable)

    def show_failure(self, message: str) -> None:
        self.title.setText("<b>Detection failed</b>")
        self.hint.setText("Press Refresh to try again; “gpudesk detect” runs the same check.")
        self.detail.setText(message)
        self.works.setVisible(True)


__all__ = ["DeviceCard", "DiagnosisPanel", "card_style", "escape"]
