"""Plain records of entries for JSON and CSV output."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from gpudesk.catalog.metrics import DERIVED_METRICS, derived_values
from gpudesk.catalog.schema import ENTRY_FIELDS, CatalogEntry

RECORD_COLUMNS: tuple[str, ...] = ENTRY_FIELDS + tuple(DERIVED_METRICS)


def entry_record(entry: CatalogEntry) -> dict[str, Any]:
    """The entry's fields (JSON types) followed by its derived metrics."""
    record: dict[str, Any] = entry.model_dump(mode="json")
    for key, value in derived_values(entry).items():
        record[key] = None if value is None else round(value, 4)
    return record


def entries_csv(entries: Sequence[CatalogEntry]) -> str:
    """CSV with one row per entry; lists are joined with ' | '."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(RECORD_COLUMNS)
    for entry in entries:
        record = entry_record(entry)
        writer.writerow(_csv_cell(record.get(column)) for column in RECORD_COLUMNS)
    return buffer.getvalue()


def _csv_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " | ".join(str(item) for item in value)
    return str(value)
