"""File → Export comparison…: the PDF report of the compare selection.

The dialog collects a file name, the paper size and whether to include this
machine; the charts are drawn on the GUI thread (Qt graphics scenes must be),
and the rest of the export (detection, layout, painting, the atomic write)
runs on a :class:`~gpudesk.ui.worker.TaskWorker` behind a progress dialog
with Cancel. When it is done the user is offered "Open the PDF".

Nothing here blocks in a nested event loop: the dialog and its message boxes
are opened with ``open()``, so tests (and the window) keep running.
"""

from __future__ import annotations

import datetime as dt
import errno
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, QStandardPaths, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.limits import MAX_COMPARED, MIN_COMPARED, is_comparable_count
from gpudesk.compare.radar import DEFAULT_RADAR_AXES, NormalisationChoice
from gpudesk.fleet.document import SurveyView
from gpudesk.progress import Progress
from gpudesk.report.pdf import ReportCharts, prepare_charts, write_pdf_report
from gpudesk.storage import UnsafeTargetError, check_writable
from gpudesk.ui.worker import TaskWorker

TITLE = "Export comparison"
_SETTINGS_FOLDER = "export/folder"
_SETTINGS_PAPER = "export/paper"
_SETTINGS_LOCAL = "export/include_local"
PAPERS = (("A4", "a4"), ("Letter", "letter"))

TOO_FEW_TEXT = (
    f"A report compares {MIN_COMPARED} to {MAX_COMPARED} GPUs, and {{count}} {{verb}} selected.\n\n"
    'In the Catalog tab, select a GPU and choose "Add selected to compare" '
    "(Ctrl+D, or the compare column's check box); repeat for each GPU, then "
    "export again."
)


def open_path(path: Path) -> bool:
    """Open a file with the desktop's viewer (a seam for tests)."""
    return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))))


def default_file_name(today: dt.date | None = None) -> str:
    return f"gpu-comparison-{(today or dt.date.today()).isoformat()}.pdf"


def check_target(text: str) -> tuple[Path | None, str]:
    """The PDF path for what the user typed, or why it cannot be written.

    A missing ".pdf" is added. Returns ``(path, "")`` or ``(None, reason)``.
    """
    text = text.strip()
    if not text:
        return None, "Choose a file to write the report to."
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~nosuchuser/x.pdf": no such home folder
        user = text[1:].split("/", 1)[0]
        return None, f"Cannot write {text[:120]}: there is no user {user[:60]!r} for ~{user[:60]}."
    if not path.name or path.name in (".", ".."):
        return None, "Choose a file name, not only a folder."
    if path.suffix.lower() != ".pdf":
        path = path.with_name(path.name + ".pdf")
    try:
        check_writable(path)
    except UnsafeTargetError as exc:
        if exc.errno == errno.EISDIR:
            return None, f"Cannot write {_shown(path)}: it is a folder."
        return None, f"Cannot write {_shown(path)}: {exc.strerror}."
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if reason.startswith("folder "):
            reason = "the " + reason
        return None, f"Cannot write {_shown(path)}: {reason}."
    except ValueError:  # a NUL character
        return None, "Cannot write there: the name holds a character no file name can."
    return path, ""


def _shown(path: Path, limit: int = 120) -> str:
    """The path for a message, its middle elided when long (a 300-character name)."""
    text = str(path)
    if len(text) <= limit:
        return text
    return text[: limit // 2 - 1] + "…" + text[-(limit // 2) :]


class ExportDialog(QDialog):
    """Options and progress of one PDF export.

    Signals:
        exported(str): the report was written to this path.
        export_failed(str): the export failed; the message names the path.
        export_cancelled(): the user cancelled; nothing was written.
    """

    exported = Signal(str)
    export_failed = Signal(str)
    export_cancelled = Signal()

    def __init__(
        self,
        entries: Sequence[CatalogEntry],
        catalog: Catalog,
        settings: QSettings | None = None,
        parent: QWidget | None = None,
        fleet: SurveyView | None = None,
        speed: object | None = None,
        radar_axes: Sequence[str] | None = None,
        radar_normalisation: NormalisationChoice | None = None,
    ) -> None:
        super().__init__(parent)
        #: The radar as the Compare tab shows it (axes, outer ring, scale); None: defaults.
        self.radar_axes = list(radar_axes) if radar_axes is not None else None
        self.radar_normalisation = radar_normalisation
        self.setWindowTitle(TITLE)
        self.fleet = fleet
        #: the Plan tab's "How fast?" workload (a planner.SpeedWorkload), or None
        self.speed = speed
        self.entries = list(entries)
        self.catalog = catalog
        self.settings = settings
        self.worker: TaskWorker | None = None
        self.progress_dialog: QProgressDialog | None = None
        #: The last message box shown (done, failed): tests read it.
        self.message_box: QMessageBox | None = None
        self._succeeded = False
        #: The export function; a seam for tests.
        self.export_function: Callable[..., None] = write_pdf_report

        names = ", ".join(entry.name for entry in self.entries)
        summary = QLabel(f"A PDF report comparing {len(self.entries)} GPUs: {names}.")
        summary.setTextFormat(Qt.TextFormat.PlainText)  # GPU names, never markup
        summary.setWordWrap(True)

        self.path_edit = QLineEdit()
        self.path_edit.setMinimumWidth(380)
        self.path_edit.setText(str(self._default_folder() / default_file_name()))
        self.path_edit.textChanged.connect(self._update_hint)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self.browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(browse)

        self.paper_combo = QComboBox()
        for label, key in PAPERS:
            self.paper_combo.addItem(label, key)
        saved_paper = str(self._setting(_SETTINGS_PAPER, "a4"))
        self.paper_combo.setCurrentIndex(max(0, self.paper_combo.findData(saved_paper)))

        self.local_check = QCheckBox("Include this machine (detected GPUs, latest benchmark)")
        self.local_check.setChecked(str(self._setting(_SETTINGS_LOCAL, "false")) == "true")

        self.fleet_check = QCheckBox("Include the fleet survey shown in the Fleet tab")
        self.fleet_check.setChecked(fleet is not None)
        self.fleet_check.setVisible(fleet is not None)

        self.speed_check = QCheckBox(
            f"Include how fast: {getattr(speed, 'label', '')}" if speed is not None else ""
        )
        self.speed_check.setChecked(speed is not None)
        self.speed_check.setVisible(speed is not None)

        shown = (radar_normalisation or NormalisationChoice()).describe()
        where = "as on the Compare tab" if radar_normalisation is not None else "default"
        self.radar_label = QLabel(
            f"Radar ({where}): {shown}; {len(self.radar_axes or DEFAULT_RADAR_AXES)} axes"
        )
        self.radar_label.setWordWrap(True)
        self.radar_label.setTextFormat(Qt.TextFormat.PlainText)
        self.radar_label.setToolTip(
            "The PDF's radar uses the axes, outer ring and scale chosen on the Compare tab"
        )

        self.hint_label = QLabel()
        self.hint_label.setWordWrap(True)
        self.hint_label.setTextFormat(Qt.TextFormat.PlainText)

        form = QFormLayout()
        form.addRow("File:", path_row)
        form.addRow("Paper:", self.paper_combo)
        form.addRow("Charts:", self.radar_label)
        form.addRow("", self.local_check)
        if fleet is not None:
            form.addRow("", self.fleet_check)
        if speed is not None:
            form.addRow("", self.speed_check)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = self.buttons.addButton(
            "Export", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.export_button.setDefault(True)
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addLayout(form)
        layout.addWidget(self.hint_label)
        layout.addWidget(self.buttons)
        self._update_hint()

    # options -------------------------------------------------------------
    def _setting(self, key: str, default: Any) -> Any:
        if self.settings is None:
            return default
        return self.settings.value(key, default)

    def _default_folder(self) -> Path:
        saved = self._setting(_SETTINGS_FOLDER, "")
        if saved and Path(str(saved)).is_dir():
            return Path(str(saved))
        documents = QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation
        )
        if documents and Path(documents).is_dir():
            return Path(documents)
        return Path.home()

    def set_path(self, path: Path | str) -> None:
        self.path_edit.setText(str(path))

    def set_paper(self, paper: str) -> None:
        index = self.paper_combo.findData(paper)
        if index < 0:
            raise ValueError(f"unknown paper size {paper!r}")
        self.paper_combo.setCurrentIndex(index)

    def paper(self) -> str:
        return str(self.paper_combo.currentData())

    def browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save the report as", self.path_edit.text(), "PDF files (*.pdf)"
        )
        if path:
            self.path_edit.setText(path)

    def _update_hint(self) -> None:
        path, problem = check_target(self.path_edit.text())
        if problem:
            self.hint_label.setText(problem)
        elif path is not None and path.is_file():
            self.hint_label.setText(f"{path.name} exists and will be replaced.")
        else:
            self.hint_label.setText("")

    # the export ----------------------------------------------------------
    def is_running(self) -> bool:
        return self.worker is not None

    def start(self) -> bool:
        """Check the options and start the export; False (and a message) if it cannot."""
        if self.worker is not None:
            return False
        path, problem = check_target(self.path_edit.text())
        if path is None:
            self._show_error(problem)
            return False
        paper = self.paper()
        include_local = self.local_check.isChecked()
        try:
            # Qt graphics scenes live on the GUI thread: record the charts here
            # (a fraction of a second), then do the rest on the worker.
            charts = prepare_charts(
                self.entries,
                self.catalog,
                paper=paper,
                radar_axes=self.radar_axes,
                radar_normalisation=self.radar_normalisation,
            )
        except Exception as exc:  # a chart bug must not crash the app
            self._show_error(f"Cannot draw the charts for the report: {exc}")
            return False
        self._remember(path, paper, include_local)
        self._succeeded = False
        self.worker = TaskWorker(self._task(path, paper, include_local, charts), owner=self)
        self.worker.progressed.connect(self._on_progress)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)
        self.worker.done.connect(self._on_done)
        self._show_progress(path)
        self.export_button.setEnabled(False)
        self.worker.start()
        return True

    def _task(
        self, path: Path, paper: str, include_local: bool, charts: ReportCharts
    ) -> Callable[[Progress], object]:
        entries = list(self.entries)
        catalog = self.catalog
        export = self.export_function
        # Passed only when asked for: the export seam's other callers know no fleet.
        extra: dict[str, object] = (
            {"fleet": self.fleet} if self.fleet is not None and self.fleet_check.isChecked() else {}
        )
        if self.speed is not None and self.speed_check.isChecked():
            extra["speed"] = self.speed

        def run(progress: Progress) -> object:
            try:
                export(
                    entries,
                    path,
                    catalog=catalog,
                    paper=paper,
                    include_local=include_local,
                    progress=progress,
                    charts=charts,
                    **extra,
                )
            except OSError as exc:
                raise RuntimeError(f"Cannot write {path}: {exc.strerror or exc}") from exc
            return str(path)

        return run

    def _remember(self, path: Path, paper: str, include_local: bool) -> None:
        if self.settings is None:
            return
        self.settings.setValue(_SETTINGS_FOLDER, str(path.parent))
        self.settings.setValue(_SETTINGS_PAPER, paper)
        self.settings.setValue(_SETTINGS_LOCAL, "true" if include_local else "false")

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def _show_progress(self, path: Path) -> None:
        dialog = QProgressDialog(f"Writing {path.name}…", "Cancel", 0, 100, self)
        dialog.setWindowTitle(TITLE)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        # Short exports finish before it would flash up.
        dialog.setMinimumDuration(400)
        dialog.canceled.connect(self.cancel)
        dialog.setValue(0)
        self.progress_dialog = dialog

    def _on_progress(self, fraction: float, message: str) -> None:
        dialog = self.progress_dialog
        if dialog is not None:
            # Label first: a modal QProgressDialog's setValue() processes events,
            # in which the export may finish and close the dialog.
            dialog.setLabelText(message[:1].upper() + message[1:] + "…")
            dialog.setValue(round(fraction * 100))

    def _close_progress(self) -> None:
        dialog = self.progress_dialog
        self.progress_dialog = None
        if dialog is not None:
            dialog.canceled.disconnect(self.cancel)
            dialog.hide()
            dialog.deleteLater()

    def _on_finished(self, result: object) -> None:
        self._close_progress()
        path = Path(str(result))
        box = QMessageBox(self.parentWidget() or self)
        box.setWindowTitle(TITLE)
        box.setIcon(QMessageBox.Icon.Information)
        box.setText(f"The report was written to {path}.")
        open_button = box.addButton("Open the PDF", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Close)
        box.setDefaultButton(open_button)
        open_button.clicked.connect(lambda: open_path(path))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.message_box = box
        box.open()
        self._succeeded = True
        self.exported.emit(str(path))

    def _on_failed(self, message: str) -> None:
        self._close_progress()
        self._show_error(f"The report was not written. {message}")
        self.export_failed.emit(message)

    def _on_cancelled(self) -> None:
        self._close_progress()
        self.hint_label.setText("Export cancelled; nothing was written.")
        self.export_cancelled.emit()

    def _on_done(self) -> None:
        self.worker = None
        self.export_button.setEnabled(True)
        if self._succeeded:  # close only now: the worker's thread has ended
            self.accept()

    def _show_error(self, text: str) -> None:
        box = QMessageBox(self)
        box.setWindowTitle(TITLE)
        box.setIcon(QMessageBox.Icon.Critical)
        box.setText(text)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.message_box = box
        box.open()

    def reject(self) -> None:
        """Close; a running export is cancelled first (nothing is written)."""
        if self.worker is not None:
            self.worker.shutdown()
        super().reject()


def run_export_dialog(window: QWidget) -> QDialog:
    """Open the export dialog for ``window.state``'s compare selection.

    With fewer than 2 GPUs selected it opens a message saying how to select
    them instead. Both are opened without blocking and returned.
    """
    state = getattr(window, "state")  # noqa: B009 - the MainWindow's AppState
    entries = state.compare_entries()
    if not is_comparable_count(len(entries)):
        box = QMessageBox(window)
        box.setWindowTitle(TITLE)
        box.setIcon(QMessageBox.Icon.Information)
        count = len(entries)
        box.setText(TOO_FEW_TEXT.format(count=count, verb="is" if count == 1 else "are"))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box
    settings = getattr(window, "settings", None)
    # Export what is on screen: the Compare tab's radar axes, outer ring and scale.
    radar_axes: list[str] | None = None
    radar_normalisation: NormalisationChoice | None = None
    built = getattr(window, "built_views", None)
    compare = built().get("Compare") if callable(built) else None
    if compare is not None and hasattr(compare, "normalisation_choice"):
        radar_normalisation = compare.normalisation_choice()
        radar_axes = compare.axis_picker.checked_axes() or None
    dialog = ExportDialog(
        entries,
        state.catalog,
        settings=settings if isinstance(settings, QSettings) else None,
        parent=window,
        fleet=state.fleet_survey,
        speed=state.speed_workload,
        radar_axes=radar_axes,
        radar_normalisation=radar_normalisation,
    )
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
