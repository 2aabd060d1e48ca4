import datetime as dt

import pytest
from catalog_factory import make_entry

from gpudesk.catalog.metrics import METRICS, derived_values


def test_derived_metrics_hand_computed() -> None:
    entry = make_entry(
        fp32_tflops=82.6,
        fp16_tensor_tflops=165.2,
        tdp_w=450,
        price_usd=1599,
        price_date=dt.date(2022, 10, 12),
        price_kind="launch_msrp",
        memory_gb=24,
    )
    values = derived_values(entry)
    assert values["fp16_tensor_tflops_per_kusd"] == pytest.approx(165.2 / 1.599)
    assert values["memory_gb_per_kusd"] == pytest.approx(24 / 1.599)
    assert values["fp32_tflops_per_w"] == pytest.approx(82.6 / 450)
    assert values["fp16_tensor_tflops_per_w"] == pytest.approx(165.2 / 450)


def test_derived_metrics_are_missing_without_inputs() -> None:
    values = derived_values(make_entry())  # no price, no TDP, no tensor figure
    assert set(values.values()) == {None}


def test_metric_formatting() -> None:
    assert METRICS["bandwidth_gbs"].format(3352.0) == "3,352"
    assert METRICS["release_year"].format(2024.0) == "2024"
    assert METRICS["fp64_tflops"].format(None) == "n/a"
    assert METRICS["bandwidth_gbs"].header == "Bandwidth (GB/s)"
    assert METRICS["price_usd"].higher_is_better is False
    assert METRICS["tdp_w"].higher_is_better is False
