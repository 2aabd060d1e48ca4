"""The Plan tab's "How fast?" page and the Compare tab's tokens/s row."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import load_catalog
from gpudesk.measured import MeasuredSeries
from gpudesk.speed.planner import SpeedWorkload
from gpudesk.ui.compare_speed_row import SPEED_PENDING
from gpudesk.ui.compare_view import CompareView
from gpudesk.ui.plan.view import PlanView
from gpudesk.ui.state import AppState


@pytest.fixture
def state() -> AppState:
    return AppState(catalog=load_catalog([], include_user=False))


@pytest.fixture
def view(qtbot: QtBot, state: AppState) -> PlanView:
    widget = PlanView(state)
    qtbot.addWidget(widget)
    form = widget.fit_page.form
    form.model_combo.setCurrentIndex(form.model_combo.findData("llama-3.1-8b"))
    widget.recompute_now()
    return widget


def test_decode_ranks_the_catalog_fastest_first(view: PlanView, state: AppState) -> None:
    page = view.speed_page
    assert page.error is None
    speeds = [item.tokens_per_s for item in page.results]
    assert len(speeds) > 10 and speeds == sorted(speeds, reverse=True)
    assert page.tree.topLevelItemCount() == len(page.results)
    assert "llama.cpp" in page.summary_label.text()
    assert isinstance(state.speed_workload, SpeedWorkload)
    # the first row is selected and its basis shown with the bound
    assert "Bound" in page.basis_view.toPlainText() or "bound" in page.basis_view.toPlainText()
    assert page.roofline.getPlotItem().listDataItems()


def test_mode_changes_controls_and_figures(view: PlanView) -> None:
    page = view.speed_page
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("train"))
    page.recompute_now()
    assert page.form.tokens_edit.isEnabled() and not page.form.engine_combo.isEnabled()
    assert all(item.time_s is not None for item in page.results)
    assert page.tree.headerItem().text(6) == "run time"


def test_bad_training_tokens_show_a_message_and_keep_the_window(
    view: PlanView, state: AppState
) -> None:
    page = view.speed_page
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("train"))
    page.form.tokens_edit.setText("lots")
    page.recompute_now()
    assert page.error is not None and "lots" in page.error
    assert page.form.error_label.isVisibleTo(page)
    assert page.tree.topLevelItemCount() == 0
    assert state.speed_workload is None
    page.form.tokens_edit.setText("2e9")
    page.recompute_now()
    assert page.error is None and page.results


def test_this_machine_measured_line(view: PlanView, state: AppState) -> None:
    state.set_measured(
        MeasuredSeries(
            label="RTX 4090 (measured)",
            catalog_id="rtx-4090",
            values={"bandwidth_gbs": 800.0, "bf16_tensor_tflops": 140.0},
            measured_at=dt.datetime(2026, 11, 2, tzinfo=dt.UTC),
        )
    )
    page = view.speed_page
    page.recompute_now()
    assert page.measured_result is not None
    text = page.measured_label.text()
    assert "this machine (measured)" in text.lower() and "2026-11-02" in text
    catalog_4090 = next(item for item in page.results if item.gpu_id == "rtx-4090")
    assert page.measured_result.tokens_per_s < catalog_4090.tokens_per_s


def test_compare_gets_a_tokens_per_s_row(qtbot: QtBot, view: PlanView, state: AppState) -> None:
    compare = CompareView(state)
    qtbot.addWidget(compare)
    state.set_compare(["rtx-4090", "h100-sxm5"])
    assert compare.comparison is not None
    pending = compare.comparison.row("speed")  # at once, while the worker estimates
    assert pending.label.startswith("tokens/s for Llama 3.1 8B")
    assert set(pending.values) == {SPEED_PENDING}
    qtbot.waitUntil(lambda: compare.comparison.row("speed").values[0] != SPEED_PENDING)
    row = compare.comparison.row("speed")
    assert row.label.startswith("tokens/s for Llama 3.1 8B")
    assert all(isinstance(value, str) and value[0].isdigit() for value in row.values)
    state.set_speed_workload(None)
    with pytest.raises(KeyError):
        compare.comparison.row("speed")


def test_roofline_axes_label_whole_decades_only(view: PlanView) -> None:
    """pyqtgraph's log axis labelled 2..9 of every decade; at 1920 px they ran together."""
    page = view.speed_page
    page.recompute_now()
    plot = page.roofline.getPlotItem()
    for side in ("bottom", "left"):
        ticks = plot.getAxis(side)._tickLevels
        assert ticks, side
        positions = [position for position, _ in ticks[0]]
        assert len(positions) >= 2, side
        assert all(float(position).is_integer() for position in positions), (side, positions)


def test_training_draws_tokens_per_s_and_mfu_per_gpu_instead_of_a_paragraph(
    view: PlanView,
) -> None:
    """Issue 42 item 9: the Train page was a paragraph in a blank 300 px chart."""
    page = view.speed_page
    assert page.roofline_stack.currentWidget() is page.roofline, "decode draws its roofline"
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("train"))
    page.recompute_now()
    assert page.results and all(item.roofline.flops_per_byte == 0 for item in page.results)
    chart = page.roofline_stack
    assert chart.currentWidget() is chart.train_widget
    rows = chart.train_rows
    assert 2 <= len(rows) <= 10
    first = page.results[0]
    per_gpu = first.tokens_per_s_per_gpu or first.tokens_per_s / first.count
    assert rows[0][1] == per_gpu and rows[0][2] == first.efficiency
    assert all(0 < mfu <= 1 for _, _, mfu in rows)
    bars = [
        item
        for item in chart.train_widget.getPlotItem().items
        if hasattr(item, "opts") and "width" in getattr(item, "opts", {})
    ]
    assert bars, "one bar per GPU"
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("decode"))
    page.recompute_now()
    assert page.roofline_stack.currentWidget() is page.roofline
    assert page.roofline.getPlotItem().listDataItems()


def test_merely_opening_plan_adds_no_tokens_per_s_row(qtbot: QtBot, state: AppState) -> None:
    """Opening Plan computed a default workload and Compare grew a "tokens/s for 7B…"
    row: the row waits for a workload the user set."""
    plan = PlanView(state)
    qtbot.addWidget(plan)
    plan.recompute_now()
    assert plan.speed_page.results  # the page itself shows the defaults' figures
    assert state.speed_workload is None
    compare = CompareView(state)
    qtbot.addWidget(compare)
    state.set_compare(["rtx-4090", "h100-sxm5"])
    with pytest.raises(KeyError):
        compare.comparison.row("speed")
    plan.speed_page.form.batch_spin.setValue(plan.speed_page.form.batch_spin.value() + 1)
    plan.speed_page.recompute_now()
    assert isinstance(state.speed_workload, SpeedWorkload)
    assert compare.comparison.row("speed").label.startswith("tokens/s for")


def _config_with_quant(tmp_path: Path, method: str) -> Path:
    configs = Path(__file__).parent.parent / "planning" / "configs"
    document = json.loads((configs / "llama-3.1-8b.json").read_text(encoding="utf-8"))
    document["quantization_config"] = {"quant_method": method}
    target = tmp_path / "config.json"
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


@pytest.mark.parametrize(
    ("method", "fmt"), [("fp8", "fp8"), ("AWQ", "awq"), ("gptq", "gptq"), ("mxfp4", "mxfp4")]
)
def test_how_fast_takes_a_config_jsons_declared_weights_like_will_it_fit(
    view: PlanView, tmp_path: Path, method: str, fmt: str
) -> None:
    """Loading a quantised checkpoint's config.json on "Will it fit?" set its weights there
    but "How fast?" kept estimating GGUF Q4_K_M on llama.cpp."""
    page = view.speed_page
    assert page.form.quant_combo.currentData() == "q4_k_m"
    assert view.fit_page.form.load_config(_config_with_quant(tmp_path, method))
    page.recompute_now()
    assert view.fit_page.form.quant_combo.currentData() == fmt
    assert page.form.quant_combo.currentData() == fmt
    assert page.form.engine_combo.currentData() == "vllm"  # llama.cpp has no such weights
    assert page._request is not None and page._request.quant.value == fmt
    note = page.form.config_note
    assert not note.isHidden() and "vllm" in note.text()
    # a plain config afterwards hides the note again (and leaves the user's choice)
    assert view.fit_page.form.load_config(
        Path(__file__).parent.parent / "planning" / "configs" / "llama-3.1-8b.json"
    )
    assert note.isHidden() and page.form.quant_combo.currentData() == fmt


def test_how_fast_names_a_declared_format_it_cannot_size(view: PlanView, tmp_path: Path) -> None:
    page = view.speed_page
    assert view.fit_page.form.load_config(_config_with_quant(tmp_path, "compressed-tensors"))
    assert page.form.quant_combo.currentData() == "q4_k_m"
    assert page.form.engine_combo.currentData() == "llama.cpp"
    assert "'compressed-tensors'" in page.form.config_note.text()


def test_the_roofline_key_leaves_the_workload_line_and_its_label_clear(
    qtbot: QtBot, view: PlanView
) -> None:
    """At 1366x768 the key (top left) covered the dashed "this workload" line and its
    label, about a decade from the left edge."""
    from PySide6.QtWidgets import QApplication

    from gpudesk.ui import theme

    view.resize(1366, 700)
    view.show()
    view.tabs.setCurrentWidget(view.speed_page)
    page = view.speed_page
    page.recompute_now()
    qtbot.waitExposed(view)
    QApplication.processEvents()
    line = page.workload_line
    assert line is not None and page.legend is not None
    key = page.legend.sceneBoundingRect()
    assert key.width() > 0
    assert not key.intersects(line.label.sceneBoundingRect())
    assert not key.intersects(line.sceneBoundingRect())
    for mode in (theme.ThemeMode.LIGHT, theme.ThemeMode.DARK):
        theme.apply_theme(mode)
        label = page.workload_line
        assert label is not None
        assert label.label.color.name() == theme.muted_color().name()
    theme.apply_theme(theme.ThemeMode.LIGHT)
