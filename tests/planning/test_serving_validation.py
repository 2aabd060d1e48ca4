"""The serving validation against published runs: every run estimated or said why not,
and docs/validation/serving.md showing what the code computes today."""

from __future__ import annotations

from pathlib import Path

from gpudesk.speed.serving_validation import ServingCheck, check_all, report_text, summarise

DOC = Path(__file__).resolve().parents[2] / "docs" / "validation" / "serving.md"


def test_every_published_run_is_estimated_or_says_why_not() -> None:
    checked = check_all()
    assert len(checked) >= 50
    estimated = [item for item in checked if item.skipped is None]
    assert len(estimated) >= 50
    for item in checked:
        figures = (item.throughput, item.ttft_p50, item.tpot_p50, item.ttft_mean, item.tpot_mean)
        if item.skipped is None:
            assert any(value is not None and value > 0 for value in figures), item.label
        else:
            assert item.skipped.strip() and all(value is None for value in figures)
    vendors = {item.vendor for item in estimated}
    assert {"nvidia", "amd"} <= vendors
    assert {item.layout for item in estimated} == {"TP-1", "TP-n"}
    assert {item.moe for item in estimated} == {True, False}


def test_the_summary_counts_rows_and_sources_of_each_metric() -> None:
    rows = [
        ServingCheck("a", "x", "nvidia", "TP-1", False, throughput=2.0, inside=False),
        ServingCheck("a", "y", "nvidia", "TP-1", False, throughput=0.5, inside=True),
        ServingCheck("b", "z", "amd", "TP-n", True, ttft_p50=1.5),
        ServingCheck("b", "w", "amd", "TP-n", True, skipped="no lengths"),
    ]
    by_metric = {figure.metric: figure for figure in summarise(rows)}
    throughput = by_metric["output tokens/s"]
    assert (throughput.rows, throughput.sources) == (2, 1)
    assert throughput.median_miss == 2.0 and throughput.inside.startswith("1 of 2")
    assert by_metric["TTFT p50"].median_miss == 1.5
    assert "TPOT p50" not in by_metric
    assert "w: no lengths" in report_text(rows)


def test_the_validation_page_shows_what_the_code_computes() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = report_text(check_all())
    assert table in text, "regenerate docs/validation/serving.md (see its header)"
