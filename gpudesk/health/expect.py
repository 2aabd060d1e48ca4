"""``doctor --expect SPEC``: an acceptance gate, what was declared against what is detected.

A SPEC names the GPUs a machine should have: ``"8x h100-sxm5"``, or several
groups joined by ``+`` or ``,`` (``"4x h100-sxm5 + 2x a100-80gb-pcie"``); a
group without a count means one. Each model is a catalog id. Checked, each an
:class:`ExpectCheck` with ``passed`` and a one-line ``detail``:

- ``count``: as many GPUs of each declared model as declared; a missing one is
  named by its place ("h100-sxm5 #2 of 2 missing").
- ``model``: every detected GPU is a declared model (an extra or unknown GPU fails).
- ``memory``: each GPU shows at least :data:`MEMORY_SHARE` of its catalog memory
  (the driver keeps a little, and ECC on GDDR one sixteenth).
- ``link``: the PCIe link reaches the declared generation and width
  (``--pcie-gen``/``--pcie-width``, else the catalog's interface, "PCIe 5.0
  x16"): the width now, the generation at its maximum (and now, under load;
  idle links slow down).
- ``health``: nothing from the health rules worse than a note, and nvidia-smi
  agrees with NVML.
- ``throughput``: each measured BF16/FP16 GEMM is at least ``--min-gemm-fraction``
  of the catalog's dense peak, and not flagged against the model's reference;
  with ``--skip-bench`` it is not measured (and says so).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from gpudesk.hardware.models import DetectionResult, GpuSnapshot
from gpudesk.health.doctor import DoctorGpu, DoctorReport, is_nvidia_gpu
from gpudesk.health.errors import HealthError

#: Longest SPEC read, and most GPUs one may declare.
MAX_SPEC_CHARS = 400
MAX_COUNT = 4096
MAX_GROUPS = 16
#: A GPU shows at least this share of its catalog memory (GDDR ECC keeps 1/16).
MEMORY_SHARE = 0.92
_GROUP = re.compile(r"^(?:(?P<count>\d{1,6})\s*[x×*]\s*)?(?P<model>[a-z0-9][a-z0-9._-]{0,79})$")
_INTERFACE = re.compile(r"PCIe\s+(?P<gen>\d)(?:\.\d)?\s+x(?P<width>\d{1,2})", re.IGNORECASE)


class SpecError(HealthError, ValueError):
    """A SPEC that cannot be read: what is wrong, for the exit-2 message."""

    def __init__(self, spec: str, reason: str) -> None:
        super().__init__(f"--expect {spec!r}: {reason}")
        self.spec = spec
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ExpectGroup:
    count: int
    catalog_id: str


@dataclass(frozen=True, slots=True)
class ExpectSpec:
    groups: tuple[ExpectGroup, ...]

    @property
    def counts(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for group in self.groups:
            counts[group.catalog_id] += group.count
        return dict(counts)

    def __str__(self) -> str:
        return " + ".join(f"{group.count}x {group.catalog_id}" for group in self.groups)


def parse_spec(text: str, known_ids: Sequence[str] | None = None) -> ExpectSpec:
    """Read a SPEC; with ``known_ids``, every model must be one of them.

    Raises:
        SpecError: empty, too long, a group that is not ``[N x] CATALOG-ID``, a
            count of 0 or over :data:`MAX_COUNT`, or an unknown catalog id.
    """
    if len(text) > MAX_SPEC_CHARS:
        raise SpecError(text[:40] + "…", f"longer than {MAX_SPEC_CHARS} characters")
    parts = [part.strip() for part in re.split(r"[+,]", text.strip().lower())]
    if not any(parts):
        raise SpecError(text, 'empty; write it like "8x h100-sxm5"')
    if len(parts) > MAX_GROUPS:
        raise SpecError(text, f"more than {MAX_GROUPS} groups")
    groups: list[ExpectGroup] = []
    for part in parts:
        match = _GROUP.match(part)
        if match is None:
            raise SpecError(text, f'{part!r} is not "COUNT x CATALOG-ID" (like "8x h100-sxm5")')
        count = int(match["count"]) if match["count"] is not None else 1
        if not 1 <= count <= MAX_COUNT:
            raise SpecError(text, f"a count is between 1 and {MAX_COUNT}, not {count}")
        model = match["model"]
        if known_ids is not None and model not in known_ids:
            close = [known for known in known_ids if model in known or known in model][:3]
            hint = f" (did you mean {', '.join(close)}?)" if close else " (see `gpudesk list`)"
            raise SpecError(text, f"{model!r} is not a catalog id{hint}")
        groups.append(ExpectGroup(count, model))
    total = sum(group.count for group in groups)
    if total > MAX_COUNT:
        raise SpecError(text, f"{total} GPUs declared, more than {MAX_COUNT}")
    return ExpectSpec(tuple(groups))


class ExpectCheck(BaseModel):
    """One declared-against-detected check of the gate."""

    model_config = ConfigDict(frozen=True)

    check: str
    passed: bool
    detail: str
    gpu_index: int | None = None


@dataclass(frozen=True, slots=True)
class ExpectLink:
    """The PCIe link declared on the command line (None: take the catalog's interface)."""

    gen: int | None = None
    width: int | None = None


def interface_link(interface: str | None) -> tuple[int, int] | None:
    """The generation and width a catalog interface names ("PCIe 5.0 x16" -> (5, 16))."""
    match = _INTERFACE.search(interface or "")
    return (int(match["gen"]), int(match["width"])) if match else None


def _label(gpu: DoctorGpu, snapshot: GpuSnapshot | None) -> str:
    where = f" ({snapshot.pci_bus_id})" if snapshot is not None and snapshot.pci_bus_id else ""
    return f"GPU {gpu.index}{where}"


def _snapshots(detection: DetectionResult, report: DoctorReport) -> list[GpuSnapshot | None]:
    physical = [gpu for gpu in detection.gpus if is_nvidia_gpu(gpu)]
    found: list[GpuSnapshot | None] = []
    for checked in report.gpus:
        match = next((gpu for gpu in physical if gpu.uuid and gpu.uuid == checked.uuid), None)
        if match is None:
            match = next((gpu for gpu in physical if gpu.index == checked.index), None)
        found.append(match)
    return found


def _count_checks(spec: ExpectSpec, report: DoctorReport, labels: list[str]) -> list[ExpectCheck]:
    by_model: dict[str | None, list[int]] = defaultdict(list)
    for position, gpu in enumerate(report.gpus):
        by_model[gpu.catalog_id].append(position)
    checks: list[ExpectCheck] = []
    for model, declared in spec.counts.items():
        present = by_model.get(model, [])
        names = ", ".join(labels[position] for position in present) or "none"
        if len(present) >= declared:
            detail = f"{declared}x {model} declared, {len(present)} detected"
            checks.append(
                ExpectCheck(check="count", passed=len(present) == declared, detail=detail)
            )
            continue
        missing = ", ".join(f"#{n}" for n in range(len(present) + 1, declared + 1))
        checks.append(
            ExpectCheck(
                check="count",
                passed=False,
                detail=(
                    f"{model} {missing} of {declared} missing: {len(present)} detected: {names}"
                ),
            )
        )
    for matched, positions in by_model.items():
        if matched in spec.counts:
            continue
        for position in positions:
            what = f"catalog {matched}" if matched else "no catalog match"
            checks.append(
                ExpectCheck(
                    check="model",
                    passed=False,
                    detail=(
                        f"{labels[position]} {report.gpus[position].name or 'unknown'} "
                        f"is {what}, which is not declared"
                    ),
                    gpu_index=report.gpus[position].index,
                )
            )
    if not any(check.check == "model" for check in checks):
        checks.append(ExpectCheck(check="model", passed=True, detail="every GPU is declared"))
    return checks


def _memory_check(
    gpu: DoctorGpu, snapshot: GpuSnapshot | None, label: str, entry: Any
) -> ExpectCheck:
    if entry.memory_gb is None:  # an announced part: nothing to check against
        return ExpectCheck(
            check="memory",
            passed=False,
            detail=f"{label}: the catalog has no memory size for it (not published)",
            gpu_index=gpu.index,
        )
    expected_mib = float(entry.memory_gb) * 1024
    shown = snapshot.memory_total_mib if snapshot is not None else None
    if shown is None:
        return ExpectCheck(
            check="memory", passed=False, detail=f"{label}: memory not read", gpu_index=gpu.index
        )
    passed = shown >= expected_mib * MEMORY_SHARE
    detail = f"{label}: {shown / 1024:.1f} GiB of {entry.memory_gb:g} GiB" + (
        "" if passed else f" (under {MEMORY_SHARE:.0%})"
    )
    return ExpectCheck(check="memory", passed=passed, detail=detail, gpu_index=gpu.index)


def _link_check(
    gpu: DoctorGpu, snapshot: GpuSnapshot | None, label: str, entry: Any, link: ExpectLink
) -> ExpectCheck | None:
    catalog = interface_link(getattr(entry, "interface", None))
    gen = link.gen if link.gen is not None else (catalog[0] if catalog else None)
    width = link.width if link.width is not None else (catalog[1] if catalog else None)
    if gen is None and width is None:
        return None
    if snapshot is None or snapshot.pcie_gen_max is None or snapshot.pcie_width_current is None:
        return ExpectCheck(
            check="link", passed=False, detail=f"{label}: PCIe link not read", gpu_index=gpu.index
        )
    wrong: list[str] = []
    if width is not None and snapshot.pcie_width_current < width:
        wrong.append(f"x{snapshot.pcie_width_current} where x{width} is declared")
    if gen is not None and snapshot.pcie_gen_max < gen:
        wrong.append(f"gen {snapshot.pcie_gen_max} at most where gen {gen} is declared")
    busy = (snapshot.utilization_gpu_percent or 0) >= 5
    current = snapshot.pcie_gen_current
    if gen is not None and busy and current is not None and current < gen:
        wrong.append(f"gen {current} under load where gen {gen} is declared")
    declared = f"gen {gen} " if gen is not None else ""
    declared += f"x{width}" if width is not None else ""
    detail = f"{label}: " + ("; ".join(wrong) if wrong else f"PCIe {declared.strip()} reached")
    return ExpectCheck(check="link", passed=not wrong, detail=detail, gpu_index=gpu.index)


def _health_check(gpu: DoctorGpu, label: str) -> ExpectCheck:
    bad = [f"{field} disagrees with nvidia-smi" for field in gpu.disagreeing]
    bad.extend(
        f"{finding.check}: {finding.message}"
        for finding in gpu.findings
        if finding.severity != "info" and not finding.check.startswith(("gemm", "copy"))
    )
    detail = f"{label}: " + ("; ".join(bad) if bad else "healthy")
    return ExpectCheck(check="health", passed=not bad, detail=detail, gpu_index=gpu.index)


def _throughput_checks(
    gpu: DoctorGpu, label: str, min_gemm_fraction: float | None
) -> list[ExpectCheck]:
    gemms = [row for row in gpu.throughput if row.test == "gemm"]
    checks: list[ExpectCheck] = []
    if not gemms:
        return [
            ExpectCheck(
                check="throughput",
                passed=min_gemm_fraction is None,
                detail=f"{label}: GEMM not measured",
                gpu_index=gpu.index,
            )
        ]
    flagged = {
        finding.check: finding.message
        for finding in gpu.findings
        if finding.severity != "info" and finding.check.startswith("gemm")
    }
    for row in gemms:
        name = f"GEMM {row.dtype.upper()}"
        check_name = f"gemm_{row.dtype}"
        problems: list[str] = []
        if row.error is not None:
            problems.append(f"{name} failed: {row.error}")
        elif min_gemm_fraction is not None and (
            row.fraction_of_peak is None or row.fraction_of_peak < min_gemm_fraction
        ):
            share = "no peak" if row.fraction_of_peak is None else f"{row.fraction_of_peak:.0%}"
            problems.append(
                f"{name} {row.value:,.1f} {row.unit} is {share} of the catalog peak, "
                f"under the declared {min_gemm_fraction:.0%}"
            )
        if check_name in flagged and row.error is None:
            problems.append(flagged[check_name])
        detail = f"{label}: " + (
            "; ".join(problems) if problems else f"{name} {row.value:,.1f} {row.unit}"
        )
        checks.append(
            ExpectCheck(check="throughput", passed=not problems, detail=detail, gpu_index=gpu.index)
        )
    return checks


def check_expectations(
    spec: ExpectSpec,
    report: DoctorReport,
    detection: DetectionResult,
    entries: Mapping[str, Any],
    *,
    link: ExpectLink | None = None,
    min_gemm_fraction: float | None = None,
    measured: bool = True,
) -> list[ExpectCheck]:
    """Every check of the gate, in order: count and model, then per GPU memory, link,
    health and throughput (``measured`` False: the benchmark was skipped)."""
    link = link or ExpectLink()
    snapshots = _snapshots(detection, report)
    labels = [_label(gpu, snapshot) for gpu, snapshot in zip(report.gpus, snapshots, strict=True)]
    checks = _count_checks(spec, report, labels)
    for gpu, snapshot, label in zip(report.gpus, snapshots, labels, strict=True):
        entry = entries.get(gpu.catalog_id or "")
        if entry is not None and gpu.catalog_id in spec.counts:
            checks.append(_memory_check(gpu, snapshot, label, entry))
            checked_link = _link_check(gpu, snapshot, label, entry, link)
            if checked_link is not None:
                checks.append(checked_link)
        checks.append(_health_check(gpu, label))
        if measured:
            checks.extend(_throughput_checks(gpu, label, min_gemm_fraction))
        else:
            checks.append(
                ExpectCheck(
                    check="throughput",
                    passed=True,
                    detail=f"{label}: not measured (--skip-bench)",
                    gpu_index=gpu.index,
                )
            )
    machine = [f"{f.check}: {f.message}" for f in report.findings if f.severity == "error"]
    if machine:
        checks.append(ExpectCheck(check="health", passed=False, detail="; ".join(machine)))
    return checks
