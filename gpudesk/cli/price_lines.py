"""The cloud-rate lines that ``speed`` prints: cost at the lowest and the median rate.

A cost per 1M tokens (or per run) is linear in the GPU-hour price, so the figure
at the median provider's rate is the figure at the lowest rate scaled by
median / lowest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpudesk.catalog.rate_book import RateSummary, format_usd, rate_summary
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.cli.textwidth import wrap_paragraph
from gpudesk.speed.estimate import SpeedEstimate


def _scaled(value: float | None, summary: RateSummary) -> float | None:
    low, median = summary.lowest, summary.median_usd
    if value is None or low is None or median is None or low.usd_per_gpu_hour <= 0:
        return None
    return value * median / low.usd_per_gpu_hour


def rate_records(
    results: Iterable[SpeedEstimate], entries: Mapping[str, CatalogEntry]
) -> dict[str, dict[str, Any]]:
    """Per GPU: the lowest and median on-demand rates and the cost at each (JSON)."""
    records: dict[str, dict[str, Any]] = {}
    for item in results:
        entry = entries.get(item.gpu_id)
        if entry is None or item.gpu_id in records or item.usd_per_million_tokens_rent is None:
            continue
        summary = rate_summary(entry)
        low = summary.lowest
        if low is None or summary.median_usd is None:
            continue
        records[item.gpu_id] = {
            "lowest_on_demand": low.as_json(),
            "median_on_demand_usd_per_gpu_hour": round(summary.median_usd, 4),
            "providers": len(summary.on_demand),
            "usd_per_million_tokens_at_lowest": item.usd_per_million_tokens_rent,
            "usd_per_million_tokens_at_median": _scaled(item.usd_per_million_tokens_rent, summary),
            "usd_total_at_median": _scaled(item.usd_total_rent, summary),
        }
    return records


def rate_lines(
    results: Iterable[SpeedEstimate], entries: Mapping[str, CatalogEntry], *, limit: int = 3
) -> list[str]:
    """ "h100-sxm5 $/1M tokens: $0.12 at the lowest on-demand rate, $0.19 at the median
    (5 providers); lowest: Lambda us-east-1, 2026-11-30" for the first few GPUs."""
    lines: list[str] = []
    for gpu_id, record in list(rate_records(results, entries).items())[:limit]:
        low = record["lowest_on_demand"]
        at_low = record["usd_per_million_tokens_at_lowest"]
        at_median = record["usd_per_million_tokens_at_median"]
        if at_low is None or at_median is None:
            continue
        where = " ".join(part for part in (low["provider"], low["region"]) if part)
        count = record["providers"]
        line = (
            f"{gpu_id} $/1M tokens: {format_usd(at_low)} at the lowest on-demand rate, "
            f"{format_usd(at_median)} at the median ({count} provider{'s' if count != 1 else ''}); "
            f"lowest: {where}, {low['date'] or 'undated'}"
        )
        lines.append(wrap_paragraph(line, subsequent_indent="  "))
    return lines
