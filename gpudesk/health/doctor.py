"""``doctor``: a health check of this machine's NVIDIA GPUs in seconds.

Three kinds of evidence, each kept apart in the report:

* **Agreement.** What GPUDesk read through NVML against ``nvidia-smi``'s own
  CSV (``--query-gpu=... --format=csv,noheader,nounits``), field by field in
  nvidia-smi's units, so a wrong number in either shows.
* **Findings** from NVML: a PCIe link below its maximum, active throttle
  reasons, uncorrected ECC errors, pages waiting to be retired or rows to be
  remapped, a compute mode that forbids use, and a driver older than the
  installed CUDA runtime (torch / CuPy).
* **Throughput** (optional): BF16/FP16 GEMM and device copy as a fraction of
  the catalog's dense peak, against the typical fraction of well-run hardware
  of the same kind (:mod:`gpudesk.bench.typical`, each with its source).

The health rules themselves are :mod:`gpudesk.health.rules`, shared with the
fleet survey and the GUI.

Nothing here knows CLI flags; failures are typed errors with the path or line.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpudesk.bench.reference import References, load_references
from gpudesk.bench.typical import TypicalFraction, TypicalFractions, load_typical_fractions
from gpudesk.external import (
    CallTimeoutError,
    ToolOutputLimitError,
    ToolStartError,
    ToolTimeoutError,
    call_with_deadline,
    run_tool,
)
from gpudesk.hardware.models import DetectionResult, DeviceKind, DeviceSource, GpuSnapshot
from gpudesk.health import rules
from gpudesk.health.errors import HealthError
from gpudesk.health.rules import Finding, Severity
from gpudesk.progress import Progress, ProgressState

__all__ = [
    "Finding",
    "Severity",
    "TypicalFraction",
    "TypicalFractions",
    "load_typical_fractions",
]

#: The fields compared with nvidia-smi, in the order they are queried.
SMI_FIELDS: tuple[str, ...] = (
    "index",
    "name",
    "uuid",
    "pci.bus_id",
    "pci.device_id",
    "memory.total",
    "driver_version",
    "power.limit",
    "clocks.max.sm",
    "clocks.max.memory",
    "mig.mode.current",
)
SMI_ARGUMENTS: tuple[str, ...] = (
    f"--query-gpu={','.join(SMI_FIELDS)}",
    "--format=csv,noheader,nounits",
)
#: What nvidia-smi prints for a value it cannot give.
_SMI_MISSING = frozenset({"[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "[Unknown]"})
MAX_SMI_OUTPUT_BYTES = 1024 * 1024
MAX_SMI_STDERR_BYTES = 64 * 1024
MAX_SMI_ROWS = 256
MAX_SMI_VALUE_CHARS = 256
#: How long nvidia-smi, and NVML (the whole detection), may each take. A GPU that fell
#: off the bus leaves both stuck, and a stuck tool on a GPU node is a finding, not a
#: hang: the two, with start-up, keep ``doctor --skip-bench`` under 30 s. A healthy
#: 8-GPU node without persistence mode answers in a few seconds.
SMI_TIMEOUT_S = 12.0
NVML_TIMEOUT_S = 12.0
#: Power limits agree within this (nvidia-smi prints 2 decimals, NVML gives mW).
POWER_TOLERANCE_W = 0.5

SmiValue = str | int | float | None


class NvidiaSmiNotFoundError(HealthError):
    """No nvidia-smi where it was looked for."""

    def __init__(self, where: str) -> None:
        super().__init__(f"nvidia-smi not found: {where}")
        self.where = where


class NvidiaSmiUnusableError(HealthError):
    """The path given for nvidia-smi is not an executable file."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class NvidiaSmiFailedError(HealthError):
    """nvidia-smi ran but failed (non-zero exit, timeout, unreadable output)."""


class NvidiaSmiTimeoutError(NvidiaSmiFailedError):
    """nvidia-smi gave no answer in time: on a GPU node, a health problem in itself."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"nvidia-smi did not answer within {timeout_s:g} s")
        self.timeout_s = timeout_s


class DetectionTimeoutError(HealthError):
    """Detection (NVML, as a rule) gave no answer in time; ``finding`` says so."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


class NvidiaSmiOutputError(HealthError):
    """A line of nvidia-smi's CSV that does not have the queried fields."""

    def __init__(self, line_number: int, reason: str) -> None:
        super().__init__(f"nvidia-smi output line {line_number}: {reason}")
        self.line_number = line_number
        self.reason = reason


class FieldAgreement(BaseModel):
    """One field as GPUDesk read it and as nvidia-smi printed it (nvidia-smi's units)."""

    model_config = ConfigDict(frozen=True)

    gpudesk: SmiValue
    nvidia_smi: SmiValue
    match: bool


class ThroughputFigure(BaseModel):
    """One measured figure of one GPU, as a fraction of its catalog peak."""

    model_config = ConfigDict(frozen=True)

    test: Literal["gemm", "copy"]
    dtype: str
    value: float
    unit: str
    fraction_of_peak: float | None
    error: str | None = None


class DoctorGpu(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int | None
    name: str | None
    uuid: str | None = None
    catalog_id: str | None
    agreement: dict[str, FieldAgreement] = Field(default_factory=dict)
    findings: list[Finding] = Field(default_factory=list)
    #: What ``doctor`` measured on this GPU (empty with --skip-bench).
    throughput: list[ThroughputFigure] = Field(default_factory=list)
    #: The reference distribution each measured GEMM was judged against ("gemm bf16":
    #: median, p5, p95, min, max, n, sources), from gpudesk.bench.reference.
    references: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def disagreeing(self) -> list[str]:
        return [name for name, field in self.agreement.items() if not field.match]


class DoctorReport(BaseModel):
    """The ``doctor --json`` document: ``ok`` and ``gpus`` are the contract, the rest additive."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    gpus: list[DoctorGpu]
    #: Findings about the machine rather than one GPU (CUDA runtime vs driver).
    findings: list[Finding] = Field(default_factory=list)
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    nvidia_smi: str | None = None
    benchmark: Literal["skipped", "run", "unavailable"] = "skipped"

    @property
    def errors(self) -> list[str]:
        """Every disagreeing field and every error, named for the exit message."""
        named = [f"{f.check}: {f.message}" for f in self.findings if f.severity == "error"]
        for gpu in self.gpus:
            named.extend(f"GPU {gpu.index}: {field} disagrees" for field in gpu.disagreeing)
            named.extend(
                f"GPU {gpu.index}: {finding.check}"
                for finding in gpu.findings
                if finding.severity == "error"
            )
        return named


def is_nvidia_gpu(gpu: GpuSnapshot) -> bool:
    """A physical GPU read through NVML: what nvidia-smi also lists (no MIG, no AMD)."""
    return gpu.kind is DeviceKind.GPU and gpu.source is DeviceSource.NVML


# -- nvidia-smi -----------------------------------------------------------------------


def find_nvidia_smi(path: Path | None = None, search_path: str | None = None) -> Path:
    """The nvidia-smi to run: ``path`` when given, else the first on ``PATH``.

    Raises:
        NvidiaSmiNotFoundError: nothing there.
        NvidiaSmiUnusableError: ``path`` exists but is not an executable file.
    """
    if path is not None:
        if not path.exists():
            raise NvidiaSmiNotFoundError(str(path))
        if not path.is_file():
            raise NvidiaSmiUnusableError(path, "not a regular file")
        if not os.access(path, os.X_OK):
            raise NvidiaSmiUnusableError(path, "not executable")
        return path
    directories = (search_path if search_path is not None else os.environ.get("PATH", "")).split(
        os.pathsep
    )
    for directory in directories:
        candidate = Path(directory or ".") / "nvidia-smi"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise NvidiaSmiNotFoundError("not on PATH")


def read_nvidia_smi(executable: Path, timeout_s: float = SMI_TIMEOUT_S) -> tuple[str, bool]:
    """nvidia-smi's CSV for :data:`SMI_FIELDS`, and whether it left a process behind.

    It runs through :func:`gpudesk.external.run_tool`: in its own process
    group, its output read as it comes and never held past
    :data:`MAX_SMI_OUTPUT_BYTES` (stderr: :data:`MAX_SMI_STDERR_BYTES`), and
    stopped at ``timeout_s`` with everything it started. The flag is True when
    it exited but a process it started still held its output open (that
    process is stopped; the answer is what nvidia-smi itself printed).

    Raises:
        NvidiaSmiTimeoutError: no answer within ``timeout_s``.
        NvidiaSmiFailedError: not startable, a non-zero exit (with its message),
            or more output than any machine prints.
    """
    try:
        done = run_tool(
            [str(executable), *SMI_ARGUMENTS],
            timeout_s,
            max_stdout_bytes=MAX_SMI_OUTPUT_BYTES,
            max_stderr_bytes=MAX_SMI_STDERR_BYTES,
        )
    except ToolTimeoutError as exc:
        raise NvidiaSmiTimeoutError(timeout_s) from exc
    except ToolOutputLimitError as exc:
        if exc.stream == "stdout":
            raise NvidiaSmiFailedError(
                f"printed more than {MAX_SMI_OUTPUT_BYTES // 1024} KiB"
            ) from exc
        raise NvidiaSmiFailedError(
            f"printed more than {MAX_SMI_STDERR_BYTES // 1024} KiB of errors"
        ) from exc
    except ToolStartError as exc:
        raise NvidiaSmiFailedError(f"could not run it: {exc.os_error}") from exc
    text = done.stdout_text
    if done.returncode != 0:
        message = (done.stderr_text or text).strip()
        first = message.splitlines()[0][:300] if message else "no message"
        raise NvidiaSmiFailedError(f"exit status {done.returncode}: {first}")
    return text, done.left_running


def run_nvidia_smi(executable: Path, timeout_s: float = SMI_TIMEOUT_S) -> str:
    """nvidia-smi's CSV for :data:`SMI_FIELDS` (:func:`read_nvidia_smi` without the flag).

    Raises:
        NvidiaSmiTimeoutError, NvidiaSmiFailedError: as :func:`read_nvidia_smi`.
    """
    return read_nvidia_smi(executable, timeout_s)[0]


def parse_smi_csv(text: str) -> list[dict[str, str | None]]:
    """Rows of ``--format=csv,noheader,nounits`` output; ``[N/A]`` and kin become None.

    Raises:
        NvidiaSmiOutputError: a line without exactly the queried fields, an
            over-long value, or more rows than any machine has.
    """
    rows: list[dict[str, str | None]] = []
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > MAX_SMI_ROWS:
        raise NvidiaSmiOutputError(MAX_SMI_ROWS + 1, f"more than {MAX_SMI_ROWS} GPUs")
    for number, line in enumerate(lines, start=1):
        try:
            (values,) = list(csv.reader([line], skipinitialspace=True))
        except (csv.Error, ValueError) as exc:
            raise NvidiaSmiOutputError(number, f"not CSV ({exc})") from exc
        if len(values) != len(SMI_FIELDS):
            raise NvidiaSmiOutputError(
                number, f"{len(values)} values where {len(SMI_FIELDS)} were asked for"
            )
        row: dict[str, str | None] = {}
        for field, raw in zip(SMI_FIELDS, values, strict=True):
            value = raw.strip()
            if len(value) > MAX_SMI_VALUE_CHARS:
                raise NvidiaSmiOutputError(number, f"{field} is longer than {MAX_SMI_VALUE_CHARS}")
            row[field] = None if value in _SMI_MISSING or not value else value
        rows.append(row)
    return rows


# -- agreement ------------------------------------------------------------------------


def _as_int(text: str | None, base: int = 10) -> int | None:
    if text is None:
        return None
    try:
        return int(text, base)
    except ValueError:
        return None


def _as_float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def _combined_pci_id(gpu: GpuSnapshot) -> int | None:
    device, vendor = _as_int(gpu.pci_device_id, 16), _as_int(gpu.pci_vendor_id, 16)
    if device is None or vendor is None:
        return None
    return device << 16 | vendor


def _field(
    ours: SmiValue, theirs_text: str | None, theirs: SmiValue, match: bool
) -> FieldAgreement:
    # A value nvidia-smi printed but GPUDesk could not parse never counts as agreeing.
    if theirs_text is not None and theirs is None:
        return FieldAgreement(gpudesk=ours, nvidia_smi=theirs_text, match=False)
    return FieldAgreement(gpudesk=ours, nvidia_smi=theirs, match=match)


def agreement(
    gpu: GpuSnapshot, driver_version: str | None, row: Mapping[str, str | None]
) -> dict[str, FieldAgreement]:
    """Each of :data:`SMI_FIELDS`, GPUDesk's value against nvidia-smi's, in nvidia-smi's units."""
    out: dict[str, FieldAgreement] = {}
    smi_index = _as_int(row["index"])
    out["index"] = _field(gpu.index, row["index"], smi_index, gpu.index == smi_index)
    out["name"] = _field(gpu.name, row["name"], row["name"], gpu.name == row["name"])
    uuid = row["uuid"]
    out["uuid"] = _field(
        gpu.uuid,
        uuid,
        uuid,
        (gpu.uuid or "").lower() == (uuid or "").lower() if uuid else not gpu.uuid,
    )
    bus = row["pci.bus_id"]
    out["pci.bus_id"] = _field(
        gpu.pci_bus_id,
        bus,
        bus,
        (gpu.pci_bus_id or "").upper() == (bus or "").upper() if bus else gpu.pci_bus_id is None,
    )
    combined = _combined_pci_id(gpu)
    smi_combined = _as_int(row["pci.device_id"], 16)
    out["pci.device_id"] = FieldAgreement(
        gpudesk=None if combined is None else f"0x{combined:08X}",
        nvidia_smi=row["pci.device_id"],
        match=combined == smi_combined and (combined is not None or row["pci.device_id"] is None),
    )
    memory = _as_int(row["memory.total"])
    out["memory.total"] = _field(
        gpu.memory_total_mib, row["memory.total"], memory, gpu.memory_total_mib == memory
    )
    driver = row["driver_version"]
    out["driver_version"] = _field(driver_version, driver, driver, driver_version == driver)
    power = _as_float(row["power.limit"])
    ours_power = gpu.power_limit_w
    power_match = (
        power is None and ours_power is None
        if power is None or ours_power is None
        else abs(power - ours_power) <= POWER_TOLERANCE_W
    )
    out["power.limit"] = _field(ours_power, row["power.limit"], power, power_match)
    for field, ours in (
        ("clocks.max.sm", gpu.sm_clock_max_mhz),
        ("clocks.max.memory", gpu.memory_clock_max_mhz),
    ):
        theirs = _as_int(row[field])
        out[field] = _field(ours, row[field], theirs, ours == theirs)
    mig_text = row["mig.mode.current"]
    mig = {"enabled": True, "disabled": False}.get((mig_text or "").lower())
    ours_mig = None if gpu.mig_enabled is None else ("Enabled" if gpu.mig_enabled else "Disabled")
    out["mig.mode.current"] = _field(
        ours_mig, mig_text, None if mig is None else mig_text, gpu.mig_enabled == mig
    )
    return out


def _row_for(
    gpu: GpuSnapshot, rows: Sequence[Mapping[str, str | None]]
) -> Mapping[str, str | None] | None:
    """nvidia-smi's row for this GPU: by UUID (stable), else by index."""
    for row in rows:
        if gpu.uuid and row["uuid"] and row["uuid"].lower() == gpu.uuid.lower():
            return row
    for row in rows:
        if gpu.index is not None and _as_int(row["index"]) == gpu.index:
            return row
    return None


# -- findings from NVML ---------------------------------------------------------------


def gpu_findings(gpu: GpuSnapshot) -> list[Finding]:
    """What NVML says about one physical GPU's health (the shared rules)."""
    return rules.gpu_findings(gpu)


@dataclass(frozen=True, slots=True)
class CudaRuntime:
    """A CUDA runtime a framework on this machine was built with, e.g. torch's "12.4"."""

    package: str
    version: str


def _major_minor(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


def runtime_findings(
    cuda_driver_version: str | None, runtimes: Sequence[CudaRuntime]
) -> list[Finding]:
    """Each installed CUDA runtime against the newest CUDA the driver supports.

    A newer major version cannot run; a newer minor version of the same major
    runs through CUDA's minor-version compatibility, except for PTX JIT and
    features newer than the driver (CUDA Compatibility guide).
    """
    driver = _major_minor(cuda_driver_version) if cuda_driver_version else None
    found: list[Finding] = []
    if driver is None:
        return found
    for runtime in runtimes:
        built = _major_minor(runtime.version)
        if built is None:
            continue
        if built[0] > driver[0]:
            found.append(
                Finding(
                    severity="error",
                    check="driver_version",
                    message=(
                        f"{runtime.package} is built for CUDA {runtime.version} but the driver "
                        f"supports CUDA {cuda_driver_version}: it cannot use the GPU; update "
                        "the NVIDIA driver or install a build for your CUDA version"
                    ),
                )
            )
        elif built > driver:
            found.append(
                Finding(
                    severity="warning",
                    check="driver_version",
                    message=(
                        f"{runtime.package} is built for CUDA {runtime.version}, newer than the "
                        f"driver's CUDA {cuda_driver_version}: it runs through minor-version "
                        "compatibility, but kernels needing PTX JIT or newer features fail; "
                        "update the driver"
                    ),
                )
            )
    return found


def installed_cuda_runtimes() -> list[CudaRuntime]:
    """The CUDA runtimes of torch and CuPy, where they are installed (imports them)."""
    found: list[CudaRuntime] = []
    try:
        import torch  # type: ignore[import-not-found]

        cuda = getattr(torch.version, "cuda", None)
        if cuda:
            found.append(CudaRuntime(f"PyTorch {torch.__version__}", str(cuda)))
    except Exception:  # absent or broken: nothing to compare
        pass
    try:
        import cupy  # type: ignore[import-not-found]

        value = int(cupy.cuda.runtime.runtimeGetVersion())
        found.append(
            CudaRuntime(f"CuPy {cupy.__version__}", f"{value // 1000}.{value % 1000 // 10}")
        )
    except Exception:
        pass
    return found


# -- throughput against typical fractions ---------------------------------------------


#: A figure below this share of the typical fraction is worth a warning.
BELOW_TYPICAL = 0.85


def throughput_findings(
    catalog_id: str | None,
    figures: Sequence[ThroughputFigure],
    typical: TypicalFractions,
    references: References | None = None,
) -> list[Finding]:
    """Each figure against this model's reference distribution where ``references`` has
    one (GEMM), else against the typical fraction for this GPU, citing the source."""
    found: list[Finding] = []
    for figure in figures:
        reference = (
            references.get(catalog_id, f"gemm {figure.dtype}")
            if references is not None and figure.test == "gemm" and figure.error is None
            else None
        )
        if reference is not None and figure.value > 0:
            found.append(
                rules.reference_finding(
                    reference,
                    figure.value,
                    check=f"gemm_{figure.dtype}",
                    fraction_of_peak=figure.fraction_of_peak,
                )
            )
            continue
        label = f"{figure.dtype.upper()} GEMM" if figure.test == "gemm" else "device copy"
        check = f"{figure.test}_{figure.dtype}" if figure.test == "gemm" else "copy"
        if figure.error is not None:
            found.append(rules.finding(check, "warning", f"{label} failed: {figure.error}"))
            continue
        if figure.fraction_of_peak is None:
            found.append(
                rules.finding(
                    check, "info", f"{label}: {figure.value:.1f} {figure.unit} (no catalog peak)"
                )
            )
            continue
        expected = (
            typical.for_gemm(catalog_id, figure.dtype) if figure.test == "gemm" else typical.copy
        )
        measured = (
            f"{label}: {figure.value:,.1f} {figure.unit}, "
            f"{figure.fraction_of_peak:.0%} of the catalog peak"
        )
        if expected is None:
            found.append(rules.finding(check, "info", measured))
            continue
        basis = f"typical {expected.fraction:.0%} ({expected.source})"
        if figure.fraction_of_peak < expected.fraction * BELOW_TYPICAL:
            found.append(
                rules.finding(
                    check,
                    "warning",
                    f"{measured}, below the {basis}: check clocks and throttling, the power "
                    "limit, cooling and other processes on the GPU",
                )
            )
        else:
            found.append(rules.finding(check, "info", f"{measured}; {basis}"))
    return found


# -- the whole check --------------------------------------------------------------------


def examine(
    detection: DetectionResult,
    smi_rows: Sequence[Mapping[str, str | None]] | None,
    smi_problem: str | None,
    catalog_ids: Mapping[int, str | None],
    runtimes: Sequence[CudaRuntime] = (),
    throughput: Mapping[int, Sequence[ThroughputFigure]] | None = None,
    typical: TypicalFractions | None = None,
    references: References | None = None,
    nvidia_smi: str | None = None,
    benchmark: Literal["skipped", "run", "unavailable"] = "skipped",
) -> DoctorReport:
    """The report for every physical GPU detected.

    Args:
        detection: what NVML read.
        smi_rows: nvidia-smi's parsed rows, or None when it could not be used.
        smi_problem: why nvidia-smi could not be used (becomes an error finding).
        catalog_ids: catalog match per position in ``detection.gpus``.
        runtimes: CUDA runtimes installed (torch, CuPy).
        throughput: measured figures per position in ``detection.gpus``.
        typical: typical fractions (the bundled table when None).
        references: reference figures per model (the bundled ones when None).
    """
    typical = typical or load_typical_fractions()
    references = references or load_references()
    machine = runtime_findings(detection.cuda_driver_version, runtimes)
    if smi_problem is not None:
        machine.append(Finding(severity="error", check="nvidia_smi", message=smi_problem))
    gpus: list[DoctorGpu] = []
    matched_rows: set[int] = set()
    for position, gpu in enumerate(detection.gpus):
        if not is_nvidia_gpu(gpu):
            continue
        findings: list[Finding] = []
        fields: dict[str, FieldAgreement] = {}
        findings.extend(gpu_findings(gpu))
        if smi_rows is not None:
            row = _row_for(gpu, smi_rows)
            if row is None:
                findings.append(
                    Finding(
                        severity="error",
                        check="nvidia_smi",
                        message="nvidia-smi does not list this GPU",
                    )
                )
            else:
                matched_rows.add(id(row))
                fields = agreement(gpu, detection.driver_version, row)
        catalog_id = catalog_ids.get(position)
        measured = list(throughput.get(position, ())) if throughput is not None else []
        if measured:
            findings.extend(throughput_findings(catalog_id, measured, typical, references))
        gpus.append(
            DoctorGpu(
                index=gpu.index,
                name=gpu.name,
                uuid=gpu.uuid,
                catalog_id=catalog_id,
                agreement=fields,
                findings=findings,
                throughput=measured,
                references={
                    key: reference.to_json()
                    for key in sorted({f"{row.test} {row.dtype}" for row in measured})
                    if (reference := references.get(catalog_id, key)) is not None
                },
            )
        )
    for row in smi_rows or ():
        if id(row) not in matched_rows:
            machine.append(
                Finding(
                    severity="error",
                    check="nvidia_smi",
                    message=(
                        f"nvidia-smi lists GPU {row['index']} ({row['name']}), "
                        "which NVML did not give"
                    ),
                )
            )
    report = DoctorReport(
        ok=True,
        gpus=gpus,
        findings=machine,
        driver_version=detection.driver_version,
        cuda_driver_version=detection.cuda_driver_version,
        nvidia_smi=nvidia_smi,
        benchmark=benchmark,
    )
    return report.model_copy(update={"ok": not report.errors})


def measure_throughput(
    detection: DetectionResult,
    entries: Sequence[Any],
    progress: Any | None = None,
    backends: Sequence[Any] | None = None,
) -> tuple[dict[int, list[ThroughputFigure]], str | None]:
    """BF16/FP16 GEMM and device copy on every physical GPU, matched to CUDA devices by UUID.

    Returns the figures per position in ``detection.gpus`` and, when no GPU
    backend could run, why (then the figures are empty).
    """
    from gpudesk.bench.backends import get_backend
    from gpudesk.bench.plan import make_plan
    from gpudesk.bench.runner import run_benchmark
    from gpudesk.progress import NullProgress

    progress = progress or NullProgress()
    chosen = None
    reasons: list[str] = []
    for backend in (
        backends if backends is not None else (get_backend("torch"), get_backend("cupy"))
    ):
        status = backend.status()
        if status.available:
            chosen = backend
            break
        reasons.append(f"{backend.name}: {status.reason}")
    if chosen is None:
        return {}, "no GPU benchmark backend can run here (" + "; ".join(reasons) + ")"
    devices = chosen.devices()
    figures: dict[int, list[ThroughputFigure]] = {}
    for position, gpu in enumerate(detection.gpus):
        if not is_nvidia_gpu(gpu) or gpu.lost or not gpu.uuid:
            continue
        bare = gpu.uuid.removeprefix("GPU-").lower()
        device = next(
            (d for d in devices if d.uuid and d.uuid.removeprefix("GPU-").lower() == bare), None
        )
        if device is None:
            continue  # hidden from CUDA (CUDA_VISIBLE_DEVICES) or a MIG-enabled parent
        capabilities = chosen.capabilities(device.index)
        dtypes = [d for d in ("bf16", "fp16") if d in capabilities.gemm_dtypes]
        plan = make_plan(capabilities, tests=["gemm", "copy"], dtypes=dtypes)
        plan = plan.model_copy(update={"device_index": device.index})
        result = run_benchmark(plan, chosen, progress, catalog=entries)
        rows: list[ThroughputFigure] = []
        for row in result.results:
            if row.test not in ("gemm", "copy"):
                continue
            rows.append(
                ThroughputFigure(
                    test="gemm" if row.test == "gemm" else "copy",
                    dtype=row.dtype if row.test == "gemm" else "bytes",
                    value=row.value or 0.0,
                    unit=row.unit,
                    fraction_of_peak=row.fraction_of_peak,
                    error=row.error,
                )
            )
        if result.error and not rows:
            rows.append(
                ThroughputFigure(
                    test="gemm",
                    dtype="bf16",
                    value=0.0,
                    unit="TFLOPS",
                    fraction_of_peak=None,
                    error=result.error,
                )
            )
        figures[position] = rows
    return figures, None


def verdict_lines(report: DoctorReport, describe: Callable[[str], str] | None = None) -> list[str]:
    """The readable verdict: one block per GPU, then the machine's findings."""
    lines: list[str] = []
    marks = {"info": "  ", "warning": "! ", "error": "X "}
    for gpu in report.gpus:
        bad = gpu.disagreeing
        errors = [f for f in gpu.findings if f.severity == "error"]
        warnings = [f for f in gpu.findings if f.severity == "warning"]
        state = "FAIL" if bad or errors else ("WARN" if warnings else "OK")
        catalog = f" [{gpu.catalog_id}]" if gpu.catalog_id else ""
        lines.append(f"GPU {gpu.index}  {gpu.name or 'unknown'}{catalog}: {state}")
        if gpu.agreement:
            agreed = len(gpu.agreement) - len(bad)
            lines.append(f"  nvidia-smi agrees on {agreed} of {len(gpu.agreement)} fields")
            for name in bad:
                field = gpu.agreement[name]
                lines.append(
                    f"X {name}: gpudesk {field.gpudesk!s}, nvidia-smi {field.nvidia_smi!s}"
                )
        for finding in gpu.findings:
            lines.append(f"{marks[finding.severity]}{finding.check}: {finding.message}")
    if report.findings:
        lines.append("machine")
        for finding in report.findings:
            lines.append(f"{marks[finding.severity]}{finding.check}: {finding.message}")
    lines.append("verdict: " + ("healthy" if report.ok else "problems found"))
    return lines


#: Detection's progress messages while it waits on NVML (hardware.detect and Nvml.read_all):
#: "reading the CPU" is reported just before NVML is first asked.
_NVML_STAGES = ("reading the CPU", "reading GPU")


def detect_within(
    detector: Callable[[Progress], DetectionResult] | None = None,
    timeout_s: float = NVML_TIMEOUT_S,
) -> DetectionResult:
    """Detect this machine's GPUs, giving up at ``timeout_s``.

    A GPU that fell off the bus can leave an NVML call stuck in the driver
    for good; the call cannot be interrupted, so it runs in a worker thread
    that is abandoned at the deadline (:func:`gpudesk.external.call_with_deadline`).

    Args:
        detector: detection taking a progress (``hardware.detect.detect`` when None).

    Raises:
        DetectionTimeoutError: no answer in time; its finding names what was stuck
            (NVML, or the rest of detection) and where.
    """
    if detector is None:
        from gpudesk.hardware.detect import detect

        def detector(progress: Progress) -> DetectionResult:
            return detect(progress=progress)

    progress = ProgressState()
    run = detector
    try:
        return call_with_deadline(lambda: run(progress), timeout_s, "GPU detection")
    except CallTimeoutError as exc:
        progress.cancel()  # should it come back, it stops at its next check
        stage = progress.message or "starting"
        if stage.startswith(_NVML_STAGES):
            finding = Finding(
                severity="error",
                check="nvml",
                message=(
                    f"NVML did not answer within {timeout_s:g} s (while {stage}): a GPU or the "
                    "driver may be hung; look for Xid errors in `dmesg`"
                ),
            )
        else:
            finding = Finding(
                severity="error",
                check="detection",
                message=f"GPU detection did not answer within {timeout_s:g} s (after {stage})",
            )
        raise DetectionTimeoutError(finding) from exc


class NoNvidiaGpuError(HealthError):
    """Nothing for ``doctor`` to check: NVML found no NVIDIA GPU (``status`` says why)."""

    def __init__(self, detection: DetectionResult) -> None:
        super().__init__(detection.hint)
        self.detection = detection


def check_machine(
    detection: DetectionResult,
    entries: Sequence[Any],
    nvidia_smi: Path | None = None,
    *,
    skip_bench: bool = False,
    progress: Any | None = None,
    runtimes: Sequence[CudaRuntime] | None = None,
    backends: Sequence[Any] | None = None,
    smi_timeout_s: float = SMI_TIMEOUT_S,
) -> DoctorReport:
    """The whole check, as ``gpudesk doctor`` and the GUI's "Check health" run it.

    nvidia-smi gets ``smi_timeout_s``; past it, "nvidia-smi did not answer" is
    an error finding (a stuck tool on a GPU node is a health problem).

    Raises:
        NoNvidiaGpuError: NVML found no physical NVIDIA GPU.
        NvidiaSmiNotFoundError: no nvidia-smi (at ``nvidia_smi``, or on PATH).
        NvidiaSmiUnusableError: ``nvidia_smi`` is not an executable file.
    """
    from gpudesk.hardware.match import match_devices

    if not any(is_nvidia_gpu(gpu) for gpu in detection.gpus):
        raise NoNvidiaGpuError(detection)
    executable = find_nvidia_smi(nvidia_smi)
    rows: list[dict[str, str | None]] | None = None
    problem: str | None = None
    extra: list[Finding] = []
    try:
        text, left_running = read_nvidia_smi(executable, smi_timeout_s)
        rows = parse_smi_csv(text)
    except NvidiaSmiTimeoutError as exc:
        problem = (
            f"{exc} ({executable}): a GPU or the driver may be hung; look for Xid errors in `dmesg`"
        )
    except (NvidiaSmiFailedError, NvidiaSmiOutputError) as exc:
        problem = f"{executable} failed: {exc}"
    else:
        if left_running:
            extra.append(
                Finding(
                    severity="warning",
                    check="nvidia_smi",
                    message=(
                        f"nvidia-smi ({executable}) exited but left a process holding its "
                        "output open (stopped); is it a wrapper script?"
                    ),
                )
            )
    matches = match_devices(detection.gpus, entries)
    catalog_ids = {position: match.catalog_id for position, match in enumerate(matches)}
    throughput: dict[int, list[ThroughputFigure]] | None = None
    benchmark: Literal["skipped", "run", "unavailable"] = "skipped"
    if not skip_bench:
        throughput, why_not = measure_throughput(detection, entries, progress, backends)
        benchmark = "unavailable" if why_not else "run"
        if why_not:
            extra.append(Finding(severity="info", check="benchmark", message=why_not))
    report = examine(
        detection,
        rows,
        problem,
        catalog_ids,
        runtimes=installed_cuda_runtimes() if runtimes is None else runtimes,
        throughput=throughput,
        nvidia_smi=str(executable),
        benchmark=benchmark,
    )
    if extra:
        report = report.model_copy(update={"findings": [*report.findings, *extra]})
    return report
