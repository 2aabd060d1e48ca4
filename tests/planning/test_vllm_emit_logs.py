"""``--emit vllm``'s KV pool against published vLLM startup logs, each with its version.

Every row of ``tests/planning/data/vllm_startup_logs.toml`` is one published start: the
GPU, model, share of memory, tensor parallelism, the vLLM release and the KV tokens
it logged. The pool is predicted with the accounting of that release
(:func:`gpudesk.memory.vllm_pool.era_for_version`) and must be within 5%, from a 0.20
share to 0.98 and at TP 1, 2, 4 and 8; a row marked ``outside`` is a strict expected
failure with its reason. The same rows are the table of ``docs/vllm-kv-pool.md``.
"""

from __future__ import annotations

import json
import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from gpudesk.cli import main
from gpudesk.memory.vllm_pool import (
    GIB,
    VLLM_BLOCK_TOKENS,
    VllmEra,
    VllmKvPool,
    era_for_version,
    vllm_kv_pool,
)
from gpudesk.workload.presets import find_preset
from gpudesk.workload.quant import QuantFormat, weight_bytes

DATA = Path(__file__).parent / "data" / "vllm_startup_logs.toml"
MIB = 2**20


@dataclass(frozen=True)
class StartupLog:
    id: str
    vllm_version: str
    engine: str
    model: str
    quant: str
    kv_dtype: str
    tp: int
    nvlink: bool
    utilisation: float
    max_model_len: int
    batched_tokens: int
    max_num_seqs: int
    kv_tokens: int
    kv_tokens_from: str
    source: str
    nvidia_smi_mib: int | None = None
    cuda_total_gib: float | None = None
    weights_gib: float | None = None
    block_size: int = VLLM_BLOCK_TOKENS
    non_torch_gib: float | None = None
    outside: str | None = None

    @property
    def era(self) -> VllmEra:
        return era_for_version(self.vllm_version, v0=self.engine == "v0")


def _row(raw: dict[str, Any]) -> StartupLog:
    assert raw["engine"] in ("v0", "v1"), raw["id"]
    assert raw["kv_tokens_from"] in ("logged", "gib"), raw["id"]
    assert raw.get("source_url") or "index file id" in raw["source"], raw["id"]
    assert (raw.get("nvidia_smi_mib") is None) != (raw.get("cuda_total_gib") is None), raw["id"]
    return StartupLog(
        id=raw["id"],
        vllm_version=raw["vllm_version"],
        engine=raw["engine"],
        model=raw["model"],
        quant=raw["quant"],
        kv_dtype=raw["kv_dtype"],
        tp=raw["tp"],
        nvlink=raw["nvlink"],
        utilisation=raw["gpu_memory_utilization"],
        max_model_len=raw["max_model_len"],
        batched_tokens=raw["max_num_batched_tokens"],
        max_num_seqs=raw["max_num_seqs"],
        kv_tokens=raw["kv_tokens"],
        kv_tokens_from=raw["kv_tokens_from"],
        source=raw["source"],
        nvidia_smi_mib=raw.get("nvidia_smi_mib"),
        cuda_total_gib=raw.get("cuda_total_gib"),
        weights_gib=raw.get("weights_gib"),
        block_size=raw.get("block_size", VLLM_BLOCK_TOKENS),
        non_torch_gib=raw.get("non_torch_gib"),
        outside=raw.get("outside"),
    )


LOGS = [_row(raw) for raw in tomllib.loads(DATA.read_text(encoding="utf-8"))["log"]]
INSIDE = [log for log in LOGS if log.outside is None]


def predict(log: StartupLog, *, era: VllmEra | None = None) -> VllmKvPool:
    """The pool of ``log``'s start with its release's accounting (or ``era``)."""
    preset = find_preset(log.model)
    assert preset.shape is not None
    if log.weights_gib is not None:  # the checkpoint's own vocabulary: vLLM's logged weights
        weights = log.weights_gib * GIB * log.tp
    else:
        stored = weight_bytes(preset.shape, QuantFormat(log.quant))
        weights = stored.in_memory_bytes * preset.params / stored.params
    return vllm_kv_pool(
        preset.shape,
        weights,
        nvidia_smi_total_bytes=(log.nvidia_smi_mib or 0) * MIB,
        total_bytes=None if log.cuda_total_gib is None else int(log.cuda_total_gib * GIB),
        tensor_parallel=log.tp,
        utilisation=log.utilisation,
        max_model_len=log.max_model_len,
        kv_dtype_bytes=1.0 if log.kv_dtype == "fp8" else 2.0,
        profile_tokens=log.batched_tokens,
        sampler_seqs=log.max_num_seqs,
        nvlink=log.nvlink,
        era=era or log.era,
    )


def error(log: StartupLog, *, era: VllmEra | None = None) -> float:
    """(predicted - logged) / logged, in whole blocks of the log's block size."""
    tokens = predict(log, era=era).tokens
    whole = tokens // log.block_size * log.block_size
    return (whole - log.kv_tokens) / log.kv_tokens


@pytest.mark.parametrize(
    "log",
    [
        pytest.param(log, marks=pytest.mark.xfail(strict=True, reason=log.outside))
        if log.outside
        else log
        for log in LOGS
    ],
    ids=[log.id for log in LOGS],
)
def test_every_published_log_is_predicted_within_5_percent(log: StartupLog) -> None:
    predicted = predict(log)
    assert predicted.tokens % VLLM_BLOCK_TOKENS == 0
    assert abs(error(log)) <= 0.05, f"{log.id}: {error(log):+.1%} ({log.source})"


def test_the_logs_span_the_shares_layouts_and_releases() -> None:
    """Eleven or more logs inside, 0.25 and lower to 0.95 and higher, TP 1-8, V0 and V1."""
    assert len(INSIDE) >= 11
    shares = sorted(log.utilisation for log in INSIDE)
    assert shares[0] <= 0.25 and shares[-1] >= 0.95
    assert sum(1 for share in shares if share <= 0.5) >= 4
    assert {1, 2, 4, 8} <= {log.tp for log in INSIDE}
    assert {log.era for log in INSIDE} >= {
        VllmEra.V0_EARLY,
        VllmEra.V0,
        VllmEra.V1_EARLY,
        VllmEra.V1_0_17,
        VllmEra.V1,
    }
    errors = [abs(error(log)) for log in INSIDE]
    assert statistics.median(errors) < 0.025


def test_low_shares_are_right_because_the_profile_counts_only_what_it_grew() -> None:
    """From V0 0.7 to V1 0.16 the profiler counts only the non-torch memory grown since
    its start-up snapshot (0.01-0.08 GiB logged at TP 1); charging vLLM 0.19's 0.25 GiB
    there, or 0.21's CUDA graph estimate, puts the pools of small shares low."""
    lean = [
        log
        for log in INSIDE
        if log.era in (VllmEra.V0, VllmEra.V1_EARLY) and log.tp == 1 and log.non_torch_gib
    ]
    assert len(lean) >= 4
    for log in lean:
        assert log.non_torch_gib is not None and log.non_torch_gib <= 0.08
        assert predict(log).non_torch_bytes / GIB == pytest.approx(log.non_torch_gib, abs=0.06)
    low_v0 = [log for log in INSIDE if log.utilisation <= 0.5 and log.engine == "v0"]
    assert len(low_v0) >= 3
    for log in low_v0:
        assert error(log, era=VllmEra.V1) < error(log) - 0.02, log.id
    assert min(error(log, era=VllmEra.V1) for log in low_v0) < -0.05


def test_emit_vllm_with_the_logs_release_matches_the_rtx_3090_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The CLI path: ``fit --emit vllm --vllm-version 0.13.0`` at a 0.5 share."""
    log = next(log for log in LOGS if log.id == "3090-v0.13-qwen1.5b-awq-0.50")
    code = main(
        [
            "fit", "--model", "qwen2.5-1.5b", "--quant", "awq", "--engine", "vllm",
            "--seq", "2048", "--gpu", "rtx-3090", "--emit", "vllm",
            "--gpu-memory-utilization", "0.5", "--vllm-version", log.vllm_version, "--json",
        ]
    )  # fmt: skip
    assert code == 0
    pool = json.loads(capsys.readouterr().out)["emit"]["kv_pool"]
    assert pool["vllm_versions"] == "vLLM V1 0.8-0.16"
    assert pool["max_model_len"] == 2048
    assert pool["gpu_kv_cache_tokens"] == pytest.approx(log.kv_tokens, rel=0.05)


def test_an_unknown_vllm_version_is_refused_with_its_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["fit", "--model", "qwen2.5-1.5b", "--gpu", "rtx-3090", "--emit", "vllm",
         "--vllm-version", "latest"]
    )  # fmt: skip
    assert code == 2
    assert "--vllm-version 'latest' is not a vLLM version" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("version", "v0", "era"),
    [
        ("0.6.4", False, VllmEra.V0_EARLY),
        ("0.7.3", False, VllmEra.V0),
        ("0.8.5", True, VllmEra.V0),
        ("v0.8.0", False, VllmEra.V1_EARLY),
        ("0.10.2", False, VllmEra.V1_EARLY),
        ("0.16.1rc1", False, VllmEra.V1_EARLY),
        ("0.17.0", False, VllmEra.V1_0_17),
        ("0.20.2+cu129", False, VllmEra.V1_0_17),
        ("0.21.0", False, VllmEra.V1),
        ("1.0.0", False, VllmEra.V1),
    ],
)
def test_each_release_maps_to_its_accounting(version: str, v0: bool, era: VllmEra) -> None:
    assert era_for_version(version, v0=v0) is era


def test_v0_is_refused_where_vllm_removed_it() -> None:
    with pytest.raises(ValueError, match="no V0 engine"):
        era_for_version("0.13.0", v0=True)


@given(st.text(max_size=30))
def test_any_version_text_gives_an_era_or_a_clear_refusal(text: str) -> None:
    try:
        era = era_for_version(text)
    except ValueError as exc:
        assert "is not a vLLM version" in str(exc)
    else:
        assert era in VllmEra


# -- the pool the serving simulator asks for (gpudesk.speed.holding) ------------------


def _rtx_3090_vllm_estimate() -> tuple[Any, Any]:
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.catalog.query import find_entry
    from gpudesk.memory.breakdown import Engine, WorkloadSpec, estimate_memory

    entry = find_entry(load_catalog().entries, "rtx-3090")
    spec = WorkloadSpec(seq=2048, quant=QuantFormat.AWQ, engine=Engine.VLLM)
    return entry, estimate_memory(find_preset("qwen2.5-1.5b"), spec)


def test_the_simulators_pool_is_the_one_emit_prints() -> None:
    """``holding.vllm_instance_pool`` and ``kv_pool_bytes`` use the same arithmetic as
    ``--emit vllm``: the 0.5-share RTX 3090 log, in tokens, blocks and bytes."""
    from gpudesk.speed.holding import kv_pool_bytes, vllm_instance_pool

    log = next(log for log in LOGS if log.id == "3090-v0.13-qwen1.5b-awq-0.50")
    entry, estimate = _rtx_3090_vllm_estimate()
    pool = vllm_instance_pool(
        entry, estimate, gpu_memory_utilization=0.5, vllm_version=log.vllm_version
    )
    assert pool.tokens == pytest.approx(log.kv_tokens, rel=0.05)
    assert pool.blocks * VLLM_BLOCK_TOKENS == pool.tokens
    model_bytes_per_token = 2 * 28 * 2 * 128 * 2  # K and V, 28 layers, 2 KV heads of 128
    one = kv_pool_bytes(
        entry, estimate, 1, gpu_memory_utilization=0.5, vllm_version=log.vllm_version
    )
    assert one == pool.tokens * model_bytes_per_token
    # two copies (tp 1) hold twice; one TP-2 instance holds its pool once, in whole tokens
    two = kv_pool_bytes(entry, estimate, 2, tp=1, gpu_memory_utilization=0.5)
    tp2 = vllm_instance_pool(entry, estimate, tp=2, gpu_memory_utilization=0.5)
    assert two == 2 * kv_pool_bytes(entry, estimate, 1, gpu_memory_utilization=0.5)
    assert kv_pool_bytes(entry, estimate, 2, gpu_memory_utilization=0.5) == (
        tp2.tokens * model_bytes_per_token
    )


def test_the_simulators_pool_grows_with_the_share_and_shrinks_with_the_batch() -> None:
    from gpudesk.speed.holding import kv_pool_bytes

    entry, estimate = _rtx_3090_vllm_estimate()
    shares = [kv_pool_bytes(entry, estimate, 1, gpu_memory_utilization=u) for u in (0.25, 0.5, 0.9)]
    assert 0 < shares[0] < shares[1] < shares[2]
    wide = kv_pool_bytes(entry, estimate, 1, max_num_batched_tokens=65536)
    assert wide < shares[2]  # a longer profiling pass leaves less for the pool
    with pytest.raises(ValueError, match="does not divide"):
        kv_pool_bytes(entry, estimate, 3, tp=2)
