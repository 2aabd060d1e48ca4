"""Plan → How fast? in serve mode: the serving controls, the ranking under load on the
worker (progress, cancel, the window alive), the not-supported list, the table's serving
columns and the latency chart of the selected GPU."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import Catalog, load_catalog
from gpudesk.progress import Cancelled, ProgressState
from gpudesk.render.style import DARK, LIGHT
from gpudesk.speed.estimate import (
    Engine,
    KvFormat,
    Mode,
    SpeedInputError,
    SpeedRequest,
    model_costs,
)
from gpudesk.speed.physics import ModelCosts
from gpudesk.speed.planner import CostSettings, rank_catalog
from gpudesk.speed.shapes import shape_for
from gpudesk.ui import theme
from gpudesk.ui.compare_speed_row import SPEED_PENDING
from gpudesk.ui.compare_view import CompareView
from gpudesk.ui.plan.speed_load import Refused, rank_under_load
from gpudesk.ui.plan.speed_page import SpeedPage
from gpudesk.ui.plan.view import PlanView
from gpudesk.ui.state import AppState
from gpudesk.workload.quant import QuantFormat

#: FP8 under vLLM: the T4 (7.5) and V100 (7.0) are refused with a reason, the rest run
IDS = ("h100-sxm5", "a100-80gb-sxm4", "l40s", "rtx-4090", "mi300x", "t4", "v100-sxm2-32gb")
REFUSED = {"t4", "v100-sxm2-32gb"}


@pytest.fixture(scope="module")
def small() -> Catalog:
    full = load_catalog([], include_user=False)
    entries = [entry for entry in full.entries if entry.id in IDS]
    assert len(entries) == len(IDS)
    return Catalog(entries=entries, catalog_date=full.catalog_date)


@pytest.fixture
def view(qtbot: QtBot, small: Catalog) -> Iterator[PlanView]:
    widget = PlanView(AppState(catalog=small))
    qtbot.addWidget(widget)
    form = widget.fit_page.form
    form.model_combo.setCurrentIndex(form.model_combo.findData("llama-3.1-8b"))
    yield widget
    widget.speed_page.shutdown()


def _serve(page: SpeedPage, *, slo: bool = True, prompts: int = 200) -> None:
    form = page.form
    form.mode_combo.setCurrentIndex(form.mode_combo.findData("serve"))
    form.engine_combo.setCurrentIndex(form.engine_combo.findData("vllm"))
    form.quant_combo.setCurrentIndex(form.quant_combo.findData("fp8"))
    form.rate_spin.setValue(5)
    form.prompts_spin.setValue(prompts)
    form.seq_in_spin.setValue(512)
    form.seq_out_spin.setValue(128)
    form.slo_ttft_spin.setValue(500 if slo else 0)
    form.slo_tpot_spin.setValue(50 if slo else 0)


def _settle(qtbot: QtBot, page: SpeedPage) -> None:
    qtbot.waitUntil(lambda: not page.busy, timeout=60_000)


def test_the_serving_controls_make_the_request(view: PlanView) -> None:
    page = view.speed_page
    form = page.form
    _serve(page)
    assert form.load_box.isVisibleTo(form)
    form.concurrency_spin.setValue(32)
    form.max_seqs_spin.setValue(64)
    form.max_tokens_spin.setValue(4096)
    form.slo_share_spin.setValue(95)
    form.layout_combos["tp"].setCurrentIndex(form.layout_combos["tp"].findData(2))
    form.layout_combos["dp"].setCurrentIndex(form.layout_combos["dp"].findData(2))
    request = form.current_request()
    assert (request.rate, request.concurrency, request.num_prompts) == (5.0, 32, 200)
    assert (request.slo_ttft_ms, request.slo_tpot_ms, request.slo_e2e_ms) == (500, 50, None)
    assert request.slo_share == pytest.approx(0.95)
    assert (request.max_num_seqs, request.max_num_batched_tokens) == (64, 4096)
    # a layout given is the deployment: TP-2 x DP-2 is 4 GPUs
    assert (request.tp, request.pp, request.dp, request.count) == (2, None, 2, 4)
    assert not form.count_combo.isEnabled() and "TP × PP × DP" in form.count_combo.toolTip()
    # "all at once" and "no cap" are None, as the CLI's defaults
    form.rate_spin.setValue(0)
    form.concurrency_spin.setValue(0)
    request = form.current_request()
    assert request.rate is None and request.concurrency is None
    # the serving box is serve mode's only
    form.mode_combo.setCurrentIndex(form.mode_combo.findData("decode"))
    assert not form.load_box.isVisibleTo(form)
    assert form.current_request().rate is None
    assert form.count_combo.isEnabled()  # decode has no serving layout: "up to N" again


def test_sharegpt_lengths_are_a_choice_of_the_request(view: PlanView) -> None:
    """Lengths: fixed at the prompt and output lengths (the default, as --dataset random
    without a spread) or ShareGPT-shaped averaging them (--dataset sharegpt); a mean
    ShareGPT cannot have is refused naming the field."""
    form = view.speed_page.form
    _serve(view.speed_page)
    assert form.current_request().dataset == "random"
    form.lengths_combo.setCurrentIndex(form.lengths_combo.findData("sharegpt"))
    assert form.current_request().dataset == "sharegpt"
    form.seq_in_spin.setValue(4096)
    with pytest.raises(SpeedInputError) as refused:
        form.current_request()
    assert refused.value.field == "seq_in" and "1,000" in str(refused.value)


def test_expert_parallel_alone_is_refused_in_words(qtbot: QtBot, view: PlanView) -> None:
    page = view.speed_page
    _serve(page)
    page.form.layout_combos["ep"].setCurrentIndex(page.form.layout_combos["ep"].findData(2))
    page.recompute_now()
    assert page.error is not None and "EP" in page.error
    assert page.form.error_label.isVisibleTo(page) and not page.busy


def test_serving_ranks_on_the_worker_while_the_window_keeps_running(
    qtbot: QtBot, view: PlanView
) -> None:
    page = view.speed_page
    _serve(page)
    ticks: list[int] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(page.progress_bar.value()))
    page.recompute_now()
    # recompute_now returned at once: the simulation is on the worker
    assert page.busy and page.results == []
    assert page.progress_bar.isVisibleTo(page) and page.cancel_button.isVisibleTo(page)
    timer.start()
    qtbot.waitUntil(lambda: bool(page.results), timeout=60_000)
    timer.stop()
    # the event loop ran many times during the ranking (a frozen window ticks never)
    assert len(ticks) >= 5, ticks
    _settle(qtbot, page)
    assert not page.progress_bar.isVisibleTo(page) and not page.cancel_button.isVisibleTo(page)
    ids = [item.gpu_id for item in page.results]
    assert set(ids) == set(IDS) - REFUSED, ids
    speeds = [item.tokens_per_s for item in page.results]
    assert speeds == sorted(speeds, reverse=True)


def test_not_supported_gpus_are_listed_with_the_reason_never_ranked(
    qtbot: QtBot, view: PlanView
) -> None:
    page = view.speed_page
    _serve(page)
    page.recompute_now()
    _settle(qtbot, page)
    assert {gpu_id for gpu_id, _ in page.not_supported} == REFUSED
    listed = page.not_supported_view.toPlainText()
    assert "NVIDIA T4:" in listed and "compute capability 7.5" in listed
    assert "Not supported (2)" in page.not_supported_label.text()
    assert page.not_supported_view.isVisibleTo(page)
    items = [page.tree.topLevelItem(i) for i in range(page.tree.topLevelItemCount())]
    names = [item.text(0) for item in items if item is not None]
    assert len(names) == len(IDS) - len(REFUSED)
    assert not any("T4" in name or "V100" in name for name in names)


def test_sglang_is_offered_and_refuses_what_it_does_not_run(qtbot: QtBot, view: PlanView) -> None:
    page = view.speed_page
    _serve(page)
    form = page.form
    offered = [form.engine_combo.itemData(i) for i in range(form.engine_combo.count())]
    assert "sglang" in offered
    form.engine_combo.setCurrentIndex(form.engine_combo.findData("sglang"))
    form.quant_combo.setCurrentIndex(form.quant_combo.findData("bf16"))
    assert form.current_request().engine is Engine.SGLANG
    page.recompute_now()
    _settle(qtbot, page)
    # bf16 needs 8.0 (the T4), SGLang needs sm75 (the V100)
    assert {gpu_id for gpu_id, _ in page.not_supported} == REFUSED
    listed = page.not_supported_view.toPlainText()
    assert "SGLang needs NVIDIA compute capability 7.5" in listed
    assert page.results and "SGLang is priced with vLLM" in page.results[0].basis


def test_the_table_shows_the_layout_and_latencies_and_the_slo_columns(
    qtbot: QtBot, view: PlanView
) -> None:
    page = view.speed_page
    _serve(page)
    page.recompute_now()
    _settle(qtbot, page)
    tree = page.tree
    header = tree.headerItem()
    shown = [header.text(c) for c in range(tree.columnCount()) if not tree.isColumnHidden(c)]
    assert shown == [
        "GPU",
        "output tokens/s",
        "layout",
        "$ / 1M tokens",
        "TTFT p50",
        "TPOT p50",
        "goodput",
        "max rate",
    ]
    first = tree.topLevelItem(0)
    assert first is not None
    result = page.results[0]
    assert first.text(4) == "TP-1" and result.layout == {"tp": 1, "pp": 1, "dp": 1, "ep": 1}
    ttft = (result.latency or {})["ttft_ms"]["p50"]
    assert first.text(6) == f"{ttft:,.0f} ms"
    assert first.text(7).endswith(" ms") and first.text(9).endswith("/s")
    assert "Under load, in layout TP-1" in page.basis_view.toPlainText()
    # without an SLO there is no goodput or highest rate to show
    page.form.slo_ttft_spin.setValue(0)
    page.form.slo_tpot_spin.setValue(0)
    page.recompute_now()
    _settle(qtbot, page)
    assert tree.isColumnHidden(8) and tree.isColumnHidden(9) and not tree.isColumnHidden(7)
    # and decode has none of serving's columns
    page.form.mode_combo.setCurrentIndex(page.form.mode_combo.findData("decode"))
    page.recompute_now()
    assert not page.busy and page.results
    assert all(tree.isColumnHidden(c) for c in (7, 8, 9)) and not tree.isColumnHidden(1)
    assert not page.charts.isTabVisible(page.latency_tab)
    assert page.charts.currentWidget() is page.roofline_stack
    assert not page.charts.tabBar().isVisibleTo(page)


def test_the_latency_chart_draws_the_selected_gpu_with_the_slo(
    qtbot: QtBot, view: PlanView
) -> None:
    page = view.speed_page
    _serve(page)
    page.recompute_now()
    _settle(qtbot, page)
    assert page.charts.isTabVisible(page.latency_tab)
    assert page.charts.currentWidget() is page.latency_chart
    curve = page.latency_chart.curve
    assert curve is not None and curve.gpu_id == page.results[0].gpu_id  # type: ignore[attr-defined]
    rates = [point.rate_rps for point in curve.points]
    assert len(rates) == 8 and rates == sorted(rates)
    assert (curve.slo_ttft_ms, curve.slo_tpot_ms) == (500, 50)
    assert curve.max_rate_at_slo is not None and 0 < curve.max_rate_at_slo <= rates[-1] * 1.5
    text = page.latency_chart.data_text()
    assert "SLO TTFT: 500 ms" in text and "highest rate meeting the SLO" in text
    # another row: its own curve
    page.select_gpu(page.results[1].gpu_id)
    _settle(qtbot, page)
    assert page.latency_chart.curve is not None
    assert page.latency_chart.curve.gpu_id == page.results[1].gpu_id  # type: ignore[attr-defined]


def test_the_latency_chart_follows_a_live_theme_switch(qtbot: QtBot, view: PlanView) -> None:
    page = view.speed_page
    before = theme.current_mode()
    try:
        theme.apply_theme("dark")
        assert page.latency_chart.chart_style is DARK
        theme.apply_theme("light")
        assert page.latency_chart.chart_style is LIGHT
    finally:
        theme.apply_theme(before)


def test_cancel_stops_the_ranking_and_says_so(qtbot: QtBot, view: PlanView) -> None:
    page = view.speed_page
    _serve(page, prompts=2000)
    page.recompute_now()
    assert page.busy
    page.cancel_button.click()
    _settle(qtbot, page)
    assert page.results == [] and page.tree.topLevelItemCount() == 0
    assert "Cancelled" in page.summary_label.text()
    # a later edit runs it again
    page.form.prompts_spin.setValue(100)
    page.recompute_now()
    _settle(qtbot, page)
    assert page.results


def test_a_newer_request_drops_the_older_ranking(qtbot: QtBot, view: PlanView) -> None:
    page = view.speed_page
    _serve(page, prompts=2000)
    page.recompute_now()
    page.form.seq_out_spin.setValue(64)
    page.form.prompts_spin.setValue(100)
    page.recompute_now()
    _settle(qtbot, page)
    # the table is the newer request's (its label in the summary), not the cancelled one's
    assert page.results and "512 in / 64 out" in page.summary_label.text()
    assert "Cancelled" not in page.summary_label.text()


# -- Compare's tokens/s row follows the serving workload ---------------------------


def test_compare_shows_the_serving_workloads_tokens_per_s(qtbot: QtBot, view: PlanView) -> None:
    page = view.speed_page
    _serve(page)
    page.recompute_now()
    _settle(qtbot, page)
    state = view.state
    compare = CompareView(state)
    qtbot.addWidget(compare)
    state.set_compare(["h100-sxm5", "l40s"])
    assert compare.comparison is not None
    # estimated on Compare's worker: "estimating…" until then, the window never waits
    assert compare.comparison.row("speed").values[0] == SPEED_PENDING
    qtbot.waitUntil(lambda: compare.comparison.row("speed").values[0] != SPEED_PENDING)
    row = compare.comparison.row("speed")
    assert "serve, vllm, FP8" in row.label and "5 requests/s" in row.label
    by_id = {item.gpu_id: item for item in page.results}
    for gpu_id, value in zip(("h100-sxm5", "l40s"), row.values, strict=True):
        assert isinstance(value, str) and value[0].isdigit(), value
        # the same model as the page's table: the ranked figure, to its printed digits
        shown = float(value.split(" ")[0].replace(",", ""))
        assert shown == pytest.approx(by_id[gpu_id].tokens_per_s, rel=0.01)


# -- the worker's function, without Qt's thread -------------------------------------


def _workload() -> tuple[ModelCosts, SpeedRequest]:
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.FP8, KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.SERVE,
        engine=Engine.VLLM,
        quant=QuantFormat.FP8,
        rate=5.0,
        num_prompts=100,
        seq_in=512,
        seq_out=128,
    ).resolved()
    return costs, request


def test_rank_under_load_is_rank_catalog_with_progress(small: Catalog) -> None:
    costs, request = _workload()
    reports: list[tuple[float, str]] = []
    progress = ProgressState(lambda fraction, words: reports.append((fraction, words)))
    settings = CostSettings()
    mine = rank_under_load(small.entries, costs, request, progress, max_count=8, settings=settings)
    whole = rank_catalog(small.entries, costs, request, max_count=8, settings=settings)
    assert not isinstance(mine, Refused)
    assert [item.gpu_id for item in mine.results] == [item.gpu_id for item in whole.results]
    assert mine.not_supported == whole.not_supported and len(mine.not_supported) == 2
    assert len(reports) == len(small.entries) + 1 and reports[-1][0] == 1.0
    assert "(1 of 7)" in reports[0][1]


def test_rank_under_load_stops_when_cancelled(small: Catalog) -> None:
    costs, request = _workload()
    progress = ProgressState()
    progress.cancel()
    with pytest.raises(Cancelled):
        rank_under_load(
            small.entries, costs, request, progress, max_count=8, settings=CostSettings()
        )


def test_compare_says_not_supported_where_the_engine_cannot_run_the_workload() -> None:
    """llama.cpp has no FP8: Compare's row said "does not fit on 8" for every GPU, which
    sends the user to a bigger card; it says "not supported" and why."""
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.estimate import Engine, KvFormat, Mode, SpeedRequest, model_costs
    from gpudesk.speed.planner import SpeedWorkload
    from gpudesk.speed.shapes import shape_for
    from gpudesk.ui.compare_speed_row import speed_rows
    from gpudesk.workload.quant import QuantFormat

    by_id = {entry.id: entry for entry in load_catalog().entries}
    entries = [by_id["h100-sxm5"], by_id["rtx-4090"]]
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.FP8, KvFormat.FP16)
    fp8 = SpeedWorkload(
        model_name="Llama 3.1 8B",
        costs=costs,
        request=SpeedRequest(mode=Mode.DECODE, engine=Engine.LLAMA_CPP, quant=QuantFormat.FP8),
    )
    (row,) = speed_rows(fp8, entries, False)[:1]
    assert all(
        isinstance(value, str) and value.startswith("not supported: ") for value in row.values
    )
    assert all("fit" not in str(value) for value in row.values)
    q4 = fp8.model_copy(
        update={"request": fp8.request.model_copy(update={"quant": QuantFormat.Q4_K_M})}
    )
    (ok,) = speed_rows(q4, entries, False)[:1]
    assert all(isinstance(value, str) and value[0].isdigit() for value in ok.values)
