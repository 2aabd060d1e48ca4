"""The Fleet tab on crafted surveys: inventory, outliers, the per-model chart, Compare, files."""

from __future__ import annotations

import json
from pathlib import Path

import pyqtgraph as pg
import pytest
from pytestqt.qtbot import QtBot
from survey_factory import gemm_run, gpu, node, survey
from ui_catalog_fixtures import small_catalog

from gpudesk.ui import fleet_view
from gpudesk.ui.fleet_view import COLUMNS, NO_RAY_TEXT, FleetView
from gpudesk.ui.state import AppState


def _survey_file(tmp_path: Path) -> Path:
    nodes = [
        node(f"n{i}", [gpu(0, catalog_id="a100")], [gemm_run(0, 280.0, "a100")]) for i in range(3)
    ]
    nodes.append(node("slow", [gpu(0, catalog_id="a100")], [gemm_run(0, 150.0, "a100")]))
    nodes.append(node("gone", error="the node died during the survey (NodeDiedError)"))
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(survey(nodes)))
    return path


def _view(qtbot: QtBot) -> FleetView:
    view = FleetView(AppState(catalog=small_catalog()))
    qtbot.addWidget(view)
    return view


def _cell(view: FleetView, row: int, column: str) -> str:
    return str(view.model.item(row, COLUMNS.index(column)).text())


def test_opening_a_survey_fills_inventory_outliers_and_chart(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot)
    assert view.open_file(_survey_file(tmp_path))
    assert view.model.rowCount() == 5
    assert _cell(view, 0, "Node") == "host-n0"
    assert _cell(view, 0, "Model") == "A100 80GB", "the catalog's short name, not the raw id"
    assert _cell(view, 0, "Checks") == "ok"
    assert _cell(view, 3, "Checks") == "slow GEMM BF16"
    assert _cell(view, 4, "Checks").startswith("the node died")
    assert "5 nodes, 4 GPUs, 1 failed, 1 outlier. 4 × A100 80GB" in view.summary_label.text()
    assert "54% of the fleet median 280" in view.outlier_text.toPlainText()
    assert view.selected_model() == "a100"
    points = view.model_points("a100")
    assert [outlier for *_, outlier in points] == [False, False, False, True]
    assert view.save_button.isEnabled()


def test_compare_sends_the_model_to_the_compare_selection(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot)
    view.open_file(_survey_file(tmp_path))
    with qtbot.waitSignal(view.compare_tab_requested):
        view.compare_selected_model()
    assert "a100" in view.state.compare_ids


def test_a_bad_file_says_why_and_keeps_the_survey_shown(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot)
    view.open_file(_survey_file(tmp_path))
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    with qtbot.waitSignal(view.status_message) as message:
        assert not view.open_file(bad)
    assert "bad.json" in message.args[0]
    assert view.model.rowCount() == 5


def test_names_render_as_plain_text(qtbot: QtBot, tmp_path: Path) -> None:
    document = survey([node("x", [gpu(0, name="<img src=x>", catalog_id=None)])])
    path = tmp_path / "html.json"
    path.write_text(json.dumps(document))
    view = _view(qtbot)
    view.open_file(path)
    assert _cell(view, 0, "Model") == "<img src=x>"
    assert view.summary_label.textFormat().name == "PlainText"


def test_save_writes_the_survey_with_a_fresh_summary(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot)
    view.open_file(_survey_file(tmp_path))
    out = tmp_path / "copy.json"
    assert view.save_file(out)
    saved = json.loads(out.read_text())
    assert saved["summary"]["gpus"] == 4
    assert view.save_file(tmp_path / "missing-folder" / "x.json") is False


def test_before_any_survey_the_chart_says_what_will_be_there(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot)
    item = view.plot.getPlotItem()
    # no empty 0-1 axes that read as data; words instead
    assert "appears here after a survey" in item.titleLabel.text
    assert not item.getAxis("left").isVisible() and not item.getAxis("bottom").isVisible()
    assert "`" not in view.summary_label.text()
    # Ray's timeout is per node; Slurm's covers the whole step from submission.
    view.scheduler_combo.setCurrentIndex(view.scheduler_combo.findData("slurm"))
    assert view.timeout_spin.text() == "300 s in all"
    assert "queue" in view.timeout_spin.toolTip()
    view.scheduler_combo.setCurrentIndex(view.scheduler_combo.findData("ray"))
    assert view.timeout_spin.text() == "300 s per node"
    # at 1366 px every column header shows: no sideways scrolling in an empty table
    view.resize(1366, 700)
    view.show()
    qtbot.waitExposed(view)
    assert view.table.horizontalHeader().length() <= view.table.viewport().width()
    assert view.open_file(_survey_file(tmp_path))
    assert view.selected_model() == "a100"
    assert item.getAxis("left").isVisible() and item.getAxis("bottom").isVisible()


def test_rows_are_one_text_line_high(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot)
    assert view.open_file(_survey_file(tmp_path))
    line = view.table.fontMetrics().height()
    assert all(view.table.rowHeight(row) <= line + 8 for row in range(view.model.rowCount()))


def test_the_model_cell_keeps_the_catalog_id_in_its_tooltip(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot)
    view.open_file(_survey_file(tmp_path))
    row = COLUMNS.index("Model")
    assert view.model.item(0, row).text() == "A100 80GB"
    assert "catalog id a100" in view.model.item(0, row).toolTip()
    assert "4 × A100 80GB" in view.summary_label.text()
    assert view.model_combo.currentText() == "A100 80GB (4)"
    assert view.selected_model() == "a100"  # Compare still gets the id
    title = view.plot.getPlotItem().titleLabel.text
    assert "A100 80GB" in title and "a100" not in title


def test_checks_keeps_room_for_its_header(qtbot: QtBot, tmp_path: Path) -> None:
    view = _view(qtbot)
    view.resize(1366, 700)
    view.show()
    qtbot.waitExposed(view)
    view.open_file(_survey_file(tmp_path))
    header = view.table.horizontalHeader()
    checks = COLUMNS.index("Checks")
    assert view.table.columnWidth(checks) >= header.sectionSizeFromContents(checks).width()
    # a long check text elides in the cell; the tooltip keeps all of it
    assert view.model.item(4, checks).toolTip().startswith("the node died")


def test_each_bar_carries_its_figure_and_the_medians_draw_over_the_bars(
    qtbot: QtBot, tmp_path: Path
) -> None:
    view = _view(qtbot)
    view.open_file(_survey_file(tmp_path))
    items = view.plot.getPlotItem().items
    bars = [item for item in items if isinstance(item, pg.BarGraphItem)]
    lines = [item for item in items if isinstance(item, pg.InfiniteLine)]
    figures = sorted(
        item.textItem.toPlainText()
        for item in items
        if isinstance(item, pg.TextItem) and not isinstance(item, pg.InfLineLabel)
    )
    assert figures == ["150", "280", "280", "280"]
    assert len(bars) == 1 and len(lines) == 2
    assert all(line.zValue() > bars[0].zValue() for line in lines)


def test_without_ray_survey_is_disabled_and_says_so_up_front(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fleet_view, "ray_installed", lambda: False)
    monkeypatch.setenv("PATH", "")  # no srun either
    view = _view(qtbot)
    assert not view.survey_button.isEnabled()
    assert view.survey_button.toolTip() == NO_RAY_TEXT
    assert NO_RAY_TEXT in view.summary_label.text()
    assert view.open_button.isEnabled()


def test_with_slurm_and_no_ray_the_survey_runs_on_slurm(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(fleet_view, "ray_installed", lambda: False)
    for name in ("srun", "scontrol"):
        tool = tmp_path / name
        tool.write_text("#!/bin/sh\nexit 1\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    view = _view(qtbot)
    assert view.scheduler_combo.currentData() == "slurm"
    assert view.survey_button.isEnabled()
    assert NO_RAY_TEXT not in view.summary_label.text()


def _healthy_fleet_with_one_broken(tmp_path: Path) -> Path:
    """48 H100s at 700-707 TFLOPS (an ordinary result, 89-90% of a published median), one
    at 405 and one hot one: issue 42 item 2's survey."""
    nodes = [node(f"n{i:02d}", [gpu(0)], [gemm_run(0, 700.0 + i % 8)]) for i in range(48)]
    nodes.insert(5, node("broken", [gpu(0)], [gemm_run(0, 405.0)]))
    nodes.insert(2, node("hot", [gpu(0, clock_event_reasons=["hw_thermal_slowdown"])]))
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(survey(nodes)))
    return path


def test_a_healthy_fleet_flags_only_the_broken_gpu_which_stands_out(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from gpudesk.ui import theme

    view = _view(qtbot)
    assert view.open_file(_healthy_fleet_with_one_broken(tmp_path))
    assert "50 GPUs, 0 failed, 2 outliers" in view.summary_label.text()
    lines = view.outlier_text.toPlainText().splitlines()
    assert lines[0].startswith("host-broken GPU 0: GEMM BF16 405 TFLOPS is 58% of the fleet")
    assert lines[1].startswith("host-hot GPU 0:")
    # the reference: one line for the model, not 48 paragraphs
    reference = [line for line in lines if "fleet median of 49 GPUs" in line]
    assert len(reference) == 1 and "reference median" in reference[0]
    assert sum("reference" in line for line in lines) <= 2
    checks = [_cell(view, row, "Checks") for row in range(view.model.rowCount())]
    assert checks.count("ok") == 48
    # each row says its share of the published reference
    shares = {_cell(view, row, "of ref") for row in range(view.model.rowCount())}
    assert "89%" in shares or "90%" in shares
    # the slow GPU in its own colour and bold; the hot one in the warning colour; the rest plain
    nodes = [_cell(view, row, "Node") for row in range(view.model.rowCount())]
    broken = view.model.item(nodes.index("host-broken"), 0)
    hot = view.model.item(nodes.index("host-hot"), 0)
    healthy = view.model.item(nodes.index("host-n00"), 0)
    assert broken.font().bold() and not hot.font().bold() and not healthy.font().bold()
    assert broken.foreground().color() == theme.error_color()
    assert hot.foreground().color() == theme.severity_color("warning")
    assert healthy.foreground().color() != broken.foreground().color()
    theme.apply_theme(theme.ThemeMode.DARK)
    try:
        assert broken.foreground().color() == theme.error_color(), "follows a live switch"
    finally:
        theme.apply_theme(theme.ThemeMode.LIGHT)
    # the chart: only the broken bar in the outlier colour
    points = view.model_points("h100-sxm5")
    assert [label for label, _, slow in points if slow] == ["host-broken GPU 0"]


def test_the_median_labels_sit_above_the_plot_and_never_over_a_bar(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """Issue 42 item 3: the "85% of median" box covered the first bar, the median line
    struck through its own label, and both kept the old theme's box on a live switch."""
    view = _view(qtbot)
    view.resize(1366, 700)
    view.show()
    qtbot.waitExposed(view)
    view.open_file(_survey_file(tmp_path))
    plot_item = view.plot.getPlotItem()
    labels = [item for item in plot_item.items if isinstance(item, pg.InfLineLabel)]
    assert labels == [], "no label boxes inside the plot"
    top = plot_item.getAxis("top")
    assert top.isVisible()
    ticks = [text for _, text in top._tickLevels[0]]
    assert ticks == ["238", "280"]  # 85% of the median, the median
    assert "85%" in top.toolTip() and "median" in top.toolTip()
    assert "dashed: fleet median · dotted: 85% of it" in plot_item.titleLabel.text
