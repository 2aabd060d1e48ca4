"""The "Check health" result on This machine → Devices: ``gpudesk doctor``'s findings.

The check itself is :func:`gpudesk.health.doctor.check_machine`, the same
function the CLI runs; this panel only shows its report (or why it could not
run), worded for the GUI.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from gpudesk.health.doctor import DoctorReport, Finding
from gpudesk.ui import theme

_SEVERITY_WORDS = {"error": "Error", "warning": "Warning", "info": "Note"}


@dataclass(frozen=True, slots=True)
class HealthProblem:
    """Why the check could not run (no NVIDIA GPU, no nvidia-smi), for the panel."""

    title: str
    message: str


def _finding_html(finding: Finding) -> str:
    color = theme.severity_color(finding.severity).name()
    word = _SEVERITY_WORDS[finding.severity]
    return (
        f"<li><span style='color:{color}'><b>{word}</b></span> "
        f"<i>{html.escape(finding.check)}</i>: {html.escape(finding.message)}</li>"
    )


def report_html(report: DoctorReport) -> str:
    """The report as rich text: a verdict per GPU, its disagreements and findings."""
    parts: list[str] = []
    warnings = sum(
        1
        for finding in [*report.findings, *(f for gpu in report.gpus for f in gpu.findings)]
        if finding.severity == "warning"
    )
    if not report.ok:
        verdict, color = "Problems found", theme.severity_color("error").name()
    elif warnings:
        # passing, as doctor's exit code says, but not "all checks passed"
        plural = "s" if warnings != 1 else ""
        verdict, color = (
            f"Passed, with {warnings} warning{plural}",
            theme.severity_color("warning").name(),
        )
    else:
        verdict, color = "All checks passed", theme.severity_color("ok").name()
    parts.append(f"<p><b style='color:{color}'>{verdict}</b>")
    if report.nvidia_smi:
        parts.append(f" &nbsp;(compared with {html.escape(report.nvidia_smi)})")
    parts.append("</p>")
    for gpu in report.gpus:
        name = html.escape(gpu.name or "unknown GPU")
        parts.append(f"<p><b>GPU {gpu.index}: {name}</b>")
        if gpu.agreement:
            bad = gpu.disagreeing
            agreed = len(gpu.agreement) - len(bad)
            parts.append(f" — nvidia-smi agrees on {agreed} of {len(gpu.agreement)} fields")
        parts.append("</p><ul>")
        error = theme.severity_color("error").name()
        for field_name in gpu.disagreeing:
            field = gpu.agreement[field_name]
            parts.append(
                f"<li><span style='color:{error}'><b>Disagrees</b></span> "
                f"<i>{html.escape(field_name)}</i>: GPUDesk {html.escape(str(field.gpudesk))}, "
                f"nvidia-smi {html.escape(str(field.nvidia_smi))}</li>"
            )
        parts.extend(_finding_html(finding) for finding in gpu.findings)
        if not gpu.findings and not gpu.disagreeing:
            parts.append("<li>Nothing to report.</li>")
        parts.append("</ul>")
    if report.findings:
        parts.append("<p><b>This machine</b></p><ul>")
        parts.extend(_finding_html(finding) for finding in report.findings)
        parts.append("</ul>")
    return "".join(parts)


class HealthPanel(QFrame):
    """Shows the last health check, a problem that stopped it, or that it is running."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("healthPanel")
        self.setStyleSheet(
            "QFrame#healthPanel { border: 1px solid palette(mid); border-radius: 6px; }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        self.body = QLabel()
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.body)
        self.report: DoctorReport | None = None
        self._showing_report = False
        # The report's colours are the theme's: a light/dark switch writes it again.
        theme.notifier().changed.connect(self._restyle)

    def _restyle(self, *_args: object) -> None:
        if self._showing_report and self.report is not None:
            self.body.setText(report_html(self.report))

    def show_running(self, message: str) -> None:
        self._showing_report = False
        self.body.setText(f"<b>Checking health…</b> {html.escape(message)}")

    def show_report(self, report: DoctorReport) -> None:
        self.report = report
        self._showing_report = True
        self.body.setText(report_html(report))

    def show_problem(self, problem: HealthProblem) -> None:
        self.report = None
        self._showing_report = False
        self.body.setText(f"<b>{html.escape(problem.title)}</b><br>{html.escape(problem.message)}")

    def text(self) -> str:
        """What the panel shows, as plain text (tests, accessibility)."""
        from PySide6.QtGui import QTextDocument

        document = QTextDocument()
        document.setHtml(self.body.text())
        return document.toPlainText()
