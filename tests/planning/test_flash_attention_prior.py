"""vLLM's prompt attention starts from FlashAttention-2's published share, not from the
pooled curve that llama.cpp's own kernels set."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from gpudesk.speed.fitting import FLASH_ATTENTION_SHARE


def _fitted() -> dict[str, dict[str, float]]:
    text = resources.files("gpudesk.speed").joinpath("fitted.json").read_text("utf-8")
    table: dict[str, dict[str, float]] = json.loads(text)["inference"]
    return table


def test_vllms_curve_keeps_it_and_llama_cpps_does_not_take_it() -> None:
    fitted = _fitted()
    vllm = fitted["vllm/*/*"]["attention"]
    pooled = fitted["*/*/*"]["attention"]
    # four vLLM rows of short prompts barely move the prior; the pooled curve is far below
    assert vllm == pytest.approx(FLASH_ATTENTION_SHARE, rel=0.1)
    assert pooled < 0.5 * FLASH_ATTENTION_SHARE
    assert fitted["llama.cpp/*/*"]["attention"] < 0.8 * FLASH_ATTENTION_SHARE
