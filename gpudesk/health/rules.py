"""The health rules: one judgement of a GPU for ``doctor``, the fleet survey and the GUI.

A rule reads one snapshot of one physical GPU (:class:`GpuState`: what NVML
gave, whether read on this machine or sent by a survey node) and returns
:class:`Finding` objects. ``doctor`` (:mod:`gpudesk.health.doctor`), the
fleet's outliers (:mod:`gpudesk.fleet.checks`) and the GUI's "Check health"
all call :func:`gpu_findings`, so the same snapshot gets the same findings
everywhere. Each finding names its ``rule``; ``check`` is the name ``doctor``
has always printed for it (the fleet keeps its own names, see
:data:`FLEET_CHECKS`).

The rules, and why:

- ``lost``: the GPU stopped answering (error).
- ``pcie_width``: a link narrower than the GPU supports (x8 of x16) is a
  seating, riser or BIOS problem whatever the load (warning).
- ``pcie_gen``: a link below its maximum generation is judged only under load.
  An idle GPU lowers its link generation to save power (nvidia-smi shows Gen 1
  at idle), so idle or unknown load gives a note, never a warning.
- ``throttle``: active clock-event reasons other than the benign ones
  (:data:`BENIGN_CLOCK_EVENTS`: idle, application or display clock settings,
  and sync boost, which holds a GPU to its sync-boost group's clocks); hardware
  slowdowns are errors, software thermal or power caps warnings.
- ``ecc``: uncorrected ECC errors since the driver loaded (error) or over the
  board's life only (warning).
- ``retired_pages`` / ``remapped_rows``: memory repairs waiting for a reset,
  or a failed remap (errors).
- ``compute_mode``: Prohibited (error) or exclusive (note).
- ``power_cap``: a power limit set below the board's default (warning: the
  GPU cannot reach its usual throughput).
- ``clocks``: under load, an SM clock below half its maximum with no
  clock-event reason to explain it (warning).
- ``reference``: a measured GEMM against the model's reference distribution
  (:mod:`gpudesk.bench.reference`): a warning below its 5th percentile (with
  at least five measurements) or under :data:`REFERENCE_FLOOR` of its median,
  else a note saying where it stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, model_validator

from gpudesk.bench.reference import Reference

Severity = Literal["info", "warning", "error"]
Load = Literal["idle", "busy", "unknown"]

#: Clock-event reasons that say nothing about health.
BENIGN_CLOCK_EVENTS = frozenset(
    {"gpu_idle", "applications_clocks_setting", "display_clock_setting", "sync_boost"}
)
#: How much an active clock-event reason says about health (others: a note).
THROTTLE_SEVERITY: dict[str, Severity] = {
    "hw_slowdown": "error",
    "hw_thermal_slowdown": "error",
    "hw_power_brake_slowdown": "error",
    "sw_thermal_slowdown": "warning",
    "sw_power_cap": "warning",
}
#: A GPU below this utilisation (percent) is idle.
IDLE_UTILIZATION_PERCENT = 5
#: A power limit below this share of the default limit is a cap someone set.
POWER_CAP_FRACTION = 0.95
#: Under load, an SM clock below this share of its maximum is held back.
LOW_CLOCK_FRACTION = 0.5

#: A measured figure under this share of the model's reference median is flagged.
REFERENCE_FLOOR = 0.85

#: The name ``doctor`` prints for a rule ("check"), where it differs from the rule.
DOCTOR_CHECKS: dict[str, str] = {"pcie_width": "pcie_link", "pcie_gen": "pcie_link"}
#: The name a fleet outlier has carried for a rule, where it differs from the rule.
FLEET_CHECKS: dict[str, str] = {
    "retired_pages": "memory_repair",
    "remapped_rows": "memory_repair",
}


class Finding(BaseModel):
    """One thing the check found, worded for a person."""

    model_config = ConfigDict(frozen=True)

    severity: Severity
    check: str
    message: str
    #: The rule that found it (see the module docstring); the same on every surface.
    rule: str = ""
    #: The figure the rule judged (a reason, a count, a link generation), if any.
    value: float | int | str | None = None

    @model_validator(mode="before")
    @classmethod
    def _rule_defaults_to_check(cls, data: object) -> object:
        if isinstance(data, dict) and not data.get("rule") and data.get("check"):
            return {**data, "rule": data["check"]}
        return data


def finding(
    rule: str, severity: Severity, message: str, value: float | int | str | None = None
) -> Finding:
    """A finding of ``rule``, under the name doctor prints for it."""
    return Finding(
        severity=severity,
        check=DOCTOR_CHECKS.get(rule, rule),
        message=message,
        rule=rule,
        value=value,
    )


class GpuState(Protocol):
    """The fields of one GPU snapshot the rules read (``GpuSnapshot`` and the fleet's view)."""

    @property
    def lost(self) -> bool: ...
    @property
    def pcie_gen_current(self) -> int | None: ...
    @property
    def pcie_gen_max(self) -> int | None: ...
    @property
    def pcie_width_current(self) -> int | None: ...
    @property
    def pcie_width_max(self) -> int | None: ...
    @property
    def clock_event_reasons(self) -> Sequence[str] | None: ...
    @property
    def utilization_gpu_percent(self) -> int | None: ...
    @property
    def ecc_uncorrected_volatile(self) -> int | None: ...
    @property
    def ecc_uncorrected_aggregate(self) -> int | None: ...
    @property
    def retired_pages_pending(self) -> bool | None: ...
    @property
    def remapped_rows_pending(self) -> bool | None: ...
    @property
    def remapped_rows_failure(self) -> bool | None: ...
    @property
    def compute_mode(self) -> str | None: ...
    @property
    def power_limit_w(self) -> float | None: ...
    @property
    def power_default_limit_w(self) -> float | None: ...
    @property
    def sm_clock_mhz(self) -> int | None: ...
    @property
    def sm_clock_max_mhz(self) -> int | None: ...


def load(gpu: GpuState) -> Load:
    """Idle (NVML says so, or utilisation under 5%), busy, or unknown (no utilisation read)."""
    if "gpu_idle" in (gpu.clock_event_reasons or ()):
        return "idle"
    if gpu.utilization_gpu_percent is None:
        return "unknown"
    return "idle" if gpu.utilization_gpu_percent < IDLE_UTILIZATION_PERCENT else "busy"


def _link(gpu: GpuState, busy: Load) -> list[Finding]:
    found: list[Finding] = []
    width, width_max = gpu.pcie_width_current, gpu.pcie_width_max
    if width is not None and width_max is not None and width < width_max:
        found.append(
            finding(
                "pcie_width",
                "warning",
                f"PCIe link is x{width} of x{width_max}: the card is in a narrower slot, "
                "or the link trained down (reseat it; check the slot, riser and BIOS lanes)",
                width,
            )
        )
    gen, gen_max = gpu.pcie_gen_current, gpu.pcie_gen_max
    if gen is None or gen_max is None or gen >= gen_max:
        return found
    if busy == "busy":
        found.append(
            finding(
                "pcie_gen",
                "warning",
                f"PCIe gen {gen} of {gen_max} under load: check the slot's generation "
                "in the BIOS and the riser",
                gen,
            )
        )
    else:
        state = "while idle" if busy == "idle" else "(load unknown)"
        found.append(
            finding(
                "pcie_gen",
                "info",
                f"PCIe gen {gen} of {gen_max} {state}: the link slows down to save "
                "power and speeds up under load (rerun under load to check it)",
                gen,
            )
        )
    return found


def _memory(gpu: GpuState) -> list[Finding]:
    found: list[Finding] = []
    if gpu.ecc_uncorrected_volatile:
        found.append(
            finding(
                "ecc",
                "error",
                f"{gpu.ecc_uncorrected_volatile} uncorrected ECC error(s) since the driver "
                "loaded: results computed on this GPU may be wrong; drain it and check "
                "`nvidia-smi -q -d ECC` and the kernel log for Xid 48/63/64",
                gpu.ecc_uncorrected_volatile,
            )
        )
    elif gpu.ecc_uncorrected_aggregate:
        found.append(
            finding(
                "ecc",
                "warning",
                f"{gpu.ecc_uncorrected_aggregate} uncorrected ECC error(s) over the board's "
                "life (none since the driver loaded)",
                gpu.ecc_uncorrected_aggregate,
            )
        )
    if gpu.retired_pages_pending:
        found.append(
            finding(
                "retired_pages",
                "error",
                "memory pages are waiting to be retired: reboot (or reset the GPU)",
                "retired pages pending",
            )
        )
    if gpu.remapped_rows_failure:
        found.append(
            finding(
                "remapped_rows",
                "error",
                "a row remapping failed: the GPU's memory is failing (RMA it)",
                "row remapping failed",
            )
        )
    elif gpu.remapped_rows_pending:
        found.append(
            finding(
                "remapped_rows",
                "error",
                "memory rows are waiting to be remapped: reset the GPU or reboot",
                "remapped rows pending",
            )
        )
    return found


def _clocks_and_power(gpu: GpuState, busy: Load) -> list[Finding]:
    found: list[Finding] = []
    reasons = [r for r in gpu.clock_event_reasons or () if r not in BENIGN_CLOCK_EVENTS]
    for reason in reasons:
        found.append(
            finding(
                "throttle",
                THROTTLE_SEVERITY.get(reason, "info"),
                f"clocks are held down now: {reason.replace('_', ' ')}",
                reason,
            )
        )
    limit, default = gpu.power_limit_w, gpu.power_default_limit_w
    if limit is not None and default and limit < default * POWER_CAP_FRACTION:
        found.append(
            finding(
                "power_cap",
                "warning",
                f"power limit {limit:.0f} W is below the default {default:.0f} W: "
                "throughput is capped (`nvidia-smi -q -d POWER`; `nvidia-smi -pl` resets it)",
                round(limit, 1),
            )
        )
    clock, clock_max = gpu.sm_clock_mhz, gpu.sm_clock_max_mhz
    if (
        busy == "busy"
        and not reasons
        and clock is not None
        and clock_max
        and clock < clock_max * LOW_CLOCK_FRACTION
    ):
        found.append(
            finding(
                "clocks",
                "warning",
                f"SM clock {clock} of {clock_max} MHz under load with no clock-event "
                "reason: check the application clocks and the power and cooling",
                clock,
            )
        )
    return found


def gpu_findings(gpu: GpuState) -> list[Finding]:
    """What one snapshot of one physical GPU says about its health, every rule in order."""
    if gpu.lost:
        return [finding("lost", "error", "the GPU stopped answering (lost)")]
    busy = load(gpu)
    found = _link(gpu, busy)
    found.extend(_clocks_and_power(gpu, busy))
    found.extend(_memory(gpu))
    if gpu.compute_mode == "prohibited":
        found.append(
            finding(
                "compute_mode",
                "error",
                "compute mode is Prohibited: no process can use this GPU "
                "(`sudo nvidia-smi -i N -c DEFAULT`)",
                gpu.compute_mode,
            )
        )
    elif gpu.compute_mode in ("exclusive_process", "exclusive_thread"):
        found.append(
            finding(
                "compute_mode",
                "info",
                "compute mode is exclusive: one process at a time can use this GPU",
                gpu.compute_mode,
            )
        )
    return found


def reference_finding(
    reference: Reference,
    value: float,
    *,
    check: str,
    fraction_of_peak: float | None = None,
) -> Finding:
    """A measured figure against its model's reference: "GEMM BF16 612 TFLOPS = 78% of the
    H100 SXM reference median 786 (n=5; ...)", a warning when it is low."""
    label = reference.test.upper() if reference.test.startswith("gemm") else reference.test
    median = reference.median
    share = value / median
    message = (
        f"{label} {value:,.0f} {reference.unit} = {share:.0%} of the {reference.label} "
        f"reference median {median:,.0f} (n={reference.n}; {reference.cited})"
    )
    if fraction_of_peak is not None:
        message += f", {fraction_of_peak:.0%} of the catalog peak"
    low: list[str] = []
    if reference.p5 is not None and value < reference.p5:
        low.append(f"below its 5th percentile {reference.p5:,.0f}")
    if share < REFERENCE_FLOOR:
        low.append(f"under {REFERENCE_FLOOR:.0%} of its median")
    if not low:
        return Finding(severity="info", check=check, message=message, rule="reference", value=value)
    message += (
        f": {' and '.join(low)}; check clocks and throttling, the power limit, cooling "
        "and other processes on the GPU"
    )
    return Finding(severity="warning", check=check, message=message, rule="reference", value=value)


def is_problem(found: Finding) -> bool:
    """A warning or an error: what the fleet lists as an outlier."""
    return found.severity != "info"
