"""The fleet summary: GPUs by model, and the GPUs that stand out from their siblings.

Rules, each an ``Outlier`` with the ``check`` named here:

- ``measured:<test>`` — a benchmark figure below :data:`SLOW_FRACTION` of the
  fleet median for the same model and the same test (at least two GPUs of
  that model measured). CPU runs are compared per CPU model, with
  ``gpu_index`` null.
- ``pcie_width`` — the link runs narrower than the GPU supports (x8 of x16):
  a seating, riser or BIOS problem, and not something a GPU does to save power.
- ``pcie_gen`` — the link runs below its maximum generation while the GPU is
  not idle. Idle GPUs lower the link generation to save power (nvidia-smi
  shows Gen 1 at idle), so an idle GPU is never flagged for it.
- ``throttle`` — clock-event reasons active other than idle and
  application-clock settings.
- ``ecc`` — uncorrectable ECC errors counted (volatile or aggregate).
- ``memory_repair`` — retired pages or remapped rows pending, or a failed remap.
- ``driver`` — a driver version that differs from the most common one among
  GPUs of the same model.
- ``lost`` — a GPU that stopped answering.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpudesk.fleet.document import BenchView, DetectionView, GpuView, NodeView

#: A measured figure below this fraction of the fleet median is an outlier.
SLOW_FRACTION = 0.85
#: Clock-event reasons that are not a problem.
BENIGN_CLOCK_EVENTS = frozenset({"gpu_idle", "applications_clocks_setting"})


_CHECK_LABELS = {
    "pcie_width": "narrow PCIe link",
    "pcie_gen": "PCIe below max gen",
    "throttle": "throttled",
    "ecc": "ECC errors",
    "memory_repair": "memory repair pending",
    "driver": "driver differs",
    "lost": "lost",
}


def check_label(check: str) -> str:
    """A few words for a check name: "slow copy", "narrow PCIe link"."""
    if check.startswith("measured:"):
        what = check.removeprefix("measured:")
        return "slow " + (what.upper() if what.startswith(("gemm", "h2d", "d2h")) else what)
    return _CHECK_LABELS.get(check, check)


@dataclass(frozen=True, slots=True)
class Outlier:
    node_id: str
    gpu_index: int | None
    check: str
    value: float | int | str | None
    fleet_median: float | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "gpu_index": self.gpu_index,
            "check": self.check,
            "value": self.value,
            "fleet_median": self.fleet_median,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class FleetGpu:
    """One physical GPU of the fleet, with the node it sits in."""

    node: NodeView
    gpu: GpuView
    driver_version: str | None

    @property
    def model(self) -> str:
        return model_key(self.gpu.catalog_id, self.gpu.name)


def model_key(catalog_id: str | None, name: str | None) -> str:
    """The name a model is counted under: its catalog id, else its reported name."""
    return catalog_id or name or "unknown GPU"


def fleet_gpus(nodes: Iterable[NodeView]) -> list[FleetGpu]:
    """Every physical GPU of every node whose detection can be read."""
    found: list[FleetGpu] = []
    for node in nodes:
        detection: DetectionView | None = node.detection_view()
        if detection is None:
            continue
        for gpu in detection.gpus:
            if gpu.kind == "gpu":
                found.append(FleetGpu(node, gpu, detection.driver_version))
    return found


def _link_outliers(item: FleetGpu) -> list[Outlier]:
    gpu, node_id = item.gpu, item.node.node_id
    out: list[Outlier] = []
    if (
        gpu.pcie_width_current is not None
        and gpu.pcie_width_max is not None
        and gpu.pcie_width_current < gpu.pcie_width_max
    ):
        out.append(
            Outlier(
                node_id,
                gpu.index,
                "pcie_width",
                gpu.pcie_width_current,
                None,
                f"PCIe link x{gpu.pcie_width_current} of x{gpu.pcie_width_max}: "
                "check the slot, riser and BIOS lane settings",
            )
        )
    idle = gpu.clock_event_reasons is not None and "gpu_idle" in gpu.clock_event_reasons
    if (
        not idle
        and gpu.pcie_gen_current is not None
        and gpu.pcie_gen_max is not None
        and gpu.pcie_gen_current < gpu.pcie_gen_max
    ):
        out.append(
            Outlier(
                node_id,
                gpu.index,
                "pcie_gen",
                gpu.pcie_gen_current,
                None,
                f"PCIe Gen {gpu.pcie_gen_current} of Gen {gpu.pcie_gen_max} while not idle",
            )
        )
    return out


def _health_outliers(item: FleetGpu) -> list[Outlier]:
    gpu, node_id = item.gpu, item.node.node_id
    out: list[Outlier] = []
    if gpu.lost:
        out.append(Outlier(node_id, gpu.index, "lost", None, None, "GPU stopped answering"))
    active = [
        reason for reason in gpu.clock_event_reasons or () if reason not in BENIGN_CLOCK_EVENTS
    ]
    if active:
        out.append(
            Outlier(
                node_id,
                gpu.index,
                "throttle",
                ", ".join(active),
                None,
                f"clocks held back: {', '.join(active)}",
            )
        )
    errors = max(gpu.ecc_uncorrected_volatile or 0, gpu.ecc_uncorrected_aggregate or 0)
    if errors:
        out.append(
            Outlier(
                node_id,
                gpu.index,
                "ecc",
                errors,
                None,
                f"{errors} uncorrectable ECC error{'s' if errors != 1 else ''} counted",
            )
        )
    pending = [
        what
        for what, flag in (
            ("retired pages pending", gpu.retired_pages_pending),
            ("remapped rows pending", gpu.remapped_rows_pending),
            ("row remapping failed", gpu.remapped_rows_failure),
        )
        if flag
    ]
    if pending:
        out.append(
            Outlier(
                node_id,
                gpu.index,
                "memory_repair",
                ", ".join(pending),
                None,
                f"{', '.join(pending)}: reboot (or reset the GPU) to apply; a failure means RMA",
            )
        )
    return out


def _driver_outliers(gpus: list[FleetGpu]) -> list[Outlier]:
    by_model: dict[str, list[FleetGpu]] = defaultdict(list)
    for item in gpus:
        if item.driver_version:
            by_model[item.model].append(item)
    out: list[Outlier] = []
    for model, items in sorted(by_model.items()):
        versions = Counter(item.driver_version for item in items)
        if len(versions) < 2:
            continue
        common = versions.most_common(1)[0][0]
        for item in items:
            if item.driver_version != common:
                out.append(
                    Outlier(
                        item.node.node_id,
                        item.gpu.index,
                        "driver",
                        item.driver_version,
                        None,
                        f"driver {item.driver_version}; most {model} GPUs run {common}",
                    )
                )
    return out


@dataclass(frozen=True, slots=True)
class _Figure:
    node_id: str
    gpu_index: int | None
    model: str
    key: str
    label: str
    unit: str
    value: float


def bench_model(run: BenchView, cpu_model: str | None) -> tuple[str, int | None]:
    """The model a run is compared within, and its GPU index (None for the CPU)."""
    if run.device is not None and run.device.kind == "cpu":
        return f"CPU: {cpu_model or run.device.name}", None
    index = run.device.index if run.device is not None else None
    name = run.device.name if run.device is not None else None
    return model_key(run.catalog_id, name), index


def _figures(nodes: Iterable[NodeView]) -> list[_Figure]:
    figures: list[_Figure] = []
    for node in nodes:
        detection = node.detection_view()
        cpu_model = detection.cpu.model if detection is not None else None
        for run in node.bench_views():
            model, index = bench_model(run, cpu_model)
            for row in run.results:
                if row.value is not None and row.value > 0:
                    figures.append(
                        _Figure(node.node_id, index, model, row.key, row.label, row.unit, row.value)
                    )
    return figures


def _measured_outliers(nodes: Iterable[NodeView]) -> list[Outlier]:
    groups: dict[tuple[str, str], list[_Figure]] = defaultdict(list)
    for figure in _figures(nodes):
        groups[(figure.model, figure.key)].append(figure)
    out: list[Outlier] = []
    for (model, _key), figures in sorted(groups.items()):
        if len(figures) < 2:
            continue
        median = statistics.median(figure.value for figure in figures)
        for figure in figures:
            if figure.value < SLOW_FRACTION * median:
                out.append(
                    Outlier(
                        figure.node_id,
                        figure.gpu_index,
                        f"measured:{figure.key}",
                        figure.value,
                        median,
                        f"{figure.label} {figure.value:.4g} {figure.unit} is "
                        f"{figure.value / median:.0%} of the fleet median {median:.4g} "
                        f"for {model}",
                    )
                )
    return out


def find_outliers(nodes: Iterable[NodeView]) -> list[Outlier]:
    """Every outlier of the fleet, node by node in survey order."""
    nodes = list(nodes)
    gpus = fleet_gpus(nodes)
    found: list[Outlier] = []
    for item in gpus:
        found.extend(_health_outliers(item))
        found.extend(_link_outliers(item))
    found.extend(_driver_outliers(gpus))
    found.extend(_measured_outliers(nodes))
    order = {node.node_id: position for position, node in enumerate(nodes)}
    found.sort(
        key=lambda item: (
            order.get(item.node_id, 0),
            -1 if item.gpu_index is None else item.gpu_index,
            item.check,
        )
    )
    return found


def summarise(nodes: Iterable[NodeView]) -> dict[str, Any]:
    """The ``summary`` object of the survey document."""
    nodes = list(nodes)
    gpus = fleet_gpus(nodes)
    by_model = Counter(item.model for item in gpus)
    return {
        "nodes": len(nodes),
        "nodes_failed": sum(1 for node in nodes if node.error is not None),
        "gpus": len(gpus),
        "by_model": dict(sorted(by_model.items())),
        "outliers": [outlier.to_json() for outlier in find_outliers(nodes)],
    }
