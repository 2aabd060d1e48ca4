"""Cloud rates per GPU: the distribution across providers, and its history.

Rates come from SkyPilot's catalog snapshots (bundled, and any the user imported
with ``gpudesk prices update``) and, for providers SkyPilot lacks, from the
catalog entry's hand-entered ``cloud_rates`` (each with its page and date).

For one GPU, each provider counts once, at its lowest rate of a kind (a cloud
with 30 regions is not 30 votes): the *lowest*, *median* and *highest*
on-demand rates are taken over those per-provider rates. Marketplace rates
(host-set, e.g. Vast.ai) and spot rates are listed beside them, never mixed in.
The current rates of a cloud are those of the newest snapshot that has it.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpudesk.catalog.price_snapshots import (
    PriceDataError,
    PriceHistory,
    Snapshot,
    default_history_path,
    load_bundled_snapshots,
)
from gpudesk.catalog.prices import default_cloud_rate
from gpudesk.catalog.schema import CatalogEntry, CloudRate, CloudRateKind, Kind, Status
from gpudesk.catalog.skypilot import RATE_BASIS, TPU_RATE_BASIS, rate_basis, tpu_slice

#: A rate seen longer ago than this is marked stale.
RATE_STALE_AFTER_DAYS = 90


@dataclass(frozen=True)
class ProviderRate:
    """One provider's lowest rate of one kind for one GPU."""

    provider: str
    kind: str  # "on_demand", "spot" or "marketplace"
    usd_per_gpu_hour: float
    region: str
    date: dt.date | None
    instance_type: str  # "" for a hand-entered rate
    gpu_count: int  # GPUs in the instance (0 when not known)
    link: str
    origin: str  # "skypilot" or "catalog"
    #: how the figure was derived and where it came from (for "How these figures were sourced")
    provenance: str
    #: what one rate pays for: "GPU", or "chip" (a TPU slice's or a Trainium's chip)
    unit: str = "GPU"

    def is_stale(self, today: dt.date) -> bool:
        return self.date is None or (today - self.date).days > RATE_STALE_AFTER_DAYS

    @property
    def from_tpu_slice(self) -> bool:
        """True when the rate was divided from a Cloud TPU slice's price."""
        return self.origin == "skypilot" and tpu_slice(self.instance_type) is not None

    def words(self) -> str:
        """The rate as a person reads it: "$2.99/GPU-hour", or for a chip rented in a
        bigger unit "$2.70/chip-hour from tpu-v6e-8 at $21.60/hour, 8 chips"."""
        rate = f"{format_usd(self.usd_per_gpu_hour)}/{self.unit}-hour"
        divided = self.divided_from()
        return f"{rate} {divided}" if divided else rate

    def divided_from(self) -> str:
        """For a chip's rate divided from a bigger unit, what it was divided from:
        "from tpu-v6e-8 at $21.60/hour, 8 chips" ("" otherwise)."""
        if self.unit != "chip" or self.gpu_count < 2 or not self.instance_type:
            return ""
        whole = self.usd_per_gpu_hour * self.gpu_count
        return f"from {self.instance_type} at {format_usd(whole)}/hour, {self.gpu_count} chips"

    def as_json(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "kind": self.kind,
            "usd_per_gpu_hour": round(self.usd_per_gpu_hour, 4),
            "region": self.region,
            "date": None if self.date is None else self.date.isoformat(),
            "instance_type": self.instance_type or None,
            "gpu_count": self.gpu_count or None,
            "source": self.link,
            "origin": self.origin,
            "provenance": self.provenance,
            "unit": self.unit,
            "words": self.words(),
        }


@dataclass(frozen=True)
class RateSummary:
    """The rates for one GPU: per provider, and the on-demand distribution."""

    gpu_id: str
    on_demand: tuple[ProviderRate, ...]  # one per provider, lowest first
    spot: tuple[ProviderRate, ...]
    marketplace: tuple[ProviderRate, ...]

    @property
    def lowest(self) -> ProviderRate | None:
        return self.on_demand[0] if self.on_demand else None

    @property
    def highest(self) -> ProviderRate | None:
        return self.on_demand[-1] if self.on_demand else None

    @property
    def median_usd(self) -> float | None:
        if not self.on_demand:
            return None
        return float(statistics.median(rate.usd_per_gpu_hour for rate in self.on_demand))

    @property
    def median_rate(self) -> ProviderRate | None:
        """The provider at the median (the lower middle one for an even count)."""
        if not self.on_demand:
            return None
        return self.on_demand[(len(self.on_demand) - 1) // 2]

    @property
    def lowest_spot(self) -> ProviderRate | None:
        return self.spot[0] if self.spot else None

    @property
    def lowest_any(self) -> ProviderRate | None:
        """The lowest rate of any kind that rents a whole GPU on demand or from a host."""
        pool = [*self.on_demand, *self.marketplace]
        return min(pool, key=lambda rate: rate.usd_per_gpu_hour) if pool else None

    @property
    def date(self) -> dt.date | None:
        dates = [rate.date for rate in (*self.on_demand, *self.marketplace) if rate.date]
        return max(dates) if dates else None

    @property
    def rates(self) -> tuple[ProviderRate, ...]:
        """Every rate, on-demand first, then marketplace, then spot."""
        return (*self.on_demand, *self.marketplace, *self.spot)

    @property
    def unit(self) -> str:
        """What the rates pay for: "chip" when any is per chip, else "GPU"."""
        return "chip" if any(rate.unit == "chip" for rate in self.rates) else "GPU"

    @property
    def basis(self) -> str:
        """How a rate per unit is made from a listed price (said beside the rates)."""
        if any(rate.from_tpu_slice for rate in self.rates):
            return TPU_RATE_BASIS
        if self.unit == "chip":
            return (
                "instance price divided by its chip count; the host's CPUs and memory are included"
            )
        return RATE_BASIS

    def as_json(self) -> dict[str, object]:
        median = self.median_usd
        return {
            "gpu": self.gpu_id,
            "lowest_on_demand": None if self.lowest is None else self.lowest.as_json(),
            "median_on_demand_usd_per_gpu_hour": None if median is None else round(median, 4),
            "highest_on_demand": None if self.highest is None else self.highest.as_json(),
            "lowest_spot": None if self.lowest_spot is None else self.lowest_spot.as_json(),
            "providers": [rate.as_json() for rate in self.rates],
            "provider_count": len({rate.provider for rate in self.rates}),
            "date": None if self.date is None else self.date.isoformat(),
            "rate_basis": self.basis,
            "unit": self.unit,
        }


@dataclass(frozen=True)
class HistoryPoint:
    """One snapshot's on-demand distribution for one GPU."""

    date: dt.date
    lowest: ProviderRate
    median_usd: float
    highest: ProviderRate
    providers: int
    lowest_spot: ProviderRate | None

    def as_json(self) -> dict[str, object]:
        return {
            "date": self.date.isoformat(),
            "lowest_usd_per_gpu_hour": round(self.lowest.usd_per_gpu_hour, 4),
            "lowest_provider": self.lowest.provider,
            "lowest_region": self.lowest.region,
            "median_usd_per_gpu_hour": round(self.median_usd, 4),
            "highest_usd_per_gpu_hour": round(self.highest.usd_per_gpu_hour, 4),
            "providers": self.providers,
            "lowest_spot_usd_per_gpu_hour": None
            if self.lowest_spot is None
            else round(self.lowest_spot.usd_per_gpu_hour, 4),
        }


@dataclass(frozen=True)
class RateFilter:
    """Narrow the rates: a region or provider (case-insensitive substring)."""

    region: str | None = None
    provider: str | None = None

    def keeps(self, rate: ProviderRate) -> bool:
        if self.region and self.region.casefold() not in rate.region.casefold():
            return False
        return not (self.provider and self.provider.casefold() not in rate.provider.casefold())


@dataclass
class RateBook:
    """Every snapshot, bundled and the user's, and the rates they give."""

    snapshots: list[Snapshot] = field(default_factory=list)
    #: one-line notes about data that could not be read (the rest still works)
    problems: list[str] = field(default_factory=list)
    _current_index: tuple[int, dict[str, list[ProviderRate]]] | None = field(
        default=None, repr=False, compare=False
    )

    @classmethod
    def load(cls, history_path: Path | None = None, *, include_user: bool = True) -> RateBook:
        """The bundled snapshots plus the user's history (``history_path`` or the default)."""
        book = cls()
        try:
            book.snapshots.extend(load_bundled_snapshots())
        except PriceDataError as exc:
            book.problems.append(str(exc))
        if include_user:
            try:
                book.snapshots.extend(
                    PriceHistory(history_path or default_history_path()).snapshots()
                )
            except PriceDataError as exc:
                book.problems.append(str(exc))
        return book

    # --- the current rates --------------------------------------------------

    def current_snapshots(self) -> dict[str, Snapshot]:
        """For each cloud, its newest snapshot, as of the newest snapshot's date."""
        date = self.catalog_date()
        return {} if date is None else self._clouds_as_of(date)

    def _clouds_as_of(self, date: dt.date) -> dict[str, Snapshot]:
        """Each cloud's newest snapshot on or before ``date`` (a later-loaded one wins
        a tie), leaving out a cloud last seen more than :data:`RATE_STALE_AFTER_DAYS`
        before it: an old file says what a cloud charged then, not now."""
        newest: dict[str, Snapshot] = {}
        for snapshot in self.snapshots:
            if snapshot.taken > date:
                continue
            for cloud in snapshot.sources:
                held = newest.get(cloud)
                if held is None or snapshot.taken >= held.taken:
                    newest[cloud] = snapshot
        return {
            cloud: snapshot
            for cloud, snapshot in newest.items()
            if (date - snapshot.taken).days <= RATE_STALE_AFTER_DAYS
        }

    def catalog_date(self) -> dt.date | None:
        """The newest snapshot's date."""
        return max((snapshot.taken for snapshot in self.snapshots), default=None)

    def summary(
        self,
        gpu_id: str,
        entry: CatalogEntry | None = None,
        rate_filter: RateFilter | None = None,
    ) -> RateSummary:
        rates = list(self._current_rates(gpu_id))
        sky_providers = {rate.provider.casefold() for rate in rates}
        if entry is not None:
            rates.extend(
                rate
                for rate in catalog_rates(entry)
                if _provider_key(rate.provider) not in {_provider_key(p) for p in sky_providers}
            )
        if rate_filter is not None:
            rates = [rate for rate in rates if rate_filter.keeps(rate)]
        return _summarise(gpu_id, rates)

    def summaries(self, entries: Iterable[CatalogEntry]) -> dict[str, RateSummary]:
        return {entry.id: self.summary(entry.id, entry) for entry in entries}

    def _current_rates(self, gpu_id: str) -> Iterable[ProviderRate]:
        # Built once per set of snapshots: the catalog table asks for every GPU.
        if self._current_index is None or self._current_index[0] != len(self.snapshots):
            by_gpu: dict[str, list[ProviderRate]] = {}
            for cloud, snapshot in self.current_snapshots().items():
                for gpu in {offer.gpu_id for offer in snapshot.offers if offer.cloud == cloud}:
                    by_gpu.setdefault(gpu, []).extend(_snapshot_rates(snapshot, gpu, cloud))
            self._current_index = (len(self.snapshots), by_gpu)
        return self._current_index[1].get(gpu_id, [])

    # --- history ----------------------------------------------------------------

    def history(self, gpu_id: str, rate_filter: RateFilter | None = None) -> list[HistoryPoint]:
        """One point per snapshot date that lists the GPU on demand, oldest first.

        A date's point uses the rates of every cloud as of that date (a cloud
        last seen up to :data:`RATE_STALE_AFTER_DAYS` earlier counts at its last rate).
        """
        points: list[HistoryPoint] = []
        dates = sorted({snapshot.taken for snapshot in self.snapshots})
        for date in dates:
            newest = self._clouds_as_of(date)
            if not any(s.taken == date for s in newest.values()):
                continue
            rates = [
                rate
                for cloud, snap in newest.items()
                for rate in _snapshot_rates(snap, gpu_id, cloud)
            ]
            if rate_filter is not None:
                rates = [rate for rate in rates if rate_filter.keeps(rate)]
            summary = _summarise(gpu_id, rates)
            if summary.lowest is None or summary.highest is None or summary.median_usd is None:
                continue
            if not any(rate.date == date for rate in summary.rates):
                continue  # nothing for this GPU changed hands that day
            points.append(
                HistoryPoint(
                    date=date,
                    lowest=summary.lowest,
                    median_usd=summary.median_usd,
                    highest=summary.highest,
                    providers=len(summary.on_demand),
                    lowest_spot=summary.lowest_spot,
                )
            )
        return points


def _provider_key(name: str) -> str:
    """ "Lambda", "Lambda Cloud" and "lambda" are one provider."""
    first = name.casefold().replace(".", " ").replace("(", " ").split()
    return first[0] if first else ""


def _snapshot_rates(snapshot: Snapshot, gpu_id: str, cloud: str) -> Iterable[ProviderRate]:
    source = snapshot.sources.get(cloud)
    offers = [offer for offer in snapshot.offers if offer.cloud == cloud and offer.gpu_id == gpu_id]
    where = (
        ""
        if source is None
        else (f"{source.path} at commit {source.commit[:12]}" if source.commit else source.link())
    )
    dated = "its commit's date" if snapshot.basis == "commit" else "the day the file was read"
    for offer in offers:
        listed = (
            f"{offer.instance_type} ({offer.gpu_count}x {offer.accelerator})"
            if offer.instance_type != offer.accelerator
            else f"{offer.accelerator} (a slice of {offer.gpu_count} chips)"
        )
        provenance = (
            f"SkyPilot catalog {where}: {listed} "
            f"${offer.price_usd:g}/h in {offer.region}; {rate_basis(offer)}; dated by {dated}"
        )
        link = "" if source is None else source.link()
        yield ProviderRate(
            offer.provider,
            offer.kind,
            offer.usd_per_gpu_hour,
            offer.region,
            snapshot.taken,
            offer.instance_type,
            offer.gpu_count,
            link,
            "skypilot",
            provenance,
            offer.unit,
        )
        spot = offer.spot_per_gpu_hour
        if spot is not None:
            yield ProviderRate(
                offer.provider,
                "spot",
                spot,
                offer.region,
                snapshot.taken,
                offer.instance_type,
                offer.gpu_count,
                link,
                "skypilot",
                provenance.replace(f"${offer.price_usd:g}/h", f"spot ${offer.spot_usd:g}/h"),
                offer.unit,
            )


def catalog_rates(entry: CatalogEntry) -> list[ProviderRate]:
    """The entry's hand-entered rates, each with its page and date."""
    return [
        ProviderRate(
            provider=rate.provider,
            kind=rate.kind.value,
            usd_per_gpu_hour=rate.usd_per_gpu_hour,
            region="",
            date=rate.date,
            instance_type="",
            gpu_count=0,
            link=rate.source or "",
            origin="catalog",
            provenance=(rate.note + "; " if rate.note else "")
            + f"catalog entry {entry.id}, entered by hand",
            unit=entry_rate_unit(entry),
        )
        for rate in entry.cloud_rates
    ]


def entry_rate_unit(entry: CatalogEntry) -> str:
    """What an entry's rates pay for: a GPU (GPUs and SoCs), or a chip (TPU, NPU, ASIC)."""
    return "GPU" if entry.kind in (Kind.GPU, Kind.SOC) else "chip"


def _summarise(gpu_id: str, rates: Sequence[ProviderRate]) -> RateSummary:
    def per_provider(kind: str) -> tuple[ProviderRate, ...]:
        best: dict[str, ProviderRate] = {}
        for rate in rates:
            if rate.kind != kind:
                continue
            key = _provider_key(rate.provider)
            held = best.get(key)
            if held is None or _better(rate, held):
                best[key] = rate
        return tuple(
            sorted(best.values(), key=lambda r: (r.usd_per_gpu_hour, r.provider.casefold()))
        )

    return RateSummary(
        gpu_id=gpu_id,
        on_demand=per_provider(CloudRateKind.ON_DEMAND.value),
        spot=per_provider(CloudRateKind.SPOT.value),
        marketplace=per_provider(CloudRateKind.MARKETPLACE.value),
    )


def _better(rate: ProviderRate, held: ProviderRate) -> bool:
    if rate.usd_per_gpu_hour != held.usd_per_gpu_hour:
        return rate.usd_per_gpu_hour < held.usd_per_gpu_hour
    return (rate.date or dt.date.min) > (held.date or dt.date.min)


def format_usd(value: float) -> str:
    """ "$2.99" (cents), "$0.138" below a dollar where cents would hide the figure."""
    return f"${value:,.2f}" if value >= 0.1 else f"${value:.3f}"


_CACHE: dict[tuple[str, int], RateBook] = {}
_CHECKED_AT = [0.0]
#: the history path for the environment it was worked out in (platformdirs reads it)
_PATHS: dict[tuple[str | None, str | None], Path] = {}
#: id(entry) -> (entry, book, summary): one summary per entry object and book
_SUMMARIES: dict[int, tuple[CatalogEntry, RateBook, RateSummary]] = {}


def default_rate_book() -> RateBook:
    """The bundled snapshots plus the user's history, reloaded when the history file
    changes (looked at no more than once a second: the catalog table asks per GPU)."""
    now = time.monotonic()
    where = (os.environ.get("XDG_DATA_HOME"), os.environ.get("HOME"))
    path = _PATHS.get(where)
    if path is None:
        _PATHS.clear()
        path = _PATHS[where] = default_history_path()
    if _CACHE and now - _CHECKED_AT[0] < 1.0:
        (held_path, _stamp), held = next(iter(_CACHE.items()))
        if held_path == str(path):
            return held
    _CHECKED_AT[0] = now
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = -1
    key = (str(path), stamp)
    book = _CACHE.get(key)
    if book is None:
        _CACHE.clear()
        _SUMMARIES.clear()
        book = _CACHE[key] = RateBook.load(path)
    return book


def rate_summary(entry: CatalogEntry) -> RateSummary:
    """The entry's rates: SkyPilot's snapshots and, for providers it lacks, the entry's own."""
    book = default_rate_book()
    held = _SUMMARIES.get(id(entry))
    if held is not None and held[0] is entry and held[1] is book:
        return held[2]
    summary = book.summary(entry.id, entry)
    if len(_SUMMARIES) > 100_000:
        _SUMMARIES.clear()
    _SUMMARIES[id(entry)] = (entry, book, summary)
    return summary


def as_cloud_rate(rate: ProviderRate) -> CloudRate:
    """A :class:`ProviderRate` as the catalog's :class:`CloudRate` (for code that takes one)."""
    where = " ".join(part for part in (rate.region, rate.instance_type) if part)
    return CloudRate(
        provider=rate.provider[:200],
        usd_per_gpu_hour=max(0.01, min(1000.0, rate.usd_per_gpu_hour)),
        kind=CloudRateKind(rate.kind),
        date=rate.date,
        source=(rate.link or None) and rate.link[:500],
        note=(where or None) and where[:500],
    )


def lowest_on_demand_rate(entry: CatalogEntry) -> CloudRate | None:
    """The lowest on-demand rate in the rate book: SkyPilot's snapshots and, for
    providers it lacks, the entry's own rates (:func:`default_cloud_rate` when the
    book has none). Compare's "Cloud price" row, the records' ``cloud_hourly_*``
    keys and the catalog's "From" column show this rate."""
    lowest = rate_summary(entry).lowest
    return default_cloud_rate(entry) if lowest is None else as_cloud_rate(lowest)


def distribution_words(summary: RateSummary) -> str:
    """ "lowest $1.82 (Cudo Compute no-kristiansand-1, 2026-12-02), median $2.40 across 5
    providers" — the on-demand distribution in one phrase ("" when there is none)."""
    low, median = summary.lowest, summary.median_usd
    if low is None or median is None:
        return ""
    where = ", ".join(
        part for part in (f"{low.provider} {low.region}".strip(), _date_text(low.date)) if part
    )
    count = len(summary.on_demand)
    # A chip's rate says so, and where it was divided from ("from tpu-v6e-8 at ...").
    lowest, per = (
        (low.words(), "/chip-hour")
        if low.unit == "chip"
        else (
            format_usd(low.usd_per_gpu_hour),
            "",
        )
    )
    return (
        f"lowest {lowest} ({where}), median {format_usd(median)}{per} "
        f"across {count} provider{'s' if count != 1 else ''}"
    )


def _date_text(date: dt.date | None) -> str:
    return "undated" if date is None else date.isoformat()


#: The segments whose rate coverage issue 28 measures (GPUs bought to rent or to run
#: in a server or workstation; consumer cards are out of its scope).
COVERAGE_SEGMENTS: frozenset[str] = frozenset({"datacenter", "workstation"})


@dataclass(frozen=True)
class RateCoverage:
    """How many entries have a current on-demand rate, counted two ways.

    *Fresh* means an on-demand rate (not spot, not a marketplace host's) seen no more
    than :data:`RATE_STALE_AFTER_DAYS` before ``as_of``. The literal share is of every
    entry counted; the rentable share leaves out entries whose ``rates_unavailable``
    says no public provider offers them by the hour (``offered = false``).
    """

    as_of: dt.date
    counted: tuple[str, ...]
    fresh: tuple[str, ...]
    not_offered: tuple[str, ...]
    #: entries with a fresh marketplace rate but no fresh on-demand one
    marketplace_only: tuple[str, ...]

    @property
    def literal(self) -> float:
        return len(self.fresh) / len(self.counted) if self.counted else 0.0

    @property
    def rentable(self) -> tuple[str, ...]:
        return tuple(gpu for gpu in self.counted if gpu not in set(self.not_offered))

    @property
    def among_rentable(self) -> float:
        rentable = self.rentable
        return len(self.fresh) / len(rentable) if rentable else 0.0

    @property
    def missing(self) -> tuple[str, ...]:
        """Rentable entries with no fresh on-demand rate."""
        return tuple(gpu for gpu in self.rentable if gpu not in set(self.fresh))


def rate_coverage(
    entries: Iterable[CatalogEntry],
    book: RateBook,
    as_of: dt.date,
    segments: frozenset[str] = COVERAGE_SEGMENTS,
) -> RateCoverage:
    """Count the entries of ``segments`` with a fresh on-demand rate at ``as_of``.

    Announced parts are not counted: nothing not yet on sale can be rented.
    """

    def fresh(rates: Iterable[ProviderRate]) -> bool:
        return any(not rate.is_stale(as_of) for rate in rates)

    counted: list[str] = []
    covered: list[str] = []
    not_offered: list[str] = []
    marketplace: list[str] = []
    for entry in entries:
        if entry.segment is None or entry.segment.value not in segments:
            continue
        if entry.status is Status.ANNOUNCED:
            continue
        counted.append(entry.id)
        summary = book.summary(entry.id, entry)
        if fresh(summary.on_demand):
            covered.append(entry.id)
        elif fresh(summary.marketplace):
            marketplace.append(entry.id)
        statement = entry.rates_unavailable
        if statement is not None and statement.offered is False:
            not_offered.append(entry.id)
    return RateCoverage(
        as_of, tuple(counted), tuple(covered), tuple(not_offered), tuple(marketplace)
    )
