"""A dismissible banner listing catalog files that could not be loaded."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpudesk.catalog.loader import CatalogProblem
from gpudesk.ui import theme

#: Lines shown before "Show all" is needed.
_COLLAPSED_LINES = 3


class ProblemsBanner(QFrame):
    """Lists ``file: field: message`` for each problem; hides itself when dismissed.

    It never blocks: the rest of the catalog is loaded and usable below it.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("problems_banner")
        self.problems: list[CatalogProblem] = []
        self._notice_lines: list[str] = []
        self._expanded = False
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        text_column = QVBoxLayout()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        text_column.addWidget(self.summary)
        self.details = QLabel()
        # Plain text in the fixed-pitch font: paths and field names stay exact
        # (rich text clipped the underscores of the last line).
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setWordWrap(True)
        text_column.addWidget(self.details)
        layout.addLayout(text_column, 1)
        self.toggle_button = QToolButton()
        self.toggle_button.setText("Show all")
        self.toggle_button.setAccessibleName("Show or hide every problem")
        self.toggle_button.clicked.connect(self._toggle)
        layout.addWidget(self.toggle_button, 0, Qt.AlignmentFlag.AlignTop)
        self.dismiss_button = QToolButton()
        self.dismiss_button.setText("✕")
        self.dismiss_button.setToolTip("Dismiss (the files stay skipped until fixed and reloaded)")
        self.dismiss_button.setAccessibleName("Dismiss these problems")
        self.dismiss_button.clicked.connect(self.hide)
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        theme.notifier().changed.connect(self._restyle)
        self._restyle()
        self.hide()

    def set_problems(self, problems: Sequence[CatalogProblem]) -> None:
        """Show these problems (or hide when there are none)."""
        self.problems = list(problems)
        files = len({problem.path for problem in self.problems})
        noun = "file" if files == 1 else "files"
        self.summary.setText(
            f"<b>{files} catalog {noun} could not be loaded</b> and "
            f"{'was' if files == 1 else 'were'} skipped; everything else is loaded. "
            "Fix the file and press F5 to reload."
        )
        self._render()
        self.setVisible(bool(self.problems))

    def show_notice(self, summary: str, lines: Sequence[str]) -> None:
        """Show ``summary`` (plain text) above ``lines`` (or hide when there are none)."""
        self.problems = []
        self._notice_lines = list(lines)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setText(summary)
        self._render()
        self.setVisible(bool(self._notice_lines))

    def lines(self) -> list[str]:
        return [str(problem) for problem in self.problems] + self._notice_lines

    def _toggle(self) -> None:
        self._expanded = not self._expanded
        self._render()

    def _render(self) -> None:
        lines = self.lines()
        shown = lines if self._expanded else lines[:_COLLAPSED_LINES]
        text = "\n".join(shown)
        hidden = len(lines) - len(shown)
        if hidden:
            text += f"\n… and {hidden} more"
        self.details.setText(text)
        self.toggle_button.setVisible(len(lines) > _COLLAPSED_LINES)
        self.toggle_button.setText("Show fewer" if self._expanded else "Show all")

    def _restyle(self, *_args: object) -> None:
        background, foreground = theme.banner_colors()
        self.setStyleSheet(
            f"QFrame#problems_banner {{ background: {background.name()};"
            f" border-bottom: 1px solid rgba({foreground.red()}, {foreground.green()},"
            f" {foreground.blue()}, 64); }}"
            f" QFrame#problems_banner QLabel {{ color: {foreground.name()}; }}"
        )
