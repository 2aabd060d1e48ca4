"""The side-by-side table: best-in-row rules, baseline ratios, JSON/CSV/text shape."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest
from compare_entries import gpu

from gpudesk.catalog.metrics import METRICS, MetricGroup
from gpudesk.compare.table import (
    MEASURED_COLUMN_ID,
    RowKind,
    best_column_ids,
    build_comparison,
    format_ratio,
)
from gpudesk.measured import MeasuredSeries


@pytest.fixture
def trio() -> list:
    return [
        gpu(
            "small",
            memory_gb=24,
            bandwidth_gbs=1000,
            price_usd=1600,
            tdp_w=450,
            fp16_tensor_tflops=165.2,
            fp64_tflops=1.3,
        ),
        gpu(
            "big",
            memory_gb=80,
            bandwidth_gbs=2000,
            price_usd=15000,
            tdp_w=300,
            fp16_tensor_tflops=312.0,
            ecc=True,
        ),
        gpu(
            "huge",
            memory_gb=94,
            bandwidth_gbs=3900,
            price_usd=30000,
            tdp_w=400,
            fp16_tensor_tflops=835.5,
            fp64_tflops=30.0,
            ecc=True,
        ),
    ]


def test_best_is_largest_for_higher_is_better(trio: list) -> None:
    comparison = build_comparison(trio)
    assert comparison.best("memory_gb") == "huge"
    assert comparison.best("fp16_tensor_tflops") == "huge"


def test_best_is_smallest_for_price_and_tdp_has_no_best(trio: list) -> None:
    comparison = build_comparison(trio)
    assert comparison.best("price_usd") == "small"
    # A low TDP is a small card, not a better one; per-watt rows carry the meaning.
    assert comparison.best("tdp_w") is None
    assert comparison.best("fp16_tensor_tflops_per_w") is not None


def test_price_kind_row_shows_labels_not_keys() -> None:
    entries = [gpu("a", price_usd=1599, price_kind="launch_msrp"), gpu("b", price_usd=900)]
    comparison = build_comparison(entries)
    row = comparison.row("price_kind")
    assert [comparison.cell_text(row, i) for i in range(2)] == ["launch MSRP", "street"]


def test_derived_metric_best(trio: list) -> None:
    comparison = build_comparison(trio)
    # 165.2 / 1.6 = 103.25 TFLOPS per 1k USD beats 20.8 and 27.85
    assert comparison.best("fp16_tensor_tflops_per_kusd") == "small"
    assert comparison.row("fp16_tensor_tflops_per_kusd").values[0] == pytest.approx(103.25)


def test_no_direction_means_no_best(trio: list) -> None:
    comparison = build_comparison(trio)
    assert METRICS["release_year"].higher_is_better is None
    assert comparison.best("release_year") is None


def test_ties_mark_every_tied_gpu() -> None:
    entries = [gpu("a", memory_gb=48), gpu("b", memory_gb=48), gpu("c", memory_gb=24)]
    comparison = build_comparison(entries)
    assert comparison.best("memory_gb") == ["a", "b"]
    row = comparison.row("memory_gb")
    assert [comparison.is_best(row, index) for index in range(3)] == [True, True, False]


def test_missing_is_never_best() -> None:
    entries = [gpu("a", fp64_tflops=0.5), gpu("b"), gpu("c", fp64_tflops=0.25)]
    comparison = build_comparison(entries)
    assert comparison.best("fp64_tflops") == "a"
    # price lower-is-better: a missing price must not win as "smallest"
    priced = [gpu("a", price_usd=900), gpu("b")]
    assert build_comparison(priced).best("price_usd") == "a"
    assert build_comparison(priced).best("fp16_tensor_tflops") is None


def test_best_column_ids_direct() -> None:
    assert best_column_ids([1.0, None, 3.0], ["x", "y", "z"], False) == ("x",)
    assert best_column_ids([None, None], ["x", "y"], True) == ()
    assert best_column_ids([2.0, 2.0], ["x", "y"], None) == ()


def test_baseline_ratios(trio: list) -> None:
    comparison = build_comparison(trio, baseline_id="small")
    row = comparison.row("memory_gb")
    assert row.ratios == pytest.approx((1.0, 80 / 24, 94 / 24))
    assert comparison.cell_text(row, 0) == "24"  # the baseline shows its value
    # the value stays readable beside its ratio
    assert comparison.cell_text(row, 1) == "80 (×3.3)"
    assert comparison.cell_text(row, 2) == "94 (×3.9)"
    fp64 = comparison.row("fp64_tflops")
    assert fp64.ratios[1] is None
    assert comparison.cell_text(fp64, 1) == "n/a"
    assert comparison.cell_text(fp64, 2).endswith("(×23)")
    # a ratio of years means nothing: the year row keeps its values
    assert comparison.row("release_year").ratios == ()
    assert comparison.cell_text(comparison.row("release_year"), 1) == "2023"


def test_format_ratio() -> None:
    assert format_ratio(1.8) == "×1.8"
    assert format_ratio(1.0) == "×1.0"
    assert format_ratio(0.55) == "×0.55"
    assert format_ratio(12.4) == "×12"
    assert format_ratio(None) == "n/a"


def test_unknown_baseline_is_an_error(trio: list) -> None:
    with pytest.raises(ValueError, match="not one of the compared"):
        build_comparison(trio, baseline_id="nope")


def test_rows_are_grouped_in_metric_group_order(trio: list) -> None:
    comparison = build_comparison(trio)
    groups = [group for group, _ in comparison.groups()]
    assert groups == list(MetricGroup)
    keys = {row.key for row in comparison.rows}
    assert set(METRICS) <= keys
    assert {"memory_type", "architecture", "ecc", "nvlink"} <= keys
    assert comparison.row("memory_type").kind is RowKind.TEXT
    assert comparison.value_text(comparison.row("ecc"), 1) == "yes"
    assert comparison.value_text(comparison.row("ecc"), 0) == "n/a"


def test_json_shape(trio: list) -> None:
    data = build_comparison(trio).to_json()
    json.dumps(data)  # serialisable as is
    assert set(data) == {"gpus", "best", "baseline", "units"}
    assert [item["id"] for item in data["gpus"]] == ["small", "big", "huge"]
    first = data["gpus"][0]
    assert first["name"] == "Small"
    assert first["metrics"]["memory_gb"] == 24
    assert first["metrics"]["fp16_tensor_tflops_per_kusd"] == pytest.approx(103.25)
    assert data["gpus"][1]["metrics"]["fp64_tflops"] is None
    assert set(first["metrics"]) == set(METRICS)
    assert first["specs"]["memory_type"] == "HBM3"
    assert data["best"]["price_usd"] == "small"
    assert data["best"]["release_year"] is None
    assert data["baseline"] is None
    assert data["units"]["bandwidth_gbs"] == "GB/s"
    assert "ratios" not in first


def test_json_with_baseline_has_ratios(trio: list) -> None:
    data = build_comparison(trio, baseline_id="big").to_json()
    assert data["baseline"] == "big"
    assert data["gpus"][0]["ratios"]["memory_gb"] == pytest.approx(0.3)
    assert data["gpus"][1]["ratios"]["memory_gb"] == 1


def test_csv_has_one_line_per_row_and_raw_values(trio: list) -> None:
    comparison = build_comparison(trio, baseline_id="small")
    rows = list(csv.reader(io.StringIO(comparison.to_csv())))
    header = rows[0]
    assert header[:7] == ["group", "key", "label", "unit", "Small", "Big", "Huge"]
    assert header[7:] == ["Big / Small", "Huge / Small", "best"]
    by_key = {row[1]: row for row in rows[1:]}
    assert len(rows) - 1 == len(comparison.rows)
    assert by_key["memory_gb"][4:7] == ["24", "80", "94"]
    assert by_key["memory_gb"][-1] == "huge"
    assert by_key["fp64_tflops"][5] == ""
    assert float(by_key["price_usd"][7]) == pytest.approx(15000 / 1600, abs=1e-6)


def test_text_copy_marks_best_and_drops_empty_rows(trio: list) -> None:
    text = build_comparison(trio).to_text()
    lines = text.splitlines()
    assert lines[0].split() == ["Small", "Big", "Huge"]
    memory = next(line for line in lines if line.strip().startswith("Memory (GiB)"))
    assert memory.endswith("94 *")
    assert "Boost clock" not in text  # no GPU has it
    assert "* best in row" in text


def test_measured_column_never_best() -> None:
    entries = [gpu("a", fp32_tflops=20.0), gpu("b", fp32_tflops=40.0)]
    series = MeasuredSeries(
        label="This machine (measured)",
        catalog_id="a",
        values={"fp32_tflops": 55.0, "bandwidth_gbs": 800.0},
        measured_at=dt.datetime(2025, 5, 1, 12, 0),
    )
    comparison = build_comparison(entries, measured=series)
    assert comparison.columns[-1].id == MEASURED_COLUMN_ID
    row = comparison.row("fp32_tflops")
    assert row.values == (20.0, 40.0, 55.0)
    assert comparison.best("fp32_tflops") == "b"
    assert comparison.value_text(comparison.row("memory_gb"), 2) == "—"
    data = comparison.to_json()
    assert [item["id"] for item in data["gpus"]] == ["a", "b"]
    assert data["measured"]["metrics"] == {"fp32_tflops": 55, "bandwidth_gbs": 800}


def test_the_segment_reads_as_the_catalog_writes_it() -> None:
    """Issue 42 item 9: Compare said "datacenter" where the catalog says "Datacenter"."""
    from catalog_factory import make_entry

    from gpudesk.compare.table import build_comparison

    comparison = build_comparison(
        [make_entry("a", segment="datacenter"), make_entry("b", segment="consumer")]
    )
    row = comparison.row("segment")
    assert [comparison.value_text(row, column) for column in (0, 1)] == [
        "Datacenter",
        "Consumer",
    ]


def test_a_small_measured_figure_is_not_shown_as_zero() -> None:
    """A measured CPU's 0.046 TFLOPS read "0.0" in the Compare table (issue 42)."""
    import datetime as dt

    from catalog_factory import make_entry

    from gpudesk.compare.table import build_comparison
    from gpudesk.measured import MeasuredSeries

    measured = MeasuredSeries(
        label="CPU (measured)",
        catalog_id=None,
        values={"fp32_tflops": 0.046},
        measured_at=dt.datetime(2026, 12, 1),
    )
    comparison = build_comparison([make_entry("a"), make_entry("b")], measured=measured)
    row = comparison.row("fp32_tflops")
    assert comparison.value_text(row, 2) == "0.046"
    assert comparison.value_text(row, 0) == "20.0"
