"""The catalog entry: one accelerator model (a GPU, an SoC, a TPU ...) with sourced figures.

Throughput fields say what they are. ``fp32_tflops``, ``fp16_tflops`` and
``fp64_tflops`` are non-tensor (shader) rates; the ``*_tensor_*`` fields are
tensor-core rates **without** 2:4 sparsity (FP16/BF16 with FP32 accumulate).
The with-sparsity rate is only ever ``dense * sparsity_speedup``.

The schema is plain data: which rate or price applies is worked out by the
price modules (:mod:`gpudesk.catalog.prices`, :mod:`gpudesk.catalog.rate_book`),
which take an entry; this module imports none of them.
"""

from __future__ import annotations

import datetime as dt
import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictStr,
    TypeAdapter,
    ValidationError,
    computed_field,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails

# Strict scalar types: a catalog file is untrusted, and pydantic's lax mode
# would read ``memory_gb = true`` as 1 GB, ``"16"`` as 16 and "2024-01-01" as a
# date. TOML has real numbers, booleans and dates, so a file never needs the
# coercion. (Strict *model* mode is not used: it rejects TOML arrays for tuple
# fields and plain strings for enum fields.)
Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]
Integer = Annotated[int, Strict()]
Date = Annotated[dt.date, Strict()]
Text = Annotated[StrictStr, Field(min_length=1, max_length=200)]
LongText = Annotated[StrictStr, Field(min_length=1, max_length=4000)]
PositiveFloat = Annotated[Number, Field(gt=0)]
PositiveInt = Annotated[Integer, Field(gt=0)]

_ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_PCI_ID_PATTERN = re.compile(r"^0x[0-9a-f]{4}$")

#: Lowest price a catalog entry may state; below it a figure is a typo.
MIN_PRICE_USD = 1.0
#: Smallest memory size a GPU entry may state (an integrated part's carve-out).
MIN_MEMORY_GB = 0.1

#: PCI vendor ids of the vendors a catalog entry names, for ``pci_vendor_id``
#: when a file leaves it out. Other vendors (Apple, Habana) state it or have none.
PCI_VENDOR_IDS: dict[str, str] = {"nvidia": "0x10de", "amd": "0x1002", "intel": "0x8086"}

#: Pre-``cloud_rates`` fields: still read, migrated into one on-demand rate.
#: Records still carry them, from :func:`gpudesk.catalog.rate_book.lowest_on_demand_rate`.
LEGACY_CLOUD_FIELDS: tuple[str, ...] = (
    "cloud_hourly_usd",
    "cloud_hourly_source",
    "cloud_hourly_date",
)


class Segment(StrEnum):
    CONSUMER = "consumer"
    WORKSTATION = "workstation"
    DATACENTER = "datacenter"


class PriceKind(StrEnum):
    LAUNCH_MSRP = "launch_msrp"
    STREET = "street"
    USED = "used"
    ESTIMATE = "estimate"
    #: the launch price of a whole computer with the chip (Apple M-series, DGX Spark):
    #: the chip is not sold on its own; ``price_system`` names the machine
    SYSTEM = "system"


class Kind(StrEnum):
    """What the device is."""

    GPU = "gpu"
    #: CPU and GPU sharing one memory: Apple M-series, GB10, Jetson, MI300A, Strix Halo
    SOC = "soc"
    TPU = "tpu"  # Google's tensor processing units
    NPU = "npu"  # a neural processing unit (Huawei Ascend)
    #: any other ML chip: Intel Gaudi, AWS Trainium, Qualcomm AI 200
    ASIC = "asic"


class DeviceType(StrEnum):
    """The pre-``kind`` field, still read in catalog files and written in JSON (deprecated)."""

    GPU = "gpu"
    ACCELERATOR = "accelerator"
    SOC = "soc"


#: ``device_type`` -> the ``kind`` it reads as (an "accelerator" is an ASIC unless
#: the file says which kind it is).
KIND_OF_DEVICE_TYPE: dict[DeviceType, Kind] = {
    DeviceType.GPU: Kind.GPU,
    DeviceType.SOC: Kind.SOC,
    DeviceType.ACCELERATOR: Kind.ASIC,
}


def device_type_of(kind: Kind) -> DeviceType:
    """The deprecated ``device_type`` a kind is written as in JSON."""
    if kind is Kind.GPU:
        return DeviceType.GPU
    if kind is Kind.SOC:
        return DeviceType.SOC
    return DeviceType.ACCELERATOR


class Status(StrEnum):
    """Where the part stands, as of ``status_date``."""

    SHIPPING = "shipping"
    #: the vendor published figures; not on sale yet (figures it did not publish stay empty)
    ANNOUNCED = "announced"
    #: rented in one cloud only, never sold (TPUs, Trainium): rent, no purchase price
    CLOUD_ONLY = "cloud-only"
    END_OF_LIFE = "end-of-life"


#: Fields every part has once it ships; an announced part may leave them empty.
FIELDS_OPTIONAL_WHEN_ANNOUNCED: tuple[str, ...] = (
    "segment",
    "architecture",
    "release_year",
    "memory_type",
    "fp32_tflops",
    # an announced part's vendor may publish no memory size or bandwidth yet (Qualcomm
    # AI250, Intel Crescent Island): a gap everywhere, never 0
    "memory_gb",
    "bandwidth_gbs",
)

#: Of those, what a cloud-only part may leave empty: its vendor rents matrix rates only.
FIELDS_OPTIONAL_WHEN_CLOUD_ONLY: tuple[str, ...] = ("fp32_tflops",)

#: Catalog folder (lower-case vendor) -> the vendor's name as entries write it.
VENDOR_DISPLAY_NAMES: dict[str, str] = {
    "nvidia": "NVIDIA",
    "amd": "AMD",
    "intel": "Intel",
    "apple": "Apple",
    "google": "Google",
    "aws": "AWS",
    "huawei": "Huawei",
    "qualcomm": "Qualcomm",
}


def vendor_display_name(vendor: str) -> str:
    """``"aws"`` -> ``"AWS"``; a vendor the catalog does not know is returned as given."""
    return VENDOR_DISPLAY_NAMES.get(vendor.strip().casefold(), vendor.strip())


class LinkKind(StrEnum):
    """The technology of a device-to-device link."""

    NVLINK = "nvlink"
    XGMI = "xgmi"  # AMD Infinity Fabric
    ICI = "ici"  # Google's inter-chip interconnect
    NEURONLINK = "neuronlink"  # AWS Trainium
    UB = "ub"  # Huawei's Unified Bus
    ETHERNET = "ethernet"  # RoCE ports on the chip: Gaudi
    PCIE = "pcie"


class Topology(StrEnum):
    """How the links join the devices of one domain."""

    SWITCH = "switch"  # every device reaches the others at full rate (NVSwitch)
    MESH = "mesh"  # a point-to-point link to each peer
    BRIDGE = "bridge"  # a bridge joining ``max_devices`` cards
    TORUS = "torus"  # neighbours in a 2-D or 3-D torus (TPU pods)
    NONE = "none"  # no peer-to-peer link: the host's PCIe only


class Interconnect(BaseModel):
    """The device-to-device link an engine's collectives cross, with its source."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    kind: LinkKind
    #: free text, e.g. "NVLink 4", "Infinity Fabric (4th gen)"
    generation: Text | None = None
    #: GB/s in one direction: per device into a switch, or per peer link for a mesh;
    #: empty where the vendor names the link but publishes no rate (Qualcomm's PCIe
    #: scale-up): a link with no published rate, never 0
    gbs_per_direction: Annotated[Number, Field(gt=0, le=100_000)] | None = None
    topology: Topology
    #: devices one link domain joins (a bridge 2, HGX 8, NVL72 72)
    max_devices: Annotated[Integer, Field(ge=1, le=100_000)] | None = None
    source: Annotated[StrictStr, Field(min_length=1, max_length=2000)]

    @model_validator(mode="after")
    def _bridge_says_how_many(self) -> Interconnect:
        if self.topology is Topology.BRIDGE and self.max_devices is None:
            raise ValueError("a bridge needs max_devices, the cards it joins")
        if not self.source.strip():
            raise ValueError("source must not be empty")
        return self


class CloudRateKind(StrEnum):
    ON_DEMAND = "on_demand"
    SPOT = "spot"
    MARKETPLACE = "marketplace"  # a host-set price on a marketplace such as Vast.ai


#: A price seen "tomorrow" is one written in a time zone ahead of UTC; later is a typo.
_FUTURE_GRACE = dt.timedelta(days=1)
#: No price of a GPU for machine learning predates CUDA's first release (2007) -- and
#: the schema's earliest release year is 2010. Earlier is a typo (1970-01-01, 0001-01-01).
_EARLIEST = dt.date(2007, 1, 1)


def _check_seen_on(when: dt.date) -> None:
    """Refuse a price or rate date in the future (a day's grace) or before 2007."""
    today = dt.datetime.now(dt.UTC).date()
    if when > today + _FUTURE_GRACE:
        raise ValueError(f"{when.isoformat()} is in the future (today is {today.isoformat()})")
    if when < _EARLIEST:
        raise ValueError(
            f"{when.isoformat()} is before {_EARLIEST.year}, before any GPU price the "
            "catalog holds could have been seen"
        )


class CloudRate(BaseModel):
    """One cloud rental price for one GPU of this model, as a provider listed it."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    provider: Text
    usd_per_gpu_hour: Annotated[Number, Field(ge=0.01, le=1000)]
    kind: CloudRateKind
    #: when the rate was seen; optional only for rates migrated from old files
    date: Date | None = None
    #: the specific pricing page (URL); optional only for migrated rates
    source: Annotated[StrictStr, Field(min_length=1, max_length=500)] | None = None
    #: e.g. "8x H100 instance price divided by 8"
    note: Annotated[StrictStr, Field(min_length=1, max_length=500)] | None = None


class Statement(BaseModel):
    """A dated statement that no public figure exists, and why (``price_unavailable``,
    ``rates_unavailable``): "not sold on its own as of 2026-12" is a fact too."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    date: Date
    reason: Annotated[StrictStr, Field(min_length=1, max_length=500)]
    #: ``rates_unavailable`` only: False when no public provider offers the part by the
    #: hour at all (Apple silicon is rented as whole Macs; embedded modules, desktop
    #: systems), so rate-coverage figures leave it out of "what can be rented". Unset
    #: means it may be rented (hosts on marketplaces) but no dated public rate was found.
    offered: StrictBool | None = None


_LEGACY_CLOUD_TYPES: dict[str, TypeAdapter[Any]] = {
    "cloud_hourly_usd": TypeAdapter(Annotated[Number, Field(ge=0.01, le=1000)]),
    "cloud_hourly_source": TypeAdapter(Annotated[StrictStr, Field(min_length=1, max_length=500)]),
    "cloud_hourly_date": TypeAdapter(Date),
}


def _migrate_legacy_cloud_fields(data: dict[str, Any]) -> dict[str, Any]:
    """Turn ``cloud_hourly_usd/_source/_date`` into one on-demand ``cloud_rates`` item.

    Only values of the right type move; a wrong one stays under its own name
    so its error names the field the file has.
    """
    legacy = {key: data[key] for key in LEGACY_CLOUD_FIELDS if key in data}
    if "cloud_hourly_usd" not in legacy:
        return data
    for key, value in legacy.items():
        try:
            _LEGACY_CLOUD_TYPES[key].validate_python(value)
        except ValidationError:
            return data
    existing = data.get("cloud_rates", [])
    if not isinstance(existing, (list, tuple)):
        return data
    for key in legacy:
        del data[key]
    source = legacy.get("cloud_hourly_source")
    provider = source.split(",")[0].strip() if isinstance(source, str) else ""
    rate: dict[str, Any] = {
        "provider": provider or "unspecified",
        "usd_per_gpu_hour": legacy["cloud_hourly_usd"],
        "kind": CloudRateKind.ON_DEMAND.value,
        "date": legacy.get("cloud_hourly_date"),
        "source": source,
    }
    data["cloud_rates"] = [*existing, rate]
    return data


def _migrate_legacy_device_type(data: dict[str, Any]) -> dict[str, Any]:
    """Read ``device_type`` (deprecated) as ``kind``.

    gpu -> gpu, soc -> soc, accelerator -> asic unless the file gives a non-GPU
    ``kind`` too. A value that is not a device type, or one ``kind`` contradicts,
    stays under its own name, so its error names the field the file has.
    """
    legacy = data.get("device_type")
    if "device_type" not in data or not isinstance(legacy, str):
        return data
    try:
        device_type = DeviceType(legacy.strip())
    except ValueError:
        return data
    kind = data.get("kind")
    if kind is None:
        data["kind"] = KIND_OF_DEVICE_TYPE[device_type].value
    elif not isinstance(kind, str):
        return data
    else:
        try:
            stated = Kind(kind.strip())
        except ValueError:
            return data  # kind's own error names it
        if device_type_of(stated) is not device_type:
            return data
    del data["device_type"]
    return data


class CatalogEntry(BaseModel):
    """One accelerator model as the catalog files describe it."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    # identity
    id: Annotated[StrictStr, Field(min_length=1, max_length=80)]
    name: Annotated[StrictStr, Field(min_length=1, max_length=120)]
    vendor: Annotated[StrictStr, Field(min_length=1, max_length=40)]
    # segment, architecture, release_year, memory_type and fp32_tflops are required
    # unless the part is announced (FIELDS_OPTIONAL_WHEN_ANNOUNCED): None is a gap
    segment: Segment | None = None
    kind: Kind = Kind.GPU
    status: Status = Status.SHIPPING
    #: when the status was true: the announcement, the end of sales ...
    status_date: Date | None = None
    architecture: Annotated[StrictStr, Field(min_length=1, max_length=60)] | None = None
    release_year: Annotated[Integer, Field(ge=2010, le=2030)] | None = None
    form_factor: Text | None = None
    interface: Text | None = None
    # memory
    # memory_gb and bandwidth_gbs are required unless the part is announced
    memory_gb: Annotated[Number, Field(ge=MIN_MEMORY_GB, le=2048)] | None = None
    memory_type: Annotated[StrictStr, Field(min_length=1, max_length=40)] | None = None
    bandwidth_gbs: Annotated[Number, Field(gt=0, le=100_000)] | None = None
    memory_bus_bits: Annotated[PositiveInt, Field(le=16_384)] | None = None
    #: the L2 cache only; a last-level cache beyond it is ``l3_cache_mb``
    l2_cache_mb: Annotated[PositiveFloat, Field(le=4096)] | None = None
    #: a last-level cache beyond L2 (AMD Infinity Cache)
    l3_cache_mb: Annotated[PositiveFloat, Field(le=4096)] | None = None
    # compute
    boost_clock_mhz: Annotated[Integer, Field(gt=0, le=5000)] | None = None
    shader_cores: Annotated[PositiveInt, Field(le=1_000_000)] | None = None
    tensor_core_generation: Annotated[Integer, Field(ge=1, le=10)] | None = None
    compute_capability: Annotated[StrictStr, Field(pattern=r"^\d+\.\d+$")] | None = None
    fp32_tflops: Annotated[Number, Field(gt=0, le=1000)] | None = None
    fp16_tflops: Annotated[Number, Field(gt=0, le=2000)] | None = None
    fp64_tflops: Annotated[Number, Field(gt=0, le=1000)] | None = None
    tf32_tensor_tflops: Annotated[Number, Field(gt=0, le=10_000)] | None = None
    bf16_tensor_tflops: Annotated[Number, Field(gt=0, le=10_000)] | None = None
    fp16_tensor_tflops: Annotated[Number, Field(gt=0, le=10_000)] | None = None
    fp8_tensor_tflops: Annotated[Number, Field(gt=0, le=20_000)] | None = None
    int8_tensor_tops: Annotated[Number, Field(gt=0, le=40_000)] | None = None
    sparsity_speedup: Annotated[Number, Field(ge=1, le=8)] | None = None
    # power and features
    tdp_w: Annotated[Integer, Field(gt=0, le=3000)] | None = None
    ecc: StrictBool | None = None
    mig_max_instances: Annotated[Integer, Field(ge=1, le=64)] | None = None
    nvlink: StrictBool | None = None
    #: the device-to-device link; absent: the host's PCIe only
    interconnect: Interconnect | None = None
    # price
    price_usd: Annotated[Number, Field(ge=MIN_PRICE_USD, le=1_000_000)] | None = None
    price_date: Date | None = None
    price_kind: PriceKind | None = None
    #: e.g. "range $25k-$30k reported; midpoint"
    price_note: Annotated[StrictStr, Field(min_length=1, max_length=500)] | None = None
    #: the computer a ``system`` price is for, e.g. "Mac Studio (2023), 12-core CPU,
    #: 30-core GPU, 32 GB, 512 GB SSD"; required for that kind, refused for others
    price_system: Text | None = None
    #: the memory of the computer a ``system`` price is for (its base configuration's,
    #: often less than ``memory_gb``, the largest the chip is sold with): memory per
    #: price is computed from it, never from ``memory_gb``
    price_system_memory_gb: Annotated[Number, Field(ge=MIN_MEMORY_GB, le=2048)] | None = None
    cloud_rates: Annotated[tuple[CloudRate, ...], Field(max_length=50)] = ()
    #: why there is no price (dated), where there is none
    price_unavailable: Statement | None = None
    #: why no provider's hourly rate is given (dated), where there is none
    rates_unavailable: Statement | None = None
    # Pre-``cloud_rates`` inputs: set only when a value could not be migrated
    # (so its error names it); never dumped. Read the rate via the properties.
    legacy_cloud_hourly_usd: Annotated[Number, Field(ge=0.01, le=1000)] | None = Field(
        default=None, alias="cloud_hourly_usd", exclude=True, repr=False
    )
    legacy_cloud_hourly_source: Annotated[StrictStr, Field(min_length=1, max_length=500)] | None = (
        Field(default=None, alias="cloud_hourly_source", exclude=True, repr=False)
    )
    legacy_cloud_hourly_date: Date | None = Field(
        default=None, alias="cloud_hourly_date", exclude=True, repr=False
    )
    # Pre-``kind`` input: set only when it could not be read as a kind (so its error
    # names it); JSON carries the ``device_type`` property instead.
    legacy_device_type: DeviceType | None = Field(
        default=None, alias="device_type", exclude=True, repr=False
    )
    # matching local devices
    nvml_names: Annotated[tuple[Text, ...], Field(max_length=50)] = ()
    #: derived from ``vendor`` when a file leaves it out (NVIDIA, AMD, Intel)
    pci_vendor_id: StrictStr | None = None
    pci_device_ids: Annotated[tuple[StrictStr, ...], Field(max_length=100)] = ()
    # provenance
    sources: Annotated[tuple[LongText, ...], Field(min_length=1, max_length=40)]
    #: plain sentences for a reader of the app or a report
    notes: LongText | None = None
    #: how figures were derived and where popular figures differ (maintainers)
    provenance: LongText | None = None

    @model_validator(mode="before")
    @classmethod
    def _fill_derived_inputs(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = _migrate_legacy_device_type(_migrate_legacy_cloud_fields(dict(data)))
        vendor = data.get("vendor")
        if "pci_vendor_id" not in data and isinstance(vendor, str):
            derived = PCI_VENDOR_IDS.get(vendor.strip().casefold())
            if derived is not None:
                data["pci_vendor_id"] = derived
        return data

    @field_validator("id")
    @classmethod
    def _id_is_slug(cls, value: str) -> str:
        if not _ID_PATTERN.match(value):
            raise ValueError("must be a lowercase slug of a-z, 0-9 and single hyphens")
        return value

    @field_validator("price_date")
    @classmethod
    def _price_date_is_plausible(cls, value: dt.date | None) -> dt.date | None:
        if value is not None:
            _check_seen_on(value)
        return value

    @field_validator("cloud_rates")
    @classmethod
    def _rate_dates_are_plausible(cls, value: tuple[CloudRate, ...]) -> tuple[CloudRate, ...]:
        for rate in value:
            if rate.date is not None:
                _check_seen_on(rate.date)
        return value

    @field_validator("pci_vendor_id")
    @classmethod
    def _pci_vendor_is_hex(cls, value: str | None) -> str | None:
        if value is None:
            return None
        normalised = value.strip().lower()
        if not _PCI_ID_PATTERN.match(normalised):
            raise ValueError(f"{value!r} is not a PCI vendor id like '0x10de'")
        return normalised

    @field_validator("pci_device_ids")
    @classmethod
    def _pci_ids_are_hex(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        normalised = tuple(item.strip().lower() for item in value)
        for item in normalised:
            if not _PCI_ID_PATTERN.match(item):
                raise ValueError(f"{item!r} is not a PCI device id like '0x2684'")
        return normalised

    @field_validator("sources")
    @classmethod
    def _sources_not_blank(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not item.strip() for item in value):
            raise ValueError("a source must not be empty")
        return value

    @model_validator(mode="after")
    def _price_has_date_and_kind(self) -> CatalogEntry:
        if self.price_usd is not None and (self.price_date is None or self.price_kind is None):
            raise ValueError("price_usd needs price_date and price_kind")
        if self.price_note is not None and self.price_usd is None:
            raise ValueError("price_note needs price_usd")
        if self.price_kind is PriceKind.SYSTEM and self.price_system is None:
            raise ValueError(
                "price_kind 'system' needs price_system, the computer the price is for"
            )
        if self.price_system is not None and self.price_kind is not PriceKind.SYSTEM:
            raise ValueError("price_system is only for price_kind 'system'")
        if self.price_system_memory_gb is not None:
            if self.price_kind is not PriceKind.SYSTEM:
                raise ValueError("price_system_memory_gb is only for price_kind 'system'")
            if self.memory_gb is not None and self.price_system_memory_gb > self.memory_gb:
                raise ValueError(
                    "price_system_memory_gb is more than memory_gb, the most this chip is sold with"
                )
        if self.legacy_cloud_hourly_source is not None or self.legacy_cloud_hourly_date is not None:
            raise ValueError("cloud_hourly_source and cloud_hourly_date need cloud_hourly_usd")
        if self.price_unavailable is not None and self.price_unavailable.offered is not None:
            raise ValueError("'offered' is said of rates only (rates_unavailable), not of prices")
        return self

    @model_validator(mode="after")
    def _status_fits_the_figures(self) -> CatalogEntry:
        if self.legacy_device_type is not None:
            raise ValueError(
                f"device_type {self.legacy_device_type.value!r} disagrees with kind "
                f"{self.kind.value!r}; write kind only (device_type is deprecated)"
            )
        if self.status is not Status.ANNOUNCED:
            # A cloud-only accelerator's vendor may publish no FP32 rate (Google's TPUs):
            # left empty, never guessed.
            optional = FIELDS_OPTIONAL_WHEN_CLOUD_ONLY if self.status is Status.CLOUD_ONLY else ()
            missing = [
                InitErrorDetails(type="missing", loc=(name,), input=None)
                for name in FIELDS_OPTIONAL_WHEN_ANNOUNCED
                if getattr(self, name) is None and name not in optional
            ]
            if missing:
                raise ValidationError.from_exception_data(type(self).__name__, missing)
        if self.status is not Status.SHIPPING and self.status_date is None:
            raise ValueError(
                f"status {self.status.value!r} needs status_date, the date it was so "
                "(announced on, cloud-only as of, end of life since)"
            )
        if self.status is Status.CLOUD_ONLY and self.price_usd is not None:
            raise ValueError(
                "a cloud-only part is not sold: no price_usd; say so with price_unavailable"
            )
        return self

    @field_validator("status_date")
    @classmethod
    def _status_date_is_plausible(cls, value: dt.date | None) -> dt.date | None:
        if value is not None:
            _check_seen_on(value)
        return value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def device_type(self) -> DeviceType:
        """Deprecated: ``kind`` as the pre-``kind`` field said it (kept in JSON for a
        release: "accelerator" for a TPU, NPU or ASIC)."""
        return device_type_of(self.kind)

    @property
    def is_announced(self) -> bool:
        return self.status is Status.ANNOUNCED

    @property
    def has_tensor_cores(self) -> bool:
        # A stored generation says so even where the rates are unpublished (the A10G,
        # the L20): "no tensor cores" would be a wrong fact, not a missing one.
        return self.tensor_core_generation is not None or any(
            value is not None
            for value in (
                self.fp16_tensor_tflops,
                self.bf16_tensor_tflops,
                self.tf32_tensor_tflops,
                self.fp8_tensor_tflops,
                self.int8_tensor_tops,
            )
        )

    @property
    def fp16_tensor_sparse_tflops(self) -> float | None:
        """The with-sparsity FP16 tensor rate, derived, never stored."""
        if self.fp16_tensor_tflops is None or self.sparsity_speedup is None:
            return None
        return self.fp16_tensor_tflops * self.sparsity_speedup

    @property
    def pci_ids(self) -> tuple[str, ...]:
        """``"vendor:device"`` ids such as ``"0x1002:0x74a1"``, for matching."""
        if self.pci_vendor_id is None:
            return ()
        return tuple(f"{self.pci_vendor_id}:{device}" for device in self.pci_device_ids)


#: Field names in catalog order; the CLI, tables and exports use this order.
ENTRY_FIELDS: tuple[str, ...] = tuple(
    name for name in CatalogEntry.model_fields if not name.startswith("legacy_")
)
#: Deprecated keys JSON and CSV still carry (computed from the fields), for a release.
DEPRECATED_RECORD_FIELDS: tuple[str, ...] = ("device_type",)
