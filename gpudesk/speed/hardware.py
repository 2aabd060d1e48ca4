"""What the speed model needs to know about one GPU: bandwidth, dense peaks, generation.

Rates come from the catalog entry (datasheet peaks, dense tensor figures only; a
with-sparsity figure is never used). When this machine has a benchmark in the history,
:func:`calibrated_rates` replaces the datasheet bandwidth and the 16-bit peak with what
the benchmark measured, scaled by what a good copy or GEMM reaches on that generation,
so the fitted engine efficiencies keep their meaning (a fraction of the datasheet peak).
"""

from __future__ import annotations

import datetime as dt
import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from gpudesk.catalog.schema import CatalogEntry, Topology


class Precision(StrEnum):
    """The arithmetic a matrix multiply runs in."""

    FP16 = "fp16"  # and bf16, FP32 accumulation: the catalog's dense 16-bit tensor figure
    #: FP16 with FP16 accumulation (cuBLAS CUBLAS_COMPUTE_16F, what llama.cpp asks for):
    #: twice the FP32-accumulate rate on GeForce cards, the same on the others
    FP16_ACC16 = "fp16-acc16"
    INT8 = "int8"  # llama.cpp's quantised matmuls (MMQ) run on int8 tensor cores
    FP8 = "fp8"
    FP32 = "fp32"


#: Architecture names in the catalog -> the generation the fitted efficiencies are keyed by.
_FAMILIES: tuple[tuple[str, str], ...] = (
    ("blackwell", "blackwell"),
    ("hopper", "hopper"),
    ("ada", "ada"),
    ("ampere", "ampere"),
    ("turing", "turing"),
    ("volta", "volta"),
    ("pascal", "pascal"),
    ("cdna", "cdna"),
    ("rdna", "rdna"),
    ("xe", "xe"),
    ("apple", "apple"),
)


#: NVIDIA generations whose tensor cores multiply int8 (mma.sync s8): Turing (compute
#: capability 7.5) and later. llama.cpp's quantised matmul (MMQ) runs on them there;
#: Volta (7.0) has FP16 tensor cores only, so from a batch of 64 llama.cpp dequantises
#: and multiplies in cuBLAS FP16 instead (``ggml_cuda_should_use_mmq``: ``true`` when
#: ``turing_mma_available(cc)``, else on NVIDIA ``!fp16_mma_hardware_available(cc) ||
#: ne11 < MMQ_DP4A_MAX_BATCH_SIZE``; ggml-org/llama.cpp ggml/src/ggml-cuda/mmq.cu at
#: 027ef876; the rule since PR #8075, 2024-06-23, "unless there is no int8 tensor core
#: MMQ implementation available but FP16 tensor cores are (V100, RDNA3)").
INT8_MMA_FAMILIES = ("turing", "ampere", "ada", "hopper", "blackwell")


def family_of(entry: CatalogEntry) -> str:
    """The GPU generation ("ampere", "hopper", "cdna", ...); "other" when unknown."""
    architecture = (entry.architecture or "").lower()  # an announced part may not name it
    for needle, family in _FAMILIES:
        if needle in architecture:
            return family
    return "other"


#: Vendor families the fitted efficiency curves are keyed by (never the generation).
VENDORS = ("nvidia", "amd", "intel", "apple")


def vendor_of(entry: CatalogEntry) -> str:
    """ "nvidia", "amd", "intel", "apple", or "other"."""
    vendor = entry.vendor.lower()
    return vendor if vendor in VENDORS else "other"


def memory_class_of(entry: CatalogEntry) -> str:
    """ "hbm" for stacked memory (also an APU's "unified" HBM its notes name), else "gddr"."""
    memory_type = (entry.memory_type or "").lower()  # none named (announced): not HBM
    if "hbm" in memory_type:
        return "hbm"
    if memory_type == "unified" and "hbm" in (entry.notes or "").lower():
        return "hbm"
    return "gddr"


class Link(BaseModel):
    """How one GPU talks to its peers when an engine splits tensors across them.

    ``kind``: "switch" (NVSwitch: every GPU reaches ``gbs`` whatever the count),
    "mesh" (point-to-point links to each peer, ``gbs`` per peer: AMD Infinity Fabric,
    Gaudi's RoCE ports), "bridge" (an NVLink bridge joining at most ``max_gpus``), or
    "pcie". ``gbs``: GB/s in one direction; ``pcie_gbs``: the PCIe link, in one direction.
    """

    model_config = ConfigDict(frozen=True)

    kind: str = "pcie"
    gbs: float = 0.0
    max_gpus: int | None = None
    pcie_gbs: float = 0.0
    source: str = ""
    #: the catalog's link kind ("nvlink", "xgmi", "ici", "neuronlink", ...): its name
    technology: str = ""
    #: False where the catalog names the link but its vendor published no rate: then
    #: ``gbs`` is no figure, and nothing across several devices can be estimated
    rate_published: bool = True

    def allreduce_gbs(self, count: int) -> float:
        """GB/s (one direction) each GPU of ``count`` sends an all-reduce at."""
        if count <= 1:
            return 0.0
        if self.kind == "switch":
            return self.gbs
        if self.kind == "mesh":
            return self.gbs * (count - 1)
        if self.kind == "bridge" and self.max_gpus is not None and count <= self.max_gpus:
            return self.gbs
        return self.pcie_gbs

    def words(self, count: int) -> str:
        technology = _LINK_NAMES.get(self.technology, "NVLink")
        if not self.rate_published:
            return f"{technology} (no published rate)"
        if self.kind == "bridge" and self.max_gpus is not None and count > self.max_gpus:
            return f"PCIe {self.pcie_gbs:,.0f} GB/s (the {technology} bridge joins {self.max_gpus})"
        if self.kind == "pcie":
            return f"PCIe {self.allreduce_gbs(count):,.0f} GB/s"
        name = {"switch": technology, "bridge": f"{technology} bridge"}.get(self.kind)
        if name is None:  # a mesh: links to each peer
            name = "peer links" if self.technology in ("", "nvlink") else f"{technology} links"
        return f"{name} {self.allreduce_gbs(count):,.0f} GB/s"


#: How each link kind of the catalog is called in an estimate's words.
_LINK_NAMES = {
    "nvlink": "NVLink",
    "xgmi": "Infinity Fabric",
    "ici": "ICI",
    "neuronlink": "NeuronLink",
    "ub": "Unified Bus",
    "ethernet": "Ethernet (RoCE)",
    "pcie": "PCIe",
}

#: PCIe GB/s in one direction for an x16 link, by generation (PCI-SIG: 8, 16, 32, 64 GT/s
#: per lane, 128b/130b from Gen 3; Gen 6 FLIT mode at 64 GT/s PAM4 doubles Gen 5).
_PCIE_X16_GBS = {1: 4.0, 2: 8.0, 3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}


def pcie_gbs(interface: str | None) -> float:
    """One direction of the PCIe link ``interface`` names ("PCIe 4.0 x16"); Gen 4 x16
    when it names none."""
    match = re.search(r"pcie\s*(\d)(?:\.\d)?(?:\s*x(\d+))?", (interface or "").lower())
    if match is None:
        return _PCIE_X16_GBS[4]
    generation = min(6, max(1, int(match.group(1))))
    lanes = int(match.group(2)) if match.group(2) else 16
    return _PCIE_X16_GBS[generation] * min(lanes, 16) / 16


#: The catalog's topologies as :class:`Link` kinds. A TPU torus is taken as switch-like
#: for now: each chip's ICI rate whatever the count (its neighbours, not every peer).
_LINK_KINDS: dict[Topology, str] = {
    Topology.SWITCH: "switch",
    Topology.TORUS: "switch",
    Topology.MESH: "mesh",
    Topology.BRIDGE: "bridge",
}


def link_for(entry: CatalogEntry) -> Link:
    """The links an engine's tensor-parallel all-reduces cross on ``entry``: the
    catalog's ``interconnect``, or the host's PCIe where it has none (topology "none",
    or no table)."""
    pcie = pcie_gbs(entry.interface)
    link = entry.interconnect
    kind = None if link is None else _LINK_KINDS.get(link.topology)
    if link is None or kind is None:
        return Link(kind="pcie", gbs=pcie, pcie_gbs=pcie, source=entry.interface or "PCIe 4.0")
    if link.gbs_per_direction is None:
        # a link its vendor names without a rate: no rate is assumed, not even PCIe's
        return Link(
            kind=kind,
            pcie_gbs=pcie,
            source=entry.id,
            technology=str(link.kind),
            rate_published=False,
        )
    return Link(
        kind=kind,
        gbs=link.gbs_per_direction,
        max_gpus=link.max_devices if kind == "bridge" else None,
        pcie_gbs=pcie,
        source=entry.id,
        technology=str(link.kind),
    )


class DeviceRates(BaseModel):
    """One GPU's rates as the speed model uses them, and where each came from."""

    model_config = ConfigDict(frozen=True)

    gpu_id: str
    name: str
    family: str
    #: "nvidia", "amd", "intel", "apple" or "other": what efficiency curves are keyed by
    vendor: str = "other"
    memory_gb: float
    bandwidth_gbs: float
    #: dense TFLOPS for 16-bit, FP8 and FP32 matrix multiplies (FP8 falls back to 16-bit)
    fp16_tflops: float
    fp8_tflops: float
    fp32_tflops: float
    #: dense int8 tensor TOPS (falls back to the 16-bit figure), and FP16 with FP16
    #: accumulation (int8 / 2 on GeForce, twice the stored figure; else the 16-bit one)
    int8_tops: float
    fp16_acc16_tflops: float
    #: what the 16-bit figure is: "bf16 tensor", "fp16 tensor", "int8 tensor / 2",
    #: "fp16 shader", "fp32 shader"
    fp16_kind: str
    has_fp8: bool
    #: "hbm" or "gddr" (any non-HBM memory): HBM's latency needs more bytes in flight,
    #: so one decode stream reaches a smaller share of it
    memory_class: str
    tdp_w: float | None
    #: GPU-to-GPU links (tensor parallelism's all-reduces)
    link: Link = Link()
    #: set when a benchmark of this machine replaced the datasheet figures
    calibrated_at: dt.datetime | None = None
    calibration_note: str | None = None

    @property
    def has_int8_mma(self) -> bool:
        """Int8 tensor-core matrix multiplies (NVIDIA Turing and later, with a published
        int8 tensor rate): where llama.cpp's MMQ kernels run on them."""
        return (
            self.vendor == "nvidia"
            and self.family in INT8_MMA_FAMILIES
            and self.int8_tops > self.fp16_tflops
        )

    @property
    def group(self) -> str:
        """What fitted efficiencies are keyed by: generation and memory class."""
        return f"{self.family}-{self.memory_class}"

    def peak_tflops(self, precision: Precision) -> float:
        return {
            Precision.FP16: self.fp16_tflops,
            Precision.FP16_ACC16: self.fp16_acc16_tflops,
            Precision.INT8: self.int8_tops,
            Precision.FP8: self.fp8_tflops,
            Precision.FP32: self.fp32_tflops,
        }[precision]


#: GeForce cards measured running FP16/BF16 with FP32 accumulation faster than the half
#: rate their whitepaper gives (TFLOPS, and the measurement): the rate an engine's 16-bit
#: GEMMs (FP32 accumulate) run at on them. main-horse, "Things I learned digging into 5090
#: perf" (main-horse.github.io/posts/5090-mm-perf): mmapeak's mma.sync bf16 and f16 with
#: 32-bit accumulation reach 370.6 TFLOPS on an RTX 5090 against the 209.5 listed, and
#: torch.matmul in bf16 reaches 224.3 TFLOPS at (16384, 8192, 1280), above the listed
#: peak itself. (The RTX 5060 Ti measures at half rate: the rule is per chip, not per
#: generation.)
MEASURED_FP32_ACCUMULATE_TFLOPS: dict[str, tuple[float, str]] = {
    "rtx-5090": (370.6, "bf16 tensor, FP32 accumulate as measured (mma, main-horse 2025)"),
}


def rates_for(entry: CatalogEntry) -> DeviceRates:
    """The datasheet rates of a catalog GPU.

    The 16-bit peak is the dense BF16 (or FP16) tensor figure; GPUs without tensor
    figures in the catalog use the non-tensor FP16 rate, or the FP32 rate, and say so.
    """
    unpublished = [
        words
        for words, value in (("memory size", entry.memory_gb), ("bandwidth", entry.bandwidth_gbs))
        if value is None
    ]
    if unpublished:  # an announced part: a gap, never a rate of zero
        raise ValueError(f"{entry.name} has no {' or '.join(unpublished)} in the catalog")
    if entry.bf16_tensor_tflops is not None:
        fp16, kind = entry.bf16_tensor_tflops, "bf16 tensor"
    elif entry.fp16_tensor_tflops is not None:
        fp16, kind = entry.fp16_tensor_tflops, "fp16 tensor"
    elif entry.int8_tensor_tops is not None and entry.int8_tensor_tops > 2 * (
        entry.fp16_tflops or entry.fp32_tflops or 0.0
    ):
        # Matrix engines with a published int8 rate run 16-bit at half of it (Intel XMX,
        # NVIDIA and AMD tensor units alike); the shader rate would undercount them.
        fp16, kind = entry.int8_tensor_tops / 2, "int8 tensor / 2"
    elif entry.fp16_tflops is not None:
        fp16, kind = entry.fp16_tflops, "fp16 shader"
    elif entry.fp32_tflops is not None:
        fp16, kind = entry.fp32_tflops, "fp32 shader"
    else:
        raise ValueError(f"{entry.name} has no 16-bit or FP32 rate in the catalog")
    # An announced part may publish no FP32 rate: FP32 matmuls are then priced at its
    # 16-bit rate, an upper bound (never a rate of zero).
    fp32 = entry.fp32_tflops if entry.fp32_tflops is not None else fp16
    has_fp8 = entry.fp8_tensor_tflops is not None
    int8 = float(entry.int8_tensor_tops) if entry.int8_tensor_tops is not None else float(fp16)
    acc16 = float(fp16)
    if (
        entry.int8_tensor_tops is not None
        and entry.vendor.lower() == "nvidia"
        and entry.int8_tensor_tops / 2 > 1.5 * fp16
    ):
        # GeForce (Turing to Blackwell) runs FP16 with FP32 accumulation at half the
        # FP16-accumulate rate, which equals int8 / 2 (the whitepapers' appendix tables,
        # cited in each catalog entry: RTX 2080 Ti 107.6 vs 53.8, RTX 3090 142 vs 71,
        # RTX 4090 330.3 vs 165.2, RTX 5090 419 vs 209.5). Other cards run both at the
        # stored rate; their int8 / 2 differing by a percent (L40S 366.5 vs 362.05) is a
        # rounding of the datasheets, not a faster path.
        acc16 = entry.int8_tensor_tops / 2
    if entry.id in MEASURED_FP32_ACCUMULATE_TFLOPS:
        measured, kind = MEASURED_FP32_ACCUMULATE_TFLOPS[entry.id]
        fp16 = min(measured, acc16)
    return DeviceRates(
        gpu_id=entry.id,
        name=entry.name,
        family=family_of(entry),
        vendor=vendor_of(entry),
        memory_gb=entry.memory_gb,
        bandwidth_gbs=entry.bandwidth_gbs,
        fp16_tflops=float(fp16),
        fp8_tflops=float(entry.fp8_tensor_tflops or fp16),
        fp32_tflops=float(fp32),
        int8_tops=int8,
        fp16_acc16_tflops=acc16,
        fp16_kind=kind,
        has_fp8=has_fp8,
        memory_class=memory_class_of(entry),
        tdp_w=float(entry.tdp_w) if entry.tdp_w is not None else None,
        link=link_for(entry),
    )


def calibrated_rates(
    rates: DeviceRates,
    *,
    measured_copy_gbs: float | None,
    measured_gemm_tflops: float | None,
    copy_fraction: float,
    gemm_fraction: float,
    measured_at: dt.datetime,
) -> DeviceRates:
    """``rates`` with the benchmark's figures in place of the datasheet's.

    A benchmark measures what this card really does; the fitted efficiencies are
    fractions of the datasheet peak that published measurements reached. So the
    measured copy bandwidth stands for ``copy_fraction`` x the datasheet bandwidth
    (what a plain device copy typically reaches) and the measured GEMM for
    ``gemm_fraction`` x the datasheet peak (what the best GEMM reaches on that
    generation): a card that measures 10% slow is estimated 10% slow.
    """
    update: dict[str, object] = {"calibrated_at": measured_at}
    notes: list[str] = []
    if measured_copy_gbs is not None and measured_copy_gbs > 0:
        equivalent = measured_copy_gbs / copy_fraction
        notes.append(
            f"copy {measured_copy_gbs:,.0f} GB/s measured = {equivalent:,.0f} GB/s datasheet "
            f"equivalent (a copy reaches ~{copy_fraction:.0%} of the datasheet)"
        )
        update["bandwidth_gbs"] = equivalent
    if measured_gemm_tflops is not None and measured_gemm_tflops > 0:
        equivalent = measured_gemm_tflops / gemm_fraction
        scale = equivalent / rates.fp16_tflops
        notes.append(
            f"16-bit GEMM {measured_gemm_tflops:,.1f} TFLOPS measured = {equivalent:,.0f} "
            f"TFLOPS datasheet equivalent (the best GEMM reaches ~{gemm_fraction:.0%})"
        )
        update["fp16_tflops"] = equivalent
        update["fp8_tflops"] = rates.fp8_tflops * scale
        update["int8_tops"] = rates.int8_tops * scale
        update["fp16_acc16_tflops"] = rates.fp16_acc16_tflops * scale
    if not notes:
        return rates
    update["calibration_note"] = "; ".join(notes)
    return rates.model_copy(update=update)
