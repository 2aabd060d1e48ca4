"""Light and dark themes: readable greys, a notifier, plots that follow."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import shiboken6
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QWidget
from pytestqt.qtbot import QtBot
from wcag import contrast

from gpudesk.ui import theme


@pytest.fixture(autouse=True)
def _back_to_light(qapp: object) -> Iterator[None]:
    yield
    theme.apply_theme(theme.ThemeMode.LIGHT)


@pytest.mark.parametrize("mode", [theme.ThemeMode.LIGHT, theme.ThemeMode.DARK])
def test_text_and_greys_are_readable(qapp: object, mode: theme.ThemeMode) -> None:
    theme.apply_theme(mode)
    palette = theme.dark_palette() if mode is theme.ThemeMode.DARK else theme.light_palette()
    base = palette.color(QPalette.ColorRole.Base)
    assert contrast(palette.color(QPalette.ColorRole.Text), base) >= 7.0
    # "n/a" is greyed but must stay legible (WCAG large/UI text: 3:1).
    assert contrast(theme.muted_color(), base) >= 3.0
    assert contrast(theme.muted_color(), palette.color(QPalette.ColorRole.AlternateBase)) >= 3.0
    link = palette.color(QPalette.ColorRole.Link)
    assert contrast(link, base) >= 4.5
    background, text = theme.banner_colors()
    assert contrast(background, text) >= 7.0


def test_apply_theme_reports_dark_and_notifies(qtbot: QtBot) -> None:
    with qtbot.waitSignal(theme.notifier().changed, timeout=1000) as blocker:
        assert theme.apply_theme("dark") is True
    assert blocker.args == [True]
    assert theme.is_dark() and theme.current_mode() is theme.ThemeMode.DARK
    assert theme.apply_theme(theme.ThemeMode.LIGHT) is False
    assert not theme.is_dark()


def test_unknown_mode_falls_back_to_the_system(qapp: object) -> None:
    theme.apply_theme("sepia")
    assert theme.current_mode() is theme.ThemeMode.SYSTEM


def test_plots_follow_the_theme(qtbot: QtBot) -> None:
    import pyqtgraph as pg

    theme.apply_theme(theme.ThemeMode.LIGHT)
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    theme.follow_theme(plot)
    assert plot.backgroundBrush().color() == theme.plot_colors()[0]
    theme.apply_theme(theme.ThemeMode.DARK)
    background, foreground = theme.plot_colors()
    assert plot.backgroundBrush().color() == background
    assert plot.getPlotItem().getAxis("left").pen().color() == foreground
    assert pg.getConfigOption("background") == background


class _CountingFrame(QFrame):
    """A frame that counts the style sheets set on it (the repolish sets them again)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sets = 0

    def setStyleSheet(self, sheet: str) -> None:
        self.sets += 1
        super().setStyleSheet(sheet)


def test_a_live_switch_repolishes_only_the_windows_the_app_owns(qtbot: QtBot) -> None:
    """Walking QApplication.allWidgets() reached other windows' widgets and ones being
    deleted (a suspected CI crash); only registered windows and their children are set."""
    theme.apply_theme(theme.ThemeMode.LIGHT)
    owned = QWidget()
    qtbot.addWidget(owned)
    inside = _CountingFrame(owned)
    inside.setStyleSheet("background: palette(base);")
    stray = _CountingFrame()
    qtbot.addWidget(stray)
    stray.setStyleSheet("background: palette(base);")
    theme.own_window(owned)
    assert owned in theme.owned_windows()
    inside.sets = stray.sets = 0
    theme.apply_theme(theme.ThemeMode.DARK)
    assert inside.sets == 2  # cleared, then set again: it re-reads the dark palette
    assert stray.sets == 0
    theme.apply_theme(theme.ThemeMode.LIGHT)


def test_a_deleted_owned_window_drops_out(qtbot: QtBot) -> None:
    window = QWidget()
    theme.own_window(window)
    shiboken6.delete(window)
    assert all(shiboken6.isValid(alive) for alive in theme.owned_windows())
    theme.apply_theme(theme.ThemeMode.DARK)  # must not touch the deleted window
    theme.apply_theme(theme.ThemeMode.LIGHT)
