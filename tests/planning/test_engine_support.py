"""The engine-support table (issue 41 item 5): only what a device can run is ranked.

Every decision names the cited row that made it; a refusal is a sentence a user can act
on; docs/speed.md's TensorRT-LLM FP8 example keeps only NVIDIA compute capability 8.9+.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.speed import support
from gpudesk.speed.estimate import Backend, Engine, KvFormat, Mode
from gpudesk.speed.support import (
    Family,
    SupportTableError,
    device_of,
    engine_support,
    parse_rows,
    support_rows,
)
from gpudesk.workload.quant import QuantFormat

ROOT = Path(__file__).resolve().parents[2]
COMMON_QUANTS = (
    QuantFormat.BF16,
    QuantFormat.FP16,
    QuantFormat.FP8,
    QuantFormat.INT8,
    QuantFormat.AWQ,
    QuantFormat.MXFP4,
    QuantFormat.Q4_K_M,
    QuantFormat.Q8_0,
)
COMMON_KV = (KvFormat.FP16, KvFormat.FP8, KvFormat.Q8_0)


@functools.cache
def catalog() -> dict[str, CatalogEntry]:
    return {entry.id: entry for entry in load_catalog(include_user=False).entries}


def entry(gpu_id: str) -> CatalogEntry:
    return catalog()[gpu_id]


def capability(item: CatalogEntry) -> tuple[int, int] | None:
    stated = item.compute_capability
    if stated is None:
        return None
    major, minor = stated.split(".")
    return int(major), int(minor)


def check_shape(decision: support.Support) -> None:
    """The contract: a reason exactly when refused, a path exactly when supported."""
    assert decision.source.strip()
    if decision.supported:
        assert decision.reason is None
        assert decision.weight_path
    else:
        assert decision.weight_path is None
        assert decision.reason
        assert decision.reason.strip() == decision.reason


# -- the whole catalog -----------------------------------------------------------------------


def test_every_catalog_entry_engine_and_common_format_gets_a_cited_decision() -> None:
    decisions = [
        engine_support(item, engine, quant=quant, kv=kv)
        for item in catalog().values()
        for engine in Engine
        for quant in COMMON_QUANTS
        for kv in COMMON_KV
    ]
    for decision in decisions:
        check_shape(decision)
    # non-vacuity: the whole catalog, both outcomes, and every engine's rows
    assert len(decisions) == len(catalog()) * len(Engine) * len(COMMON_QUANTS) * len(COMMON_KV)
    assert len(catalog()) >= 100
    assert sum(d.supported for d in decisions) > 1000
    assert sum(not d.supported for d in decisions) > 1000
    cited_engines = {d.source.split(":", 1)[0] for d in decisions}
    assert {"tensorrt-llm", "vllm", "llama.cpp", "transformers"} <= cited_engines


def test_every_entry_is_placed_in_a_family() -> None:
    unplaced = [
        gpu_id for gpu_id, item in catalog().items() if device_of(item).family is Family.OTHER
    ]
    assert unplaced == []
    nvidia_without_capability = [
        gpu_id
        for gpu_id, item in catalog().items()
        if device_of(item).family is Family.NVIDIA
        and device_of(item).capability is None
        # an announced part's compute capability is not published before it ships
        and str(getattr(item, "status", "shipping")) != "announced"
    ]
    assert nvidia_without_capability == []


# -- the cases -----------------------------------------------------------------------


def test_readme_tensorrt_llm_fp8_example_ranks_only_nvidia_89_and_later() -> None:
    """`speed --model llama-3.1-70b --quant fp8 --kv-quant fp8 --engine tensorrt-llm`."""
    kept, refused = [], []
    for gpu_id, item in catalog().items():
        decision = engine_support(
            item, Engine.TENSORRT_LLM, quant=QuantFormat.FP8, kv=KvFormat.FP8, mode=Mode.SERVE
        )
        (kept if decision.supported else refused).append((gpu_id, item, decision))
    for gpu_id, item, _ in kept:
        assert item.vendor.casefold() == "nvidia", gpu_id
        stated = capability(item)
        assert stated is None or stated >= (8, 9), gpu_id
    kept_ids = {gpu_id for gpu_id, _, _ in kept}
    assert {"h100-sxm5", "h200-sxm", "l40s", "rtx-4090", "b200", "rtx-5090"} <= kept_ids
    refused_ids = {gpu_id: decision.reason or "" for gpu_id, _, decision in refused}
    for gpu_id in ("mi355x", "mi350x", "gaudi-3", "data-center-gpu-max-1550", "apple-m2-max-38c"):
        assert "NVIDIA GPUs only" in refused_ids[gpu_id]
    for gpu_id in ("v100-sxm2-32gb", "t4"):
        assert "support matrix" in refused_ids[gpu_id]
    assert "8.9" in refused_ids["a100-80gb-sxm4"]
    assert len(kept) >= 40 and len(refused) >= 60


@pytest.mark.parametrize("engine", [Engine.VLLM, Engine.TRANSFORMERS, Engine.LLAMA_CPP])
def test_bf16_on_a_v100_says_try_fp16(engine: Engine) -> None:
    decision = engine_support(
        entry("v100-sxm2-32gb"), engine, quant=QuantFormat.BF16, kv=KvFormat.FP16
    )
    assert not decision.supported
    assert decision.reason is not None
    assert "8.0" in decision.reason and "--quant fp16" in decision.reason
    fp16 = engine_support(entry("v100-sxm2-32gb"), engine, quant=QuantFormat.FP16, kv=KvFormat.FP16)
    assert fp16.supported


def test_a_bf16_kv_cache_on_a_t4_says_try_fp16() -> None:
    decision = engine_support(entry("t4"), Engine.VLLM, quant=QuantFormat.FP16, kv=KvFormat.BF16)
    assert not decision.supported
    assert decision.reason is not None and "--kv-quant fp16" in decision.reason


def test_mi300x_runs_fp8_in_vllm_natively() -> None:
    decision = engine_support(entry("mi300x"), Engine.VLLM, quant=QuantFormat.FP8, kv=KvFormat.FP8)
    assert decision.supported
    assert decision.weight_path == "FP8 matrix cores"
    assert "rocm.py" in decision.source or "FP8 (W8A8)" in decision.source


def test_a100_runs_fp8_in_vllm_through_marlin() -> None:
    decision = engine_support(
        entry("a100-80gb-sxm4"), Engine.VLLM, quant=QuantFormat.FP8, kv=KvFormat.FP16
    )
    assert decision.supported
    assert decision.weight_path is not None and "Marlin" in decision.weight_path
    assert "16-bit math" in decision.weight_path
    h100 = engine_support(entry("h100-sxm5"), Engine.VLLM, quant=QuantFormat.FP8, kv=KvFormat.FP16)
    assert h100.weight_path == "FP8 tensor cores"


def test_turing_and_volta_are_not_ranked_for_fp8_in_vllm() -> None:
    for gpu_id in ("t4", "v100-sxm2-32gb"):
        decision = engine_support(
            entry(gpu_id), Engine.VLLM, quant=QuantFormat.FP8, kv=KvFormat.FP16
        )
        assert not decision.supported
        assert decision.reason is not None and "Marlin from 8.0" in decision.reason


def test_sglang_runs_from_turing_and_on_instinct_mi300_and_mi350_only() -> None:
    """SGLang's quickstart asks for sm75+; its ROCm kernels build for gfx942 and gfx950."""
    refused = {
        "v100-sxm2-32gb": "compute capability 7.5",
        "gtx-1080": "compute capability 7.5",
        "mi210": "gfx942",
        "rx-7900-xtx": "gfx942",
        "apple-m4-max-40c": "--engine llama.cpp",
        "data-center-gpu-max-1550": "--engine vllm",
        "gaudi-3": "--engine vllm",
    }
    for gpu_id, words in refused.items():
        decision = engine_support(
            entry(gpu_id), Engine.SGLANG, quant=QuantFormat.FP16, kv=KvFormat.FP16
        )
        check_shape(decision)
        assert not decision.supported, gpu_id
        assert decision.reason is not None and words in decision.reason, decision.reason
        assert decision.source.startswith("sglang: ")
    for gpu_id in ("t4", "a100-80gb-sxm4", "h100-sxm5", "b200", "mi300x", "mi355x"):
        decision = engine_support(
            entry(gpu_id), Engine.SGLANG, quant=QuantFormat.FP16, kv=KvFormat.FP16
        )
        assert decision.supported, gpu_id


def test_sglang_fp8_paths_follow_its_kernels() -> None:
    h100 = engine_support(entry("h100-sxm5"), Engine.SGLANG, quant=QuantFormat.FP8, kv=KvFormat.FP8)
    assert h100.weight_path == "FP8 tensor cores"
    a100 = engine_support(
        entry("a100-80gb-sxm4"), Engine.SGLANG, quant=QuantFormat.FP8, kv=KvFormat.FP16
    )
    assert a100.weight_path is not None and "Marlin" in a100.weight_path
    t4 = engine_support(entry("t4"), Engine.SGLANG, quant=QuantFormat.FP8, kv=KvFormat.FP16)
    assert not t4.supported and t4.reason is not None and "Marlin from 8.0" in t4.reason
    mi300 = engine_support(entry("mi300x"), Engine.SGLANG, quant=QuantFormat.FP8, kv=KvFormat.FP8)
    assert mi300.supported and mi300.weight_path is not None and "FP8" in mi300.weight_path
    gguf = engine_support(
        entry("h100-sxm5"), Engine.SGLANG, quant=QuantFormat.Q4_K_M, kv=KvFormat.FP16
    )
    assert not gguf.supported and gguf.reason is not None and "llama.cpp" in gguf.reason
    t4_bf16 = engine_support(entry("t4"), Engine.SGLANG, quant=QuantFormat.BF16, kv=KvFormat.FP16)
    assert not t4_bf16.supported and t4_bf16.reason is not None and "--quant fp16" in t4_bf16.reason


def test_apple_chips_are_not_ranked_for_vllm_and_are_for_llama_cpp() -> None:
    apple = [item for item in catalog().values() if item.vendor.casefold() == "apple"]
    assert len(apple) >= 20
    for item in apple:
        decision = engine_support(item, Engine.VLLM, quant=QuantFormat.FP16, kv=KvFormat.FP16)
        assert not decision.supported
        assert decision.reason is not None and "--engine llama.cpp" in decision.reason
        metal = engine_support(item, Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.FP16)
        assert metal.supported and metal.weight_path is not None and "Metal" in metal.weight_path


def test_llama_cpp_runs_q4_k_m_on_every_gpu_and_soc() -> None:
    checked = 0
    for gpu_id, item in catalog().items():
        if device_of(item).family not in (
            Family.NVIDIA,
            Family.AMD,
            Family.APPLE,
            Family.INTEL_GPU,
        ):
            continue
        decision = engine_support(
            item, Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.FP16
        )
        assert decision.supported, (gpu_id, decision.reason)
        checked += 1
    assert checked >= 100
    intel = engine_support(
        entry("arc-b580"), Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.FP16
    )
    assert intel.supported and intel.weight_path is not None and "SYCL" in intel.weight_path


def test_a_q8_0_kv_cache_is_ranked_where_flash_attention_takes_it() -> None:
    for gpu_id in ("rtx-4090", "mi300x", "apple-m4-max-40c", "v100-sxm2-32gb"):
        decision = engine_support(
            entry(gpu_id), Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.Q8_0
        )
        assert decision.supported, gpu_id
    # SYCL's quantised-cache flash attention is not documented: not ranked (support.toml says so)
    sycl = engine_support(
        entry("arc-b580"), Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.Q8_0
    )
    assert not sycl.supported
    assert sycl.reason is not None and "--kv-quant fp16" in sycl.reason
    assert support_rows()["llama-cpp-kv"].conservative is not None


def test_llama_cpp_mmq_runs_on_int8_tensor_cores_from_turing() -> None:
    ada = engine_support(
        entry("rtx-4090"), Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.FP16
    )
    assert ada.weight_path == "int8 tensor cores (llama.cpp MMQ)"
    pascal = engine_support(
        entry("gtx-1080"), Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.FP16
    )
    assert pascal.supported and pascal.weight_path is not None and "dp4a" in pascal.weight_path


def test_gaudi_has_no_llama_cpp_backend_but_runs_vllm() -> None:
    gaudi = entry("gaudi-3")
    refused = engine_support(gaudi, Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.FP16)
    assert not refused.supported and refused.reason is not None
    assert "no backend" in refused.reason
    sycl = engine_support(
        gaudi, Engine.LLAMA_CPP, quant=QuantFormat.Q4_K_M, kv=KvFormat.FP16, backend=Backend.SYCL
    )
    assert not sycl.supported
    assert engine_support(gaudi, Engine.VLLM, quant=QuantFormat.BF16, kv=KvFormat.FP16).supported
    fp8 = engine_support(gaudi, Engine.VLLM, quant=QuantFormat.FP8, kv=KvFormat.FP16)
    assert fp8.supported and "INC" in fp8.source


def test_llama_cpp_backend_must_target_the_vendor() -> None:
    cuda_on_amd = engine_support(
        entry("mi300x"),
        Engine.LLAMA_CPP,
        quant=QuantFormat.Q4_K_M,
        kv=KvFormat.FP16,
        backend=Backend.CUDA,
    )
    assert not cuda_on_amd.supported
    assert cuda_on_amd.reason is not None and "--backend rocm" in cuda_on_amd.reason
    vulkan_on_amd = engine_support(
        entry("rx-7900-xtx"),
        Engine.LLAMA_CPP,
        quant=QuantFormat.Q4_K_M,
        kv=KvFormat.FP16,
        backend=Backend.VULKAN,
    )
    assert (
        vulkan_on_amd.supported and vulkan_on_amd.weight_path == "Vulkan quantised matmul shaders"
    )
    on_cpu = engine_support(
        entry("gaudi-3"),
        Engine.LLAMA_CPP,
        quant=QuantFormat.Q8_0,
        kv=KvFormat.Q8_0,
        backend=Backend.CPU,
    )
    assert on_cpu.supported


def test_formats_an_engine_does_not_have_are_refused_with_an_alternative() -> None:
    h100 = entry("h100-sxm5")
    cases = [
        (Engine.LLAMA_CPP, QuantFormat.FP8, KvFormat.FP16, "--quant q8_0"),
        (Engine.LLAMA_CPP, QuantFormat.AWQ, KvFormat.FP16, "--quant q4_k_m"),
        (Engine.LLAMA_CPP, QuantFormat.Q4_K_M, KvFormat.FP8, "--kv-quant q8_0"),
        (Engine.VLLM, QuantFormat.Q4_K_M, KvFormat.FP16, "--engine llama.cpp"),
        (Engine.VLLM, QuantFormat.FP16, KvFormat.Q8_0, "--kv-quant fp8"),
        (Engine.TENSORRT_LLM, QuantFormat.NF4, KvFormat.FP16, "--quant awq"),
        (Engine.TRANSFORMERS, QuantFormat.Q8_0, KvFormat.FP16, "--engine llama.cpp"),
        (Engine.TRANSFORMERS, QuantFormat.BF16, KvFormat.FP8, "--kv-quant fp16"),
    ]
    for engine, quant, kv, hint in cases:
        decision = engine_support(h100, engine, quant=quant, kv=kv)
        assert not decision.supported, (engine, quant, kv)
        assert decision.reason is not None and hint in decision.reason, decision.reason


def test_mxfp4_paths_follow_the_kernels() -> None:
    def path(gpu_id: str, engine: Engine) -> str | None:
        return engine_support(
            entry(gpu_id), engine, quant=QuantFormat.MXFP4, kv=KvFormat.FP16
        ).weight_path

    assert path("b200", Engine.VLLM) == "MXFP4 via FlashInfer (Blackwell)"
    assert path("h100-sxm5", Engine.VLLM) == "MXFP4 via Triton kernels (16-bit math)"
    assert path("a100-80gb-sxm4", Engine.VLLM) == "MXFP4 via Marlin (16-bit math)"
    assert path("mi355x", Engine.VLLM) == "MXFP4 matrix cores (CDNA 4)"
    assert path("h200-sxm", Engine.TENSORRT_LLM) is not None
    assert path("l40s", Engine.TENSORRT_LLM) is None
    assert path("t4", Engine.VLLM) is None


def test_training_ignores_the_serving_engine() -> None:
    h100 = entry("h100-sxm5")
    for engine in Engine:
        decision = engine_support(
            h100, engine, quant=QuantFormat.BF16, kv=KvFormat.FP16, mode=Mode.TRAIN
        )
        assert (
            decision.supported and "PyTorch" in decision.source
        ) or "torch" in decision.source.lower()
    gaudi = engine_support(
        entry("gaudi-3"),
        Engine.TENSORRT_LLM,
        quant=QuantFormat.BF16,
        kv=KvFormat.FP16,
        mode=Mode.TRAIN,
    )
    assert gaudi.supported
    v100 = engine_support(
        entry("v100-sxm2-32gb"),
        Engine.VLLM,
        quant=QuantFormat.BF16,
        kv=KvFormat.FP16,
        mode=Mode.TRAIN,
    )
    assert not v100.supported and v100.reason is not None and "--quant fp16" in v100.reason


# -- devices the catalog is gaining (kind, google/aws/huawei/qualcomm) ----------------------


def variant(base: str, **changes: object) -> CatalogEntry:
    """A bundled entry with other identity fields (no validation: the function reads attributes)."""
    return entry(base).model_copy(update=changes)


def test_tpu_and_trainium_run_vllm_only() -> None:
    tpu = variant(
        "gaudi-3", vendor="Google", name="TPU v6e (Trillium)", id="tpu-v6e", architecture="TPU v6e"
    )
    trainium = variant(
        "gaudi-3", vendor="AWS", name="AWS Trainium2", id="trainium2", architecture="Trainium2"
    )
    for device in (tpu, trainium):
        assert engine_support(
            device, Engine.VLLM, quant=QuantFormat.BF16, kv=KvFormat.FP16
        ).supported
        for engine in (Engine.LLAMA_CPP, Engine.TENSORRT_LLM):
            refused = engine_support(device, engine, quant=QuantFormat.BF16, kv=KvFormat.FP16)
            assert not refused.supported and refused.reason
    # Ironwood under Google's newer name: vLLM's tpu-inference lists v7x (its PR #1377)
    ironwood = variant(
        "gaudi-3", vendor="Google", name="TPU7x (Ironwood)", id="tpu7x", architecture="Ironwood"
    )
    assert engine_support(ironwood, Engine.VLLM, quant=QuantFormat.BF16, kv=KvFormat.FP16).supported
    later = variant(
        "gaudi-3", vendor="Google", name="TPU v9 (made up)", id="tpu-v9", architecture="TPU v9"
    )
    refused = engine_support(later, Engine.VLLM, quant=QuantFormat.BF16, kv=KvFormat.FP16)
    assert not refused.supported and refused.reason is not None and "v7x" in refused.reason


def test_ascend_runs_vllm_ascend_and_llama_cpp_cann() -> None:
    ascend = variant(
        "gaudi-3", vendor="Huawei", name="Ascend 910B", id="ascend-910b", architecture="Da Vinci"
    )
    assert engine_support(ascend, Engine.VLLM, quant=QuantFormat.BF16, kv=KvFormat.FP16).supported
    cann = engine_support(ascend, Engine.LLAMA_CPP, quant=QuantFormat.Q8_0, kv=KvFormat.FP16)
    assert cann.supported and cann.weight_path is not None and "CANN" in cann.weight_path


def test_an_unknown_vendor_is_refused_not_guessed() -> None:
    odd = variant("rtx-4090", vendor="Acme", name="Acme X1", id="acme-x1")
    for engine in Engine:
        decision = engine_support(odd, engine, quant=QuantFormat.FP16, kv=KvFormat.FP16)
        check_shape(decision)
        assert not decision.supported


# -- property: any entry, any combination ----------------------------------------------------


_BASES = ("rtx-4090", "v100-sxm2-32gb", "mi300x", "apple-m1-max-24c", "gaudi-3", "arc-b580", "b100")
_VENDORS = (
    "NVIDIA",
    "nvidia ",
    "AMD",
    "Intel",
    "Apple",
    "Google",
    "AWS",
    "Huawei",
    "Qualcomm",
    "Acme",
    "",
)
_ARCHITECTURES = (
    "Ampere",
    "Ada Lovelace",
    "Hopper",
    "Blackwell",
    "Blackwell Ultra",
    "Volta",
    "Turing",
    "Pascal",
    "CDNA 2",
    "CDNA 3",
    "CDNA 4",
    "RDNA 3",
    "RDNA 3.5",
    "RDNA 4",
    "CDNA 1",
    "Xe2 (Battlemage)",
    "Xe HPC (Ponte Vecchio)",
    "Gaudi 3 (Habana)",
    "Apple M3 GPU",
    "TPU v5e",
    "Trainium2",
    "Ascend 910C",
)
_KINDS = (None, "gpu", "soc", "tpu", "npu", "asic")


@st.composite
def entries(draw: st.DrawFn) -> CatalogEntry:
    changes: dict[str, object] = {
        "vendor": draw(st.sampled_from(_VENDORS) | st.text(max_size=12)),
        "architecture": draw(st.sampled_from(_ARCHITECTURES) | st.text(max_size=30) | st.none()),
        "compute_capability": draw(
            st.none()
            | st.from_regex(r"\A\d{1,2}\.\d{1,2}\Z")
            | st.sampled_from(("7.0", "8.0", "8.9", "12.1"))
        ),
        "name": draw(st.text(min_size=1, max_size=40)),
    }
    if "kind" in CatalogEntry.model_fields:
        changes["kind"] = draw(st.sampled_from(_KINDS))
    return entry(draw(st.sampled_from(_BASES))).model_copy(update=changes)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    item=entries(),
    engine=st.sampled_from(list(Engine)),
    quant=st.sampled_from(list(QuantFormat)),
    kv=st.sampled_from(list(KvFormat)),
    backend=st.none() | st.sampled_from(list(Backend)),
    mode=st.sampled_from(list(Mode)),
)
def test_any_entry_and_combination_gets_a_decision_with_a_reason_iff_refused(
    item: CatalogEntry,
    engine: Engine,
    quant: QuantFormat,
    kv: KvFormat,
    backend: Backend | None,
    mode: Mode,
) -> None:
    decision = engine_support(item, engine, quant=quant, kv=kv, backend=backend, mode=mode)
    assert decision.supported is (decision.reason is None)
    assert decision.supported is (decision.weight_path is not None)
    assert decision.source.split(":", 1)[0] in {
        "tensorrt-llm",
        "vllm",
        "sglang",
        "llama.cpp",
        "transformers",
        "any",
    }
    assert decision.source in {support.row_citation(row_id) for row_id in support_rows()}


# -- the table itself ---------------------------------------------------------------------------


def test_every_row_the_code_names_exists_and_every_row_is_used() -> None:
    code = Path(support.__file__).read_text("utf-8")
    named = set(re.findall(r'"([a-z0-9.]+(?:-[a-z0-9.]+)+)"', code)) & set(support_rows())
    quoted_ids = set(re.findall(r'_(?:yes|no)\(\s*"([a-z0-9-]+)"', code))
    assert quoted_ids <= set(support_rows())
    assert named == set(support_rows()), set(support_rows()) - named
    for row in support_rows().values():
        assert row.source.strip() and row.claim.strip()
        assert row.engine in {"tensorrt-llm", "vllm", "sglang", "llama.cpp", "transformers", "any"}


def test_the_docs_page_shows_every_row_and_its_source() -> None:
    page = (ROOT / "docs" / "engine-support.md").read_text("utf-8")
    for row in support_rows().values():
        assert f"`{row.id}`" in page, row.id
        assert row.source in page, row.id
        if row.conservative is not None:
            assert row.conservative in page, row.id


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "only [[row]]"),
        ("[[row]]\nid = 'a'\nengine = 'vllm'\nclaim = 'c'\n", "needs id, engine, claim and source"),
        ("[[row]]\nid='a'\nengine='vllm'\nclaim='c'\nsource='s'\nextra='x'\n", "unknown keys"),
        ("[[row]]\nid='a'\nengine='vllm'\nclaim='c'\nsource=' '\n", "non-empty text"),
        ("[[row]]\nid='a'\nengine='vllm'\nclaim='c'\nsource='s'\n" * 2, "repeats"),
        ("[[row]\n", "support.toml"),
        ("[[row]]\nid=1\nengine='vllm'\nclaim='c'\nsource='s'\n", "non-empty text"),
    ],
)
def test_a_broken_table_is_refused_by_row(text: str, fragment: str) -> None:
    with pytest.raises(SupportTableError, match=re.escape(fragment)):
        parse_rows(text)


# -- the docs page's at-a-glance tables are the code's decisions --------------------------------


GLANCE_DEVICES = (
    ("gtx-1080", "Pascal, CC 6.1"),
    ("v100-sxm2-32gb", "Volta, CC 7.0"),
    ("t4", "Turing, CC 7.5"),
    ("a100-80gb-sxm4", "Ampere, CC 8.0"),
    ("rtx-3090", "Ampere, CC 8.6"),
    ("l40s", "Ada, CC 8.9"),
    ("h100-sxm5", "Hopper, CC 9.0"),
    ("b200", "Blackwell, CC 10.0"),
    ("rtx-5090", "Blackwell, CC 12.0"),
    ("mi210", "CDNA 2"),
    ("mi300x", "CDNA 3"),
    ("mi355x", "CDNA 4"),
    ("rx-7900-xtx", "RDNA 3"),
    ("rx-9070-xt", "RDNA 4"),
    ("data-center-gpu-max-1550", "Xe HPC"),
    ("arc-b580", "Xe2"),
    ("gaudi-3", "Gaudi 3"),
    ("apple-m4-max-40c", "Apple M4"),
)
GLANCE_QUANTS = (
    QuantFormat.BF16,
    QuantFormat.FP16,
    QuantFormat.FP8,
    QuantFormat.INT8,
    QuantFormat.AWQ,
    QuantFormat.GPTQ,
    QuantFormat.NF4,
    QuantFormat.MXFP4,
    QuantFormat.Q4_K_M,
)
GLANCE_KV = (KvFormat.FP8, KvFormat.Q8_0)


def glance_tables() -> str:
    """The page's per-engine tables: ✓ native, ✓ kernel (16-bit math), ✗ not ranked."""

    def mark(decision: support.Support) -> str:
        if not decision.supported:
            return "✗"
        return "✓ kernel" if "16-bit math" in (decision.weight_path or "") else "✓"

    lines: list[str] = []
    header = " | ".join(q.value for q in GLANCE_QUANTS) + " | KV fp8 | KV q8_0"
    for engine in Engine:
        lines += [f"### {engine.value}", "", f"| device | {header} |"]
        lines.append("|---|" + "---|" * (len(GLANCE_QUANTS) + len(GLANCE_KV)))
        base = QuantFormat.Q4_K_M if engine is Engine.LLAMA_CPP else QuantFormat.FP16
        for gpu_id, label in GLANCE_DEVICES:
            item = entry(gpu_id)
            cells = [
                mark(engine_support(item, engine, quant=quant, kv=KvFormat.FP16))
                for quant in GLANCE_QUANTS
            ]
            cells += [mark(engine_support(item, engine, quant=base, kv=kv)) for kv in GLANCE_KV]
            lines.append(f"| `{gpu_id}` ({label}) | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def test_the_docs_glance_tables_are_the_codes_decisions() -> None:
    page = (ROOT / "docs" / "engine-support.md").read_text("utf-8")
    tables = glance_tables()
    assert tables.count("| ") > 100
    assert tables in page, "docs/engine-support.md is stale: paste glance_tables() output"


class FutureFormat:
    """A weight or KV format a later release adds (NVFP4, an int8 cache): the table has no
    row for it, so no engine may be said to run it."""

    value = "nvfp4"
    label = "NVFP4"
    is_gguf = False
    is_plain = False


def test_a_format_the_table_does_not_know_is_refused_everywhere() -> None:
    decisions = []
    for gpu_id in ("h100-sxm5", "b200", "mi355x", "apple-m4-max-40c", "gaudi-3"):
        for engine in Engine:
            for mode in (Mode.SERVE, Mode.TRAIN):
                unknown_weights = engine_support(
                    entry(gpu_id), engine, quant=FutureFormat(), kv=KvFormat.FP16, mode=mode
                )  # type: ignore[arg-type]
                decisions.append(unknown_weights)
            unknown_cache = engine_support(
                entry(gpu_id), engine, quant=QuantFormat.FP16, kv=FutureFormat()
            )  # type: ignore[arg-type]
            decisions.append(unknown_cache)
    assert len(decisions) == 5 * len(Engine) * 3
    for decision in decisions:
        check_shape(decision)
        assert not decision.supported
