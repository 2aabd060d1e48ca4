"""Prompt attention's share of the GEMM's: vLLM's starts from FlashAttention-2's
published share; llama.cpp's, once the scores its llama-bench runs wrote and re-read
without FlashAttention are charged as memory traffic, comes out near it too (it was 0.28
when that traffic hid in the share)."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from gpudesk.speed.fitting import FLASH_ATTENTION_SHARE


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
