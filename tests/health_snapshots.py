"""GPU snapshots for judging one health rule set through doctor, the fleet and the GUI."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from survey_factory import node, survey

from gpudesk.fleet.checks import FleetGpu, find_outliers, fleet_gpus, health_findings
from gpudesk.fleet.document import parse_survey
from gpudesk.hardware.models import DetectionResult, GpuSnapshot, NvmlStatus
from gpudesk.health import doctor
from gpudesk.health.rules import Finding


def h100(index: int, **fields: Any) -> GpuSnapshot:
    base: dict[str, Any] = {
        "index": index,
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": f"GPU-{index:08d}-0000-0000-0000-000000000000",
        "memory_total_mib": 81559,
        "pcie_gen_current": 5,
        "pcie_gen_max": 5,
        "pcie_width_current": 16,
        "pcie_width_max": 16,
        "clock_event_reasons": (),
        "utilization_gpu_percent": 0,
        "power_limit_w": 700.0,
        "power_default_limit_w": 700.0,
        "sm_clock_mhz": 1980,
        "sm_clock_max_mhz": 1980,
        "compute_mode": "default",
    }
    base.update(fields)
    return GpuSnapshot(**base)


#: Each a GPU in a state one rule (or none) judges; named for the test ids.
SNAPSHOTS: dict[str, GpuSnapshot] = {
    "healthy": h100(0),
    # issue 30: the idle GPU that doctor noted once and the fleet flagged twice
    "idle_sync_boost_gen1": h100(0, pcie_gen_current=1, clock_event_reasons=("sync_boost",)),
    "busy_gen3": h100(0, pcie_gen_current=3, utilization_gpu_percent=95),
    "unknown_load_gen3": h100(0, pcie_gen_current=3, utilization_gpu_percent=None),
    "x8": h100(0, pcie_width_current=8, clock_event_reasons=("gpu_idle",)),
    "hot": h100(0, clock_event_reasons=("gpu_idle", "hw_thermal_slowdown")),
    "power_capped": h100(0, power_limit_w=400.0, utilization_gpu_percent=90),
    "slow_clocks": h100(0, sm_clock_mhz=600, utilization_gpu_percent=90),
    "ecc": h100(0, ecc_uncorrected_volatile=3),
    "ecc_lifetime": h100(0, ecc_uncorrected_aggregate=2),
    "remap_pending": h100(0, remapped_rows_pending=True),
    "retire_pending": h100(0, retired_pages_pending=True),
    "prohibited": h100(0, compute_mode="prohibited"),
    "exclusive": h100(0, compute_mode="exclusive_process"),
    "lost": h100(0, lost=True),
}


def detection_of(gpu: GpuSnapshot) -> DetectionResult:
    return DetectionResult(
        timestamp=dt.datetime(2026, 12, 2, tzinfo=dt.UTC),
        status=NvmlStatus.OK,
        hint="",
        driver_version="550.54.15",
        gpus=(gpu,),
    )


def doctor_findings(gpu: GpuSnapshot) -> list[Finding]:
    """What ``doctor`` reports for this GPU (no nvidia-smi, no benchmark)."""
    report = doctor.examine(detection_of(gpu), None, None, {0: "h100-sxm5"})
    (checked,) = report.gpus
    return checked.findings


def fleet_item(gpu: GpuSnapshot) -> FleetGpu:
    """The GPU as a survey node sends it and the fleet reads it back."""
    detection = json.loads(detection_of(gpu).model_dump_json())
    document = survey([node("n0", [])])
    document["nodes"][0]["detection"] = detection
    view, _ = parse_survey(json.dumps(document), "test")
    (item,) = fleet_gpus(view.nodes)
    return item


def fleet_findings(gpu: GpuSnapshot) -> tuple[list[Finding], list[dict[str, Any]]]:
    item = fleet_item(gpu)
    return health_findings(item), [o.to_json() for o in find_outliers([item.node])]


def judged(found: list[Finding]) -> list[tuple[str, str, str]]:
    return [(f.rule, f.severity, f.message) for f in found]
