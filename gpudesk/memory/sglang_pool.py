"""SGLang's KV pool per GPU, as ``python -m sglang.launch_server`` logs it.

SGLang sizes its pool differently from vLLM. ``ModelRunner.profile_max_num_token``
(sgl-project/sglang, python/sglang/srt/model_executor/model_runner.py; the same
arithmetic in the later ``profile_available_bytes`` helper) reads the free memory twice,
once after the distributed set-up (``total_gpu_memory``) and once after the weights are
loaded (``available_gpu_memory``), both in GiB:

    rest = available_gpu_memory - total_gpu_memory x (1 - mem_fraction_static)
    tokens = rest x 2**30 // cell_size

with ``cell_size`` the K and V bytes of one token over all layers on one rank. The
share ``1 - mem_fraction_static`` of the first reading is left for activations and
CUDA graphs; the pool then logs ``KV Cache is allocated. #tokens: N, K size: x GB,
V size: x GB`` (GB there is 2**30 bytes).

Checked on a published log (the test holds it): QwQ-32B on four NVIDIA L4s (AWS
g6.12xlarge), SGLang 0.4.3.post4, ``mem_fraction_static=0.85`` (its TP-4 default), logs
``avail mem=21.63 GB`` before the weights and ``6.09 GB`` after; the formula gives
46,620 tokens against the logged 46,611 (the log rounds its GiB to two decimals)
(didier-durand/llms-in-clouds docs/sglang.md @ 3e1df42a).

What is not read from a log of the GPU in question is the memory already used before
the weights load (CUDA context, driver, distributed set-up): :data:`HELD_BEFORE_WEIGHTS`
is read off SGLang's own logs on 80 GB H100s (nvidia-smi 81,559 MiB = 79.65 GiB against
``Load weight begin. avail mem=78.43 GB`` and ``78.48 GB``, SGLang 2026 releases; the
L4 log above, SGLang 0.4.3, held 0.86 GiB of its 23,034 MiB). With
tensor parallelism over NVLink SGLang's custom all-reduce buffers come on top; no log
with both figures was found, so that case is not checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpudesk.memory.vllm_pool import kv_bytes_per_token
from gpudesk.workload.architecture import ModelShape

GIB = 2**30

#: nvidia-smi's total less SGLang's "Load weight begin. avail mem" on an 80 GB H100
#: (79.65 - 78.45 GiB, see module)
HELD_BEFORE_WEIGHTS = int(1.2 * GIB)

SOURCES = (
    "sgl-project/sglang python/sglang/srt/model_executor/model_runner.py "
    "profile_max_num_token: rest = available_gpu_memory - total_gpu_memory x "
    "(1 - mem_fraction_static), tokens = rest // cell_size",
    "sgl-project/sglang mem_cache/memory_pool.py: 'KV Cache is allocated. #tokens: N, "
    "K size: x GB, V size: x GB'",
    "SGLang logs on 80 GB H100s: 'Load weight begin. avail mem=78.43 GB' / '78.48 GB' "
    "(nvidia-smi total 81,559 MiB)",
)


@dataclass(frozen=True)
class SglangKvPool:
    """SGLang's KV pool on one GPU."""

    free_at_start_bytes: float
    mem_fraction_static: float
    weights_bytes: float
    kv_bytes: float
    bytes_per_token: float
    tokens: int
    max_model_len: int

    @property
    def max_concurrency(self) -> float:
        return self.tokens / self.max_model_len if self.max_model_len else 0.0

    def log_lines(self) -> list[str]:
        half = self.tokens * self.bytes_per_token / 2 / GIB
        return [
            f"KV Cache is allocated. #tokens: {self.tokens}, K size: {half:.2f} GB, "
            f"V size: {half:.2f} GB",
            f"max_total_num_tokens={self.tokens}",
        ]

    def working(self) -> str:
        free = self.free_at_start_bytes / GIB
        after = free - self.weights_bytes / GIB
        kept = free * (1 - self.mem_fraction_static)
        return (
            f"free before the weights {free:.2f} GiB, after them {after:.2f} GiB; less "
            f"{free:.2f} GiB x (1 - {self.mem_fraction_static:g}) = {kept:.2f} GiB kept for "
            f"activations and CUDA graphs leaves {self.kv_bytes / GIB:.2f} GiB of KV cache "
            f"at {self.bytes_per_token:,.0f} bytes per token per GPU (SGLang; GB in its log "
            "is GiB)"
        )


def sglang_kv_pool(
    *,
    free_at_start_bytes: float,
    weights_bytes_per_gpu: float,
    bytes_per_token: float,
    mem_fraction_static: float,
    max_model_len: int,
) -> SglangKvPool:
    """The pool SGLang allocates on one GPU from its two free-memory readings."""
    after_weights = free_at_start_bytes - weights_bytes_per_gpu
    rest = after_weights - free_at_start_bytes * (1 - mem_fraction_static)
    tokens = max(0, math.floor(rest / bytes_per_token)) if bytes_per_token > 0 else 0
    return SglangKvPool(
        free_at_start_bytes=free_at_start_bytes,
        mem_fraction_static=mem_fraction_static,
        weights_bytes=weights_bytes_per_gpu,
        kv_bytes=max(0.0, rest),
        bytes_per_token=bytes_per_token,
        tokens=tokens,
        max_model_len=max_model_len,
    )


def predicted_sglang_pool(
    shape: ModelShape,
    weights_bytes: float,
    *,
    nvidia_smi_total_bytes: int,
    tensor_parallel: int,
    mem_fraction_static: float,
    kv_dtype_bytes: float,
    max_model_len: int,
) -> SglangKvPool:
    """The pool on a clean GPU of ``nvidia_smi_total_bytes``, split ``tensor_parallel`` ways."""
    return sglang_kv_pool(
        free_at_start_bytes=nvidia_smi_total_bytes - HELD_BEFORE_WEIGHTS,
        weights_bytes_per_gpu=weights_bytes / tensor_parallel,
        bytes_per_token=kv_bytes_per_token(shape, tensor_parallel, kv_dtype_bytes),
        mem_fraction_static=mem_fraction_static,
        max_model_len=max_model_len,
    )


__all__ = ["HELD_BEFORE_WEIGHTS", "SglangKvPool", "predicted_sglang_pool", "sglang_kv_pool"]
