"""Which compared prices and rates may be out of date, in words.

The Compare tab marks these cells with a sign; its copied text and CSV say the
same in words, so a pasted or exported table does not pass an old price as new.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from gpudesk.catalog.prices import STALE_AFTER_MONTHS, is_stale, stale_note
from gpudesk.catalog.rate_book import RATE_STALE_AFTER_DAYS, lowest_on_demand_rate
from gpudesk.catalog.schema import CatalogEntry

#: (row key, GPU id) -> the warning in words
StaleMarks = dict[tuple[str, str], str]


def stale_marks(entries: Sequence[CatalogEntry], today: dt.date) -> StaleMarks:
    """(row key, GPU id) -> the warning in words, for each price or rate that may be old.

    The purchase price's date row ("Price seen") carries the price's warning and
    the "Cloud price" row its rate's: the same limits as the catalog and the
    details pane (12 months, 90 days).
    """
    marks: StaleMarks = {}
    for entry in entries:
        if entry.price_usd is not None and is_stale(entry.price_date, today):
            marks[("price_date", entry.id)] = (
                f"{stale_note('price', entry.price_date)} (over {STALE_AFTER_MONTHS} months old)"
            )
        rate = lowest_on_demand_rate(entry)
        if rate is not None and (
            rate.date is None or (today - rate.date).days > RATE_STALE_AFTER_DAYS
        ):
            marks[("cloud_hourly_usd", entry.id)] = (
                f"{stale_note('rate', rate.date)} (over {RATE_STALE_AFTER_DAYS} days old)"
            )
    return marks
