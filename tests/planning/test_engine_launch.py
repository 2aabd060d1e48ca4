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

The single-GPU rows are within 5%. The tensor-parallel rows are not, and are kept as
strict expected failures so the table says plainly where the accounting is short: with
TP > 1 vLLM holds more outside the weights than a 0.35 GiB non-torch allowance (NCCL
and custom all-reduce buffers; the 2023 70B log shows ~13 GiB per GPU missing), and the
FP8 MoE on four H100 leaves half the pool this predicts. Fewer than the issue's ten
logs were found in the time; the table grows as logs are found.
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

ROWS = [
    # model, quant, nvidia-smi MiB, TP, utilisation, max_model_len, profiled, logged tokens
    ("llama-3.1-8b", "bf16", 24576, 1, 0.90, 20000, 20000, 31232),
    ("llama-3.1-8b", "bf16", 24576, 1, 0.90, 29000, 29000, 23648),
    ("llama-2-7b", "fp16", 81920, 1, 0.90, 4096, 4096, 117616),
    ("llama-3.1-8b", "bf16", 81559, 1, 0.90, 8192, 8192, 436544),
]
TP_ROWS = [
    ("llama-3.1-8b", "bf16", 81559, 2, 0.90, 8192, 8192, 966160),
    ("qwen2.5-14b", "bf16", 24564, 2, 0.98, 131072, 2048, 81536),
    ("llama-2-70b", "fp16", 81920, 4, 0.90, 4096, 4096, 333840),
    ("qwen3-235b-a22b", "fp8", 81559, 4, 0.90, 40960, 8192, 178880),
]


def _predict(row: tuple[str, str, int, int, float, int, int, int]) -> int:
    model, quant, mib, tp, utilisation, length, profiled, _ = row
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
    )
    return pool.tokens


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0]}-{r[5]}" for r in ROWS])
def test_single_gpu_kv_pool_is_within_5_percent_of_the_log(
    row: tuple[str, str, int, int, float, int, int, int],
) -> None:
    predicted = _predict(row)
    assert predicted % VLLM_BLOCK_TOKENS == 0
    assert predicted == pytest.approx(row[-1], rel=0.05)


@pytest.mark.xfail(strict=True, reason="TP > 1: vLLM holds more than the non-torch allowance")
@pytest.mark.parametrize("row", TP_ROWS, ids=[f"{r[0]}-tp{r[3]}" for r in TP_ROWS])
def test_tensor_parallel_kv_pool_within_5_percent(
    row: tuple[str, str, int, int, float, int, int, int],
) -> None:
    assert _predict(row) == pytest.approx(row[-1], rel=0.05)


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
