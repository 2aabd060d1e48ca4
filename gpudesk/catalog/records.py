"""Plain records of entries for JSON and CSV output."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from gpudesk.catalog.metrics import DERIVED_METRICS, derived_values
from gpudesk.catalog.rate_book import lowest_on_demand_rate
from gpudesk.catalog.schema import (
    DEPRECATED_RECORD_FIELDS,
    ENTRY_FIELDS,
    LEGACY_CLOUD_FIELDS,
    CatalogEntry,
)
from gpudesk.csv_text import csv_text

RECORD_COLUMNS: tuple[str, ...] = (
    ENTRY_FIELDS + LEGACY_CLOUD_FIELDS + DEPRECATED_RECORD_FIELDS + tuple(DERIVED_METRICS)
)


def entry_record(entry: CatalogEntry) -> dict[str, Any]:
    """The entry's fields (JSON types), the default cloud rate, then derived metrics.

    ``cloud_hourly_usd`` / ``_source`` / ``_date`` predate ``cloud_rates``;
    they stay in the record (scripts read them) as the default on-demand rate, as
    ``device_type`` (deprecated, beside ``kind``) does for a release.
    """
    record: dict[str, Any] = entry.model_dump(mode="json")
    rate = lowest_on_demand_rate(entry)
    rate_date = None if rate is None else rate.date
    record["cloud_hourly_usd"] = None if rate is None else rate.usd_per_gpu_hour
    record["cloud_hourly_source"] = None if rate is None else rate.source
    record["cloud_hourly_date"] = None if rate_date is None else rate_date.isoformat()
    for key, value in derived_values(entry).items():
        record[key] = None if value is None else round(value, 4)
    return record


def entries_csv(entries: Sequence[CatalogEntry]) -> str:
    """CSV with one row per entry; lists are joined with ' | '; no cell is a formula."""
    rows: list[Iterable[str]] = [RECORD_COLUMNS]
    for entry in entries:
        record = entry_record(entry)
        rows.append([_csv_cell(record.get(column)) for column in RECORD_COLUMNS])
    return csv_text(rows)


def _csv_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " | ".join(_csv_item(item) for item in value)
    if isinstance(value, dict) and "reason" in value:  # "reason (as of 2026-12-02)"
        return f"{value.get('reason')} (as of {value.get('date')})"
    if isinstance(value, dict):  # the interconnect: "kind=nvlink; topology=switch; ..."
        return "; ".join(f"{key}={item}" for key, item in value.items() if item is not None)
    return str(value)


def _csv_item(item: object) -> str:
    """One list item; a cloud rate reads "Lambda on_demand 2.99 USD/h 2026-11-20 <url>"."""
    if isinstance(item, dict):
        parts = (
            item.get("provider"),
            item.get("kind"),
            f"{item['usd_per_gpu_hour']} USD/h" if "usd_per_gpu_hour" in item else None,
            item.get("date"),
            item.get("source"),
        )
        return " ".join(str(part) for part in parts if part)
    return str(item)
