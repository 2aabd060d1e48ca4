"""How many bytes of a catalog GPU's memory a workload may use, per engine.

One place for the answer; ``fit``, ``speed`` (its KV pool too), the Plan tab and the
report all ask :func:`usable_memory`.

1. **Capacity in the vendor's unit.** A "24 GB" GPU holds 24 GiB (24 x 2^30 bytes):
   memory chips and HBM stacks come in powers of two, and ``nvidia-smi`` shows an A100
   80GB as 81920 MiB. Unified memory of an SoC (Apple's "192
   GB") is binary too. The catalog's ``memory_gb`` is therefore read as GiB.
2. **What the driver keeps.** NVIDIA datacenter cards with GDDR memory run with ECC on,
   which takes 1/16 of the memory (T4 15360 of 16384 MiB, L4 23034, A10 23028, L40S
   46068 of 49152 MiB); where ``nvidia-smi``'s total for a model is published, that figure
   is used (H100 80GB: 81559 MiB). The rest is what ``cudaMemGetInfo`` and vLLM call the
   total.
3. **The engine's share.** vLLM claims ``gpu_memory_utilization`` (0.9 by default) of that
   total; llama.cpp, transformers and TensorRT-LLM (whose KV pool is sized from what the
   model leaves) take what they need.
4. **Apple silicon.** macOS lets the GPU wire only part of unified memory:
   ``recommendedMaxWorkingSetSize`` is two thirds of memory up to 36 GiB and three
   quarters above (32 GiB Mac: 21845 MiB; 96 GiB Mac: 73728 MiB) unless
   ``sudo sysctl iogpu.wired_limit_mb=N`` raised it; give that N to use it.

What every process needs on top (the CUDA context, vLLM's CUDA graphs, llama.cpp's
compute buffers, PyTorch's allocator fragmentation) is the workload's, counted in
:mod:`gpudesk.memory.breakdown`'s overhead and activations parts, never here, so nothing
is counted twice.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gpudesk.catalog.schema import CatalogEntry, Kind, Segment
from gpudesk.memory.breakdown import VLLM_GPU_MEMORY_UTILIZATION

GIB = 2**30
MIB = 2**20
GB = 1e9

#: ECC on GDDR memory keeps 1 byte in 16 for check bits (NVIDIA datacenter GDDR cards)
GDDR_ECC_SHARE = 1 / 16
#: macOS's default GPU wired limit: 2/3 of unified memory up to 36 GiB, 3/4 above
APPLE_SMALL_LIMIT = 2 / 3
APPLE_LARGE_LIMIT = 3 / 4
APPLE_SMALL_MEMORY_GIB = 36
#: the largest wired limit a user may state (MiB): 2 TiB, the catalog's largest memory
MAX_WIRED_LIMIT_MB = 2 * 1024 * 1024

CAPACITY_SOURCE = (
    "GPU memory is sold in binary units: nvidia-smi totals A100 80GB 81920 MiB = 80 GiB, "
    "A100 40GB 40960 MiB = 40 GiB (modal-labs/modal-client PR #2797, "
    "2025-01-23, https://github.com/modal-labs/modal-client/pull/2797)"
)
NVIDIA_TOTALS_SOURCE = (
    "nvidia-smi totals: H100 81559 MiB, A100 80GB 81920, A100 40GB 40960, A10 23028, "
    "L40S 46068, L4 23034, T4 15360 MiB (modal-labs/modal-client PR #2797, 2025-01-23, "
    "https://github.com/modal-labs/modal-client/pull/2797); H100 80GB HBM3 81559MiB "
    "(NVIDIA/nccl issue #1264, https://github.com/NVIDIA/nccl/issues/1264)"
)
VLLM_SHARE_SOURCE = (
    "vLLM engine arguments: gpu_memory_utilization, default 0.9, the fraction of GPU "
    "memory the model executor may use (https://docs.vllm.ai/en/latest/serving/engine_args.html)"
)
APPLE_WIRED_SOURCE = (
    "macOS recommendedMaxWorkingSetSize as llama.cpp's Metal backend logs it: 21845.34 MB "
    "on a 32 GB M2 Max (ollama/ollama issue #434, https://github.com/ollama/ollama/issues/434)"
    ", 73728.00 MB on a 96 GB M2 Max (ggml-org/llama.cpp issue #3213, "
    "https://github.com/ggml-org/llama.cpp/issues/3213); `sudo sysctl "
    "iogpu.wired_limit_mb=N` raises it"
)

#: nvidia-smi's total memory (MiB) for catalog GPUs where a public listing shows it.
REPORTED_TOTAL_MIB: dict[str, int] = {
    "h100-sxm5": 81559,
    "a100-80gb-sxm4": 81920,
    "a100-40gb-sxm4": 40960,
    "a10": 23028,
    "l40s": 46068,
    "l4": 23034,
    "t4": 15360,
}


class UsableMemory(BaseModel):
    """One GPU's memory, from what the catalog states to what a workload may use."""

    model_config = ConfigDict(frozen=True)

    gpu_id: str
    #: ``memory_gb`` as the catalog states it (the vendor's "GB", which is GiB)
    catalog_gb: float
    #: the catalog's figure in bytes: ``catalog_gb`` x 2^30
    capacity_bytes: int
    #: what the driver keeps (ECC check bits, firmware): never allocatable
    reserved_bytes: int
    #: capacity - reserved: the total nvidia-smi and cudaMemGetInfo show
    runtime_total_bytes: int
    #: Apple: the GPU wired limit (default, or the user's iogpu.wired_limit_mb)
    wired_limit_bytes: int | None = None
    #: the share of the total the engine lets itself use (vLLM 0.9, else 1.0)
    engine_share: float
    #: what the workload may use, bytes
    usable_bytes: int
    #: the most of these one machine or set can have: 1 for an SoC, None: no limit here
    max_devices: int | None = None
    basis: str
    sources: tuple[str, ...]

    @property
    def usable_gb(self) -> float:
        """Usable memory in GB (10^9 bytes), the unit of the memory breakdown."""
        return self.usable_bytes / GB

    @property
    def usable_gib(self) -> float:
        """Usable memory in GiB, the unit nvidia-smi's MiB figures add up to."""
        return self.usable_bytes / GIB

    @property
    def runtime_total_gib(self) -> float:
        return self.runtime_total_bytes / GIB


def default_wired_limit_bytes(capacity_bytes: int) -> int:
    """macOS's default GPU wired limit for ``capacity_bytes`` of unified memory."""
    share = (
        APPLE_SMALL_LIMIT if capacity_bytes <= APPLE_SMALL_MEMORY_GIB * GIB else APPLE_LARGE_LIMIT
    )
    return int(capacity_bytes * share)


def is_apple(entry: CatalogEntry) -> bool:
    return entry.vendor.lower() == "apple"


def _reserved(entry: CatalogEntry, capacity: int) -> tuple[int, str, str | None]:
    """Bytes the driver keeps, the words for it, and the source."""
    reported = REPORTED_TOTAL_MIB.get(entry.id)
    if reported is not None:
        reserved = max(0, capacity - reported * MIB)
        return reserved, f"nvidia-smi shows {reported:,} MiB", NVIDIA_TOTALS_SOURCE
    gddr = "gddr" in (entry.memory_type or "").lower()
    if (
        entry.vendor.lower() == "nvidia"
        and gddr
        and entry.segment is Segment.DATACENTER
        and entry.ecc is True
    ):
        reserved = int(capacity * GDDR_ECC_SHARE)
        return reserved, "ECC on (1/16 of GDDR memory)", NVIDIA_TOTALS_SOURCE
    return 0, "", None


def usable_memory(
    entry: CatalogEntry,
    engine: str | None = None,
    *,
    apple_wired_limit_mb: int | None = None,
    gpu_memory_utilization: float | None = None,
) -> UsableMemory:
    """The bytes of ``entry``'s memory a workload on ``engine`` may use.

    Args:
        entry: the catalog GPU.
        engine: "vllm", "llama.cpp", "tensorrt-llm", "transformers" (None: transformers,
            and training).
        apple_wired_limit_mb: Apple only, the ``iogpu.wired_limit_mb`` the user set
            (None: macOS's default limit).
        gpu_memory_utilization: vLLM's share when not its default 0.9.

    Raises:
        ValueError: a wired limit or a share out of range (the CLI checks first), or an
            entry with no memory size (:func:`gpudesk.memory.fit.exclusion` says so first).
    """
    if entry.memory_gb is None:  # an announced part whose vendor gave no size
        raise ValueError(f"{entry.name} has no memory size in the catalog (not published)")
    capacity = round(entry.memory_gb * GIB)
    reserved, reserved_words, reserved_source = _reserved(entry, capacity)
    total = capacity - reserved
    sources = [CAPACITY_SOURCE]
    words = [f"{entry.memory_gb:g} GB as sold = {entry.memory_gb:g} GiB ({capacity / GB:.2f} GB)"]
    if reserved:
        words.append(f"{reserved_words}: {total / GIB:.2f} GiB")
        assert reserved_source is not None
        sources.append(reserved_source)
    wired: int | None = None
    if is_apple(entry):
        if apple_wired_limit_mb is not None:
            if not 1 <= apple_wired_limit_mb <= MAX_WIRED_LIMIT_MB:
                raise ValueError(f"wired limit {apple_wired_limit_mb} MiB is out of range")
            wired = min(total, apple_wired_limit_mb * MIB)
            words.append(f"GPU wired limit {apple_wired_limit_mb:,} MiB as set (iogpu)")
        else:
            wired = default_wired_limit_bytes(total)
            words.append(
                f"macOS's default GPU wired limit, {wired / total:.0%}: {wired / GIB:.1f} GiB "
                "(raise it with sudo sysctl iogpu.wired_limit_mb=N and give "
                "--apple-wired-limit-mb N)"
            )
        sources.append(APPLE_WIRED_SOURCE)
    share = 1.0
    if engine == "vllm":
        share = VLLM_GPU_MEMORY_UTILIZATION
        if gpu_memory_utilization is not None:
            if not 0 < gpu_memory_utilization <= 1:
                raise ValueError(f"gpu_memory_utilization {gpu_memory_utilization} not in (0, 1]")
            share = gpu_memory_utilization
        words.append(f"× {share:g} (vLLM gpu_memory_utilization)")
        sources.append(VLLM_SHARE_SOURCE)
    base = wired if wired is not None else total
    usable = int(base * share)
    usable_words = f"{usable / GIB:.2f} GiB ({usable / GB:.2f} GB) usable"
    return UsableMemory(
        gpu_id=entry.id,
        catalog_gb=float(entry.memory_gb),
        capacity_bytes=capacity,
        reserved_bytes=reserved,
        runtime_total_bytes=total,
        wired_limit_bytes=wired,
        engine_share=share,
        usable_bytes=usable,
        max_devices=1 if entry.kind is Kind.SOC else None,
        basis="; ".join(words) + f": {usable_words}",
        sources=tuple(sources),
    )


__all__ = [
    "GIB",
    "MIB",
    "REPORTED_TOTAL_MIB",
    "VLLM_GPU_MEMORY_UTILIZATION",
    "UsableMemory",
    "default_wired_limit_bytes",
    "usable_memory",
]
