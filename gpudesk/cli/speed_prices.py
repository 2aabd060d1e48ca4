"""``speed``'s purchase prices: what the GPUs of each estimate cost to buy, tokens/s per
$1k, and the ``--sort`` and ``--max-price-usd`` that use them.

The price is the catalog's (``price_usd``, its kind and date) times the estimate's GPU
count; a system price (a whole computer: Apple silicon, DGX Spark) is the computer's.
An entry without a price says so (its ``price_unavailable`` reason where it has one)
and sorts after every priced one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpudesk.catalog.schema import CatalogEntry
    from gpudesk.speed.estimate import SpeedEstimate

#: ``speed --sort``: the ranking's own order, USD per tokens/s (cheapest throughput
#: first), or the purchase price (cheapest first).
SORT_KEYS = ("tokens_s", "usd_per_tokens_s", "price")
#: The highest ``--max-price-usd`` taken: more than any catalog entry's price × 64 GPUs.
MAX_PRICE_USD = 100_000_000.0


@dataclass(frozen=True)
class PurchasePrice:
    """What the GPUs of one estimate cost to buy, by the catalog's price."""

    #: one GPU's (or one system's) catalog price; None: the catalog has none
    usd_per_gpu: float | None
    #: ``usd_per_gpu`` × the estimate's GPU count
    usd: float | None
    #: the catalog's price kind (launch_msrp, street, used, estimate, system)
    kind: str | None
    #: when the price was seen (ISO date)
    date: str | None
    #: tokens/s for every $1,000 of ``usd``
    tokens_per_s_per_kusd: float | None
    #: ``usd`` / tokens/s: what one token/s of this throughput costs to buy
    usd_per_tokens_s: float | None
    #: why there is no price (the catalog's statement), when there is none
    missing: str | None = None


def purchase_price(estimate: SpeedEstimate, entry: CatalogEntry | None) -> PurchasePrice:
    """The purchase price of ``estimate``'s GPUs (``entry`` is its catalog entry)."""
    unit = None if entry is None else entry.price_usd
    if entry is None or unit is None:
        reason = None
        if entry is not None and entry.price_unavailable is not None:
            reason = entry.price_unavailable.reason
        return PurchasePrice(None, None, None, None, None, None, reason or "no catalog price")
    total = float(unit) * estimate.count
    rate = estimate.tokens_per_s
    usable = math.isfinite(rate) and rate > 0
    return PurchasePrice(
        usd_per_gpu=float(unit),
        usd=total,
        kind=None if entry.price_kind is None else entry.price_kind.value,
        date=None if entry.price_date is None else entry.price_date.isoformat(),
        tokens_per_s_per_kusd=rate / (total / 1000.0) if usable else None,
        usd_per_tokens_s=total / rate if usable else None,
    )


def prices_for(
    results: Sequence[SpeedEstimate], entries: Mapping[str, CatalogEntry]
) -> dict[str, PurchasePrice]:
    """Each result's purchase price, by GPU id."""
    return {item.gpu_id: purchase_price(item, entries.get(item.gpu_id)) for item in results}


def sorted_results(
    results: Sequence[SpeedEstimate], prices: Mapping[str, PurchasePrice], key: str | None
) -> list[SpeedEstimate]:
    """``results`` in ``--sort key``'s order: the ranking's (``tokens_s`` or None), or
    cheapest first by USD per tokens/s or by price. Unpriced results follow the priced
    ones in the ranking's order; ties keep it too (the sort is stable)."""
    if key is None or key == "tokens_s":
        return list(results)
    if key not in SORT_KEYS:
        raise ValueError(f"unknown sort key {key!r}")

    def figure(item: SpeedEstimate) -> tuple[int, float]:
        price = prices[item.gpu_id]
        value = price.usd if key == "price" else price.usd_per_tokens_s
        return (1, 0.0) if value is None else (0, value)

    return sorted(results, key=figure)


def within_price(
    results: Sequence[SpeedEstimate], prices: Mapping[str, PurchasePrice], max_usd: float | None
) -> tuple[list[SpeedEstimate], list[str], list[str]]:
    """The results whose GPUs cost at most ``max_usd`` in all; the ids over it; and the
    ids left out because the catalog has no price to compare (None: all kept)."""
    if max_usd is None:
        return list(results), [], []
    kept: list[SpeedEstimate] = []
    over: list[str] = []
    unpriced: list[str] = []
    for item in results:
        usd = prices[item.gpu_id].usd
        if usd is None:
            unpriced.append(item.gpu_id)
        elif usd > max_usd:
            over.append(item.gpu_id)
        else:
            kept.append(item)
    return kept, over, unpriced


def price_json(price: PurchasePrice) -> dict[str, Any]:
    """The keys added to each ``speed --json`` result."""
    return {
        "purchase_usd": _rounded(price.usd),
        "purchase_usd_per_gpu": _rounded(price.usd_per_gpu),
        "purchase_price_kind": price.kind,
        "purchase_price_date": price.date,
        "purchase_price_missing": price.missing,
        "tokens_per_s_per_kusd": _rounded(price.tokens_per_s_per_kusd),
        "usd_per_tokens_s": _rounded(price.usd_per_tokens_s),
    }


def _rounded(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.6g}")


def price_cell(price: PurchasePrice) -> str:
    """The table's purchase price: ``$1,599``; a used-market price marked ``$75†`` (the
    table's footnote says what † means); ``no price`` where the catalog has none."""
    from gpudesk.cli.speed_output import USED_MARK

    if price.usd is None:
        return "no price"
    text = f"${price.usd:,.0f}"
    return text + USED_MARK if price.kind == "used" else text


def per_kusd_cell(price: PurchasePrice) -> str:
    """The table's tokens/s per $1k (``8.51``, ``16.7``, ``1,234``); ``n/a`` without a price."""
    value = price.tokens_per_s_per_kusd
    if value is None:
        return "n/a"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def max_price_argument(text: str) -> float:
    """``--max-price-usd``: a purchase price in USD above 0 (and at most 100 million)."""
    import argparse

    try:
        value = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a price in USD") from None
    if not (math.isfinite(value) and 0 < value <= MAX_PRICE_USD):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a price must be above 0 and at most {MAX_PRICE_USD:,.0f} USD"
        )
    return value


__all__ = [
    "MAX_PRICE_USD",
    "SORT_KEYS",
    "PurchasePrice",
    "max_price_argument",
    "per_kusd_cell",
    "price_cell",
    "price_json",
    "prices_for",
    "purchase_price",
    "sorted_results",
    "within_price",
]
