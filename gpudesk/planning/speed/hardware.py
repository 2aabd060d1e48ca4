"""What the speed model needs to know about one GPU: bandwidth, dense peaks, generation.

Rates come from the catalog entry (datasheet peaks, dense tensor figures only; a
with-sparsity figure is never used). When this machine has a benchmark in the history,
:func:`calibrated_rates` replaces the datasheet bandwidth and the 16-bit peak with what
the benchmark measured, scaled by what a good copy or GEMM reaches on that generation,
so the fitted engine efficiencies keep their meaning (a fraction of the datasheet peak).
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from gpudesk.catalog.schema import CatalogEntry


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


def family_of(entry: CatalogEntry) -> str:
    """The GPU generation ("ampere", "hopper", "cdna", ...); "other" when unknown."""
    architecture = entry.architecture.lower()
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
    if "hbm" in entry.memory_type.lower():
        return "hbm"
    if entry.memory_type.lower() == "unified" and "hbm" in (entry.notes or "").lower():
        return "hbm"
    return "gddr"


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
    #: accumulation (int8 / 2 on NVIDIA since Volta, else the 16-bit figure)
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
    #: set when a benchmark of this machine replaced the datasheet figures
    calibrated_at: dt.datetime | None = None
    calibration_note: str | None = None

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


def rates_for(entry: CatalogEntry) -> DeviceRates:
    """The datasheet rates of a catalog GPU.

    The 16-bit peak is the dense BF16 (or FP16) tensor figure; GPUs without tensor
    figures in the catalog use the non-tensor FP16 rate, or the FP32 rate, and say so.
    """
    if entry.bf16_tensor_tflops is not None:
        fp16, kind = entry.bf16_tensor_tflops, "bf16 tensor"
    elif entry.fp16_tensor_tflops is not None:
        fp16, kind = entry.fp16_tensor_tflops, "fp16 tensor"
    elif entry.int8_tensor_tops is not None and entry.int8_tensor_tops > 2 * (
        entry.fp16_tflops or entry.fp32_tflops
    ):
        # Matrix engines with a published int8 rate run 16-bit at half of it (Intel XMX,
        # NVIDIA and AMD tensor units alike); the shader rate would undercount them.
        fp16, kind = entry.int8_tensor_tops / 2, "int8 tensor / 2"
    elif entry.fp16_tflops is not None:
        fp16, kind = entry.fp16_tflops, "fp16 shader"
    else:
        fp16, kind = entry.fp32_tflops, "fp32 shader"
    has_fp8 = entry.fp8_tensor_tflops is not None
    int8 = float(entry.int8_tensor_tops) if entry.int8_tensor_tops is not None else float(fp16)
    acc16 = float(fp16)
    if entry.int8_tensor_tops is not None and entry.vendor.lower() == "nvidia":
        acc16 = max(float(fp16), entry.int8_tensor_tops / 2)
    return DeviceRates(
        gpu_id=entry.id,
        name=entry.name,
        family=family_of(entry),
        vendor=vendor_of(entry),
        memory_gb=entry.memory_gb,
        bandwidth_gbs=entry.bandwidth_gbs,
        fp16_tflops=float(fp16),
        fp8_tflops=float(entry.fp8_tensor_tflops or fp16),
        fp32_tflops=float(entry.fp32_tflops),
        int8_tops=int8,
        fp16_acc16_tflops=acc16,
        fp16_kind=kind,
        has_fp8=has_fp8,
        memory_class=memory_class_of(entry),
        tdp_w=float(entry.tdp_w) if entry.tdp_w is not None else None,
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
