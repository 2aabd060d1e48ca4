"""Read SkyPilot's public catalog of cloud instance prices (``vms.csv``).

SkyPilot (skypilot-org/skypilot-catalog) keeps one ``catalogs/vN/<cloud>/vms.csv``
per cloud with the columns ``InstanceType, AcceleratorName, AcceleratorCount,
vCPUs, MemoryGiB, Price, Region, GpuInfo, SpotPrice`` (the order differs from
cloud to cloud, so columns are found by name). A file is untrusted input: a bad
row is reported as a :class:`RowProblem` (line and reason) and skipped, never
raised; a file that cannot be read at all is one problem and no offers.

An instance's price covers the whole machine, host CPU and memory included; the
rate per GPU-hour is that price divided by the accelerator count
(:data:`RATE_BASIS`).

Accelerator names become catalog ids through one explicit table,
:data:`MAPPING_RULES`. A name the table does not know, or knows to be
ambiguous (Lambda's ``A100`` is a 40 GB PCIe card the catalog lacks; a ``V100``
row does not say SXM2 or PCIe), is listed in :attr:`ParseResult.unmapped`,
never guessed.

Google Cloud's file is laid out differently (:func:`_join_gcp`): it prices a
GPU apart from the machine it runs on. A GPU row has no ``InstanceType`` and
holds the GPUs' own price for its count and zone; a machine row (``a2-highgpu-1g``,
``n1-highmem-8``) has no accelerator and holds the host's CPUs and memory. The
rate is the host's price plus its GPUs' price, both as listed for the same zone,
divided by the GPU count (:func:`rate_basis`).

Google Cloud's file also lists Cloud TPUs, one row per slice (``tpu-v6e-8``): no
machine, ``AcceleratorCount`` 1, and the slice's price. A slice of a generation the
catalog holds becomes an offer per chip: the slice's price divided by its chips,
counted from the accelerator type's suffix as Google defines it for that generation
(:data:`TPU_GENERATIONS`, :func:`tpu_slice`).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

#: Said wherever a per-GPU rate derived here is shown.
RATE_BASIS = "instance price divided by its GPU count; the host's CPUs and memory are included"
#: Said wherever a per-chip rate divided from a Cloud TPU slice is shown.
TPU_RATE_BASIS = (
    "a Cloud TPU slice's price divided by its chips (the accelerator type's suffix counts "
    "chips for v5e and v6e, TensorCores for v2 to v5p and TPU7x, two per chip); the TPU "
    "VMs' host CPUs and memory are included"
)

#: Columns a file must have (found by name; others are ignored).
REQUIRED_COLUMNS: tuple[str, ...] = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "Price",
    "Region",
)
#: Columns read when present.
OPTIONAL_COLUMNS: tuple[str, ...] = ("SpotPrice", "GpuInfo", "vCPUs", "MemoryGiB")

#: The largest file read (AWS's vms.csv, the biggest, is a few MB).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The longest row read; a longer one is a problem, not a parse.
MAX_ROW_CHARS = 8192
#: Rows read from one file; the rest are one problem.
MAX_ROWS = 500_000
#: More problems than this per file are counted, not listed.
MAX_LISTED_PROBLEMS = 200
#: Highest per-GPU rate believed (the catalog's own bound for a cloud rate).
MAX_USD_PER_GPU_HOUR = 1000.0
#: Most GPUs one instance may have.
MAX_GPUS_PER_INSTANCE = 64

#: How each cloud folder reads for a person.
PROVIDER_NAMES: dict[str, str] = {
    "aws": "AWS",
    "azure": "Azure",
    "cudo": "Cudo Compute",
    "do": "DigitalOcean",
    "fluidstack": "FluidStack",
    "gcp": "Google Cloud",
    "hyperbolic": "Hyperbolic",
    "hyperstack": "Hyperstack",
    "ibm": "IBM Cloud",
    "lambda": "Lambda",
    "nebius": "Nebius",
    "oci": "Oracle Cloud",
    "paperspace": "Paperspace",
    "primeintellect": "Prime Intellect",
    "runpod": "RunPod",
    "scp": "Samsung Cloud Platform",
    "seeweb": "Seeweb",
    "shadeform": "Shadeform",
    "vast": "Vast.ai",
    "verda": "Verda (DataCrunch)",
}
#: Clouds whose prices are set by hosts on a marketplace, not by the provider.
MARKETPLACE_CLOUDS: frozenset[str] = frozenset({"vast"})

_CLOUD_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_TOTAL_MIB = re.compile(r"""TotalGpuMemoryInMiB['"]?\s*:\s*(\d{1,9})""")


@dataclass(frozen=True)
class MappingRule:
    """One row of the accelerator-name table.

    A rule matches a row when every condition it sets holds: the accelerator
    name (exact), the cloud, a piece of the instance type, and the GPU memory
    per GPU (GiB, from ``GpuInfo``'s total divided by the count). ``catalog_id``
    None means "known, deliberately not mapped", with ``reason`` saying why.
    """

    accelerator: str
    catalog_id: str | None
    cloud: str | None = None
    instance_contains: str | None = None
    gib_per_gpu: tuple[float, float] | None = None
    reason: str | None = None

    def matches(self, cloud: str, accelerator: str, instance: str, gib: float | None) -> bool:
        if accelerator != self.accelerator:
            return False
        if self.cloud is not None and cloud != self.cloud:
            return False
        if self.instance_contains is not None and self.instance_contains not in instance:
            return False
        if self.gib_per_gpu is not None:
            low, high = self.gib_per_gpu
            return gib is not None and low <= gib <= high
        return True


_FORM = "the file does not say SXM or PCIe"
_40GB = (36.0, 42.0)
_80GB = (76.0, 82.0)

#: The one table from SkyPilot accelerator names to catalog ids; first match wins,
#: so the specific rules (a cloud, an instance type) come before the general ones.
MAPPING_RULES: tuple[MappingRule, ...] = (
    # Lambda: one name, several parts; the instance type says which.
    MappingRule("H100", "h100-pcie", cloud="lambda", instance_contains="h100_pcie"),
    MappingRule("H100", "h100-sxm5", cloud="lambda", instance_contains="h100_sxm5"),
    MappingRule("A100", "a100-40gb-sxm4", cloud="lambda", instance_contains="a100_sxm4"),
    MappingRule("A100", None, cloud="lambda", reason="a 40 GB PCIe A100; not in the catalog"),
    MappingRule("A100-80GB", "a100-80gb-sxm4", cloud="lambda", instance_contains="80gb_sxm4"),
    MappingRule("RTX6000", None, cloud="lambda", reason="Quadro RTX 6000; not in the catalog"),
    # AWS: the instance family fixes the part.
    MappingRule("H100", "h100-sxm5", cloud="aws", instance_contains="p5."),
    MappingRule("A100", "a100-40gb-sxm4", cloud="aws", instance_contains="p4d."),
    MappingRule("A100-80GB", "a100-80gb-sxm4", cloud="aws", instance_contains="p4de."),
    MappingRule("V100", "v100-sxm2-16gb", cloud="aws", instance_contains="p3."),
    # p3dn.24xlarge: eight 32 GB V100s joined by NVLink, i.e. SXM2 modules.
    MappingRule("V100-32GB", "v100-sxm2-32gb", cloud="aws", instance_contains="p3dn."),
    # Trainium: rented only as Trn instances; a row counts the instance's chips (16 on
    # trn2.48xlarge), so the price divided by the count is the rent per chip. Names as
    # AWS and its Neuron driver call the chips; a row named otherwise stays unmapped.
    MappingRule("Trainium2", "trainium2", cloud="aws", instance_contains="trn2"),
    MappingRule("Trainium3", "trainium3", cloud="aws", instance_contains="trn3"),
    # Azure: NCads H100 v5 machines carry H100 NVL cards, ND H100 v5 SXM modules.
    MappingRule("H100", "h100-nvl", cloud="azure", instance_contains="ads_H100_v5"),
    MappingRule("H100", "h100-sxm5", cloud="azure", instance_contains="ND96isr_H100_v5"),
    # IBM Cloud: its gx2 "-v100" profiles carry "NVIDIA V100 PCIe 16 GB GPUs" (IBM's
    # x86-64 instance profiles page, cloud.ibm.com/docs/vpc?topic=vpc-profiles, GPU
    # section; ibm-cloud-docs/vpc vsi_is_profiles.md @ 63f33e1c, read 2026-12-02).
    MappingRule("V100", "v100-pcie-16gb", cloud="ibm", instance_contains="gx2-"),
    # Nebius names SXM parts in the instance type.
    MappingRule("H100", "h100-sxm5", cloud="nebius", instance_contains="h100-sxm"),
    MappingRule("H200", "h200-sxm", cloud="nebius", instance_contains="h200-sxm"),
    # Verda: "S" after the memory means SXM (1H100.80S, 1H200.141S).
    MappingRule("H100", "h100-sxm5", cloud="verda", instance_contains="H100.80S"),
    MappingRule("H200", "h200-sxm", cloud="verda", instance_contains="H200.141S"),
    MappingRule("A100-80GB", None, cloud="verda", reason=_FORM),
    MappingRule("RTX-PRO-6000", None, cloud="verda", reason="Workstation or Server Edition?"),
    # Vast.ai: the instance type names the part, GpuInfo the memory.
    MappingRule("H100", "h100-sxm5", cloud="vast", instance_contains="H100_SXM"),
    MappingRule("H100", "h100-nvl", cloud="vast", instance_contains="H100_NVL"),
    MappingRule(
        "A100", "a100-80gb-sxm4", cloud="vast", instance_contains="A100_SXM4", gib_per_gpu=_80GB
    ),
    MappingRule(
        "A100", "a100-40gb-sxm4", cloud="vast", instance_contains="A100_SXM4", gib_per_gpu=_40GB
    ),
    MappingRule(
        "A100", "a100-80gb-pcie", cloud="vast", instance_contains="A100_PCIE", gib_per_gpu=_80GB
    ),
    MappingRule("RTX4070", "rtx-4070-ti-super", cloud="vast", instance_contains="RTX_4070S_Ti"),
    MappingRule("RTX4060", "rtx-4060-ti-16gb", cloud="vast", instance_contains="RTX_4060_Ti"),
    MappingRule("RTX3060", "rtx-3060-12gb", cloud="vast", instance_contains="RTX_3060-"),
    MappingRule("RTX3080", None, cloud="vast", reason="10 GB or 12 GB card not stated"),
    # Shadeform resells other clouds: the instance type names the part where it is known.
    MappingRule("A100-80GB", "a100-80gb-sxm4", cloud="shadeform", instance_contains="-sxm4"),
    MappingRule("A100-80GB", None, cloud="shadeform", reason=_FORM),
    MappingRule("A100", "a100-40gb-sxm4", cloud="shadeform", instance_contains="A100-sxm4"),
    MappingRule("H100", "h100-sxm5", cloud="shadeform", instance_contains="H100-sxm5"),
    MappingRule("RTXPro6000", None, reason="Workstation or Server Edition?"),
    # RunPod's "RTX PRO 4500 SE" is the Server Edition, not the workstation card.
    MappingRule("RTXPRO4500-SE", None, reason="RTX PRO 4500 Server Edition; not in the catalog"),
    MappingRule("GAUDI2", None, reason="Gaudi 2 is not in the catalog"),
    # RunPod: "A100-80GB" rows say 'A100 PCIe' in GpuInfo (its SXM part has its own name).
    MappingRule("A100-80GB", "a100-80gb-pcie", cloud="runpod"),
    # RunPod's "RTX PRO 5000" rows give 48 (GB, in the MiB field) per GPU: the 48 GB
    # RTX PRO 5000 Blackwell workstation card (the 72 GB one would not read 48).
    MappingRule("RTXPRO5000", "rtx-pro-5000-blackwell", cloud="runpod"),
    # RunPod's GPU types name the three RTX PRO 6000 parts apart (GPU id -> display
    # name, docs.runpod.io/references/gpu-types): "...Blackwell Workstation Edition" is
    # "RTX PRO 6000 WK", "...Max-Q Workstation Edition" "RTX PRO 6000 MaxQ", and
    # "...Server Edition" plain "RTX PRO 6000"; SkyPilot drops the spaces.
    MappingRule("RTXPRO6000-WK", "rtx-pro-6000-blackwell", cloud="runpod"),
    MappingRule("RTXPRO6000-MaxQ", "rtx-pro-6000-blackwell-max-q", cloud="runpod"),
    MappingRule("RTXPRO6000", "rtx-pro-6000-blackwell-server", cloud="runpod"),
    # Also on RunPod's GPU-type list, not yet priced in the file the snapshot read:
    # "NVIDIA RTX 5000 Ada Generation" (RTX 5000 Ada) and "NVIDIA RTX PRO 4500
    # Blackwell" (RTX PRO 4500, the workstation card; the Server Edition is "SE").
    MappingRule("RTX5000-Ada", "rtx-5000-ada", cloud="runpod"),
    MappingRule("RTXPRO4500", "rtx-pro-4500-blackwell", cloud="runpod"),
    # Cudo and Hyperstack say PCIe in the name.
    MappingRule(
        "A100", "a100-80gb-pcie", cloud="cudo", instance_contains="a100-pci", gib_per_gpu=_80GB
    ),
    MappingRule(
        "A800", "a800-80gb-pcie", cloud="cudo", instance_contains="a800-pci", gib_per_gpu=_80GB
    ),
    MappingRule("H100-SXM", "h100-sxm5", cloud="cudo"),
    MappingRule("A100-80G-PCIe", "a100-80gb-pcie", cloud="hyperstack"),
    MappingRule("A100-80G-PCIe-NVLink", "a100-80gb-pcie", cloud="hyperstack"),
    MappingRule("H100-80G-PCIe", "h100-pcie", cloud="hyperstack"),
    MappingRule("H100-80G-PCIe-NVLink", "h100-pcie", cloud="hyperstack"),
    MappingRule("H100-80G-SXM5", "h100-sxm5", cloud="hyperstack"),
    # Google Cloud: the GPU rows name the part; the host the join chose fixes the form
    # (A2 machines join their A100s by NVSwitch, A3 and A3 Mega carry H100 SXM
    # modules, A3 Ultra H200 SXM modules).
    MappingRule("A100", "a100-40gb-sxm4", cloud="gcp", instance_contains="a2-"),
    MappingRule("A100-80GB", "a100-80gb-sxm4", cloud="gcp", instance_contains="a2-ultragpu-"),
    MappingRule("H100", "h100-sxm5", cloud="gcp", instance_contains="a3-highgpu-"),
    MappingRule("H100-MEGA", "h100-sxm5", cloud="gcp", instance_contains="a3-megagpu-"),
    MappingRule("H200", "h200-sxm", cloud="gcp", instance_contains="a3-ultragpu-"),
    MappingRule("P100", None, cloud="gcp", reason="Tesla P100; not in the catalog"),
    MappingRule("P4", None, cloud="gcp", reason="Tesla P4; not in the catalog"),
    MappingRule("K80", None, cloud="gcp", reason="Tesla K80; not in the catalog"),
    # Names that mean one part on every cloud.
    MappingRule("A10", "a10"),
    MappingRule("A10G", "a10g"),
    MappingRule("A40", "a40"),
    MappingRule("B200", "b200"),
    MappingRule("B300", "b300"),
    MappingRule("GH200", "gh200"),
    MappingRule("H100-SXM", "h100-sxm5"),
    MappingRule("H200-SXM", "h200-sxm"),
    MappingRule("L4", "l4"),
    MappingRule("L40", "l40"),
    MappingRule("L40S", "l40s"),
    MappingRule("T4", "t4"),
    MappingRule("A16", "a16"),
    MappingRule("A4000", "rtx-a4000"),
    MappingRule("A5000", "rtx-a5000"),
    MappingRule("RTX6000Ada", "rtx-6000-ada"),
    MappingRule("A6000", "rtx-a6000"),
    MappingRule("RTXA6000", "rtx-a6000"),
    MappingRule("RTX-A6000", "rtx-a6000"),
    MappingRule("RTXA5000", "rtx-a5000"),
    MappingRule("RTX-A5000", "rtx-a5000"),
    MappingRule("RTXA4500", "rtx-a4500"),
    MappingRule("RTXA4000", "rtx-a4000"),
    MappingRule("RTX-A4000", "rtx-a4000"),
    MappingRule("RTX4000-Ada", "rtx-4000-ada"),
    MappingRule("RTX5880-Ada", "rtx-5880-ada"),
    MappingRule("RTX6000-Ada", "rtx-6000-ada"),
    MappingRule("RTX-6000-Ada", "rtx-6000-ada"),
    MappingRule("RTXPRO6000WS", "rtx-pro-6000-blackwell"),
    MappingRule("RTX3090", "rtx-3090"),
    MappingRule("RTX4090", "rtx-4090"),
    MappingRule("RTX5070", "rtx-5070"),
    MappingRule("RTX5090", "rtx-5090"),
    MappingRule("MI300X", "mi300x"),
    # Known and ambiguous everywhere else.
    MappingRule("H100", None, reason=_FORM),
    MappingRule("H200", None, reason="SXM or NVL not stated"),
    MappingRule("A100", None, reason="memory size or form factor not stated"),
    MappingRule("V100", None, reason=_FORM),
    MappingRule("V100-32GB", None, reason=_FORM),
)


#: Accelerator names (rules above) whose rows count chips that are not GPUs: their rate
#: is per chip-hour (a trn2.48xlarge's price divided by its 16 Trainium2 chips).
CHIP_ACCELERATORS: frozenset[str] = frozenset({"Trainium2", "Trainium3"})


@dataclass(frozen=True)
class TpuGeneration:
    """One Cloud TPU generation as its accelerator types name it (``v6e`` in ``v6e-8``).

    ``tensorcores_per_chip`` None: the type's suffix counts chips; otherwise it counts
    TensorCores, this many per chip. ``catalog_id`` None: the catalog has no entry.
    """

    label: str
    tensorcores_per_chip: int | None
    catalog_id: str | None = None


#: Cloud TPU generations by the version in their accelerator type. SkyPilot names a
#: TPU row ``tpu-<accelerator type>`` (``f'tpu-{tpu["type"]}'`` in
#: sky/catalog/data_fetchers/fetch_gcp.py of skypilot-org/skypilot, read 2026-12-07).
#: What the suffix counts, from Google's Cloud TPU pages (docs.cloud.google.com/tpu/
#: docs/<version>, read 2026-12-07):
#: - v2 and v3: "the TPU version and the number of TPU cores" (``v2-8``, ``v3-128`` is
#:   128 TensorCores); "each v3 TPU chip contains two TensorCores", a v2 Pod is 256
#:   chips (512 TensorCores);
#: - v4: TensorCore-based types (``v4-128``: 128 TensorCores, types-topologies page);
#:   "each TPU v4 chip contains two TensorCores";
#: - v5p: "v$VERSION_NUMBERp-$CORES_COUNT", ``v5p-32`` is 32 TensorCores (16 chips); the
#:   2x2x1 topology is 8 cores, 4 chips;
#: - v5e (``v5litepod``): "v$VERSION_NUMBER-$CHIP_COUNT"; 2x4 is 8 chips; one
#:   TensorCore per chip;
#: - v6e (Trillium): one TensorCore per chip, configured by chips like v5e (``v6e-8``,
#:   8 chips per host); SkyPilot's fetcher prices v5e and v6e per chip, v5p per 2 cores;
#: - TPU7x (Ironwood): "each TPU7x chip contains two TensorCores", VMs of 4 chips; a
#:   single VM is created as ``--accelerator-type=tpu7x-8`` (AI-Hypercomputer/
#:   accelerator-microbenchmarks, Ironwood/README.md), so the suffix counts TensorCores.
#:   SkyPilot's catalog lists no TPU7x row yet (catalogs/v9/gcp/vms.csv @ 2c3d7ea7d76b).
TPU_GENERATIONS: dict[str, TpuGeneration] = {
    "v2": TpuGeneration("TPU v2", 2),
    "v3": TpuGeneration("TPU v3", 2),
    "v4": TpuGeneration("TPU v4", 2),
    "v5litepod": TpuGeneration("TPU v5e", None),
    "v5p": TpuGeneration("TPU v5p", 2),
    "v6e": TpuGeneration("TPU v6e (Trillium)", None),
    "tpu7x": TpuGeneration("TPU7x (Ironwood)", 2, "tpu-v7-ironwood"),
}
#: SkyPilot writes this Price (and SpotPrice) for a v6e slice whose price it did not
#: find ("TPU_V6E_MAX_PRICE = 700", fetch_gcp.py): a placeholder, not a price.
TPU_PLACEHOLDER_PRICES: dict[str, float] = {"v6e": 700.0}
#: The most chips one slice may have (a TPU7x Pod is 9,216 chips).
MAX_CHIPS_PER_SLICE = 9216
_TPU_NAME = re.compile(r"^tpu-([a-z][a-z0-9]{0,19})-([0-9]{1,6})$")


@dataclass(frozen=True)
class TpuSlice:
    """A Cloud TPU accelerator name read: its generation and its chips."""

    name: str  # as SkyPilot lists it, "tpu-v6e-8"
    version: str  # "v6e"
    suffix: int  # 8
    generation: TpuGeneration | None  # None: a generation this table does not know
    chips: int | None  # None: unknown generation, or a suffix that is no whole chip count

    @property
    def label(self) -> str:
        return self.generation.label if self.generation else f"TPU {self.version}"

    @property
    def counted_as(self) -> str:
        """How the suffix became chips, for a person ("8 TensorCores, 2 per chip")."""
        generation = self.generation
        if generation is None or generation.tensorcores_per_chip is None:
            return f"{self.suffix} chips"
        return f"{self.suffix} TensorCores, {generation.tensorcores_per_chip} per chip"


def is_tpu_name(accelerator: str) -> bool:
    """True for a name in Google's TPU row form (``tpu-...``), well formed or not."""
    return accelerator.casefold().startswith("tpu-")


def tpu_slice(accelerator: str) -> TpuSlice | None:
    """Read ``tpu-<version>-<suffix>``; None when the name is not of that form."""
    match = _TPU_NAME.match(accelerator)
    if match is None:
        return None
    version, suffix = match.group(1), int(match.group(2))
    generation = TPU_GENERATIONS.get(version)
    chips: int | None = None
    if generation is not None and suffix > 0:
        per_chip = generation.tensorcores_per_chip or 1
        if suffix % per_chip == 0:
            chips = suffix // per_chip
    return TpuSlice(accelerator, version, suffix, generation, chips)


def rate_unit(accelerator: str) -> str:
    """What one rate of a row named ``accelerator`` pays for: "chip" or "GPU"."""
    return "chip" if is_tpu_name(accelerator) or accelerator in CHIP_ACCELERATORS else "GPU"


#: Google Cloud machine types whose GPUs are fixed, by the GPU rows' accelerator name
#: and count: the pairing SkyPilot itself prices (``_ACC_INSTANCE_TYPE_DICTS`` in
#: skypilot-org/skypilot sky/catalog/gcp_catalog.py at commit b9dd08e76883, read
#: 2026-12-02). Where several machines carry one count (L4 on G2), the cheapest in
#: the zone is taken, as SkyPilot does.
GCP_FIXED_HOSTS: dict[str, dict[int, tuple[str, ...]]] = {
    "A100": {
        1: ("a2-highgpu-1g",),
        2: ("a2-highgpu-2g",),
        4: ("a2-highgpu-4g",),
        8: ("a2-highgpu-8g",),
        16: ("a2-megagpu-16g",),
    },
    "A100-80GB": {
        1: ("a2-ultragpu-1g",),
        2: ("a2-ultragpu-2g",),
        4: ("a2-ultragpu-4g",),
        8: ("a2-ultragpu-8g",),
    },
    "L4": {
        1: ("g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16", "g2-standard-32"),
        2: ("g2-standard-24",),
        4: ("g2-standard-48",),
        8: ("g2-standard-96",),
    },
    "H100": {
        1: ("a3-highgpu-1g",),
        2: ("a3-highgpu-2g",),
        4: ("a3-highgpu-4g",),
        8: ("a3-highgpu-8g",),
    },
    "H100-MEGA": {8: ("a3-megagpu-8g",)},
    "H200": {8: ("a3-ultragpu-8g",)},
    "B200": {8: ("a4-highgpu-8g",)},
}
#: GPUs attached to an N1 machine: the host assumed is the cheapest N1 machine
#: (standard, highmem or highcpu) in the zone with at least this many vCPUs and
#: :data:`GCP_N1_GIB_PER_VCPU` GiB of memory per vCPU -- SkyPilot's default host for
#: that GPU count (``_NUM_ACC_TO_NUM_CPU`` in the same file and commit). Names not
#: listed use ``"DEFAULT"``.
GCP_N1_MIN_VCPUS: dict[str, dict[int, int]] = {
    "K80": {1: 4, 2: 8, 4: 16, 8: 32, 16: 64},
    "V100": {1: 8, 2: 16, 4: 32, 8: 64},
    "T4": {1: 4, 2: 8, 4: 48},
    "P100": {1: 8, 2: 16, 4: 32, 8: 64},
    "DEFAULT": {1: 8, 2: 16, 4: 32, 8: 64, 16: 128},
}
GCP_N1_GIB_PER_VCPU = 4
GCP_N1_FAMILIES: tuple[str, ...] = ("n1-standard-", "n1-highmem-", "n1-highcpu-")
_GCP_HOST_TYPES = frozenset(
    host for counts in GCP_FIXED_HOSTS.values() for hosts in counts.values() for host in hosts
)


def rate_basis(offer: Offer) -> str:
    """How ``offer``'s per-GPU (or per-chip) rate was made, for its provenance."""
    if offer.cloud == "gcp" and (tpu := tpu_slice(offer.accelerator)) is not None:
        return (
            f"Google Cloud lists a Cloud TPU slice's price: {offer.accelerator} at "
            f"${offer.price_usd:g}/hour in one zone of {offer.region}, divided by its "
            f"{offer.gpu_count} chips ({tpu.counted_as}); the TPU VMs' host CPUs and memory "
            "are included"
        )
    if offer.accelerator in CHIP_ACCELERATORS:
        return (
            f"instance price divided by its {offer.gpu_count} {offer.accelerator} chips; "
            "the host's CPUs and memory are included"
        )
    if offer.cloud != "gcp":
        return RATE_BASIS
    n = offer.gpu_count
    basis = (
        f"Google Cloud lists GPUs apart from their machine: {offer.instance_type}'s price "
        f"(its CPUs and memory) plus the price of its {n}x {offer.accelerator}, both as "
        f"listed for one zone of {offer.region}, divided by {n}"
    )
    if offer.instance_type.startswith(GCP_N1_FAMILIES):
        vcpus = _n1_min_vcpus(offer.accelerator, n) or 0
        basis += (
            f"; host assumed: {offer.instance_type}, the cheapest N1 machine in that zone "
            f"with at least {vcpus} vCPUs and {vcpus * GCP_N1_GIB_PER_VCPU} GiB "
            f"(SkyPilot's default host for {n}x {offer.accelerator})"
        )
    return basis


def _n1_min_vcpus(accelerator: str, count: int) -> int | None:
    table = GCP_N1_MIN_VCPUS.get(accelerator, GCP_N1_MIN_VCPUS["DEFAULT"])
    return table.get(count)


def map_accelerator(
    cloud: str, accelerator: str, instance: str, gib_per_gpu: float | None = None
) -> tuple[str | None, str | None]:
    """The catalog id for one row and, when there is none, why (None: no rule)."""
    for rule in MAPPING_RULES:
        if rule.matches(cloud, accelerator, instance, gib_per_gpu):
            return rule.catalog_id, rule.reason
    return None, None


@dataclass(frozen=True)
class Offer:
    """One instance type in one region, as one row of a ``vms.csv`` lists it."""

    cloud: str
    gpu_id: str
    accelerator: str
    instance_type: str
    region: str
    gpu_count: int
    price_usd: float  # the instance per hour, host included
    spot_usd: float | None

    @property
    def provider(self) -> str:
        name = PROVIDER_NAMES.get(self.cloud, self.cloud)
        if self.cloud == "shadeform" and "_" in self.instance_type:
            # A reseller: the instance type starts with the cloud it runs on.
            return f"{name} ({self.instance_type.split('_', 1)[0][:40]})"
        return name

    @property
    def kind(self) -> str:
        return "marketplace" if self.cloud in MARKETPLACE_CLOUDS else "on_demand"

    @property
    def unit(self) -> str:
        """What one rate pays for: "GPU", or "chip" (a TPU slice's, a Trainium's)."""
        return rate_unit(self.accelerator)

    @property
    def usd_per_gpu_hour(self) -> float:
        """Per GPU, or per chip where :attr:`unit` says so."""
        return self.price_usd / self.gpu_count

    @property
    def spot_per_gpu_hour(self) -> float | None:
        return None if self.spot_usd is None else self.spot_usd / self.gpu_count


@dataclass(frozen=True)
class _GcpRow:
    """One row of Google Cloud's file kept for the join (a host or a GPU row)."""

    line: int
    name: str  # the machine type, or the accelerator name
    zone: str
    region: str
    price: float | None
    spot: float | None
    count: int = 0  # GPUs (GPU rows), chips (TPU slice rows)
    vcpus: float | None = None  # host rows
    memory_gib: float | None = None


@dataclass
class _GcpRows:
    hosts: dict[str, list[_GcpRow]] = field(default_factory=dict)  # by zone
    gpus: list[_GcpRow] = field(default_factory=list)
    tpus: list[_GcpRow] = field(default_factory=list)  # count: the slice's chips


@dataclass(frozen=True)
class RowProblem:
    """A row (or the whole file, ``line`` 0) that was skipped, and why."""

    cloud: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.cloud}/vms.csv" + (f" line {self.line}" if self.line else "")
        return f"{where}: {self.message}"


@dataclass
class ParseResult:
    """What one file gave: offers, skipped rows, and names the table cannot map."""

    cloud: str
    offers: list[Offer] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    #: problems beyond :data:`MAX_LISTED_PROBLEMS`, counted only
    more_problems: int = 0
    #: accelerator name -> rows, for names with no catalog id
    unmapped: Counter[str] = field(default_factory=Counter)
    #: accelerator name -> why it is not mapped (names the table knows)
    unmapped_reasons: dict[str, str] = field(default_factory=dict)

    @property
    def readable(self) -> bool:
        """True unless the whole file was refused (wrong columns, not text, too big)."""
        return not any(problem.line == 0 for problem in self.problems)

    def problem(self, line: int, message: str) -> None:
        if len(self.problems) < MAX_LISTED_PROBLEMS:
            self.problems.append(RowProblem(self.cloud, line, message))
        else:
            self.more_problems += 1


def valid_cloud_name(name: str) -> bool:
    """A cloud folder name: lowercase letters, digits, '-' and '_' (it becomes a path)."""
    return bool(_CLOUD_PATTERN.match(name))


def parse_vms_csv(data: bytes, cloud: str) -> ParseResult:
    """Parse one ``vms.csv``; never raises for what the bytes hold."""
    result = ParseResult(cloud)
    if len(data) > MAX_FILE_BYTES:
        result.problem(0, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; not read")
        return result
    text = data.decode("utf-8", errors="surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        result.problem(0, "empty file")
        return result
    except csv.Error as exc:
        result.problem(0, f"header is not CSV ({exc})")
        return result
    columns = {name.strip(): index for index, name in enumerate(header)}
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        result.problem(0, "missing column(s) " + ", ".join(missing) + "; not a SkyPilot vms.csv")
        return result
    gcp = _GcpRows() if cloud == "gcp" else None
    rows = 0
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            result.problem(line, f"not a CSV row ({exc})")
            if reader.line_num < line:  # no progress: stop rather than loop
                break
            continue
        rows += 1
        if rows > MAX_ROWS:
            result.problem(line, f"more than {MAX_ROWS:,} rows; the rest were not read")
            break
        _read_row(result, row, columns, line, gcp)
    if gcp is not None:
        _join_gcp(result, gcp)
    return result


def _read_row(
    result: ParseResult,
    row: list[str],
    columns: dict[str, int],
    line: int,
    gcp: _GcpRows | None = None,
) -> None:
    if sum(len(cell) for cell in row) > MAX_ROW_CHARS:
        result.problem(line, f"row longer than {MAX_ROW_CHARS} characters")
        return
    if not row or all(not cell.strip() for cell in row):
        return
    if any(_not_utf8(cell) for cell in row):
        result.problem(line, "not UTF-8 text")
        return

    def cell(name: str) -> str:
        index = columns.get(name)
        return row[index].strip() if index is not None and index < len(row) else ""

    accelerator = cell("AcceleratorName")
    instance = cell("InstanceType")
    if gcp is not None:
        _keep_gcp_row(result, gcp, cell, accelerator, instance, line)
        return
    if not accelerator:
        return  # a CPU-only instance
    if not instance:
        result.problem(line, "no InstanceType")
        return
    count = _number(cell("AcceleratorCount"))
    if count is None or count < 1 or count > MAX_GPUS_PER_INSTANCE or count != int(count):
        result.problem(
            line, f"AcceleratorCount {cell('AcceleratorCount')[:40]!r} is not a GPU count"
        )
        return
    gpus = int(count)
    gib = _gib_per_gpu(cell("GpuInfo"), gpus)
    gpu_id, reason = map_accelerator(result.cloud, accelerator, instance, gib)
    if gpu_id is None:
        name = accelerator[:60]
        result.unmapped[name] += 1
        if reason is not None:
            result.unmapped_reasons.setdefault(name, reason)
        return
    price = _number(cell("Price"))
    if price is None or price <= 0 or price / gpus > MAX_USD_PER_GPU_HOUR:
        result.problem(line, f"Price {cell('Price')[:40]!r} is not a positive hourly price")
        return
    spot_text = cell("SpotPrice")
    spot = _number(spot_text) if spot_text else None
    if spot_text and (spot is None or spot < 0 or spot / gpus > MAX_USD_PER_GPU_HOUR):
        result.problem(line, f"SpotPrice {spot_text[:40]!r} is not an hourly price; spot ignored")
        spot = None
    if spot is not None and spot == 0:
        spot = None  # SkyPilot writes 0 where a cloud has no spot price
    region = cell("Region")[:80] or "unspecified"
    result.offers.append(
        Offer(
            cloud=result.cloud,
            gpu_id=gpu_id,
            accelerator=accelerator,
            instance_type=instance[:120],
            region=region,
            gpu_count=gpus,
            price_usd=price,
            spot_usd=spot,
        )
    )


def _not_utf8(text: str) -> bool:
    return any("\udc80" <= char <= "\udcff" for char in text)


def _number(text: str) -> float | None:
    if not text or len(text) > 40:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _gib_per_gpu(gpu_info: str, gpus: int) -> float | None:
    """GiB per GPU from GpuInfo's ``TotalGpuMemoryInMiB`` (a regex: the field is a
    Python literal on some clouds and JSON on others, never evaluated)."""
    match = _TOTAL_MIB.search(gpu_info[:4000])
    if match is None:
        return None
    total = int(match.group(1))
    return total / 1024 / gpus if total > 0 else None


def _keep_gcp_row(
    result: ParseResult,
    gcp: _GcpRows,
    cell: Callable[[str], str],
    accelerator: str,
    instance: str,
    line: int,
) -> None:
    """Keep a Google Cloud GPU row, or a host row the join may need."""
    region = cell("Region")[:80] or "unspecified"
    zone = cell("AvailabilityZone")[:80] or region  # without zones, the region joins
    price = _number(cell("Price"))
    spot_text = cell("SpotPrice")
    spot = _number(spot_text) if spot_text else None
    if accelerator and not instance:
        if is_tpu_name(accelerator):
            _keep_tpu_row(result, gcp, cell, accelerator, zone, region, price, line)
            return
        count = _number(cell("AcceleratorCount"))
        if count is None or count < 1 or count > MAX_GPUS_PER_INSTANCE or count != int(count):
            result.problem(
                line, f"AcceleratorCount {cell('AcceleratorCount')[:40]!r} is not a GPU count"
            )
            return
        gcp.gpus.append(_GcpRow(line, accelerator[:60], zone, region, price, spot, int(count)))
        return
    if accelerator or not instance:
        # A machine row that names its own GPUs is not this file's layout: not guessed.
        if accelerator:
            result.problem(line, "a GPU row with an InstanceType; Google Cloud's file has none")
        return
    if instance in _GCP_HOST_TYPES or instance.startswith(GCP_N1_FAMILIES):
        host = _GcpRow(
            line,
            instance[:120],
            zone,
            region,
            price,
            spot,
            vcpus=_number(cell("vCPUs")),
            memory_gib=_number(cell("MemoryGiB")),
        )
        gcp.hosts.setdefault(zone, []).append(host)


def _keep_tpu_row(
    result: ParseResult,
    gcp: _GcpRows,
    cell: Callable[[str], str],
    accelerator: str,
    zone: str,
    region: str,
    price: float | None,
    line: int,
) -> None:
    """Keep a Cloud TPU slice row of a generation the catalog holds; list the others."""
    tpu = tpu_slice(accelerator)
    if tpu is None:
        result.problem(
            line,
            f"AcceleratorName {accelerator[:60]!r} is not a Cloud TPU accelerator type "
            "(tpu-<version>-<size>)",
        )
        return
    generation = tpu.generation
    if generation is None or generation.catalog_id is None:
        # One line per generation, not per slice size (v5p alone lists about 100).
        key = f"tpu-{tpu.version}-*"
        result.unmapped[key] += 1
        reason = (
            f"no catalog entry for {tpu.label}"
            if generation is not None
            else f"{tpu.label}: a Cloud TPU generation GPUDesk does not know"
        )
        result.unmapped_reasons.setdefault(key, reason)
        return
    chips = tpu.chips
    if chips is None or chips > MAX_CHIPS_PER_SLICE:
        result.problem(
            line, f"{accelerator[:60]} is not a whole number of chips ({tpu.counted_as})"
        )
        return
    if _number(cell("AcceleratorCount")) != 1:
        result.problem(
            line,
            f"AcceleratorCount {cell('AcceleratorCount')[:40]!r} for a TPU slice "
            "(Google Cloud's file lists one slice per row)",
        )
        return
    placeholder = TPU_PLACEHOLDER_PRICES.get(tpu.version)
    if price is None or price <= 0 or price / chips > MAX_USD_PER_GPU_HOUR:
        result.problem(line, f"Price {cell('Price')[:40]!r} is not a positive hourly price")
        return
    if price == placeholder:
        result.problem(
            line,
            f"Price {price:g} for {accelerator[:60]} is SkyPilot's placeholder for a "
            f"{tpu.label} price it did not find, not a price",
        )
        return
    spot = _number(cell("SpotPrice"))
    if spot is not None and (
        spot <= 0 or spot == placeholder or spot / chips > MAX_USD_PER_GPU_HOUR
    ):
        spot = None
    gcp.tpus.append(_GcpRow(line, accelerator[:60], zone, region, price, spot, chips))


def _tpu_offer(result: ParseResult, row: _GcpRow) -> Offer | None:
    tpu = tpu_slice(row.name)
    if tpu is None or tpu.generation is None or tpu.generation.catalog_id is None:
        return None  # kept rows were checked; this keeps the type checker honest
    assert row.price is not None
    return Offer(
        cloud=result.cloud,
        gpu_id=tpu.generation.catalog_id,
        accelerator=row.name,
        instance_type=row.name,  # a slice has no machine type; its name says its size
        region=row.region,
        gpu_count=row.count,
        price_usd=row.price,
        spot_usd=row.spot,
    )


def _join_gcp(result: ParseResult, gcp: _GcpRows) -> None:
    """Each GPU row joined with its host in the same zone; one offer per host and region
    (the cheapest zone). A row that cannot be joined is a problem saying why."""
    best: dict[tuple[str, str, str], Offer] = {}
    offers = [_gcp_offer(result, gcp, gpu) for gpu in gcp.gpus]
    offers += [_tpu_offer(result, tpu) for tpu in gcp.tpus]
    for offer in offers:
        if offer is None:
            continue
        key = (offer.gpu_id, offer.instance_type, offer.region)
        kept = best.get(key)
        if kept is None or offer.price_usd < kept.price_usd:
            best[key] = offer
    result.offers.extend(best.values())


def _gcp_offer(result: ParseResult, gcp: _GcpRows, gpu: _GcpRow) -> Offer | None:
    where = f"zone {gpu.zone[:40]}"
    fixed = GCP_FIXED_HOSTS.get(gpu.name)
    names = fixed.get(gpu.count) if fixed is not None else None
    # The name is mapped before any host is looked for: the machine family the
    # name goes with decides the part, and an unmapped name is listed, not joined.
    probe = (names or next(iter(fixed.values())))[0] if fixed is not None else "n1-"
    gpu_id, reason = map_accelerator(result.cloud, gpu.name, probe, None)
    if gpu_id is None:
        result.unmapped[gpu.name] += 1
        if reason is not None:
            result.unmapped_reasons.setdefault(gpu.name, reason)
        return None
    if fixed is not None:
        if names is None:
            result.problem(gpu.line, f"no Google Cloud machine carries {gpu.count}x {gpu.name}")
            return None
        hosts = [h for h in gcp.hosts.get(gpu.zone, ()) if h.name in names]
        wanted = " or ".join(names)
    else:
        vcpus = _n1_min_vcpus(gpu.name, gpu.count)
        if vcpus is None:
            result.problem(gpu.line, f"no N1 host is known for {gpu.count}x {gpu.name}")
            return None
        memory = vcpus * GCP_N1_GIB_PER_VCPU
        hosts = [
            h
            for h in gcp.hosts.get(gpu.zone, ())
            if h.name.startswith(GCP_N1_FAMILIES)
            and h.vcpus is not None
            and h.memory_gib is not None
            and h.vcpus >= vcpus
            and h.memory_gib >= memory
        ]
        wanted = f"an N1 machine with {vcpus}+ vCPUs and {memory}+ GiB"
    if gpu.price is None or gpu.price <= 0:
        result.problem(gpu.line, f"{gpu.name} price is not a positive hourly price")
        return None
    priced = [h for h in hosts if h.price is not None and h.price > 0]
    if not priced:
        if hosts:
            result.problem(
                gpu.line,
                f"host {hosts[0].name} has no positive price in {where}; "
                f"{gpu.count}x {gpu.name} not combined",
            )
        else:
            result.problem(gpu.line, f"no host ({wanted}) listed in {where} for {gpu.name}")
        return None
    host = min(priced, key=lambda h: (h.price or 0.0, h.name))
    assert host.price is not None
    if host.region != gpu.region:
        result.problem(
            gpu.line, f"host {host.name} in {where} is listed in region {host.region[:40]}"
        )
        return None
    total = host.price + gpu.price
    if not math.isfinite(total) or total / gpu.count > MAX_USD_PER_GPU_HOUR:
        result.problem(gpu.line, f"{host.name} + {gpu.count}x {gpu.name} is not an hourly price")
        return None
    spot: float | None = None
    if gpu.spot is not None and host.spot is not None and gpu.spot > 0 and host.spot > 0:
        spot = host.spot + gpu.spot
        if not math.isfinite(spot) or spot / gpu.count > MAX_USD_PER_GPU_HOUR:
            spot = None
    return Offer(
        cloud=result.cloud,
        gpu_id=gpu_id,
        accelerator=gpu.name,
        instance_type=host.name,
        region=gpu.region,
        gpu_count=gpu.count,
        price_usd=total,
        spot_usd=spot,
    )
