"""Whether an engine can run a weight and KV format on a device, and on which path.

Issue 41 item 5: a device that cannot run the engine or the format asked for is never
ranked; it is listed with a reason a user can act on. :func:`engine_support` decides from
the rows of ``support.toml`` beside this module, each cited to the engine's own support
matrix, documentation or kernel source (``docs/engine-support.md`` shows the table). Where
the sources disagree or are silent, a row says which way GPUDesk chose: never to rank
what might not run.

The device is placed from its catalog entry alone: vendor, ``kind`` where the catalog has
it, architecture and NVIDIA compute capability (from the architecture's first part when the
entry gives none). ``backend`` matters to llama.cpp only (its compute backends); in
training mode the engine is not used, so the PyTorch rows decide.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.errors import GpuDeskError
from gpudesk.speed.estimate import Backend, Engine, KvFormat, Mode
from gpudesk.workload.quant import QuantFormat

SUPPORT_FILE = "support.toml"


@dataclass(frozen=True, slots=True)
class Support:
    """One decision: can it run, and if so how are the weights computed.

    ``reason`` is set exactly when ``supported`` is false; ``weight_path`` exactly when it
    is true. ``source`` cites the table row that decided.
    """

    supported: bool
    reason: str | None
    weight_path: str | None
    source: str


@dataclass(frozen=True, slots=True)
class Row:
    """One row of ``support.toml``."""

    id: str
    engine: str
    claim: str
    source: str
    conservative: str | None = None


class SupportTableError(GpuDeskError, ValueError):
    """``support.toml`` (shipped with GPUDesk) is broken: a bug, not a user's input."""


_ROW_KEYS = {"id", "engine", "claim", "source", "conservative"}


@functools.cache
def support_rows() -> dict[str, Row]:
    """The rows of ``support.toml`` by id (read once)."""
    text = resources.files("gpudesk.speed").joinpath(SUPPORT_FILE).read_text("utf-8")
    return parse_rows(text)


def parse_rows(text: str) -> dict[str, Row]:
    """Rows from the text of a support table; raises :class:`SupportTableError`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SupportTableError(f"{SUPPORT_FILE}: {exc}") from exc
    raw_rows = data.get("row")
    if set(data) != {"row"} or not isinstance(raw_rows, list) or not raw_rows:
        raise SupportTableError(f"{SUPPORT_FILE}: expected only [[row]] tables")
    rows: dict[str, Row] = {}
    for number, raw in enumerate(raw_rows, start=1):
        where = f"{SUPPORT_FILE} row {number}"
        if not isinstance(raw, dict) or not {"id", "engine", "claim", "source"} <= set(raw):
            raise SupportTableError(f"{where}: needs id, engine, claim and source")
        unknown = set(raw) - _ROW_KEYS
        if unknown:
            raise SupportTableError(f"{where}: unknown keys {sorted(unknown)}")
        if not all(isinstance(value, str) and value.strip() for value in raw.values()):
            raise SupportTableError(f"{where}: every value must be non-empty text")
        row = Row(**raw)
        if row.id in rows:
            raise SupportTableError(f"{where}: id {row.id!r} repeats")
        rows[row.id] = row
    return rows


def row_citation(row_id: str) -> str:
    """What a decision's ``source`` says: the row's claim basis and its source."""
    row = support_rows()[row_id]
    return f"{row.engine}: {row.source}"


# -- placing a device --------------------------------------------------------------------


class Family(StrEnum):
    """The device families the table has rows for."""

    NVIDIA = "nvidia"
    AMD = "amd"
    INTEL_GPU = "intel-gpu"
    GAUDI = "gaudi"
    APPLE = "apple"
    TPU = "tpu"
    NEURON = "neuron"  # AWS Trainium / Inferentia
    ASCEND = "ascend"
    QUALCOMM = "qualcomm"
    #: the host processor (``speed --verify``'s "this machine's CPU" device)
    CPU = "cpu"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Device:
    """What the table needs to know about one catalog entry."""

    family: Family
    name: str
    #: NVIDIA compute capability (major, minor); None when unknown or not NVIDIA
    capability: tuple[int, int] | None = None
    #: AMD generation: "cdna1".."cdna4", "rdna2", "rdna3", "rdna3.5", "rdna4"
    amd: str | None = None
    #: Intel GPU generation: "xe-hpc" (Data Center Max), "xe-hpg" (Arc A), "xe2" (Arc B),
    #: "xe-lpg" (integrated)
    intel: str | None = None
    #: the catalog's ``kind`` where it has one (gpu, soc, tpu, npu, asic)
    kind: str | None = None
    #: the generation a plugin's page names ("v5e", "trainium2", "910"); "" when unknown
    generation: str = ""

    @property
    def capability_text(self) -> str:
        if self.capability is None:
            return "of unknown compute capability"
        return f"compute capability {self.capability[0]}.{self.capability[1]}"

    def capability_at_least(self, major: int, minor: int = 0) -> bool:
        return self.capability is not None and self.capability >= (major, minor)


#: NVIDIA architecture names -> the compute capability of the generation's first part,
#: for entries that state none (NVIDIA CUDA GPUs list; lowest member, so a check against
#: it never credits a part with more than its generation has). Order matters: "blackwell
#: ultra" before "blackwell".
_NVIDIA_ARCHITECTURES: tuple[tuple[str, tuple[int, int]], ...] = (
    ("blackwell ultra", (10, 3)),
    ("blackwell", (10, 0)),
    ("hopper", (9, 0)),
    ("ada", (8, 9)),
    ("ampere", (8, 0)),
    ("turing", (7, 5)),
    ("volta", (7, 0)),
    ("pascal", (6, 0)),
    ("maxwell", (5, 0)),
)
_CAPABILITY = re.compile(r"^(\d{1,2})\.(\d{1,2})$")
_AMD_GENERATION = re.compile(r"\b(cdna|rdna)\s*(\d(?:\.\d)?)")
_VENDORS = {
    "nvidia": Family.NVIDIA,
    "amd": Family.AMD,
    "apple": Family.APPLE,
    "google": Family.TPU,
    "aws": Family.NEURON,
    "amazon": Family.NEURON,
    "huawei": Family.ASCEND,
    "qualcomm": Family.QUALCOMM,
    "cpu": Family.CPU,
}


def _text(value: object) -> str:
    return value.casefold() if isinstance(value, str) else ""


def _kind_of(entry: CatalogEntry) -> str | None:
    kind = getattr(entry, "kind", None)
    if kind is None:
        return None
    value = getattr(kind, "value", kind)
    return value.casefold() if isinstance(value, str) else None


def device_of(entry: CatalogEntry) -> Device:
    """Place a catalog entry in the table's families (``Family.OTHER`` when it cannot)."""
    vendor = _text(getattr(entry, "vendor", None)).strip()
    architecture = _text(getattr(entry, "architecture", None))
    name = str(getattr(entry, "name", None) or getattr(entry, "id", "this device"))
    words = f"{architecture} {name.casefold()} {_text(getattr(entry, 'id', None))}"
    kind = _kind_of(entry)
    if vendor == "intel":
        if "gaudi" in words:
            return Device(Family.GAUDI, name, kind=kind)
        return Device(Family.INTEL_GPU, name, intel=_intel_generation(words), kind=kind)
    family = _VENDORS.get(vendor, Family.OTHER)
    if family is Family.NVIDIA:
        return Device(family, name, capability=_nvidia_capability(entry, architecture), kind=kind)
    if family is Family.AMD:
        match = _AMD_GENERATION.search(architecture)
        amd = f"{match.group(1)}{match.group(2)}" if match else None
        return Device(family, name, amd=amd, kind=kind)
    if family in (Family.TPU, Family.NEURON, Family.ASCEND):
        return Device(family, name, kind=kind, generation=_generation(family, words))
    return Device(family, name, kind=kind)


def _nvidia_capability(entry: CatalogEntry, architecture: str) -> tuple[int, int] | None:
    stated = getattr(entry, "compute_capability", None)
    if isinstance(stated, str):
        match = _CAPABILITY.match(stated.strip())
        if match:
            return int(match.group(1)), int(match.group(2))
    for needle, capability in _NVIDIA_ARCHITECTURES:
        if needle in architecture:
            return capability
    return None


def _intel_generation(words: str) -> str | None:
    if "xe hpc" in words or "xe-hpc" in words or "ponte vecchio" in words or "max" in words:
        return "xe-hpc"
    if "xe2" in words or "battlemage" in words or "xe3" in words:
        return "xe2"
    if "xe-hpg" in words or "xe hpg" in words or "alchemist" in words or "flex" in words:
        return "xe-hpg"
    if "xe-lpg" in words or "xe lpg" in words or "iris" in words or "uhd" in words:
        return "xe-lpg"
    return None


def _generation(family: Family, words: str) -> str:
    """The generation token the plugin pages name ("v6e", "trainium2", "910"), or ""."""
    if family is Family.TPU:
        match = re.search(r"\bv(\d+)\s*([a-z]?)\b", words)
        if match is None:  # Google's newer naming: "TPU7x"
            match = re.search(r"\btpu\s*(\d+)\s*([a-z]?)\b", words)
        return f"v{match.group(1)}{match.group(2)}" if match else ""
    if family is Family.NEURON:
        match = re.search(r"(trainium|inferentia)\s*(\d?)", words)
        return f"{match.group(1)}{match.group(2) or '1'}" if match else ""
    match = re.search(r"\b(9\d0)", words)
    return match.group(1) if match else ""


# -- the decision ------------------------------------------------------------------------


def _yes(row_id: str, weight_path: str) -> Support:
    return Support(True, None, weight_path, row_citation(row_id))


def _no(row_id: str, reason: str) -> Support:
    return Support(False, reason, None, row_citation(row_id))


#: What each family's dense 16-bit matrix units are called.
_MATRIX_UNITS = {
    Family.NVIDIA: "tensor cores",
    Family.AMD: "matrix cores",
    Family.INTEL_GPU: "XMX engines",
    Family.GAUDI: "matrix engines (MME)",
    Family.TPU: "matrix units (MXU)",
    Family.NEURON: "tensor engines",
    Family.ASCEND: "cube units",
    Family.APPLE: "GPU (MPS)",
}


def _plain_path(device: Device, quant: QuantFormat) -> str:
    """How unquantised weights are computed: fp32 stays fp32, 16-bit on matrix units."""
    if quant is QuantFormat.FP32:
        return "fp32 math"
    return f"{quant.value} on {_MATRIX_UNITS.get(device.family, 'the device')}"


_FOUR_BIT = (QuantFormat.INT4, QuantFormat.AWQ, QuantFormat.GPTQ, QuantFormat.NF4)
_LLAMA_KV = (KvFormat.Q8_0, KvFormat.Q4_0)
#: caches every engine keeps (bf16 on NVIDIA from compute capability 8.0)
_PLAIN_KV = (KvFormat.FP32, KvFormat.FP16, KvFormat.BF16)


def engine_support(
    entry: CatalogEntry,
    engine: Engine,
    *,
    quant: QuantFormat,
    kv: KvFormat,
    backend: Backend | None = None,
    mode: Mode = Mode.SERVE,
) -> Support:
    """Whether ``engine`` runs ``quant`` weights and a ``kv`` cache on ``entry``.

    Never raises for any catalog entry: a device the table cannot place is "not supported"
    with a reason.
    """
    device = device_of(entry)
    if mode is Mode.TRAIN:
        return _training(device, quant)
    if engine is Engine.TENSORRT_LLM:
        return _tensorrt_llm(device, quant, kv)
    if engine is Engine.VLLM:
        return _vllm(device, quant, kv)
    if engine is Engine.SGLANG:
        return _sglang(device, quant, kv)
    if engine is Engine.LLAMA_CPP:
        return _llama_cpp(device, quant, kv, backend)
    return _transformers(device, quant, kv)


def _unplaced(device: Device, engine: str) -> Support:
    return _no(
        "unknown-device",
        f"GPUDesk cannot tell which {engine} support row applies to {device.name} "
        "(unknown vendor, architecture or compute capability)",
    )


def _bf16_refused(device: Device, row_id: str, *, kv: bool = False) -> Support | None:
    """The bf16 rule on NVIDIA: compute capability 8.0 or later."""
    if device.family is Family.NVIDIA and not device.capability_at_least(8, 0):
        flag = "--kv-quant fp16" if kv else "--quant fp16"
        return _no(
            row_id,
            f"bf16 needs NVIDIA compute capability 8.0 or later; {device.name} is "
            f"{device.capability_text}: try {flag}",
        )
    return None


# -- TensorRT-LLM --


#: Compute capabilities TensorRT-LLM's support matrix lists (SM80/86/89/90/100/103/120/121).
_TRTLLM_CAPABILITIES = frozenset(
    {(8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (12, 0), (12, 1)}
)


def _tensorrt_llm(device: Device, quant: QuantFormat, kv: KvFormat) -> Support:
    if device.family is not Family.NVIDIA:
        other = "llama.cpp" if device.family in (Family.APPLE, Family.QUALCOMM) else "vllm"
        return _no(
            "trtllm-platform", f"TensorRT-LLM runs on NVIDIA GPUs only: try --engine {other}"
        )
    if device.capability is None:
        return _unplaced(device, "TensorRT-LLM")
    if device.capability not in _TRTLLM_CAPABILITIES:
        listed = "SM80, SM86, SM89, SM90, SM100, SM103, SM120 and SM121"
        return _no(
            "trtllm-platform",
            f"TensorRT-LLM's current support matrix lists {listed} (Ampere and later); "
            f"{device.name} is {device.capability_text}: try --engine vllm",
        )
    weights = _tensorrt_llm_weights(device, quant)
    if not weights.supported:
        return weights
    if kv in _LLAMA_KV:
        return _no("trtllm-kv", f"{kv.value} is a llama.cpp KV cache format: try --kv-quant fp8")
    if kv not in (*_PLAIN_KV, KvFormat.FP8):
        return _no("trtllm-kv", f"TensorRT-LLM has no {kv.value} KV cache: try --kv-quant fp8")
    return weights


def _tensorrt_llm_weights(device: Device, quant: QuantFormat) -> Support:
    if quant.is_gguf:
        return _no("trtllm-formats", "GGUF files run in llama.cpp: try --engine llama.cpp")
    if quant is QuantFormat.NF4:
        return _no("trtllm-formats", "TensorRT-LLM has no bitsandbytes NF4: try --quant awq")
    if quant is QuantFormat.FP8:
        if device.capability_at_least(8, 9):
            return _yes("trtllm-fp8", "FP8 tensor cores")
        return _no(
            "trtllm-fp8",
            "TensorRT-LLM's FP8 needs NVIDIA compute capability 8.9 or later; "
            f"{device.name} is {device.capability_text}: try --quant int8 or --quant awq",
        )
    if quant is QuantFormat.MXFP4:
        if device.capability_at_least(10, 0):
            return _yes("trtllm-mxfp4", "MXFP4 tensor cores (MXFP8 activations)")
        if device.capability_at_least(9, 0):
            return _yes("trtllm-mxfp4", "MXFP4 via the Triton MoE backend (bf16 math)")
        return _no(
            "trtllm-mxfp4",
            "TensorRT-LLM runs MXFP4 on Hopper and Blackwell only: try --engine vllm "
            "(Marlin) or --quant bf16",
        )
    if quant is QuantFormat.INT8:
        return _yes("trtllm-int", "int8 tensor cores (SmoothQuant W8A8)")
    if quant in _FOUR_BIT:
        return _yes("trtllm-int", "INT4 weight-only kernel (16-bit math)")
    if quant.is_plain:
        return _yes("trtllm-platform", _plain_path(device, quant))
    return _no(
        "trtllm-formats", f"TensorRT-LLM has no {quant.label} recipe: try --quant fp8 or awq"
    )


# -- vLLM --


_VLLM_AMD = frozenset({"cdna2", "cdna3", "cdna4", "rdna3", "rdna3.5", "rdna4"})
#: v7 / v7x: Ironwood (tpu-inference's docs since its pull request #1377, 2025-12-29)
_VLLM_TPU = frozenset({"v4", "v5e", "v5p", "v6e", "v7", "v7x"})
_VLLM_NEURON = frozenset({"trainium1", "trainium2", "inferentia2"})


def _vllm(device: Device, quant: QuantFormat, kv: KvFormat) -> Support:
    refused = _vllm_platform(device)
    if refused is not None:
        return refused
    if quant.is_gguf:
        return _no(
            "vllm-gguf",
            "vLLM's GGUF support is experimental and under-optimised: run GGUF in "
            "llama.cpp (--engine llama.cpp) or use --quant awq/gptq/fp8 with vLLM",
        )
    weights = _vllm_weights(device, quant)
    if not weights.supported:
        return weights
    kv_refused = _vllm_kv(device, kv)
    return kv_refused if kv_refused is not None else weights


def _vllm_platform(device: Device) -> Support | None:
    family = device.family
    if family is Family.CPU:
        # vLLM has CPU builds, but GPUDesk estimates and measures vLLM on GPUs only
        return _no(
            "vllm-cuda",
            f"GPUDesk estimates vLLM on GPUs, not {device.name}: try --engine llama.cpp "
            "(its CPU backend) or give --gpu this machine's GPU",
        )
    if family is Family.NVIDIA:
        if device.capability is None:
            return _unplaced(device, "vLLM")
        if not device.capability_at_least(7, 0):
            return _no(
                "vllm-cuda",
                f"vLLM needs NVIDIA compute capability 7.0 or later; {device.name} is "
                f"{device.capability_text}: try --engine llama.cpp",
            )
        return None
    if family is Family.AMD:
        if device.amd not in _VLLM_AMD:
            return _no(
                "vllm-rocm",
                f"vLLM's ROCm build lists MI200, MI300, MI350, Radeon RX 7900 and RX 9000 "
                f"GPUs, not {device.name}: try --engine llama.cpp",
            )
        return None
    if family is Family.INTEL_GPU:
        if device.intel not in ("xe-hpc", "xe-hpg", "xe2"):
            return _no(
                "vllm-xpu",
                f"vLLM's XPU backend lists Intel Data Center and Arc GPUs, not {device.name}: "
                "try --engine llama.cpp",
            )
        return None
    if family is Family.GAUDI:
        return None
    if family is Family.TPU:
        if device.generation not in _VLLM_TPU:
            return _no(
                "vllm-plugins",
                f"vLLM's TPU pages list TPU v4, v5e, v5p, v6e and v7x, not {device.name}",
            )
        return None
    if family is Family.NEURON:
        if device.generation not in _VLLM_NEURON:
            return _no(
                "vllm-plugins",
                f"vLLM's Neuron integration lists NeuronCore-v2/v3 (Trainium 1 and 2, "
                f"Inferentia 2), not {device.name}",
            )
        return None
    if family is Family.ASCEND:
        if not device.generation.startswith("910"):
            return _no(
                "vllm-plugins", f"vllm-ascend's pages name the Ascend 910 series, not {device.name}"
            )
        return None
    if family is Family.APPLE:
        return _no(
            "vllm-apple",
            "vLLM has no Apple GPU backend of its own (only the community vLLM-Metal "
            "plugin for MLX models): try --engine llama.cpp",
        )
    if family is Family.QUALCOMM:
        return _no("vllm-plugins", "vLLM lists no Qualcomm backend: try --engine llama.cpp")
    return _unplaced(device, "vLLM")


def _vllm_weights(device: Device, quant: QuantFormat) -> Support:
    family = device.family
    if quant.is_plain:
        if quant is QuantFormat.BF16:
            refused = _bf16_refused(device, "vllm-bf16")
            if refused is not None:
                return refused
        return _yes(
            "vllm-bf16" if family is Family.NVIDIA else _vllm_platform_row(device),
            _plain_path(device, quant),
        )
    if family is Family.NVIDIA:
        return _vllm_nvidia_weights(device, quant)
    if family is Family.AMD:
        return _vllm_amd_weights(device, quant)
    if family is Family.INTEL_GPU:
        if quant in (QuantFormat.AWQ, QuantFormat.GPTQ):
            return _yes("vllm-int", f"{quant.value.upper()} INT4 kernel on XPU (16-bit math)")
        if quant is QuantFormat.MXFP4:
            return _yes("vllm-mxfp4", "MXFP4 via IPEX Marlin on XPU (16-bit math)")
    elif family is Family.GAUDI:
        if quant is QuantFormat.FP8:
            return _yes("vllm-gaudi-fp8", "FP8 matrix engines (Intel Neural Compressor)")
    elif family is Family.TPU and quant is QuantFormat.INT8:
        return _yes("vllm-int", "int8 matrix units (W8A8)")
    return _no(
        "vllm-int" if quant is not QuantFormat.FP8 else "vllm-fp8",
        f"vLLM's support table has no {quant.label} kernel for {device.name}: try --quant bf16",
    )


def _vllm_platform_row(device: Device) -> str:
    return {
        Family.AMD: "vllm-rocm",
        Family.INTEL_GPU: "vllm-xpu",
    }.get(device.family, "vllm-plugins")


def _nvidia_fp8(device: Device, row: str, engine: str) -> Support:
    """FP8 weights on an NVIDIA GPU for vLLM and SGLang alike: FP8 tensor cores from
    compute capability 8.9, the Marlin weight-only kernel from 8.0 (both engines ship
    it, each row cites its own source)."""
    if device.capability_at_least(8, 9):
        return _yes(row, "FP8 tensor cores")
    if device.capability_at_least(8, 0):
        return _yes(row, "Marlin FP8 weight-only kernel (16-bit math)")
    return _no(
        row,
        f"{engine} computes FP8 from compute capability 8.9 and runs FP8 weights through "
        f"Marlin from 8.0; {device.name} is {device.capability_text}: try --quant awq or "
        "--quant fp16",
    )


def _vllm_nvidia_weights(device: Device, quant: QuantFormat) -> Support:
    name, capability = device.name, device.capability_text
    if quant is QuantFormat.FP8:
        return _nvidia_fp8(device, "vllm-fp8", "vLLM")
    if quant is QuantFormat.MXFP4:
        if (10, 0) <= (device.capability or (0, 0)) < (11, 0):
            return _yes("vllm-mxfp4", "MXFP4 via FlashInfer (Blackwell)")
        if device.capability_at_least(9, 0):
            return _yes("vllm-mxfp4", "MXFP4 via Triton kernels (16-bit math)")
        if device.capability_at_least(8, 0):
            return _yes("vllm-mxfp4", "MXFP4 via Marlin (16-bit math)")
        return _no(
            "vllm-mxfp4",
            f"vLLM runs MXFP4 from compute capability 8.0; {name} is {capability}: "
            "try --engine llama.cpp",
        )
    if quant is QuantFormat.INT8:
        if device.capability_at_least(7, 5):
            return _yes("vllm-int", "int8 tensor cores (W8A8)")
        return _no(
            "vllm-int",
            f"vLLM's INT8 W8A8 needs Turing or later; {name} is {capability}: try --quant gptq",
        )
    if quant is QuantFormat.AWQ:
        if device.capability_at_least(8, 0):
            return _yes("vllm-int", "Marlin INT4 kernel (16-bit math)")
        if device.capability_at_least(7, 5):
            return _yes("vllm-int", "AWQ INT4 kernel (16-bit math)")
        return _no(
            "vllm-int",
            f"vLLM's AWQ needs Turing or later; {name} is {capability}: try --quant gptq",
        )
    if quant is QuantFormat.GPTQ:
        if device.capability_at_least(8, 0):
            return _yes("vllm-int", "Marlin INT4 kernel (16-bit math)")
        return _yes("vllm-int", "GPTQ INT4 kernel (16-bit math)")
    if quant is QuantFormat.INT4:
        if device.capability_at_least(8, 0):
            return _yes("vllm-int", "Marlin INT4 kernel (16-bit math)")
        return _no(
            "vllm-int",
            f"vLLM's INT4 W4A16 (Marlin) needs Ampere or later; {name} is {capability}: "
            "try --quant gptq",
        )
    if quant is QuantFormat.NF4:  # bitsandbytes: Volta and later, every GPU vLLM runs on
        return _yes("vllm-int", "bitsandbytes NF4 kernel (16-bit math)")
    return _no("vllm-int", f"vLLM's support table has no {quant.label} kernel: try --quant awq")


def _vllm_amd_weights(device: Device, quant: QuantFormat) -> Support:
    if quant is QuantFormat.FP8:
        if device.amd in ("cdna3", "cdna4", "rdna4"):
            return _yes("vllm-fp8", "FP8 matrix cores")
        return _no(
            "vllm-fp8",
            f"FP8 needs AMD CDNA 3 or later, or RDNA 4; {device.name} is not: try --quant fp16",
        )
    if quant is QuantFormat.MXFP4:
        if device.amd == "cdna4":
            return _yes("vllm-mxfp4", "MXFP4 matrix cores (CDNA 4)")
        if device.amd == "cdna3":
            return _yes("vllm-mxfp4", "MXFP4 via Triton kernels (16-bit math)")
        return _no(
            "vllm-mxfp4",
            f"vLLM runs MXFP4 on AMD CDNA 3 and CDNA 4 only, not {device.name}: try --quant bf16",
        )
    return _no(
        "vllm-int",
        f"vLLM's support table marks {quant.label} unsupported on AMD GPUs: try --quant fp16"
        + (" or --quant fp8" if device.amd in ("cdna3", "cdna4", "rdna4") else ""),
    )


def _vllm_kv(device: Device, kv: KvFormat) -> Support | None:
    if kv in _LLAMA_KV:
        return _no("vllm-kv", f"{kv.value} is a llama.cpp KV cache format: try --kv-quant fp8")
    if kv is KvFormat.BF16:
        return _bf16_refused(device, "vllm-bf16", kv=True)
    if kv is KvFormat.FP8:
        if device.family is Family.AMD:
            return None
        if device.family is Family.NVIDIA:
            if device.capability_at_least(8, 0):
                return None
            return _no(
                "vllm-kv",
                f"vLLM's FP8 KV cache is not documented below compute capability 8.0; "
                f"{device.name} is {device.capability_text}: try --kv-quant fp16",
            )
        return _no(
            "vllm-kv",
            f"vLLM's FP8 KV cache is documented for CUDA and ROCm only, not {device.name}: "
            "try --kv-quant fp16",
        )
    if kv in _PLAIN_KV:
        return None
    return _no("vllm-kv", f"vLLM has no {kv.value} KV cache: try --kv-quant fp8")


# -- SGLang --


def _sglang(device: Device, quant: QuantFormat, kv: KvFormat) -> Support:
    refused = _sglang_platform(device)
    if refused is not None:
        return refused
    weights = _sglang_weights(device, quant)
    if not weights.supported:
        return weights
    kv_refused = _sglang_kv(device, kv)
    return kv_refused if kv_refused is not None else weights


def _sglang_platform(device: Device) -> Support | None:
    family = device.family
    if family is Family.NVIDIA:
        if device.capability is None:
            return _unplaced(device, "SGLang")
        if not device.capability_at_least(7, 5):
            return _no(
                "sglang-cuda",
                f"SGLang needs NVIDIA compute capability 7.5 (sm75) or later; {device.name} "
                f"is {device.capability_text}: try --engine vllm",
            )
        return None
    if family is Family.AMD:
        if device.amd not in ("cdna3", "cdna4"):
            return _no(
                "sglang-rocm",
                "SGLang's ROCm kernels build for MI300-series (gfx942) and MI350-series "
                f"(gfx950) GPUs only, not {device.name}: try --engine vllm",
            )
        return None
    if family is Family.ASCEND and device.generation.startswith("910"):
        return None
    other = "llama.cpp" if family in (Family.APPLE, Family.QUALCOMM, Family.CPU) else "vllm"
    return _no(
        "sglang-platforms",
        f"GPUDesk estimates SGLang on NVIDIA GPUs, AMD Instinct MI300/MI350 and Ascend 910 "
        f"NPUs, not {device.name}: try --engine {other}",
    )


def _sglang_weights(device: Device, quant: QuantFormat) -> Support:
    family = device.family
    if quant.is_gguf:
        return _no(
            "sglang-formats",
            "GPUDesk prices GGUF files as llama.cpp runs them: try --engine llama.cpp, or "
            "--quant awq/gptq/fp8 with SGLang",
        )
    if quant.is_plain:
        if quant is QuantFormat.BF16:
            refused = _bf16_refused(device, "sglang-cuda")
            if refused is not None:
                return refused
        return _yes(_sglang_platform_row(device), _plain_path(device, quant))
    if family is Family.NVIDIA:
        return _sglang_nvidia_weights(device, quant)
    if family is Family.AMD:
        if quant is QuantFormat.FP8:
            return _yes("sglang-fp8", "FP8 matrix cores (aiter or Triton)")
        if quant is QuantFormat.MXFP4:
            if device.amd == "cdna4":
                return _yes("sglang-mxfp4", "MXFP4 matrix cores (aiter, CDNA 4)")
            return _yes("sglang-mxfp4", "MXFP4 via aiter kernels (16-bit math)")
        if quant is QuantFormat.INT8:
            return _yes("sglang-int", "int8 matrix cores (W8A8)")
        if quant in (QuantFormat.AWQ, QuantFormat.GPTQ):
            return _yes(
                "sglang-int", f"{quant.value.upper()} via Triton dequantisation (16-bit math)"
            )
    elif family is Family.ASCEND and quant in (QuantFormat.AWQ, QuantFormat.GPTQ):
        return _yes("sglang-int", f"{quant.value.upper()} CANN kernel (16-bit math)")
    return _no(
        "sglang-formats",
        f"SGLang's quantization table has no {quant.label} kernel for {device.name}: "
        "try --quant bf16",
    )


def _sglang_platform_row(device: Device) -> str:
    return {Family.NVIDIA: "sglang-cuda", Family.AMD: "sglang-rocm"}.get(
        device.family, "sglang-platforms"
    )


def _sglang_nvidia_weights(device: Device, quant: QuantFormat) -> Support:
    name, capability = device.name, device.capability_text
    if quant is QuantFormat.FP8:
        return _nvidia_fp8(device, "sglang-fp8", "SGLang")
    if quant is QuantFormat.MXFP4:
        if (10, 0) <= (device.capability or (0, 0)) < (11, 0):
            return _yes("sglang-mxfp4", "MXFP4 via FlashInfer (Blackwell)")
        if device.capability_at_least(9, 0):
            return _yes("sglang-mxfp4", "MXFP4 via Triton kernels (16-bit math)")
        return _no(
            "sglang-mxfp4",
            f"GPUDesk ranks SGLang's MXFP4 from compute capability 9.0 (Hopper); {name} is "
            f"{capability}: try --engine vllm (Marlin) or --quant bf16",
        )
    if quant is QuantFormat.INT8:
        return _yes("sglang-int", "int8 tensor cores (W8A8)")
    if quant in (QuantFormat.AWQ, QuantFormat.GPTQ, QuantFormat.INT4):
        if device.capability_at_least(8, 0):
            return _yes("sglang-int", "Marlin INT4 kernel (16-bit math)")
        if quant is QuantFormat.INT4:
            return _no(
                "sglang-int",
                f"INT4 W4A16 runs through Marlin from Ampere; {name} is {capability}: "
                "try --quant gptq",
            )
        return _yes("sglang-int", f"{quant.value.upper()} INT4 kernel (16-bit math)")
    if quant is QuantFormat.NF4:
        return _yes("sglang-int", "bitsandbytes NF4 kernel (16-bit math)")
    return _no(
        "sglang-formats",
        f"SGLang's quantization table has no {quant.label} kernel: try --quant awq",
    )


def _sglang_kv(device: Device, kv: KvFormat) -> Support | None:
    if kv in _LLAMA_KV:
        return _no("sglang-kv", f"{kv.value} is a llama.cpp KV cache format: try --kv-quant fp8")
    if kv is KvFormat.BF16:
        return _bf16_refused(device, "sglang-cuda", kv=True)
    if kv is KvFormat.FP8:
        if device.family is Family.AMD or device.capability_at_least(8, 0):
            return None
        where = device.capability_text if device.family is Family.NVIDIA else "not a GPU"
        return _no(
            "sglang-kv",
            f"GPUDesk ranks SGLang's FP8 KV cache on NVIDIA GPUs from compute capability 8.0 "
            f"and on AMD GPUs; {device.name} is {where}: try --kv-quant fp16",
        )
    if kv in _PLAIN_KV:
        return None
    return _no("sglang-kv", f"SGLang has no {kv.value} KV cache: try --kv-quant fp8")


# -- llama.cpp --


_LLAMA_VENDOR_BACKENDS: dict[Backend, tuple[Family, ...]] = {
    Backend.CUDA: (Family.NVIDIA,),
    Backend.ROCM: (Family.AMD,),
    Backend.METAL: (Family.APPLE,),
    Backend.SYCL: (Family.INTEL_GPU,),
    Backend.VULKAN: (Family.NVIDIA, Family.AMD, Family.INTEL_GPU),
}
_LLAMA_DEFAULT = {
    Family.NVIDIA: Backend.CUDA,
    Family.AMD: Backend.ROCM,
    Family.APPLE: Backend.METAL,
    Family.INTEL_GPU: Backend.SYCL,
    Family.CPU: Backend.CPU,
}
#: backends whose flash attention takes q8_0/q4_0 K and V, and which have MXFP4 kernels
_LLAMA_QUANT_KV = frozenset(
    {Backend.CUDA, Backend.ROCM, Backend.METAL, Backend.VULKAN, Backend.CPU}
)


def _llama_cpp(
    device: Device, quant: QuantFormat, kv: KvFormat, backend: Backend | None
) -> Support:
    chosen, refused = _llama_backend(device, backend)
    if refused is not None:
        return refused
    if chosen is None:
        # A backend the enum does not name yet: CANN on Ascend, OpenCL on Adreno
        own = "CANN" if device.family is Family.ASCEND else "OpenCL (Adreno)"
        return _llama_cpp_formats(device, quant, kv, None, f"llama.cpp {own} backend")
    return _llama_cpp_formats(device, quant, kv, chosen, _llama_path(device, chosen))


def _llama_backend(
    device: Device, backend: Backend | None
) -> tuple[Backend | None, Support | None]:
    if backend is Backend.CPU:
        return Backend.CPU, None
    if backend is None:
        if device.family in _LLAMA_DEFAULT:
            if device.family is Family.INTEL_GPU and device.intel is None:
                return None, _unplaced(device, "llama.cpp")
            return _LLAMA_DEFAULT[device.family], None
        if device.family is Family.ASCEND or (
            device.family is Family.QUALCOMM and device.kind == "soc"
        ):
            return None, None
        return None, _no(
            "llama-cpp-backends",
            f"llama.cpp has no backend for {device.name} (CUDA, HIP, Metal, SYCL, Vulkan, "
            "CANN, OpenCL and CPU only): try --engine vllm",
        )
    targets = _LLAMA_VENDOR_BACKENDS.get(backend, ())
    if device.family not in targets:
        default = _LLAMA_DEFAULT.get(device.family)
        hint = f": try --backend {default.value}" if default is not None else ""
        return None, _no(
            "llama-cpp-backends",
            f"llama.cpp's {backend.value} backend does not target {device.name}{hint}",
        )
    return backend, None


def _llama_path(device: Device, backend: Backend) -> str:
    if backend is Backend.CPU:
        return "host CPU SIMD (llama.cpp CPU backend)"
    if backend is Backend.CUDA:
        if device.capability_at_least(7, 5):
            return "int8 tensor cores (llama.cpp MMQ)"
        return "int8 dp4a dot products (llama.cpp MMQ)"
    return {
        Backend.ROCM: "int8 kernels (llama.cpp MMQ on HIP)",
        Backend.METAL: "Metal quantised matmul kernels (16-bit math)",
        Backend.SYCL: "SYCL quantised matmul kernels",
        Backend.VULKAN: "Vulkan quantised matmul shaders",
    }[backend]


def _llama_cpp_formats(
    device: Device, quant: QuantFormat, kv: KvFormat, backend: Backend | None, path: str
) -> Support:
    if not (quant.is_gguf or quant.is_plain or quant is QuantFormat.MXFP4):
        hint = "q4_k_m" if quant in _FOUR_BIT else "q8_0"
        return _no(
            "llama-cpp-formats",
            f"llama.cpp runs GGUF files, and {quant.label} is not a GGUF type: try --quant {hint}",
        )
    if quant is QuantFormat.MXFP4 and backend not in _LLAMA_QUANT_KV:
        return _no(
            "llama-cpp-mxfp4",
            f"llama.cpp's MXFP4 kernels are documented for CPU, CUDA, HIP, Metal and Vulkan, "
            f"not the {_backend_words(backend, path)}: try --quant q4_k_m",
        )
    if backend is Backend.CUDA and (quant is QuantFormat.BF16 or kv is KvFormat.BF16):
        refused = _bf16_refused(device, "llama-cpp-bf16", kv=quant is not QuantFormat.BF16)
        if refused is not None:
            return refused
    if kv not in (*_PLAIN_KV, *_LLAMA_KV):
        return _no("llama-cpp-kv", f"llama.cpp has no {kv.value} KV cache: try --kv-quant q8_0")
    if kv in _LLAMA_KV and backend not in _LLAMA_QUANT_KV:
        where = _backend_words(backend, path)
        return _no(
            "llama-cpp-kv",
            f"a {kv.value} KV cache needs llama.cpp's flash attention with quantised K/V, "
            f"documented for CUDA, HIP, Metal, Vulkan and CPU, not the {where}: "
            "try --kv-quant fp16",
        )
    if quant.is_plain:
        return _yes(
            "llama-cpp-gguf", f"{quant.value} GGUF tensors ({_backend_words(backend, path)})"
        )
    if quant is QuantFormat.MXFP4:
        return _yes("llama-cpp-mxfp4", f"MXFP4 GGUF ({_backend_words(backend, path)})")
    return _yes("llama-cpp-gguf", path)


def _backend_words(backend: Backend | None, path: str) -> str:
    """ "llama.cpp cuda backend"; for a backend the enum does not name, its path words."""
    return f"llama.cpp {backend.value} backend" if backend is not None else path


# -- transformers and training --


_TORCH_FAMILIES = (Family.NVIDIA, Family.AMD, Family.INTEL_GPU, Family.APPLE)
_TRAIN_FAMILIES = (*_TORCH_FAMILIES, Family.TPU, Family.NEURON, Family.GAUDI, Family.ASCEND)


def _torch_platform(device: Device, families: tuple[Family, ...], row_id: str) -> Support | None:
    if device.family not in families:
        if device.family is Family.OTHER:
            return _unplaced(device, "PyTorch")
        return _no(
            row_id,
            f"plain transformers runs on CUDA, ROCm, XPU and MPS devices; {device.name} "
            "needs its own stack: try --engine vllm",
        )
    if device.family is Family.NVIDIA and device.capability is None:
        return _unplaced(device, "PyTorch")
    if device.family is Family.AMD and device.amd not in _VLLM_AMD:
        return _no(
            row_id, f"PyTorch's ROCm builds do not list {device.name}: try --engine llama.cpp"
        )
    if device.family is Family.INTEL_GPU and device.intel not in ("xe-hpc", "xe-hpg", "xe2"):
        return _unplaced(device, "PyTorch")
    return None


def _transformers(device: Device, quant: QuantFormat, kv: KvFormat) -> Support:
    refused = _torch_platform(device, _TORCH_FAMILIES, "torch-platform")
    if refused is not None:
        return refused
    weights = _torch_weights(device, quant)
    if not weights.supported:
        return weights
    if kv not in _PLAIN_KV:
        return _no(
            "torch-kv",
            f"transformers keeps the KV cache in 16 or 32 bits, not {kv.value}: try "
            "--kv-quant fp16, or --engine vllm for an FP8 cache",
        )
    if kv is KvFormat.BF16:
        kv_refused = _bf16_refused(device, "torch-bf16", kv=True)
        if kv_refused is not None:
            return kv_refused
    return weights


def _torch_weights(device: Device, quant: QuantFormat) -> Support:
    nvidia = device.family is Family.NVIDIA
    if quant.is_plain:
        if quant is QuantFormat.BF16:
            refused = _bf16_refused(device, "torch-bf16")
            if refused is not None:
                return refused
        row = "torch-bf16" if nvidia and quant is QuantFormat.BF16 else "torch-platform"
        return _yes(row, _plain_path(device, quant))
    if quant.is_gguf:
        return _no(
            "torch-quant",
            "transformers dequantises a GGUF file on load: try --engine llama.cpp",
        )
    if quant is QuantFormat.FP8 and nvidia and device.capability_at_least(8, 9):
        return _yes("torch-quant", "FP8 tensor cores (fine-grained FP8 kernels)")
    if quant is QuantFormat.MXFP4 and (
        (nvidia and device.capability_at_least(7, 5)) or device.intel == "xe-hpc"
    ):
        return _yes("torch-quant", "MXFP4 Triton kernels (16-bit math)")
    if nvidia and quant in (QuantFormat.INT4, QuantFormat.NF4):
        return _yes("torch-quant", f"bitsandbytes {quant.value} kernel (16-bit math)")
    if nvidia and quant is QuantFormat.INT8 and device.capability_at_least(7, 5):
        return _yes("torch-quant", "int8 tensor cores (bitsandbytes LLM.int8)")
    if nvidia and quant is QuantFormat.GPTQ:
        return _yes("torch-quant", "GPTQ INT4 kernel (16-bit math)")
    if nvidia and quant is QuantFormat.AWQ and device.capability_at_least(7, 5):
        return _yes("torch-quant", "AWQ INT4 kernel (16-bit math)")
    return _no(
        "torch-quant",
        f"transformers has no {quant.label} kernel for {device.name} (it would dequantise "
        "to 16 bits on load): try --quant bf16, or --engine vllm",
    )


def _training(device: Device, quant: QuantFormat) -> Support:
    refused = _torch_platform(device, _TRAIN_FAMILIES, "torch-train")
    if refused is not None:
        return refused
    if quant.is_plain:
        if quant is QuantFormat.BF16:
            bf16 = _bf16_refused(device, "torch-bf16")
            if bf16 is not None:
                return bf16
        return _yes("torch-train", _plain_path(device, quant))
    nvidia = device.family is Family.NVIDIA
    if quant is QuantFormat.FP8 and nvidia and device.capability_at_least(8, 9):
        return _yes("torch-quant", "FP8 tensor cores")
    if quant is QuantFormat.NF4 and nvidia:
        return _yes("torch-quant", "bitsandbytes NF4 base weights (QLoRA, 16-bit math)")
    return _no(
        "torch-train",
        f"training runs 16-bit weights (or FP8 on NVIDIA 8.9+, NF4 for QLoRA on NVIDIA), "
        f"not {quant.label}, on {device.name}: try --quant bf16",
    )
