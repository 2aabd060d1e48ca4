"""Fitting an estimate across a small, hand-made catalog."""

from __future__ import annotations

import pytest
from catalog_factory import make_entry

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.memory.breakdown import (
    OVERHEAD_FIXED_GB,
    DType,
    Workload,
    WorkloadSpec,
    estimate_memory,
)
from gpudesk.memory.fit import bf16_supported, decode_upper_bound, fit_across
from gpudesk.workload.presets import find_preset, generic_architecture


def _catalog() -> list[CatalogEntry]:
    return [
        make_entry("big-80", memory_gb=80, bandwidth_gbs=2000, compute_capability="8.0"),
        make_entry("card-24", memory_gb=24, bandwidth_gbs=1000, compute_capability="8.9"),
        make_entry("card-16", memory_gb=16, bandwidth_gbs=500, compute_capability="8.6"),
        make_entry(
            "old-8", memory_gb=8, bandwidth_gbs=320, compute_capability="6.1", architecture="Pascal"
        ),
        make_entry("tiny-2", memory_gb=2, bandwidth_gbs=100, compute_capability="8.6"),
    ]


def _estimate(params: int, dtype: DType = DType.BF16, workload: Workload = Workload.INFERENCE):  # type: ignore[no-untyped-def]
    return estimate_memory(
        generic_architecture(params), WorkloadSpec(dtype=dtype, workload=workload)
    )


def test_7b_bf16_fits_24_gb_card_alone() -> None:
    estimate = _estimate(7_000_000_000)
    report = fit_across(_catalog(), estimate)
    fits = {result.gpu_id: result.count for result in report.fits}
    assert fits["card-24"] == 1
    assert fits["big-80"] == 1
    # 16.74e9 bytes on one "16 GB" card, which holds 16 GiB = 17.18e9 bytes
    assert fits["card-16"] == 1
    assert "old-8" not in fits  # Pascal: no native bf16
    assert "tiny-2" not in fits  # 8 x 2 GB: the 1 GB overhead on each leaves too little
    assert {r.gpu_id for r in report.too_small} == {"tiny-2"}
    assert [r.gpu_id for r in report.excluded] == ["old-8"]


def test_headroom_is_memory_minus_need() -> None:
    estimate = _estimate(7_000_000_000)
    report = fit_across(_catalog(), estimate)
    card = next(result for result in report.fits if result.gpu_id == "card-24")
    assert card.usable_gb == pytest.approx(24 * 2**30 / 1e9)  # 25.77 GB
    assert card.headroom_gb == pytest.approx(24 * 2**30 / 1e9 - estimate.total_gb)
    big = _estimate(13_000_000_000)
    two = next(result for result in fit_across(_catalog(), big).fits if result.gpu_id == "card-24")
    assert two.needs_parallelism
    assert two.per_gpu_gb == pytest.approx(big.per_gpu_gb(2))
    assert two.headroom_gb == pytest.approx(24 * 2**30 / 1e9 - big.per_gpu_gb(2))


def test_fp16_lets_the_old_card_in_with_parallelism() -> None:
    estimate = _estimate(7_000_000_000, DType.FP16)
    report = fit_across(_catalog(), estimate)
    old = next(result for result in report.results if result.gpu_id == "old-8")
    assert old.excluded_reason is None
    assert old.count == 4
    # Each of the four carries its own framework overhead.
    assert old.per_gpu_gb == pytest.approx(
        (estimate.total_gb - OVERHEAD_FIXED_GB) / 4 + OVERHEAD_FIXED_GB
    )


def test_70b_bf16_fits_no_single_card() -> None:
    report = fit_across(_catalog(), _estimate(70_000_000_000))
    assert all(result.count != 1 for result in report.fits)
    assert {r.gpu_id: r.count for r in report.fits}["big-80"] == 2


def test_fits_are_ordered_fewest_gpus_then_smallest_card() -> None:
    report = fit_across(_catalog(), _estimate(8_000_000_000))
    assert [r.gpu_id for r in report.fits] == ["card-24", "big-80", "card-16"]
    assert [r.count for r in report.fits] == [1, 1, 2]
    assert report.fitting_ids() == {"card-24", "big-80", "card-16"}
    assert report.fitting_ids(max_count=1) == {"card-24", "big-80"}


def test_max_count_limits_the_search() -> None:
    report = fit_across(_catalog(), _estimate(8_000_000_000), counts=(1,))
    assert {r.gpu_id for r in report.fits} == {"card-24", "big-80"}
    assert report.counts == (1,)


def test_decode_upper_bound_is_bandwidth_over_bytes_per_token() -> None:
    """Llama 3.1 8B bf16, 1 token of context: 1000 GB/s / (15.01 GB + KV) ~ 67 tokens/s.

    A token reads every weight but the input embedding table (one row of it)."""
    estimate = estimate_memory(find_preset("llama-3.1-8b"), WorkloadSpec(seq=1))
    per_token = (8_030_261_248 - 128_256 * 4096 + 4096) * 2 + 2 * 32 * 8 * 128 * 2
    assert estimate.decode_bytes_per_token == pytest.approx(per_token)
    assert decode_upper_bound(estimate, 1000, 1) == pytest.approx(1000e9 / per_token)
    assert decode_upper_bound(estimate, 1000, 2) == pytest.approx(2 * 1000e9 / per_token)
    report = fit_across(_catalog(), estimate)
    card = next(r for r in report.fits if r.gpu_id == "card-24")
    assert card.decode_tokens_per_s_upper_bound == pytest.approx(1000e9 / per_token)
    assert round(card.decode_tokens_per_s_upper_bound or 0) == 67


def test_no_decode_bound_for_training_or_encoders() -> None:
    train = _estimate(1_000_000_000, workload=Workload.LORA)
    assert all(
        r.decode_tokens_per_s_upper_bound is None for r in fit_across(_catalog(), train).fits
    )
    bert = estimate_memory(find_preset("bert-base"), WorkloadSpec())
    assert all(r.decode_tokens_per_s_upper_bound is None for r in fit_across(_catalog(), bert).fits)


def test_bf16_support() -> None:
    assert bf16_supported(make_entry("a", compute_capability="8.0")) is True
    assert bf16_supported(make_entry("b", compute_capability="7.5")) is False
    assert bf16_supported(make_entry("c", architecture="Volta")) is False
    assert bf16_supported(make_entry("d", architecture="Hopper")) is None
    assert bf16_supported(make_entry("e", vendor="AMD", architecture="CDNA 3")) is None
    assert bf16_supported(make_entry("f", vendor="AMD", bf16_tensor_tflops=100.0)) is True


def test_empty_catalog_gives_an_empty_report() -> None:
    report = fit_across([], _estimate(7_000_000_000))
    assert report.fits == [] and report.fitting_ids() == frozenset()


def test_counts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        fit_across(_catalog(), _estimate(7_000_000_000), counts=(0, 1))
