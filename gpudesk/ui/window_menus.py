"""The main window's actions, menus and keyboard shortcuts (File, Edit, View, Help).

:class:`MenuWindow` builds them and holds the slots that only route to a tab
(search, add to compare, details pane, columns, theme, next tab); the window
(:class:`~gpudesk.ui.main_window.MainWindow`) owns the tabs, the reload and the
settings the menus act on.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QTabWidget, QWidget

from gpudesk.ui import theme
from gpudesk.ui.help_menu import HelpWindow
from gpudesk.ui.worker import TaskWorker

SETTINGS_THEME = "ui/theme"


class MenuWindow(HelpWindow):
    """A main window with GPUDesk's menus; the subclass sets ``tabs`` and ``settings``
    before :meth:`_build_actions` and provides the methods below that it owns."""

    tabs: QTabWidget
    settings: QSettings
    details_action: QAction
    columns_menu: QMenu

    # owned by the window ------------------------------------------------------
    def view(self, title: str) -> QWidget:
        raise NotImplementedError

    def built_views(self) -> dict[str, QWidget]:
        raise NotImplementedError

    def show_tab(self, title: str) -> None:
        raise NotImplementedError

    def reload_catalog(self) -> TaskWorker | None:
        raise NotImplementedError

    def export_comparison(self) -> None:
        raise NotImplementedError

    def open_user_catalog_folder(self) -> Path:
        raise NotImplementedError

    # actions and menus ---------------------------------------------------------
    def _build_actions(self) -> None:
        def action(text: str, slot: object, shortcut: str | None = None) -> QAction:
            item = QAction(text, self)
            if shortcut:
                item.setShortcut(QKeySequence(shortcut))
            item.triggered.connect(slot)
            self.addAction(item)  # shortcuts work even with the menu bar hidden
            return item

        self.open_folder_action = action("Open user catalog folder", self.open_user_catalog_folder)
        self.reload_action = action("Reload catalog", self.reload_catalog, "F5")
        self.export_action = action("Export comparison…", self.export_comparison, "Ctrl+E")
        self.open_survey_action = action("Open fleet survey…", self.open_fleet_survey)
        self.quit_action = action("Quit", self.close, "Ctrl+Q")
        self.find_action = action("Search the catalog", self.focus_search, "Ctrl+F")
        self.add_compare_action = action("Add selected to compare", self.add_selected, "Ctrl+D")
        self.reset_filters_action = action("Reset filters", self.reset_filters)
        self.about_action = action("About GPUDesk", self.show_about)
        self.shortcuts_action = action("Keyboard shortcuts", self.show_shortcuts, "F1")
        self.readme_action = action("README and documentation", self.open_readme)
        self.sourcing_action = action("How these figures were sourced", self.show_sourcing)
        self.report_action = action("Report a problem…", self.show_report_problem)
        # Main tabs from anywhere in the window: Ctrl+PgDn/PgUp, Ctrl+(Shift+)Tab, Alt+1..5.
        self.next_tab_action = action("Next tab", lambda: self._step_tab(1), "Ctrl+PgDown")
        self.previous_tab_action = action("Previous tab", lambda: self._step_tab(-1), "Ctrl+PgUp")
        self.next_tab_action.setShortcuts([QKeySequence("Ctrl+PgDown"), QKeySequence("Ctrl+Tab")])
        self.previous_tab_action.setShortcuts(
            [QKeySequence("Ctrl+PgUp"), QKeySequence("Ctrl+Shift+Tab")]
        )
        self.tab_actions = [
            action(
                f"Go to {title}",
                lambda _=False, i=index: self.tabs.setCurrentIndex(i),
                f"Alt+{index + 1}",
            )
            for index, title in enumerate(self.tabs.tabText(i) for i in range(self.tabs.count()))
        ]
        self.details_action = action("Details pane", self.toggle_details, "Ctrl+I")
        self.details_action.setCheckable(True)
        self.details_action.setChecked(True)
        self.details_action.setToolTip("Show or collapse the catalog's details pane (Ctrl+I)")
        self.theme_actions: dict[theme.ThemeMode, QAction] = {}
        group = QActionGroup(self)
        labels = {
            theme.ThemeMode.SYSTEM: "Follow the system",
            theme.ThemeMode.LIGHT: "Light",
            theme.ThemeMode.DARK: "Dark",
        }
        for mode, label in labels.items():
            item = QAction(label, self)
            item.setCheckable(True)
            item.setChecked(mode == theme.current_mode())
            item.triggered.connect(lambda _checked=False, mode=mode: self.set_theme(mode))
            group.addAction(item)
            self.theme_actions[mode] = item

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open_folder_action)
        file_menu.addAction(self.reload_action)
        file_menu.addAction(self.open_survey_action)
        file_menu.addSeparator()
        file_menu.addAction(self.export_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.find_action)
        edit_menu.addAction(self.add_compare_action)
        edit_menu.addAction(self.reset_filters_action)
        view_menu = bar.addMenu("&View")
        self.columns_menu = QMenu("&Columns", self)
        self.columns_menu.aboutToShow.connect(self._fill_columns_menu)
        view_menu.addMenu(self.columns_menu)
        view_menu.addAction(self.details_action)
        view_menu.aboutToShow.connect(self._sync_details_action)
        theme_menu = view_menu.addMenu("&Theme")
        for item in self.theme_actions.values():
            theme_menu.addAction(item)
        view_menu.addSeparator()
        for item in (self.next_tab_action, self.previous_tab_action, *self.tab_actions):
            view_menu.addAction(item)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction(self.readme_action)
        help_menu.addAction(self.sourcing_action)
        help_menu.addAction(self.report_action)
        help_menu.addSeparator()
        help_menu.addAction(self.about_action)

    def _fill_columns_menu(self) -> None:
        from gpudesk.ui.catalog_view import CatalogView

        view = self.view("Catalog")
        if isinstance(view, CatalogView):
            view.populate_columns_menu(self.columns_menu)

    def toggle_details(self, visible: bool) -> None:
        from gpudesk.ui.catalog_view import CatalogView

        self.show_tab("Catalog")
        view = self.view("Catalog")
        if isinstance(view, CatalogView):
            view.set_details_visible(visible)

    def _sync_details_action(self) -> None:
        from gpudesk.ui.catalog_view import CatalogView

        view = self.built_views().get("Catalog")
        if isinstance(view, CatalogView):
            self.details_action.setChecked(view.details_visible())

    def focus_search(self) -> None:
        from gpudesk.ui.catalog_view import CatalogView

        self.show_tab("Catalog")
        view = self.view("Catalog")
        if isinstance(view, CatalogView):
            view.focus_search()

    def add_selected(self) -> None:
        from gpudesk.ui.catalog_view import CatalogView

        view = self.view("Catalog")
        if isinstance(view, CatalogView) and self.tabs.currentIndex() == 0:
            view.add_selected_to_compare()

    def reset_filters(self) -> None:
        from gpudesk.ui.catalog_view import CatalogView

        view = self.view("Catalog")
        if isinstance(view, CatalogView):
            view.reset_filters()

    def set_theme(self, mode: theme.ThemeMode) -> None:
        theme.apply_theme(mode)
        self.theme_actions[mode].setChecked(True)
        self.settings.setValue(SETTINGS_THEME, mode.value)

    def open_fleet_survey(self) -> None:
        """File → Open fleet survey…: the Fleet tab's file dialog."""
        self.show_tab("Fleet")
        view = self.view("Fleet")
        opener = getattr(view, "open_file_dialog", None)
        if opener is not None:
            opener()

    def _step_tab(self, step: int) -> None:
        count = self.tabs.count()
        self.tabs.setCurrentIndex((self.tabs.currentIndex() + step) % count)
