"""How fast? → Train: the detail line under the training chart says what the chart and the
table say (issue 42 item 9: "its detail line contradicts it")."""

from __future__ import annotations

import re

import pytest
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import load_catalog
from gpudesk.speed.estimate import Mode
from gpudesk.speed.text import figure_text
from gpudesk.ui.plan.speed_results import training_basis_html
from gpudesk.ui.plan.speed_roofline import training_rows
from gpudesk.ui.plan.view import PlanView
from gpudesk.ui.state import AppState


@pytest.fixture
def train_view(qtbot: QtBot) -> PlanView:
    view = PlanView(AppState(catalog=load_catalog([], include_user=False)))
    qtbot.addWidget(view)
    form = view.fit_page.form
    form.model_combo.setCurrentIndex(form.model_combo.findData("llama-3.1-8b"))
    view.recompute_now()
    page = view.speed_page
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("train"))
    page.recompute_now()
    return view


def _first_sentence(text: str) -> str:
    return text.split("\n")[0]


def test_the_detail_line_gives_the_selected_bar_per_gpu_and_the_table_total(
    train_view: PlanView,
) -> None:
    page = train_view.speed_page
    chart = page.roofline_stack
    assert chart.currentWidget() is chart.train_widget
    checked = 0
    for row in range(min(3, page.tree.topLevelItemCount())):
        page.tree.setCurrentItem(page.tree.topLevelItem(row))
        result = page.results[row]
        assert result.mode is Mode.TRAIN
        label, per_gpu, mfu = next(
            bar
            for bar in chart.train_rows
            if bar[0] == (result.name if result.count == 1 else f"{result.name} × {result.count}")
        )
        line = _first_sentence(page.basis_view.toPlainText())
        # the bar's own figures, in the bar's words, come first
        assert f"{figure_text(per_gpu)} tokens/s per GPU" in line, (label, line)
        assert f"{mfu:.0%} MFU" in line, line
        # the table's figure is the total over all the GPUs, and said to be
        table_total = page.tree.topLevelItem(row).text(2)
        if result.count > 1:
            assert f"all {result.count} GPUs: {table_total} tokens/s" in line, line
        # no figure in it is a bare "tokens/s" without its basis (per GPU or all GPUs)
        assert "this is" not in line and "bound " not in line
        checked += 1
    assert checked == 3


def test_per_gpu_times_count_is_the_table_total_in_every_bar(train_view: PlanView) -> None:
    page = train_view.speed_page
    rows = page.roofline_stack.train_rows
    assert len(rows) >= 2
    for (_, per_gpu, mfu), result in zip(rows, page.results, strict=False):
        assert per_gpu * result.count == pytest.approx(result.tokens_per_s)
        assert mfu == result.efficiency


def test_a_calibrated_row_reads_the_calibrated_figure_in_chart_and_line(
    train_view: PlanView,
) -> None:
    """Calibration moves ``tokens_per_s`` (and efficiency) but not
    ``tokens_per_s_per_gpu``: the chart had shown the uncalibrated per-GPU figure beside
    the calibrated total and MFU."""
    result = train_view.speed_page.results[0]
    calibrated = result.model_copy(
        update={
            "tokens_per_s": result.tokens_per_s * 0.5,
            "efficiency": result.efficiency * 0.5,
            "calibrated": "x0.50 from 1 measurement of yours",
        }
    )
    assert calibrated.tokens_per_s_per_gpu == result.tokens_per_s_per_gpu
    (_, per_gpu, mfu), *_ = training_rows([calibrated], None)
    assert per_gpu == pytest.approx(calibrated.tokens_per_s / calibrated.count)
    line = training_basis_html(calibrated)
    assert f"{figure_text(per_gpu)} tokens/s per GPU" in line
    assert f"{mfu:.0%} MFU" in line
    assert "Calibrated: x0.50" in line
    # the per-GPU bound in the line is the chart's MFU's denominator
    bound = re.search(r"would train ([\d,.]+) tokens/s", line)
    assert bound is not None
    assert float(bound.group(1).replace(",", "")) == pytest.approx(
        calibrated.bound_tokens_per_s / calibrated.count, rel=0.01
    )
