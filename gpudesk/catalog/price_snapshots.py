"""Dated snapshots of SkyPilot's catalog: read from folders, kept as JSON and SQLite.

A *snapshot* is what the catalog said on one date: one ``vms.csv`` per cloud,
each named by the commit it was read at. Snapshots come from

- a folder: ``<cloud>/vms.csv`` files (a SkyPilot checkout's ``catalogs/vN``,
  or one of the bundled dated folders with a ``SNAPSHOT.toml`` manifest), or a
  folder of such dated folders (the bundled ``resources/prices/skypilot``);
- a URL: ``<base>/<cloud>/vms.csv`` over HTTPS (see :func:`fetch_clouds`).

The bundled snapshots are built into one JSON file by
``scripts/build_price_snapshot.py`` (:func:`bundle_json`); what the user imports
goes into a SQLite database in the user's data folder (:class:`PriceHistory`),
never over the bundled data.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudesk.catalog.errors import CatalogError
from gpudesk.catalog.skypilot import (
    MAX_FILE_BYTES,
    Offer,
    ParseResult,
    RowProblem,
    parse_vms_csv,
    valid_cloud_name,
)
from gpudesk.paths import resources_dir, user_data_dir
from gpudesk.storage import NotRegularFileError, read_refusal, read_regular_file

#: Where SkyPilot's catalog lives (for links and the default download).
CATALOG_REPOSITORY = "https://github.com/skypilot-org/skypilot-catalog"
#: The default download: the newest schema's files on the main branch.
DEFAULT_BASE_URL = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8"
)
#: Clouds fetched when ``--clouds`` is not given.
DEFAULT_CLOUDS: tuple[str, ...] = (
    "aws",
    "azure",
    "gcp",
    "lambda",
    "nebius",
    "runpod",
    "vast",
    "cudo",
    "hyperstack",
    "verda",
    "fluidstack",
    "oci",
)
#: Seconds to wait for a server before giving up on it.
FETCH_TIMEOUT_S = 20.0
MANIFEST = "SNAPSHOT.toml"
#: A manifest is a few lines; anything far larger is not one.
MAX_MANIFEST_BYTES = 1024 * 1024
BUNDLE_FORMAT = 1
SCHEMA_VERSION = 1
_HOSTS_WITHOUT_TLS = frozenset({"127.0.0.1", "localhost", "::1"})


class PriceDataError(CatalogError):
    """Prices could not be read or kept; the message is one line for a person."""


class PriceSourceError(PriceDataError):
    """The source given is not one prices can come from (bad input, not a failure)."""


@dataclass(frozen=True)
class SnapshotSource:
    """Where one cloud's file in a snapshot came from."""

    cloud: str
    path: str = ""  # e.g. "catalogs/v9/lambda/vms.csv"
    commit: str = ""  # the catalog commit it was read at ("" when unknown)
    url: str = ""  # a page a person can open

    def link(self) -> str:
        if self.url:
            return self.url
        if self.commit and self.path:
            return f"{CATALOG_REPOSITORY}/blob/{self.commit}/{self.path}"
        return CATALOG_REPOSITORY


@dataclass
class Snapshot:
    """What SkyPilot's catalog listed on one date."""

    taken: dt.date
    #: "commit": dated by the catalog commit; "retrieved": dated when the copy was read
    basis: str
    label: str
    sources: dict[str, SnapshotSource] = field(default_factory=dict)
    offers: list[Offer] = field(default_factory=list)

    @property
    def clouds(self) -> list[str]:
        return sorted(self.sources)


@dataclass
class ImportReport:
    """Snapshots read, and what was skipped on the way."""

    snapshots: list[Snapshot] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    more_problems: int = 0
    unmapped: Counter[str] = field(default_factory=Counter)
    unmapped_reasons: dict[str, str] = field(default_factory=dict)
    #: clouds whose file could not be used at all (the last good data stays)
    failed_clouds: list[str] = field(default_factory=list)

    def absorb(self, result: ParseResult) -> None:
        self.problems.extend(result.problems)
        self.more_problems += result.more_problems
        # Keyed by name and cloud: one name is ambiguous on one cloud and unknown on another.
        for name, count in result.unmapped.items():
            self.unmapped[f"{name} on {result.cloud}"] += count
        for name, reason in result.unmapped_reasons.items():
            self.unmapped_reasons.setdefault(f"{name} on {result.cloud}", reason)


# --- reading folders -------------------------------------------------------


def read_folder(
    folder: Path, *, clouds: Sequence[str] | None = None, today: dt.date
) -> ImportReport:
    """Every snapshot under ``folder`` (see the module docstring for the layouts)."""
    if not folder.is_dir():
        raise PriceSourceError(f"{folder}: not a folder")
    report = ImportReport()
    # lexists, not is_file: a manifest that is a FIFO or a link loop is refused, not skipped.
    dated = sorted(path for path in _entries(folder) if _lexists(path / MANIFEST))
    if _lexists(folder / MANIFEST):
        dated = [folder]
    if dated:
        for snapshot_folder in dated:
            _read_one(snapshot_folder, report, clouds=clouds, today=today)
        return report
    catalogs = folder / "catalogs"
    if catalogs.is_dir():  # a SkyPilot checkout: its newest schema folder
        versions = sorted(
            (path for path in catalogs.glob("v*") if path.name[1:].isdigit()),
            key=lambda path: int(path.name[1:]),
        )
        if versions:
            folder = versions[-1]
    _read_one(folder, report, clouds=clouds, today=today)
    return report


def _read_one(
    folder: Path, report: ImportReport, *, clouds: Sequence[str] | None, today: dt.date
) -> None:
    manifest = _read_manifest(folder / MANIFEST) if _lexists(folder / MANIFEST) else None
    if manifest is None:
        snapshot = Snapshot(taken=today, basis="retrieved", label=str(folder))
    else:
        snapshot = manifest
    # Every <cloud>/vms.csv name there is, whatever it is: glob would leave out a link
    # loop silently, and the read below refuses anything that is not a regular file.
    names = sorted(
        path.name
        for path in _entries(folder)
        if valid_cloud_name(path.name) and _lexists(path / "vms.csv")
    )
    for cloud in names:
        if clouds is not None and cloud not in clouds:
            continue
        path = folder / cloud / "vms.csv"
        try:
            data = read_regular_file(path, MAX_FILE_BYTES)
        except NotRegularFileError as exc:
            # The user named a folder holding a FIFO or device here: bad input, stop.
            raise PriceSourceError(f"{path}: {read_refusal(exc)}") from exc
        except OSError as exc:  # too large or unreadable: this cloud keeps its last data
            report.problems.append(RowProblem(cloud, 0, f"{path} {read_refusal(exc)}"))
            report.failed_clouds.append(cloud)
            continue
        result = parse_vms_csv(data, cloud)
        _keep(snapshot, report, result, snapshot.sources.get(cloud) or SnapshotSource(cloud))
    snapshot.sources = {
        cloud: source for cloud, source in snapshot.sources.items() if _has(snapshot, cloud)
    }
    if snapshot.offers:
        report.snapshots.append(snapshot)


def _has(snapshot: Snapshot, cloud: str) -> bool:
    return any(offer.cloud == cloud for offer in snapshot.offers)


def _keep(
    snapshot: Snapshot, report: ImportReport, result: ParseResult, source: SnapshotSource
) -> None:
    report.absorb(result)
    if not result.readable or not result.offers:
        report.failed_clouds.append(result.cloud)
        if result.readable:
            report.problems.append(RowProblem(result.cloud, 0, "no GPU rows that could be used"))
        return
    snapshot.sources[result.cloud] = source
    snapshot.offers.extend(result.offers)


def _entries(folder: Path) -> list[Path]:
    """What ``folder`` holds.

    Raises:
        PriceSourceError: it cannot be listed (no permission, gone).
    """
    try:
        return list(folder.iterdir())
    except OSError as exc:
        raise PriceSourceError(f"{folder}: {read_refusal(exc)}") from exc


def _lexists(path: Path) -> bool:
    """Whether anything at all has this name (a dangling or looping link included)."""
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


def _read_manifest(path: Path) -> Snapshot | None:
    """A dated folder's manifest; a broken one is an error (it is ours, not input)."""
    try:
        raw = read_regular_file(path, MAX_MANIFEST_BYTES)
    except NotRegularFileError as exc:
        raise PriceSourceError(f"{path}: {read_refusal(exc)}") from exc
    except OSError as exc:
        raise PriceDataError(f"{path}: not a snapshot manifest ({read_refusal(exc)})") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
        taken = data["taken"]
        basis = str(data["basis"])
        if not isinstance(taken, dt.date) or basis not in ("commit", "retrieved"):
            raise ValueError("taken must be a date and basis 'commit' or 'retrieved'")
        sources = {
            cloud: SnapshotSource(
                cloud=cloud,
                path=str(entry.get("path", "")),
                commit=str(entry.get("commit", "")),
                url=str(entry.get("url", "")),
            )
            for cloud, entry in dict(data.get("clouds", {})).items()
        }
    except (
        OSError,
        UnicodeDecodeError,
        tomllib.TOMLDecodeError,
        KeyError,
        ValueError,
        TypeError,
        AttributeError,
    ) as exc:
        raise PriceDataError(f"{path}: not a snapshot manifest ({exc})") from exc
    return Snapshot(
        taken=taken, basis=basis, label=str(data.get("label", path.parent.name)), sources=sources
    )


# --- fetching over HTTPS ---------------------------------------------------


def fetch_clouds(
    base_url: str, clouds: Sequence[str], *, today: dt.date, timeout_s: float = FETCH_TIMEOUT_S
) -> ImportReport:
    """Download ``<base_url>/<cloud>/vms.csv`` for each cloud into one snapshot.

    HTTPS only (plain HTTP only to this machine, for tests); the proxy settings
    of the environment (``https_proxy``, ``no_proxy``) are honoured, as urllib
    does. A cloud that fails is a problem and keeps its last stored data; when
    nothing can be reached the error says so in one line.
    """
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme != "https" and not (
        parts.scheme == "http" and parts.hostname in _HOSTS_WITHOUT_TLS
    ):
        raise PriceSourceError(f"{base_url}: use an https:// address (or --from a local folder)")
    report = ImportReport()
    snapshot = Snapshot(taken=today, basis="retrieved", label=base_url)
    unreachable: list[str] = []
    for cloud in clouds:
        url = base_url.rstrip("/") + f"/{cloud}/vms.csv"
        try:
            data = _download(url, timeout_s)
        except urllib.error.HTTPError as exc:
            report.problems.append(RowProblem(cloud, 0, f"{url}: HTTP {exc.code} {exc.reason}"))
            report.failed_clouds.append(cloud)
            continue
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            report.problems.append(RowProblem(cloud, 0, f"cannot reach {parts.hostname}: {reason}"))
            report.failed_clouds.append(cloud)
            unreachable.append(cloud)
            continue
        if data is None:
            report.problems.append(
                RowProblem(
                    cloud, 0, f"{url}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; not read"
                )
            )
            report.failed_clouds.append(cloud)
            continue
        result = parse_vms_csv(data, cloud)
        _keep(snapshot, report, result, SnapshotSource(cloud=cloud, url=url))
    if unreachable and len(unreachable) == len(clouds):
        raise PriceDataError(
            f"cannot reach {parts.hostname} (offline, or a proxy is needed: set https_proxy); "
            "the stored prices are unchanged"
        )
    if snapshot.offers:
        report.snapshots.append(snapshot)
    return report


def _download(url: str, timeout_s: float) -> bytes | None:
    """The body, or None when it is larger than the cap (read no further)."""
    request = urllib.request.Request(url, headers={"User-Agent": "gpudesk-prices"})
    # A fresh opener reads the proxy settings now (urlopen's shared one keeps the first).
    opener = urllib.request.build_opener()
    with opener.open(request, timeout=timeout_s) as response:
        data: bytes = response.read(MAX_FILE_BYTES + 1)
    return None if len(data) > MAX_FILE_BYTES else data


# --- the bundled JSON --------------------------------------------------------


def bundled_snapshot_dir() -> Path:
    """The bundled dated folders of catalog excerpts."""
    return resources_dir() / "prices" / "skypilot"


def bundled_json_path() -> Path:
    return resources_dir() / "prices" / "skypilot_rates.json"


def bundle_json(report: ImportReport) -> str:
    """The bundled snapshots as JSON text (stable: same input, same bytes)."""
    data = {
        "format": BUNDLE_FORMAT,
        "repository": CATALOG_REPOSITORY,
        "snapshots": [
            _snapshot_record(snapshot) for snapshot in sorted(report.snapshots, key=_order)
        ],
        "unmapped": dict(sorted(report.unmapped.items())),
    }
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def _order(snapshot: Snapshot) -> tuple[dt.date, str]:
    return (snapshot.taken, snapshot.label)


def _snapshot_record(snapshot: Snapshot) -> dict[str, Any]:
    offers = sorted(snapshot.offers, key=_offer_key)
    return {
        "taken": snapshot.taken.isoformat(),
        "basis": snapshot.basis,
        "label": snapshot.label,
        "sources": {
            cloud: {"path": source.path, "commit": source.commit, "url": source.url}
            for cloud, source in sorted(snapshot.sources.items())
        },
        "offers": [
            [
                o.cloud,
                o.gpu_id,
                o.accelerator,
                o.instance_type,
                o.region,
                o.gpu_count,
                o.price_usd,
                o.spot_usd,
            ]
            for o in offers
        ],
    }


def _offer_from_row(row: Sequence[Any]) -> Offer:
    """An offer from its stored fields, in :class:`Offer`'s order."""
    return Offer(
        cloud=str(row[0]),
        gpu_id=str(row[1]),
        accelerator=str(row[2]),
        instance_type=str(row[3]),
        region=str(row[4]),
        gpu_count=int(row[5]),
        price_usd=float(row[6]),
        spot_usd=None if row[7] is None else float(row[7]),
    )


def _offer_key(offer: Offer) -> tuple[str, str, str, str]:
    return (offer.cloud, offer.gpu_id, offer.instance_type, offer.region)


def read_bundle(text: str) -> list[Snapshot]:
    """Snapshots from :func:`bundle_json`'s text; a damaged file is a :class:`PriceDataError`."""
    try:
        data = json.loads(text)
        if data.get("format") != BUNDLE_FORMAT:
            raise ValueError(f"format {data.get('format')!r}")
        return [_snapshot_from_record(record) for record in data["snapshots"]]
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise PriceDataError(f"bundled price snapshot is damaged ({exc})") from exc


def _snapshot_from_record(record: dict[str, Any]) -> Snapshot:
    sources = {
        str(cloud): SnapshotSource(
            cloud=str(cloud), path=str(s["path"]), commit=str(s["commit"]), url=str(s["url"])
        )
        for cloud, s in record["sources"].items()
    }
    offers = [_offer_from_row(row) for row in record["offers"]]
    return Snapshot(
        taken=dt.date.fromisoformat(record["taken"]),
        basis=str(record["basis"]),
        label=str(record["label"]),
        sources=sources,
        offers=offers,
    )


def load_bundled_snapshots() -> list[Snapshot]:
    """The snapshots shipped with GPUDesk (none when the file is absent)."""
    path = bundled_json_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceDataError(f"{path}: cannot read the bundled prices ({exc})") from exc
    return read_bundle(text)


# --- the user's history database ---------------------------------------------


def default_history_path() -> Path:
    """The user's price history (SQLite), beside the user catalog."""
    return user_data_dir() / "prices.sqlite3"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY,
    taken TEXT NOT NULL,
    basis TEXT NOT NULL,
    label TEXT NOT NULL,
    imported_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sources (
    snapshot_id INTEGER NOT NULL REFERENCES snapshots(id) ON DELETE CASCADE,
    cloud TEXT NOT NULL,
    path TEXT NOT NULL,
    commit_id TEXT NOT NULL,
    url TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, cloud)
);
CREATE TABLE IF NOT EXISTS offers (
    snapshot_id INTEGER NOT NULL REFERENCES snapshots(id) ON DELETE CASCADE,
    cloud TEXT NOT NULL,
    gpu_id TEXT NOT NULL,
    accelerator TEXT NOT NULL,
    instance_type TEXT NOT NULL,
    region TEXT NOT NULL,
    gpu_count INTEGER NOT NULL,
    price_usd REAL NOT NULL,
    spot_usd REAL
);
CREATE INDEX IF NOT EXISTS offers_by_gpu ON offers (gpu_id);
"""


class PriceHistory:
    """The user's snapshots in SQLite (stdlib ``sqlite3``), with a schema version.

    Storing a snapshot is one transaction: a crash or a bad snapshot leaves the
    database as it was. A snapshot with the same date and label as a stored
    one replaces it, cloud by cloud, so importing twice keeps one copy.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self, *, create: bool) -> sqlite3.Connection:
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.is_file():
            raise FileNotFoundError(self.path)
        try:
            connection = sqlite3.connect(self.path, timeout=10)
            connection.execute("PRAGMA foreign_keys = ON")
            if create:
                connection.executescript(_SCHEMA)
            version = connection.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
            if version is None and create:
                connection.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
                connection.commit()
            elif version is None or version[0] != str(SCHEMA_VERSION):
                connection.close()
                found = "none" if version is None else version[0]
                raise PriceDataError(
                    f"{self.path}: price history schema {found}; "
                    f"this GPUDesk reads {SCHEMA_VERSION}"
                )
        except sqlite3.DatabaseError as exc:
            raise PriceDataError(f"{self.path}: not a GPUDesk price history ({exc})") from exc
        return connection

    def store(self, snapshots: Iterable[Snapshot]) -> int:
        """Keep the snapshots; returns how many offers were written."""
        written = 0
        connection = self._connect(create=True)
        try:
            with connection:
                for snapshot in snapshots:
                    written += self._store_one(connection, snapshot)
        except sqlite3.DatabaseError as exc:
            raise PriceDataError(
                f"{self.path}: cannot store prices ({exc}); nothing changed"
            ) from exc
        finally:
            connection.close()
        return written

    def _store_one(self, connection: sqlite3.Connection, snapshot: Snapshot) -> int:
        row = connection.execute(
            "SELECT id FROM snapshots WHERE taken = ? AND label = ?",
            (snapshot.taken.isoformat(), snapshot.label),
        ).fetchone()
        if row is None:
            cursor = connection.execute(
                "INSERT INTO snapshots (taken, basis, label, imported_at) VALUES (?, ?, ?, ?)",
                (
                    snapshot.taken.isoformat(),
                    snapshot.basis,
                    snapshot.label,
                    dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                ),
            )
            snapshot_id = cursor.lastrowid
        else:
            snapshot_id = row[0]
        for cloud, source in snapshot.sources.items():
            connection.execute(
                "DELETE FROM offers WHERE snapshot_id = ? AND cloud = ?", (snapshot_id, cloud)
            )
            connection.execute(
                "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?)",
                (snapshot_id, cloud, source.path, source.commit, source.url),
            )
        connection.executemany(
            "INSERT INTO offers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    snapshot_id,
                    o.cloud,
                    o.gpu_id,
                    o.accelerator,
                    o.instance_type,
                    o.region,
                    o.gpu_count,
                    o.price_usd,
                    o.spot_usd,
                )
                for o in snapshot.offers
            ],
        )
        return len(snapshot.offers)

    def snapshots(self) -> list[Snapshot]:
        """Every stored snapshot, oldest first (none when the database does not exist yet)."""
        try:
            connection = self._connect(create=False)
        except FileNotFoundError:
            return []
        try:
            result: dict[int, Snapshot] = {}
            for snapshot_id, taken, basis, label in connection.execute(
                "SELECT id, taken, basis, label FROM snapshots ORDER BY taken, id"
            ):
                result[snapshot_id] = Snapshot(dt.date.fromisoformat(taken), basis, label)
            for snapshot_id, cloud, path, commit, url in connection.execute(
                "SELECT * FROM sources"
            ):
                if snapshot_id in result:
                    result[snapshot_id].sources[cloud] = SnapshotSource(cloud, path, commit, url)
            for row in connection.execute("SELECT * FROM offers"):
                snapshot = result.get(row[0])
                if snapshot is not None:
                    snapshot.offers.append(_offer_from_row(row[1:]))
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise PriceDataError(f"{self.path}: cannot read the price history ({exc})") from exc
        finally:
            connection.close()
        return list(result.values())
