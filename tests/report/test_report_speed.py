"""The report's "How fast" section: the Plan tab's workload on each compared GPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from gpudesk.catalog.loader import load_catalog
from gpudesk.report.pdf import write_pdf_report
from gpudesk.report.speed_section import build_speed_section
from gpudesk.speed.estimate import Engine, KvFormat, Mode, SpeedRequest, model_costs
from gpudesk.speed.planner import SpeedWorkload
from gpudesk.speed.shapes import shape_for
from gpudesk.workload.quant import QuantFormat


def _workload(mode: Mode = Mode.DECODE, tokens: float | None = None) -> SpeedWorkload:
    quant = QuantFormat.Q4_K_M if mode is Mode.DECODE else QuantFormat.BF16
    costs = model_costs(shape_for("llama-3.1-8b"), quant, KvFormat.FP16)
    request = SpeedRequest(mode=mode, engine=Engine.LLAMA_CPP, quant=quant, tokens=tokens)
    return SpeedWorkload(model_name="Llama 3.1 8B", costs=costs, request=request.resolved())


def test_one_row_per_compared_gpu_in_order() -> None:
    catalog = load_catalog([], include_user=False)
    entries = [catalog.by_id("rtx-4090"), catalog.by_id("rtx-3060-12gb"), catalog.by_id("gtx-1070")]
    section = build_speed_section(_workload(), [entry for entry in entries if entry])
    assert [row[0] for row in section.rows] == [entry.name for entry in entries if entry]
    assert section.rows[0][1] == "1" and section.rows[0][2][0].isdigit()
    assert "Llama 3.1 8B" in section.heading
    assert any("fitted per engine" in line for line in section.basis)


def test_training_section_prices_the_run() -> None:
    catalog = load_catalog([], include_user=False)
    entries = [catalog.by_id("h100-sxm5"), catalog.by_id("a100-80gb-sxm4")]
    section = build_speed_section(_workload(Mode.TRAIN, 1e9), [entry for entry in entries if entry])
    assert section.cost_header == "$ per run"
    assert section.rows[0][5].startswith("$")


def test_pdf_has_the_section_only_when_asked(tmp_path: Path) -> None:
    catalog = load_catalog([], include_user=False)
    entries = [entry for entry in (catalog.by_id("rtx-4090"), catalog.by_id("h100-sxm5")) if entry]
    with_speed = tmp_path / "speed.pdf"
    write_pdf_report(entries, with_speed, catalog=catalog, speed=_workload())
    text = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(with_speed).pages)
    assert "How fast" in text and "tokens/s" in text
    plain = tmp_path / "plain.pdf"
    write_pdf_report(entries, plain, catalog=catalog)
    text = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(plain).pages)
    assert "How fast" not in text


def test_an_offloaded_gpu_says_so_in_its_row() -> None:
    catalog = load_catalog([], include_user=False)
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat.Q4_K_M, KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.DECODE, engine=Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, gpu_layers=40
    )
    workload = SpeedWorkload(model_name="Llama 3.1 70B", costs=costs, request=request.resolved())
    entry = catalog.by_id("rtx-4090")
    assert entry is not None
    (row,) = build_speed_section(workload, [entry]).rows
    assert row[1] == "1 (-ngl 40)" and row[4] == "host memory"


def test_the_pdf_marks_a_measured_figure_with_its_date_and_tool(tmp_path: Path) -> None:
    """The user's measurement of the same workload: an asterisk on the estimate and a
    line "measured 2025-04-24, llama-bench" under the table (llama.cpp README's JSON)."""
    from gpudesk.measurements.file_import import ImportHints
    from gpudesk.measurements.rows import import_files
    from gpudesk.measurements.store import MeasurementStore

    catalog = load_catalog([], include_user=False)
    entries = [entry for entry in (catalog.by_id("rtx-4080"), catalog.by_id("h100-sxm5")) if entry]
    costs = model_costs(shape_for("qwen2.5-7b"), QuantFormat.Q4_K_M, KvFormat.FP16)
    request = SpeedRequest(mode=Mode.DECODE, engine=Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M)
    workload = SpeedWorkload(model_name="Qwen2.5 7B", costs=costs, request=request.resolved())
    empty = build_speed_section(workload, entries)
    assert empty.measured == () and "*" not in empty.rows[0][2]

    store = MeasurementStore()  # the user's, in this test's own data folder
    readme = (
        Path(__file__).parents[1] / "ui" / "measurement_files" / "llama-bench-readme-rtx4080.json"
    )
    import_files([readme], ImportHints(resolve_gpu=lambda name: "rtx-4080"), entries, store)
    section = build_speed_section(workload, entries)
    assert section.rows[0][2].endswith("*") and not section.rows[1][2].endswith("*")
    (line,) = section.measured
    assert line.startswith(
        "* NVIDIA GeForce RTX 4080: 119 tokens/s measured 2025-04-24, llama-bench"
    )
    assert "llama-bench-readme-rtx4080.json" in line and "of the estimate" in line
    # explicit rows win over the database: none given, none shown
    assert build_speed_section(workload, entries, measurements=[]).measured == ()

    pdf = tmp_path / "measured.pdf"
    write_pdf_report(entries, pdf, catalog=catalog, speed=workload)
    text = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(pdf).pages)
    assert "measured 2025-04-24, llama-bench" in text
    assert "119 tokens/s" in text


def test_the_section_asks_the_speed_model_only_for_the_gpus_it_prints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One estimate per printed row's GPU (at the counts it tries), no catalog ranking, and
    the workload's memory estimated once for the whole table (was once per row)."""
    import gpudesk.speed.planner as planner
    from gpudesk.speed.holding import memory_estimate

    catalog = load_catalog([], include_user=False)
    ids = ("rtx-4090", "h100-sxm5", "gtx-1070")
    entries = [entry for entry in (catalog.by_id(gpu_id) for gpu_id in ids) if entry]
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat.Q4_K_M, KvFormat.FP16)
    request = SpeedRequest(mode=Mode.SERVE, engine=Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M)
    workload = SpeedWorkload(model_name="Llama 3.1 70B", costs=costs, request=request.resolved())
    # the table alone: the latency curve's own simulations are counted below
    expected = build_speed_section(workload, entries, measurements=[], latency_chart=False)

    estimated: list[str] = []
    memory: list[object] = []
    real_estimate, real_memory = planner.estimate_for, memory_estimate

    def counted_estimate(rates: Any, *args: Any, **kwargs: Any) -> Any:
        estimated.append(rates.gpu_id)
        return real_estimate(rates, *args, **kwargs)

    def counted_memory(*args: Any) -> Any:
        memory.append(args)
        return real_memory(*args)

    def no_ranking(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the report ranked GPUs it does not print")

    monkeypatch.setattr(planner, "estimate_for", counted_estimate)
    monkeypatch.setattr(planner, "memory_estimate", counted_memory)
    monkeypatch.setattr(planner, "rank_catalog", no_ranking)
    section = build_speed_section(workload, entries, measurements=[], latency_chart=False)

    assert section == expected
    assert [row[0] for row in section.rows] == [entry.name for entry in entries]
    assert estimated and set(estimated) <= set(ids)
    assert len(memory) == 1
    # with the chart: the sweep simulates the fastest printed GPU only
    estimated.clear()
    charted = build_speed_section(workload, entries, measurements=[])
    assert charted.curve is not None and charted.curve.gpu_id == "h100-sxm5"
    assert set(estimated) - set(ids) == set() and estimated.count("h100-sxm5") >= 8


# -- serving: the latency table, the curve and what the engine cannot run -------------


def _serve_workload() -> SpeedWorkload:
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.FP8, KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.SERVE,
        engine=Engine.VLLM,
        quant=QuantFormat.FP8,
        rate=5.0,
        num_prompts=200,
        seq_in=512,
        seq_out=128,
        slo_ttft_ms=500.0,
        slo_tpot_ms=50.0,
    )
    return SpeedWorkload(model_name="Llama 3.1 8B", costs=costs, request=request.resolved())


SERVE_IDS = ("h100-sxm5", "l40s", "t4")


def test_serving_section_has_latencies_a_curve_and_the_not_supported() -> None:
    catalog = load_catalog([], include_user=False)
    entries = [entry for entry in (catalog.by_id(gpu_id) for gpu_id in SERVE_IDS) if entry]
    section = build_speed_section(_serve_workload(), entries, measurements=[])
    # the T4 cannot compute FP8 under vLLM: listed with the reason, never in a table
    assert [row[0] for row in section.rows] == ["NVIDIA H100 SXM5 80GB", "NVIDIA L40S"]
    assert len(section.not_supported) == 1
    assert section.not_supported[0].startswith("NVIDIA T4: ") and "7.5" in section.not_supported[0]
    assert section.latency_header == (
        "GPU",
        "layout",
        "TTFT p50",
        "TPOT p50",
        "goodput (requests/s)",
        "highest rate at SLO (requests/s)",
    )
    h100 = section.latency_rows[0]
    assert h100[0] == "NVIDIA H100 SXM5 80GB" and h100[1] == "TP-1"
    assert h100[2].endswith(" ms") and h100[3].endswith(" ms")
    curve = section.curve
    assert curve is not None and curve.gpu_id == "h100-sxm5"
    rates = [point.rate_rps for point in curve.points]
    assert len(rates) == 8 and rates == sorted(rates)
    assert (curve.slo_ttft_ms, curve.slo_tpot_ms) == (500.0, 50.0)
    # the marker is searched over every request, as the lines are drawn; the table's
    # figure is the ranking's (which may search a shorter run)
    assert curve.max_rate_at_slo is not None and float(h100[5]) > 0
    assert 0 < curve.max_rate_at_slo <= rates[-1] * 1.5
    # past saturation the queue grows: TTFT p90 at the last rate above the first's
    assert curve.points[-1].ttft_p90_ms > curve.points[0].ttft_p90_ms


def test_serving_pdf_carries_the_chart_table_and_not_supported(tmp_path: Path) -> None:
    catalog = load_catalog([], include_user=False)
    entries = [entry for entry in (catalog.by_id(gpu_id) for gpu_id in SERVE_IDS) if entry]
    pdf = tmp_path / "serve.pdf"
    write_pdf_report(entries, pdf, catalog=catalog, speed=_serve_workload())
    text = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(pdf).pages)
    for words in (
        "How fast",
        "TTFT p50",
        "TPOT p50",
        "highest rate at SLO",
        "Latency against request rate",
        "request rate (requests/s)",
        "TTFT (ms",
        "TPOT (ms",
        "SLO 500 ms",
        "SLO 50 ms",
        "highest rate meeting the SLO",
        "Not supported (1, never ranked)",
        "NVIDIA T4:",
    ):
        assert words in text, words


def test_compares_speed_cells_give_no_figure_for_a_gpu_the_engine_cannot_run() -> None:
    from gpudesk.speed.planner import speed_cells

    catalog = load_catalog([], include_user=False)
    t4 = catalog.by_id("t4")
    assert t4 is not None
    assert speed_cells(_serve_workload(), [t4]) == [None]
