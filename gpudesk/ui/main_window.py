"""The main window: tabs for the catalog, compare, this machine and planning.

Its menus and shortcuts are :mod:`gpudesk.ui.window_menus`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QUrl
from PySide6.QtGui import (
    QCloseEvent,
    QGuiApplication,
)
from PySide6.QtWidgets import (
    QLabel,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.loader import Catalog, load_catalog
from gpudesk.paths import user_catalog_dir
from gpudesk.progress import Progress
from gpudesk.ui import theme
from gpudesk.ui.accessible import make_accessible
from gpudesk.ui.help_menu import about_versions, open_url
from gpudesk.ui.problems_banner import ProblemsBanner
from gpudesk.ui.settings import LoadedSettings, load_settings
from gpudesk.ui.state import AppState
from gpudesk.ui.window_menus import SETTINGS_THEME, MenuWindow
from gpudesk.ui.worker import TaskWorker

#: Builds a tab's view: ``(state, parent) -> view``.
ViewBuilder = Callable[[AppState, QWidget], QWidget]


# Each view is imported inside its builder, on the tab's first show: start-up pays
# only for the first screen (tests/ui/test_startup_imports.py checks it).
def _catalog_view(state: AppState, parent: QWidget) -> QWidget:
    from gpudesk.ui.catalog_view import CatalogView

    return CatalogView(state, parent)


def _compare_view(state: AppState, parent: QWidget) -> QWidget:
    from gpudesk.ui.compare_view import CompareView

    return CompareView(state, parent)


def _machine_tab(state: AppState, parent: QWidget) -> QWidget:
    from gpudesk.ui.machine_tab import MachineTab

    return MachineTab(state, parent)


def _plan_view(state: AppState, parent: QWidget) -> QWidget:
    from gpudesk.ui.plan.view import PlanView

    return PlanView(state, parent)


def _fleet_view(state: AppState, parent: QWidget) -> QWidget:
    from gpudesk.ui.fleet_view import FleetView

    return FleetView(state, parent)


#: (tab title, builder) — views are imported and built on first show.
TAB_VIEWS: tuple[tuple[str, ViewBuilder], ...] = (
    ("Catalog", _catalog_view),
    ("Compare", _compare_view),
    ("This machine", _machine_tab),
    ("Plan", _plan_view),
    ("Fleet", _fleet_view),
)

_SETTINGS_GEOMETRY = "window/geometry"
_SETTINGS_COMPARE = "compare/ids"

__all__ = ["TAB_VIEWS", "MainWindow", "about_versions", "open_url"]


class _LazyTab(QWidget):
    """Holds a tab's place until it is first shown."""

    def __init__(self, build: ViewBuilder, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.build = build
        self.view: QWidget | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    def ensure_built(self, state: AppState) -> tuple[QWidget, bool]:
        """The view, and whether this call built it."""
        if self.view is not None:
            return self.view, False
        try:
            self.view = self.build(state, self)
        except ImportError as exc:
            self.view = QLabel(f"This view is not available: {exc}")
        self._layout.addWidget(self.view)
        return self.view, True


class MainWindow(MenuWindow):
    """GPUDesk's main window.

    Args:
        state: shared state; by default the bundled, user and ``extra_dirs`` catalogs.
        extra_dirs: extra catalog folders (``--catalog``).
        settings: where layout, filters, selection and theme persist; by
            default :func:`gpudesk.ui.settings.open_settings`.
    """

    def __init__(
        self,
        state: AppState | None = None,
        extra_dirs: Sequence[Path] = (),
        parent: QWidget | None = None,
        *,
        settings: QSettings | None = None,
    ) -> None:
        super().__init__(parent)
        # A live theme change repolishes this window and its children only.
        theme.own_window(self)
        self.setWindowTitle("GPUDesk")
        loaded = LoadedSettings(settings) if settings is not None else load_settings()
        self.settings = loaded.settings
        #: What was wrong with the settings file, said once in the settings banner.
        self.settings_problems: list[str] = list(loaded.problems)
        self._restore_step("theme", self._restore_theme)
        self.state = state if state is not None else AppState(extra_dirs=extra_dirs)
        self._restore_step("compare selection", self._restore_compare)
        self._reload_worker: TaskWorker | None = None
        self._detect_worker: TaskWorker | None = None
        #: False for runs that must leave the user's settings as they were
        #: (``--startup-check``, a packager's smoke test).
        self.save_on_close = True
        self._said_unsaved = not loaded.saveable  # already said at start-up

        #: The last Help box opened (shortcuts, README, sourcing, report): tests read it.
        self.last_help_box: QMessageBox | None = None
        self.banner = ProblemsBanner()
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self._lazy_tabs: list[_LazyTab] = []
        for title, build in TAB_VIEWS:
            tab = _LazyTab(build)
            self._lazy_tabs.append(tab)
            self.tabs.addTab(tab, title)
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.banner)
        self.settings_banner = ProblemsBanner()
        self.settings_banner.setObjectName("problems_banner")
        central_layout.addWidget(self.settings_banner)
        central_layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self.count_label = QLabel()
        self.statusBar().addPermanentWidget(self.count_label)
        self._build_actions()
        self._build_menus()

        self.setMinimumSize(900, 600)
        self.resize(1400, 860)
        self._restore_step("window geometry", self._restore_geometry)
        self.fit_to_screen()

        self.banner.set_problems(self.state.catalog.problems)
        self.state.entry_requested.connect(self.show_entry)
        self.state.catalog_changed.connect(self._on_catalog_changed)
        self.tabs.currentChanged.connect(self._build_current_tab)
        self._build_current_tab(self.tabs.currentIndex())
        self._show_settings_problems()

    def fit_to_screen(self) -> None:
        """Keep the window (and its status bar) on the screen's available area.

        The default 1400x860, or a size saved on a bigger monitor, would put
        the status bar and scroll bars off a 1366x768 laptop screen.
        """
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        available = screen.availableGeometry()
        self.setMinimumSize(
            min(self.minimumWidth(), available.width()),
            min(self.minimumHeight(), available.height()),
        )
        frame = self.frameGeometry()
        extra_w = max(0, frame.width() - self.width())
        extra_h = max(0, frame.height() - self.height())
        width = min(self.width(), available.width() - extra_w)
        height = min(self.height(), available.height() - extra_h)
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
        frame = self.frameGeometry()
        x = min(max(frame.x(), available.x()), available.right() - frame.width() + 1)
        y = min(max(frame.y(), available.y()), available.bottom() - frame.height() + 1)
        if (x, y) != (frame.x(), frame.y()):
            self.move(x, y)

    # tabs ------------------------------------------------------------------
    def _build_current_tab(self, index: int) -> None:
        if not 0 <= index < len(self._lazy_tabs):
            return
        view, built = self._lazy_tabs[index].ensure_built(self.state)
        if built:
            self._wire_view(TAB_VIEWS[index][0], view)
        else:
            # Controls made since (device cards, a plan page's rows) get their names too.
            make_accessible(view, TAB_VIEWS[index][0])

    def _wire_view(self, title: str, view: QWidget) -> None:
        """Connect a freshly built view to the window."""
        from gpudesk.ui.catalog_view import CatalogView

        if isinstance(view, CatalogView):
            view.counts_changed.connect(self._show_counts)
            view.status_message.connect(lambda text: self.statusBar().showMessage(text, 5000))
            view.compare_tab_requested.connect(lambda: self.show_tab("Compare"))
            self._restore_step(
                "catalog layout and filters", lambda: view.restore_settings(self.settings)
            )
            self._show_counts(view.visible_count(), len(self.state.entries()))
        if title == "Compare":
            self._detect_this_machine()
            charts = getattr(view, "charts", None)
            if charts is not None:
                self._restore_step("chart choices", lambda: charts.restore_settings(self.settings))
        if title == "Fleet":
            from gpudesk.ui.fleet_view import FleetView

            if isinstance(view, FleetView):
                view.status_message.connect(lambda text: self.statusBar().showMessage(text, 8000))
                view.compare_tab_requested.connect(lambda: self.show_tab("Compare"))
        make_accessible(view, title)
        fit_signal = getattr(view, "fit_filter_requested", None)
        if fit_signal is not None:
            # The Plan tab asks for "fits my workload": filter the catalog and show it.
            fit_signal.connect(self._apply_fit_filter)

    def _detect_this_machine(self) -> None:
        """Detect the local GPUs once, off the GUI thread, for the compare view's
        "Add this machine's GPU"; NVML is loaded here, on first use, not at start-up."""
        if self._detect_worker is not None or self.state.detected_catalog_ids:
            return
        from gpudesk.ui.detection import detect_in_background

        self._detect_worker = detect_in_background(self.state)

    def view(self, title: str) -> QWidget:
        """The view of a tab by title, built if needed (for tests and wiring)."""
        for index, (tab_title, _) in enumerate(TAB_VIEWS):
            if tab_title == title:
                view, built = self._lazy_tabs[index].ensure_built(self.state)
                if built:
                    self._wire_view(tab_title, view)
                return view
        raise KeyError(title)

    def built_views(self) -> dict[str, QWidget]:
        """The views built so far, by tab title."""
        return {
            title: tab.view
            for (title, _), tab in zip(TAB_VIEWS, self._lazy_tabs, strict=True)
            if tab.view is not None
        }

    def show_tab(self, title: str) -> None:
        for index, (tab_title, _) in enumerate(TAB_VIEWS):
            if tab_title == title:
                self.tabs.setCurrentIndex(index)
                return
        raise KeyError(title)

    def catalog_view(self) -> QWidget:
        return self.view("Catalog")

    def show_entry(self, entry_id: str) -> None:
        """Switch to the catalog and select ``entry_id``."""
        from gpudesk.ui.catalog_view import CatalogView

        self.show_tab("Catalog")
        view = self.view("Catalog")
        if isinstance(view, CatalogView):
            view.select_entry(entry_id)

    def _apply_fit_filter(self, entry_ids: object) -> None:
        if entry_ids is None:
            self.state.set_fit_filter(None)
            return
        if isinstance(entry_ids, (set, frozenset, list, tuple)):
            self.state.set_fit_filter(str(entry_id) for entry_id in entry_ids)
            self.show_tab("Catalog")

    def _show_counts(self, visible: int, total: int) -> None:
        self.count_label.setText(f"{visible} of {total} GPUs")

    def open_user_catalog_folder(self) -> Path:
        """Create the user's catalog folder if needed and open it in the file manager."""
        folder = user_catalog_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            QMessageBox.warning(self, "GPUDesk", f"Cannot create {folder}: {exc.strerror or exc}")
            return folder
        if not open_url(QUrl.fromLocalFile(str(folder))):
            QMessageBox.information(
                self,
                "GPUDesk",
                f"Your catalog folder is {folder}\n(no file manager could be opened).",
            )
        return folder

    def export_comparison(self) -> None:
        # Imported on first use: the dialog brings the report and its charts.
        try:
            from gpudesk.ui.export_dialog import run_export_dialog
        except ModuleNotFoundError as exc:
            if exc.name != "gpudesk.ui.export_dialog":  # a module it needs is a bug
                raise
            QMessageBox.information(
                self, "Export comparison", "Exporting is not available in this build."
            )
            return
        run_export_dialog(self)

    # reloading ---------------------------------------------------------------
    def reload_catalog(self) -> TaskWorker | None:
        """Reload every catalog folder on a worker thread; None if one is running."""
        if self._reload_worker is not None:
            return None
        extra_dirs = list(self.state.extra_dirs)

        def load(progress: Progress) -> Catalog:
            progress.report(0.0, "Loading the catalog")
            return load_catalog(extra_dirs)

        worker = TaskWorker(load, owner=self)
        worker.finished.connect(self._on_reloaded)
        worker.failed.connect(
            lambda message: self.statusBar().showMessage(f"Reload failed: {message}", 8000)
        )
        worker.done.connect(self._on_reload_done)
        self._reload_worker = worker
        self.reload_action.setEnabled(False)
        self.statusBar().showMessage("Reloading the catalog…")
        worker.start()
        return worker

    def _on_reloaded(self, catalog: object) -> None:
        if not isinstance(catalog, Catalog):
            return
        self.state.set_catalog(catalog)
        problems = len(catalog.problems)
        suffix = f", {problems} problem{'s' if problems != 1 else ''}" if problems else ""
        self.statusBar().showMessage(
            f"Catalog reloaded: {len(catalog.entries)} GPUs{suffix}.", 5000
        )

    def _on_reload_done(self) -> None:
        self._reload_worker = None
        self.reload_action.setEnabled(True)

    def _on_catalog_changed(self) -> None:
        self.banner.set_problems(self.state.catalog.problems)

    # settings ----------------------------------------------------------------
    def _restore_step(self, what: str, restore: Callable[[], object]) -> None:
        """Restore one part of the saved settings; if it fails, keep the defaults and say so.

        Whatever a corrupt or crafted settings file holds, the window opens.
        """
        try:
            restore()
        except Exception as exc:
            self.settings_problems.append(
                f"The saved {what} could not be restored ({type(exc).__name__}); defaults are used."
            )
            if hasattr(self, "settings_banner"):
                self._show_settings_problems()

    def _show_settings_problems(self) -> None:
        self.settings_banner.show_notice(
            "Settings problem: GPUDesk opened with default settings where it could not "
            "use the saved ones.",
            self.settings_problems,
        )

    def _restore_theme(self) -> None:
        saved = self.settings.value(SETTINGS_THEME, theme.ThemeMode.SYSTEM.value)
        known = {mode.value for mode in theme.ThemeMode}
        theme.apply_theme(str(saved) if str(saved) in known else theme.ThemeMode.SYSTEM.value)

    def _restore_geometry(self) -> None:
        geometry = self.settings.value(_SETTINGS_GEOMETRY)
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)

    def _restore_compare(self) -> None:
        saved = self.settings.value(_SETTINGS_COMPARE)
        if not isinstance(saved, str):
            return
        try:
            ids = json.loads(saved)
        except ValueError:
            return
        if isinstance(ids, list):
            self.state.set_compare([item for item in ids if isinstance(item, str)])

    def save_settings(self) -> None:
        """Write geometry, layout, filters, compare selection and theme."""
        from gpudesk.ui.catalog_view import CatalogView

        self.settings.setValue(_SETTINGS_GEOMETRY, self.saveGeometry())
        self.settings.setValue(_SETTINGS_COMPARE, json.dumps(self.state.compare_ids))
        self.settings.setValue(SETTINGS_THEME, theme.current_mode().value)
        catalog_view = self.built_views().get("Catalog")
        if isinstance(catalog_view, CatalogView):
            catalog_view.save_settings(self.settings)
        charts = getattr(self.built_views().get("Compare"), "charts", None)
        if charts is not None:  # the radar's scale, the scatter's log axes, the chart tab
            charts.save_settings(self.settings)
        self.settings.sync()
        if self.settings.status() != QSettings.Status.NoError and not self._said_unsaved:
            # Said once: on the console, since the window may be closing.
            self._said_unsaved = True
            print(
                f"gpudesk: the settings could not be saved to {self.settings.fileName()}",
                file=sys.stderr,
            )

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.save_on_close:
            self.save_settings()
        if self._reload_worker is not None:
            self._reload_worker.shutdown()
        if self._detect_worker is not None:
            self._detect_worker.shutdown()
        # Every built view with work in flight stops it and waits: Fleet's survey, Plan's
        # Verify run / CPU probe / import, This machine's monitor and benchmark.
        for view in self.built_views().values():
            shutdown = getattr(view, "shutdown", None)
            if shutdown is not None:
                shutdown()
        super().closeEvent(event)
