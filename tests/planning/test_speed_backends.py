"""llama.cpp backends and the ordering of GPUs at prefill, over the whole catalog."""

from __future__ import annotations

import itertools

import pytest

from gpudesk.catalog.loader import load_catalog
from gpudesk.planning.quant import QuantFormat
from gpudesk.planning.speed.estimate import (
    Backend,
    Engine,
    KvFormat,
    Mode,
    SpeedInputError,
    SpeedRequest,
    backend_for,
    model_costs,
)
from gpudesk.planning.speed.hardware import rates_for
from gpudesk.planning.speed.planner import estimate_for
from gpudesk.planning.speed.shapes import shape_for


def _catalog_rates():  # type: ignore[no-untyped-def]
    return [rates_for(entry) for entry in load_catalog([], include_user=False).entries]


@pytest.mark.parametrize(
    ("model", "quant", "engine", "backend"),
    [
        ("llama-3.1-8b", "q4_k_m", Engine.LLAMA_CPP, Backend.CUDA),
        ("llama-3.1-8b", "fp16", Engine.LLAMA_CPP, Backend.VULKAN),
        ("tinyllama-1.1b", "q4_k_m", Engine.LLAMA_CPP, Backend.VULKAN),
        ("llama-3.1-8b", "q4_k_m", Engine.LLAMA_CPP, None),
        ("llama-3.1-8b", "bf16", Engine.VLLM, None),
    ],
)
def test_no_gpu_with_a_lower_peak_and_lower_bandwidth_prefills_faster(
    model: str, quant: str, engine: Engine, backend: Backend | None
) -> None:
    costs = model_costs(shape_for(model), QuantFormat(quant), KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.PREFILL, engine=engine, quant=QuantFormat(quant), backend=backend, seq_in=4096
    )
    rates = _catalog_rates()
    speed = {item.gpu_id: estimate_for(item, costs, request).tokens_per_s for item in rates}
    # one backend (a vendor's default, or the one given) and one vendor family: the
    # curves are per backend, weight format and vendor, never per generation
    groups: dict[tuple[str, str], list] = {}  # type: ignore[type-arg]
    for item in rates:
        key = backend_for(item.vendor, backend).value if engine is Engine.LLAMA_CPP else "-"
        groups.setdefault((key, item.vendor), []).append(item)
    checked = 0
    for members in groups.values():
        for low, high in itertools.permutations(members, 2):
            if low.fp16_tflops < high.fp16_tflops and low.bandwidth_gbs < high.bandwidth_gbs:
                checked += 1
                assert speed[low.gpu_id] <= speed[high.gpu_id] * (1 + 1e-9), (
                    f"{low.gpu_id} ({low.fp16_tflops:g} TFLOPS, {low.bandwidth_gbs:g} GB/s) "
                    f"estimated faster than {high.gpu_id} ({high.fp16_tflops:g} TFLOPS, "
                    f"{high.bandwidth_gbs:g} GB/s): {speed[low.gpu_id]:,.0f} > "
                    f"{speed[high.gpu_id]:,.0f}"
                )
    assert checked > 50


def test_rtx_2080_ti_is_not_estimated_faster_than_rtx_4090_at_prefill() -> None:
    costs = model_costs(shape_for("tinyllama-1.1b"), QuantFormat.Q4_K_M, KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.PREFILL, engine=Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, seq_in=4096
    )
    by_id = {item.gpu_id: item for item in _catalog_rates()}
    old = estimate_for(by_id["rtx-2080-ti"], costs, request).tokens_per_s
    new = estimate_for(by_id["rtx-4090"], costs, request).tokens_per_s
    # measured 18,709 and 5,394 tokens/s (llama-bench, geerlingguy/ai-benchmarks #43, #46)
    assert new > 1.3 * old


def test_each_vendor_has_its_default_backend() -> None:
    assert backend_for("nvidia", None) is Backend.CUDA
    assert backend_for("amd", None) is Backend.ROCM
    assert backend_for("apple", None) is Backend.METAL
    assert backend_for("intel", None) is Backend.SYCL
    assert backend_for("other", None) is Backend.VULKAN
    assert backend_for("nvidia", Backend.VULKAN) is Backend.VULKAN


def test_a_backend_without_data_for_a_vendor_widens_the_range_and_says_so() -> None:
    by_id = {item.gpu_id: item for item in _catalog_rates()}
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.Q4_K_M, KvFormat.FP16)

    def estimate(backend: Backend | None, gpu: str):  # type: ignore[no-untyped-def]
        request = SpeedRequest(
            mode=Mode.DECODE, engine=Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, backend=backend
        )
        return estimate_for(by_id[gpu], costs, request)

    own = estimate(None, "rtx-4090")
    assert "llama.cpp-cuda on nvidia GPUs" in own.basis
    # ROCm on an NVIDIA card: no such data; the basis names what is missing
    other = estimate(Backend.ROCM, "rtx-4090")
    assert "no published llama.cpp-rocm measurement for" in other.basis
    assert other.high / other.low > own.high / own.low


def test_a_backend_is_refused_for_engines_other_than_llama_cpp() -> None:
    with pytest.raises(SpeedInputError) as caught:
        SpeedRequest(mode=Mode.DECODE, engine=Engine.VLLM, backend=Backend.CUDA).resolved()
    assert caught.value.field == "backend"


def test_training_layout_must_divide_the_gpus() -> None:
    SpeedRequest(mode=Mode.TRAIN, count=2048, tp=8, pp=16, ep=64).resolved()
    SpeedRequest(mode=Mode.TRAIN, count=100_000).resolved()
    with pytest.raises(SpeedInputError):
        SpeedRequest(mode=Mode.TRAIN, count=100_001).resolved()
    with pytest.raises(SpeedInputError) as caught:
        SpeedRequest(mode=Mode.TRAIN, count=12, tp=8).resolved()
    assert caught.value.field == "tp"
    with pytest.raises(SpeedInputError):
        SpeedRequest(mode=Mode.TRAIN, count=16, tp=4, pp=8).resolved()
