"""What a comparison report says, as plain data (no Qt).

:func:`build_report` turns 2-6 catalog entries (and optionally this machine's
detection and benchmark results) into a :class:`ReportContent`: the summary
with "best for" lines computed from the figures, the side-by-side spec table
(from :func:`gpudesk.compare.table.build_comparison`), what the figures mean,
prices and sources, and the "This machine" section. The PDF renderer only lays
this out; tests check the words and numbers here without a PDF.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpudesk import __version__
from gpudesk.bench.results import BenchResult, Measurement
from gpudesk.bench.summary import run_summary
from gpudesk.bench.text import format_fraction_of_peak
from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.prices import entry_price_label, is_stale, stale_note
from gpudesk.catalog.rate_book import RATE_STALE_AFTER_DAYS, rate_summary
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.limits import check_comparison_size
from gpudesk.compare.table import Comparison, Row, RowKind, build_comparison
from gpudesk.fleet.document import SurveyView
from gpudesk.hardware.models import DetectionResult, NvmlStatus, title_for
from gpudesk.report.fleet_section import FleetSection, build_fleet_section
from gpudesk.report.speed_section import SpeedSection, build_speed_section
from gpudesk.speed.planner import SpeedWorkload


# --------------------------------------------------------------------------
# data shapes
# --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BestFor:
    """One "best for" line: which compared GPU leads on one figure.

    Attributes:
        title: what it is best for ("Most memory").
        metric_key: the :data:`METRICS` key the line is computed from.
        winner_ids: the leading GPU(s); several on a tie.
        winner_names: their names, same order.
        value_text: the leading value with its unit ("94 GiB").
        runner_up_name: the next-best GPU, or "" when there is none.
        runner_up_value: its value with the unit, or "".
        caveat: why the line needs care (prices of different kinds), or "".
    """

    title: str
    metric_key: str
    winner_ids: tuple[str, ...]
    winner_names: tuple[str, ...]
    value_text: str
    runner_up_name: str = ""
    runner_up_value: str = ""
    caveat: str = ""

    @property
    def text(self) -> str:
        names = " and ".join(self.winner_names)
        line = f"{self.title}: {names} ({self.value_text})"
        if self.runner_up_name:
            line += f"; next {self.runner_up_name} ({self.runner_up_value})"
        if self.caveat:
            line += f". {self.caveat}"
        return line


@dataclass(frozen=True, slots=True)
class GpuSummary:
    """One compared GPU in the summary list."""

    id: str
    name: str
    #: Position in the selection: the index of its color in every chart.
    index: int
    description: str
    best_for: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SpecCell:
    text: str
    best: bool = False


@dataclass(frozen=True, slots=True)
class SpecRow:
    label: str
    cells: tuple[SpecCell, ...]
    #: A figure (right-aligned) rather than text.
    numeric: bool = False


@dataclass(frozen=True, slots=True)
class SpecGroup:
    title: str
    rows: tuple[SpecRow, ...]


@dataclass(frozen=True, slots=True)
class NoteSection:
    """A titled block of notes; each item is one paragraph or bullet."""

    title: str
    items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BenchRow:
    label: str
    measured: str
    peak: str
    percent: str


@dataclass(frozen=True, slots=True)
class BenchTable:
    """One benchmark run as report rows."""

    title: str
    details: str
    rows: tuple[BenchRow, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LocalData:
    """What is known about this machine, gathered before building the report.

    ``problems`` says why a part is missing (no history yet, NVML failed to
    load), in words for the reader.
    """

    detection: DetectionResult | None = None
    gpu_benchmark: BenchResult | None = None
    cpu_benchmark: BenchResult | None = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LocalSection:
    """The "This machine" section; ``available`` False means only ``message`` is shown."""

    available: bool
    message: str
    detection: tuple[str, ...] = ()
    gpus: tuple[tuple[str, str, str], ...] = ()
    benchmarks: tuple[BenchTable, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReportContent:
    """Everything the report shows, in reading order."""

    title: str
    subtitle: str
    created_at: dt.datetime
    gpudesk_version: str
    catalog_date: dt.date | None
    entries: tuple[CatalogEntry, ...]
    gpus: tuple[GpuSummary, ...]
    best_for: tuple[BestFor, ...]
    spec_columns: tuple[str, ...]
    spec_groups: tuple[SpecGroup, ...]
    omitted_rows: tuple[str, ...]
    notes: tuple[NoteSection, ...]
    local: LocalSection | None = None
    #: A saved fleet survey, summarised ("Fleet" section).
    fleet: FleetSection | None = None
    #: The Plan tab's "How fast?" workload on the compared GPUs.
    speed: SpeedSection | None = None
    comparison: Comparison | None = field(default=None, compare=False)
    #: Compared GPUs the price/performance scatter cannot place (no price or
    #: no dense FP16 tensor figure).
    scatter_missing: tuple[str, ...] = ()

    @property
    def header_facts(self) -> tuple[str, ...]:
        """Created date, GPUDesk version, catalog date: the cover lines."""
        catalog = self.catalog_date.isoformat() if self.catalog_date else "unknown"
        return (
            f"Created {self.created_at.strftime('%Y-%m-%d %H:%M')}",
            f"GPUDesk {self.gpudesk_version}",
            f"Catalog of {catalog}",
        )


# --------------------------------------------------------------------------
# "best for"
# --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Criterion:
    title: str
    short: str
    metric_key: str
    uses_price: bool = False


#: The "best for" lines, in the order shown; direction comes from the metric.
BEST_FOR_CRITERIA: tuple[_Criterion, ...] = (
    _Criterion("Most memory", "most memory", "memory_gb"),
    _Criterion("Highest memory bandwidth", "bandwidth", "bandwidth_gbs"),
    _Criterion("Fastest dense FP16 tensor", "FP16 tensor throughput", "fp16_tensor_tflops"),
    _Criterion(
        "Best dense FP16 tensor per 1k USD",
        "FP16 tensor per dollar",
        "fp16_tensor_tflops_per_kusd",
        uses_price=True,
    ),
    _Criterion("Most memory per 1k USD", "memory per dollar", "memory_gb_per_kusd", True),
    _Criterion("Best FP64 (double precision)", "FP64", "fp64_tflops"),
    _Criterion(
        "Best dense FP16 tensor per watt", "FP16 tensor per watt", "fp16_tensor_tflops_per_w"
    ),
    _Criterion("Lowest price", "lowest price", "price_usd", uses_price=True),
)


def _metric_text(key: str, value: float) -> str:
    metric = METRICS[key]
    text = metric.format(value)
    return f"{text} {metric.unit}".strip()


def best_for_lines(entries: Sequence[CatalogEntry]) -> tuple[BestFor, ...]:
    """The "best for" lines among ``entries``, computed from their figures.

    A line appears only when at least two GPUs have the figure (a lead needs
    a comparison); every GPU tied at the best value is named.
    """
    lines: list[BestFor] = []
    for criterion in BEST_FOR_CRITERIA:
        metric = METRICS[criterion.metric_key]
        assert metric.higher_is_better is not None
        present = [
            (value, entry) for entry in entries if (value := metric.value(entry)) is not None
        ]
        if len(present) < 2:
            continue
        present.sort(key=lambda item: item[0], reverse=metric.higher_is_better)
        best_value = present[0][0]
        winners = [
            entry for value, entry in present if math.isclose(value, best_value, rel_tol=1e-9)
        ]
        rest = [(value, entry) for value, entry in present if entry not in winners]
        runner_up_name = runner_up_value = ""
        if rest:
            value, entry = rest[0]
            runner_up_name = entry.name
            runner_up_value = _metric_text(criterion.metric_key, value)
        caveat = ""
        if criterion.uses_price:
            kinds = {entry.price_kind for _, entry in present}
            if len(kinds) > 1:
                caveat = (
                    "Prices of different kinds (list, street, used, whole computer) compared; "
                    "see Notes, Prices"
                )
        unranked = [entry.name for entry in entries if metric.value(entry) is None]
        if unranked:
            # a gap is not a zero: an entry without the figure is left out, and named
            gap = f"not ranked, no figure in the catalog: {', '.join(unranked)}"
            caveat = f"{caveat}; {gap}" if caveat else gap[0].upper() + gap[1:]
        lines.append(
            BestFor(
                title=criterion.title,
                metric_key=criterion.metric_key,
                winner_ids=tuple(entry.id for entry in winners),
                winner_names=tuple(entry.name for entry in winners),
                value_text=_metric_text(criterion.metric_key, best_value),
                runner_up_name=runner_up_name,
                runner_up_value=runner_up_value,
                caveat=caveat,
            )
        )
    return tuple(lines)


def _describe(entry: CatalogEntry) -> str:
    parts = [
        ", ".join(
            part
            for part in (
                " ".join(part for part in (entry.vendor, entry.architecture) if part),
                str(entry.release_year) if entry.release_year is not None else None,
            )
            if part
        ),
        *([entry.segment.value] if entry.segment is not None else []),
        _memory_words(entry),
    ]
    if entry.tdp_w is not None:
        parts.append(f"{entry.tdp_w} W")
    if entry.price_usd is not None:
        parts.append(f"{entry.price_usd:,.0f} USD")
    return " · ".join(parts)


def _memory_words(entry: CatalogEntry) -> str:
    """ "128 GiB GDDR7" (the vendor's "128 GB", in the unit the tables use); an announced
    part whose vendor gave no size says so (never 0 GiB)."""
    if entry.memory_gb is None:
        if entry.memory_type:
            return f"{entry.memory_type}, size not published"
        return "memory size not published"
    return f"{entry.memory_gb:g} GiB {entry.memory_type or ''}".rstrip()


def _gpu_summaries(
    entries: Sequence[CatalogEntry], lines: Sequence[BestFor]
) -> tuple[GpuSummary, ...]:
    shorts = {criterion.metric_key: criterion.short for criterion in BEST_FOR_CRITERIA}
    summaries = []
    for index, entry in enumerate(entries):
        best = tuple(shorts[line.metric_key] for line in lines if entry.id in line.winner_ids)
        summaries.append(GpuSummary(entry.id, entry.name, index, _describe(entry), best))
    return tuple(summaries)


# --------------------------------------------------------------------------
# spec table
# --------------------------------------------------------------------------
def spec_groups(comparison: Comparison) -> tuple[tuple[SpecGroup, ...], tuple[str, ...]]:
    """The table's groups and rows as text; rows no GPU has are left out (and listed)."""
    gpu_indices = [index for index, column in enumerate(comparison.columns) if not column.measured]
    groups: list[SpecGroup] = []
    omitted: list[str] = []
    for group, rows in comparison.groups():
        out_rows: list[SpecRow] = []
        for row in rows:
            if all(row.values[index] is None for index in gpu_indices):
                omitted.append(row.header)
                continue
            cells = tuple(
                SpecCell(_cell_text(comparison, row, index), comparison.is_best(row, index))
                for index in gpu_indices
            )
            out_rows.append(SpecRow(row.header, cells, numeric=row.kind is RowKind.METRIC))
        if out_rows:
            groups.append(SpecGroup(group.value, tuple(out_rows)))
    return tuple(groups), tuple(omitted)


def _cell_text(comparison: Comparison, row: Row, index: int) -> str:
    # The comparison already words every row (price kinds as labels).
    return comparison.value_text(row, index)


# --------------------------------------------------------------------------
# notes
# --------------------------------------------------------------------------
FIGURE_NOTES: tuple[str, ...] = (
    "All throughput figures are theoretical peaks from vendor datasheets, at the boost "
    "clock. Real work reaches less: large matrix multiplications typically reach 75-90 % "
    "of the dense tensor figure and memory streaming 80-92 % of the bandwidth figure.",
    "Tensor figures (TF32, BF16, FP16, FP8, INT8 tensor) are dense: they assume no "
    'sparsity. Datasheets often quote a larger "with sparsity" figure, which applies only '
    "to models pruned to 2:4 structured sparsity; it is never used for ranking here.",
    "Shader figures (FP32, FP16 non-tensor, FP64) are the rates of the ordinary CUDA cores, "
    "without tensor cores. FP64 matters for scientific simulation; most consumer and many "
    "workstation GPUs run FP64 at 1/32 or 1/64 of FP32.",
    "Per-dollar figures divide by the catalog price below; prices of different kinds "
    "(launch list price, street, used) are not directly comparable. Per-watt figures divide "
    "by the board power (TDP).",
    "In the table the best value of each row is printed bold on a green background; "
    '"n/a" means the catalog has no figure for that GPU.',
)


def _price_note(entry: CatalogEntry, today: dt.date) -> str:
    """One GPU's price line: kind, date, range note, staleness and the default cloud rate."""
    if entry.price_usd is None:
        text = f"{entry.name}: no price in the catalog"
    else:
        kind = entry_price_label(entry)
        seen = entry.price_date.isoformat() if entry.price_date else "date unknown"
        text = f"{entry.name}: {entry.price_usd:,.0f} USD, {kind}, seen {seen}"
        if is_stale(entry.price_date, today):
            text += f" ({stale_note('price', entry.price_date)})"
        if entry.price_note:
            text += f". {entry.price_note.rstrip('.')}"
    # the same rate book as the table's "Cloud price" row (metrics.cloud_hourly_usd)
    summary = rate_summary(entry)
    rate = summary.lowest
    if rate is not None:
        cloud = f"; cloud rental {rate.usd_per_gpu_hour:,.2f} USD/h, the lowest on-demand rate"
        details = [rate.provider, rate.region or None, rate.date.isoformat() if rate.date else None]
        cloud += f" ({', '.join(part for part in details if part)})"
        if rate.is_stale(today):  # rates go stale after 90 days, as Compare marks them
            cloud += f", {stale_note('rate', rate.date)} (over {RATE_STALE_AFTER_DAYS} days old)"
        median = summary.median_usd
        if len(summary.on_demand) > 1 and median is not None:
            cloud += f"; median {median:,.2f} USD/h over {len(summary.on_demand)} providers"
        others = len(summary.on_demand) + len(summary.spot) + len(summary.marketplace) - 1
        if others:
            cloud += (
                f"; {others} more rate{'s' if others > 1 else ''} held (gpudesk prices {entry.id})"
            )
        text += cloud
    else:
        cheapest = summary.lowest_any
        if cheapest is not None:
            text += (
                f"; no on-demand cloud rate, {cheapest.kind.replace('_', '-')} from "
                f"{cheapest.usd_per_gpu_hour:,.2f} USD/h ({cheapest.provider})"
            )
    return text + "."


def _sparsity_note(entry: CatalogEntry) -> str | None:
    sparse = entry.fp16_tensor_sparse_tflops
    if sparse is None or entry.fp16_tensor_tflops is None:
        return None
    return (
        f"{entry.name}: FP16 tensor {entry.fp16_tensor_tflops:,.1f} TFLOPS dense; "
        f"{sparse:,.1f} TFLOPS with 2:4 sparsity (×{entry.sparsity_speedup:g})."
    )


def build_notes(
    entries: Sequence[CatalogEntry], omitted: Sequence[str], today: dt.date | None = None
) -> tuple[NoteSection, ...]:
    """What the figures mean, the prices and their dates, and every GPU's sources.

    ``today`` is the date prices are judged stale against (the report's date).
    """
    today = today or dt.date.today()
    figures = list(FIGURE_NOTES)
    if omitted:
        figures.append(
            "Rows left out because none of these GPUs has the figure: " + ", ".join(omitted) + "."
        )
    sections = [NoteSection("What the figures mean", tuple(figures))]
    sparse = [note for entry in entries if (note := _sparsity_note(entry)) is not None]
    if sparse:
        sections.append(NoteSection("Dense and with-sparsity tensor figures", tuple(sparse)))
    sections.append(NoteSection("Prices", tuple(_price_note(entry, today) for entry in entries)))
    for entry in entries:
        items = list(entry.sources)
        if entry.notes:
            items.append(f"Catalog note: {entry.notes}")
        sections.append(NoteSection(f"Sources: {entry.name}", tuple(items)))
    return tuple(sections)


# --------------------------------------------------------------------------
# this machine
# --------------------------------------------------------------------------
def _format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.2f} {unit}" if value < 100 else f"{value:,.0f} {unit}"


def _bench_rows(result: BenchResult, entry: CatalogEntry | None) -> tuple[BenchRow, ...]:
    from gpudesk.bench.peaks import with_peak

    rows = []
    for measurement in result.results:
        row: Measurement = measurement
        if row.peak is None and entry is not None:
            row = with_peak(row, entry)
        if row.value is None:
            rows.append(BenchRow(row.label, f"failed: {row.error}", "", ""))
            continue
        percent = format_fraction_of_peak(row.fraction_of_peak) or "n/a"
        peak = _format_value(row.peak, row.unit) if row.peak is not None else "n/a"
        rows.append(BenchRow(row.label, _format_value(row.value, row.unit), peak, percent))
    return tuple(rows)


def _bench_table(title: str, result: BenchResult, catalog: Catalog) -> BenchTable:
    entry = catalog.by_id(result.catalog_id) if result.catalog_id else None
    facts = {line.key: line.text for line in run_summary(result, entry.name if entry else None)}
    details = " · ".join(facts[key] for key in ("device", "backend", "catalog"))
    notes = list(result.notes)
    if result.error:
        notes.insert(0, f"The run failed: {result.error}")
    return BenchTable(title, details, _bench_rows(result, entry), tuple(notes))


def _detection_lines(detection: DetectionResult) -> tuple[str, ...]:
    when = detection.timestamp.astimezone().strftime("%Y-%m-%d %H:%M")
    lines = [f"Detected {when}."]
    cpu = detection.cpu
    cpu_parts = [cpu.model or "unknown CPU"]
    if cpu.cores is not None or cpu.threads is not None:
        cpu_parts.append(f"{cpu.cores or '?'} cores / {cpu.threads or '?'} threads")
    if detection.ram_total_gib is not None:
        cpu_parts.append(f"{detection.ram_total_gib:,.0f} GiB RAM")
    lines.append("CPU: " + ", ".join(cpu_parts) + ".")
    if detection.status is NvmlStatus.OK:
        driver = detection.driver_version or "unknown"
        cuda = detection.cuda_driver_version or "unknown"
        lines.append(f"NVIDIA driver {driver}, CUDA {cuda}.")
    else:
        # The title names the cause on its own ("NVIDIA driver not installed (NVML
        # library not found)"); wrapping it in another sentence nested parentheses.
        lines.append(f"{title_for(detection.status)}. {detection.hint}")
    return tuple(lines)


def _detected_gpus(
    detection: DetectionResult, catalog: Catalog
) -> tuple[tuple[str, str, str], ...]:
    from gpudesk.hardware.match import match_devices

    gpus = detection.usable_gpus
    matches = match_devices(gpus, catalog.entries)
    rows = []
    for gpu, match in zip(gpus, matches, strict=True):
        memory = f"{gpu.memory_total_gib:,.1f} GiB" if gpu.memory_total_gib is not None else "n/a"
        rows.append((gpu.label, memory, match.description))
    return tuple(rows)


def build_local_section(local: LocalData | None, catalog: Catalog) -> LocalSection:
    """The "This machine" section; says so plainly when nothing is known."""
    if local is None or (
        local.detection is None and local.gpu_benchmark is None and local.cpu_benchmark is None
    ):
        reasons = " ".join(local.problems) if local is not None else ""
        message = (
            "Nothing is known about this machine yet: no detection result and no benchmark "
            "could be read. Run “gpudesk detect” and “gpudesk bench” (or use the This "
            "machine tab), then export again."
        )
        if reasons:
            message += f" ({reasons})"
        return LocalSection(available=False, message=message)
    detection_lines: tuple[str, ...] = ()
    gpus: tuple[tuple[str, str, str], ...] = ()
    if local.detection is not None:
        detection_lines = _detection_lines(local.detection)
        gpus = _detected_gpus(local.detection, catalog)
    benchmarks: list[BenchTable] = []
    notes = list(local.problems)
    if local.gpu_benchmark is not None:
        benchmarks.append(_bench_table("Latest GPU benchmark", local.gpu_benchmark, catalog))
    else:
        notes.append("No GPU benchmark has been run on this machine.")
    if local.cpu_benchmark is not None:
        benchmarks.append(_bench_table("CPU baseline", local.cpu_benchmark, catalog))
    else:
        notes.append("No CPU benchmark has been run on this machine.")
    message = "Detected and measured on the machine that made this report."
    if local.gpu_benchmark is not None:
        message += (
            " Percentages compare a measured figure with the catalog's peak for the matched "
            "GPU; 75-90 % is typical for large matrix multiplications and memory copies."
        )
    return LocalSection(True, message, detection_lines, gpus, tuple(benchmarks), tuple(notes))


def collect_local_data() -> LocalData:
    """Detect this machine now and read the latest benchmarks from the history.

    Never raises for a missing driver or history: what cannot be read
    becomes a line in ``problems``.
    """
    problems: list[str] = []
    detection: DetectionResult | None = None
    try:
        from gpudesk.hardware.detect import detect

        detection = detect()
    except Exception as exc:  # a broken driver must not stop the report
        problems.append(f"Detection failed: {exc}.")
    gpu_result: BenchResult | None = None
    cpu_result: BenchResult | None = None
    try:
        gpu_result, cpu_result, history_problems = _latest_benchmarks()
        problems.extend(history_problems)
    except Exception as exc:  # an unreadable history must not stop the report
        problems.append(f"The benchmark history could not be read: {exc}.")
    return LocalData(detection, gpu_result, cpu_result, tuple(problems))


def _latest_benchmarks() -> tuple[BenchResult | None, BenchResult | None, list[str]]:
    """The newest GPU and CPU runs made here (imported and failed runs skipped)."""
    from gpudesk.bench.history import list_runs

    items, unreadable = list_runs()
    gpu: BenchResult | None = None
    cpu: BenchResult | None = None
    for item in items:  # newest first
        result = item.result
        if item.imported or result.error is not None:
            continue
        if result.device is not None and result.device.kind == "cpu":
            cpu = cpu or result
        else:
            gpu = gpu or result
    problems = [f"Skipped an unreadable history file: {problem}." for problem in unreadable]
    return gpu, cpu, problems


# --------------------------------------------------------------------------
# the whole report
# --------------------------------------------------------------------------
def build_report(
    entries: Sequence[CatalogEntry],
    catalog: Catalog,
    *,
    local: LocalData | None = None,
    include_local: bool = False,
    created_at: dt.datetime | None = None,
    fleet: SurveyView | None = None,
    speed: SpeedWorkload | None = None,
) -> ReportContent:
    """The report's content for 2-6 GPUs.

    Args:
        entries: the compared GPUs, in the order they are shown.
        catalog: the loaded catalog (its date, and peaks for local results).
        local: this machine's data; only used with ``include_local``.
        include_local: add the "This machine" section (it says so plainly
            when ``local`` holds nothing).
        created_at: the creation time shown (now when None).
        fleet: a fleet survey to summarise in its own section.
        speed: a "How fast?" workload to estimate on the compared GPUs.

    Raises:
        ComparisonSizeError: fewer than 2 or more than 6 GPUs.
    """
    entries = tuple(entries)
    check_comparison_size(len(entries))
    comparison = build_comparison(entries)
    lines = best_for_lines(entries)
    groups, omitted = spec_groups(comparison)
    created = created_at or dt.datetime.now().astimezone()
    names = [entry.name for entry in entries]
    return ReportContent(
        title="GPU comparison report",
        subtitle=", ".join(names[:-1]) + " and " + names[-1],
        created_at=created,
        gpudesk_version=__version__,
        catalog_date=catalog.catalog_date,
        entries=entries,
        gpus=_gpu_summaries(entries, lines),
        best_for=lines,
        spec_columns=tuple(names),
        spec_groups=groups,
        omitted_rows=omitted,
        notes=build_notes(entries, omitted, created.date()),
        local=build_local_section(local, catalog) if include_local else None,
        fleet=build_fleet_section(fleet) if fleet is not None else None,
        speed=build_speed_section(speed, entries) if speed is not None else None,
        comparison=comparison,
        scatter_missing=tuple(
            entry.name
            for entry in entries
            if entry.price_usd is None or entry.fp16_tensor_tflops is None
        ),
    )
