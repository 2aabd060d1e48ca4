"""Reading the benchmark results users already have into :class:`Measurement` rows.

Formats, told apart by their content (not their file name):

- **llama-bench** ``-o json`` (a JSON array of test objects), ``-o jsonl`` (one object a
  line), ``-o csv`` (its header names the same fields) and ``-o md`` (the default
  table: ``| model | size | params | backend | ngl | test | t/s |``, with whatever
  device lines llama.cpp printed above it). One row per test: ``pp512`` is prefill of
  512 tokens, ``tg128`` decode of 128 (``@ d4096``: after a 4,096-token context); a
  ``pp+tg`` test mixes both and is refused.
- **vLLM** ``vllm bench serve --save-result`` (JSON with ``output_throughput``,
  ``total_input_tokens`` ...): one ``serve`` row, output tokens/s at the mean lengths;
  ``vllm bench throughput --output-json`` (``tokens_per_second``, ``elapsed_time``): one
  ``throughput`` row, prompt + output tokens/s as vLLM counts them.
- **GPUDesk**'s own files: a ``measurements export`` file; the ``speed ... --verify
  --json`` document (its ``verify.measurement`` is the row that run stored; a document
  without one, from before that key, is rebuilt from ``workload``, ``results[0]`` and
  ``verify``); and a ``bench --json`` result, which is read and checked but places
  nothing: its figures are GEMM TFLOPS and copy/transfer GB/s, not tokens/s, and each
  is refused with that reason (``speed`` calibrates with this machine's own bench
  history instead, and skips runs imported from other machines).

What the file does not say (vLLM files name no GPU; a llama-bench table names no GPU
unless llama.cpp's device lines were pasted with it) comes from the caller's hints;
a row that still cannot be placed is refused with the reason.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudesk.measurements.checks import ImpossibleValue, check_fields
from gpudesk.measurements.models import parameter_count, place_model, quant_from_type
from gpudesk.measurements.store import EXPORT_FORMAT, Measurement
from gpudesk.storage import read_refusal, read_regular_file
from gpudesk.terminal_text import scrub
from gpudesk.workload.errors import PlanningInputError

MAX_IMPORT_BYTES = 16 * 1024 * 1024
MAX_ROWS = 100_000


class ImportFileError(PlanningInputError):
    """A file that cannot be imported at all; ``reason`` says why."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


@dataclass(frozen=True)
class ImportHints:
    """What the user said about the files (``--gpu``, ``--model``, ...); None: ask the file.

    ``resolve_gpu`` turns a name the file gives ("NVIDIA GeForce RTX 4090") into a
    catalog id, or None when the catalog has no such GPU.
    """

    gpu_id: str | None = None
    count: int | None = None
    model: str | None = None
    model_file: str | None = None
    quant: str | None = None
    backend: str | None = None
    resolve_gpu: Callable[[str], str | None] = field(default=lambda name: None)
    #: the model's shape came with the hints (``--gguf``, ``--config``): ``model`` is
    #: its name and need not be a preset
    shape_given: bool = False


@dataclass
class ImportResult:
    rows: list[Measurement]
    refused: list[str]
    source_format: str
    #: how the file's models were placed on presets ("'Meta-Llama-3.1-8B-Instruct'
    #: names llama-3.1-8b"), each once; empty where the user named the model
    placed: list[str] = field(default_factory=list)


_BACKENDS = {"cuda": "cuda", "vulkan": "vulkan", "metal": "metal", "cpu": "cpu", "blas": "cpu"}
_BACKENDS.update({"rocm": "rocm", "hip": "rocm", "sycl": "sycl", "cann": "cann"})


def _read_text(path: Path) -> str:
    try:
        # The guarded read: a FIFO, a device or a folder is refused unopened or unread.
        data = read_regular_file(path, MAX_IMPORT_BYTES)
    except OSError as exc:
        raise ImportFileError(path, read_refusal(exc)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFileError(path, "is not UTF-8 text") from None


def _json(text: str) -> Any:
    def constant(name: str) -> None:
        raise ValueError(f"{name} is not a number")

    try:
        return json.loads(text, parse_constant=constant)
    except RecursionError:
        raise ValueError("nests too deep") from None


def parse_file(path: Path, hints: ImportHints) -> ImportResult:
    """The measurements in one file.

    Raises:
        ImportFileError: unreadable, too large, not UTF-8, no format this reads, or
            a row with a value no real run writes (:mod:`.measurement_checks`): then
            none of the file's rows is returned.
    """
    try:
        return _parse_file(path, hints)
    except _RowImpossible as exc:
        raise ImportFileError(
            path,
            f"{exc.where}: {exc.field}: {exc.message}; nothing in this file was imported",
        ) from None


class _RowImpossible(ImpossibleValue):
    """An impossible value in one row, which refuses the whole file."""

    def __init__(self, where: str, error: ImpossibleValue) -> None:
        super().__init__(error.field, error.message)
        self.where = where


def _parse_file(path: Path, hints: ImportHints) -> ImportResult:
    text = _read_text(path)
    stripped = text.strip()
    if not stripped:
        raise ImportFileError(path, "is empty")
    document: Any = None
    all_lines = stripped.splitlines()
    # llama.cpp prints device lines before -o json output (llama.cpp issue 15554)
    first = next(
        (i for i, line in enumerate(all_lines) if line.lstrip().startswith(("[", "{"))), None
    )
    if first is not None and not any(line.lstrip().startswith("|") for line in all_lines[:first]):
        body = [line for line in all_lines[first:] if line.strip()]
        try:
            document = _json("\n".join(body))
        except ValueError as exc:
            if len(body) > 1 and all(line.lstrip().startswith("{") for line in body):
                return _jsonl(path, body, hints)
            raise ImportFileError(path, f"is not valid JSON ({exc})") from None
    if isinstance(document, dict) and document.get("format") == EXPORT_FORMAT:
        return _gpudesk_export(path, document)
    if isinstance(document, dict) and "schema_version" in document and "results" in document:
        return _gpudesk_bench(path, text)
    if (
        isinstance(document, dict)
        and isinstance(document.get("verify"), dict)
        and "workload" in document
    ):
        return _gpudesk_verify(path, document, hints)
    if isinstance(document, dict) and "output_throughput" in document:
        return _vllm_serve(path, document, hints)
    if isinstance(document, dict) and "tokens_per_second" in document:
        return _vllm_throughput(path, document, hints)
    if isinstance(document, dict) and "avg_ts" in document:  # one line of -o jsonl
        return _llama_records(path, [document], hints, "llama-bench jsonl")
    if (
        isinstance(document, list)
        and document
        and all(isinstance(item, dict) and "avg_ts" in item for item in document)
    ):
        return _llama_records(path, document, hints, "llama-bench json")
    lines = [line for line in all_lines if line.strip()]
    header = lines[0] if lines else ""
    if "avg_ts" in header and "," in header:
        reader = csv.DictReader(io.StringIO(stripped))
        try:
            records = [dict(row) for row in reader]
        except csv.Error as exc:
            raise ImportFileError(path, f"is not valid CSV ({exc})") from None
        if not records:
            raise ImportFileError(path, "has a llama-bench CSV header but no tests")
        return _llama_records(path, records, hints, "llama-bench csv")
    if any(re.match(r"^\|\s*model\s*\|", line) for line in lines) and "t/s" in stripped:
        return _llama_markdown(path, lines, hints)
    raise ImportFileError(
        path,
        "is not a llama-bench result (json, jsonl, csv or markdown), a vLLM bench result "
        "(serve --save-result, throughput --output-json) or a GPUDesk measurements export, "
        "speed --verify --json or bench --json file",
    )


# -- llama-bench -----------------------------------------------------------------------


def _jsonl(path: Path, lines: Sequence[str], hints: ImportHints) -> ImportResult:
    if len(lines) > MAX_ROWS:
        raise ImportFileError(path, f"holds more than {MAX_ROWS:,} tests")
    records = []
    for number, line in enumerate(lines, 1):
        try:
            record = _json(line)
        except ValueError as exc:
            raise ImportFileError(path, f"line {number} is not JSON ({exc})") from None
        if not isinstance(record, dict) or "avg_ts" not in record:
            raise ImportFileError(path, f"line {number} is not a llama-bench test")
        records.append(record)
    return _llama_records(path, records, hints, "llama-bench jsonl")


def _number(value: Any) -> float | None:
    """A finite number, or None: "nan", "inf" and JSON's 1e999 (read as infinity) are
    not counts or rates, and int() of them raises."""
    if isinstance(value, bool):
        return None
    number: float | None = None
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer too large for a float
            return None
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    return number if number is not None and math.isfinite(number) else None


def _backend(text: str | None, hints: ImportHints) -> str | None:
    if hints.backend:
        return hints.backend
    if not text:
        return None
    first = str(text).split(",")[0].strip().lower()
    return _BACKENDS.get(first, first[:40] or None)


def _model_for(
    hints: ImportHints,
    names: Sequence[str | None],
    model_type: str | None = None,
    params: tuple[float, float] | None = None,
) -> tuple[str, str | None] | str:
    """(model, how it was placed) for a row, or the reason it cannot be placed.

    A row calibrates only with an estimate of its own run, so its model must be a
    preset (by the file's words or ``--model``) or come with its shape (``--gguf``,
    ``--config``); see :mod:`gpudesk.measurements.models`.
    """
    if hints.shape_given:
        given = hints.model or next((name for name in names if name), None) or model_type
        return (given or "the given model file")[:300], None
    if hints.model:
        placed = place_model([hints.model])
        if placed is None:
            return (
                f"--model {hints.model[:80]!r} is no GPUDesk preset (gpudesk fit "
                "--list-models); for another model give --gguf FILE or --config PATH"
            )
        return placed.preset_id, None
    placed = place_model(names, model_type, params)
    if placed is not None:
        return placed.preset_id, placed.how
    said = next((name for name in names if name), None) or model_type
    if not said:
        return "the file names no model; give --model PRESET, --gguf FILE or --config PATH"
    return (
        f"the file's model {said[:80]!r} is no GPUDesk preset by name"
        + (" or parameter count" if params else "")
        + "; give --model PRESET, or --gguf FILE or --config PATH for another model"
    )


def _joined(*notes: str | None) -> str | None:
    return "; ".join(note for note in notes if note) or None


def _place_gpu(
    gpu_text: str | None, backend: str | None, hints: ImportHints
) -> tuple[str, str | None, int] | str:
    """(catalog id, name as the file says, count), or the reason it cannot be placed."""
    names = [name.strip() for name in (gpu_text or "").split(",") if name.strip()]
    count = hints.count or max(1, len(names))
    if hints.gpu_id is not None:
        return hints.gpu_id, names[0] if names else None, count
    if not names:
        if backend == "cpu":
            return "cpu", None, 1
        return "the file names no GPU; give --gpu"
    resolved = hints.resolve_gpu(names[0])
    if resolved is None:
        return f"the file's GPU {names[0][:80]!r} is not in the catalog; give --gpu"
    return resolved, names[0], count


def _llama_records(
    path: Path, records: Sequence[Mapping[str, Any]], hints: ImportHints, fmt: str
) -> ImportResult:
    if len(records) > MAX_ROWS:
        raise ImportFileError(path, f"holds more than {MAX_ROWS:,} tests")
    rows: list[Measurement] = []
    refused: list[str] = []
    placed: list[str] = []
    for index, record in enumerate(records, 1):
        where = f"test {index}"
        n_prompt = _number(record.get("n_prompt")) or 0
        n_gen = _number(record.get("n_gen")) or 0
        depth = _number(record.get("n_depth")) or 0
        rate = _number(record.get("avg_ts"))
        if rate is None:  # absent or not a number; an impossible one refuses the file
            refused.append(f"{where}: no avg_ts tokens/s")
            continue
        if n_prompt and n_gen:
            refused.append(f"{where}: pp{n_prompt:.0f}+tg{n_gen:.0f} mixes prefill and decode")
            continue
        if not n_prompt and not n_gen:
            refused.append(f"{where}: neither n_prompt nor n_gen")
            continue
        filename = str(record.get("model_filename") or "")
        base = Path(filename).name
        base = base[: -len(".gguf")] if base.lower().endswith(".gguf") else base
        n_params = _number(record.get("model_n_params"))
        build = record.get("build_commit")
        number = record.get("build_number")
        layers = record.get("n_gpu_layers")
        test = _LlamaTest(
            where=where,
            prefill=bool(n_prompt),
            length=int(n_prompt or n_gen),
            depth=int(depth),
            rate=rate,
            backend=str(record["backends"]) if record.get("backends") else None,
            gpu=str(record.get("gpu_info") or ""),
            name=base[:300],
            model_type=str(record.get("model_type") or "")[:200],
            params=(n_params, 0.0) if n_params else None,
            model_file=filename[:1000] or None,
            version=f"{build} ({number})" if build and number else (str(build) if build else None),
            measured_at=str(record.get("test_time") or "")[:40] or None,
            note=f"n_gpu_layers {layers}" if layers is not None else None,
        )
        row = _llama_row(test, path, hints, fmt, refused, placed)
        if row is not None:
            rows.append(row)
    return ImportResult(rows, refused, fmt, placed)


@dataclass(frozen=True)
class _LlamaTest:
    """One llama-bench test as its file gives it (a JSON/CSV record or a table row)."""

    where: str
    prefill: bool
    #: tokens processed (ppN) or generated (tgN)
    length: int
    #: the context before it (``@ dN``), 0 without one
    depth: int
    rate: float
    backend: str | None
    gpu: str
    #: a model name the file holds (its file name), or None
    name: str | None
    model_type: str
    params: tuple[float, float] | None
    model_file: str | None
    version: str | None
    measured_at: str | None
    note: str | None


def _llama_row(
    test: _LlamaTest,
    path: Path,
    hints: ImportHints,
    fmt: str,
    refused: list[str],
    placed: list[str],
) -> Measurement | None:
    """The test's row, or None with the reason added to ``refused``."""
    if test.prefill and test.depth:
        # a row has no field for it, and GPUDesk's prefill estimate starts from nothing
        refused.append(
            f"{test.where}: pp{test.length} @ d{test.depth} is prefill after a "
            f"{test.depth}-token context, which GPUDesk does not estimate"
        )
        return None
    backend = _backend(test.backend, hints)
    gpu = _place_gpu(test.gpu, backend, hints)
    if isinstance(gpu, str):
        refused.append(f"{test.where}: {gpu}")
        return None
    gpu_id, gpu_name, count = gpu
    model = _model_for(hints, [test.name], test.model_type, test.params)
    if isinstance(model, str):
        refused.append(f"{test.where}: {model}")
        return None
    if model[1] and model[1] not in placed:
        placed.append(model[1])
    row: Measurement | None = _row(
        test.where,
        refused,
        gpu_id=gpu_id,
        gpu_name=gpu_name,
        count=count,
        engine="llama.cpp",
        engine_version=test.version,
        backend=backend,
        model=model[0],
        model_file=hints.model_file or test.model_file,
        quant=hints.quant or quant_from_type(test.model_type),
        mode="prefill" if test.prefill else "decode",
        seq_in=test.length if test.prefill else (test.depth or None),
        seq_out=None if test.prefill else test.length,
        tokens_per_s=test.rate,
        measured_at=test.measured_at,
        source=str(path),
        source_format=fmt,
        note=_joined(test.note, model[1]),
    )
    return row


def _row(where: str, refused: list[str], **fields: Any) -> Any:
    if isinstance(fields.get("source"), str):
        # the path the user gave (or an export's): shown escaped, not refused
        fields["source"] = scrub(fields["source"])
    try:
        check_fields(fields)
    except ImpossibleValue as exc:
        raise _RowImpossible(where, exc) from None
    try:
        return Measurement(**fields)
    except ValueError as exc:
        first = str(exc).splitlines()
        refused.append(f"{where}: {first[1] if len(first) > 1 else exc}")
        return None


_TEST = re.compile(r"^(pp|tg)(\d+)(?:\s*@\s*d(\d+))?$")
_MIXED = re.compile(r"^pp\d+\+tg\d+")
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(?:\s*±\s*[0-9.]+)?$")
_DEVICE = re.compile(
    r"(?:Device \d+: |ggml_vulkan: \d+ = |ggml_metal_init: found device: )([^,(]+?)\s*(?:[,(]|$)"
)
_BUILD = re.compile(r"^build: (\S+ \(\d+\))")
_GGUF_NAME = re.compile(r"([\w.+-]+?)(?:-\d{5}-of-\d{5})?\.gguf\b", re.IGNORECASE)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _llama_markdown(path: Path, lines: Sequence[str], hints: ImportHints) -> ImportResult:
    devices = [m.group(1).strip() for line in lines for m in [_DEVICE.search(line)] if m]
    version = next((m.group(1) for line in lines for m in [_BUILD.match(line)] if m), None)
    rows: list[Measurement] = []
    refused: list[str] = []
    placed: list[str] = []
    header: list[str] | None = None
    number = 0
    heading: str | None = None  # "### tinyllama-1.1b-1t-openorca.Q4_K_M.gguf" above a table
    for line in lines:
        if not line.lstrip().startswith("|"):
            header = None if not line.strip() else header
            named = _GGUF_NAME.search(line)
            heading = named.group(1)[:300] if named else heading
            continue
        cells = _cells(line)
        if cells and cells[0] == "model":
            header = cells
            continue
        if header is None or all(set(cell) <= set("-: ") for cell in cells):
            continue
        number += 1
        where = f"table row {number}"
        if len(cells) != len(header):
            refused.append(f"{where}: {len(cells)} cells under {len(header)} columns")
            continue
        row = dict(zip(header, cells, strict=True))
        test_name = _TEST.match(row.get("test", "").replace(" ", ""))
        rate = _RATE.match(row.get("t/s", "").replace(",", ""))
        if test_name is None and _MIXED.match(row.get("test", "").replace(" ", "")):
            refused.append(f"{where}: {row['test']} mixes prefill and decode")
            continue
        if test_name is None:
            refused.append(f"{where}: test {row.get('test', '')[:40]!r} is not ppN or tgN")
            continue
        if rate is None:
            refused.append(f"{where}: t/s {row.get('t/s', '')[:40]!r} is not a number")
            continue
        kind, length = test_name.group(1), int(test_name.group(2))
        depth = int(test_name.group(3) or 0)
        measurement = _llama_row(
            _LlamaTest(
                where=where,
                prefill=kind == "pp",
                length=length,
                depth=depth,
                rate=float(rate.group(1)),
                backend=row.get("backend"),
                gpu=", ".join(devices),
                name=heading,
                model_type=row.get("model", "")[:200],
                params=parameter_count(row.get("params", "")),
                model_file=None,
                version=version,
                measured_at=None,
                note=f"ngl {row['ngl']}" if "ngl" in row else None,
            ),
            path,
            hints,
            "llama-bench markdown",
            refused,
            placed,
        )
        if measurement is not None:
            rows.append(measurement)
    if not rows and not refused:
        raise ImportFileError(path, "has a llama-bench table header but no test rows")
    return ImportResult(rows, refused, "llama-bench markdown", placed)


# -- vLLM ------------------------------------------------------------------------------


def _vllm_common(
    path: Path, document: Mapping[str, Any], hints: ImportHints, fmt: str
) -> tuple[str, int, str, list[str]] | ImportResult:
    if hints.gpu_id is None:
        return ImportResult([], [f"{fmt}: vLLM's result names no GPU; give --gpu"], fmt)
    said = document.get("model_id") or document.get("model")
    model = _model_for(hints, [said[:300] if isinstance(said, str) else None])
    if isinstance(model, str):
        return ImportResult([], [f"{fmt}: {model}"], fmt)
    return hints.gpu_id, hints.count or 1, model[0], [model[1]] if model[1] else []


def _vllm_mean_lengths(
    document: Mapping[str, Any], requests: float | None
) -> tuple[int | None, int | None]:
    """Mean prompt and output tokens per request, where the totals and count are given."""
    if not requests:
        return None, None
    total_in = _number(document.get("total_input_tokens"))
    total_out = _number(document.get("total_output_tokens"))
    return (
        round(total_in / requests) if total_in else None,
        round(total_out / requests) if total_out else None,
    )


def _vllm_result(
    path: Path,
    document: Mapping[str, Any],
    hints: ImportHints,
    fmt: str,
    *,
    rate_key: str,
    requests: float | None,
    **fields: Any,
) -> ImportResult:
    """The one row of a vLLM bench result: ``rate_key`` is its tokens/s; ``fields`` are
    the format's own (mode, concurrency, version, date, note)."""
    common = _vllm_common(path, document, hints, fmt)
    if isinstance(common, ImportResult):
        return common
    gpu_id, count, model, placed = common
    rate = _number(document.get(rate_key))
    if rate is None or rate <= 0:
        return ImportResult([], [f"{fmt}: {rate_key} is not a positive number"], fmt)
    seq_in, seq_out = _vllm_mean_lengths(document, requests)
    refused: list[str] = []
    row = _row(
        fmt,
        refused,
        gpu_id=gpu_id,
        count=count,
        engine="vllm",
        backend=hints.backend,
        model=model,
        model_file=hints.model_file,
        quant=hints.quant,
        seq_in=seq_in,
        seq_out=seq_out,
        tokens_per_s=rate,
        source=str(path),
        source_format=fmt,
        **fields,
    )
    return ImportResult([row] if row is not None else [], refused, fmt, placed)


def _vllm_serve(path: Path, document: Mapping[str, Any], hints: ImportHints) -> ImportResult:
    completed = _number(document.get("completed")) or _number(document.get("num_prompts"))
    concurrency = _number(document.get("max_concurrency"))
    version = document.get("vllm_version")
    return _vllm_result(
        path,
        document,
        hints,
        "vllm bench serve",
        rate_key="output_throughput",
        requests=completed,
        engine_version=version if isinstance(version, str) else None,
        mode="serve",
        concurrency=int(concurrency) if concurrency else None,
        measured_at=str(document.get("date") or "")[:40] or None,
        note=f"{completed:.0f} requests" if completed else None,
    )


def _vllm_throughput(path: Path, document: Mapping[str, Any], hints: ImportHints) -> ImportResult:
    requests = _number(document.get("num_requests"))
    return _vllm_result(
        path,
        document,
        hints,
        "vllm bench throughput",
        rate_key="tokens_per_second",
        requests=requests,
        mode="throughput",
        note="prompt + output tokens per second, as vLLM's throughput benchmark counts"
        + (f"; {requests:.0f} requests" if requests else ""),
    )


# -- GPUDesk ---------------------------------------------------------------------------


def _gpudesk_export(path: Path, document: Mapping[str, Any]) -> ImportResult:
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ImportFileError(path, f"version {version!r} is not a whole number from 1")
    if version > 1:
        raise ImportFileError(path, f"is version {version}, newer than this GPUDesk reads (1)")
    items = document.get("measurements")
    if not isinstance(items, list):
        raise ImportFileError(path, "has no 'measurements' list")
    if len(items) > MAX_ROWS:
        raise ImportFileError(path, f"holds more than {MAX_ROWS:,} measurements")
    rows: list[Measurement] = []
    refused: list[str] = []
    for index, item in enumerate(items, 1):
        if not isinstance(item, dict):
            refused.append(f"measurement {index}: not an object")
            continue
        row = _row(f"measurement {index}", refused, **{str(k): v for k, v in item.items()})
        if row is not None:
            rows.append(row)
    return ImportResult(rows, refused, "gpudesk export")


def _gpudesk_bench(path: Path, text: str) -> ImportResult:
    """A ``gpudesk bench --json`` result: checked, every figure refused with the reason."""
    from gpudesk.bench.result_file import parse_result
    from gpudesk.bench.results import ResultFileError

    try:
        result = parse_result(text, str(path))
    except ResultFileError as exc:
        raise ImportFileError(
            path, f"is a GPUDesk bench result that cannot be read ({exc.field}: {exc.message})"
        ) from None
    where = result.catalog_id or result.device_name
    refused: list[str] = []
    for figure in result.results[:MAX_ROWS]:
        kind = "a GEMM rate" if figure.test == "gemm" else "a bandwidth"
        value = f"{figure.value:.3g} {figure.unit}" if figure.value is not None else "failed"
        refused.append(
            f"bench {figure.label} on {where} ({value}): {kind}, not tokens/s, so not a "
            "measurement; speed calibrates with bench runs on the machine that ran them"
        )
    if not result.results:
        refused.append(
            f"bench run on {where}: no figures"
            + (f" (the run failed: {result.error})" if result.error else "")
        )
    return ImportResult([], refused, "gpudesk bench")


def _text(value: Any, limit: int) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _gpudesk_verify(path: Path, document: Mapping[str, Any], hints: ImportHints) -> ImportResult:
    """A ``gpudesk speed ... --verify --json`` document: its one measured row."""
    fmt = "gpudesk verify"
    verify = document["verify"]
    refused: list[str] = []
    if verify.get("stopped") == "interrupted":
        return ImportResult([], ["verify: the run was interrupted (Ctrl+C); not stored"], fmt)
    stored = verify.get("measurement")
    if isinstance(stored, dict):
        fields = {str(k): v for k, v in stored.items() if k != "source"}
        row = _row("verify", refused, **fields, source=str(path)[:1000])
        return ImportResult([row] if row is not None else [], refused, fmt)
    # written before verify.measurement: rebuilt the way speed --verify stores it
    workload = document.get("workload")
    results = document.get("results")
    if not isinstance(workload, dict):
        raise ImportFileError(path, "is a GPUDesk speed --verify document without a workload")
    first = results[0] if isinstance(results, list) and results else None
    gpu_id = hints.gpu_id or (_text(first.get("gpu_id"), 80) if isinstance(first, dict) else None)
    if gpu_id is None:
        return ImportResult([], ["verify: the document names no GPU; give --gpu"], fmt)
    mode = workload.get("mode")
    model = hints.model or next(
        (str(workload[k])[:300] for k in ("model", "params", "config") if workload.get(k)),
        None,
    )
    if model is None:
        return ImportResult([], ["verify: the document names no model; give --model"], fmt)
    engine_version = _text(verify.get("engine_version"), 80)
    row = _row(
        "verify",
        refused,
        gpu_id=gpu_id,
        count=hints.count or (_whole(first.get("count")) if isinstance(first, dict) else None) or 1,
        engine="llama.cpp",
        engine_version=engine_version,
        backend=hints.backend
        or _text(workload.get("backend"), 40)
        or ("cpu" if gpu_id == "cpu" else None),
        model=model,
        model_file=_text(verify.get("model_path"), 1000),
        quant=hints.quant or _text(workload.get("quant"), 40),
        mode=mode,
        seq_in=_whole(workload.get("seq_in")) or None,
        seq_out=(_whole(verify.get("n_gen_done")) or None) if mode == "decode" else None,
        tokens_per_s=_number(verify.get("measured_tokens_per_s")),
        estimate_tokens_per_s=_number(verify.get("estimate_tokens_per_s")),
        source=str(path)[:1000],
        source_format=fmt,
        note="rebuilt from a speed --verify document",
    )
    return ImportResult([row] if row is not None else [], refused, fmt)
