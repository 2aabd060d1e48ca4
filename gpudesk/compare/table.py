"""The side-by-side comparison table: rows are figures, columns are GPUs.

Rows come grouped by :class:`~gpudesk.catalog.metrics.MetricGroup`: every
numeric figure of :data:`~gpudesk.catalog.metrics.METRICS` plus text rows
(architecture, memory type, ECC, NVLink, ...). For each numeric row the best
GPU is marked by the metric's direction (price: lower is better; a metric
without a direction has no best). TDP has no best: a low TDP is a small card,
not a good one; performance per watt is the row that means something. Tied
best values are all marked; a missing value is never best. A chosen baseline
GPU adds to the other columns their ratio to it ("835.5 (×2.7)").

An optional "this machine (measured)" column shows locally measured figures;
it never takes part in "best", because a measured figure and a datasheet peak
are different kinds of number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gpudesk.catalog.metrics import METRICS, Metric, MetricGroup, priced_memory_gb
from gpudesk.catalog.names import KIND_LABELS, interconnect_words, status_words
from gpudesk.catalog.prices import entry_price_label
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.chart_values import bare_module_price, bare_module_words
from gpudesk.csv_text import csv_text
from gpudesk.measured import MeasuredSeries

#: Column id of the "this machine (measured)" column.
MEASURED_COLUMN_ID = "measured"
#: Shown for a figure the catalog does not have.
MISSING_TEXT = "n/a"
#: Shown in the measured column for a figure that was not measured.
NOT_MEASURED_TEXT = "—"
#: Figures where a ratio means nothing (2024 / 2022 is not "×1.0").
NO_RATIO_KEYS = frozenset({"release_year"})
#: Figures with a direction for charts but no "best" in the table (see above).
NO_BEST_KEYS = frozenset({"tdp_w"})
#: the sign in a cell whose price or rate may be out of date (the words go with it)
STALE_SIGN = "⚠"
#: Relative tolerance under which two values count as tied for best.
TIE_REL_TOL = 1e-9

TextValue = str | bool | int | None


class RowKind(StrEnum):
    METRIC = "metric"
    TEXT = "text"


@dataclass(frozen=True, slots=True)
class TextField:
    """A non-numeric row: how to read it and where it belongs."""

    key: str
    label: str
    group: MetricGroup
    value: Callable[[CatalogEntry], TextValue]


def _attr(name: str) -> Callable[[CatalogEntry], TextValue]:
    def read(entry: CatalogEntry) -> TextValue:
        value = getattr(entry, name)
        if value is None or isinstance(value, (str, bool, int)):
            return value
        return str(value)

    return read


def _price_kind(entry: CatalogEntry) -> TextValue:
    if entry.price_kind is None:
        return None
    if bare_module_price(entry):  # marked: its per-price figures are not like the others'
        return bare_module_words(entry)
    return entry_price_label(entry, short=True)


def _priced_memory(entry: CatalogEntry) -> TextValue:
    # Memory per price is of this memory: a system price's base machine often has
    # less than the chip's largest configuration, so the row says which was priced.
    if entry.price_usd is None:
        return None
    memory = priced_memory_gb(entry)
    if memory is None:
        return "not recorded (memory per price n/a)"
    return f"{memory:g} GiB"  # as sold, in the unit of the Memory row above


_G = MetricGroup
#: Text rows, in the order shown inside their group (before the group's figures).
TEXT_FIELDS: tuple[TextField, ...] = (
    TextField("vendor", "Vendor", _G.IDENTITY, _attr("vendor")),
    # "Datacenter", as the catalog's Segment column writes it (was "datacenter")
    TextField(
        "segment",
        "Segment",
        _G.IDENTITY,
        lambda entry: entry.segment.value.capitalize() if entry.segment else None,
    ),
    TextField("kind", "Kind", _G.IDENTITY, lambda entry: KIND_LABELS[entry.kind]),
    TextField("status", "Status", _G.IDENTITY, status_words),
    TextField("architecture", "Architecture", _G.IDENTITY, _attr("architecture")),
    TextField("form_factor", "Form factor", _G.IDENTITY, _attr("form_factor")),
    TextField("interface", "Interface", _G.IDENTITY, _attr("interface")),
    TextField("memory_type", "Memory type", _G.MEMORY, _attr("memory_type")),
    TextField("compute_capability", "Compute capability", _G.COMPUTE, _attr("compute_capability")),
    TextField(
        "tensor_core_generation",
        "Tensor core generation",
        _G.COMPUTE,
        _attr("tensor_core_generation"),
    ),
    TextField("ecc", "ECC memory", _G.FEATURES, _attr("ecc")),
    TextField("nvlink", "NVLink", _G.FEATURES, _attr("nvlink")),
    TextField(
        "interconnect",
        "Device-to-device link",
        _G.FEATURES,
        lambda entry: interconnect_words(entry.interconnect) if entry.interconnect else None,
    ),
    TextField("price_kind", "Price kind", _G.PRICE, _price_kind),
    TextField("price_date", "Price seen", _G.PRICE, _attr("price_date")),
    TextField("priced_memory", "Memory of what was priced", _G.PRICE, _priced_memory),
)


@dataclass(frozen=True, slots=True)
class Column:
    """One compared GPU, or the measured series (``measured=True``)."""

    id: str
    name: str
    measured: bool = False


@dataclass(frozen=True, slots=True)
class Row:
    """One figure across all columns.

    Attributes:
        key: metric or text-field key.
        label: human label without the unit.
        unit: unit for numeric rows, "" otherwise.
        group: the group the row is shown under.
        kind: numeric metric or text.
        values: one raw value per column (None where missing).
        best_ids: ids of the best column(s); empty when there is no best.
        ratios: value / baseline value per column; empty without a baseline
            or for text rows; None where either value is missing.
    """

    key: str
    label: str
    unit: str
    group: MetricGroup
    kind: RowKind
    values: tuple[float | TextValue, ...]
    best_ids: tuple[str, ...] = ()
    ratios: tuple[float | None, ...] = ()

    @property
    def header(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label

    @property
    def is_empty(self) -> bool:
        """No column has a value: views and the text copy leave the row out."""
        return all(value is None for value in self.values)


def format_ratio(ratio: float | None) -> str:
    """A ratio to the baseline as shown in the table: "×1.8", "×0.55", "×12"."""
    if ratio is None or not math.isfinite(ratio):
        return MISSING_TEXT
    if ratio >= 10:
        return f"×{ratio:,.0f}"
    text = f"{ratio:.2g}"
    if "." not in text and "e" not in text:
        text += ".0"  # "×1.0" reads as a ratio, "×1" as a count
    return f"×{text}"


def format_text_value(value: TextValue) -> str:
    if value is None:
        return MISSING_TEXT
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def best_column_ids(
    values: Sequence[float | None], ids: Sequence[str], higher_is_better: bool | None
) -> tuple[str, ...]:
    """The ids holding the best value: all of them on a tie, none without a direction.

    Missing values are never best; a row where only one GPU has a value marks
    that one.
    """
    if higher_is_better is None:
        return ()
    present = [
        (value, col_id) for value, col_id in zip(values, ids, strict=True) if value is not None
    ]
    if not present:
        return ()
    pick = max if higher_is_better else min
    best_value = pick(value for value, _ in present)
    return tuple(
        col_id
        for value, col_id in present
        if math.isclose(value, best_value, rel_tol=TIE_REL_TOL, abs_tol=0.0)
    )


def ratio_to(value: float | None, baseline: float | None) -> float | None:
    if value is None or baseline is None or baseline == 0:
        return None
    return value / baseline


def _json_number(value: float | None) -> float | int | None:
    if value is None or not math.isfinite(value):
        return None
    rounded = round(value, 6)
    return int(rounded) if rounded.is_integer() and abs(rounded) < 1e15 else rounded


def _json_text(value: TextValue) -> str | bool | int | None:
    return value


@dataclass(frozen=True, slots=True)
class Comparison:
    """The side-by-side table of 2-6 GPUs (plus an optional measured column)."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    baseline_id: str | None = None

    # lookups ---------------------------------------------------------------
    @property
    def gpu_columns(self) -> tuple[Column, ...]:
        return tuple(column for column in self.columns if not column.measured)

    @property
    def measured_column(self) -> Column | None:
        return next((column for column in self.columns if column.measured), None)

    def column_index(self, column_id: str) -> int:
        for index, column in enumerate(self.columns):
            if column.id == column_id:
                return index
        raise KeyError(column_id)

    def row(self, key: str) -> Row:
        for row in self.rows:
            if row.key == key:
                return row
        raise KeyError(key)

    def groups(self) -> list[tuple[MetricGroup, list[Row]]]:
        """Rows grouped, groups in :class:`MetricGroup` order, empty groups dropped."""
        grouped: list[tuple[MetricGroup, list[Row]]] = []
        for group in MetricGroup:
            rows = [row for row in self.rows if row.group is group]
            if rows:
                grouped.append((group, rows))
        return grouped

    def best(self, key: str) -> str | list[str] | None:
        """The best GPU id for a figure, a list of ids on a tie, or None."""
        ids = self.row(key).best_ids
        if not ids:
            return None
        return ids[0] if len(ids) == 1 else list(ids)

    def is_best(self, row: Row, column_index: int) -> bool:
        return self.columns[column_index].id in row.best_ids

    # cell text -------------------------------------------------------------
    def value_text(self, row: Row, column_index: int) -> str:
        """The cell's value as text (never a ratio)."""
        column = self.columns[column_index]
        value = row.values[column_index]
        if row.kind is RowKind.TEXT:
            if column.measured and value is None:
                return ""
            return format_text_value(_as_text(value))
        if value is None:
            return NOT_MEASURED_TEXT if column.measured else MISSING_TEXT
        assert isinstance(value, (int, float))
        text = METRICS[row.key].format(float(value))
        if abs(float(value)) > 0 and float(text.replace(",", "")) == 0:
            # A measured CPU's 0.046 TFLOPS read "0.0": two significant digits instead.
            return f"{float(value):.2g}"
        return text

    def cell_text(self, row: Row, column_index: int) -> str:
        """What the table shows: the value, in baseline mode with its ratio ("835.5 (×2.7)").

        The baseline column itself, text rows, missing values and values
        without a ratio (the baseline lacks the figure) show the value alone.
        """
        column = self.columns[column_index]
        if (
            self.baseline_id is None
            or row.kind is RowKind.TEXT
            or not row.ratios
            or column.id == self.baseline_id
            or row.values[column_index] is None
            or row.ratios[column_index] is None
        ):
            return self.value_text(row, column_index)
        ratio = format_ratio(row.ratios[column_index])
        return f"{self.value_text(row, column_index)} ({ratio})"

    # exports ---------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The table as JSON-ready data.

        Shape: ``{"gpus": [{"id", "name", "metrics": {key: value|null},
        "specs": {key: text|bool|null}, "ratios"?: {key: ratio|null}}],
        "best": {metric_key: id | [ids] | null}, "baseline": id|null,
        "units": {metric_key: unit}, "measured"?: {"label", "catalog_id",
        "metrics"}}``. ``ratios`` is present only with a baseline and
        ``measured`` only with a measured series.
        """
        metric_rows = [row for row in self.rows if row.kind is RowKind.METRIC]
        text_rows = [row for row in self.rows if row.kind is RowKind.TEXT]
        gpus: list[dict[str, Any]] = []
        measured: dict[str, Any] | None = None
        for index, column in enumerate(self.columns):
            metrics = {row.key: _json_number(_as_float(row.values[index])) for row in metric_rows}
            if column.measured:
                measured = {
                    "label": column.name,
                    "metrics": {key: value for key, value in metrics.items() if value is not None},
                }
                continue
            gpu: dict[str, Any] = {
                "id": column.id,
                "name": column.name,
                "metrics": metrics,
                "specs": {row.key: _json_text(_as_text(row.values[index])) for row in text_rows},
            }
            if self.baseline_id is not None:
                gpu["ratios"] = {
                    row.key: _json_number(row.ratios[index]) for row in metric_rows if row.ratios
                }
            gpus.append(gpu)
        data: dict[str, Any] = {
            "gpus": gpus,
            "best": {row.key: self.best(row.key) for row in metric_rows},
            "baseline": self.baseline_id,
            "units": {row.key: row.unit for row in metric_rows},
        }
        if measured is not None:
            data["measured"] = measured
        return data

    def to_csv(self, stale: Mapping[tuple[str, str], str] | None = None) -> str:
        """The table as CSV: one line per figure, one value column per GPU.

        Columns: ``group, key, label, unit``, one per GPU (raw values, empty
        where missing), then with a baseline one ``NAME / BASELINE`` ratio
        column per other GPU, then ``best`` (ids joined by ";"); given
        ``stale`` (:func:`gpudesk.compare.stale.stale_marks`), a last
        ``out_of_date`` column says in words which GPUs' value in the row may
        be old ("RTX 4090: price from 2022-10, ..."; "; " between GPUs). No cell
        can become a spreadsheet formula (:func:`gpudesk.csv_text.safe_cell`).
        """
        baseline = self._baseline_column()
        ratio_indices = [
            index
            for index, column in enumerate(self.columns)
            if baseline is not None and column.id != baseline.id
        ]
        header = ["group", "key", "label", "unit"]
        header += [column.name for column in self.columns]
        if baseline is not None:
            header += [f"{self.columns[index].name} / {baseline.name}" for index in ratio_indices]
        header.append("best")
        if stale is not None:
            header.append("out_of_date")
        lines: list[list[str]] = [header]
        for row in self.rows:
            line: list[str] = [row.group.value, row.key, row.label, row.unit]
            line += [_csv_value(value) for value in row.values]
            if baseline is not None:
                line += [
                    _csv_value(row.ratios[index]) if row.ratios else "" for index in ratio_indices
                ]
            line.append(";".join(row.best_ids))
            if stale is not None:
                line.append("; ".join(self._stale_words(row, stale)))
            lines.append(line)
        return csv_text(lines)

    def to_text(self, stale: Mapping[tuple[str, str], str] | None = None) -> str:
        """The table as aligned plain text (Copy as text), best values marked with "*".

        ``stale`` (:func:`gpudesk.compare.stale.stale_marks`) marks a price or
        rate that may be old with the sign, as on screen, and a line under the
        table says why in words.
        """
        stale = stale or {}
        header = ["", *(column.name for column in self.columns)]
        lines: list[list[str]] = []
        for group, all_rows in self.groups():
            rows = [row for row in all_rows if not row.is_empty]
            if not rows:
                continue
            lines.append([group.value.upper(), *([""] * len(self.columns))])
            for row in rows:
                cells = []
                for index in range(len(self.columns)):
                    text = self.cell_text(row, index)
                    if (row.key, self.columns[index].id) in stale:
                        text = f"{STALE_SIGN} {text}"
                    if self.is_best(row, index):
                        text += " *"
                    cells.append(text)
                lines.append([f"  {row.header}", *cells])
        widths = [
            max(len(line[index]) for line in [header, *lines]) for index in range(len(header))
        ]

        def render(line: list[str]) -> str:
            first = line[0].ljust(widths[0])
            rest = [cell.rjust(width) for cell, width in zip(line[1:], widths[1:], strict=True)]
            return "  ".join([first, *rest]).rstrip()

        out = [render(header)]
        out += [render(line) for line in lines]
        baseline = self._baseline_column()
        notes = ["* best in row"]
        if baseline is not None:
            notes.append(f"×N: ratio to {baseline.name} (baseline)")
        out.append("")
        out.append("; ".join(notes))
        for row in self.rows:
            for words in self._stale_words(row, stale):
                out.append(f"{STALE_SIGN} {row.label}, {words}")
        return "\n".join(out) + "\n"

    def _stale_words(self, row: Row, stale: Mapping[tuple[str, str], str]) -> list[str]:
        """ "GPU name: the warning" for each column whose value in ``row`` may be old."""
        return [
            f"{column.name}: {stale[(row.key, column.id)]}"
            for column in self.columns
            if (row.key, column.id) in stale
        ]

    def _baseline_column(self) -> Column | None:
        if self.baseline_id is None:
            return None
        return self.columns[self.column_index(self.baseline_id)]


def _as_float(value: float | TextValue) -> float | None:
    if value is None or isinstance(value, (bool, str)):
        return None
    return float(value)


def _as_text(value: float | TextValue) -> TextValue:
    if isinstance(value, float):
        return str(value)
    return value


def _csv_value(value: float | TextValue) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        number = _json_number(value)
        return "" if number is None else str(number)
    return str(value)


def _metric_row(
    metric: Metric,
    entries: Sequence[CatalogEntry],
    columns: Sequence[Column],
    measured: MeasuredSeries | None,
    baseline_index: int | None,
) -> Row:
    values: list[float | None] = [metric.value(entry) for entry in entries]
    if measured is not None:
        values.append(measured.values.get(metric.key))
    gpu_ids = [column.id for column in columns[: len(entries)]]
    direction = None if metric.key in NO_BEST_KEYS else metric.higher_is_better
    best = best_column_ids(values[: len(entries)], gpu_ids, direction)
    ratios: tuple[float | None, ...] = ()
    if baseline_index is not None and metric.key not in NO_RATIO_KEYS:
        base = values[baseline_index]
        ratios = tuple(ratio_to(value, base) for value in values)
    return Row(
        key=metric.key,
        label=metric.label,
        unit=metric.unit,
        group=metric.group,
        kind=RowKind.METRIC,
        values=tuple(values),
        best_ids=best,
        ratios=ratios,
    )


def build_comparison(
    entries: Sequence[CatalogEntry],
    *,
    baseline_id: str | None = None,
    measured: MeasuredSeries | None = None,
    extra_rows: Sequence[Row] = (),
) -> Comparison:
    """The side-by-side table of ``entries`` in the given order.

    Args:
        entries: the compared GPUs (the CLI and view pass 2-6; any number works).
        baseline_id: one of the entries' ids; the others become ratios to it.
        measured: an extra "this machine (measured)" column.
        extra_rows: text rows computed elsewhere (the Plan tab's "tokens/s for ..."),
            one value per entry (and one for the measured column when there is one),
            shown last in their group.

    Raises:
        ValueError: ``baseline_id`` is not one of the entries, or an id repeats.
    """
    ids = [entry.id for entry in entries]
    if len(set(ids)) != len(ids):
        raise ValueError(f"a GPU is listed twice: {ids}")
    baseline_index: int | None = None
    if baseline_id is not None:
        if baseline_id not in ids:
            raise ValueError(f"baseline {baseline_id!r} is not one of the compared GPUs {ids}")
        baseline_index = ids.index(baseline_id)
    columns = [Column(entry.id, entry.name) for entry in entries]
    if measured is not None:
        columns.append(Column(MEASURED_COLUMN_ID, measured.label, measured=True))

    rows: list[Row] = []
    for group in MetricGroup:
        for field in TEXT_FIELDS:
            if field.group is not group:
                continue
            text_values: list[float | TextValue] = [field.value(entry) for entry in entries]
            if measured is not None:
                text_values.append(None)
            rows.append(Row(field.key, field.label, "", group, RowKind.TEXT, tuple(text_values)))
        for metric in METRICS.values():
            if metric.group is group:
                rows.append(_metric_row(metric, entries, columns, measured, baseline_index))
    for extra in extra_rows:
        if extra.kind is not RowKind.TEXT or len(extra.values) != len(columns):
            raise ValueError(f"extra row {extra.key!r} needs one text value per column")
        rows.append(extra)
    return Comparison(columns=tuple(columns), rows=tuple(rows), baseline_id=baseline_id)
