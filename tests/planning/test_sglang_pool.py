"""SGLang's KV pool (``--emit sglang``): its own formula, checked on a published log."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from gpudesk.cli import main
from gpudesk.memory.sglang_pool import GIB, sglang_kv_pool

# QwQ-32B (64 layers, 8 KV heads of 128) at TP 4 on four L4s, SGLang 0.4.3.post4,
# mem_fraction_static=0.85 (didier-durand/llms-in-clouds docs/sglang.md @ 3e1df42a):
# "Load weight begin. avail mem=21.63 GB", "Load weight end. ... avail mem=6.09 GB",
# "KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB"
QWQ_TP4_BYTES_PER_TOKEN = 2 * 64 * (8 // 4) * 128 * 2


def test_the_formula_gives_the_published_l4_pool() -> None:
    pool = sglang_kv_pool(
        free_at_start_bytes=21.63 * GIB,
        weights_bytes_per_gpu=(21.63 - 6.09) * GIB,
        bytes_per_token=QWQ_TP4_BYTES_PER_TOKEN,
        mem_fraction_static=0.85,
        max_model_len=131072,
    )
    assert pool.tokens == pytest.approx(46611, rel=1e-3)
    assert "K size: 1.42 GB, V size: 1.42 GB" in pool.log_lines()[0]


@given(
    free=st.floats(1.0, 200.0),
    weights=st.floats(0.0, 200.0),
    fraction=st.floats(0.05, 1.0),
    per_token=st.integers(1, 10**7),
)
def test_the_pool_never_takes_more_than_the_static_share_less_the_weights(
    free: float, weights: float, fraction: float, per_token: int
) -> None:
    pool = sglang_kv_pool(
        free_at_start_bytes=free * GIB,
        weights_bytes_per_gpu=weights * GIB,
        bytes_per_token=per_token,
        mem_fraction_static=fraction,
        max_model_len=4096,
    )
    assert pool.tokens >= 0
    assert pool.tokens * per_token <= max(0.0, (fraction * free - weights) * GIB) + 1


def test_emit_sglang_prints_sglangs_pool_not_vllms(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fit", "--model", "llama-3.1-8b", "--dtype", "bf16", "--gpu", "h100-sxm5"]
    assert main([*args, "--emit", "sglang"]) == 0
    text = capsys.readouterr().out
    assert "KV pool as SGLang will log it" in text
    assert "as vLLM will log it" not in text
    assert "KV Cache is allocated. #tokens: " in text
    assert main([*args, "--emit", "sglang", "--json"]) == 0
    pool = json.loads(capsys.readouterr().out)["emit"]["kv_pool"]
    assert pool["predicted_for"] == "sglang"
    assert pool["peak_activation_gib"] is None
    # SGLang logs "Load weight begin. avail mem=78.43 GB" / "78.48 GB" on an 80 GB H100
    assert pool["free_before_weights_gib"] == pytest.approx(78.45, abs=0.1)
    # and "avail mem=63.41 GB" once Llama 3.1 8B's weights are in (14.96 GiB)
    assert pool["free_before_weights_gib"] - pool["weights_gib"] == pytest.approx(63.41, abs=0.2)
    assert main([*args, "--emit", "vllm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["emit"]["kv_pool"]["predicted_for"] == "vllm"
