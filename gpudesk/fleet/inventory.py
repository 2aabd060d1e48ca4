"""The fleet inventory: one row per GPU (or per CPU-only node), for the CLI, the GUI and the PDF."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from gpudesk.bench.reference import References, load_references
from gpudesk.fleet.checks import NODE_CHECKS, Outlier, bench_model, fleet_gpus, model_key
from gpudesk.fleet.document import BenchView, MeasurementView, NodeView

#: The GEMM shown per device: the fastest precision ML uses that the run measured.
HEADLINE_GEMM_DTYPES = ("bf16", "fp16", "tf32", "fp32", "fp64")


@dataclass(frozen=True, slots=True)
class InventoryRow:
    """One device of the fleet as the inventory shows it."""

    node_id: str
    node: str
    gpu_index: int | None
    model: str
    name: str
    memory_gib: float | None
    driver: str | None
    gemm: MeasurementView | None
    copy: MeasurementView | None
    checks: tuple[str, ...]
    error: str | None = None
    #: The headline GEMM as a fraction of its model's published reference median
    #: (:mod:`gpudesk.bench.reference`); None where there is no reference.
    of_reference: float | None = None

    @property
    def is_cpu(self) -> bool:
        return self.gpu_index is None and self.error is None


def headline_gemm(run: BenchView) -> MeasurementView | None:
    for dtype in HEADLINE_GEMM_DTYPES:
        for row in run.results:
            if row.test == "gemm" and row.dtype == dtype and row.value is not None:
                return row
    return None


def copy_row(run: BenchView) -> MeasurementView | None:
    return next((row for row in run.results if row.test == "copy" and row.value), None)


def _of_reference(references: References, model: str, gemm: MeasurementView | None) -> float | None:
    """``gemm`` as a fraction of its model's published reference median, if there is one."""
    if gemm is None or gemm.value is None:
        return None
    reference = references.get(model, gemm.key)
    return None if reference is None else float(gemm.value) / reference.median


def inventory(nodes: list[NodeView], outliers: list[Outlier]) -> list[InventoryRow]:
    """Rows in survey order: each GPU; a CPU-only node's CPU run; a failed node's error."""
    references = load_references()
    checks: dict[tuple[str, int | None], list[str]] = {}
    node_checks: dict[str, list[str]] = {}
    for outlier in outliers:
        if outlier.check in NODE_CHECKS:  # about the node: shown on each of its rows
            node_checks.setdefault(outlier.node_id, []).append(outlier.check)
        else:
            checks.setdefault((outlier.node_id, outlier.gpu_index), []).append(outlier.check)
    gpus_by_node: dict[str, list[int | None]] = {}
    for item in fleet_gpus(nodes):
        gpus_by_node.setdefault(item.node.node_id, []).append(item.gpu.index)
    rows: list[InventoryRow] = []
    for node in nodes:
        refusal = node.detection_refusal()
        if refusal is not None:
            # Not "no GPUs, a CPU node": what it sent could not be read, and why.
            error = f"detection refused: {refusal}"
            if node.error is not None:
                error = f"{node.error}; {error}"
            rows.append(_error_row(node, error))
            continue
        detection = node.detection_view()
        runs = node.bench_views()
        cpu_model = detection.cpu.model if detection is not None else None
        runs_by_index = {bench_model(run, cpu_model)[1]: run for run in runs}
        driver = detection.driver_version if detection is not None else None
        gpus = [gpu for gpu in (detection.gpus if detection else ()) if gpu.kind == "gpu"]
        for gpu in gpus:
            run = runs_by_index.get(gpu.index)
            model = model_key(gpu.catalog_id, gpu.name)
            gemm = headline_gemm(run) if run else None
            rows.append(
                InventoryRow(
                    node_id=node.node_id,
                    node=node.label,
                    gpu_index=gpu.index,
                    model=model,
                    name=gpu.name or "unknown GPU",
                    memory_gib=gpu.memory_total_mib / 1024 if gpu.memory_total_mib else None,
                    driver=driver,
                    gemm=gemm,
                    of_reference=_of_reference(references, model, gemm),
                    copy=copy_row(run) if run else None,
                    checks=(
                        *checks.get((node.node_id, gpu.index), ()),
                        *node_checks.get(node.node_id, ()),
                    ),
                )
            )
        cpu_run = runs_by_index.get(None)
        if not gpus and (cpu_run is not None or node.error is None):
            model = bench_model(cpu_run, cpu_model)[0] if cpu_run else f"CPU: {cpu_model or '?'}"
            rows.append(
                InventoryRow(
                    node_id=node.node_id,
                    node=node.label,
                    gpu_index=None,
                    model=model,
                    name=cpu_model or "CPU",
                    memory_gib=detection.ram_total_gib if detection else None,
                    driver=None,
                    gemm=headline_gemm(cpu_run) if cpu_run else None,
                    copy=copy_row(cpu_run) if cpu_run else None,
                    checks=(
                        *checks.get((node.node_id, None), ()),
                        *node_checks.get(node.node_id, ()),
                    ),
                )
            )
        if node.error is not None:
            rows.append(_error_row(node, node.error))
    return rows


def _error_row(node: NodeView, error: str) -> InventoryRow:
    """The row of a node that failed, or whose detection was refused: ``error`` says why."""
    return InventoryRow(
        node_id=node.node_id,
        node=node.label,
        gpu_index=None,
        model="",
        name="",
        memory_gib=None,
        driver=None,
        gemm=None,
        copy=None,
        checks=(),
        error=error,
    )


@dataclass(frozen=True, slots=True)
class ModelSummary:
    """One model of the fleet: how many devices, and the spread of their headline GEMM."""

    model: str
    devices: int
    measured: int
    label: str | None
    unit: str | None
    median: float | None
    low: float | None
    high: float | None
    flagged: int


def model_summaries(rows: list[InventoryRow]) -> list[ModelSummary]:
    """Per model, most devices first: counts, the headline GEMM's median and range, flags."""
    by_model: dict[str, list[InventoryRow]] = {}
    for row in rows:
        if row.error is None:
            by_model.setdefault(row.model, []).append(row)
    summaries: list[ModelSummary] = []
    for model, items in by_model.items():
        measured = [row.gemm for row in items if row.gemm is not None and row.gemm.value]
        values = sorted(float(gemm.value) for gemm in measured if gemm.value is not None)
        first = measured[0] if measured else None
        summaries.append(
            ModelSummary(
                model=model,
                devices=len(items),
                measured=len(values),
                label=first.label if first else None,
                unit=first.unit if first else None,
                median=statistics.median(values) if values else None,
                low=values[0] if values else None,
                high=values[-1] if values else None,
                flagged=sum(1 for row in items if row.checks),
            )
        )
    summaries.sort(key=lambda item: (-item.devices, item.model))
    return summaries
