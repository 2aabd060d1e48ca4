"""The result of a benchmark run, and its JSON form (a public contract).

``gpudesk bench --json`` prints :meth:`BenchResult.to_json`; history files
hold the same text, and files from other machines are read back through
:func:`gpudesk.bench.result_file.parse_result` with every field validated (they are untrusted).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)

from gpudesk import __version__
from gpudesk.bench.devices import DeviceInfo
from gpudesk.bench.errors import BenchError

SCHEMA_VERSION = 1
#: Run times outside these are corrupt or crafted, and break local-time display.
EARLIEST_START = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST_START = dt.datetime(2200, 1, 1, tzinfo=dt.UTC)
#: Deeper JSON than this is not something ``gpudesk bench --json`` writes.
MAX_JSON_DEPTH = 32
ResultTest = Literal["gemm", "copy", "h2d", "d2h"]
Unit = Literal["TFLOPS", "GB/s"]
NonNegative = Annotated[float, Field(ge=0)]
_SHORT = Annotated[str, Field(max_length=2000)]
#: Units per test: GEMM in TFLOPS (10^12 FLOP/s), bytes in GB/s (10^9 B/s).
UNIT_FOR_TEST: dict[str, Unit] = {"gemm": "TFLOPS", "copy": "GB/s", "h2d": "GB/s", "d2h": "GB/s"}

_MODEL_CONFIG = ConfigDict(frozen=True, allow_inf_nan=False, extra="ignore")


def measurement_label(test: str, dtype: str, host_memory: str | None) -> str:
    """The short name of a measured figure: "GEMM FP64", "memory copy", "H2D pinned"."""
    if test == "gemm":
        return f"GEMM {dtype.upper()}"
    if test == "copy":
        return "memory copy"
    return f"{test.upper()} {host_memory or ''}".strip()


class Measurement(BaseModel):
    """One measured figure: the median of the timed repetitions, with their min and max.

    ``size`` is n for a GEMM (n×n times n×n, FLOPs = 2·n³) and the bytes per
    buffer for a copy or transfer. A copy counts every byte read and written
    (2 × size per copy). ``value`` is None only for a test that failed
    (``error`` says why).
    """

    model_config = _MODEL_CONFIG

    test: ResultTest
    dtype: str = Field(min_length=1, max_length=16)
    size: int = Field(ge=0)
    value: NonNegative | None
    unit: Unit
    min: NonNegative | None = None
    max: NonNegative | None = None
    peak: Annotated[float, Field(gt=0)] | None = None
    fraction_of_peak: NonNegative | None = None
    repetitions: int | None = Field(default=None, ge=0)
    warmup: int | None = Field(default=None, ge=0)
    #: Calls of the operation inside one timed repetition.
    iterations_per_repetition: int | None = Field(default=None, ge=1)
    timer: str | None = Field(default=None, max_length=40)
    #: Host-side buffer of a transfer: "pageable" (ordinary) or "pinned" (page-locked).
    host_memory: Literal["pageable", "pinned"] | None = None
    #: FP32/TF32 GEMMs on CUDA: whether TF32 tensor-core math was allowed.
    tf32_enabled: bool | None = None
    notes: tuple[_SHORT, ...] = ()
    error: _SHORT | None = None

    @model_validator(mode="after")
    def _unit_matches_test(self) -> Measurement:
        if UNIT_FOR_TEST[self.test] != self.unit:
            raise ValueError(f"unit of a {self.test} result must be {UNIT_FOR_TEST[self.test]}")
        if self.value is None and self.error is None:
            raise ValueError("a result without a value must say why in 'error'")
        return self

    @property
    def label(self) -> str:
        """A short name: "GEMM FP64", "memory copy", "H2D pinned"."""
        return measurement_label(self.test, self.dtype, self.host_memory)


class TelemetrySample(BaseModel):
    """One NVML reading taken while the benchmark ran."""

    model_config = _MODEL_CONFIG

    t_s: NonNegative
    sm_clock_mhz: NonNegative | None = None
    power_w: NonNegative | None = None
    temperature_c: float | None = None
    #: Decoded clock-event (throttle) reasons active at that moment.
    clock_event_reasons: tuple[Annotated[str, Field(max_length=80)], ...] | None = None


class Telemetry(BaseModel):
    """Clocks, power and temperature during the run (NVML), or why there are none."""

    model_config = _MODEL_CONFIG

    available: bool
    reason: _SHORT = ""
    samples: tuple[TelemetrySample, ...] = Field(default=(), max_length=100_000)

    def summary(self) -> dict[str, float | None]:
        """Median and extremes of each sampled quantity (None when never read)."""
        out: dict[str, float | None] = {}
        for name in ("sm_clock_mhz", "power_w", "temperature_c"):
            values = sorted(
                value for sample in self.samples if (value := getattr(sample, name)) is not None
            )
            out[f"{name}_min"] = values[0] if values else None
            out[f"{name}_median"] = values[len(values) // 2] if values else None
            out[f"{name}_max"] = values[-1] if values else None
        return out

    def throttle_reasons(self) -> list[str]:
        """Every clock-event reason seen in any sample, in first-seen order."""
        seen: list[str] = []
        for sample in self.samples:
            for reason in sample.clock_event_reasons or ():
                if reason not in seen:
                    seen.append(reason)
        return seen


class BenchResult(BaseModel):
    """A whole run. The first six fields are the ``--json`` contract, in that order."""

    model_config = _MODEL_CONFIG

    backend: str = Field(min_length=1, max_length=40)
    device: DeviceInfo | None
    catalog_id: str | None = Field(default=None, max_length=80)
    results: tuple[Measurement, ...] = Field(default=(), max_length=10_000)
    sweep: tuple[Measurement, ...] = Field(default=(), max_length=10_000)
    environment: dict[str, JsonValue] = Field(default_factory=dict)
    # -- extensions ---------------------------------------------------------
    schema_version: int = SCHEMA_VERSION
    gpudesk_version: str = Field(default=__version__, max_length=40)
    mode: Literal["quick", "full"] = "quick"
    started_at: dt.datetime
    duration_s: NonNegative = 0.0
    telemetry: Telemetry | None = None
    #: Things the run changed or skipped (size steps, skipped sweep points).
    notes: tuple[_SHORT, ...] = ()
    #: Set when the run as a whole failed (backend missing, device failure).
    error: _SHORT | None = None
    #: Where an imported run came from (the file it was imported from).
    imported_from: _SHORT | None = None

    @field_validator("started_at")
    @classmethod
    def _aware_time(cls, value: dt.datetime) -> dt.datetime:
        # Untrusted files may omit the offset; UTC is what gpudesk writes.
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        try:
            utc = aware.astimezone(dt.UTC)  # year 1 at +23:59 falls off the calendar
        except (OverflowError, ValueError):
            utc = None
        if utc is None or not EARLIEST_START <= utc < LATEST_START:
            raise ValueError(
                f"must be a time from {EARLIEST_START.year} to {LATEST_START.year - 1}"
            )
        return aware

    @property
    def ok(self) -> bool:
        """True when the run and every test in it succeeded."""
        return self.error is None and all(row.error is None for row in self.results)

    @property
    def device_name(self) -> str:
        return self.device.name if self.device is not None else "unknown device"

    def find(
        self, test: str, dtype: str | None = None, host_memory: str | None = None
    ) -> Measurement | None:
        """The first successful result of this test (and dtype / host memory)."""
        for row in self.results:
            if row.test != test or row.value is None:
                continue
            if dtype is not None and row.dtype != dtype:
                continue
            if host_memory is not None and row.host_memory != host_memory:
                continue
            return row
        return None

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


class ResultFileError(BenchError):
    """A result file that cannot be used, naming the file and the field."""

    def __init__(self, source: str, field: str, message: str) -> None:
        super().__init__(f"{source}: {field}: {message}")
        self.source = source
        self.field = field
        self.message = message


#: Imported files larger than this are refused before parsing.
MAX_RESULT_BYTES = 16 * 1024 * 1024


def parse_result_types(data: bytes | str, source: str) -> BenchResult:
    """Validate JSON text from anywhere (history, another machine) into a result.

    Types are strict (``true`` is not a number, ``"1"`` is not a schema
    version), nesting is at most :data:`MAX_JSON_DEPTH` levels, text holds no
    lone surrogates (they cannot be saved or shown), times lie between
    :data:`EARLIEST_START` and :data:`LATEST_START`. Whether the figures are
    possible is :func:`gpudesk.bench.result_file.parse_result`'s check, which
    every reader of a file calls.

    Raises:
        ResultFileError: not JSON, not an object, a newer schema, or a field
            that is missing or wrong; the message names the field.
    """
    if len(data) > MAX_RESULT_BYTES:
        raise ResultFileError(source, "(file)", f"larger than {MAX_RESULT_BYTES // 2**20} MiB")
    try:
        raw = json.loads(data, parse_constant=_reject_constant)
    except RecursionError:
        raise ResultFileError(source, "(json)", "nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ResultFileError(source, "(json)", f"not valid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise ResultFileError(
            source, "(file)", "expected a JSON object from `gpudesk bench --json`"
        )
    if "survey_schema_version" in raw or ("cluster" in raw and "nodes" in raw):
        # Not a broken result but another kind of file: say which, and where it opens.
        raise ResultFileError(
            source,
            "(file)",
            "this is a fleet survey (from “gpudesk fleet survey”), not a benchmark result: "
            "open it with File → Open fleet survey… (the Fleet tab) or “gpudesk fleet show FILE”",
        )
    _check_shape(raw, source)
    version = raw.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ResultFileError(
            source, "schema_version", f"must be a whole number from 1, not {version!r}"
        )
    if version > SCHEMA_VERSION:
        raise ResultFileError(
            source,
            "schema_version",
            f"written by a newer gpudesk (schema {version}; this one reads {SCHEMA_VERSION})",
        )
    if "started_at" not in raw:
        # Older or hand-made files: keep them importable; the time is unknown.
        raw["started_at"] = EARLIEST_START.isoformat()
    try:
        # Strict JSON-mode validation: no bool-as-number, no number-as-string.
        result = BenchResult.model_validate_json(json.dumps(raw), strict=True)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        location = ".".join(str(part) for part in first["loc"]) or "(file)"
        more = exc.error_count() - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise ResultFileError(source, location, f"{first['msg']}{suffix}") from exc
    return result


def _check_shape(raw: dict[str, object], source: str) -> None:
    """Refuse nesting deeper than :data:`MAX_JSON_DEPTH` and lone surrogates, by location.

    Iterative, so a crafted file cannot exhaust the stack here either.
    """
    stack: list[tuple[object, tuple[str, ...]]] = [(raw, ())]
    while stack:
        value, where = stack.pop()
        if len(where) > MAX_JSON_DEPTH:
            location = ".".join(where[:3]) + "..."
            raise ResultFileError(source, location, f"nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, str):
            _check_text(value, where, source)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_text(key, where, source)
                stack.append((item, (*where, key)))
        elif isinstance(value, list):
            stack.extend((item, (*where, str(index))) for index, item in enumerate(value))


def _check_text(text: str, where: tuple[str, ...], source: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        location = ".".join(where) or "(file)"
        raise ResultFileError(
            source, location, "text with a lone surrogate (\\ud800-\\udfff) is not valid Unicode"
        ) from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def finite_or_none(value: float | None) -> float | None:
    """Guard against inf/nan from a division by a near-zero time."""
    if value is None or not math.isfinite(value):
        return None
    return value
