"""``speed`` and ``fit`` agree on what holds a workload: one memory model, one test."""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.memory.breakdown import (
    DType,
    Engine,
    KvDType,
    MemoryEstimate,
    PartKey,
    Workload,
    WorkloadSpec,
    estimate_memory,
)
from gpudesk.memory.fit import fit_across
from gpudesk.speed.data import Checkpointing
from gpudesk.speed.estimate import (
    Engine as SpeedEngine,
    KvFormat,
    Mode,
    SpeedRequest,
    TrainMethod,
    model_costs,
)
from gpudesk.speed.holding import memory_estimate
from gpudesk.speed.planner import (
    SpeedWorkload,
    estimates_for_entries,
    holds,
    rank_catalog,
    speed_cell_text,
    speed_cells,
)
from gpudesk.speed.shapes import shape_for
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.presets import architecture_from_shape
from gpudesk.workload.quant import QuantFormat

#: a spread of memory sizes, vendors, an SoC, a GPU without bf16, ECC GDDR, HBM
SAMPLE = (
    "rtx-4090",
    "rtx-4080",
    "rtx-4070-ti",
    "rtx-3060-12gb",
    "gtx-1080",
    "l4",
    "a100-80gb-sxm4",
    "h100-sxm5",
    "mi300x",
    "arc-b580",
    "apple-m2-ultra-76c",
    "apple-m1-max-32c",
    "dgx-spark",
)
MODELS = ("llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "gpt-oss-20b", "qwen2.5-0.5b")
KV = {"fp16": KvDType.FP16, "bf16": KvDType.BF16, "fp8": KvDType.FP8, "q8_0": KvDType.INT8}


@functools.cache
def _catalog() -> dict[str, CatalogEntry]:
    return {entry.id: entry for entry in load_catalog([], include_user=False).entries}


def _entries() -> list[CatalogEntry]:
    return [_catalog()[gpu_id] for gpu_id in SAMPLE]


def _fit_estimate(model_id: str, request: SpeedRequest) -> MemoryEstimate:
    """What ``gpudesk fit`` computes for the flags a person would give for ``request``."""
    request = request.resolved()
    assert request.seq_in is not None and request.seq_out is not None
    model = architecture_from_shape(shape_for(model_id), model_id, "test")
    q = request.quant
    dtype = {QuantFormat.BF16: DType.BF16, QuantFormat.FP32: DType.FP32}.get(q, DType.FP16)
    if request.mode is Mode.TRAIN:
        workload = Workload(request.train_method.value.replace("full", "train"))
        spec = WorkloadSpec(
            workload=workload,
            dtype=dtype if q.is_plain else DType.BF16,
            batch=request.batch,
            seq=request.seq_in,
            checkpointing=request.checkpointing is Checkpointing.FULL,
        )
    else:
        spec = WorkloadSpec(
            dtype=dtype,
            quant=q,
            # fit has no SGLang engine: SGLang's memory is vLLM's (speed.holding)
            engine=Engine.VLLM
            if request.engine is SpeedEngine.SGLANG
            else Engine(request.engine.value),
            batch=1 if request.mode is Mode.SERVE else request.batch,
            seq=request.seq_in + request.seq_out,
            kv_dtype=KV[request.kv_quant.value],
        )
    return estimate_memory(model, spec)


_INFERENCE_QUANTS = {
    SpeedEngine.LLAMA_CPP: ["q4_k_m", "q8_0", "fp16", "mxfp4"],
    SpeedEngine.VLLM: ["bf16", "fp8", "awq", "mxfp4"],
    SpeedEngine.SGLANG: ["bf16", "fp8", "awq", "mxfp4"],
    SpeedEngine.TENSORRT_LLM: ["bf16", "fp8", "int4"],
    SpeedEngine.TRANSFORMERS: ["bf16", "fp16", "nf4"],
}


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, SpeedRequest, int]:
    model = draw(st.sampled_from(MODELS))
    mode = draw(st.sampled_from(list(Mode)))
    engine = draw(st.sampled_from(list(SpeedEngine)))
    method = draw(st.sampled_from(list(TrainMethod)))
    if mode is Mode.TRAIN:
        quant = QuantFormat(draw(st.sampled_from(["bf16", "fp16"])))
    else:
        quant = QuantFormat(draw(st.sampled_from(_INFERENCE_QUANTS[engine])))
    request = SpeedRequest(
        mode=mode,
        engine=engine,
        quant=quant,
        kv_quant=KvFormat(draw(st.sampled_from(sorted(KV)))),
        batch=draw(st.integers(1, 64)),
        seq_in=draw(st.integers(1, 32_768)),
        seq_out=draw(st.integers(1, 4096)),
        train_method=method,
        checkpointing=draw(st.sampled_from(list(Checkpointing))),
    )
    return model, request, draw(st.sampled_from([1, 2, 4, 8]))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_speed_lists_a_gpu_and_count_exactly_when_fit_holds_it(
    drawn: tuple[str, SpeedRequest, int],
) -> None:
    model_id, request, max_count = drawn
    request = request.resolved()
    # as `speed` builds them: llama.cpp inference reads the model's GGUF file
    gguf = request.engine.weights_in_gguf(request.mode)
    costs = model_costs(shape_for(model_id), request.quant, request.kv_quant, gguf=gguf)
    try:
        fit_estimate = _fit_estimate(model_id, request)
    except PlanningInputError:
        with pytest.raises(PlanningInputError):
            memory_estimate(costs, request)
        assume(False)
        return
    counts = (
        (max_count,)
        if request.mode is Mode.TRAIN
        else tuple(c for c in (1, 2, 4, 8) if c <= max_count)
    )
    report = fit_across(_entries(), fit_estimate, counts)
    # Every GPU x count: speed's hold test is fit's.
    for entry in _entries():
        for count in counts:
            at = fit_across([entry], fit_estimate, (count,)).results[0]
            speed_holds = holds(entry, costs, request.model_copy(update={"count": count}))
            assert speed_holds == at.fits, (entry.id, count)
    ranked = rank_catalog(_entries(), costs, request, max_count=max_count)
    listed = {item.gpu_id: item for item in ranked.results}
    # a GPU the engine cannot run the request on is named, not ranked, whatever it holds
    refused = {gpu_id for gpu_id, _ in ranked.not_supported}
    fitting = {
        result.gpu_id: result.count for result in report.fits if result.gpu_id not in refused
    }
    # llama.cpp decode that no count holds runs on one GPU, part in host memory, as fit plans
    offloaded = {
        result.gpu_id: result.offload
        for result in report.results
        if result.count is None
        and result.offload is not None
        and request.mode is Mode.DECODE
        and result.gpu_id not in refused
    }
    assert set(listed) == set(fitting) | set(offloaded)
    for gpu_id, item in listed.items():
        if gpu_id in offloaded:
            assert item.count == 1 and item.offload == offloaded[gpu_id]
        elif request.mode is Mode.SERVE:  # the count with the most tokens/s per GPU
            entry = _catalog()[gpu_id]
            assert fit_across([entry], fit_estimate, (item.count,)).results[0].fits
        else:
            assert item.offload is None and item.count == fitting[gpu_id]
    holding = set(fitting) | set(offloaded)
    assert set(ranked.not_holding) == {entry.id for entry in _entries()} - holding - refused
    assert not refused & set(listed)


def test_an_8b_lora_at_4096_batch_8_is_not_held_by_a_24_gb_card() -> None:
    """The issue's case: fit said ~202 GB, speed ranked an RTX 4090; now both say no."""
    request = SpeedRequest(
        mode=Mode.TRAIN, train_method=TrainMethod.LORA, seq_in=4096, batch=8
    ).resolved()
    costs = model_costs(shape_for("llama-3.1-8b"), request.quant, request.kv_quant)
    estimate = memory_estimate(costs, request)
    assert estimate is not None and estimate.total_gb > 100
    rtx = _catalog()["rtx-4090"]
    assert not holds(rtx, costs, request)
    ranked = rank_catalog([rtx], costs, request, max_count=1)
    assert ranked.results == () and ranked.not_holding == ("rtx-4090",)


def test_fp16_8b_with_llama_cpp_holds_a_16_gb_card() -> None:
    """15.6 GB needed, 17.18 GB (16 GiB) on an RTX 4080: llama-bench ran it at 40.6 tok/s."""
    request = SpeedRequest(
        mode=Mode.DECODE, engine=SpeedEngine.LLAMA_CPP, quant=QuantFormat.FP16, seq_out=512
    )
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.FP16, KvFormat.FP16)
    estimate = memory_estimate(costs, request)
    assert estimate is not None
    # weights without the host-side embedding table, 1,024 tokens of KV, the compute
    # buffer for a 512-token micro-batch, 0.3 GB of CUDA context: 15,715,123,968 bytes
    assert estimate.part(PartKey.KV_CACHE).gb * 1e9 == pytest.approx(134_217_728)
    assert estimate.part(PartKey.ACTIVATIONS).gb * 1e9 == pytest.approx(4 * 512 * (4096 + 128_256))
    assert estimate.total_gb * 1e9 == pytest.approx(15_715_123_968)
    assert estimate.total_gb * 1e9 < 16 * 2**30  # 17,179,869,184 bytes
    (result,) = estimates_for_entries([_catalog()["rtx-4080"]], costs, request)
    assert 30 < result.tokens_per_s < 50


def test_70b_fp8_serving_ranks_h100_on_two() -> None:
    request = SpeedRequest(
        mode=Mode.SERVE,
        engine=SpeedEngine.TENSORRT_LLM,
        quant=QuantFormat.FP8,
        seq_in=1000,
        seq_out=1000,
    )
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat.FP8, KvFormat.FP16)
    entries = [_catalog()[gpu_id] for gpu_id in ("h100-sxm5", "a100-80gb-sxm4", "rtx-4000-ada")]
    ranked = rank_catalog(entries, costs, request, max_count=2)
    listed = {item.gpu_id: item for item in ranked.results}
    assert listed["h100-sxm5"].count == 2 and listed["h100-sxm5"].tokens_per_s > 1000
    # TensorRT-LLM's FP8 needs compute capability 8.9: the A100 is named, never ranked
    assert "8.9" in dict(ranked.not_supported)["a100-80gb-sxm4"]
    assert ranked.not_holding == ("rtx-4000-ada",)  # 2 x 20 GB cannot hold 70 GB of weights


def test_no_soc_is_ranked_above_one() -> None:
    request = SpeedRequest(mode=Mode.DECODE, engine=SpeedEngine.LLAMA_CPP, quant=QuantFormat.Q4_K_M)
    costs = model_costs(shape_for("llama-3.1-70b"), QuantFormat.Q4_K_M, KvFormat.FP16)
    socs = [entry for entry in _catalog().values() if entry.kind.value == "soc"]
    ranked = rank_catalog(socs, costs, request, max_count=8)
    assert ranked.results
    assert all(item.count == 1 for item in ranked.results)
    assert "apple-m1-pro-16c" in ranked.not_holding  # 16 GB: would need four Macs


def test_compares_tokens_row_says_when_part_is_on_the_host() -> None:
    # A 12 GB card holds the GGUF whole; asked for one with --n-cpu-moe 2:
    request = SpeedRequest(
        mode=Mode.DECODE, engine=SpeedEngine.LLAMA_CPP, quant=QuantFormat.MXFP4, cpu_moe=2
    )
    costs = model_costs(shape_for("gpt-oss-20b"), QuantFormat.MXFP4, KvFormat.FP16, gguf=True)
    workload = SpeedWorkload(model_name="gpt-oss-20b", costs=costs, request=request.resolved())
    rtx, big = speed_cells(workload, [_catalog()["rtx-4070-ti"], _catalog()["rtx-4090"]])
    assert rtx is not None and rtx.offload is not None
    assert speed_cell_text(rtx).endswith("(--n-cpu-moe 2, part on the host)")
    assert big is not None and big.offload is not None and big.offload.cpu_moe == 2


def _llama_cpp_decode(model: str, quant: QuantFormat, gpu: str):  # type: ignore[no-untyped-def]
    request = SpeedRequest(mode=Mode.DECODE, engine=SpeedEngine.LLAMA_CPP, quant=quant)
    costs = model_costs(shape_for(model), quant, KvFormat.FP16, gguf=True)
    (found,) = estimates_for_entries([_catalog()[gpu]], costs, request)
    return found


def test_a_whole_model_on_one_gpu_says_so_and_what_a_desktop_would_offload() -> None:
    # gpt-oss-20b's GGUF (11.27 GiB) on a 12 GiB RTX 4070 Ti: whole, with little to spare
    tight = _llama_cpp_decode("gpt-oss-20b", QuantFormat.MXFP4, "rtx-4070-ti")
    assert tight.offload is None
    assert "whole model on the GPU, no layer in host memory" in tight.basis
    spare = tight.usable_per_gpu_gb - tight.memory_per_gpu_gb  # type: ignore[operator]
    assert 0 < spare < 1.0
    # a desktop's memory in use (ollama #11388) would push one layer's experts out
    assert "with a desktop on this GPU" in tight.basis
    assert "--n-cpu-moe 1:" in tight.basis
    # a 24 GB card has room for a desktop too
    roomy = _llama_cpp_decode("gpt-oss-20b", QuantFormat.MXFP4, "rtx-4090")
    assert "whole model on the GPU" in roomy.basis
    assert "with a desktop" not in roomy.basis


def test_only_llama_cpp_on_one_gpu_states_where_the_model_is() -> None:
    request = SpeedRequest(mode=Mode.DECODE, engine=SpeedEngine.VLLM, quant=QuantFormat.BF16)
    costs = model_costs(shape_for("llama-3.1-8b"), QuantFormat.BF16, KvFormat.FP16)
    (found,) = estimates_for_entries([_catalog()["rtx-4090"]], costs, request)
    assert "whole model on the GPU" not in found.basis
    offloaded = _llama_cpp_decode("llama-3.1-70b", QuantFormat.Q4_K_M, "rtx-4090")
    assert offloaded.offload is not None
    assert "whole model on the GPU" not in offloaded.basis
