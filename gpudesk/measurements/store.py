"""The user's own measurements: a local SQLite store of tokens/s they measured.

Not the published data (``speed/measurements.toml``): these rows come from the
user's llama-bench and vLLM result files (:mod:`gpudesk.measurements.file_import`)
and from ``gpudesk speed --verify``. One row is one measured figure: which GPU (a
catalog id, or ``cpu`` for this machine's processor), how many, engine and backend,
model and weight format, mode and lengths, tokens/s, and the estimate GPUDesk made for
the same workload when it could make one.

The database lives in the user's data folder (``measurements.sqlite``), has a schema
version in ``PRAGMA user_version``, and ignores a row it already holds: the same run
(see :meth:`Measurement.key`), whatever it was called on import, so a re-import, with
or without ``--model``, or of the same run in another llama-bench format, adds
nothing. Only the standard library's ``sqlite3`` is used.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpudesk.measurements.errors import MeasurementError
from gpudesk.paths import user_data_dir

#: 2: a row's key is its run, not its labels (version 1 keys are rewritten on open)
SCHEMA_VERSION = 2
DB_NAME = "measurements.sqlite"
#: what an exported file says it is, so an import knows it
EXPORT_FORMAT = "gpudesk-measurements"
EXPORT_VERSION = 1
MODES = ("prefill", "decode", "serve", "throughput")

_COLUMNS = (
    "gpu_id", "gpu_name", "count", "engine", "engine_version", "backend", "model",
    "model_file", "quant", "mode", "seq_in", "seq_out", "concurrency", "tokens_per_s",
    "estimate_tokens_per_s", "measured_at", "driver", "source", "source_format", "note",
)  # fmt: skip


_COMPACT_TIME = re.compile(r"^(\d{4})(\d{2})(\d{2})-\d{6}$")
#: the fields that identify a run (:meth:`Measurement.key`)
_RUN_FIELDS = (
    "gpu_id", "count", "engine", "engine_version", "backend", "driver", "mode", "seq_in",
    "seq_out", "concurrency", "tokens_per_s", "measured_at",
)  # fmt: skip


class Measurement(BaseModel):
    """One measured figure, as stored."""

    model_config = ConfigDict(frozen=True)

    gpu_id: str = Field(min_length=1, max_length=80)
    gpu_name: str | None = Field(default=None, max_length=200)
    count: int = Field(default=1, ge=1, le=100_000)
    engine: str = Field(min_length=1, max_length=40)
    engine_version: str | None = Field(default=None, max_length=80)
    backend: str | None = Field(default=None, max_length=40)
    model: str = Field(min_length=1, max_length=300)
    model_file: str | None = Field(default=None, max_length=1000)
    quant: str | None = Field(default=None, max_length=40)
    mode: Literal["prefill", "decode", "serve", "throughput"]
    seq_in: int | None = Field(default=None, ge=0, le=100_000_000)
    seq_out: int | None = Field(default=None, ge=0, le=100_000_000)
    concurrency: int | None = Field(default=None, ge=1, le=1_000_000)
    tokens_per_s: float = Field(gt=0, lt=1e9, allow_inf_nan=False)
    estimate_tokens_per_s: float | None = Field(default=None, gt=0, lt=1e9, allow_inf_nan=False)
    measured_at: str | None = Field(default=None, max_length=40)
    driver: str | None = Field(default=None, max_length=80)
    source: str = Field(min_length=1, max_length=1000)
    source_format: str = Field(min_length=1, max_length=40)
    note: str | None = Field(default=None, max_length=1000)

    def key(self) -> str:
        """What makes a row the same run: what was measured on what and the result.

        That is the GPU and how many, engine, its version and backend, driver, mode,
        lengths, concurrency, tokens/s and when it was measured. Not the words the row
        was given on import (model, model file, weight format, the file's GPU name),
        which differ for one run imported with and without ``--model``; nor where it was
        read from (file, format), nor GPUDesk's estimate and note. Two runs of different
        models share a key only with the same tokens/s to the file's last digit, on the
        same GPU, lengths and time.
        """
        fields = self.model_dump(include=set(_RUN_FIELDS))
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()

    @property
    def day(self) -> str | None:
        """The day it was measured (2025-05-22): from an ISO time (llama-bench's
        ``test_time``) or vLLM's ``date`` (20250522-101500); None without one."""
        if not self.measured_at:
            return None
        compact = _COMPACT_TIME.match(self.measured_at)
        if compact is not None:
            return "-".join(compact.groups())
        return self.measured_at[:10]

    @property
    def ratio(self) -> float | None:
        """Measured / estimated, when there was an estimate."""
        if self.estimate_tokens_per_s is None:
            return None
        return self.tokens_per_s / self.estimate_tokens_per_s

    def label(self) -> str:
        lengths = []
        if self.seq_in:
            lengths.append(f"in {self.seq_in}")
        if self.seq_out:
            lengths.append(f"out {self.seq_out}")
        count = f"{self.count}× " if self.count > 1 else ""
        return (
            f"{count}{self.gpu_id} {self.engine}"
            + (f"/{self.backend}" if self.backend else "")
            + f" {self.model}"
            + (f" {self.quant}" if self.quant else "")
            + f" {self.mode}"
            + (f" ({', '.join(lengths)})" if lengths else "")
        )


class StoredMeasurement(BaseModel):
    """A row with its id and when it was stored."""

    model_config = ConfigDict(frozen=True)

    id: int
    stored_at: str
    measurement: Measurement


class StoreError(MeasurementError):
    """The database cannot be opened or is not ours (a newer schema, not SQLite)."""


def default_path() -> Path:
    return user_data_dir() / DB_NAME


class MeasurementStore:
    """The SQLite file of the user's measurements."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_path()

    @contextlib.contextmanager
    def _connect(self, *, create: bool) -> Iterator[sqlite3.Connection]:
        if not create and not self.path.exists():
            raise FileNotFoundError(self.path)
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = sqlite3.connect(self.path, timeout=10)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot be opened ({exc})") from None
        try:
            self._migrate(connection)
            with connection:
                yield connection
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a GPUDesk measurement database ({exc})") from None
        finally:
            connection.close()

    def _migrate(self, connection: sqlite3.Connection) -> None:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {version} is newer than this GPUDesk knows "
                f"({SCHEMA_VERSION}); upgrade GPUDesk"
            )
        if version == SCHEMA_VERSION:
            return
        if version == 1:
            self._rekey(connection)
            return
        columns = ", ".join(f"{name} {_sql_type(name)}" for name in _COLUMNS)
        with connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS measurement (id INTEGER PRIMARY KEY, "
                f"key TEXT NOT NULL UNIQUE, stored_at TEXT NOT NULL, {columns})"
            )
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _rekey(self, connection: sqlite3.Connection) -> None:
        """Version 1 -> 2: each row's key becomes its run's. A row whose run an older row
        already holds keeps its old key (nothing stored is deleted); a re-import of that
        run is then ignored by the older row's key."""
        with connection:
            found = connection.execute(
                f"SELECT id, {', '.join(_COLUMNS)} FROM measurement ORDER BY id"
            ).fetchall()
            taken: set[str] = set()
            for row in found:
                try:
                    key = Measurement.model_validate(
                        dict(zip(_COLUMNS, row[1:], strict=True))
                    ).key()
                except ValueError:
                    continue  # edited by hand into something invalid: left as it is
                if key in taken:
                    continue
                taken.add(key)
                connection.execute("UPDATE measurement SET key = ? WHERE id = ?", (key, row[0]))
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def add(self, rows: Sequence[Measurement]) -> tuple[int, int]:
        """Store ``rows``; returns (added, already there)."""
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        added = 0
        with self._connect(create=True) as connection:
            for row in rows:
                values = row.model_dump()
                cursor = connection.execute(
                    f"INSERT OR IGNORE INTO measurement (key, stored_at, {', '.join(_COLUMNS)}) "
                    f"VALUES (?, ?, {', '.join('?' for _ in _COLUMNS)})",
                    (row.key(), now, *(values[name] for name in _COLUMNS)),
                )
                added += cursor.rowcount
        return added, len(rows) - added

    def rows(self) -> list[StoredMeasurement]:
        """Every row, oldest first; an absent database holds none."""
        try:
            with self._connect(create=False) as connection:
                found = connection.execute(
                    f"SELECT id, stored_at, {', '.join(_COLUMNS)} FROM measurement ORDER BY id"
                ).fetchall()
        except FileNotFoundError:
            return []
        out = []
        for row in found:
            data = dict(zip(_COLUMNS, row[2:], strict=True))
            try:
                measurement = Measurement.model_validate(data)
            except ValueError:
                continue  # a row edited by hand into something invalid: skipped
            out.append(StoredMeasurement(id=row[0], stored_at=row[1], measurement=measurement))
        return out

    def get(self, row_id: int) -> StoredMeasurement | None:
        return next((row for row in self.rows() if row.id == row_id), None)

    def remove(self, row_ids: Sequence[int]) -> int:
        """Delete rows by id; returns how many there were."""
        try:
            with self._connect(create=False) as connection:
                removed = 0
                for row_id in row_ids:
                    removed += connection.execute(
                        "DELETE FROM measurement WHERE id = ?", (row_id,)
                    ).rowcount
                return removed
        except FileNotFoundError:
            return 0


def _sql_type(name: str) -> str:
    if name in ("count", "seq_in", "seq_out", "concurrency"):
        return "INTEGER"
    if name in ("tokens_per_s", "estimate_tokens_per_s"):
        return "REAL"
    return "TEXT"


def export_document(rows: Sequence[StoredMeasurement]) -> dict[str, Any]:
    """A shareable, versioned file of measurements that ``measurements import`` reads."""
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "measurements": [row.measurement.model_dump(mode="json") for row in rows],
    }
