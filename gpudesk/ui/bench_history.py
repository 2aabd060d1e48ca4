"""The Benchmark panel's history: past runs, local and imported, and the import of a run file."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from gpudesk.bench.history import HistoryItem, import_run, list_runs
from gpudesk.bench.results import ResultFileError
from gpudesk.bench.text import format_figure
from gpudesk.render.text import plain_tooltip
from gpudesk.ui import theme
from gpudesk.ui.words import flops_scale


class HistoryBox(QGroupBox):
    """The saved runs, newest first, with "Import JSON…" and "Use in Compare".

    Args:
        folder: where runs are saved; the user data folder when None.
        parent: the parent widget.

    Signals:
        result_chosen(object): the user picked a run; its :class:`BenchResult`.
    """

    result_chosen = Signal(object)

    def __init__(self, folder: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__("History", parent)
        self.folder = folder
        self.items: list[HistoryItem] = []
        history_layout = QVBoxLayout(self)
        self.history_list = QListWidget()
        self.history_list.setAccessibleName("Saved benchmark runs, newest first")
        self.history_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.history_list.setWordWrap(True)
        self.history_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.history_list.setSpacing(1)
        self.history_list.currentItemChanged.connect(self._on_selected)
        history_layout.addWidget(self.history_list, 1)
        self.empty_label = QLabel(
            "No runs yet. Each benchmark run is kept here; Import JSON… shows one from "
            "another machine."
        )
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        history_layout.addWidget(self.empty_label, 1)
        history_buttons = QHBoxLayout()
        self.import_button = QPushButton("Import JSON…")
        self.import_button.setToolTip(
            "Show a run saved with \u201cgpudesk bench --json\u201d on another machine"
        )
        self.import_button.clicked.connect(self._choose_import)
        self.measured_button = QPushButton("Use in Compare")
        self.measured_button.setToolTip(
            "Show this run as the \u201cthis machine (measured)\u201d series in Compare"
        )
        history_buttons.addWidget(self.import_button)
        history_buttons.addWidget(self.measured_button)
        history_layout.addLayout(history_buttons)
        self.message = QLabel("")
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # file names, never markup
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        theme.follow_error_color(self.message)
        self.message.hide()
        # Its place is kept, four lines high, shown or not (a longer message scrolls):
        # a failed import's message must not shrink the list above it.
        self.message.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.message_area = QScrollArea()
        self.message_area.setWidget(self.message)
        self.message_area.setWidgetResizable(True)
        # The box shows through (the scroll area would paint the label's own
        # background, which a live theme switch left light).
        self.message.setAutoFillBackground(False)
        self.message_area.viewport().setAutoFillBackground(False)
        self.message_area.setFrameShape(QFrame.Shape.NoFrame)
        self.message_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.message_area.setFixedHeight(4 * self.message.fontMetrics().lineSpacing() + 6)
        history_layout.addWidget(self.message_area)
        self.refresh()

    def refresh(self, select: Path | None = None) -> None:
        """Reload the history list; select ``select`` (a saved file) if given."""
        items, problems = list_runs(self.folder)
        self.items = items
        self.history_list.blockSignals(True)
        self.history_list.clear()
        for item in items:
            entry = QListWidgetItem(history_text(item))
            entry.setData(Qt.ItemDataRole.UserRole, str(item.path))
            tip = item.result.imported_from and f"imported from {item.result.imported_from}"
            entry.setToolTip(plain_tooltip(tip or str(item.path)))
            self.history_list.addItem(entry)
        self.history_list.blockSignals(False)
        # An empty white box reads as broken: say what will be listed.
        self.history_list.setVisible(bool(items))
        self.empty_label.setVisible(not items)
        if problems:
            shown = "\n".join(str(problem) for problem in problems[:3])
            more = f"\n(and {len(problems) - 3} more)" if len(problems) > 3 else ""
            self.show_message(f"{len(problems)} history file(s) could not be read:\n{shown}{more}")
        else:
            self.show_message("")
        if select is not None:
            for row, item in enumerate(items):
                if item.path == select:
                    self.history_list.setCurrentRow(row)
                    return

    def _on_selected(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is None:
            return
        path = current.data(Qt.ItemDataRole.UserRole)
        found = next((item for item in self.items if str(item.path) == path), None)
        if found is not None:
            self.result_chosen.emit(found.result)

    def show_message(self, text: str, *, tip: str = "") -> None:
        self.message.setText(text)
        self.message.setToolTip(plain_tooltip(tip) if tip else "")
        self.message.setVisible(bool(text))

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
            item = import_run(path, self.folder)
        except ResultFileError as exc:
            # The file by name, then the field in words ("results.0.value" was the raw
            # validator path); the whole path is the message's tooltip.
            self.show_message(
                f"Not imported: {path.name}\n{field_words(exc.field)}: {exc.message}",
                tip=str(path),
            )
            return None
        except OSError as exc:
            self.show_message(f"Not imported: cannot save to the history: {exc}")
            return None
        self.refresh(select=item.path)
        return item


def field_words(field: str) -> str:
    """A validator's field path in words: "results.0.value" -> "results, row 1: value";
    an empty path (the file as a whole) -> "the file"."""
    words: list[str] = []
    for part in (part for part in field.split(".") if part):
        if part.isdigit() and words:
            words[-1] = f"{words[-1]}, row {int(part) + 1}"
        else:
            words.append(part.replace("_", " "))
    return " › ".join(words) or "the file"


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
        if best is None or best.value is None:
            headline = ""
        else:
            factor, unit = flops_scale(best.value, "TFLOPS")
            headline = f"{best.label} {format_figure(best.value * factor)} {unit}"
    return f"{first}\n{result.device_name}" + (f" — {headline}" if headline else "")
