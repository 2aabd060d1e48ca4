"""Reference figures per GPU model: sourced distributions, and doctor's judgement against them."""

from __future__ import annotations

import re

import pytest
from health_snapshots import detection_of, h100

from gpudesk.bench.reference import MIN_N_FOR_PERCENTILES, load_references
from gpudesk.catalog.loader import load_catalog
from gpudesk.health import doctor

_COMMIT_URL = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+$")


def test_every_reference_value_is_cited_and_below_its_datasheet_peak() -> None:
    references = load_references()
    entries = {entry.id: entry for entry in load_catalog([]).entries}
    assert references.by_key, "no reference figures loaded"
    for (catalog_id, test), reference in references.by_key.items():
        assert catalog_id in entries, catalog_id
        peak = entries[catalog_id].bf16_tensor_tflops
        assert test in ("gemm bf16", "gemm fp16") and reference.unit == "TFLOPS"
        for measurement in reference.measurements:
            assert _COMMIT_URL.match(measurement.source), measurement.source
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", measurement.date)
            assert measurement.stack
            # a dense measurement above the dense datasheet peak would be a sparse figure
            assert peak is not None and 0 < measurement.value < peak, (catalog_id, measurement)


def test_the_h100_distribution() -> None:
    reference = load_references().get("h100-sxm5", "gemm bf16")
    assert reference is not None
    assert reference.n == 5 and reference.median == 785.5
    assert reference.spread == (738.6, 794.5)
    assert reference.p5 == pytest.approx(738.6 + 0.2 * (758.6 - 738.6))
    assert len(reference.sources) == 5
    fp16 = load_references().get("h100-sxm5", "gemm fp16")  # same tensor cores, same peak
    assert fp16 is not None and fp16.measurements == reference.measurements
    a100 = load_references().get("a100-40gb-sxm4", "gemm bf16")
    assert a100 is not None and a100.n < MIN_N_FOR_PERCENTILES and a100.p5 is None
    assert load_references().get("rtx-4090", "gemm bf16") is None


def _gemm_finding(catalog_id: str, tflops: float) -> doctor.Finding:
    figure = doctor.ThroughputFigure(
        test="gemm", dtype="bf16", value=tflops, unit="TFLOPS", fraction_of_peak=tflops / 989.4
    )
    report = doctor.examine(
        detection_of(h100(0)), None, None, {0: catalog_id}, throughput={0: [figure]}
    )
    (found,) = [f for f in report.gpus[0].findings if f.check == "gemm_bf16"]
    cited = report.gpus[0].references.get("gemm bf16")
    if found.rule == "reference":  # the JSON carries the distribution it was judged against
        assert cited is not None and cited["n"] >= 1 and cited["sources"]
    else:
        assert cited is None
    return found


def test_doctor_states_a_gemm_against_the_models_reference() -> None:
    slow = _gemm_finding("h100-sxm5", 612.0)
    assert slow.severity == "warning" and slow.rule == "reference"
    assert slow.message.startswith(
        "GEMM BF16 612 TFLOPS = 78% of the H100 SXM reference median 786 (n=5; "
        "Bekman's matmul table, 5 figures 2024-08-06 to 2025-01-05), 62% of the catalog peak"
    )
    assert "under 85% of its median" in slow.message
    below_p5 = _gemm_finding("h100-sxm5", 740.0)  # 94% of the median, under the 5th percentile
    assert below_p5.severity == "warning" and "below its 5th percentile 743" in below_p5.message
    assert "under 85%" not in below_p5.message
    fine = _gemm_finding("h100-sxm5", 790.0)
    assert fine.severity == "info" and "= 101% of the H100 SXM reference median" in fine.message


def test_with_few_measurements_only_the_median_rule_applies() -> None:
    assert _gemm_finding("a100-80gb-sxm4", 250.0).severity == "info"  # 93% of 269.55
    assert _gemm_finding("a100-80gb-sxm4", 220.0).severity == "warning"  # 82%


def test_a_model_without_a_reference_keeps_the_typical_fraction() -> None:
    found = _gemm_finding("rtx-4090", 100.0)
    assert found.rule == "gemm_bf16" and "typical" in found.message
