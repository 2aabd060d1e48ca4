"""The Plan tab: live estimate, fitting GPUs linked to the catalog, the filter, cloud vs buy."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import make_entry
from hypothesis import HealthCheck, given, settings, strategies as st
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import Catalog
from gpudesk.memory.breakdown import PartKey
from gpudesk.ui.plan.view import PlanView
from gpudesk.ui.state import AppState


def _state() -> AppState:
    entries = [
        make_entry(
            "card-24",
            name="Card 24",
            memory_gb=24,
            bandwidth_gbs=1000,
            compute_capability="8.9",
            tdp_w=450,
            price_usd=1800.0,
            price_date=dt.date(2024, 1, 1),
            price_kind="street",
        ),
        make_entry("big-80", name="Big 80", memory_gb=80, bandwidth_gbs=2000, tdp_w=700),
        # 15 GiB = 16.1e9 bytes: one is short of the 16.7 GB a 7B bf16 model needs
        make_entry("card-16", name="Card 16", memory_gb=15, bandwidth_gbs=500),
        make_entry("old-8", name="Old 8", memory_gb=8, bandwidth_gbs=320, compute_capability="6.1"),
        make_entry(
            "rented",
            name="Rented",
            memory_gb=48,
            bandwidth_gbs=900,
            tdp_w=300,
            price_usd=5000.0,
            price_date=dt.date(2024, 1, 1),
            price_kind="street",
            cloud_hourly_usd=1.2,
            cloud_hourly_source="example provider",
            cloud_hourly_date=dt.date(2025, 1, 1),
        ),
    ]
    return AppState(catalog=Catalog(entries=entries))


@pytest.fixture
def view(qtbot: QtBot) -> PlanView:
    widget = PlanView(_state())
    qtbot.addWidget(widget)
    return widget


def _fit_ids(view: PlanView) -> list[str]:
    tree = view.fit_page.fits_tree
    return [str(tree.topLevelItem(i).data(0, 256)) for i in range(tree.topLevelItemCount())]


def test_default_7b_bf16_inference(view: PlanView) -> None:
    assert view.fit_page.form.params_edit.text() == "7B"
    assert view.fit_page.report is not None
    assert view.fit_page.report.estimate.part(PartKey.WEIGHTS).gb == pytest.approx(14.0)
    assert _fit_ids(view) == ["card-24", "rented", "big-80", "card-16"]
    assert "old-8" not in view.fitting_ids
    assert "= 13.04 GiB" in view.fit_page.formula_view.toPlainText()  # 14.0e9 bytes
    assert "Transformer Math 101" in view.fit_page.formula_view.toPlainText()
    # The stacked bar: one segment per non-zero part, laid end to end.
    opts = view.fit_page.bar_item.opts
    # in GiB, the page's unit (the estimate counts in GB = 10^9 bytes)
    total_gib = view.fit_page.report.estimate.total_gb * 1e9 / 2**30
    assert sum(opts["width"]) == pytest.approx(total_gib)
    assert opts["x0"][0] == 0 and opts["x0"][1] == pytest.approx(opts["width"][0])
    count_column = view.fit_page.fits_tree.topLevelItem(3).text(1)
    assert count_column == "2 (parallel)"
    assert "upper bound" in view.fit_page.fits_summary.text()
    assert "fits on 3 GPUs on its own" in view.fit_page.total_label.text()


def test_typing_recomputes_after_a_pause(qtbot: QtBot, view: PlanView) -> None:
    with qtbot.waitSignal(view.fit_page.fit_updated, timeout=2000) as blocker:
        view.fit_page.form.params_edit.setText("70B")
    report = blocker.args[0]
    assert report is not None
    assert report.estimate.part(PartKey.WEIGHTS).gb == pytest.approx(140.0)
    assert all(result.count != 1 for result in report.fits)
    assert {r.gpu_id: r.count for r in report.fits}["big-80"] == 2
    # No single card holds 140 GB here: said in words, not "fits on 0 GPUs on its own".
    assert "no single GPU holds it" in view.fit_page.total_label.text()
    assert "0 GPUs" not in view.fit_page.total_label.text()


def test_bad_parameter_count_shows_a_message_and_no_crash(qtbot: QtBot, view: PlanView) -> None:
    view.fit_page.form.params_edit.setText("-7B")
    view.recompute_now()
    assert view.fit_page.report is None
    assert view.fit_page.fit_error is not None and "negative" in view.fit_page.fit_error
    assert not view.fit_page.form.fit_error_label.isHidden()
    assert view.fit_page.fits_tree.topLevelItemCount() == 0
    assert view.fitting_ids == frozenset()
    view.fit_page.form.params_edit.setText("7B")
    view.recompute_now()
    assert view.fit_page.report is not None and view.fit_page.form.fit_error_label.isHidden()


def test_fit_errors_name_the_controls_and_what_to_choose(view: PlanView) -> None:
    form = view.fit_page.form
    _select(form.mode_combo, "train")
    _select(form.dtype_combo, "int8")
    view.recompute_now()
    assert view.fit_page.report is None
    assert view.fit_page.fit_error == (
        "Weights dtype int8: cannot be fully fine-tuned (that needs fp32, bf16 or fp16 "
        "weights); a quantised base can only be trained through LoRA adapters; choose "
        "Workload \u201cQLoRA fine-tuning (4-bit base)\u201d and Weights dtype \u201cbf16\u201d"
    )
    assert "--" not in view.fit_page.fit_error
    # Doing what it says works.
    _select(form.mode_combo, "qlora")
    _select(form.dtype_combo, "bf16")
    view.recompute_now()
    assert view.fit_page.report is not None and view.fit_page.fit_error is None


def test_preset_and_kv_cache(view: PlanView) -> None:
    view.fit_page.form.model_combo.setCurrentIndex(
        view.fit_page.form.model_combo.findData("llama-3.1-8b")
    )
    view.fit_page.form.seq_spin.setValue(8192)
    view.recompute_now()
    assert not view.fit_page.form.params_edit.isEnabled()
    assert view.fit_page.report is not None
    kv = view.fit_page.report.estimate.part(PartKey.KV_CACHE)
    assert kv.gb == pytest.approx(1.0737, abs=1e-4)
    assert "8 KV heads" in view.fit_page.formula_view.toPlainText()
    assert "huggingface.co/meta-llama" in view.fit_page.form.model_info.text()


def test_training_controls_follow_the_mode(view: PlanView) -> None:
    assert not view.fit_page.form.optimizer_combo.isEnabled()
    view.fit_page.form.mode_combo.setCurrentIndex(view.fit_page.form.mode_combo.findData("qlora"))
    assert (
        view.fit_page.form.optimizer_combo.isEnabled() and view.fit_page.form.rank_spin.isEnabled()
    )
    assert not view.fit_page.form.kv_combo.isEnabled()
    view.fit_page.form.checkpoint_check.setChecked(True)
    view.recompute_now()
    assert view.fit_page.report is not None
    assert view.fit_page.report.estimate.trainable_params > 0
    assert view.fit_page.fits_tree.isColumnHidden(5)  # no decode speed for training


CONFIGS = Path(__file__).parent.parent / "planning" / "configs"


def _select(combo: Any, data: object) -> None:
    index = combo.findData(data)
    assert index >= 0, data
    combo.setCurrentIndex(index)


def test_load_config_json_gives_the_presets_kv_cache(view: PlanView) -> None:
    form = view.fit_page.form
    assert form.load_config(CONFIGS / "qwen2.5-7b.json")
    form.seq_spin.setValue(32768)
    view.recompute_now()
    assert view.fit_page.report is not None
    from_config = view.fit_page.report.estimate.part(PartKey.KV_CACHE).gb
    assert "config.json" in form.model_combo.currentText()
    assert "4 KV heads" in form.model_info.text()
    _select(form.model_combo, "qwen2.5-7b")
    view.recompute_now()
    assert view.fit_page.report.estimate.part(PartKey.KV_CACHE).gb == pytest.approx(from_config)


def test_a_malformed_config_json_says_which_field_and_keeps_the_model(
    view: PlanView, tmp_path: Path
) -> None:
    form = view.fit_page.form
    bad = tmp_path / "config.json"
    bad.write_text('{"hidden_size": true, "num_hidden_layers": 2}')
    assert not form.load_config(tmp_path)
    view.recompute_now()  # a later recompute keeps the reason visible
    assert not form.config_error_label.isHidden()
    assert "'hidden_size'" in form.config_error_label.text()
    assert "not true" in form.config_error_label.text()
    assert form.model_combo.currentData() == "__custom__"
    assert view.fit_page.report is not None  # the previous model still estimates
    assert form.load_config(CONFIGS / "llama-3.1-8b.json")
    assert form.config_error_label.isHidden()


def test_assumed_shape_is_shown_and_kv_heads_can_be_given(view: PlanView) -> None:
    form = view.fit_page.form
    form.params_edit.setText("70B")
    form.seq_spin.setValue(4096)
    view.recompute_now()
    assert "grouped-query attention is not assumed" in " ".join(form.model_info.text().split())
    assumed_kv = view.fit_page.report.estimate.part(PartKey.KV_CACHE).gb  # type: ignore[union-attr]
    for field, value in (("layers", 80), ("hidden", 8192), ("heads", 64), ("kv_heads", 8)):
        form.shape_spins[field].setValue(value)
    view.recompute_now()
    assert view.fit_page.report is not None
    kv = view.fit_page.report.estimate.part(PartKey.KV_CACHE).gb
    assert kv == pytest.approx(2 * 80 * 8 * 128 * 2 * 4096 / 1e9)
    assert kv < assumed_kv / 5
    form.shape_spins["kv_heads"].setValue(7)  # 64 heads are not a multiple of 7
    view.recompute_now()
    assert view.fit_page.fit_error is not None and "KV heads 7" in view.fit_page.fit_error


def test_quant_engine_and_training_options_reach_the_estimate(view: PlanView) -> None:
    form = view.fit_page.form
    _select(form.model_combo, "llama-3.1-8b")
    _select(form.quant_combo, "q4_k_m")
    view.recompute_now()
    assert view.fit_page.report is not None
    assert "4.89 bits per weight" in view.fit_page.formula_view.toPlainText()
    assert view.fit_page.report.estimate.spec.engine is not None
    assert view.fit_page.report.estimate.spec.engine.value == "llama.cpp"
    _select(form.quant_combo, None)
    form.seq_spin.setValue(131072)
    _select(form.engine_combo, "vllm")
    view.recompute_now()
    assert view.fit_page.report.estimate.part(PartKey.ACTIVATIONS).gb < 2
    assert not form.training_checks["pure_bf16"].isEnabled()
    _select(form.mode_combo, "train")
    form.seq_spin.setValue(2048)
    form.checkpoint_check.setChecked(True)
    form.training_checks["pure_bf16"].setChecked(True)
    form.training_checks["fused_optimizer"].setChecked(True)
    _select(form.optimizer_combo, "paged_adamw8bit")
    _select(form.ce_combo, "chunked")
    view.recompute_now()
    estimate = view.fit_page.report.estimate
    assert estimate.spec.pure_bf16 and estimate.spec.fused_optimizer
    assert estimate.host_gb > 15  # the paged 8-bit states
    assert "host memory" in view.fit_page.formula_view.toPlainText()
    assert not form.engine_combo.isEnabled() and not form.training_checks["lora_bf16"].isEnabled()


def test_double_click_opens_the_catalog_entry(qtbot: QtBot, view: PlanView) -> None:
    item = view.fit_page.fits_tree.topLevelItem(0)
    with qtbot.waitSignal(view.state.entry_requested, timeout=1000) as blocker:
        view.fit_page.fits_tree.itemDoubleClicked.emit(item, 0)
    assert blocker.args == ["card-24"]


def test_fits_my_workload_filter(qtbot: QtBot, view: PlanView) -> None:
    with qtbot.waitSignal(view.fit_filter_requested, timeout=1000) as blocker:
        view.fit_page.filter_button.setChecked(True)
    expected = {"card-24", "rented", "big-80", "card-16"}
    assert blocker.args[0] == expected
    assert view.state.fit_filter_ids == expected
    # The filter follows the workload while it is on, through the state only.
    requests: list[object] = []
    view.fit_filter_requested.connect(requests.append)
    view.fit_page.form.params_edit.setText("70B")
    view.recompute_now()
    assert requests == []
    assert view.state.fit_filter_ids == view.fitting_ids
    assert "card-24" in view.fitting_ids  # 8 x 24 GB
    view.fit_page.form.max_gpus_combo.setCurrentIndex(view.fit_page.form.max_gpus_combo.findData(1))
    view.recompute_now()
    assert view.state.fit_filter_ids == set()
    with qtbot.waitSignal(view.fit_filter_requested, timeout=1000) as blocker:
        view.fit_page.filter_button.setChecked(False)
    assert blocker.args == [None]
    assert view.state.fit_filter_ids is None


def test_filter_cleared_elsewhere_unchecks_the_button(view: PlanView) -> None:
    view.fit_page.filter_button.setChecked(True)
    view.state.set_fit_filter(None)
    assert not view.fit_page.filter_button.isChecked()


def test_cost_uses_catalog_price_and_matches_hand_calculation(view: PlanView) -> None:
    view.show_cost_for("card-24")
    assert view.tabs.currentWidget() is view.cost_page
    assert view.cost_page.purchase_spin.value() == 1800.0
    assert view.cost_page.tdp_spin.value() == 450
    view.cost_page.cloud_spin.setValue(0.69)
    view.recompute_now()
    result = view.cost_page.cost_result
    assert result is not None
    # $1,800 / ($0.69 x 8 x 30.4375 - 0.45 x 0.8 x 8 x 30.4375 x $0.15) = 11.62 months
    assert result.break_even_months == pytest.approx(11.62, abs=0.01)
    assert "11.6 months" in view.cost_page.verdict_label.text()
    assert view.cost_page.break_even_line.isVisible()
    assert view.cost_page.break_even_line.value() == pytest.approx(11.62, abs=0.01)
    xs, ys = view.cost_page.cloud_curve.getData()
    assert len(xs) == 37 and ys[-1] == pytest.approx(36 * result.cloud_monthly_usd)
    buy_x, _ = view.cost_page.buy_net_curve.getData()
    assert buy_x is None or len(buy_x) == 0  # no resale: one buy line


def test_cost_catalog_cloud_example_and_resale(view: PlanView) -> None:
    view.show_cost_for("rented")
    assert view.cost_page.cloud_spin.value() == pytest.approx(1.2)
    assert "example provider" in view.cost_page.cloud_note.text()
    view.cost_page.resale_spin.setValue(1000)
    view.recompute_now()
    assert view.cost_page.cost_result is not None
    assert view.cost_page.cost_result.resale_total_usd == 1000
    xs, _ = view.cost_page.buy_net_curve.getData()
    assert len(xs) == 37


def test_cost_bad_input_shows_a_message(view: PlanView) -> None:
    view.show_cost_for("card-24")
    view.cost_page.hours_spin.setValue(0)
    view.recompute_now()
    assert view.cost_page.cost_result is None
    # Worded with the control's label and the text it shows, not the core's field words.
    assert view.cost_page.cost_error == "Running 0.0 h/day: must be above 0 and at most 24"
    assert not view.cost_page.cost_error_label.isHidden()
    view.show_cost_for("card-16")  # no price in the catalog
    view.recompute_now()
    assert "no price" in view.cost_page.purchase_note.text()
    assert view.cost_page.cost_error is not None
    assert view.cost_page.cost_error.startswith("Purchase price (each) $0.00: must be above 0; ")
    assert "--" not in view.cost_page.cost_error


def test_cost_errors_name_every_control_at_fault(view: PlanView) -> None:
    page = view.cost_page
    view.show_cost_for("card-24")
    page.purchase_spin.setValue(1000)
    page.resale_spin.setValue(1500)
    page.years_spin.setValue(0)
    view.recompute_now()
    assert page.cost_error is not None
    assert page.cost_error.split("; ") == [
        f"Horizon {page.years_spin.text()}: must be at least one month (1/12 of a year) "
        "and at most 20",
        f"Resale value (each) {page.resale_spin.text()}: must be below the purchase price "
        "(1,000.00 USD)",
    ]
    assert page.cost_error in page.cost_error_label.text()


def test_cost_for_selected_fit(view: PlanView) -> None:
    view.fit_page.fits_tree.setCurrentItem(view.fit_page.fits_tree.topLevelItem(1))
    assert view.fit_page.cost_button.isEnabled()
    view.fit_page.cost_button.click()
    assert view.cost_page.cost_gpu.currentData() == "rented"
    assert view.tabs.currentWidget() is view.cost_page


def test_catalog_reload_refreshes(view: PlanView) -> None:
    view.state.set_catalog(Catalog(entries=[make_entry("only-one", memory_gb=40)]))
    assert _fit_ids(view) == ["only-one"]
    assert view.cost_page.cost_gpu.count() == 1


def test_empty_catalog_does_not_crash(qtbot: QtBot) -> None:
    widget = PlanView(AppState(catalog=Catalog()))
    qtbot.addWidget(widget)
    assert widget.fit_page.report is not None and widget.fit_page.report.fits == []
    assert widget.cost_page.cost_result is None and widget.cost_page.cost_error is not None


def test_in_the_main_window_the_filter_opens_the_filtered_catalog(qtbot: QtBot) -> None:
    from gpudesk.ui.main_window import MainWindow

    window = MainWindow(_state())
    qtbot.addWidget(window)
    plan = window.view("Plan")
    assert isinstance(plan, PlanView)
    plan.fit_page.filter_button.setChecked(True)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Catalog"
    assert window.state.fit_filter_ids == {"card-24", "rented", "big-80", "card-16"}
    # Editing the workload afterwards keeps the filter but does not steal the tab.
    window.show_tab("Plan")
    plan.fit_page.form.params_edit.setText("70B")
    plan.recompute_now()
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Plan"
    assert window.state.fit_filter_ids == plan.fitting_ids


def test_a_preset_shows_its_own_count_and_context(view: PlanView) -> None:
    form = view.fit_page.form
    form.params_edit.setText("7B")
    _select(form.model_combo, "llama-3.1-8b")
    assert form.params_edit.text() != "7B"  # not the stale custom count
    assert form.params_edit.text().startswith("8")
    assert form.seq_spin.specialValueText() == "2,048 (default)"
    assert "the model's context is 131,072" in form.seq_spin.toolTip()
    assert "as computed" not in [form.kv_combo.itemText(i) for i in range(form.kv_combo.count())]


def test_cost_headline_says_when_the_cloud_price_is_assumed(view: PlanView) -> None:
    view.show_cost_for("card-24")  # no cloud rate in this catalog entry
    view.recompute_now()
    assert "assumed" in view.cost_page.verdict_label.text()
    view.cost_page.cloud_spin.setValue(0.69)  # the user's own price
    view.recompute_now()
    assert "assumed" not in view.cost_page.verdict_label.text()
    ticks = view.cost_page.cost_plot.getPlotItem().getAxis("left").tickStrings([12000.0], 1, 1000)
    assert ticks == ["$12,000"]


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_plan_combos_show_their_whole_text_and_group_titles_clear_the_edge(
    qtbot: QtBot, size: tuple[int, int]
) -> None:
    """Every page at a laptop and a desktop size: no cut combo text, no title on the edge."""
    from PySide6.QtWidgets import QComboBox, QGroupBox, QStyle, QStyleOptionComboBox

    from gpudesk.catalog.loader import load_catalog

    widget = PlanView(AppState(catalog=load_catalog()))  # real names: the longest ones
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    for index in range(widget.tabs.count()):
        widget.tabs.setCurrentIndex(index)
        qtbot.wait(20)
        page = widget.tabs.widget(index)
        combos = [combo for combo in page.findChildren(QComboBox) if combo.isVisible()]
        assert combos
        for combo in combos:
            option = QStyleOptionComboBox()
            combo.initStyleOption(option)
            field = combo.style().subControlRect(
                QStyle.ComplexControl.CC_ComboBox,
                option,
                QStyle.SubControl.SC_ComboBoxEditField,
                combo,
            )
            for item in range(combo.count()):
                text = combo.itemText(item)
                needed = combo.fontMetrics().horizontalAdvance(text)
                assert field.width() >= needed, (widget.tabs.tabText(index), text, field)
        for box in page.findChildren(QGroupBox):
            if box.isVisible():
                left = box.mapTo(widget, box.rect().topLeft()).x()
                assert left >= 6, (box.title(), left)


def test_an_old_catalog_price_is_flagged_in_words_and_the_key_is_off_the_chart(
    qtbot: QtBot,
) -> None:
    """The RTX 4090's 2022 MSRP was used without the stale flag, and the chart's legend
    covered the Buy line of an expensive GPU."""
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.catalog.prices import is_stale

    state = AppState(catalog=load_catalog([], include_user=False))
    plan = PlanView(state)
    qtbot.addWidget(plan)
    entry = state.catalog.by_id("rtx-4090")
    assert entry is not None and is_stale(entry.price_date, dt.date.today())
    plan.show_cost_for("rtx-4090")
    plan.recompute_now()
    page = plan.cost_page
    assert page.purchase_stale
    assert page.purchase_note.text().startswith("⚠") and "out of date" in page.purchase_note.text()
    assert "⚠" in page.verdict_label.text() and str(entry.price_date) in page.verdict_label.text()
    assert page.cost_plot.getPlotItem().legend is None  # no legend drawn over the lines
    assert "Buy" in page.cost_key.text() and "Cloud" in page.cost_key.text()
    page.purchase_spin.setValue(1500)  # the user's own price
    page.recompute_now()
    assert not page.purchase_stale and "⚠" not in page.verdict_label.text()


def _config_with_quant(tmp_path: Path, quant: object) -> Path:
    document = json.loads((CONFIGS / "llama-3.1-8b.json").read_text(encoding="utf-8"))
    document["quantization_config"] = quant
    target = tmp_path / "config.json"
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


def test_a_config_json_declaring_fp8_weights_sizes_fp8_and_says_so(
    view: PlanView, tmp_path: Path
) -> None:
    form = view.fit_page.form
    assert form.quant_combo.currentData() is None  # as the dtype
    assert form.load_config(_config_with_quant(tmp_path, {"quant_method": "fp8"}))
    assert form.quant_combo.currentData() == "fp8"
    assert not form.config_note.isHidden() and "FP8" in form.config_note.text()
    # a format GPUDesk cannot size is named, and the choice left alone
    form.quant_combo.setCurrentIndex(0)
    assert form.load_config(_config_with_quant(tmp_path, {"quant_method": "compressed-tensors"}))
    assert form.quant_combo.currentData() is None
    assert "'compressed-tensors'" in form.config_note.text()
    # a plain config says nothing
    assert form.load_config(CONFIGS / "llama-3.1-8b.json")
    assert form.config_note.isHidden()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(method=st.text(max_size=60))
def test_any_declared_quant_method_is_taken_or_named(
    view: PlanView, tmp_path: Path, method: str
) -> None:
    form = view.fit_page.form
    if form.load_config(_config_with_quant(tmp_path, {"quant_method": method})):
        assert form.quant_combo.currentIndex() >= 0
        assert form.config_note.text()  # always says what it did with it


def test_the_default_sequence_length_shows_its_number(view: PlanView) -> None:
    """A long default text ("2,048 (default; the model's context is 131,072)") scrolled
    the number out of the box."""
    form = view.fit_page.form
    form.model_combo.setCurrentIndex(form.model_combo.findData("llama-3.1-8b"))
    spin = form.seq_spin
    assert spin.value() == 0
    text = spin.specialValueText()
    assert text[0].isdigit() and len(text) <= 20, text
    assert "131,072" in spin.toolTip()
