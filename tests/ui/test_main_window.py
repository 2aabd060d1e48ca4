"""The main window: menus, settings round-trip, problems banner, reload, theme."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from catalog_factory import write_entry
from PySide6.QtCore import QSettings, Qt, QUrl
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from ui_catalog_fixtures import small_catalog

from gpudesk.paths import user_catalog_dir
from gpudesk.ui import main_window as main_window_module, theme
from gpudesk.ui.catalog_columns import column_index
from gpudesk.ui.catalog_view import CatalogView
from gpudesk.ui.main_window import TAB_VIEWS, MainWindow, about_versions
from gpudesk.ui.settings import open_settings, settings_path
from gpudesk.ui.state import AppState


@pytest.fixture(autouse=True)
def _light_theme_after() -> object:
    yield None
    # The palette is application-wide: leave the next test a light one.
    theme.apply_theme(theme.ThemeMode.LIGHT)


def make_window(qtbot: QtBot, settings_file: Path, state: AppState | None = None) -> MainWindow:
    window = MainWindow(
        state=state if state is not None else AppState(catalog=small_catalog()),
        settings=open_settings(settings_file),
    )
    qtbot.addWidget(window)
    return window


def catalog_view(window: MainWindow) -> CatalogView:
    view = window.view("Catalog")
    assert isinstance(view, CatalogView)
    return view


def test_window_title_tabs_and_lazy_views(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    assert window.windowTitle() == "GPUDesk"
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        title for title, _ in TAB_VIEWS
    ]
    assert list(window.built_views()) == ["Catalog"]
    assert window.count_label.text() == "6 of 6 GPUs"
    assert window.minimumWidth() >= 800 and window.minimumHeight() >= 500


def test_menus_and_shortcuts(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    menus = {action.text().replace("&", ""): action.menu() for action in window.menuBar().actions()}
    assert list(menus) == ["File", "Edit", "View", "Help"]
    file_items = [action.text() for action in menus["File"].actions() if action.text()]
    assert file_items == [
        "Open user catalog folder",
        "Reload catalog",
        "Open fleet survey…",
        "Export comparison…",
        "Quit",
    ]
    shortcuts = {
        window.reload_action: "F5",
        window.quit_action: "Ctrl+Q",
        window.find_action: "Ctrl+F",
        window.add_compare_action: "Ctrl+D",
        window.export_action: "Ctrl+E",
    }
    for action, keys in shortcuts.items():
        assert action.shortcut().toString() == keys
    assert set(window.theme_actions) == set(theme.ThemeMode)


def test_status_bar_counts_follow_the_filters(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    catalog_view(window).filters.min_memory.setValue(48)
    assert window.count_label.text() == "3 of 6 GPUs"


def test_ctrl_f_focuses_search_and_ctrl_d_adds(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    window.show()
    qtbot.waitExposed(window)
    view = catalog_view(window)
    view.select_entry("a100")
    window.add_compare_action.trigger()
    assert window.state.compare_ids == ["a100"]
    window.find_action.trigger()
    assert window.focusWidget() is view.filters.search


def test_settings_round_trip_across_a_new_window(qtbot: QtBot, tmp_path: Path) -> None:
    settings_file = tmp_path / "round-trip.conf"
    first = make_window(qtbot, settings_file)
    # The offscreen screen is 800x800: a larger geometry would be clamped to it.
    first.resize(800, 650)
    view = catalog_view(first)
    view.filters.search.setText("ampere")
    view.filters.flush()
    view.filters.segment_boxes[next(iter(view.filters.segment_boxes))].setChecked(False)
    view.set_column_visible("fp64_tflops", False)
    view.set_column_visible("fp8_tensor_tflops", True)
    header = view.table.horizontalHeader()
    header.moveSection(header.visualIndex(column_index("price_usd")), 2)
    view.table.sortByColumn(column_index("price_usd"), Qt.SortOrder.DescendingOrder)
    view.splitter.setSizes([300, 700, 250])
    sizes = view.splitter.sizes()
    first.state.set_compare(["mi300x", "a100"])
    first.set_theme(theme.ThemeMode.DARK)
    criteria = view.criteria()
    first.close()
    assert settings_file.is_file()

    second = make_window(qtbot, settings_file)
    restored = catalog_view(second)
    assert second.state.compare_ids == ["mi300x", "a100"]
    assert restored.criteria() == criteria
    assert restored.filters.search.text() == "ampere"
    assert not restored.column_visible("fp64_tflops")
    assert restored.column_visible("fp8_tensor_tflops")
    new_header = restored.table.horizontalHeader()
    assert new_header.visualIndex(column_index("price_usd")) == 2
    assert new_header.sortIndicatorSection() == column_index("price_usd")
    assert new_header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    assert restored.proxy.sort_column() == column_index("price_usd")
    assert restored.splitter.sizes() == sizes
    assert theme.current_mode() is theme.ThemeMode.DARK and theme.is_dark()
    assert second.theme_actions[theme.ThemeMode.DARK].isChecked()
    assert (second.width(), second.height()) == (800, 650)


def test_default_settings_file_lives_in_the_config_folder(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_home = tmp_path / "xdg-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    window = MainWindow(state=AppState(catalog=small_catalog()))
    qtbot.addWidget(window)
    window.close()
    assert settings_path() == config_home / "gpudesk" / "gpudesk.conf"
    assert settings_path().is_file()
    assert Path(window.settings.fileName()) == settings_path()


def test_corrupt_settings_values_are_ignored(qtbot: QtBot, tmp_path: Path) -> None:
    settings_file = tmp_path / "bad.conf"
    settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
    settings.setValue("catalog/filters", "{not json")
    settings.setValue("compare/ids", '["a100", 7, "no-such-gpu"]')
    settings.setValue("catalog/header", "not bytes")
    settings.setValue("ui/theme", "purple")
    settings.sync()
    window = make_window(qtbot, settings_file)
    assert window.state.compare_ids == ["a100"]
    assert catalog_view(window).visible_count() == 6
    assert theme.current_mode() is theme.ThemeMode.SYSTEM


def test_broken_user_catalog_shows_the_banner_and_the_rest_loads(
    qtbot: QtBot, tmp_path: Path
) -> None:
    user_dir = user_catalog_dir()
    write_entry(user_dir, "my-card", name="My Card", memory_gb=-4)
    (user_dir / "broken.toml").write_text("id = [unclosed\n", encoding="utf-8")
    write_entry(user_dir, "good-card", name="My Good Card")
    window = MainWindow(settings=open_settings(tmp_path / "s.conf"))
    qtbot.addWidget(window)
    window.show()
    banner = window.banner
    assert banner.isVisible()
    lines = banner.lines()
    assert any(line.startswith(f"{user_dir / 'my-card.toml'}: memory_gb: ") for line in lines)
    assert any(str(user_dir / "broken.toml") in line and "(toml)" in line for line in lines)
    ids = {entry.id for entry in window.state.entries()}
    assert "good-card" in ids and "my-card" not in ids
    assert len(ids) > 20  # the bundled catalog loaded too
    assert "2 catalog files" in banner.summary.text()
    banner.dismiss_button.click()
    assert not banner.isVisible()
    # every entry shows but the announced parts, hidden by default (issue 43)
    shown = {entry.id for entry in window.state.entries() if entry.status.value != "announced"}
    assert catalog_view(window).visible_count() == len(shown)


def test_reload_runs_on_a_worker_and_updates_everything(qtbot: QtBot, tmp_path: Path) -> None:
    catalog_dir = tmp_path / "extra"
    write_entry(catalog_dir, "extra-one", name="Extra One")
    state = AppState(extra_dirs=[catalog_dir])
    window = make_window(qtbot, tmp_path / "s.conf", state)
    view = catalog_view(window)
    before = view.visible_count()
    write_entry(catalog_dir, "extra-two", name="Extra Two")
    (catalog_dir / "bad.toml").write_text("name = 1\n", encoding="utf-8")
    worker = window.reload_catalog()
    assert worker is not None
    assert not window.reload_action.isEnabled()
    assert window.reload_catalog() is None  # one at a time
    with qtbot.waitSignal(worker.done, timeout=10_000):
        pass
    assert view.visible_count() == before + 1
    total = len(window.state.entries())  # announced parts are hidden by default
    assert window.count_label.text() == f"{before + 1} of {total} GPUs"
    assert window.banner.isVisibleTo(window)
    assert window.reload_action.isEnabled()


def test_open_user_catalog_folder_creates_it(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[QUrl] = []

    def fake_open(url: QUrl) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(main_window_module, "open_url", fake_open)
    window = make_window(qtbot, tmp_path / "s.conf")
    assert not user_catalog_dir().exists()
    folder = window.open_user_catalog_folder()
    assert folder == user_catalog_dir() and folder.is_dir()
    assert [url.toLocalFile() for url in opened] == [str(folder)]


def _capture_information(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []

    def fake_information(_parent: object, _title: str, text: str, *_args: object) -> int:
        shown.append(text)
        return 0

    monkeypatch.setattr(QMessageBox, "information", staticmethod(fake_information))
    return shown


def test_export_without_the_dialog_module_says_so(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = _capture_information(monkeypatch)
    # None in sys.modules: importing the dialog module fails as if it were not built in
    monkeypatch.setitem(sys.modules, "gpudesk.ui.export_dialog", None)
    window = make_window(qtbot, tmp_path / "s.conf")
    window.export_action.trigger()
    assert shown == ["Exporting is not available in this build."]


def test_export_calls_the_dialog_module(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[MainWindow] = []
    fake = types.ModuleType("gpudesk.ui.export_dialog")
    run: Callable[[MainWindow], None] = calls.append
    fake.run_export_dialog = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gpudesk.ui.export_dialog", fake)
    window = make_window(qtbot, tmp_path / "s.conf")
    window.export_action.trigger()
    assert calls == [window]


def test_about_shows_the_catalog_date_and_size(qtbot: QtBot, tmp_path: Path) -> None:
    import datetime as dt

    catalog = small_catalog()
    catalog.catalog_date = dt.date(2026, 11, 29)
    window = make_window(qtbot, tmp_path / "s.conf", AppState(catalog=catalog))
    assert f"Catalog of 2026-11-29: {len(catalog.entries)} GPUs" in window.about_html()


def test_about_lists_versions_without_importing_pynvml() -> None:
    had_pynvml = "pynvml" in sys.modules
    versions = dict(about_versions())
    for name in ("GPUDesk", "Qt", "PySide6", "pyqtgraph", "NVML binding (nvidia-ml-py)"):
        assert versions[name]
    assert versions["Qt"][0] == "6"
    assert versions["NVML binding (nvidia-ml-py)"] != "not installed"
    assert ("pynvml" in sys.modules) == had_pynvml


def test_entry_requests_switch_to_the_catalog(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    window.tabs.setCurrentIndex(3)
    window.state.show_entry("mi300x")
    assert window.tabs.currentIndex() == 0
    current = catalog_view(window).current_entry()
    assert current is not None and current.id == "mi300x"


def test_fit_filter_requests_from_a_view_filter_the_catalog(qtbot: QtBot, tmp_path: Path) -> None:
    from PySide6.QtCore import Signal
    from PySide6.QtWidgets import QWidget

    class FakePlan(QWidget):
        fit_filter_requested = Signal(object)

    window = make_window(qtbot, tmp_path / "s.conf")
    plan = FakePlan()
    qtbot.addWidget(plan)
    window._wire_view("Plan", plan)
    plan.fit_filter_requested.emit({"a100", "rtx-a6000"})
    assert window.state.fit_filter_ids == {"a100", "rtx-a6000"}
    assert window.count_label.text() == "2 of 6 GPUs"
    plan.fit_filter_requested.emit(None)
    assert window.state.fit_filter_ids is None


def test_theme_switch_updates_palette_and_notifies(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    with qtbot.waitSignal(theme.notifier().changed, timeout=1000) as blocker:
        window.theme_actions[theme.ThemeMode.DARK].trigger()
    assert blocker.args == [True]
    assert theme.is_dark()
    # Widgets get the application palette through posted events.
    qtbot.waitUntil(lambda: window.palette().window().color().lightness() < 80, timeout=2000)
    window.theme_actions[theme.ThemeMode.LIGHT].trigger()
    assert not theme.is_dark()
    qtbot.waitUntil(lambda: window.palette().window().color().lightness() > 180, timeout=2000)


def test_view_columns_menu_hides_and_shows_columns(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    window.columns_menu.aboutToShow.emit()
    actions = {action.text(): action for action in window.columns_menu.actions()}
    assert actions["FP64 (TFLOPS)"].isChecked()
    assert not actions["FP8 tensor, dense (TFLOPS)"].isChecked()
    assert "Name" not in actions  # the name column always stays
    # Labels are names; the sentence is the tooltip.
    assert actions["ECC"].toolTip() == "Error-correcting memory"
    assert actions["From (USD/GPU-h)"].toolTip().startswith("Lowest on-demand cloud rate")
    assert all(len(text) < 60 and not text.endswith(".") for text in actions if text)
    actions["FP64 (TFLOPS)"].trigger()
    assert not catalog_view(window).column_visible("fp64_tflops")
    actions["FP8 tensor, dense (TFLOPS)"].trigger()
    assert catalog_view(window).column_visible("fp8_tensor_tflops")


def test_opening_compare_detects_this_machine_off_the_gui_thread(qtbot: QtBot) -> None:
    """The compare view learns the local GPU (for "Add this machine's GPU") on first use."""
    from catalog_factory import make_entry
    from hardware import fake_pynvml as fakes

    from gpudesk.catalog.loader import Catalog
    from gpudesk.hardware.nvml import Nvml, set_default_nvml
    from gpudesk.ui.main_window import MainWindow as Window
    from gpudesk.ui.state import AppState

    entries = [
        make_entry("rtx-4090", name="NVIDIA GeForce RTX 4090", pci_device_ids=["0x2684"]),
        make_entry("other-gpu", name="Other GPU"),
    ]
    state = AppState(catalog=Catalog(entries=entries))
    set_default_nvml(Nvml(module=fakes.two_gpus()))
    try:
        window = Window(state=state)
        qtbot.addWidget(window)
        assert state.detected_catalog_ids == []
        with qtbot.waitSignal(state.detected_changed, timeout=10_000):
            window.show_tab("Compare")
        assert state.detected_catalog_ids == ["rtx-4090"]
        window.close()
    finally:
        set_default_nvml(None)


def test_the_window_fits_the_available_screen_area(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    screen = window.screen()
    assert screen is not None
    available = screen.availableGeometry()
    assert window.width() <= available.width() and window.height() <= available.height()
    assert available.contains(window.frameGeometry().topLeft())
    # a size saved on a bigger monitor is clamped as well
    window.resize(available.width() + 500, available.height() + 400)
    window.fit_to_screen()
    assert window.width() <= available.width() and window.height() <= available.height()


@pytest.mark.parametrize("width", [1366, 1400])
def test_ml_columns_are_on_screen_in_a_narrow_window(
    qtbot: QtBot, tmp_path: Path, width: int
) -> None:
    from PySide6.QtWidgets import QApplication

    from gpudesk.catalog.loader import load_catalog
    from gpudesk.ui.catalog_view import ARCHITECTURE_MAX_WIDTH_PX

    window = make_window(
        qtbot, tmp_path / "s.conf", AppState(catalog=load_catalog([], include_user=False))
    )
    window.resize(width, 768)
    window.show()
    qtbot.waitUntil(lambda: catalog_view(window)._narrow_defaults_done)
    for _ in range(3):
        QApplication.processEvents()
    view = catalog_view(window)
    table = view.table
    viewport = table.viewport().width()
    for key in ("memory_gb", "bandwidth_gbs", "bf16_tensor_tflops", "fp16_tensor_tflops"):
        index = column_index(key)
        assert not table.isColumnHidden(index), key
        right = table.columnViewportPosition(index) + table.columnWidth(index)
        assert right <= viewport, f"{key} ends at {right} px of {viewport}"
    price = column_index("price_usd")
    assert table.columnViewportPosition(price) + table.columnWidth(price) <= viewport
    assert table.columnWidth(column_index("architecture")) <= ARCHITECTURE_MAX_WIDTH_PX
    assert not view.column_visible("segment") and not view.column_visible("release_year")


def test_wide_window_keeps_every_default_column_and_ctrl_i_collapses_details(
    qtbot: QtBot, tmp_path: Path
) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    window.resize(1920, 1080)
    window.show()
    view = catalog_view(window)
    qtbot.waitUntil(lambda: view._narrow_defaults_done)
    assert view.column_visible("segment") and view.column_visible("release_year")
    assert view.details_visible()
    before = view.table.viewport().width()
    window.details_action.trigger()
    assert not view.details_visible() and not window.details_action.isChecked()
    qtbot.waitUntil(lambda: view.table.viewport().width() > before)
    window.details_action.trigger()
    assert view.details_visible()


def test_main_tabs_switch_from_the_keyboard(qtbot: QtBot, tmp_path: Path) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    window.show()
    assert window.tabs.currentIndex() == 0
    keys = {item.shortcut().toString() for item in window.tab_actions}
    assert keys == {f"Alt+{n}" for n in range(1, len(TAB_VIEWS) + 1)}
    window.tab_actions[3].trigger()
    assert window.tabs.currentIndex() == 3
    window.next_tab_action.trigger()
    assert window.tabs.currentIndex() == 4
    window.next_tab_action.trigger()
    assert window.tabs.currentIndex() == 0, "wraps around"
    window.previous_tab_action.trigger()
    assert window.tabs.currentIndex() == len(TAB_VIEWS) - 1
    assert [key.toString() for key in window.next_tab_action.shortcuts()] == [
        "Ctrl+PgDown",
        "Ctrl+Tab",
    ]
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.tabs, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentIndex() == 0


def test_help_menu_has_shortcuts_docs_sourcing_and_reporting(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = make_window(qtbot, tmp_path / "s.conf")
    menus = {action.text().replace("&", ""): action.menu() for action in window.menuBar().actions()}
    items = [action.text() for action in menus["Help"].actions() if action.text()]
    assert items == [
        "Keyboard shortcuts",
        "README and documentation",
        "How these figures were sourced",
        "Report a problem…",
        "About GPUDesk",
    ]
    window.shortcuts_action.trigger()
    assert window.last_help_box is not None
    text = window.shortcuts_text()
    assert "Ctrl+D\tAdd selected to compare" in text and "Alt+1\tGo to Catalog" in text
    assert "<b>Ctrl+D</b>" in window.last_help_box.text()
    window.sourcing_action.trigger()
    assert "dense" in window.last_help_box.text()
    window.report_action.trigger()
    assert "gpudesk detect --json" in window.last_help_box.text()
    opened: list[QUrl] = []
    import gpudesk.ui.help_menu as help_menu

    monkeypatch.setattr(help_menu, "open_url", lambda url: opened.append(url) or True)
    # A checkout (or an editable install) has the README beside the package: it opens.
    readme = tmp_path / "README.md"
    readme.write_text("# GPUDesk\n", encoding="utf-8")
    monkeypatch.setattr(window, "readme_path", lambda: readme)
    window.readme_action.trigger()
    assert opened == [QUrl.fromLocalFile(str(readme))]
    # An installed wheel has none (CI installs non-editably): a box says where it is.
    monkeypatch.setattr(window, "readme_path", lambda: None)
    window.readme_action.trigger()
    assert len(opened) == 1
    assert "gpudesk --help" in window.last_help_box.text()
