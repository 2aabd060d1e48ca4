"""The catalog table's columns and a precomputed index for fast filtering and sorting.

Qt-free on purpose: the table model and its proxy only read what is computed
here once per catalog load, so filtering or sorting 10,000 rows is a few list
passes instead of one Python call per row and per comparison.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import Enum

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.names import KIND_LABELS, short_name, status_words
from gpudesk.catalog.prices import entry_price_label, is_stale, stale_note
from gpudesk.catalog.query import (
    CatalogFilter,
    FilterColumns,
    NameRanking,
    name_key,
)
from gpudesk.catalog.rate_book import RATE_STALE_AFTER_DAYS, distribution_words, rate_summary
from gpudesk.catalog.schema import CatalogEntry, Kind, Status
from gpudesk.compare.limits import MAX_COMPARED
from gpudesk.units import VENDOR_GB_IS_GIB

MISSING_TEXT = "n/a"


class ColumnKind(Enum):
    COMPARE = "compare"
    TEXT = "text"
    NUMBER = "number"
    FLAG = "flag"


SortKey = float | str


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the catalog table.

    Attributes:
        key: stable name (settings, tests): a METRICS key, a field name, or "compare".
        header: header text; may hold a line break before the unit.
        tooltip: the full header with its unit.
        kind: how the column aligns, formats and sorts.
        display: the cell text, None when the value is missing ("n/a").
        sort_key: the value the column sorts on, None when missing.
        visible_by_default: shown on first start.
        note: what the header's tooltip adds to ``tooltip`` (memory's unit, explained).
    """

    key: str
    header: str
    tooltip: str
    kind: ColumnKind
    display: Callable[[CatalogEntry], str | None]
    sort_key: Callable[[CatalogEntry], SortKey | None]
    visible_by_default: bool = True
    note: str = ""

    @property
    def numeric(self) -> bool:
        return self.kind is ColumnKind.NUMBER

    @property
    def header_tooltip(self) -> str:
        """The header's tooltip: the full header with its unit, and the note if any."""
        return f"{self.tooltip}\n{self.note}" if self.note else self.tooltip


#: Two-line headers where "label (unit)" would make a column too wide; the
#: tooltip keeps the full METRICS header.
_SHORT_HEADERS = {
    "fp16_tflops": "FP16 shader\n(TFLOPS)",
    "tf32_tensor_tflops": "TF32 tensor\n(dense TFLOPS)",
    # "dense" stays in the header: sparse figures are never shown in this table.
    "bf16_tensor_tflops": "BF16 dense\n(TFLOPS)",
    "fp16_tensor_tflops": "FP16 dense\n(TFLOPS)",
    "fp8_tensor_tflops": "FP8 tensor\n(dense TFLOPS)",
    "int8_tensor_tops": "INT8 tensor\n(dense TOPS)",
    "fp16_tensor_tflops_per_kusd": "FP16 tensor\n(dense TFLOPS/1k USD)",
    "memory_gb_per_kusd": "Memory\n(GiB/1k USD)",
    "fp32_tflops_per_w": "FP32 per W\n(TFLOPS/W)",
    "fp16_tensor_tflops_per_w": "FP16 tensor\nper W (dense TFLOPS/W)",
    "l2_cache_mb": "L2 cache\n(MB)",
    "l3_cache_mb": "L3 cache\n(MB)",
    "shader_cores": "Shader\ncores",
    "boost_clock_mhz": "Boost clock\n(MHz)",
    "cloud_hourly_usd": "Cloud rate\n(USD/h)",
    "price_usd": "Price\n(USD)",
}


#: Where a user sets the catalog's memory beside a vendor's "80 GB": one unit, explained.
MEMORY_AS_SOLD_TIP = (
    f"The memory as sold, in GiB (2³⁰ bytes): {VENDOR_GB_IS_GIB}, the unit Will it fit?, "
    "the Devices tab and the Fleet tab count in."
)
#: The tooltips that add the explanation to the metric's own header.
_TOOLTIP_NOTES = {"memory_gb": MEMORY_AS_SOLD_TIP, "memory_gb_per_kusd": MEMORY_AS_SOLD_TIP}


def _metric_column(key: str, *, visible: bool = True) -> Column:
    metric = METRICS[key]
    header = _SHORT_HEADERS.get(key) or (
        f"{metric.label}\n({metric.unit})" if metric.unit else metric.label
    )

    def display(entry: CatalogEntry) -> str | None:
        value = metric.value(entry)
        return None if value is None else metric.format(value)

    return Column(
        key=key,
        header=header,
        tooltip=metric.header,
        kind=ColumnKind.NUMBER,
        display=display,
        sort_key=metric.value,
        visible_by_default=visible,
        note=_TOOLTIP_NOTES.get(key, ""),
    )


def _text_column(
    key: str, header: str, read: Callable[[CatalogEntry], str | None], *, visible: bool = True
) -> Column:
    def sort_key(entry: CatalogEntry) -> str | None:
        value = read(entry)
        return None if value is None else value.casefold()

    return Column(key, header, header, ColumnKind.TEXT, read, sort_key, visible)


def _flag_column(
    key: str, header: str, tooltip: str, read: Callable[[CatalogEntry], bool | None]
) -> Column:
    def display(entry: CatalogEntry) -> str | None:
        value = read(entry)
        return None if value is None else ("yes" if value else "no")

    def sort_key(entry: CatalogEntry) -> float | None:
        value = read(entry)
        return None if value is None else float(value)

    return Column(key, header, tooltip, ColumnKind.FLAG, display, sort_key)


def _mig_display(entry: CatalogEntry) -> str | None:
    count = entry.mig_max_instances
    if count is None:
        return None
    return f"{count}×" if count > 1 else "no"


def _mig_sort(entry: CatalogEntry) -> float | None:
    count = entry.mig_max_instances
    return None if count is None else float(count)


def _no_text(_entry: CatalogEntry) -> str | None:
    return ""


def _no_key(_entry: CatalogEntry) -> SortKey | None:
    return 0.0


def _from_rate(entry: CatalogEntry) -> float | None:
    rate = rate_summary(entry).lowest
    return None if rate is None else rate.usd_per_gpu_hour


def _from_rate_display(entry: CatalogEntry) -> str | None:
    rate = rate_summary(entry).lowest
    if rate is None:
        return None
    text = f"{rate.usd_per_gpu_hour:,.2f}"
    # Stale is marked with an icon in the cell and words in its tooltip, not colour alone.
    return f"⚠ {text}" if rate.is_stale(dt.date.today()) else text


#: The lowest on-demand rate across providers (SkyPilot's snapshots and the entry's own).
FROM_RATE_COLUMN = Column(
    key="from_usd_per_gpu_hour",
    header="From\n(USD/GPU-h)",
    tooltip="Lowest on-demand cloud rate per GPU-hour across providers (⚠: over 90 days old)",
    kind=ColumnKind.NUMBER,
    display=_from_rate_display,
    sort_key=_from_rate,
)


def from_rate_tooltip(entry: CatalogEntry, today: dt.date) -> str | None:
    """The "From" cell's tooltip: provider, region, date, median, and staleness in words."""
    summary = rate_summary(entry)
    rate = summary.lowest
    if rate is None:
        return None
    words = distribution_words(summary)
    if rate.is_stale(today):
        words += f"\n⚠ {stale_note('rate', rate.date)} (over {RATE_STALE_AFTER_DAYS} days old)"
    return words


COMPARE_COLUMN = Column(
    key="compare",
    header="✓",
    tooltip=f"Compare: tick up to {MAX_COMPARED} GPUs (Ctrl+D adds the selected rows)",
    kind=ColumnKind.COMPARE,
    display=_no_text,
    sort_key=_no_key,  # the live selection decides; see CatalogIndex.order
)

COLUMNS: tuple[Column, ...] = (
    COMPARE_COLUMN,
    Column(
        "name",
        "Name",
        "Name (without the vendor; the tooltip and details show the full name)",
        ColumnKind.TEXT,
        short_name,
        lambda entry: short_name(entry).casefold(),
    ),
    _text_column("vendor", "Vendor", lambda entry: entry.vendor),
    _text_column(
        "segment",
        "Segment",
        lambda entry: entry.segment.value.capitalize() if entry.segment else None,
    ),
    _text_column("architecture", "Architecture", lambda entry: entry.architecture),
    _text_column("kind", "Kind", lambda entry: KIND_LABELS[entry.kind], visible=False),
    _text_column("status", "Status", status_words, visible=False),
    # What an ML buyer compares first comes first, so it is on screen at 1366 px:
    # memory, bandwidth, dense BF16/FP16 tensor, price and rate; then the rest.
    _metric_column("memory_gb"),
    _text_column("memory_type", "Memory type", lambda entry: entry.memory_type, visible=False),
    _metric_column("bandwidth_gbs"),
    _metric_column("bf16_tensor_tflops"),
    _metric_column("fp16_tensor_tflops"),
    _metric_column("price_usd"),
    FROM_RATE_COLUMN,
    _metric_column("fp16_tensor_tflops_per_kusd"),
    _metric_column("release_year"),
    _metric_column("tdp_w"),
    _metric_column("fp32_tflops"),
    _metric_column("tf32_tensor_tflops", visible=False),
    _metric_column("fp8_tensor_tflops", visible=False),
    _metric_column("int8_tensor_tops", visible=False),
    _metric_column("fp16_tflops", visible=False),
    _metric_column("fp64_tflops"),
    _metric_column("memory_gb_per_kusd", visible=False),
    _metric_column("fp16_tensor_tflops_per_w", visible=False),
    _metric_column("fp32_tflops_per_w", visible=False),
    _metric_column("cloud_hourly_usd", visible=False),
    _metric_column("l2_cache_mb", visible=False),
    _metric_column("l3_cache_mb", visible=False),
    _metric_column("shader_cores", visible=False),
    _metric_column("boost_clock_mhz", visible=False),
    _flag_column("ecc", "ECC", "Error-correcting memory", lambda entry: entry.ecc),
    Column(
        "mig",
        "MIG",
        "Multi-Instance GPU: the most instances one card splits into",
        ColumnKind.FLAG,
        _mig_display,
        _mig_sort,
    ),
    _flag_column("nvlink", "NVLink", "NVLink between cards", lambda entry: entry.nvlink),
)

COLUMN_KEYS: tuple[str, ...] = tuple(column.key for column in COLUMNS)

#: Default columns a narrow table (a 1366-px laptop, the default 1400-px window) leaves
#: out on first start, so the figures above stay on screen: the filter panel and the
#: details pane say the segment and the year. View → Columns brings them back.
NARROW_HIDDEN: tuple[str, ...] = ("segment", "release_year")
#: The last column that must be on screen at first start (through the cheapest rate).
KEY_COLUMNS_END = "from_usd_per_gpu_hour"


def column_index(key: str) -> int:
    return COLUMN_KEYS.index(key)


PRICE_COLUMN_INDEX = COLUMN_KEYS.index("price_usd")
#: Marks a figure that may be out of date, beside the words that say why.
STALE_SIGN = "⚠"
FROM_RATE_COLUMN_INDEX = COLUMN_KEYS.index("from_usd_per_gpu_hour")


def price_tooltip(entry: CatalogEntry, today: dt.date) -> str | None:
    """The price cell's tooltip: kind, date, range note and a staleness warning."""
    if entry.price_usd is None:
        return None
    kind = entry_price_label(entry)
    seen = entry.price_date.isoformat() if entry.price_date else "undated"
    text = f"{kind}, seen {seen}"
    if entry.price_note:
        text += f"\n{entry.price_note}"
    if is_stale(entry.price_date, today):
        text += f"\n⚠ {stale_note('price', entry.price_date)}"
    return text


class CatalogIndex:
    """Display strings and sort keys of every entry, computed once.

    The index answers two questions fast: which rows a filter keeps
    (:meth:`matching`: :class:`~gpudesk.catalog.query.FilterColumns`, the rule
    :meth:`CatalogFilter.matches` uses too) and in
    which order rows go for a column (:meth:`order`, missing values last in
    both directions).
    """

    def __init__(self, entries: Sequence[CatalogEntry], today: dt.date | None = None) -> None:
        today = today or dt.date.today()
        self.entries: list[CatalogEntry] = list(entries)
        #: per row: the price's kind and date in words, None without a price
        self.price_tooltips: list[str | None] = [price_tooltip(e, today) for e in self.entries]
        #: per row: the lowest cloud rate's provider, region, date and median in words
        self.rate_tooltips: list[str | None] = [from_rate_tooltip(e, today) for e in self.entries]
        #: per row: the price is older than the staleness limit
        self.price_stale: list[bool] = [
            entry.price_usd is not None and is_stale(entry.price_date, today)
            for entry in self.entries
        ]
        self.ids: list[str] = [entry.id for entry in self.entries]
        #: cell text per row and column; None where the value is missing.
        self.cells: list[list[str | None]] = [
            [column.display(entry) for column in COLUMNS] for entry in self.entries
        ]
        # A price over a year old: a sign in the cell, not its colour alone (words in
        # its tooltip: "⚠ price seen 2022-10-12, over 12 months ago ...").
        for row, stale in enumerate(self.price_stale):
            text = self.cells[row][PRICE_COLUMN_INDEX]
            if stale and text is not None:
                self.cells[row][PRICE_COLUMN_INDEX] = f"{STALE_SIGN} {text}"
        self._filter_columns = FilterColumns(self.entries)
        self._names = NameRanking([name_key(entry) for entry in self.entries], self.ids)
        self._orders: dict[tuple[int, bool], list[int]] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def vendors(self) -> list[str]:
        """Distinct vendor names as written in the data, sorted."""
        seen: dict[str, str] = {}
        for entry in self.entries:
            seen.setdefault(entry.vendor.lower(), entry.vendor)
        return sorted(seen.values(), key=str.casefold)

    def year_range(self) -> tuple[int, int] | None:
        return self._filter_columns.year_range()

    def kinds(self) -> list[Kind]:
        """The kinds in the data, in the schema's order."""
        present = {entry.kind for entry in self.entries}
        return [kind for kind in Kind if kind in present]

    def status_counts(self) -> dict[Status, int]:
        """How many entries have each status."""
        return dict(Counter(entry.status for entry in self.entries))

    def matching(
        self, criteria: CatalogFilter, only_ids: Collection[str] | None = None
    ) -> bytearray:
        """A 0/1 mask over the rows: 1 where ``criteria`` (and ``only_ids``) keep the row."""
        return self._filter_columns.mask(criteria, only_ids)

    def rank_by_name(self, rows: list[int], text: str) -> list[int]:
        """``rows`` with the best name matches for ``text`` first (see :class:`NameMatch`).

        The sort is stable: within one match class rows keep their given order.
        """
        if not text.strip():
            return rows
        return self._names.ranked(rows, text)

    def order(self, column: int, descending: bool, compare_ids: Collection[str] = ()) -> list[int]:
        """Every row in the column's sort order; rows without a value come last.

        Ties keep catalog order in both directions.
        """
        if COLUMNS[column].kind is ColumnKind.COMPARE:
            # The compare selection changes while the catalog does not: not cached.
            chosen = [row for row, entry_id in enumerate(self.ids) if entry_id in compare_ids]
            others = [row for row, entry_id in enumerate(self.ids) if entry_id not in compare_ids]
            return chosen + others if descending else others + chosen
        cached = self._orders.get((column, descending))
        if cached is not None:
            return cached
        read = COLUMNS[column].sort_key
        keys = [read(entry) for entry in self.entries]
        present = [row for row, key in enumerate(keys) if key is not None]
        missing = [row for row, key in enumerate(keys) if key is None]
        # Sorting row numbers by a key list allocates no tuples (no garbage
        # collector passes over a 10,000-entry heap), and Python's sort is
        # stable with reverse=True too: ties stay in catalog order.
        present.sort(key=keys.__getitem__, reverse=descending)  # type: ignore[arg-type]
        order = present + missing
        self._orders[(column, descending)] = order
        return order
