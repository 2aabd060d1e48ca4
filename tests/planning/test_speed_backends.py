"""llama.cpp backends and the ordering of GPUs at prefill, over the whole catalog."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from gpudesk.catalog.loader import load_catalog
from gpudesk.speed.estimate import (
    Backend,
    Engine,
    KvFormat,
    Mode,
    SpeedInputError,
    SpeedRequest,
    _share_words,
    backend_for,
    int8_mmq,
    kernel_precision,
    model_costs,
    share_cap,
)
from gpudesk.speed.hardware import DeviceRates, Precision, rates_for
from gpudesk.speed.planner import estimate_for, missing_figures
from gpudesk.speed.shapes import shape_for
from gpudesk.workload.quant import QuantFormat


def _catalog_rates() -> list[DeviceRates]:
    # announced parts whose vendor published no figures yet are never estimated
    return [
        rates_for(entry)
        for entry in load_catalog([], include_user=False).entries
        if missing_figures(entry) is None
    ]


def _order_violations(
    rates: list[DeviceRates],
    speed: dict[str, float],
    request: SpeedRequest,
    backend: Backend | None,
) -> tuple[int, list[str]]:
    """(pairs checked, pairs where the GPU with the lower peak and lower bandwidth is
    estimated faster), within one backend and vendor family. The peak is the dense rate
    the engine's kernels run at for the format (:func:`kernel_precision`: llama.cpp's CUDA
    F16 matmuls accumulate in FP16, twice the stored FP32-accumulate figure on GeForce,
    the same elsewhere; every other case the stored 16-bit figure), derived from catalog
    figures by one rule for every GPU: a per-generation factor still breaks the order."""
    groups: dict[tuple[str, str], list[DeviceRates]] = {}
    for item in rates:
        key = backend_for(item.vendor, backend).value if request.engine is Engine.LLAMA_CPP else "-"
        groups.setdefault((key, item.vendor), []).append(item)
    checked = 0
    bad: list[str] = []
    for members in groups.values():
        for low, high in itertools.permutations(members, 2):
            low_peak = low.peak_tflops(kernel_precision(low, request))
            high_peak = high.peak_tflops(kernel_precision(high, request))
            if low_peak < high_peak and low.bandwidth_gbs < high.bandwidth_gbs:
                checked += 1
                if speed[low.gpu_id] > speed[high.gpu_id] * (1 + 1e-9):
                    bad.append(
                        f"{low.gpu_id} ({low_peak:g} TFLOPS, {low.bandwidth_gbs:g} GB/s) "
                        f"estimated faster than {high.gpu_id} ({high_peak:g} TFLOPS, "
                        f"{high.bandwidth_gbs:g} GB/s): {speed[low.gpu_id]:,.0f} > "
                        f"{speed[high.gpu_id]:,.0f}"
                    )
    return checked, bad


def _prefill_speeds(
    model: str, quant: str, engine: Engine, backend: Backend | None
) -> tuple[list[DeviceRates], dict[str, float], SpeedRequest]:
    costs = model_costs(shape_for(model), QuantFormat(quant), KvFormat.FP16)
    request = SpeedRequest(
        mode=Mode.PREFILL, engine=engine, quant=QuantFormat(quant), backend=backend, seq_in=4096
    )
    rates = _catalog_rates()
    speed = {item.gpu_id: estimate_for(item, costs, request).tokens_per_s for item in rates}
    return rates, speed, request


@pytest.mark.parametrize(
    ("model", "quant", "engine", "backend"),
    [
        ("llama-3.1-8b", "q4_k_m", Engine.LLAMA_CPP, Backend.CUDA),
        ("llama-3.1-8b", "fp16", Engine.LLAMA_CPP, Backend.VULKAN),
        ("llama-3.1-8b", "fp16", Engine.LLAMA_CPP, None),
        ("llama-3.1-8b", "bf16", Engine.LLAMA_CPP, Backend.CUDA),
        ("tinyllama-1.1b", "q4_k_m", Engine.LLAMA_CPP, Backend.VULKAN),
        ("llama-3.1-8b", "q4_k_m", Engine.LLAMA_CPP, None),
        ("llama-3.1-8b", "bf16", Engine.VLLM, None),
    ],
)
def test_no_gpu_with_a_lower_peak_and_lower_bandwidth_prefills_faster(
    model: str, quant: str, engine: Engine, backend: Backend | None
) -> None:
    # one backend (a vendor's default, or the one given) and one vendor family: the
    # curves are per backend, weight format and vendor, never per generation
    rates, speed, request = _prefill_speeds(model, quant, engine, backend)
    checked, bad = _order_violations(rates, speed, request, backend)
    assert checked > 50
    assert not bad, bad[:5]


def test_the_order_check_catches_a_per_generation_factor() -> None:
    # The check is not vacuous: lifting one generation by 1.5x (what a per-generation
    # efficiency did, an RTX 2080 Ti outrunning an RTX 4090) breaks it.
    rates, speed, request = _prefill_speeds("llama-3.1-8b", "fp16", Engine.LLAMA_CPP, None)
    family = {item.gpu_id: item.family for item in rates}
    fudged = {gpu: value * (1.5 if family[gpu] == "ada" else 1.0) for gpu, value in speed.items()}
    _, bad = _order_violations(rates, fudged, request, None)
    assert bad


def test_llama_cpp_cuda_f16_runs_at_the_fp16_accumulate_rate() -> None:
    by_id = {item.gpu_id: item for item in _catalog_rates()}
    f16 = SpeedRequest(mode=Mode.PREFILL, engine=Engine.LLAMA_CPP, quant=QuantFormat.FP16)
    # NVIDIA Ada whitepaper appendix: RTX 4090 330.3 dense with FP16 accumulate, 165.2 with
    # FP32 accumulate (stored); RTX 6000 Ada and A100 run both at one rate
    assert by_id["rtx-4090"].peak_tflops(kernel_precision(by_id["rtx-4090"], f16)) == (
        pytest.approx(330.3, rel=1e-3)
    )
    for gpu in ("rtx-6000-ada", "a100-80gb-pcie", "h100-pcie"):
        assert by_id[gpu].peak_tflops(kernel_precision(by_id[gpu], f16)) == pytest.approx(
            by_id[gpu].fp16_tflops, rel=2e-3
        )
    # BF16 goes through cuBLAS with FP32 accumulation; Vulkan and vLLM are not cuBLAS F16
    for request in (
        f16.model_copy(update={"quant": QuantFormat.BF16}),
        f16.model_copy(update={"backend": Backend.VULKAN}),
        f16.model_copy(update={"engine": Engine.VLLM}),
        f16.model_copy(update={"quant": QuantFormat.AWQ}),
    ):
        assert kernel_precision(by_id["rtx-4090"], request) is Precision.FP16
    # GGUF prompts are shares of the same FP16-accumulate peak (cuBLAS FP16 after
    # dequantising, or int8 MMQ beyond it: test_llama_cpp_mmq_runs_on_int8_tensor_cores)
    q4 = f16.model_copy(update={"quant": QuantFormat.Q4_K_M})
    assert kernel_precision(by_id["rtx-4090"], q4) is Precision.FP16_ACC16
    assert (
        kernel_precision(by_id["rtx-4090"], q4.model_copy(update={"backend": Backend.VULKAN}))
        is Precision.FP16
    )


def test_llama_cpp_mmq_runs_on_int8_tensor_cores_from_turing_on() -> None:
    # ggml_cuda_should_use_mmq (ggml-cuda/mmq.cu at 027ef876): MMQ on int8 tensor cores
    # from Turing; Volta dequantises a prompt-sized batch into cuBLAS FP16; builds before
    # PR #8075 (June 2024) did so everywhere
    by_id = {item.gpu_id: item for item in _catalog_rates()}
    q4 = SpeedRequest(mode=Mode.PREFILL, engine=Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M)
    for gpu in ("rtx-2080-ti", "t4", "rtx-3090", "a100-80gb-pcie", "rtx-4090", "l40s", "h100-pcie"):
        assert int8_mmq(by_id[gpu], q4), gpu
        # the int8 peak is twice the FP16-accumulate one on GeForce and elsewhere alike
        assert share_cap(by_id[gpu], q4) == pytest.approx(2.0, rel=0.02), gpu
        assert share_cap(by_id[gpu], q4, older_build=True) == 1.0
        assert not int8_mmq(by_id[gpu], q4, older_build=True)
    for gpu in ("v100-pcie-16gb", "v100-sxm2-32gb"):
        assert not int8_mmq(by_id[gpu], q4), gpu
        assert share_cap(by_id[gpu], q4) == 1.0
    # F16 weights, other backends, other vendors and other engines: no int8 MMQ
    rtx = by_id["rtx-4090"]
    assert not int8_mmq(rtx, q4.model_copy(update={"quant": QuantFormat.FP16}))
    assert not int8_mmq(rtx, q4.model_copy(update={"backend": Backend.VULKAN}))
    assert not int8_mmq(by_id["rx-7900-xtx"], q4)
    assert (
        share_cap(rtx, q4.model_copy(update={"engine": Engine.VLLM, "quant": QuantFormat.BF16}))
        == 1.0
    )


def test_mmq_share_above_the_fp16_peak_is_also_said_of_the_int8_peak() -> None:
    rtx = {item.gpu_id: item for item in _catalog_rates()}["rtx-4090"]
    words = _share_words(1.5, rtx, rtx.fp16_acc16_tflops, Precision.FP16_ACC16)
    assert words == (
        "150% of 330 TFLOPS dense FP16 with FP16 accumulation (75% of the 661 TOPS dense int8 peak)"
    )
    assert "int8" not in _share_words(0.5, rtx, rtx.fp16_acc16_tflops, Precision.FP16_ACC16)


def test_rtx_4090_prefills_f16_faster_than_a100_pcie_with_llama_cpp() -> None:
    # llama-bench pp512, Llama 3 8B F16 (measurements.toml): RTX 4090 9,382 tokens/s,
    # A100 PCIe 80GB 7,741: GeForce's FP16-accumulate rate, not the stored 165 TFLOPS
    by_id = {item.gpu_id: item for item in _catalog_rates()}
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.FP16, KvFormat.FP16, gguf=True)
    request = SpeedRequest(
        mode=Mode.PREFILL, engine=Engine.LLAMA_CPP, quant=QuantFormat.FP16, seq_in=512
    )
    geforce = estimate_for(by_id["rtx-4090"], costs, request).tokens_per_s
    a100 = estimate_for(by_id["a100-80gb-pcie"], costs, request).tokens_per_s
    assert geforce > a100


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


def test_an_older_build_prompt_row_is_held_to_cublas_fp16_and_a_current_one_is_not() -> None:
    # The 2024 builds dequantised GGUF prompts into cuBLAS FP16 (at most its peak); a
    # current build's int8 MMQ may pass it, so with a share above 1 the older row took
    # longer, and on a V100 (no int8 MMA) the two builds run the same path.
    from gpudesk.speed.fitting import START, Row, fresh_rows, older_factor, predict, replace

    rows = fresh_rows()

    def row_of(gpu: str, quant: str, source: str):  # type: ignore[no-untyped-def]
        (found,) = [
            row
            for row in rows
            if row.measurement.workload.value == "prefill"
            and row.rates.gpu_id == gpu
            and row.measurement.quant == quant
            and source in row.source
            and row.measurement.seq_in == 512
            and row.measurement.model in ("llama-3.1-8b", "llama-2-7b")
        ]
        return found

    def with_flash_attention(row: Row) -> Row:
        # the build's kernels alone: these llama-bench runs also lacked FlashAttention
        measured = row.measurement.model_copy(update={"flash_attention": True})
        return dataclasses.replace(row, measurement=measured)

    geforce = with_flash_attention(row_of("rtx-4090", "q4_0", "pull/4766"))
    volta = with_flash_attention(row_of("v100-pcie-16gb", "q8_0", "pull/4280"))
    assert geforce.measurement.older_build and volta.measurement.older_build
    eager = replace(START, compute=1.6, gemm_half=1.0)
    assert older_factor(geforce, eager) > 1.3
    assert older_factor(volta, eager) == pytest.approx(1.0)
    # below the FP16-accumulate peak both builds are held to the same share
    modest = replace(START, compute=0.5)
    assert older_factor(geforce, modest) == pytest.approx(1.0)
    assert predict(geforce, eager) == pytest.approx(predict(geforce, replace(eager, compute=1.0)))


def test_an_rtx_5090_runs_fp32_accumulate_at_the_rate_measured_on_it() -> None:
    by_id = {item.gpu_id: item for item in _catalog_rates()}
    bf16 = SpeedRequest(mode=Mode.PREFILL, engine=Engine.VLLM, quant=QuantFormat.BF16)
    # whitepaper 209.5 (half of 419); mma.sync measured 370.6 (main-horse): vLLM's bf16
    # GEMMs use the measured rate, never above the FP16-accumulate one
    rtx5090 = by_id["rtx-5090"]
    assert rtx5090.peak_tflops(kernel_precision(rtx5090, bf16)) == pytest.approx(370.6)
    assert rtx5090.fp16_tflops <= rtx5090.fp16_acc16_tflops
    assert "measured" in rtx5090.fp16_kind
    # a GeForce card without such a measurement keeps the whitepaper's half rate
    assert by_id["rtx-4090"].peak_tflops(kernel_precision(by_id["rtx-4090"], bf16)) == (
        pytest.approx(165.2, rel=1e-3)
    )
