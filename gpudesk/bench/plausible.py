"""Physics checks on a benchmark result read from a file (issue 39 item 5).

:func:`gpudesk.bench.result_file.parse_result` validates types; this module checks
that what the types allow is also possible: every measured figure finite,
positive and at most :data:`PEAK_MULTIPLE` times the catalog's peak for the
GPU the file names (or under an absolute ceiling where the catalog has no
peak), ``fraction_of_peak`` at most :data:`MAX_FRACTION_OF_PEAK` and equal to
value ÷ peak, whole numbers within the bounds of real hardware, and text
printable and short. A file that fails is refused whole, by field.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator

from gpudesk.bench.errors import BenchError
from gpudesk.bench.peaks import peak_for
from gpudesk.bench.results import BenchResult, Measurement, Unit
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.terminal_text import UNSAFE

#: A figure above twice the catalog peak of its GPU is not a measurement. The peak
#: is the dense tensor rate for FP16/BF16/TF32 GEMM, the shader rate for FP32/FP64,
#: DRAM bandwidth for a copy (which counts bytes read and written, as DRAM does) and
#: the PCIe link for transfers; real runs reach 0.3-0.95 of it, and a factory or
#: user overclock adds 10-20 %. Twice leaves room for that and for a catalog figure
#: corrected since the run.
PEAK_MULTIPLE = 2.0
#: The same bound on the file's own ``fraction_of_peak`` (and on value ÷ peak).
MAX_FRACTION_OF_PEAK = PEAK_MULTIPLE
#: ``fraction_of_peak`` must equal value ÷ peak within 1 % (at least 0.001): the
#: runner writes the exact quotient; a hand-made file may round it.
FRACTION_TOLERANCE = 0.01
#: Ceilings where the catalog gives no peak (a CPU, a GPU not in the catalog, an
#: integrated GPU without a PCIe link). No catalogued GPU exceeds 2,500 dense
#: TFLOPS (B200/GB200 BF16) or 8,000 GB/s (B200, MI355X); eight times that leaves
#: room for generations not yet catalogued, and still refuses 1e308.
ABSOLUTE_CEILING: dict[Unit, float] = {"TFLOPS": 20_000.0, "GB/s": 64_000.0}

#: Whole numbers: a GEMM's n (a 2^20 × 2^20 FP16 matrix is 2 TiB, beyond any
#: device's memory), a buffer's bytes (1 PiB), timing counts, device fields.
MAX_GEMM_N = 1 << 20
MAX_BUFFER_BYTES = 1 << 50
MAX_REPETITIONS = 1_000_000
MAX_ITERATIONS_PER_REPETITION = 1_000_000_000
#: Device indexes: the fleet reads at most 4,096 GPUs a node (fleet.document).
MAX_DEVICE_INDEX = 4095
MAX_MEMORY_BYTES = 1 << 50
MAX_CACHE_BYTES = 1 << 40
MAX_MULTIPROCESSORS = 1_000_000
MAX_THREADS = 1 << 20
#: Any other whole number in the file (the free-form environment): a signed 64-bit value.
MAX_ANY_INTEGER = 2**63 - 1

#: A benchmark takes minutes; a run or a telemetry time stamp past 30 days is corrupt.
MAX_DURATION_S = 30 * 24 * 3600.0
#: Telemetry readings: no clock is 10 GHz, no device draws 10 kW, nothing runs at
#: 200 °C or colder than -100 °C.
MAX_CLOCK_MHZ = 10_000.0
MAX_POWER_W = 10_000.0
TEMPERATURE_RANGE_C = (-100.0, 200.0)

#: Names, ids, versions and labels: one line of at most this many characters.
MAX_NAME_CHARS = 256
#: Prose the runner itself writes (notes, errors, the import path) may be longer
#: (the fields' own 2,000-character limit) and hold line breaks.
_LINE_BREAKS = "\n\t"
#: Line and paragraph separators break a one-line field as a newline does.
_SEPARATORS = "\u2028\u2029"


class Implausible(BenchError, ValueError):
    """A value the types allow but the physics or the display does not."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@functools.lru_cache(maxsize=1)
def _catalog() -> dict[str, CatalogEntry]:
    """The bundled catalog by id (the user's additions are not a reference)."""
    from gpudesk.catalog.loader import load_catalog

    return {entry.id: entry for entry in load_catalog(include_user=False).entries}


def catalog_entry(catalog_id: str | None) -> CatalogEntry | None:
    """The bundled catalog entry with this id, or None."""
    return None if catalog_id is None else _catalog().get(catalog_id)


def text_problem(text: str, *, multiline: bool = False, limit: int = MAX_NAME_CHARS) -> str | None:
    """Why ``text`` cannot be shown as it is, or None.

    Refused: C0 and C1 controls and DEL, bidi overrides and isolates, lone
    surrogates (:data:`gpudesk.terminal_text.UNSAFE`), and in one-line text also
    tab, newline and the Unicode line separators; and more than ``limit`` characters.
    """
    if len(text) > limit:
        return f"{len(text):,} characters, more than {limit:,}"
    unsafe = UNSAFE.search(text)
    if unsafe is not None:
        return f"a control character (U+{ord(unsafe.group()):04X}); text must be printable"
    if not multiline:
        breaks = next((char for char in text if char in _LINE_BREAKS + _SEPARATORS), None)
        if breaks is not None:
            return f"a control character (U+{ord(breaks):04X}) in one-line text"
    return None


def figure_problem(value: float, ceiling: float, what: str) -> str | None:
    """Why a measured figure is impossible (not finite, not positive, over ``ceiling``)."""
    if not math.isfinite(value):
        return f"{value!r} is not a finite number"
    if value <= 0:
        return f"{value:g} is not a positive figure"
    if value > ceiling:
        return f"{value:.6g} is more than {what} ({ceiling:,.6g}): not a possible measurement"
    return None


def check_result(result: BenchResult) -> None:
    """Refuse a result whose figures, numbers or text are impossible.

    Raises:
        Implausible: the first field that fails, by its dotted location.
    """
    entry = catalog_entry(result.catalog_id)
    for section, rows in (("results", result.results), ("sweep", result.sweep)):
        for index, row in enumerate(rows):
            _check_row(row, entry, f"{section}.{index}")
    _check_numbers(result)
    for where, text, multiline, limit in _texts(result):
        problem = text_problem(text, multiline=multiline, limit=limit)
        if problem is not None:
            raise Implausible(where, problem)


def _check_row(row: Measurement, entry: CatalogEntry | None, where: str) -> None:
    catalog_peak = peak_for(entry, row.test, row.dtype)
    if catalog_peak is not None and entry is not None:
        ceiling = PEAK_MULTIPLE * catalog_peak
        what = (
            f"{PEAK_MULTIPLE:g}× the catalog peak of the {entry.name} "
            f"({catalog_peak:,.6g} {row.unit} for {row.label})"
        )
    else:
        ceiling = ABSOLUTE_CEILING[row.unit]
        what = f"any device reaches in {row.unit} (no catalog peak for it)"
    for name in ("value", "min", "max"):
        figure = getattr(row, name)
        if figure is not None and (problem := figure_problem(figure, ceiling, what)):
            raise Implausible(f"{where}.{name}", problem)
    if row.peak is not None:
        peak_ceiling = ABSOLUTE_CEILING[row.unit] if catalog_peak is None else ceiling
        problem = figure_problem(row.peak, peak_ceiling, f"a {row.unit} peak can be")
        if problem is not None:
            raise Implausible(f"{where}.peak", problem)
    fraction = row.fraction_of_peak
    if fraction is not None:
        problem = figure_problem(fraction, MAX_FRACTION_OF_PEAK, "any fraction of peak can be")
        if problem is not None:
            raise Implausible(f"{where}.fraction_of_peak", problem)
    if row.value is not None and row.peak is not None:
        expected = row.value / row.peak
        if expected > MAX_FRACTION_OF_PEAK:
            raise Implausible(
                f"{where}.value",
                f"{row.value:.6g} is {expected:.3g}× the file's own peak ({row.peak:.6g}); "
                f"more than {MAX_FRACTION_OF_PEAK:g}× is not a possible measurement",
            )
        if fraction is not None and abs(fraction - expected) > max(
            0.001, FRACTION_TOLERANCE * expected
        ):
            raise Implausible(
                f"{where}.fraction_of_peak",
                f"{fraction:.6g} is not value ÷ peak ({row.value:.6g} ÷ {row.peak:.6g} = "
                f"{expected:.6g})",
            )
    size_limit = MAX_GEMM_N if row.test == "gemm" else MAX_BUFFER_BYTES
    for name, limit in (
        ("size", size_limit),
        ("repetitions", MAX_REPETITIONS),
        ("warmup", MAX_REPETITIONS),
        ("iterations_per_repetition", MAX_ITERATIONS_PER_REPETITION),
    ):
        _whole(getattr(row, name), 0, limit, f"{where}.{name}")


def _whole(value: int | None, low: int, high: int, where: str) -> None:
    if value is not None and not low <= value <= high:
        shown = (
            f"{value:,}" if len(str(abs(value))) <= 30 else f"a {len(str(abs(value)))}-digit number"
        )
        raise Implausible(where, f"{shown} is outside {low:,} to {high:,}")


def _bounded(value: float | None, low: float, high: float, where: str) -> None:
    if value is not None and not low <= value <= high:
        raise Implausible(where, f"{value:.6g} is outside {low:,g} to {high:,g}")


def _check_numbers(result: BenchResult) -> None:
    """Whole numbers and readings outside the measurements."""
    _bounded(result.duration_s, 0.0, MAX_DURATION_S, "duration_s")
    device = result.device
    if device is not None:
        _whole(device.index, 0, MAX_DEVICE_INDEX, "device.index")
        _whole(device.memory_total_bytes, 1, MAX_MEMORY_BYTES, "device.memory_total_bytes")
        _whole(device.multiprocessor_count, 1, MAX_MULTIPROCESSORS, "device.multiprocessor_count")
        _whole(device.threads, 1, MAX_THREADS, "device.threads")
        _whole(device.last_level_cache_bytes, 1, MAX_CACHE_BYTES, "device.last_level_cache_bytes")
    if result.telemetry is not None:
        low_c, high_c = TEMPERATURE_RANGE_C
        for index, sample in enumerate(result.telemetry.samples):
            where = f"telemetry.samples.{index}"
            _bounded(sample.t_s, 0.0, MAX_DURATION_S, f"{where}.t_s")
            _bounded(sample.sm_clock_mhz, 0.0, MAX_CLOCK_MHZ, f"{where}.sm_clock_mhz")
            _bounded(sample.power_w, 0.0, MAX_POWER_W, f"{where}.power_w")
            _bounded(sample.temperature_c, low_c, high_c, f"{where}.temperature_c")
    for where, number in _environment_integers(result):
        _whole(number, -MAX_ANY_INTEGER - 1, MAX_ANY_INTEGER, where)


def _environment_integers(result: BenchResult) -> Iterator[tuple[str, int]]:
    stack: list[tuple[object, str]] = [(result.environment, "environment")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            yield where, value
        elif isinstance(value, dict):
            stack.extend((item, f"{where}.{key}") for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, f"{where}.{index}") for index, item in enumerate(value))


#: (location, text, may hold line breaks, most characters)
_Text = tuple[str, str, bool, int]
#: Prose fields keep their model's 2,000-character limit.
_PROSE_CHARS = 2000


def _texts(result: BenchResult) -> Iterator[_Text]:
    yield "backend", result.backend, False, MAX_NAME_CHARS
    yield "gpudesk_version", result.gpudesk_version, False, MAX_NAME_CHARS
    if result.catalog_id is not None:
        yield "catalog_id", result.catalog_id, False, MAX_NAME_CHARS
    if result.device is not None:
        for name, value in result.device.model_dump().items():
            if isinstance(value, str):
                yield f"device.{name}", value, False, MAX_NAME_CHARS
    for name in ("notes", "error", "imported_from"):
        yield from _prose(name, getattr(result, name))
    for section, rows in (("results", result.results), ("sweep", result.sweep)):
        for index, row in enumerate(rows):
            where = f"{section}.{index}"
            yield f"{where}.dtype", row.dtype, False, MAX_NAME_CHARS
            if row.timer is not None:
                yield f"{where}.timer", row.timer, False, MAX_NAME_CHARS
            yield from _prose(f"{where}.notes", row.notes)
            yield from _prose(f"{where}.error", row.error)
    if result.telemetry is not None:
        yield from _prose("telemetry.reason", result.telemetry.reason)
        for index, sample in enumerate(result.telemetry.samples):
            for position, reason in enumerate(sample.clock_event_reasons or ()):
                where = f"telemetry.samples.{index}.clock_event_reasons.{position}"
                yield where, reason, False, MAX_NAME_CHARS
    stack: list[tuple[object, str]] = [(result.environment, "environment")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            yield where, value, True, _PROSE_CHARS
        elif isinstance(value, dict):
            for key, item in value.items():
                yield f"{where} (a key)", key, False, MAX_NAME_CHARS
                stack.append((item, f"{where}.{key}"))
        elif isinstance(value, list):
            stack.extend((item, f"{where}.{index}") for index, item in enumerate(value))


def _prose(where: str, value: str | tuple[str, ...] | None) -> Iterator[_Text]:
    if isinstance(value, str):
        yield where, value, True, _PROSE_CHARS
    elif value is not None:
        for index, text in enumerate(value):
            yield f"{where}.{index}", text, True, _PROSE_CHARS
