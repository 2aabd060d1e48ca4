"""The speed model's arithmetic: what decode reads, bounds, training FLOPs."""

from __future__ import annotations

import math

import pytest
from catalog_factory import make_entry
from hypothesis import given, settings, strategies as st

from gpudesk.speed.data import Checkpointing
from gpudesk.speed.estimate import (
    Engine,
    KvFormat,
    Mode,
    SpeedInputError,
    SpeedRequest,
    model_costs,
)
from gpudesk.speed.hardware import rates_for
from gpudesk.speed.physics import (
    Gpus,
    decode_bound_bytes,
    train_flops_per_token,
)
from gpudesk.speed.planner import estimate_for
from gpudesk.speed.shapes import shape_for
from gpudesk.workload.architecture import make_shape
from gpudesk.workload.quant import QuantFormat, weight_bytes


def test_decode_bound_reads_streamed_weights_and_kv_not_the_embedding_table() -> None:
    shape = shape_for("llama-3.1-8b")
    weights = weight_bytes(shape, QuantFormat.Q4_K_M)
    costs = model_costs(shape, QuantFormat.Q4_K_M, KvFormat.FP16)
    read = decode_bound_bytes(costs, batch=1, context=1000)
    kv = shape.kv_cache_bytes(1000, 2.0)
    assert read == pytest.approx(weights.streamed_per_token_bytes + kv)
    # The 128,256 x 4,096 input table is in memory but one row of it is read.
    skipped = weights.in_memory_bytes - weights.streamed_per_token_bytes
    assert skipped == pytest.approx(weights.input_embedding_bytes, rel=0.01)
    assert skipped > 0.25e9


def test_int4_counts_the_lm_head_at_its_real_bits() -> None:
    shape = shape_for("llama-3.1-8b")
    head = shape.vocab * shape.hidden
    q4 = model_costs(shape, QuantFormat.Q4_K_M, KvFormat.FP16)
    # Q4_K_M keeps the output head at Q6_K (6.5625 bits), not 4 and not 16.
    body = q4.streamed_bytes - head * 6.5625 / 8
    assert 0.5 * (shape.total_params - 2 * head) * 4.5 / 8 < body
    assert body < (shape.total_params - 2 * head) * 6.6 / 8


def test_moe_batch_reads_more_experts_but_never_more_than_held() -> None:
    costs = model_costs(shape_for("mixtral-8x7b"), QuantFormat.BF16, KvFormat.FP16)
    one = costs.weights_read(1)
    assert one == costs.streamed_bytes
    assert costs.weights_read(4) > one
    assert costs.weights_read(64) <= costs.in_memory_bytes
    assert costs.weights_read(64) > 0.95 * (costs.in_memory_bytes - costs.input_embedding_bytes)


def test_training_is_six_n_and_eight_n_with_recomputation() -> None:
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.BF16, KvFormat.FP16)
    plain = train_flops_per_token(costs, seq=1, frozen_base=False, full_recompute=False)
    again = train_flops_per_token(costs, seq=1, frozen_base=False, full_recompute=True)
    # N is the parameters a token is multiplied by: no input-embedding table (a lookup)
    assert plain == pytest.approx(6 * costs.matmul_params_active, rel=1e-3)
    assert costs.matmul_params_active < costs.params_total - 5e8
    assert again == pytest.approx(8 * costs.matmul_params_active, rel=1e-3)
    lora = train_flops_per_token(costs, seq=1, frozen_base=True, full_recompute=False)
    assert lora == pytest.approx(4 * costs.matmul_params_active, rel=1e-3)


def test_mixture_of_experts_trains_on_its_active_parameters() -> None:
    # DeepSeek-V3: 671B parameters, 37B activated per token (its report); the FLOPs
    # count the activated ones, not every expert.
    costs = model_costs(shape_for("deepseek-v3"), QuantFormat.FP8, KvFormat.FP16)
    flops = train_flops_per_token(costs, seq=1, frozen_base=False, full_recompute=False)
    assert 6 * 35e9 < flops < 6 * 38e9
    assert costs.params_total > 660e9
    # gpt-oss-20b: 3.6B active per its model card, the input embedding left out
    oss = model_costs(shape_for("gpt-oss-20b"), QuantFormat.MXFP4, KvFormat.FP16)
    assert round(oss.matmul_params_active / 1e9, 1) == 3.6


def test_layer_split_sees_one_gpu_bandwidth_tensor_parallel_all() -> None:
    split = Gpus(bandwidth_gbs=1000, peak_tflops=100, count=4, layer_split=True)
    tensor = Gpus(bandwidth_gbs=1000, peak_tflops=100, count=4, layer_split=False)
    assert split.bandwidth_bytes_s == 1e12
    assert tensor.bandwidth_bytes_s == 4e12


def test_bad_request_values_name_their_field() -> None:
    for field, value in (("seq_in", 0), ("count", 0), ("batch", 10**9), ("context", -1)):
        with pytest.raises(SpeedInputError) as caught:
            SpeedRequest(mode=Mode.DECODE, **{field: value}).resolved()
        assert caught.value.field == field
    with pytest.raises(SpeedInputError) as caught:
        SpeedRequest(mode=Mode.TRAIN, mfu=1.5).resolved()
    assert caught.value.field == "mfu"
    with pytest.raises(SpeedInputError):
        SpeedRequest(mode=Mode.TRAIN, tokens=math.inf).resolved()


_QUANTS = [QuantFormat.BF16, QuantFormat.FP8, QuantFormat.Q4_K_M, QuantFormat.Q8_0, QuantFormat.AWQ]


@st.composite
def _shapes(draw: st.DrawFn) -> object:
    kv_heads = draw(st.sampled_from([1, 2, 4, 8]))
    heads = kv_heads * draw(st.sampled_from([1, 2, 4, 8]))
    head_dim = draw(st.sampled_from([64, 128]))
    return make_shape(
        {
            "layers": draw(st.integers(1, 96)),
            "hidden": heads * head_dim,
            "heads": heads,
            "kv_heads": kv_heads,
            "head_dim": head_dim,
            "intermediate": 256 * draw(st.integers(1, 120)),
            "vocab": draw(st.integers(1000, 260_000)),
            "context": 131072,
            "tied_embeddings": draw(st.booleans()),
        }
    )


@settings(max_examples=60, deadline=None)
@given(
    shape=_shapes(),
    quant=st.sampled_from(_QUANTS),
    engine=st.sampled_from(list(Engine)),
    bandwidth=st.floats(100, 10_000),
    peak=st.floats(10, 5000),
    memory_class=st.sampled_from(["GDDR6X", "HBM3"]),
    architecture=st.sampled_from(["Ampere", "Hopper", "Ada Lovelace", "Blackwell", "CDNA 3"]),
    batch=st.integers(1, 512),
    context=st.integers(0, 200_000),
    count=st.sampled_from([1, 2, 8]),
)
def test_decode_never_exceeds_the_bound_it_reports(
    shape: object,
    quant: QuantFormat,
    engine: Engine,
    bandwidth: float,
    peak: float,
    memory_class: str,
    architecture: str,
    batch: int,
    context: int,
    count: int,
) -> None:
    entry = make_entry(
        "prop-gpu",
        bandwidth_gbs=bandwidth,
        bf16_tensor_tflops=peak,
        memory_gb=80,
        memory_type=memory_class,
        architecture=architecture,
    )
    costs = model_costs(shape, quant, KvFormat.FP16)  # type: ignore[arg-type]
    request = SpeedRequest(
        mode=Mode.DECODE, engine=engine, quant=quant, batch=batch, context=context, count=count
    )
    result = estimate_for(rates_for(entry), costs, request)
    assert result.tokens_per_s <= result.bound_tokens_per_s * (1 + 1e-9)
    assert result.low <= result.tokens_per_s <= result.high * (1 + 1e-9)
    assert result.high <= result.bound_tokens_per_s * (1 + 1e-9)
    # The bound's bytes are what the step reads: weights streamed + every KV cache.
    read = decode_bound_bytes(costs, batch=batch, context=context)
    gpus = 1 if engine is Engine.LLAMA_CPP else count
    memory_bound = batch * gpus * bandwidth * 1e9 / read
    assert result.bound_tokens_per_s <= memory_bound * (1 + 1e-9)


def test_checkpointing_enum_values_match_cli() -> None:
    assert {item.value for item in Checkpointing} == {"none", "selective", "full"}
