"""Every control a user reaches has a name a screen reader says; every chart a text
alternative (issue 42 item 4: 28 of 151 controls had none, no chart had text)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from PySide6.QtWidgets import QApplication, QComboBox, QGraphicsView, QWidget
from pytestqt.qtbot import QtBot
from survey_factory import gemm_run, gpu, node, survey

from gpudesk.measured import MeasuredSeries
from gpudesk.ui.accessible import (
    accessible_name,
    chart_access,
    chart_text,
    controls,
    is_chart,
    name_controls,
)
from gpudesk.ui.main_window import MainWindow
from gpudesk.ui.settings import open_settings

#: (main tab, sub-tab index or None): every page a user can switch to.
PAGES = [
    ("Catalog", None),
    ("Compare", None),
    ("This machine", 0),
    ("This machine", 1),
    ("Plan", 0),
    ("Plan", 1),
    ("Plan", 2),
    ("Fleet", None),
]


def _pump(rounds: int = 4) -> None:
    for _ in range(rounds):
        QApplication.processEvents()


def _window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    window = MainWindow(settings=open_settings(tmp_path / "a11y.conf"))
    window.save_on_close = False
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    window.state.set_compare(["rtx-4090", "h100-sxm5", "mi300x"])
    window.state.set_measured(
        MeasuredSeries(
            label="Xeon CPU (measured, numpy)",
            catalog_id=None,
            values={"fp32_tflops": 0.046},
            measured_at=dt.datetime(2026, 12, 1, 12, 0),
        )
    )
    nodes = [node(f"n{i}", [gpu(0)], [gemm_run(0, 700.0 + i)]) for i in range(4)]
    nodes.append(node("slow", [gpu(0)], [gemm_run(0, 405.0)]))
    survey_file = tmp_path / "survey.json"
    survey_file.write_text(json.dumps(survey(nodes)), encoding="utf-8")
    assert window.view("Fleet").open_file(survey_file)  # type: ignore[attr-defined]
    for title, sub in PAGES:
        window.show_tab(title)
        if sub is not None:
            window.view(title).tabs.setCurrentIndex(sub)  # type: ignore[attr-defined]
        _pump()
    return window


def _where(widget: QWidget) -> str:
    parents = []
    parent = widget.parentWidget()
    while parent is not None and len(parents) < 3:
        parents.append(type(parent).__name__)
        parent = parent.parentWidget()
    return f"{type(widget).__name__} in {' < '.join(parents)} (tooltip {widget.toolTip()!r})"


def test_every_interactive_widget_has_a_name_and_every_chart_a_text(
    qtbot: QtBot, tmp_path: Path
) -> None:
    window = _window(qtbot, tmp_path)
    found = controls(window)
    # the walk reaches the whole window: every tab's tables, combos and charts
    assert len(found) >= 150, len(found)
    unnamed = [_where(widget) for widget in found if not accessible_name(widget, window)]
    assert unnamed == [], unnamed
    # no two combos on one page share a name ("log", "log" said nothing)
    combos = [accessible_name(w, window) for w in found if isinstance(w, QComboBox)]
    assert "X axis figure" in combos and "Y axis figure" in combos
    charts = [widget for widget in found if is_chart(widget)]
    assert len(charts) >= 9, [type(chart).__name__ for chart in charts]
    for chart in charts:
        assert chart_access(chart) is not None, _where(chart)
        assert chart.accessibleDescription().strip(), _where(chart)
    window.close()


def test_a_chart_copies_its_data_as_text(qtbot: QtBot, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path)
    compare = window.view("Compare")
    radar = compare.radar  # type: ignore[attr-defined]
    access = chart_access(radar)
    assert access is not None
    access.copy_action.trigger()
    copied = QApplication.clipboard().text()
    assert copied == chart_text(radar)
    assert "RTX 4090: Memory 24" in copied
    assert "Xeon CPU (measured, numpy): " in copied and "FP32 0.046" in copied
    assert "RTX 4090" in radar.accessibleDescription()
    bars = chart_text(compare.bars)  # type: ignore[attr-defined]
    assert bars.startswith("Bars: ") and "H100 SXM5 80GB: " in bars
    assert "Scatter: " in chart_text(compare.scatter)  # type: ignore[attr-defined]
    assert "On-demand $/GPU-hour" in chart_text(compare.price_chart)  # type: ignore[attr-defined]
    fleet = chart_text(window.view("Fleet").plot)  # type: ignore[attr-defined]
    assert "GEMM BF16 per device" in fleet and "bars: 700, 701, 702, 703, 405" in fleet
    window.close()


def test_a_label_beside_an_unnamed_control_becomes_its_buddy(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QHBoxLayout, QLabel, QTableView

    root = QWidget()
    qtbot.addWidget(root)
    row = QHBoxLayout(root)
    row.addWidget(QLabel("Figure:"))
    combo = QComboBox()
    row.addWidget(combo)
    quiet = QComboBox()
    quiet.setToolTip("Where llama.cpp runs the measurement (this machine's CPU or GPU)")
    row.addWidget(quiet)
    lost = QTableView()
    row.addWidget(lost)
    assert [accessible_name(widget, root) for widget in (combo, quiet, lost)] == ["", "", ""]
    assert name_controls(root) == [lost]  # nothing says what the table is: reported
    assert accessible_name(combo, root) == "Figure"
    assert accessible_name(quiet, root) == "Where llama.cpp runs the measurement"
    assert not isinstance(lost, QGraphicsView)
