"""Prompt attention's share of the GEMM's: vLLM's starts from FlashAttention-2's
published share, and its GEMMs' share from published matmul benchmarks'; llama.cpp's,
once the scores its llama-bench runs wrote and re-read without FlashAttention are
charged as memory traffic, comes out near it too (it was 0.28 when that traffic hid in
the share)."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from gpudesk.speed.fitting import (
    FLASH_ATTENTION_SHARE,
    LIBRARY_GEMM_ENGINES,
    _fit_inference,
    fresh_rows,
)


def _fitted() -> dict[str, dict[str, float]]:
    text = resources.files("gpudesk.speed").joinpath("fitted.json").read_text("utf-8")
    table: dict[str, dict[str, float]] = json.loads(text)["inference"]
    return table


def test_vllms_curve_keeps_flash_attentions_share() -> None:
    fitted = _fitted()
    # four vLLM rows of short prompts barely move the prior
    assert fitted["vllm/*/*"]["attention"] == pytest.approx(FLASH_ATTENTION_SHARE, rel=0.1)


def test_llama_cpps_share_is_of_the_flops_once_unfused_scores_are_charged() -> None:
    fitted = _fitted()
    for key in ("llama.cpp/*/*", "llama.cpp-cuda/nvidia/*", "*/*/*"):
        assert 0.8 * FLASH_ATTENTION_SHARE < fitted[key]["attention"] <= 1.0, key


def test_library_gemm_engines_compute_shares_are_of_their_kernels_own_peak() -> None:
    """FP8 GEMMs are shares of the FP8 peak, 16-bit ones of the 16-bit peak: no curve of
    an engine that calls the vendor's GEMM library reaches past its peak (TensorRT-LLM's
    fitted 1.25 of the 16-bit peak while its FP8 rows were shares of it)."""
    fitted = _fitted()
    library = [key for key in fitted if key.split("/")[0] in LIBRARY_GEMM_ENGINES]
    assert library
    for key in library:
        assert 0.3 < fitted[key]["compute"] <= 1.0, key


def test_library_gemm_engines_start_from_the_published_matmul_share() -> None:
    """vLLM's and TensorRT-LLM's compute shares start from what published matmul
    benchmarks reach; llama.cpp's curves do not move with it."""
    rows = [
        row
        for row in fresh_rows()
        if not row.measurement.held_out
        and row.request is not None
        and (row.measurement.engine == "vllm" or row.measurement.gpu == "rtx-4090")
    ]
    low, high = (_fit_inference(rows, share) for share in (0.45, 0.9))
    assert high["vllm/*/*"]["compute"] > low["vllm/*/*"]["compute"] * 1.2
    assert high["llama.cpp-cuda/nvidia/*"] == low["llama.cpp-cuda/nvidia/*"]
