"""SGLang as a serving engine of ``speed``: its default limits by GPU memory (the table
in ``under_load``), its KV pool (the ``--emit sglang`` arithmetic) and its running cap."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.speed.estimate import Engine, KvFormat, Mode, SpeedRequest, model_costs
from gpudesk.speed.holding import kv_pool_bytes, memory_estimate, sglang_instance_pool
from gpudesk.speed.shapes import shape_for
from gpudesk.speed.under_load import (
    SGLANG_DEFAULTS_SOURCE,
    engine_limits,
    sglang_chunked_prefill,
    sglang_max_running_requests,
    sglang_mem_fraction_static,
)
from gpudesk.workload.quant import QuantFormat


@pytest.mark.parametrize(
    ("memory_gib", "chunk"),
    [
        (16, 2048),
        (19.99, 2048),
        (20, 2048),  # 20 starts the next row, which is 2048 too
        (34.99, 2048),
        (35, 4096),
        (59.99, 4096),
        (60, 8192),
        (89.99, 8192),
        (90, 8192),
        (159.99, 8192),
        (160, 16384),
        (192, 16384),
    ],
)
def test_chunked_prefill_follows_sglangs_memory_rows(memory_gib: float, chunk: int) -> None:
    assert sglang_chunked_prefill(memory_gib) == chunk


def test_the_limits_are_sglangs_and_say_so() -> None:
    limits = engine_limits("sglang", gpu_name="NVIDIA H100 SXM5 80GB", memory_gb=80)
    assert (limits.max_num_seqs, limits.max_num_batched_tokens) == (2048, 8192)
    assert limits.source == SGLANG_DEFAULTS_SOURCE and "vLLM V1's rules" in limits.source
    small = engine_limits("sglang", gpu_name="NVIDIA L4", memory_gb=24)
    # the simulator gives each running decode its token: the cap stays within the budget
    assert (small.max_num_seqs, small.max_num_batched_tokens) == (2048, 2048)
    given_values = engine_limits(
        "sglang", gpu_name="x", memory_gb=80, max_num_seqs=64, max_num_batched_tokens=4096
    )
    assert (given_values.max_num_seqs, given_values.max_num_batched_tokens) == (64, 4096)
    assert "as given" in given_values.source
    from_pool = engine_limits(
        "sglang", gpu_name="x", memory_gb=192, kv_tokens=2_000_000, context_len=131_072
    )
    assert from_pool.max_num_seqs == 4096  # 2e6 / 131072 x 512 = 7812, at most 4096
    assert from_pool.max_num_batched_tokens == 16384
    usual = engine_limits(
        "sglang", gpu_name="x", memory_gb=192, kv_tokens=300_000, context_len=131_072
    )
    assert usual.max_num_seqs == 2048  # 1171 from the pool, at least 2048
    tiny = engine_limits("sglang", gpu_name="x", memory_gb=192, kv_tokens=1000, context_len=4096)
    assert tiny.max_num_seqs == 500  # never more than half the pool's tokens


def test_mem_fraction_static_as_sglang_derives_it() -> None:
    # 80 GB H100 (79.65 GiB), TP-1: 512 + 1.5 x 8192 + 2 x 256 + 128 MiB = 13,440 MiB reserved
    assert sglang_mem_fraction_static(79.65) == pytest.approx(0.835, abs=1e-3)
    # TP-8 reserves 1 GiB for the parallel size and 2 x 512 for CUDA graphs
    assert sglang_mem_fraction_static(79.65, tp=8) == pytest.approx(0.818, abs=1e-3)
    # below 60 GiB there is no 10 GiB floor: a 24 GB card keeps more of its memory
    assert sglang_mem_fraction_static(22.5) == pytest.approx(0.837, abs=1e-3)


@settings(max_examples=200, deadline=None)
@given(
    memory_gib=st.floats(min_value=8, max_value=1024, allow_nan=False),
    tp=st.sampled_from([1, 2, 4, 8, 16]),
    pp=st.sampled_from([1, 2, 4]),
    tokens=st.integers(min_value=0, max_value=10**9),
    context=st.integers(min_value=1, max_value=10_000_000),
)
def test_sglang_defaults_stay_in_range(
    memory_gib: float, tp: int, pp: int, tokens: int, context: int
) -> None:
    """Any GPU memory and layout a catalog entry or flag can give: a share below 1, a
    chunk from SGLang's table, a running cap of at least one and at most 4096."""
    fraction = sglang_mem_fraction_static(memory_gib, tp=tp, pp=pp)
    assert fraction < 1
    if memory_gib >= 24 and tp * pp <= 8:
        assert fraction > 0.5
    assert sglang_chunked_prefill(memory_gib) in (2048, 4096, 8192, 16384)
    running = sglang_max_running_requests(tokens, context)
    assert 1 <= running <= 4096
    if tokens >= 4:
        assert running <= tokens // 2


def test_the_serving_pool_is_sglangs_own() -> None:
    """``speed --engine sglang`` admits against the pool ``--emit sglang`` prints."""
    entry = next(
        item for item in load_catalog([], include_user=False).entries if item.id == "h100-sxm5"
    )
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.BF16, KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.SERVE, engine=Engine.SGLANG, quant=QuantFormat.BF16, seq_in=1024, seq_out=256
    )
    estimate = memory_estimate(costs, request)
    assert estimate is not None
    pool = sglang_instance_pool(entry, estimate)
    assert pool.mem_fraction_static == pytest.approx(
        sglang_mem_fraction_static(pool.free_at_start_bytes / 2**30 + 1.2), abs=2e-3
    )
    per_token = 32 * 2 * 8 * 128 * 2  # layers x K and V x KV heads x head dim x 2 bytes
    total = kv_pool_bytes(entry, estimate, 1, engine=Engine.SGLANG)
    assert total == pytest.approx(pool.tokens * per_token)
    # vLLM keeps 0.9 of the GPU, SGLang about 0.835 on an H100: a smaller pool
    vllm = kv_pool_bytes(entry, estimate, 1)
    assert 0.8 * vllm < total < vllm
