"""The fleet summary: GPUs by model, and the GPUs that stand out from their siblings.

Rules, each an ``Outlier`` with the ``check`` named here:

- ``measured:<test>`` — a benchmark figure below :data:`SLOW_FRACTION` of the
  fleet median for the same model and the same test (at least two GPUs of
  that model measured). CPU runs are compared per CPU model, with
  ``gpu_index`` null.
- The health of each GPU: every warning or error of the shared health rules
  (:mod:`gpudesk.health.rules`, the same ones ``doctor`` and the GUI apply),
  under the rule's name (``pcie_width``, ``pcie_gen`` only under load,
  ``throttle``, ``ecc``, ``power_cap``, ``clocks``, ``compute_mode``, ``lost``),
  except that retired pages and remapped rows are both ``memory_repair``.
- ``reference:<test>`` — a GEMM figure against its model's reference
  distribution (:mod:`gpudesk.bench.reference`), by the rule ``doctor``
  applies (:func:`gpudesk.health.rules.reference_finding`): below its 5th
  percentile or under 85% of its median — only for a GPU the fleet cannot
  judge, the one of its model measured. Where two or more are, the fleet's
  own median is the yardstick (``measured:``) and the published reference is
  one line per model and test (:func:`reference_lines`, the summary's
  ``reference``), not an outlier per GPU: a healthy survey of 48 H100s at
  700-707 TFLOPS sits at 89% of a published median (other clocks, other
  shapes, another stack) and had flagged all 48, hiding the one at 405.

Order: the ``measured:`` outliers first, the slowest against its fleet median
first; then the others in survey order.
- ``driver`` — a driver version that differs from the most common one among
  GPUs of the same model.
- ``slurm_gres``, ``slurm_gres_type``, ``slurm_feature``, ``slurm_memory`` —
  Slurm surveys: what Slurm declares for the node against what it detected
  (:mod:`gpudesk.health.declared`); node-level, with no GPU index.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpudesk.bench.reference import References, load_references
from gpudesk.fleet.document import BenchView, DetectionView, GpuView, NodeView
from gpudesk.health.declared import declared_findings
from gpudesk.health.rules import (
    BENIGN_CLOCK_EVENTS,
    FLEET_CHECKS,
    Finding,
    Severity,
    gpu_findings,
    is_problem,
    reference_finding,
)

__all__ = [
    "BENIGN_CLOCK_EVENTS",
    "SLOW_FRACTION",
    "Outlier",
    "ReferenceLine",
    "find_outliers",
    "is_slow",
    "reference_lines",
    "summarise",
]

#: A measured figure below this fraction of the fleet median is an outlier.
SLOW_FRACTION = 0.85


_CHECK_LABELS = {
    "pcie_width": "narrow PCIe link",
    "pcie_gen": "PCIe below max gen",
    "throttle": "throttled",
    "ecc": "ECC errors",
    "memory_repair": "memory repair pending",
    "compute_mode": "compute mode",
    "power_cap": "power capped",
    "clocks": "clocks held back",
    "driver": "driver differs",
    "lost": "lost",
    "slurm_gres": "GRES differs",
    "slurm_gres_type": "GRES type differs",
    "slurm_feature": "feature differs",
    "slurm_memory": "memory differs",
}

#: Checks about a node as a whole (printed without a device).
NODE_CHECKS = frozenset({"slurm_gres", "slurm_gres_type", "slurm_feature", "slurm_memory"})


def check_label(check: str) -> str:
    """A few words for a check name: "slow copy", "narrow PCIe link"."""
    if check.startswith("reference:"):
        return "below reference " + check.removeprefix("reference:").upper()
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
    severity: Severity = "warning"
    #: The health rule (gpudesk.health.rules) or fleet rule that found it.
    rule: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "gpu_index": self.gpu_index,
            "check": self.check,
            "value": self.value,
            "fleet_median": self.fleet_median,
            "message": self.message,
            "severity": self.severity,
            "rule": self.rule or self.check,
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


def health_findings(item: FleetGpu) -> list[Finding]:
    """The shared health rules on one GPU of the fleet: what ``doctor`` says of it there."""
    return gpu_findings(item.gpu)


def _health_outliers(item: FleetGpu) -> list[Outlier]:
    """Every warning or error of the shared rules, as an outlier of its node."""
    return [
        Outlier(
            item.node.node_id,
            item.gpu.index,
            FLEET_CHECKS.get(found.rule, found.rule),
            found.value,
            None,
            found.message,
            severity=found.severity,
            rule=found.rule,
        )
        for found in health_findings(item)
        if is_problem(found)
    ]


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


def _measured_outliers(figures: Iterable[_Figure]) -> list[Outlier]:
    groups: dict[tuple[str, str], list[_Figure]] = defaultdict(list)
    for figure in figures:
        groups[(figure.model, figure.key)].append(figure)
    out: list[Outlier] = []
    for (model, _key), group in sorted(groups.items()):
        if len(group) < 2:
            continue
        median = statistics.median(figure.value for figure in group)
        for figure in group:
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


def _fleet_groups(figures: Iterable[_Figure]) -> dict[tuple[str, str], list[_Figure]]:
    """GPU figures by (model, test); CPU runs are left out (no published GPU reference)."""
    groups: dict[tuple[str, str], list[_Figure]] = defaultdict(list)
    for figure in figures:
        if figure.gpu_index is not None:
            groups[(figure.model, figure.key)].append(figure)
    return groups


def _reference_outliers(figures: Iterable[_Figure], references: References) -> list[Outlier]:
    """A GEMM figure the fleet cannot judge (the only one of its model and test) against
    its model's reference, with the rule doctor applies."""
    out: list[Outlier] = []
    for (_model, _key), group in _fleet_groups(figures).items():
        if len(group) != 1:
            continue  # the fleet median judges it; the reference is a summary line
        figure = group[0]
        reference = references.get(figure.model, figure.key)
        if reference is None:
            continue
        found = reference_finding(reference, figure.value, check=f"reference:{figure.key}")
        if is_problem(found):
            out.append(
                Outlier(
                    figure.node_id,
                    figure.gpu_index,
                    found.check,
                    figure.value,
                    None,
                    found.message,
                    severity=found.severity,
                    rule=found.rule,
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class ReferenceLine:
    """One model's fleet median against its published reference (one line, not one per GPU)."""

    model: str
    test: str
    gpus: int
    fleet_median: float
    reference_median: float
    severity: Severity
    message: str

    @property
    def fraction(self) -> float:
        return self.fleet_median / self.reference_median

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "test": self.test,
            "gpus": self.gpus,
            "fleet_median": self.fleet_median,
            "reference_median": self.reference_median,
            "fraction": self.fraction,
            "severity": self.severity,
            "message": self.message,
        }


def reference_lines(
    nodes: Iterable[NodeView], references: References | None = None
) -> list[ReferenceLine]:
    """Per model and test measured on two or more GPUs: the fleet median against the
    model's published reference, judged by the rule ``doctor`` applies to one GPU."""
    references = references if references is not None else load_references()
    lines: list[ReferenceLine] = []
    for (model, key), group in sorted(_fleet_groups(_figures(nodes)).items()):
        reference = references.get(model, key)
        if reference is None or len(group) < 2:
            continue
        median = statistics.median(figure.value for figure in group)
        found = reference_finding(reference, median, check=f"reference:{key}")
        lines.append(
            ReferenceLine(
                model,
                key,
                len(group),
                median,
                reference.median,
                found.severity,
                f"{model}, fleet median of {len(group)} GPUs: {found.message}",
            )
        )
    return lines


def outlier_line(outlier: Outlier, node_label: str) -> str:
    """One line for an outlier: "n3: Slurm declares …", "n1 GPU 0: …", "n2 CPU: …"."""
    if outlier.check in NODE_CHECKS:
        return f"{node_label}: {outlier.message}"
    device = "CPU" if outlier.gpu_index is None else f"GPU {outlier.gpu_index}"
    return f"{node_label} {device}: {outlier.message}"


def _declared_outliers(nodes: Iterable[NodeView]) -> list[Outlier]:
    out: list[Outlier] = []
    for node in nodes:
        if node.slurm is None or node.error is not None:
            continue
        detection = node.detection_view()
        if detection is None:
            continue
        for found in declared_findings(node.slurm, detection):
            out.append(
                Outlier(
                    node.node_id,
                    None,
                    found.rule,
                    found.value,
                    None,
                    found.message,
                    severity=found.severity,
                    rule=found.rule,
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
    found.extend(_driver_outliers(gpus))
    figures = _figures(nodes)  # read once: a 1,000-node survey has 8,000 runs
    found.extend(_measured_outliers(figures))
    found.extend(_reference_outliers(figures, load_references()))
    found.extend(_declared_outliers(nodes))
    order = {node.node_id: position for position, node in enumerate(nodes)}
    found.sort(
        key=lambda item: (
            *_slowness(item),
            order.get(item.node_id, 0),
            -1 if item.gpu_index is None else item.gpu_index,
            item.check,
        )
    )
    return found


def is_slow(outlier: Outlier) -> bool:
    """Whether ``outlier`` is a GPU slower than its fleet's median (the ``measured:`` rule)."""
    return outlier.check.startswith("measured:")


def _slowness(outlier: Outlier) -> tuple[int, float]:
    """Sort key: slow-against-the-fleet first, the slowest first; the rest after, unsorted."""
    if is_slow(outlier) and isinstance(outlier.value, int | float) and outlier.fleet_median:
        return 0, float(outlier.value) / outlier.fleet_median
    return 1, 0.0


def summarise(nodes: Iterable[NodeView]) -> dict[str, Any]:
    """The ``summary`` object of the survey document."""
    nodes = list(nodes)
    gpus = fleet_gpus(nodes)
    by_model = Counter(item.model for item in gpus)
    return {
        "nodes": len(nodes),
        "nodes_failed": sum(1 for node in nodes if node.error is not None),
        # Nodes whose detection could not be read (why): not counted as CPU nodes.
        "nodes_refused": [
            {"node_id": node.node_id, "reason": reason}
            for node in nodes
            if (reason := node.detection_refusal()) is not None
        ],
        "gpus": len(gpus),
        "by_model": dict(sorted(by_model.items())),
        "outliers": [outlier.to_json() for outlier in find_outliers(nodes)],
        # Per model: the fleet median against the published reference (one line each).
        "reference": [line.to_json() for line in reference_lines(nodes)],
    }
