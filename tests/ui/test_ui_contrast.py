"""Both themes meet WCAG AA: 4.5:1 for text, 3:1 for parts of controls, measured."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QCheckBox, QRadioButton, QWidget
from pytestqt.qtbot import QtBot
from wcag import contrast

from gpudesk.ui import theme


@pytest.fixture(params=[theme.ThemeMode.LIGHT, theme.ThemeMode.DARK], ids=["light", "dark"])
def themed(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[bool]:
    yield theme.apply_theme(request.param)
    theme.apply_theme(theme.ThemeMode.LIGHT)


_TEXT_PAIRS = [
    ("window text", QPalette.ColorRole.WindowText, QPalette.ColorRole.Window),
    ("text", QPalette.ColorRole.Text, QPalette.ColorRole.Base),
    ("button text", QPalette.ColorRole.ButtonText, QPalette.ColorRole.Button),
    ("link on base", QPalette.ColorRole.Link, QPalette.ColorRole.Base),
    ("link on window", QPalette.ColorRole.Link, QPalette.ColorRole.Window),
    ("selected text", QPalette.ColorRole.HighlightedText, QPalette.ColorRole.Highlight),
    ("tooltip", QPalette.ColorRole.ToolTipText, QPalette.ColorRole.ToolTipBase),
    ("placeholder", QPalette.ColorRole.PlaceholderText, QPalette.ColorRole.Base),
]


@pytest.mark.parametrize(("what", "foreground", "background"), _TEXT_PAIRS)
def test_palette_text_is_at_least_4_5_to_1(
    themed: bool, what: str, foreground: QPalette.ColorRole, background: QPalette.ColorRole
) -> None:
    palette = QApplication.palette()
    ratio = contrast(palette.color(foreground), palette.color(background))
    assert ratio >= 4.5, f"{what}: {ratio:.2f}:1 in the {'dark' if themed else 'light'} theme"


def test_shared_colors_meet_aa(themed: bool) -> None:
    palette = QApplication.palette()
    base = palette.color(QPalette.ColorRole.Base)
    assert contrast(theme.muted_color(), base) >= 4.5
    assert contrast(*theme.banner_colors()) >= 4.5
    background, foreground = theme.plot_colors()
    assert contrast(foreground, background) >= 4.5


def _max_contrast_in(image: QImage, background: QColor) -> float:
    best = 1.0
    for y in range(image.height()):
        for x in range(image.width()):
            best = max(best, contrast(image.pixelColor(x, y), background))
    return best


@pytest.mark.parametrize("widget_class", [QCheckBox, QRadioButton])
def test_unchecked_indicators_stand_out_3_to_1(
    themed: bool, widget_class: type[QWidget], qtbot: QtBot
) -> None:
    widget = widget_class()
    qtbot.addWidget(widget)
    widget.resize(20, 20)  # the indicator alone: no label text in the image
    image = widget.grab().toImage()
    background = QApplication.palette().color(QPalette.ColorRole.Window)
    assert _max_contrast_in(image, background) >= 3.0


def test_error_text_is_at_least_4_5_to_1_and_labels_follow_a_switch(
    themed: bool, qtbot: QtBot
) -> None:
    from gpudesk.ui.plan import forms

    palette = QApplication.palette()
    for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base, QPalette.ColorRole.Button):
        assert contrast(theme.error_color(), palette.color(role)) >= 4.5, role
    label = forms.error_label()
    qtbot.addWidget(label)
    theme.apply_theme(theme.ThemeMode.LIGHT if themed else theme.ThemeMode.DARK)
    assert theme.error_color().name() in label.styleSheet()  # the other theme's, live
    assert forms.error_color() == theme.error_color().name()


@pytest.mark.parametrize("severity", ["error", "warning", "ok", "info"])
def test_severity_colours_are_at_least_4_5_to_1(themed: bool, severity: str) -> None:
    # #c0392b (error) was 3.0:1 on the dark base, #b9770e (warning) 3.2:1 on the light window
    palette = QApplication.palette()
    for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base):
        ratio = contrast(theme.severity_color(severity), palette.color(role))
        assert ratio >= 4.5, (severity, role, f"{ratio:.2f}")


def test_health_report_and_device_cards_take_the_themes_colours_live(
    themed: bool, qtbot: QtBot
) -> None:
    from hardware import fake_pynvml as fakes

    from gpudesk.hardware.nvml import Nvml
    from gpudesk.health.doctor import DoctorReport
    from gpudesk.health.rules import Finding
    from gpudesk.ui.devices_view import DevicesView
    from gpudesk.ui.health_panel import HealthPanel
    from gpudesk.ui.state import AppState

    findings = [
        Finding(severity="error", check="driver", message="broken"),
        Finding(severity="warning", check="throttle", message="slow"),
    ]
    panel = HealthPanel()
    qtbot.addWidget(panel)
    panel.show_report(DoctorReport(ok=False, gpus=[], findings=findings))
    view = DevicesView(AppState(), nvml=Nvml(module=fakes.two_gpus()), autostart=False)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.detection_finished, timeout=10_000):
        view.refresh()
    card = view.cards[0]
    card.set_lost()
    for dark in (themed, not themed):  # as built, then after a live switch
        theme.apply_theme(theme.ThemeMode.DARK if dark else theme.ThemeMode.LIGHT)
        error = theme.error_color().name()
        warning = theme.severity_color("warning").name()
        assert f"color:{error}" in panel.body.text() and f"color:{warning}" in panel.body.text()
        assert error in card.lost_badge.text()
        assert f"solid {error}" in view.styleSheet() and warning in view.styleSheet()
        for shown in (panel.body.text(), card.lost_badge.text(), view.styleSheet()):
            assert "#c0392b" not in shown and "#b9770e" not in shown
    view.shutdown()
