"""vLLM's KV pool predicted from its own accounting, against published startup logs.

Each row: model preset, weight format, nvidia-smi's total MiB for the GPU, tensor
parallel, gpu_memory_utilization, max_model_len, the tokens vLLM's profiling pass ran
(V0 without chunked prefill: max_model_len; V0 with chunked prefill and V1: its
max_num_batched_tokens), and the KV tokens the log reports (blocks x 16 where the log
gives blocks). Sources:

- vllm-project/vllm issue 10517, comment of 2024-12-02
  (https://github.com/vllm-project/vllm/issues/10517): Llama-3.1-8B-Instruct on an
  RTX 3090 (24576 MiB), vLLM 0.6, utilisation 0.90; max_model_len 20000: "# GPU blocks:
  1952" (31,232 tokens); 29000: "maximum number of tokens that can be stored in KV cache
  (23648)".
- vllm-project/vllm PR 2031 (2023-12-12, https://github.com/vllm-project/vllm/pull/2031):
  Llama2-7B, TP 1, one A100-80GB (81920 MiB): "# GPU blocks: 7351" (117,616 tokens) with
  the fixed profiler; Llama2-70B, TP 4: "# GPU blocks: 20865" (333,840 tokens).
- vllm-project/vllm PR 10511 (comment of 2024-12-14,
  https://github.com/vllm-project/vllm/pull/10511): Meta-Llama-3-8B (Llama 3.1 8B's
  shape, context 8192) on an H100 (81559 MiB; the log's total_gpu_memory 79.22GiB),
  defaults (0.90, 8192 profiled tokens): "available_kv_cache_memory 53.29GiB", i.e.
  436,544 tokens of 128 KiB; with -tp 2 the log's parts (71.29 - 7.48 weights - 3.58
  non-torch - 1.26 activation = 58.97 GiB at 64 KiB a token) give 966,160 tokens. These
  two rows are derived from the logged GiB, not logged token counts.
- vllm-project/vllm issue 13061 (2025-02-11, https://github.com/vllm-project/vllm/issues/13061):
  DeepSeek-R1-Distill-Qwen-14B (Qwen2.5-14B's shape) on two RTX 4090 (24564 MiB, as
  nvidia-smi shows a 4090 in issue 7768), TP 2, utilisation 0.98, max_model_len 131072
  (chunked prefill on: 2048 profiled tokens; the log's 0.19 GiB activation peak): "the
  maximum number of tokens that can be stored in KV cache (81536)".
- vllm-project/vllm issue 21348 (2025-07-22, https://github.com/vllm-project/vllm/issues/21348):
  Qwen3-235B-A22B-FP8 on four H100 (81559 MiB), TP 4, defaults (0.9, max_model_len
  40960, 8192 batched tokens): "GPU KV cache size: 178,880 tokens".

- the same issue 13061, the rank's own line: "the rest of the memory reserved for KV Cache
  is 8.69GiB" (a 23.08 GiB budget, total x 0.98, less 13.95 weights, 0.25 non-torch, 0.19
  activation), i.e. 94,912 tokens (whole blocks) of 96 KiB on that rank. Derived from
  the logged GiB.

What the table shows (model: vllm_kv_pool, sources in gpudesk/planning/engine_launch.py):

- Single GPU: within +1.1..+3.5%.
- The V1 sampler term (profile_run's _dummy_sampler_run over max_num_seqs = 1024 rows on
  an H100) takes the Qwen3-235B row from +94% to +30%; it stays an expected failure: the
  log's run also loaded LMCacheConnectorV1 (--kv-transfer-config), whose buffers are not
  modelled, and the log gives no weights line to check the FP8 checkpoint's size against.
- The 4090 pair (issue 13061): one rank's own figure (8.69 GiB) is within 2% of the
  prediction; the logged 81,536 tokens is the minimum over the two ranks (V0's
  determine_num_available_blocks, V1's unify_kv_cache_configs), so the other rank held
  about 1.2 GiB more than a clean GPU. Kept as an expected failure: a clean-GPU model
  cannot see that.
- The H100 pair under V0 (PR 10511) logged 3.58 GiB of non-torch memory (NCCL on NVLink),
  against 0.20-0.25 GiB on PCIe pairs and quads (issue 13061, PR 14447); +6.8%.
- Llama-2-70B on four A100 (PR 2031, vLLM 0.2, December 2023): +52%. The PR says why:
  with TP > 1 memory "probably related to NCCL" was allocated outside PyTorch's
  allocator, so it switched the profiler to count it. Before that fix the same run
  logged 31,615 blocks (505,840 tokens), within 1% of this prediction; after it 20,865,
  i.e. about 13 GiB per GPU of NCCL memory in that version, which later versions no
  longer hold (0.20-0.25 GiB non-torch at TP 2-4 in 2025 logs). Expected failure.

Fewer than the issue's ten logs (nine rows, two of them derived from logged GiB).
"""

from __future__ import annotations

import pytest

from gpudesk.planning.engine_launch import (
    VLLM_BLOCK_TOKENS,
    kv_bytes_per_token,
    vllm_kv_pool,
)
from gpudesk.planning.presets import find_preset
from gpudesk.planning.quant import QuantFormat, weight_bytes

MIB = 2**20

Row = tuple[str, str, int, int, float, int, int, int | None, int]

ROWS: list[Row] = [
    # model, quant, nvidia-smi MiB, TP, utilisation, max_model_len, profiled tokens,
    # sampler requests (0 for V0, None for V1's default), logged tokens
    ("llama-3.1-8b", "bf16", 24576, 1, 0.90, 20000, 20000, 0, 31232),
    ("llama-3.1-8b", "bf16", 24576, 1, 0.90, 29000, 29000, 0, 23648),
    ("llama-2-7b", "fp16", 81920, 1, 0.90, 4096, 4096, 0, 117616),
    ("llama-3.1-8b", "bf16", 81559, 1, 0.90, 8192, 8192, 0, 436544),
]
TP_ROWS: list[Row] = [
    ("llama-3.1-8b", "bf16", 81559, 2, 0.90, 8192, 8192, 0, 966160),
    ("qwen2.5-14b", "bf16", 24564, 2, 0.98, 131072, 2048, 0, 81536),
    ("llama-2-70b", "fp16", 81920, 4, 0.90, 4096, 4096, 0, 333840),
    ("qwen3-235b-a22b", "fp8", 81559, 4, 0.90, 40960, 8192, None, 178880),
]
#: TP rows the model meets (one rank's own logged figure)
TP_PASSING: list[Row] = [
    ("qwen2.5-14b", "bf16", 24564, 2, 0.98, 131072, 2048, 0, 94912),
]
TP_REASONS = {
    "llama-3.1-8b": "V0 on an H100 pair logged 3.58 GiB non-torch (NCCL on NVLink)",
    "qwen2.5-14b": "logged tokens are the minimum over ranks; the other rank held ~1.2 GiB more",
    "llama-2-70b": "vLLM 0.2 (2023) held ~13 GiB of NCCL memory per GPU (PR 2031)",
    "qwen3-235b-a22b": "run loaded LMCacheConnectorV1, not modelled; weights line not logged",
}


def _predict(row: Row) -> int:
    model, quant, mib, tp, utilisation, length, profiled, sampler, _ = row
    preset = find_preset(model)
    assert preset.shape is not None
    stored = weight_bytes(preset.shape, QuantFormat(quant))
    weights = stored.in_memory_bytes * preset.params / stored.params
    pool = vllm_kv_pool(
        preset.shape,
        weights,
        nvidia_smi_total_bytes=mib * MIB,
        tensor_parallel=tp,
        utilisation=utilisation,
        max_model_len=length,
        profile_tokens=profiled,
        sampler_seqs=sampler,
    )
    return pool.tokens


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0]}-{r[5]}" for r in ROWS])
def test_single_gpu_kv_pool_is_within_5_percent_of_the_log(
    row: Row,
) -> None:
    predicted = _predict(row)
    assert predicted % VLLM_BLOCK_TOKENS == 0
    assert predicted == pytest.approx(row[-1], rel=0.05)


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(r, marks=pytest.mark.xfail(strict=True, reason=TP_REASONS[r[0]]))
        for r in TP_ROWS
    ],
    ids=[f"{r[0]}-tp{r[3]}" for r in TP_ROWS],
)
def test_tensor_parallel_kv_pool_within_5_percent(row: Row) -> None:
    assert _predict(row) == pytest.approx(row[-1], rel=0.05)


@pytest.mark.parametrize("row", TP_PASSING, ids=[f"{r[0]}-tp{r[3]}-rank" for r in TP_PASSING])
def test_tensor_parallel_rank_figure_within_5_percent(row: Row) -> None:
    assert _predict(row) == pytest.approx(row[-1], rel=0.05)


def test_v1_sampler_sets_the_peak_on_an_h100_and_does_not_shrink_with_tp() -> None:
    shape = find_preset("qwen3-235b-a22b").shape
    assert shape is not None
    kwargs = {"nvidia_smi_total_bytes": 81559 * MIB, "gpu_name": "H100 SXM5"}
    v1 = vllm_kv_pool(shape, 200e9, tensor_parallel=4, **kwargs)  # type: ignore[arg-type]
    v0 = vllm_kv_pool(shape, 200e9, tensor_parallel=4, sampler_seqs=0, **kwargs)  # type: ignore[arg-type]
    assert v1.activation_bytes == pytest.approx(1024 * shape.vocab * 38.0)
    assert v1.tokens < v0.tokens
    a100 = vllm_kv_pool(
        shape, 200e9, tensor_parallel=4, nvidia_smi_total_bytes=81920 * MIB, gpu_name="A100 80GB"
    )
    assert a100.activation_bytes == pytest.approx(256 * shape.vocab * 38.0)


def test_kv_heads_split_across_tensor_parallel_and_fp8_halves_a_token() -> None:
    shape = find_preset("llama-3.1-8b").shape
    assert shape is not None
    assert kv_bytes_per_token(shape, 1, 2.0) == 2 * 32 * 8 * 128 * 2
    assert kv_bytes_per_token(shape, 2, 2.0) == 2 * 32 * 4 * 128 * 2
    assert kv_bytes_per_token(shape, 16, 2.0) == 2 * 32 * 1 * 128 * 2  # heads replicate
    assert kv_bytes_per_token(shape, 1, 1.0) == 2 * 32 * 8 * 128


def test_more_utilisation_gives_a_larger_pool() -> None:
    shape = find_preset("llama-3.1-8b").shape
    assert shape is not None
    pools = [
        vllm_kv_pool(shape, 16e9, nvidia_smi_total_bytes=81559 * MIB, utilisation=u).tokens
        for u in (0.5, 0.7, 0.9, 0.95)
    ]
    assert pools == sorted(pools)
    assert pools[0] < pools[-1]
