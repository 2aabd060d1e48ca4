"""The serving validation against published runs: every run estimated or said why not,
and docs/validation/serving.md showing what the code computes today."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_lengths_are_drawn_as_each_client_draws_them() -> None:
    from gpudesk.speed.serving_validation import length_draw

    assert length_draw({}, (1000, 200)) == (1000, 200, 0.0)
    assert length_draw({"random_range_ratio": 0.25}, (1000, 200)) == (1000, 200, 0.25)
    # SGLang's bench_serving, ratio 0: uniform in [1, len], mean about half
    prompt, output, spread = length_draw({"random_range_low": 0.0}, (512, 64))
    assert (prompt, output) == (256, 32) and 0.9 < spread < 1
    # [0.8 len, len]: mean 0.9 len, within ±1/9 of it
    prompt, output, spread = length_draw({"random_range_low": 0.8}, (1000, 1000))
    assert (prompt, output) == (900, 900) and spread == pytest.approx(1 / 9)


def test_files_of_one_repository_at_one_commit_are_one_source() -> None:
    from gpudesk.speed.serving_validation import source_of

    one = source_of({"source": "https://github.com/o/r/blob/abc123/docs/a.json — x"})
    two = source_of({"source": "https://github.com/o/r/blob/abc123/docs/b.json — y"})
    other = source_of({"source": "https://github.com/o/r/blob/def456/docs/a.json — x"})
    assert one == two != other
    assert source_of({"source": "https://github.com/o/r/pull/7 — z"}) == (
        "https://github.com/o/r/pull/7"
    )
