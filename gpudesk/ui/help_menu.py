"""The main window's Help menu: About, keyboard shortcuts, the README, how the figures
were sourced and where to report a problem (:class:`HelpWindow`, the main window's base)."""

from __future__ import annotations

import html
import platform
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMessageBox

from gpudesk.ui.state import AppState


def open_url(url: QUrl) -> bool:
    """Open a URL with the desktop (a seam for tests)."""
    return bool(QDesktopServices.openUrl(url))


def _distribution_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def about_versions() -> list[tuple[str, str]]:
    """(component, version) pairs for Help → About; imports nothing heavy."""
    import PySide6

    from gpudesk import __version__

    return [
        ("GPUDesk", __version__),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("pyqtgraph", _distribution_version("pyqtgraph")),
        # The binding's own version, read without importing pynvml (only the
        # NVML module may import it, and importing it is not free).
        ("NVML binding (nvidia-ml-py)", _distribution_version("nvidia-ml-py")),
        ("Python", platform.python_version()),
    ]


class HelpWindow(QMainWindow):
    """A main window with the Help menu's boxes; the subclass sets ``state``."""

    state: AppState
    #: the last Help box opened (tests read its text)
    last_help_box: QMessageBox | None

    def about_html(self) -> str:
        """Help → About: what GPUDesk is, the catalog's date and size, the versions."""
        rows = "".join(
            f"<tr><td>{name}</td><td style='padding-left:12px'>{version}</td></tr>"
            for name, version in about_versions()
        )
        catalog = self.state.catalog
        date = catalog.catalog_date.isoformat() if catalog.catalog_date else "date unknown"
        return (
            "<h3>GPUDesk</h3><p>Choose, compare and check GPUs for machine learning.</p>"
            f"<p>Catalog of {date}: {len(catalog.entries)} GPUs. Prices and cloud rates "
            "seen more than a year ago are marked as possibly out of date.</p>"
            f"<table>{rows}</table>"
        )

    def shortcuts_text(self) -> str:
        """Every window shortcut, one per line: what Help → Keyboard shortcuts shows."""
        lines = []
        for item in self.actions():
            keys = " or ".join(
                key.toString(QKeySequence.SequenceFormat.NativeText) for key in item.shortcuts()
            )
            if keys:
                lines.append(f"{keys}\t{item.text().rstrip('…')}")
        return "\n".join(lines)

    def show_shortcuts(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("Keyboard shortcuts")
        box.setTextFormat(Qt.TextFormat.RichText)
        rows = "".join(
            f"<tr><td style='padding-right:16px'><b>{html.escape(keys)}</b></td>"
            f"<td>{html.escape(what)}</td></tr>"
            for keys, _, what in (
                line.partition("\t") for line in self.shortcuts_text().splitlines()
            )
        )
        box.setText(f"<table>{rows}</table>")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.last_help_box = box

    def readme_path(self) -> Path | None:
        """The README next to the package (a checkout or an editable install), if any."""
        import gpudesk

        candidate = Path(gpudesk.__file__).resolve().parents[1] / "README.md"
        return candidate if candidate.is_file() else None

    def open_readme(self) -> None:
        path = self.readme_path()
        if path is not None and open_url(QUrl.fromLocalFile(str(path))):
            return
        box = QMessageBox(self)
        box.setWindowTitle("README and documentation")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(
            "The README is in the GPUDesk checkout this copy was installed from "
            "(README.md, docs/). Every command explains itself: run 'gpudesk --help' "
            "or 'gpudesk COMMAND --help'."
            + (f"\n\nIt could not be opened: {path}" if path is not None else "")
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.last_help_box = box

    def show_sourcing(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("How these figures were sourced")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(
            "Every catalog figure comes from the sources listed with its GPU: vendor "
            "datasheets and whitepapers first, then spec databases. Tensor-core rates are "
            "dense (no 2:4 sparsity); a sparse rate is only ever dense × the stated factor. "
            "Every price has the date it was seen and its kind (launch MSRP, street, used, "
            "estimate); cloud rates name the provider, kind, date and pricing page. Figures "
            "computed from others say how in the GPU's details pane, under 'How these "
            "figures were sourced'. Benchmarks say what they measured and how."
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.last_help_box = box

    def show_report_problem(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("Report a problem")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(
            "Tell whoever maintains your copy of GPUDesk (the project you cloned or the "
            "team that installed it) what you did, what you expected and what happened. "
            "Include the output of:\n\n"
            "  gpudesk --version\n  gpudesk detect --json\n  gpudesk doctor --json\n\n"
            "A wrong catalog figure: name the GPU and the field, and a source (a datasheet "
            "page) for the right value."
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.last_help_box = box

    def show_about(self) -> None:
        QMessageBox.about(self, "About GPUDesk", self.about_html())
