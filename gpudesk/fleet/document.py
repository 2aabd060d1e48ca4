"""The survey document (``gpudesk fleet survey --json``), and reading one back.

A survey file comes from another machine, so it is untrusted: it is read
only if it is a regular file under :data:`MAX_SURVEY_BYTES`, nested at most
:data:`MAX_DEPTH` deep, with no NaN/Infinity and no unencodable text, and its
parts are validated with strict types. What the checks and the inventory
need is read through narrow views; everything else in a node's detection or
benchmark document is kept as it was but never trusted.

Names, ids and labels in the views are at most
:data:`~gpudesk.bench.plausible.MAX_NAME_CHARS` characters. A benchmark run is
read as :mod:`gpudesk.bench.plausible` reads a result file (the checks
``measurements import`` makes): its names one printable line, its figures
finite, positive, at most twice the catalog peak of the GPU it names (or under
an absolute ceiling), a fraction of peak at most 2 and equal to value ÷ peak.
A run that is unreadable or impossible is left out, and
:meth:`NodeView.bench_refusals` says why. A control character in a node's own
fields or its detection is kept, and escaped where it is shown
(:mod:`gpudesk.terminal_text`): refusing it would hide the node, or the survey.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    TypeAdapter,
    ValidationError,
)

from gpudesk.bench.peaks import peak_for
from gpudesk.bench.plausible import (
    ABSOLUTE_CEILING,
    FRACTION_TOLERANCE,
    MAX_DEVICE_INDEX,
    MAX_FRACTION_OF_PEAK,
    MAX_NAME_CHARS,
    PEAK_MULTIPLE,
    catalog_entry,
    figure_problem,
    text_problem,
)
from gpudesk.bench.results import UNIT_FOR_TEST, measurement_label
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.fleet.errors import FleetError
from gpudesk.storage import read_refusal, read_regular_file
from gpudesk.terminal_text import UNSAFE

#: Generous for 1,000 nodes with 8 benchmarked GPUs each (about 20 kB a run).
MAX_SURVEY_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 64
SURVEY_SCHEMA_VERSION = 1

#: What :func:`gpudesk.bench.plausible.text_problem` refuses in one-line text: a
#: quick look first (a survey holds many names); text_problem words the refusal.
_NOT_ONE_LINE = re.compile(f"{UNSAFE.pattern}|[\n\t\u2028\u2029]")


def _one_printable_line(text: str) -> str:
    if len(text) <= MAX_NAME_CHARS and _NOT_ONE_LINE.search(text) is None:
        return text
    problem = text_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return text


_Text = Annotated[str, Field(max_length=4000)]
#: Names, ids, versions and labels: as long as plausible.py lets them be.
_Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
#: The same in a benchmark run, which is a result file: also one printable line.
_RunName = Annotated[str, AfterValidator(_one_printable_line)]
_VIEW = ConfigDict(frozen=True, extra="ignore", strict=True, allow_inf_nan=False)


class SurveyFileError(FleetError):
    """A survey file that cannot be used, naming the file and what is wrong."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


class GpuView(BaseModel):
    """The fields of one detected GPU that the inventory and the checks read."""

    model_config = _VIEW

    kind: _Name = "gpu"
    index: int | None = None
    name: _Name | None = None
    uuid: _Name | None = None
    lost: bool = False
    #: False for a GPU found on the PCI bus whose driver does not drive it (sysfs).
    driver_loaded: bool | None = None
    pci_bus_id: _Name | None = None
    memory_total_mib: Annotated[int, Field(ge=0)] | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    clock_event_reasons: tuple[_Name, ...] | None = None
    ecc_enabled: bool | None = None
    #: Uncorrectable ECC error counts, where the node's GPUDesk reports them.
    ecc_uncorrected_volatile: Annotated[int, Field(ge=0)] | None = None
    ecc_uncorrected_aggregate: Annotated[int, Field(ge=0)] | None = None
    #: Memory repairs waiting for a reboot (retired pages before Ampere, remapped rows after).
    retired_pages_pending: bool | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    #: What the health rules also read (gpudesk.health.rules.GpuState).
    utilization_gpu_percent: int | None = None
    compute_mode: _Name | None = None
    power_limit_w: Annotated[float, Field(ge=0)] | None = None
    power_default_limit_w: Annotated[float, Field(ge=0)] | None = None
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    catalog_id: _Name | None = None


class CpuView(BaseModel):
    model_config = _VIEW

    model: _Name | None = None
    threads: int | None = None


#: The most GPUs one node's detection is read with: far above any machine built
#: (NVL72 racks are 72; a node is one host), low enough that a hostile or broken
#: node cannot make every check loop over millions of entries.
MAX_NODE_GPUS = 4096


class DetectionView(BaseModel):
    model_config = _VIEW

    status: _Name | None = None
    driver_version: _Name | None = None
    cuda_driver_version: _Name | None = None
    gpus: tuple[GpuView, ...] = Field(default=(), max_length=MAX_NODE_GPUS)
    cpu: CpuView = Field(default_factory=CpuView)
    ram_total_gib: Annotated[float, Field(ge=0)] | None = None


class BenchDeviceView(BaseModel):
    model_config = _VIEW

    kind: _RunName
    index: Annotated[int, Field(ge=0, le=MAX_DEVICE_INDEX)] = 0
    name: _RunName
    uuid: _RunName | None = None


class MeasurementView(BaseModel):
    model_config = _VIEW

    test: _RunName
    dtype: _RunName
    value: Annotated[float, Field(ge=0)] | None = None
    unit: _RunName
    peak: Annotated[float, Field(gt=0)] | None = None
    fraction_of_peak: Annotated[float, Field(ge=0)] | None = None
    host_memory: _RunName | None = None

    @property
    def key(self) -> str:
        """What makes two rows comparable across GPUs: "gemm bf16", "h2d pinned"."""
        if self.test == "gemm":
            return f"gemm {self.dtype}"
        if self.test == "copy":
            return "copy"
        return f"{self.test} {self.host_memory or ''}".strip()

    @property
    def label(self) -> str:
        return measurement_label(self.test, self.dtype, self.host_memory)


class BenchView(BaseModel):
    model_config = _VIEW

    backend: _RunName
    device: BenchDeviceView | None = None
    catalog_id: _RunName | None = None
    results: tuple[MeasurementView, ...] = Field(default=(), max_length=10_000)
    error: _Text | None = None


class ClusterInfo(BaseModel):
    model_config = _VIEW

    address: _Name
    #: What Ray connected to when ``address`` was "auto" (absent in older surveys).
    address_used: _Name | None = None
    #: "ray" (absent in older surveys) or "slurm".
    scheduler: _Name | None = None
    ray_version: _Name | None = None
    slurm_version: _Name | None = None
    partition: _Name | None = None
    nodes_alive: Annotated[int, Field(ge=0)]
    surveyed_at: dt.datetime

    @property
    def title(self) -> str:
        """ "Ray cluster 10.0.0.5:6379 (auto; Ray 2.9.0)",
        "Slurm cluster hpc (Slurm 22.05.8, partition gpu)"."""
        if self.scheduler == "slurm":
            where = f", partition {self.partition}" if self.partition else ""
            return f"Slurm cluster {self.address} (Slurm {self.slurm_version or 'n/a'}{where})"
        version = f"Ray {self.ray_version or 'n/a'}"
        if self.address_used and self.address_used != self.address:
            return f"Ray cluster {self.address_used} ({self.address}; {version})"
        return f"Ray cluster {self.address} ({version})"


class GresView(BaseModel):
    """One generic resource Slurm declares for a node: gpu:h100:8."""

    model_config = _VIEW

    name: _Name
    type: _Name | None = None
    count: Annotated[int, Field(ge=0)]

    def __str__(self) -> str:
        return ":".join(part for part in (self.name, self.type, str(self.count)) if part)


class SlurmNodeView(BaseModel):
    """What Slurm declares for a node (``scontrol show node``), kept beside what it detected."""

    model_config = _VIEW

    name: _Name
    state: _Name | None = None
    gres: tuple[GresView, ...] = Field(default=(), max_length=1000)
    features: tuple[_Name, ...] = Field(default=(), max_length=1000)
    real_memory_mb: Annotated[int, Field(ge=0)] | None = None
    partitions: tuple[_Name, ...] = Field(default=(), max_length=1000)
    reason: _Text | None = None

    @property
    def gpus(self) -> tuple[GresView, ...]:
        return tuple(item for item in self.gres if item.name == "gpu")


class NodeView(BaseModel):
    """One node's row: its detection and benchmarks as sent, or why there are none."""

    model_config = _VIEW

    node_id: _Name
    hostname: _Name | None = None
    ip: _Name | None = None
    detection: dict[str, JsonValue] | None = None
    bench: dict[str, JsonValue] | None = None
    #: Every benchmark run of the node (one per GPU); ``bench`` is the first.
    benches: tuple[dict[str, JsonValue], ...] = ()
    error: _Text | None = None
    duration_s: Annotated[float, Field(ge=0)] | None = None
    #: Slurm surveys: the node as Slurm declares it (its name is the node's label).
    slurm: SlurmNodeView | None = None

    @property
    def label(self) -> str:
        """The Slurm node name, else the hostname, else the IP, else the short node id."""
        if self.slurm is not None:
            return self.slurm.name
        return self.hostname or self.ip or self.node_id[:12]

    @cached_property
    def parsed_detection(self) -> tuple[DetectionView | None, str | None]:
        """The detection's view and why it was refused, read once (the checks ask often)."""
        if self.detection is None:
            return None, None
        try:
            view = DetectionView.model_validate_json(json.dumps(self.detection), strict=True)
        except ValidationError as exc:
            return None, _refusal_reason(self.detection, exc)
        return view, None

    def detection_view(self) -> DetectionView | None:
        """The parts of the detection the checks use, or None if it cannot be read
        (:meth:`detection_refusal` says why)."""
        return self.parsed_detection[0]

    def detection_refusal(self) -> str | None:
        """Why the node's detection was refused, or None (there is none, or it was read).

        A refused detection is not "no GPUs": the node must not look like a healthy
        CPU node.
        """
        return self.parsed_detection[1]

    @cached_property
    def read_benches(self) -> tuple[tuple[BenchView, ...], tuple[str, ...]]:
        """The benchmark runs that can be read and are possible, and why each other
        run was left out ("benchmark run 2 left out: results.0.value: ..."), read once."""
        runs = list(self.benches) or ([self.bench] if self.bench is not None else [])
        try:  # all at once (a node sends one run per GPU); one by one if any is unreadable
            parsed: list[BenchView | str] = list(
                _BENCH_RUNS.validate_json(json.dumps(runs), strict=True)
            )
        except ValidationError:
            parsed = []
            for run in runs:
                try:
                    parsed.append(BenchView.model_validate_json(json.dumps(run), strict=True))
                except ValidationError as exc:
                    parsed.append(f"unreadable: {_first_error(exc, 'run')}")
        views: list[BenchView] = []
        refusals: list[str] = []
        for number, item in enumerate(parsed, start=1):
            problem = item if isinstance(item, str) else bench_problem(item)
            if problem is None and not isinstance(item, str):
                views.append(item)
            else:
                refusals.append(f"benchmark run {number}{_run_device(item)} left out: {problem}")
        return tuple(views), tuple(refusals)

    @property
    def parsed_benches(self) -> tuple[BenchView, ...]:
        """Every benchmark run that can be read and is possible, read once."""
        return self.read_benches[0]

    def bench_views(self) -> list[BenchView]:
        """Every benchmark run that can be read and is possible (others are left out:
        :meth:`bench_refusals` says why)."""
        return list(self.read_benches[0])

    def bench_refusals(self) -> tuple[str, ...]:
        """Why each benchmark run not in :meth:`bench_views` was left out, in run order."""
        return self.read_benches[1]


_BENCH_RUNS: TypeAdapter[tuple[BenchView, ...]] = TypeAdapter(tuple[BenchView, ...])


#: The ceilings by unit, for a unit read as text.
_ABSOLUTE_CEILING: dict[str, float] = {unit: value for unit, value in ABSOLUTE_CEILING.items()}


def _first_error(exc: ValidationError, whole: str) -> str:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or whole
    return f"{field}: {first['msg']}"


def _run_device(item: BenchView | str) -> str:
    if isinstance(item, str) or item.device is None:
        return ""
    return f" ({item.device.kind} {item.device.index}, {item.device.name})"


def bench_problem(run: BenchView) -> str | None:
    """Why a run's figures are impossible ("results.0.value: ..."), or None.

    The checks of :func:`gpudesk.bench.plausible.check_result` on the fields the
    view reads: each figure finite, positive and at most
    :data:`~gpudesk.bench.plausible.PEAK_MULTIPLE` times the catalog peak of the
    GPU the run names (an absolute ceiling where the catalog has none), the
    file's peak likewise, ``fraction_of_peak`` at most
    :data:`~gpudesk.bench.plausible.MAX_FRACTION_OF_PEAK` and equal to value ÷ peak.
    """
    entry = catalog_entry(run.catalog_id)
    for index, row in enumerate(run.results):
        problem = measurement_problem(row, entry)
        if problem is not None:
            return f"results.{index}.{problem}"
    return None


def measurement_problem(row: MeasurementView, entry: CatalogEntry | None) -> str | None:
    """Why one row's figures are impossible ("value: ..."), or None."""
    expected_unit = UNIT_FOR_TEST.get(row.test)
    if expected_unit is not None and row.unit != expected_unit:
        return f"unit: a {row.test} result is in {expected_unit}, not {row.unit}"
    if row.unit not in _ABSOLUTE_CEILING:
        if row.value is None and row.peak is None and row.fraction_of_peak is None:
            return None  # nothing shown, nothing to bound
        return f"unit: {row.unit} is not a unit GPUDesk measures in"
    absolute = _ABSOLUTE_CEILING[row.unit]
    catalog_peak = peak_for(entry, row.test, row.dtype)
    ceiling = absolute if catalog_peak is None else PEAK_MULTIPLE * catalog_peak
    value = row.value
    if value is not None and not 0 < value <= ceiling:  # worded only when refused
        if catalog_peak is not None and entry is not None:
            what = (
                f"{PEAK_MULTIPLE:g}× the catalog peak of the {entry.name} "
                f"({catalog_peak:,.6g} {row.unit} for {row.label})"
            )
        else:
            what = f"any device reaches in {row.unit} (no catalog peak for it)"
        return f"value: {figure_problem(value, ceiling, what)}"
    if row.peak is not None and not 0 < row.peak <= ceiling:
        return f"peak: {figure_problem(row.peak, ceiling, f'a {row.unit} peak can be')}"
    fraction = row.fraction_of_peak
    if fraction is not None and not 0 < fraction <= MAX_FRACTION_OF_PEAK:
        problem = figure_problem(fraction, MAX_FRACTION_OF_PEAK, "any fraction of peak can be")
        return f"fraction_of_peak: {problem}"
    if row.value is not None and row.peak is not None:
        expected = row.value / row.peak
        if expected > MAX_FRACTION_OF_PEAK:
            return (
                f"value: {row.value:.6g} is {expected:.3g}× the file's own peak "
                f"({row.peak:.6g}); more than {MAX_FRACTION_OF_PEAK:g}× is not a possible "
                "measurement"
            )
        if fraction is not None and abs(fraction - expected) > max(
            0.001, FRACTION_TOLERANCE * expected
        ):
            return (
                f"fraction_of_peak: {fraction:.6g} is not value ÷ peak ({row.value:.6g} ÷ "
                f"{row.peak:.6g} = {expected:.6g})"
            )
    return None


class SurveyView(BaseModel):
    """A whole survey as read back: cluster, nodes (the summary is recomputed)."""

    model_config = _VIEW

    survey_schema_version: Annotated[int, Field(ge=1)] = SURVEY_SCHEMA_VERSION
    cluster: ClusterInfo
    nodes: tuple[NodeView, ...] = Field(max_length=100_000)


def _refusal_reason(detection: dict[str, JsonValue], exc: ValidationError) -> str:
    first = exc.errors()[0]
    gpus = detection.get("gpus")
    if first["type"] == "too_long" and first["loc"] == ("gpus",) and isinstance(gpus, list):
        return (
            f"it reports {len(gpus)} GPUs; a node's detection is read with at most {MAX_NODE_GPUS}"
        )
    field = ".".join(str(part) for part in first["loc"]) or "detection"
    return f"{field}: {first['msg']}"


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _check_tree(value: Any, depth: int = 0, where: str = "$") -> None:
    """Depth and text checks that json.loads does not make."""
    if depth > MAX_DEPTH:
        raise ValueError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"{where}: text that is not valid Unicode") from exc
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_tree(key, depth + 1, where)
            _check_tree(item, depth + 1, f"{where}.{key}")
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _check_tree(item, depth + 1, f"{where}[{position}]")


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _plainly_fine(text: str) -> bool:
    """A fast, conservative look at the raw text: encodable, no surrogate escapes, shallow.

    A 1,000-node survey holds millions of values; walking them in Python with
    a path for each takes seconds. When this says False, :func:`_check_tree`
    looks closer and names what is wrong (or finds nothing: a valid surrogate
    pair, or a document near the depth limit).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    if _SURROGATE_ESCAPE.search(text):
        return False
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest < MAX_DEPTH - 1


def parse_survey(text: str | bytes, source: str) -> tuple[SurveyView, dict[str, Any]]:
    """Validate a survey document; return its view and the plain data.

    Raises:
        SurveyFileError: not JSON, too deep, NaN/Infinity, or a field of the
            wrong type (named).
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SurveyFileError(source, f"not UTF-8 text ({exc.reason})") from exc
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise SurveyFileError(source, "nested too deeply") from exc
    except ValueError as exc:
        raise SurveyFileError(source, f"not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SurveyFileError(source, "not a survey: the document is not a JSON object")
    try:
        if not _plainly_fine(text):
            _check_tree(data)
    except ValueError as exc:
        raise SurveyFileError(source, str(exc)) from exc
    version = data.get("survey_schema_version", SURVEY_SCHEMA_VERSION)
    if type(version) is int and version > SURVEY_SCHEMA_VERSION:
        raise SurveyFileError(
            source,
            f"survey_schema_version {version} is newer than this GPUDesk reads "
            f"({SURVEY_SCHEMA_VERSION}): update GPUDesk",
        )
    try:
        # The text json.loads accepted and the checks passed: validated as it is.
        view = SurveyView.model_validate_json(text, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "document"
        raise SurveyFileError(source, f"{field}: {first['msg']}") from exc
    return view, data


def read_survey(path: Path) -> tuple[SurveyView, dict[str, Any]]:
    """Read and validate the survey file at ``path`` (regular files only, size-capped).

    Raises:
        SurveyFileError: missing, not a regular file, too large, unreadable or invalid.
    """
    source = str(path)
    try:
        raw = read_regular_file(path, MAX_SURVEY_BYTES)
    except OSError as exc:
        raise SurveyFileError(source, read_refusal(exc)) from exc
    return parse_survey(raw, source)
