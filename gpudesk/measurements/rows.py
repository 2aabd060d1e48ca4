"""The user's measurements beside an estimate: which stored rows match it, and their words.

The app's "How fast?" page, the Compare table's "measured" row and the PDF's speed
section all show the same thing: for one GPU (or this machine's CPU), engine and mode,
the tokens/s the user measured or imported (:mod:`gpudesk.measurements.store`),
when, from which file or engine, and how far from GPUDesk's estimate. This module is
that content, in plain Python: no Qt.

A row *matches* an estimate when its GPU, engine and mode are the estimate's. It is
*of this model* when its model names the estimate's model too (a preset id, or a file
or llama-bench model name that contains the preset's id or name, letters and digits
only: ``Meta-Llama-3.1-8B-Instruct-Q4_K_M`` is ``llama-3.1-8b``), on as many GPUs,
and with the same weight format where both say one; only then is "measured / this
estimate" a fair ratio. Other rows of the same GPU, engine and mode are still shown,
with the ratio to the estimate GPUDesk made for them when they were stored.

Also here, for the app's importer: :func:`import_files` reads files through
:func:`~gpudesk.measurements.file_import.parse_file`, adds GPUDesk's estimate
for each row it can (:func:`estimate_for_measurement`) and stores them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudesk.measurements.calibration import with_estimate
from gpudesk.measurements.file_import import ImportFileError, ImportHints, parse_file
from gpudesk.measurements.store import Measurement, MeasurementStore, StoredMeasurement
from gpudesk.progress import Progress
from gpudesk.speed.text import figure_text
from gpudesk.workload.errors import PlanningInputError

#: the source format's words, short: what a person calls the tool that measured
_TOOL = {
    "llama-bench json": "llama-bench",
    "llama-bench jsonl": "llama-bench",
    "llama-bench csv": "llama-bench",
    "llama-bench markdown": "llama-bench",
    "vllm bench serve": "vllm bench serve",
    "vllm bench throughput": "vllm bench throughput",
    "gpudesk verify": "GPUDesk verify",
    "gpudesk export": "GPUDesk export",
}


def _letters(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def model_matches(row_model: str, model_id: str | None, model_name: str | None) -> bool:
    """Whether a stored row's model names the estimate's model (see the module)."""
    found = _letters(row_model)
    if not found:
        return False
    for wanted in (model_id, model_name):
        if not wanted:
            continue
        key = _letters(wanted)
        if not key:
            continue
        if found == key:
            return True
        # "llama318b" inside "metallama318binstructq4km", not "llama318" in "llama3180b"
        at = found.find(key)
        while at >= 0:
            after = found[at + len(key) : at + len(key) + 1]
            if not after.isdigit():
                return True
            at = found.find(key, at + 1)
    return False


@dataclass(frozen=True)
class MeasuredRow:
    """One stored measurement shown beside an estimate."""

    stored: StoredMeasurement
    #: of the estimate's model, GPU count and weight format (see the module)
    same_workload: bool
    #: measured / the estimate it is shown beside, when ``same_workload``
    ratio: float | None

    @property
    def measurement(self) -> Measurement:
        return self.stored.measurement

    @property
    def date(self) -> str:
        """The day it was measured (or stored, when the file gave no date): 2026-12-02."""
        return self.measurement.day or self.stored.stored_at[:10]

    @property
    def tool(self) -> str:
        """What measured it: "llama-bench", "vllm bench serve", "GPUDesk verify"."""
        fmt = self.measurement.source_format
        return _TOOL.get(fmt, fmt)

    def source_text(self) -> str:
        """The tool and the file it came from (or the engine version for a verify run)."""
        m = self.measurement
        if m.source_format == "gpudesk verify":
            return f"{self.tool}, {m.engine_version}" if m.engine_version else self.tool
        name = Path(m.source).name if m.source else ""
        return f"{self.tool}, {name}" if name and name != m.source_format else self.tool

    def workload_text(self) -> str:
        """Model, weights, GPUs and lengths, as measured."""
        m = self.measurement
        parts = [m.model]
        if m.quant:
            parts.append(m.quant)
        if m.count > 1:
            parts.append(f"on {m.count} GPUs")
        lengths = []
        if m.seq_in:
            lengths.append(f"prompt {m.seq_in}")
        if m.seq_out:
            lengths.append(f"output {m.seq_out}")
        if m.concurrency:
            lengths.append(f"{m.concurrency} at once")
        if lengths:
            parts.append(", ".join(lengths))
        if m.backend:
            parts.append(m.backend)
        return " · ".join(parts)

    def ratio_text(self) -> str:
        """ "×0.92 of the estimate before calibration", or the ratio to the estimate
        made for the row when it was stored."""
        if self.ratio is not None:
            return f"×{self.ratio:.2f} of the estimate before calibration"
        stored = self.measurement.ratio
        if stored is not None:
            return f"×{stored:.2f} of its own estimate (another workload)"
        return "no estimate to compare (another workload)"

    def note(self) -> str:
        """ "measured 2026-12-02, llama-bench": what a figure taken from it is marked with."""
        return f"measured {self.date}, {self.tool}"


def rows_for(
    rows: Sequence[StoredMeasurement],
    *,
    gpu_id: str,
    engine: str,
    mode: str,
    count: int = 1,
    model_id: str | None = None,
    model_name: str | None = None,
    quant: str | None = None,
    estimate_tokens_per_s: float | None = None,
) -> list[MeasuredRow]:
    """The stored rows of this GPU, engine and mode: of the estimate's workload first,
    then the rest, newest first within each."""
    out = []
    for row in rows:
        m = row.measurement
        if m.gpu_id != gpu_id or m.engine != engine or m.mode != mode:
            continue
        same = (
            model_matches(m.model, model_id, model_name)
            and m.count == count
            and (not quant or not m.quant or m.quant == quant)
        )
        ratio = None
        if same and estimate_tokens_per_s and estimate_tokens_per_s > 0:
            ratio = m.tokens_per_s / estimate_tokens_per_s
        out.append(MeasuredRow(row, same, ratio))
    out.sort(key=lambda item: item.date, reverse=True)
    out.sort(key=lambda item: not item.same_workload)
    return out


def best_of_workload(found: Sequence[MeasuredRow]) -> MeasuredRow | None:
    """The newest row of the estimate's own workload, or None (what a cell shows)."""
    return next((item for item in found if item.same_workload), None)


def cell_text(found: Sequence[MeasuredRow]) -> str | None:
    """A table cell for the workload's measured tokens/s: "119 (llama-bench, 2025-04-24;
    ×1.16 of est.)", "+1 more" when there are several; None without one."""
    best = best_of_workload(found)
    if best is None:
        return None
    more = sum(item.same_workload for item in found) - 1
    ratio = f"; ×{best.ratio:.2f} of est." if best.ratio is not None else ""
    return f"{figure_text(best.measurement.tokens_per_s)} ({best.tool}, {best.date}{ratio})" + (
        f" +{more} more" if more > 0 else ""
    )


# -- estimates for imported rows --------------------------------------------------------


def estimate_for_measurement(
    row: Measurement, shape: Any, entry: Any, model_file: Any = None
) -> float | None:
    """GPUDesk's uncalibrated speed estimate for the measured workload, or None.

    ``shape`` is the model's :class:`~gpudesk.workload.architecture.ModelShape`;
    ``entry`` the row's catalog GPU; ``model_file`` a read GGUF/safetensors file
    whose exact weight bytes replace the format's estimate.
    """
    from gpudesk.speed.estimate import (
        Engine,
        KvFormat,
        Mode,
        SpeedRequest,
        model_costs,
    )
    from gpudesk.speed.planner import estimates_for_entries
    from gpudesk.workload.quant import QuantFormat

    if row.quant is None and row.engine == "llama.cpp" and model_file is None:
        # a GGUF's weight format GPUDesk does not know (IQ4_XS, Q1_0, ...): guessing bf16
        # would make a ratio of several times and calibrate later estimates with it
        return None
    try:
        quant = QuantFormat(row.quant or "bf16")
        engine = Engine(row.engine)
    except ValueError:
        return None
    try:
        gguf = engine.weights_in_gguf(Mode(row.mode))
    except ValueError:
        return None
    costs = model_costs(shape, quant, KvFormat("fp16"), gguf=gguf)
    if model_file is not None:
        costs = dataclasses.replace(
            costs,
            in_memory_bytes=float(model_file.tensor_bytes),
            streamed_bytes=float(model_file.streamed_per_token_bytes),
            input_embedding_bytes=float(model_file.embedding_bytes),
        )
    try:
        request = SpeedRequest(
            mode=Mode(row.mode),
            engine=engine,
            quant=quant,
            kv_quant=KvFormat("fp16"),
            count=row.count,
            batch=1,
            concurrency=row.concurrency,
            seq_in=row.seq_in or None,
            seq_out=row.seq_out or None,
        ).resolved()
        results = estimates_for_entries([entry], costs, request)
    except (PlanningInputError, ValueError):
        return None
    return results[0].tokens_per_s if results else None


def with_estimate_for(
    row: Measurement, entries: Sequence[Any], shape: Any = None, model_file: Any = None
) -> Measurement:
    """``row`` with GPUDesk's estimate for the same workload, when one can be made (a
    catalog GPU, a decode/prefill/serve row, a model that is a preset or ``shape``)."""
    if row.gpu_id == "cpu" or row.mode not in ("decode", "prefill", "serve"):
        return row
    if shape is None:
        try:
            from gpudesk.speed.shapes import shape_for

            shape = shape_for(row.model)
        except Exception:  # not a preset: no estimate for this row, which is fine
            return row
    entry = next((entry for entry in entries if entry.id == row.gpu_id), None)
    if entry is None:
        return row
    return with_estimate(row, estimate_for_measurement(row, shape, entry, model_file))


# -- importing files --------------------------------------------------------------------


@dataclass(frozen=True)
class FileReport:
    """What one file gave: its format and rows, the rows refused and why, or why none."""

    path: Path
    source_format: str | None = None
    rows: int = 0
    refused: tuple[str, ...] = ()
    #: the file could not be read at all (not a format this reads, too large, ...)
    error: str | None = None


@dataclass(frozen=True)
class ImportReport:
    files: tuple[FileReport, ...]
    added: int
    already_stored: int
    #: the database could not take the rows (they are not stored)
    store_error: str | None = None
    rows: tuple[Measurement, ...] = field(default=())

    def text_lines(self) -> list[str]:
        """Per file: its format and row count, each refusal with its reason; then totals."""
        lines = []
        for item in self.files:
            if item.error is not None:
                lines.append(f"{item.path.name}: not imported: {item.error}")
                continue
            lines.append(f"{item.path.name}: {item.source_format}, {item.rows} measurement(s)")
            lines.extend(f"  refused {reason}" for reason in item.refused)
        if self.store_error:
            lines.append(f"Nothing stored: {self.store_error}")
        else:
            lines.append(f"Added {self.added}, already stored {self.already_stored}.")
        return lines


def import_files(
    paths: Sequence[Path],
    hints: ImportHints,
    entries: Sequence[Any],
    store: MeasurementStore,
    *,
    shape: Any = None,
    progress: Progress | None = None,
    parse: Callable[[Path, ImportHints], Any] = parse_file,
) -> ImportReport:
    """Read ``paths`` (what ``gpudesk measurements import`` reads), estimate and store.

    A file that cannot be read is reported, never raised; the rows of the others are
    stored together (duplicates ignored). ``progress`` is told each file and may cancel
    between files (then nothing is stored: :class:`~gpudesk.progress.Cancelled`).
    """
    from gpudesk.measurements.store import StoreError

    reports: list[FileReport] = []
    rows: list[Measurement] = []
    for index, path in enumerate(paths):
        if progress is not None:
            progress.check()
            progress.report(index / max(1, len(paths)), f"reading {path.name}")
        try:
            result = parse(path, hints)
        except ImportFileError as exc:
            reports.append(FileReport(path, error=exc.reason))
            continue
        placed = [with_estimate_for(row, entries, shape) for row in result.rows]
        rows.extend(placed)
        reports.append(FileReport(path, result.source_format, len(placed), tuple(result.refused)))
    if progress is not None:
        progress.check()
        progress.report(1.0, "storing")
    added = duplicates = 0
    error = None
    if rows:
        try:
            added, duplicates = store.add(rows)
        except (StoreError, OSError) as exc:
            error = str(exc)
    return ImportReport(tuple(reports), added, duplicates, error, tuple(rows))


# -- a workload across GPUs (Compare's "measured" row, the PDF's speed section) ---------


def stored_rows(store: MeasurementStore | None = None) -> list[StoredMeasurement]:
    """The user's stored rows; none when the database is absent or unreadable (a
    comparison or a report never fails on it)."""
    from gpudesk.measurements.store import StoreError

    try:
        return (store or MeasurementStore()).rows()
    except (StoreError, OSError):
        return []


def rows_across(
    workload: Any,
    estimates: Sequence[Any],
    rows: Sequence[StoredMeasurement],
) -> list[list[MeasuredRow]]:
    """Per estimate (a :class:`SpeedEstimate` of ``workload`` on one GPU, or None where
    the GPU does not hold it), the stored rows of its GPU, engine and mode."""
    request = workload.request
    out: list[list[MeasuredRow]] = []
    for estimate in estimates:
        if estimate is None:
            out.append([])
            continue
        out.append(
            rows_for(
                rows,
                gpu_id=estimate.gpu_id,
                engine=request.engine.value,
                mode=request.mode.value,
                count=estimate.count,
                model_name=workload.model_name,
                quant=request.quant.value,
                estimate_tokens_per_s=estimate.tokens_per_s,
            )
        )
    return out
