"""The Prometheus exposition of a :class:`~gpudesk.telemetry.readings.Snapshot`.

The only module that imports ``prometheus_client`` (an import-linter contract
says so): a custom collector turns the last collection into metric families
at each scrape, and the client's own HTTP server serves them (no hand-written
exposition). Names follow Prometheus's conventions (base units in the name,
``_total`` on counters, https://prometheus.io/docs/practices/naming/).

Every device series carries the labels :data:`DEVICE_LABELS`; MIG instances
are their own series, with ``parent_uuid`` and ``mig_profile`` set (empty,
that is absent, on physical GPUs). A field a device does not report has no
series; ``gpudesk_gpu_up`` is there for every device found, 0 when it did not
answer, with its readings dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from gpudesk.telemetry.readings import DeviceReading, Snapshot

DEVICE_LABELS: tuple[str, ...] = (
    "uuid",
    "pci_bus_id",
    "index",
    "name",
    "vendor",
    "catalog_id",
    "hostname",
    "parent_uuid",
    "mig_profile",
)
PROCESS_LABELS: tuple[str, ...] = (
    "uuid",
    "index",
    "hostname",
    "pid",
    "user",
    "container",
    "pod",
)

Value = Callable[[DeviceReading], float | int | bool | None]
Values = Callable[[DeviceReading], dict[str, float] | dict[str, int] | None]


@dataclass(frozen=True, slots=True)
class Family:
    """One metric family of the device field set: a single value, or one per label value."""

    name: str
    help: str
    counter: bool = False
    value: Value | None = None
    values: Values | None = None
    #: The extra label of a ``values`` family ("sensor", "clock", ...).
    label: str = ""


def _field(name: str) -> Value:
    return lambda reading: getattr(reading, name)  # type: ignore[no-any-return]


def _fields(name: str) -> Values:
    return lambda reading: getattr(reading, name)  # type: ignore[no-any-return]


#: The common field set as exported, in order (docs/exporter.md lists it per vendor).
FAMILIES: tuple[Family, ...] = (
    Family(
        "gpudesk_gpu_utilization_ratio",
        "Share of time the GPU was busy (0-1)",
        value=_field("utilization_ratio"),
    ),
    Family(
        "gpudesk_gpu_memory_utilization_ratio",
        "Share of time device memory was read or written (0-1)",
        value=_field("memory_utilization_ratio"),
    ),
    Family(
        "gpudesk_gpu_memory_used_bytes",
        "Device memory in use",
        value=_field("memory_used_bytes"),
    ),
    Family(
        "gpudesk_gpu_memory_total_bytes",
        "Device memory in all",
        value=_field("memory_total_bytes"),
    ),
    Family(
        "gpudesk_gpu_temperature_celsius",
        "Temperature by sensor: gpu (the die), hotspot, memory",
        values=_fields("temperatures_celsius"),
        label="sensor",
    ),
    Family("gpudesk_gpu_power_watts", "Power draw", value=_field("power_watts")),
    Family(
        "gpudesk_gpu_power_limit_watts",
        "Power limit in force",
        value=_field("power_limit_watts"),
    ),
    Family(
        "gpudesk_gpu_clock_hertz",
        "Current clock: graphics (NVIDIA SM, AMD sclk, Intel GT) and memory",
        values=_fields("clocks_hertz"),
        label="clock",
    ),
    Family(
        "gpudesk_gpu_clock_max_hertz",
        "Highest clock the device can run",
        values=_fields("clocks_max_hertz"),
        label="clock",
    ),
    Family(
        "gpudesk_gpu_fan_ratio", "Fan speed as a share of its maximum", value=_field("fan_ratio")
    ),
    Family(
        "gpudesk_gpu_pcie_link_generation",
        "PCIe generation the link runs at now",
        value=_field("pcie_link_generation"),
    ),
    Family(
        "gpudesk_gpu_pcie_link_generation_max",
        "Highest PCIe generation of the link",
        value=_field("pcie_link_generation_max"),
    ),
    Family(
        "gpudesk_gpu_pcie_link_width",
        "PCIe lanes the link runs with now",
        value=_field("pcie_link_width"),
    ),
    Family(
        "gpudesk_gpu_pcie_link_width_max",
        "Most PCIe lanes of the link",
        value=_field("pcie_link_width_max"),
    ),
    Family(
        "gpudesk_gpu_energy_joules",
        "Energy used since the driver loaded",
        counter=True,
        value=_field("energy_joules_total"),
    ),
    Family(
        "gpudesk_gpu_xid_events",
        "XID events seen since the exporter started, by XID",
        counter=True,
        values=_fields("xid_events_total"),
        label="xid",
    ),
    Family(
        "gpudesk_gpu_remapped_rows",
        "Memory rows remapped over the board's life, by cause",
        counter=True,
        values=_fields("remapped_rows_total"),
        label="cause",
    ),
    Family(
        "gpudesk_gpu_row_remap_pending",
        "1 when a row remap waits for a GPU reset",
        value=_field("row_remap_pending"),
    ),
    Family(
        "gpudesk_gpu_row_remap_failure",
        "1 when a row remap failed (the GPU needs service)",
        value=_field("row_remap_failure"),
    ),
    Family(
        "gpudesk_gpu_ecc_errors",
        "ECC errors since the driver loaded, by type",
        counter=True,
        values=_fields("ecc_errors_total"),
        label="type",
    ),
    Family(
        "gpudesk_gpu_pcie_replays",
        "PCIe replays (link-level retransmissions)",
        counter=True,
        value=_field("pcie_replays_total"),
    ),
    Family(
        "gpudesk_gpu_nvlink_errors",
        "NVLink error counters, by link and counter (link/counter)",
        counter=True,
        values=_fields("nvlink_errors_total"),
        label="counter",
    ),
    Family(
        "gpudesk_gpu_catalog_memory_bandwidth_bytes_per_second",
        "The catalog entry's peak memory bandwidth",
        value=lambda reading: reading.identity.catalog_memory_bandwidth_bytes_per_second,
    ),
    Family(
        "gpudesk_gpu_catalog_dense_bf16_flops",
        "The catalog entry's dense BF16 tensor rate, in floating-point operations per second",
        value=lambda reading: reading.identity.catalog_dense_bf16_flops,
    ),
)


def device_labels(reading: DeviceReading, hostname: str) -> list[str]:
    identity = reading.identity
    return [
        identity.uuid or "",
        identity.pci_bus_id or "",
        "" if identity.index is None else str(identity.index),
        identity.name or "",
        identity.vendor.value,
        identity.catalog_id or "",
        hostname,
        identity.parent_uuid or "",
        identity.mig_profile or "",
    ]


def _family(name: str, help_text: str, counter: bool, labels: list[str]) -> Any:
    if counter:
        return CounterMetricFamily(name.removesuffix("_total"), help_text, labels=labels)
    return GaugeMetricFamily(name, help_text, labels=labels)


def device_families(snapshot: Snapshot, throttle_reasons: Iterable[str]) -> Iterator[Metric]:
    """The device families of one snapshot (only the series a device reports)."""
    labels = list(DEVICE_LABELS)
    up = GaugeMetricFamily(
        "gpudesk_gpu_up", "1 when the device answered the last collection", labels=labels
    )
    for reading in snapshot.devices:
        up.add_metric(device_labels(reading, snapshot.hostname), 1.0 if reading.up else 0.0)
    yield up
    answered = [reading for reading in snapshot.devices if reading.up]
    for family in FAMILIES:
        extra = [family.label] if family.label else []
        metric = _family(family.name, family.help, family.counter, labels + extra)
        for reading in answered:
            names = device_labels(reading, snapshot.hostname)
            if family.value is not None:
                value = family.value(reading)
                if value is not None:
                    metric.add_metric(names, float(value))
            elif family.values is not None:
                for key, number in sorted((family.values(reading) or {}).items()):
                    metric.add_metric([*names, key], float(number))
        yield metric
    throttle = GaugeMetricFamily(
        "gpudesk_gpu_throttle_reason_active",
        "1 for each clock-event (throttle) reason in force, 0 for the others",
        labels=[*labels, "reason"],
    )
    known = tuple(throttle_reasons)
    for reading in answered:
        if reading.throttle_reasons is None:
            continue
        names = device_labels(reading, snapshot.hostname)
        active = set(reading.throttle_reasons)
        for reason in sorted(set(known) | active):
            throttle.add_metric([*names, reason], 1.0 if reason in active else 0.0)
    yield throttle
    yield from _process_families(snapshot, answered)


def _process_families(snapshot: Snapshot, answered: list[DeviceReading]) -> Iterator[Metric]:
    memory = GaugeMetricFamily(
        "gpudesk_process_memory_used_bytes",
        "Device memory a process uses (--processes)",
        labels=list(PROCESS_LABELS),
    )
    utilization = GaugeMetricFamily(
        "gpudesk_process_utilization_ratio",
        "Share of the GPU's SM time a process had in NVML's last sample (--processes)",
        labels=list(PROCESS_LABELS),
    )
    memory_utilization = GaugeMetricFamily(
        "gpudesk_process_memory_utilization_ratio",
        "Share of the memory controller's time a process had in NVML's last sample",
        labels=list(PROCESS_LABELS),
    )
    for reading in answered:
        for process in reading.processes or ():
            names = [
                reading.identity.uuid or "",
                "" if reading.identity.index is None else str(reading.identity.index),
                snapshot.hostname,
                str(process.pid),
                process.user,
                process.container,
                process.pod,
            ]
            for family, value in (
                (memory, process.memory_used_bytes),
                (utilization, process.utilization_ratio),
                (memory_utilization, process.memory_utilization_ratio),
            ):
                if value is not None:
                    family.add_metric(names, float(value))
    yield from (memory, utilization, memory_utilization)


def health_families(snapshot: Snapshot) -> Iterator[Metric]:
    """The exporter's own health: each source's state and its collections."""
    labels = ["source", "hostname"]
    available = GaugeMetricFamily(
        "gpudesk_exporter_source_available",
        "1 when the source could be used (a driver loaded, a device found)",
        labels=labels,
    )
    collections = CounterMetricFamily(
        "gpudesk_exporter_collections", "Collections finished", labels=labels
    )
    overruns = CounterMetricFamily(
        "gpudesk_exporter_collection_overruns",
        "Collections still running past the deadline (their devices served as down)",
        labels=labels,
    )
    duration = GaugeMetricFamily(
        "gpudesk_exporter_collection_duration_seconds",
        "How long the last collection took",
        labels=labels,
    )
    last = GaugeMetricFamily(
        "gpudesk_exporter_last_collection_timestamp_seconds",
        "When the last collection finished (seconds since the epoch)",
        labels=labels,
    )
    for source in snapshot.sources:
        names = [source.source, snapshot.hostname]
        available.add_metric(names, 1.0 if source.available else 0.0)
        collections.add_metric(names, float(source.collections_total))
        overruns.add_metric(names, float(source.overruns_total))
        if source.last_duration_seconds is not None:
            duration.add_metric(names, source.last_duration_seconds)
        if source.last_success_timestamp_seconds is not None:
            last.add_metric(names, source.last_success_timestamp_seconds)
    yield from (available, collections, overruns, duration, last)


class SnapshotCollector(Collector):
    """Hands prometheus_client the families of the last snapshot at each scrape."""

    def __init__(self, snapshot: Callable[[], Snapshot], throttle_reasons: Iterable[str]) -> None:
        self._snapshot = snapshot
        self._throttle_reasons = tuple(throttle_reasons)

    def collect(self) -> Iterator[Metric]:
        snapshot = self._snapshot()
        yield from device_families(snapshot, self._throttle_reasons)
        yield from health_families(snapshot)


def registry_for(snapshot: Callable[[], Snapshot], throttle_reasons: Iterable[str]) -> Any:
    """A registry with the snapshot's families and the process's own (CPU, memory, files)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(snapshot, throttle_reasons))
    ProcessCollector(registry=registry)
    return registry


def serve(registry: Any, host: str, port: int) -> tuple[Any, Any]:
    """Serve ``/metrics`` on ``host:port`` in a daemon thread: (server, thread).

    Raises:
        OSError: the address cannot be bound (in use, not this machine's).
    """
    return start_http_server(port, addr=host, registry=registry)


def exposition_text(registry: Any) -> str:
    """The text a scrape gets (``gpudesk monitor`` tests and one-shot use)."""
    from prometheus_client import generate_latest

    return generate_latest(registry).decode("utf-8")
