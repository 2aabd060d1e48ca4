"""llama.cpp partial offload: what stays in host memory, and what decode then reads there."""

from __future__ import annotations

import pytest

from gpudesk.memory.breakdown import Engine, PartKey, WorkloadSpec, estimate_memory
from gpudesk.memory.offload import DEFAULT_HOST, layer_bytes, plan_offload
from gpudesk.speed.estimate import KvFormat, model_costs
from gpudesk.speed.physics import Efficiency, Gpus, HostPart, decode_step
from gpudesk.speed.shapes import shape_for
from gpudesk.workload.presets import find_preset
from gpudesk.workload.quant import QuantFormat

GIB = 2**30
#: one Llama 3.1 8B layer: q, o 4096 x 4096; k, v 4096 x 1024; 3 MLP 4096 x 14336; 2 norms
LLAMA_8B_LAYER_PARAMS = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
LLAMA_8B_OUTPUT_PARAMS = 128_256 * 4096 + 4096


def _llama_8b_fp16():  # type: ignore[no-untyped-def]
    return estimate_memory(
        find_preset("llama-3.1-8b"),
        WorkloadSpec(quant=QuantFormat.FP16, engine=Engine.LLAMA_CPP, seq=1024),
    )


def test_layer_bytes_of_llama_8b_in_fp16() -> None:
    table = layer_bytes(shape_for("llama-3.1-8b"), QuantFormat.FP16)
    assert LLAMA_8B_LAYER_PARAMS == 218_112_000
    assert table.held == (2 * 218_112_000,) * 32
    assert table.streamed == table.held  # dense: a token reads every weight of a layer
    assert table.experts_held == (0.0,) * 32
    assert table.output == 2 * LLAMA_8B_OUTPUT_PARAMS  # 1,050,681,344 bytes


def test_a_dense_model_keeps_the_most_layers_on_the_gpu() -> None:
    estimate = _llama_8b_fp16()
    usable = 12 * GIB  # 12,884,901,888 bytes
    offload = plan_offload(estimate, usable)
    assert offload is not None
    total = estimate.total_gb * 1e9
    kv = estimate.part(PartKey.KV_CACHE).gb * 1e9
    layer, output = 2 * LLAMA_8B_LAYER_PARAMS, 2 * LLAMA_8B_OUTPUT_PARAMS

    def on_gpu(ngl: int) -> float:
        cpu = 32 - ngl
        return total - cpu * layer - output - kv * cpu / 32

    expected = max(k for k in range(33) if on_gpu(k) <= usable)
    assert expected == 27
    assert offload.gpu_layers == 27 and offload.cpu_moe == 0
    assert offload.gpu_bytes == pytest.approx(on_gpu(27))
    assert offload.host_weight_bytes == pytest.approx(5 * layer + output)
    assert offload.host_streamed_bytes == pytest.approx(5 * layer + output)
    assert offload.host_kv_share == pytest.approx(5 / 32)
    assert offload.flag == "-ngl 27"
    assert "27 of 33 layers on the GPU" in offload.words


def test_a_mixture_of_experts_keeps_the_fewest_layers_experts_on_the_cpu() -> None:
    estimate = estimate_memory(
        find_preset("gpt-oss-20b"),
        WorkloadSpec(quant=QuantFormat.MXFP4, engine=Engine.LLAMA_CPP, seq=768),
    )
    table = layer_bytes(shape_for("gpt-oss-20b"), QuantFormat.MXFP4)
    # The MXFP4 GGUF (experts MXFP4, the rest Q8_0: 11.27 GiB) in 8 GiB:
    offload = plan_offload(estimate, 8 * GIB)
    assert offload is not None and offload.cpu_moe is not None
    moe = offload.cpu_moe
    assert 1 <= moe < 24 and offload.gpu_layers == 25 and offload.flag == f"--n-cpu-moe {moe}"
    assert offload.host_weight_bytes == pytest.approx(sum(table.experts_held[:moe]))
    # A token reads 4 of the 32 experts of each of those layers.
    assert offload.host_streamed_bytes == pytest.approx(sum(table.experts_streamed[:moe]))
    assert offload.host_streamed_bytes == pytest.approx(offload.host_weight_bytes * 4 / 32)
    assert offload.host_kv_share == 0.0  # attention and its KV cache stay on the GPU


def test_the_users_layers_are_applied_or_refused() -> None:
    estimate = _llama_8b_fp16()
    given = plan_offload(estimate, 12 * GIB, gpu_layers=10)
    assert given is not None and given.gpu_layers == 10
    assert plan_offload(estimate, 12 * GIB, gpu_layers=30) is None  # the rest is too big
    assert plan_offload(estimate, 0) is None  # not even the compute buffer fits
    vllm = estimate_memory(
        find_preset("llama-3.1-8b"), WorkloadSpec(quant=QuantFormat.FP16, engine=Engine.VLLM)
    )
    assert plan_offload(vllm, 12 * GIB) is None  # llama.cpp only


def test_decode_reads_the_host_part_at_host_bandwidth_after_the_gpu() -> None:
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.FP16, KvFormat.FP16)
    gpus = Gpus(bandwidth_gbs=500.0, peak_tflops=100.0)
    eff = Efficiency(bandwidth=1.0, compute=1.0, layer_s=0.0)
    full = decode_step(costs, gpus, eff, batch=1, context=1000)
    host = HostPart(weight_bytes=4e9, kv_share=0.25, bandwidth_gbs=50.0)
    split = decode_step(costs, gpus, eff, batch=1, context=1000, host=host)
    kv = costs.kv_bytes(1000)
    assert split.memory_s == pytest.approx((costs.weights_read(1) - 4e9 + 0.75 * kv) / 500e9)
    assert split.host_s == pytest.approx((4e9 + 0.25 * kv) / 50e9)
    assert split.total_s > full.total_s
    assert split.limited_by == "host_memory"
    assert DEFAULT_HOST.bandwidth_gbs == pytest.approx(89.6 * 53.3 / 68.2)
