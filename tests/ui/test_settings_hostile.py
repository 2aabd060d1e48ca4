"""Issue 20 items 2, 4 and 12: whatever the settings file holds, the window opens."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot
from ui_catalog_fixtures import small_catalog

from gpudesk.ui import theme
from gpudesk.ui.catalog_view import CatalogView
from gpudesk.ui.main_window import MainWindow
from gpudesk.ui.settings import MAX_SETTINGS_BYTES, load_settings, settings_path
from gpudesk.ui.state import AppState


@pytest.fixture(autouse=True)
def _light_theme_after() -> object:
    yield None
    theme.apply_theme(theme.ThemeMode.LIGHT)


def _write_settings(values: dict[str, object]) -> Path:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = QSettings(str(path), QSettings.Format.IniFormat)
    for key, value in values.items():
        settings.setValue(key, value)
    settings.sync()
    del settings
    return path


def _open(qtbot: QtBot) -> MainWindow:
    window = MainWindow(state=AppState(catalog=small_catalog()))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def _catalog_view(window: MainWindow) -> CatalogView:
    view = window.view("Catalog")
    assert isinstance(view, CatalogView)
    return view


@pytest.mark.parametrize(
    "values",
    [
        {"catalog/filters": "[" * 100_000 + "]" * 100_000},
        {"compare/ids": "[" * 100_000 + "]" * 100_000},
        {"catalog/filters": json.dumps({"text": [[[[[[[[[[["deep"]]]]]]]]]]]})},
    ],
    ids=["deep-filters", "deep-compare", "nested-10"],
)
def test_a_corrupt_file_is_kept_aside_reported_once_and_defaults_used(
    qtbot: QtBot, values: dict[str, object]
) -> None:
    path = _write_settings(values)
    original = path.read_bytes()
    window = _open(qtbot)
    assert len(window.settings_problems) == 1
    assert "default settings" in window.settings_problems[0]
    assert window.settings_banner.isVisible()
    kept = [p for p in path.parent.iterdir() if p.name.startswith("gpudesk.conf.bad-")]
    assert [p.read_bytes() for p in kept] == [original]  # nothing lost
    assert _catalog_view(window).filters.search.text() == ""


def test_filter_values_beyond_the_32_bit_range_fall_back_to_defaults(qtbot: QtBot) -> None:
    huge = 2**40
    _write_settings(
        {
            "catalog/filters": json.dumps(
                {"min_memory_gb": huge, "max_price_usd": -huge, "min_year": huge, "text": "x"}
            )
        }
    )
    window = _open(qtbot)
    filters = _catalog_view(window).filters
    assert filters.search.text() == "x"  # the good value is kept
    assert filters.min_memory.value() == filters.min_memory.minimum()


def test_a_folder_in_place_of_the_file_is_said_once_and_left_alone(qtbot: QtBot) -> None:
    path = settings_path()
    path.mkdir(parents=True)
    (path / "inside").write_text("keep", "utf-8")
    window = _open(qtbot)
    assert len(window.settings_problems) == 1
    assert "is a folder" in window.settings_problems[0]
    window.close()
    assert (path / "inside").read_text("utf-8") == "keep"
    assert sorted(p.name for p in path.iterdir()) == ["inside"]


def test_a_fifo_in_place_of_the_file_does_not_hang(qtbot: QtBot) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    started = time.monotonic()
    window = _open(qtbot)
    assert time.monotonic() - started < 30
    assert "not a regular file" in window.settings_problems[0]


def test_a_huge_file_is_kept_aside(qtbot: QtBot) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    with open(path, "wb") as handle:
        handle.truncate(MAX_SETTINGS_BYTES + 1)
    window = _open(qtbot)
    assert "larger than 1 MiB" in window.settings_problems[0]
    assert not path.exists() or path.stat().st_size < MAX_SETTINGS_BYTES


def test_settings_that_cannot_be_saved_are_said_once(
    qtbot: QtBot, capsys: pytest.CaptureFixture[str]
) -> None:
    config_root = settings_path().parent.parent
    config_root.mkdir(parents=True, exist_ok=True)
    settings_path().parent.write_text("a file where the folder should be", "utf-8")
    window = _open(qtbot)
    assert len(window.settings_problems) == 1
    assert "cannot be saved" in window.settings_problems[0]
    window.close()
    assert "could not be saved" not in capsys.readouterr().err  # not a second time


def test_a_failing_restore_step_still_opens_the_window(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: CatalogView, settings: QSettings) -> None:
        raise OverflowError("simulated")

    monkeypatch.setattr(CatalogView, "restore_settings", broken)
    window = _open(qtbot)
    assert window.settings_problems == [
        "The saved catalog layout and filters could not be restored (OverflowError); "
        "defaults are used."
    ]


def test_a_good_file_has_no_problems() -> None:
    _write_settings({"ui/theme": "dark", "catalog/filters": json.dumps({"text": "4090"})})
    loaded = load_settings()
    assert loaded.problems == []
    assert loaded.saveable
