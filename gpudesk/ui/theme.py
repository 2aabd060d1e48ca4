"""Light and dark themes: follow the system, or a manual choice.

Any view can ask :func:`is_dark` and listen to ``notifier().changed(bool)``.
Plots call :func:`follow_theme` once and then keep their background and axis
colors in step with the window.
"""

from __future__ import annotations

import sys
import weakref
from enum import StrEnum
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QStyleOption,
    QWidget,
)


class ThemeMode(StrEnum):
    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


class ThemeNotifier(QObject):
    """The theme's one signal source.

    Signals:
        changed(bool): the theme was applied; True when it is dark.
    """

    changed = Signal(bool)


_notifier: ThemeNotifier | None = None
_mode = ThemeMode.SYSTEM
_dark = False
_system_hook_installed = False


def notifier() -> ThemeNotifier:
    """The process-wide notifier (created on first use)."""
    global _notifier
    if _notifier is None:
        _notifier = ThemeNotifier()
    return _notifier


def is_dark() -> bool:
    """Whether the applied theme is dark."""
    return _dark


def current_mode() -> ThemeMode:
    return _mode


def system_prefers_dark() -> bool:
    """The desktop's color scheme; a light one when the platform does not say."""
    hints = QGuiApplication.styleHints()
    scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else None
    return scheme == Qt.ColorScheme.Dark


#: Border of check boxes and radio buttons: 3:1 against the base in both themes
#: (WCAG 2.1 SC 1.4.11 for UI parts). Fusion derives it from the window color
#: alone, which leaves it at about 1.2:1 on the dark palette.
INDICATOR_BORDER = {False: QColor("#676c73"), True: QColor("#8d939c")}


class ContrastStyle(QProxyStyle):
    """Fusion, with check box and radio button outlines that can be seen in both themes."""

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        outlined = (
            QStyle.PrimitiveElement.PE_IndicatorCheckBox,
            QStyle.PrimitiveElement.PE_IndicatorRadioButton,
        )
        if element not in outlined:
            return
        painter.save()
        # Crisp one-pixel lines: antialiasing would blend the outline to half its contrast.
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(INDICATOR_BORDER[_dark])
        painter.setBrush(Qt.BrushStyle.NoBrush)
        rect = option.rect.adjusted(1, 1, -1, -1)
        if element is QStyle.PrimitiveElement.PE_IndicatorRadioButton:
            painter.drawEllipse(rect)
        else:
            painter.drawRect(rect)
        painter.restore()


def light_palette() -> QPalette:
    style = QStyleFactory.create("Fusion")
    palette = QPalette(style.standardPalette()) if style is not None else QPalette()
    # Fusion's own highlight (#308cc6) gives white text only 3.7:1.
    palette.setColor(QPalette.ColorRole.Highlight, QColor("#2a6ebb"))
    palette.setColor(QPalette.ColorRole.PlaceholderText, QColor("#676c73"))
    palette.setColor(QPalette.ColorRole.Link, QColor("#0b5cad"))
    palette.setColor(QPalette.ColorRole.LinkVisited, QColor("#6a3fa0"))
    palette.setColor(QPalette.ColorRole.ToolTipBase, QColor("#ffffe1"))
    palette.setColor(QPalette.ColorRole.ToolTipText, QColor("#1b1b1b"))
    return palette


def dark_palette() -> QPalette:
    role = QPalette.ColorRole
    palette = QPalette()
    colors = {
        role.Window: "#2b2d31",
        role.WindowText: "#e4e6ea",
        role.Base: "#1e1f22",
        role.AlternateBase: "#26282c",
        role.ToolTipBase: "#3a3d42",
        role.ToolTipText: "#e4e6ea",
        role.PlaceholderText: "#9aa0a8",
        role.Text: "#e4e6ea",
        role.Button: "#34373c",
        role.ButtonText: "#e4e6ea",
        role.BrightText: "#ff7b72",
        role.Light: "#4a4d53",
        role.Midlight: "#3d4046",
        role.Mid: "#2f3136",
        role.Dark: "#1a1b1e",
        role.Shadow: "#0d0e10",
        role.Highlight: "#3b6fb6",
        role.HighlightedText: "#ffffff",
        role.Link: "#79b8ff",
        role.LinkVisited: "#c297ff",
    }
    for color_role, color in colors.items():
        palette.setColor(color_role, QColor(color))
    disabled = QPalette.ColorGroup.Disabled
    for color_role in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(disabled, color_role, QColor("#7c8189"))
    palette.setColor(disabled, role.Highlight, QColor("#4a4d53"))
    return palette


def apply_theme(mode: ThemeMode | str = ThemeMode.SYSTEM) -> bool:
    """Apply a theme to the running application; returns whether it is dark."""
    global _mode, _dark
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("apply_theme needs a QApplication")
    try:
        _mode = ThemeMode(mode)
    except ValueError:
        _mode = ThemeMode.SYSTEM
    _install_system_hook()
    dark = _mode is ThemeMode.DARK or (_mode is ThemeMode.SYSTEM and system_prefers_dark())
    # Fusion draws every widget from the palette, so both palettes look right
    # on every platform; native styles ignore parts of a custom palette.
    if not isinstance(app.style(), ContrastStyle):
        base = QStyleFactory.create("Fusion")
        app.setStyle(ContrastStyle(base) if base is not None else ContrastStyle())
    app.setPalette(dark_palette() if dark else light_palette())
    _dark = dark
    _apply_pyqtgraph_defaults()
    _repolish_palette_style_sheets(owned_windows())
    notifier().changed.emit(dark)
    return dark


def own_window(window: QWidget) -> None:
    """Register a window whose style sheets follow a live theme change.

    The main window registers itself; its dialogs and docks are its children. Only
    these windows are repolished: walking ``QApplication.allWidgets()`` also reached
    widgets of other windows and ones half-way through deletion (a suspected crash
    in CI after many tests had left widgets behind).
    """
    _owned_windows.add(window)


def owned_windows() -> list[QWidget]:
    """The registered windows still alive (a deleted one drops out)."""
    alive = [window for window in _owned_windows if shiboken6.isValid(window)]
    return sorted(alive, key=id)


_owned_windows: weakref.WeakSet[QWidget] = weakref.WeakSet()


def _repolish_palette_style_sheets(windows: list[QWidget]) -> None:
    """Style sheets resolve ``palette(base)`` and friends once, when they are set:
    after a live theme change a card or a frame would keep the old theme's colours
    (This machine → Devices stayed light). Setting each such sheet again re-reads them,
    in the windows this app owns and their children only."""
    for window in windows:
        for widget in [window, *window.findChildren(QWidget)]:
            if not shiboken6.isValid(widget):
                continue
            sheet = widget.styleSheet()
            if "palette(" in sheet:
                widget.setStyleSheet("")
                widget.setStyleSheet(sheet)


def _install_system_hook() -> None:
    global _system_hook_installed
    if _system_hook_installed:
        return
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "colorSchemeChanged"):
        hints.colorSchemeChanged.connect(_on_system_scheme_changed)
    _system_hook_installed = True


def _on_system_scheme_changed(*_args: object) -> None:
    if _mode is ThemeMode.SYSTEM:
        apply_theme(ThemeMode.SYSTEM)


# colors views share ------------------------------------------------------
def muted_color() -> QColor:
    """Text that is present but unimportant ("n/a" cells): readable in both themes."""
    return QColor("#9aa0a8") if _dark else QColor("#676c73")


def plot_colors() -> tuple[QColor, QColor]:
    """(background, foreground) for charts in the current theme."""
    if _dark:
        return QColor("#1e1f22"), QColor("#d5d8dd")
    return QColor("#ffffff"), QColor("#2b2b2b")


#: Text colour of a figure that may be out of date (a price older than a year);
#: readable on the light and the dark palette.
STALE_COLOR = "#c26a00"


#: Text colour of an error ("Failed: ...") by theme (dark?): at least 4.5:1 on the
#: window, base and button colours of its theme (#c0392b was 3.0:1 on the dark base).
ERROR_COLORS = {False: "#b03a2e", True: "#ff8a80"}


def error_color() -> QColor:
    """Error text in the current theme (read it when painting, or use
    :func:`follow_error_color`, so a live switch re-reads it)."""
    return QColor(ERROR_COLORS[_dark])


#: Text colour of a warning, and of a check that passed, by theme (dark?): at least
#: 4.5:1 on the window and base colours of its theme (#b9770e was 3.2:1 on the light
#: window, #1e8449 2.9:1 on the dark one).
WARNING_COLORS = {False: "#8a5a00", True: "#e0a040"}
OK_COLORS = {False: "#1b6e3a", True: "#66d17a"}


def severity_color(severity: str) -> QColor:
    """The text colour of a finding's severity ("error", "warning", "info", "ok") in the
    current theme; the severity is also said in words beside it, never by colour alone."""
    if severity == "error":
        return error_color()
    if severity == "warning":
        return QColor(WARNING_COLORS[_dark])
    if severity == "ok":
        return QColor(OK_COLORS[_dark])
    return muted_color()


class _ErrorTextFollower(QObject):
    def __init__(self, widget: QWidget, extra_css: str) -> None:
        super().__init__(widget)
        self._widget = widget
        self._extra = extra_css
        notifier().changed.connect(self.restyle)
        self.restyle()

    def restyle(self, *_args: object) -> None:
        self._widget.setStyleSheet(f"color: {error_color().name()};{self._extra}")


def follow_error_color(widget: QWidget, extra_css: str = "") -> None:
    """Give ``widget`` the theme's error text colour (its style sheet, plus ``extra_css``)
    now and after each theme change."""
    _ErrorTextFollower(widget, f" {extra_css}" if extra_css else "")


def banner_colors() -> tuple[QColor, QColor]:
    """(background, text) of a warning banner in the current theme."""
    if _dark:
        return QColor("#4a3d12"), QColor("#f5e6b0")
    return QColor("#fff4cc"), QColor("#3d3000")


def _apply_pyqtgraph_defaults() -> None:
    # Only when a view already imported pyqtgraph: start-up must not pay for it.
    pg: Any = sys.modules.get("pyqtgraph")
    if pg is None:
        return
    background, foreground = plot_colors()
    pg.setConfigOptions(background=background, foreground=foreground)


class _PlotFollower(QObject):
    def __init__(self, plot_widget: QWidget) -> None:
        super().__init__(plot_widget)
        self._plot = plot_widget
        notifier().changed.connect(self.restyle)
        self.restyle()

    def restyle(self, *_args: object) -> None:
        style_plot(self._plot)


#: Chart text colours of each theme, by role: an item painted in one theme's colour
#: gets the other theme's colour for the same role on a live switch.
_THEMED_TEXT = {
    "#2b2b2b": "foreground",
    "#d5d8dd": "foreground",
    "#676c73": "muted",
    "#9aa0a8": "muted",
}
_THEMED_BACKGROUNDS = frozenset({"#ffffff", "#1e1f22"})


def style_plot(plot_widget: Any) -> None:
    """Set a pyqtgraph PlotWidget's background, axes, title, legend and text items
    from the theme (every text drawn in a theme colour follows a live switch)."""
    background, foreground = plot_colors()
    plot_widget.setBackground(background)
    get_item = getattr(plot_widget, "getPlotItem", None)
    plot_item = get_item() if get_item is not None else None
    if plot_item is None:
        return
    for name in ("left", "bottom", "right", "top"):
        axis = plot_item.getAxis(name)
        if axis is not None:
            axis.setPen(foreground)
            axis.setTextPen(foreground)
    _restyle_chart_text(plot_widget, background, foreground)


def _restyle_chart_text(plot_widget: Any, background: QColor, foreground: QColor) -> None:
    pg: Any = sys.modules.get("pyqtgraph")
    scene = plot_widget.scene() if hasattr(plot_widget, "scene") else None
    if pg is None or scene is None:
        return
    colors = {"foreground": foreground, "muted": muted_color()}

    def themed(color: object) -> QColor | None:
        if color is None:
            return foreground
        try:
            name = pg.mkColor(color).name()
        except (TypeError, ValueError, Exception):  # an unreadable colour is left alone
            return None
        role = _THEMED_TEXT.get(name)
        return colors[role] if role is not None else None

    for item in scene.items():
        if isinstance(item, pg.TextItem):
            new = themed(getattr(item, "color", None))
            if new is not None:
                item.setColor(new)
        elif isinstance(item, pg.LabelItem):
            new = themed(item.opts.get("color"))
            if new is not None and item.text:
                item.setText(item.text, color=new)
            elif new is not None:
                item.setAttr("color", new)
        elif isinstance(item, pg.LegendItem):
            if item.opts.get("labelTextColor") is not None:
                new = themed(item.opts["labelTextColor"])
                if new is not None:
                    item.setLabelTextColor(new)
            brush = item.opts.get("brush")
            if brush is not None and pg.mkBrush(brush).color().name() in _THEMED_BACKGROUNDS:
                item.setBrush(background)


def follow_theme(plot_widget: QWidget) -> None:
    """Style a pyqtgraph PlotWidget now and again after every theme change."""
    _PlotFollower(plot_widget)
