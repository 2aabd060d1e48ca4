"""Which catalog price to use, and when a price is too old to trust.

Prices move: a street price or a cloud rate older than a year says little
about today's market, so every view that shows one asks :func:`is_stale` and
words the warning with :func:`stale_note`.
"""

from __future__ import annotations

import datetime as dt

from gpudesk.catalog.schema import CatalogEntry, CloudRate, CloudRateKind, PriceKind

#: A price or rate seen longer ago than this many months is flagged.
STALE_AFTER_MONTHS = 12


def cloud_rates_of_kind(entry: CatalogEntry, kind: CloudRateKind) -> list[CloudRate]:
    """The entry's rates of one kind, lowest first (newest first among equal rates)."""
    rates = [rate for rate in entry.cloud_rates if rate.kind is kind]
    return sorted(rates, key=_rate_order)


def default_cloud_rate(entry: CatalogEntry) -> CloudRate | None:
    """The lowest on-demand rate: what ``cost`` and the speed model use by default.

    Spot and marketplace rates are cheaper but can vanish or be preempted, so
    they are shown beside the default and never chosen silently.
    """
    rates = cloud_rates_of_kind(entry, CloudRateKind.ON_DEMAND)
    return rates[0] if rates else None


def _rate_order(rate: CloudRate) -> tuple[float, int, str]:
    newest_first = -(rate.date.toordinal() if rate.date else 0)
    return (rate.usd_per_gpu_hour, newest_first, rate.provider.casefold())


def months_before(today: dt.date, months: int) -> dt.date:
    """The same day ``months`` calendar months earlier (clamped to the month's end)."""
    month_index = today.year * 12 + (today.month - 1) - months
    year, month = divmod(month_index, 12)
    month += 1
    next_month = dt.date(year + month // 12, month % 12 + 1, 1)
    last_day = (next_month - dt.timedelta(days=1)).day
    return dt.date(year, month, min(today.day, last_day))


def is_stale(seen: dt.date | None, today: dt.date, months: int = STALE_AFTER_MONTHS) -> bool:
    """True when ``seen`` is more than ``months`` calendar months before ``today``.

    An undated price is stale too: nothing says it is current.
    """
    if seen is None:
        return True
    return seen < months_before(today, months)


def stale_note(what: str, seen: dt.date | None) -> str:
    """The reader's warning, e.g. "price from 2024-03, may be out of date"."""
    if seen is None:
        return f"{what} undated, may be out of date"
    return f"{what} from {seen:%Y-%m}, may be out of date"


#: How each price kind reads in a sentence ("1,599 USD, launch list price (MSRP)").
PRICE_KIND_LABELS: dict[PriceKind, str] = {
    PriceKind.LAUNCH_MSRP: "launch list price (MSRP)",
    PriceKind.STREET: "street price",
    PriceKind.USED: "used-market price",
    PriceKind.ESTIMATE: "estimate",
    PriceKind.SYSTEM: "launch price of the whole computer",
}
#: The same in a table cell, where space is short.
PRICE_KIND_SHORT_LABELS: dict[PriceKind, str] = {
    PriceKind.LAUNCH_MSRP: "launch MSRP",
    PriceKind.STREET: "street",
    PriceKind.USED: "used",
    PriceKind.ESTIMATE: "estimate",
    PriceKind.SYSTEM: "system",
}


def price_kind_label(
    kind: PriceKind | str | None, *, short: bool = False, system: str | None = None
) -> str:
    """The words for a price kind (its enum or stored value); "price" when unknown.

    A ``system`` price names its computer (``system``, the entry's ``price_system``)
    so no one reads it as the chip's price: "system: Mac Studio (2023) ...", or
    "launch price of the whole computer: Mac Studio (2023) ...".
    """
    try:
        known = PriceKind(kind) if kind is not None else None
    except ValueError:
        known = None
    if known is None:
        return "price"
    words = (PRICE_KIND_SHORT_LABELS if short else PRICE_KIND_LABELS)[known]
    if known is PriceKind.SYSTEM and system:
        return f"{words}: {system}"
    return words


def entry_price_label(entry: CatalogEntry, *, short: bool = False) -> str:
    """:func:`price_kind_label` for an entry's price, naming the computer of a system price."""
    return price_kind_label(entry.price_kind, short=short, system=entry.price_system)
