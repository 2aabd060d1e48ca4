"""Usable memory in bytes: the vendor's unit, the driver's share, the engine's, Apple's limit."""

from __future__ import annotations

import pytest
from catalog_factory import make_entry
from hypothesis import given, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.memory.breakdown import WorkloadSpec, estimate_memory
from gpudesk.memory.fit import fit_across
from gpudesk.memory.usable import GIB, MIB, usable_memory
from gpudesk.workload.presets import find_preset


def test_a_16_gb_card_holds_16_gib() -> None:
    usable = usable_memory(make_entry("c16", memory_gb=16))
    assert usable.capacity_bytes == 17_179_869_184
    assert usable.reserved_bytes == 0
    assert usable.usable_bytes == 17_179_869_184
    assert usable.usable_gb == pytest.approx(17.179869184)
    assert usable.usable_gib == 16.0
    assert usable.max_devices is None


def test_vllm_takes_its_gpu_memory_utilization() -> None:
    entry = make_entry("c24", memory_gb=24)
    assert usable_memory(entry, "vllm").usable_bytes == int(24 * GIB * 0.9)  # 23,192,823,398
    assert usable_memory(entry, "vllm").usable_bytes == 23_192_823_398
    assert usable_memory(entry, "vllm", gpu_memory_utilization=0.5).usable_bytes == 12 * GIB
    assert usable_memory(entry, "llama.cpp").usable_bytes == 24 * GIB
    assert usable_memory(entry, "tensorrt-llm").usable_bytes == 24 * GIB


def test_nvidia_datacenter_gddr_loses_a_sixteenth_to_ecc() -> None:
    entry = make_entry("dc-gddr", memory_gb=48, segment="datacenter", ecc=True, memory_type="GDDR6")
    usable = usable_memory(entry)
    assert usable.reserved_bytes == 3 * GIB
    assert usable.runtime_total_bytes == 45 * GIB
    consumer = make_entry("gf", memory_gb=48, ecc=False, memory_type="GDDR6X")
    assert usable_memory(consumer).reserved_bytes == 0


def test_published_nvidia_smi_totals_are_used() -> None:
    catalog = {entry.id: entry for entry in load_catalog(include_user=False).entries}
    h100 = usable_memory(catalog["h100-sxm5"])
    assert h100.runtime_total_bytes == 81559 * MIB  # 85,520,809,984
    assert h100.reserved_bytes == 361 * MIB
    l4 = usable_memory(catalog["l4"])
    assert l4.runtime_total_bytes == 23034 * MIB
    assert usable_memory(catalog["a100-80gb-sxm4"]).reserved_bytes == 0


def test_apple_default_wired_limit_is_three_quarters_above_36_gib() -> None:
    entry = make_entry("mac", vendor="Apple", kind="soc", memory_gb=192, memory_type="unified")
    usable = usable_memory(entry)
    assert usable.wired_limit_bytes == 147_456 * MIB  # 154,618,822,656 bytes
    assert usable.usable_bytes == 147_456 * MIB
    assert usable.max_devices == 1
    assert "iogpu.wired_limit_mb" in usable.basis
    small = make_entry("mac32", vendor="Apple", kind="soc", memory_gb=32)
    # llama.cpp logs recommendedMaxWorkingSetSize = 21845.34 MB on a 32 GB Mac
    assert usable_memory(small).usable_bytes == int(32 * GIB * 2 / 3)
    assert usable_memory(small).usable_bytes / MIB == pytest.approx(21845.33, abs=0.01)


def test_a_raised_apple_wired_limit_is_used_and_capped_at_the_memory() -> None:
    entry = make_entry("mac", vendor="Apple", kind="soc", memory_gb=192)
    assert usable_memory(entry, apple_wired_limit_mb=180_000).usable_bytes == 180_000 * MIB
    assert usable_memory(entry, apple_wired_limit_mb=500_000).usable_bytes == 192 * GIB
    with pytest.raises(ValueError, match="wired limit"):
        usable_memory(entry, apple_wired_limit_mb=0)
    # Other vendors ignore the Apple flag.
    assert usable_memory(make_entry("g"), apple_wired_limit_mb=1000).usable_bytes == 16 * GIB


def test_no_soc_is_listed_with_more_than_one() -> None:
    catalog = load_catalog(include_user=False).entries
    estimate = estimate_memory(find_preset("deepseek-v3"), WorkloadSpec())
    report = fit_across(catalog, estimate)
    socs = {entry.id for entry in catalog if entry.kind.value == "soc"}
    assert socs
    assert all(result.count == 1 for result in report.fits if result.gpu_id in socs)


def test_70b_bf16_on_an_m2_ultra_against_its_wired_limit() -> None:
    """150 GB need = 139.6 GiB; the 192 GB M2 Ultra wires 144 GiB by default (+4.7 GB)."""
    catalog = {entry.id: entry for entry in load_catalog(include_user=False).entries}
    estimate = estimate_memory(find_preset("llama-3.1-70b"), WorkloadSpec())
    mac = fit_across([catalog["apple-m2-ultra-76c"]], estimate).results[0]
    assert mac.usable_gb == pytest.approx(154.618822656)
    assert mac.headroom_gb == pytest.approx(154.618822656 - estimate.total_gb)
    lowered = fit_across([catalog["apple-m2-ultra-76c"]], estimate, apple_wired_limit_mb=140_000)
    assert lowered.results[0].count is None  # 140,000 MiB = 146.8 GB < 149.9 GB


@given(
    memory=st.floats(min_value=0.1, max_value=2048, allow_nan=False),
    vendor=st.sampled_from(["NVIDIA", "AMD", "Intel", "Apple"]),
    segment=st.sampled_from(["consumer", "workstation", "datacenter"]),
    engine=st.sampled_from([None, "vllm", "llama.cpp", "tensorrt-llm", "transformers"]),
    ecc=st.booleans(),
)
def test_usable_never_exceeds_capacity_and_is_positive(
    memory: float, vendor: str, segment: str, engine: str | None, ecc: bool
) -> None:
    entry = make_entry("g", memory_gb=memory, vendor=vendor, segment=segment, ecc=ecc)
    usable = usable_memory(entry, engine)
    assert 0 < usable.usable_bytes <= usable.runtime_total_bytes <= usable.capacity_bytes
    assert usable.capacity_bytes == round(memory * GIB)


def test_70b_f16_runs_whole_on_a_192_gb_m2_ultra_as_published() -> None:
    """llama-bench ran Llama 3 70B F16 (131.43 GiB) on an M2 Ultra 76-core 192 GB with
    Metal up to tg 8192 (4.23 tokens/s) and pp 8192 (135.15): XiongjieDai,
    GPU-Benchmarks-on-LLM-Inference, README at aa72e0e, LLaMA 3 Apple Silicon table. A
    prompt at 20 TFLOPS (2 x 70.6B x 135 tokens/s) is the GPU's work, so the GPU held it
    at macOS's default limit, and fit must not refuse what was measured."""
    from gpudesk.memory.breakdown import Engine
    from gpudesk.workload.quant import QuantFormat

    catalog = {entry.id: entry for entry in load_catalog(include_user=False).entries}
    spec = WorkloadSpec(engine=Engine.LLAMA_CPP, quant=QuantFormat.FP16, seq=8192)
    estimate = estimate_memory(find_preset("llama-3.1-70b"), spec)
    (mac,) = fit_across([catalog["apple-m2-ultra-76c"]], estimate).results
    assert mac.count == 1
    assert mac.usable_gb == pytest.approx(144 * GIB / 1e9)
    # and with llama.cpp's old default of no flash attention (the 2024 build measured)
    old = estimate_memory(
        find_preset("llama-3.1-70b"), spec.model_copy(update={"flash_attention": False})
    )
    assert fit_across([catalog["apple-m2-ultra-76c"]], old).results[0].count == 1
