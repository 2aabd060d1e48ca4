"""The published measurements the speed model is fitted to and checked against.

``measurements.toml`` beside this module holds tables of measurements, each citing the
page it was copied from. A row inherits its table's fields. The file ships with GPUDesk
and is validated strictly; a broken file is a bug, so loading it raises.
"""

from __future__ import annotations

import functools
import tomllib
from enum import StrEnum
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

MEASUREMENTS_FILE = "measurements.toml"


class Workload(StrEnum):
    DECODE = "decode"
    PREFILL = "prefill"
    SERVE = "serve"
    TRAIN = "train"
    MATMUL = "matmul"


class Checkpointing(StrEnum):
    NONE = "none"
    SELECTIVE = "selective"  # a few cheap ops recomputed: counted as none
    FULL = "full"  # every layer's forward recomputed in the backward pass


class MeasuredModel(BaseModel):
    """A model the file needs that is not a bundled preset (same fields as a preset)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=80)
    name: str = Field(min_length=1, max_length=120)
    kind: Literal["decoder"]
    params: int = Field(gt=0)
    layers: int = Field(gt=0)
    hidden: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    vocab: int = Field(gt=0)
    intermediate: int = Field(gt=0)
    context: int = Field(gt=0)
    gated_mlp: bool
    tied_embeddings: bool
    sources: tuple[str, ...] = Field(min_length=1)


#: llama.cpp builds from this year on are "current": estimates are for them. Its CUDA
#: backend gained CUDA graphs (2024-05) and fused kernels since, so a 2024 build spends
#: more time per layer of each decode step on the same GPU.
CURRENT_BUILDS_FROM = 2025


class Measurement(BaseModel):
    """One published figure and the conditions it was measured under."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(min_length=8)
    title: str = Field(min_length=1)
    workload: Workload
    engine: str = Field(min_length=1, max_length=40)
    gpu: str = Field(min_length=1, max_length=80)
    count: int = Field(default=1, ge=1, le=100_000)
    #: llama.cpp's backend (cuda, rocm, vulkan, metal, sycl, cpu); None: the vendor's own
    backend: Literal["cuda", "rocm", "vulkan", "metal", "sycl", "cpu"] | None = None
    model: str | None = None
    #: training rows without a model id give the numbers the FLOP count needs
    params: int | None = Field(default=None, gt=0)
    layers: int | None = Field(default=None, gt=0)
    hidden: int | None = Field(default=None, gt=0)
    quant: str | None = None
    kv_quant: str | None = None
    batch: int = Field(default=1, ge=1)
    concurrency: int | None = Field(default=None, ge=1)
    seq_in: int | None = Field(default=None, ge=1)
    seq_out: int | None = Field(default=None, ge=1)
    context: int | None = Field(default=None, ge=0)
    checkpointing: Checkpointing = Checkpointing.NONE
    value: float = Field(gt=0)
    unit: Literal["tokens/s", "s", "TFLOPS"]
    held_out: bool = False
    #: the year of the llama.cpp build measured; a decode row of a build before
    #: CURRENT_BUILDS_FROM adds the fitted older-build cost per layer (estimates are for
    #: current builds)
    build_year: int | None = Field(default=None, ge=2023, le=2100)
    #: llama.cpp ran FlashAttention (``-fa 1``); None: the run's default, which for
    #: llama-bench was off until PR #23714 (2026) made it ``auto``: every llama-bench row
    #: here without ``-fa 1`` materialised each prompt's attention scores
    flash_attention: bool | None = None
    notes: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> Measurement:
        if self.workload is Workload.TRAIN:
            if self.model is None and None in (self.params, self.layers, self.hidden):
                raise ValueError("a training row needs model, or params, layers and hidden")
            if self.seq_in is None:
                raise ValueError("a training row needs seq_in (the sequence length)")
        elif self.workload is not Workload.MATMUL and self.model is None:
            raise ValueError(f"a {self.workload} row needs model")
        if self.workload is Workload.DECODE and (self.seq_out is None or self.context is None):
            raise ValueError("a decode row needs seq_out and context")
        if self.workload is Workload.PREFILL and self.seq_in is None:
            raise ValueError("a prefill row needs seq_in")
        if self.workload is Workload.SERVE and (self.seq_in is None or self.seq_out is None):
            raise ValueError("a serve row needs seq_in and seq_out")
        if self.workload is not Workload.MATMUL and self.quant is None:
            raise ValueError("a row needs quant (the weight format)")
        expected = {"matmul": ("TFLOPS",), "prefill": ("tokens/s", "s")}.get(
            self.workload.value, ("tokens/s",)
        )
        if self.unit not in expected:
            raise ValueError(f"a {self.workload} row's unit must be {' or '.join(expected)}")
        return self

    @property
    def older_build(self) -> bool:
        """A llama.cpp build from before :data:`CURRENT_BUILDS_FROM`."""
        return (
            self.engine == "llama.cpp"
            and self.build_year is not None
            and self.build_year < CURRENT_BUILDS_FROM
        )

    @property
    def unfused_attention(self) -> bool:
        """A llama.cpp run without FlashAttention (llama-bench's default for every build
        measured here): its prompts wrote, softmaxed and re-read every attention score."""
        return self.engine == "llama.cpp" and self.flash_attention is not True

    @property
    def label(self) -> str:
        """A short description for tables: GPU x count, engine, model, quant, lengths."""
        gpus = self.gpu if self.count == 1 else f"{self.count} × {self.gpu}"
        what = self.model or (f"{self.params / 1e9:.1f}B params" if self.params else "")
        bits = [self.workload.value, gpus, self.engine, what, self.quant or ""]
        if self.seq_in:
            bits.append(f"in {self.seq_in}")
        if self.seq_out:
            bits.append(f"out {self.seq_out}")
        if self.concurrency:
            bits.append(f"c {self.concurrency}")
        return " ".join(bit for bit in bits if bit)


class MeasurementFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    models: tuple[MeasuredModel, ...]
    measurements: tuple[Measurement, ...]

    def model(self, model_id: str) -> MeasuredModel | None:
        for model in self.models:
            if model.id == model_id:
                return model
        return None


_TABLE_ONLY = ("rows",)


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "(row)"
    return f"{where}: {error['msg']}"


def parse_measurements(text: str, source: str = MEASUREMENTS_FILE) -> MeasurementFile:
    """Validate the file's text: every row with its table's fields.

    Raises:
        ValueError: the first problem, naming the table, the row and the field.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not valid TOML: {exc}") from exc
    models: list[MeasuredModel] = []
    for index, item in enumerate(data.get("model", [])):
        try:
            models.append(MeasuredModel.model_validate(item))
        except ValidationError as exc:
            raise ValueError(f"{source}: model #{index + 1}: {_first_problem(exc)}") from exc
    rows: list[Measurement] = []
    for table_index, table in enumerate(data.get("table", [])):
        if not isinstance(table, dict) or not isinstance(table.get("rows", []), list):
            raise ValueError(f"{source}: table #{table_index + 1}: not a table with a rows list")
        common: dict[str, Any] = {k: v for k, v in table.items() if k not in _TABLE_ONLY}
        for row_index, row in enumerate(table.get("rows", [])):
            if not isinstance(row, dict):
                raise ValueError(
                    f"{source}: table #{table_index + 1}, row #{row_index + 1}: not a table"
                )
            merged = {**common, **row}
            try:
                rows.append(Measurement.model_validate(merged))
            except ValidationError as exc:
                raise ValueError(
                    f"{source}: table #{table_index + 1} ({table.get('title', '?')}), "
                    f"row #{row_index + 1}: {_first_problem(exc)}"
                ) from exc
    return MeasurementFile(models=tuple(models), measurements=tuple(rows))


@functools.cache
def load_measurements() -> MeasurementFile:
    """The bundled measurement file."""
    text = resources.files("gpudesk.speed").joinpath(MEASUREMENTS_FILE).read_text("utf-8")
    return parse_measurements(text)
