"""Collection in the background, one loop per source, served from the last collection.

Each source (NVML; the sysfs bus; the Mac) is read by its own daemon thread
every ``interval_s``. A reader only ever swaps in a finished collection, so
:meth:`Collector.snapshot` never waits on a source: a scrape is answered
from memory whatever the drivers do. A collection still running
``deadline_s`` after it started (an NVML call stuck in the driver) makes
that source's devices *down* (``up`` 0, no readings) until it returns, and
counts an overrun; the other sources go on. The threads are daemons because
a call stuck in a driver cannot be interrupted from Python: at exit the
process does not wait for it.

:func:`collect_once` is the same work as a plain function, for one-shot
callers and tests.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from gpudesk.telemetry.readings import DeviceReading, Snapshot, SourceHealth, lost_reading

_log = logging.getLogger(__name__)

#: One collection a second: what ``gpudesk monitor`` shows and a 1 s scrape reads.
DEFAULT_INTERVAL_S = 1.0
#: A collection running longer than this serves its devices as down.
DEFAULT_DEADLINE_S = 5.0


class TelemetrySource(Protocol):
    detail: str | None

    def read(self) -> list[DeviceReading]: ...


@dataclass
class _Slot:
    """One source's loop state; guarded by the collector's lock."""

    name: str
    source: TelemetrySource
    available: bool
    readings: tuple[DeviceReading, ...] = ()
    started_s: float | None = None
    collections: int = 0
    overruns: int = 0
    overrun_noted: bool = False
    duration_s: float | None = None
    success_s: float | None = None


def collect_once(sources: Sequence[TelemetrySource]) -> list[DeviceReading]:
    """Read every source once, in order, in this thread."""
    readings: list[DeviceReading] = []
    for source in sources:
        readings.extend(source.read())
    return readings


class Collector:
    """Background collection of named sources.

    Args:
        sources: (name, source, available) per source; an unavailable one is
            reported in the exporter's own health and never read.
        interval_s: time between the starts of two collections of a source.
        deadline_s: how long a collection may run before its devices count as down.
        clock: monotonic seconds; ``wall_clock``: seconds since the epoch.
    """

    def __init__(
        self,
        sources: Sequence[tuple[str, TelemetrySource, bool]],
        interval_s: float = DEFAULT_INTERVAL_S,
        deadline_s: float = DEFAULT_DEADLINE_S,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        hostname: str | None = None,
    ) -> None:
        if not interval_s > 0 or not deadline_s > 0:
            raise ValueError("interval and deadline must be positive")
        self._slots = [_Slot(name, source, available) for name, source, available in sources]
        self._interval_s = interval_s
        self._deadline_s = deadline_s
        self._clock = clock
        self._wall_clock = wall_clock
        self.hostname = hostname or socket.gethostname()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def collect(self, slot_index: int) -> None:
        """One collection of one source (what each loop runs; tests call it directly)."""
        slot = self._slots[slot_index]
        with self._lock:
            slot.started_s = self._clock()
        try:
            readings = tuple(slot.source.read())
        except Exception:
            # A reader's bug must not end the loop (the exporter keeps serving its health).
            _log.exception("collecting %s failed", slot.name)
            readings = tuple(lost_reading(reading.identity) for reading in slot.readings)
        finished = self._clock()
        with self._lock:
            slot.duration_s = finished - (slot.started_s or finished)
            slot.readings = readings
            slot.started_s = None
            slot.overrun_noted = False
            slot.collections += 1
            slot.success_s = self._wall_clock()

    def start(self) -> None:
        """Collect every source in the background, from now.

        A source that was not available at the start is still read when it can
        become so (NVML retries its discovery: it has an ``available`` attribute).
        """
        for index, slot in enumerate(self._slots):
            if not slot.available and not hasattr(slot.source, "available"):
                continue
            thread = threading.Thread(
                target=self._loop, args=(index,), name=f"gpudesk-collect-{slot.name}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _loop(self, index: int) -> None:
        while not self._stop.is_set():
            started = self._clock()
            self.collect(index)
            wait = self._interval_s - (self._clock() - started)
            self._stop.wait(max(wait, 0.0))

    def stop(self, wait_s: float = 2.0) -> None:
        """Stop the loops; a loop stuck in a driver call is left behind (a daemon thread)."""
        self._stop.set()
        deadline = time.monotonic() + wait_s
        for thread in self._threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        self._threads = [thread for thread in self._threads if thread.is_alive()]

    def wait_first(self, timeout_s: float) -> bool:
        """Wait until every available source has been collected once (or the timeout)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if all(slot.collections for slot in self._slots if slot.available):
                    return True
            time.sleep(0.02)
        return False

    def snapshot(self) -> Snapshot:
        """The last collection of every source, never waiting for one in flight."""
        now = self._clock()
        devices: list[DeviceReading] = []
        health: list[SourceHealth] = []
        with self._lock:
            for slot in self._slots:
                readings = slot.readings
                late = slot.started_s is not None and now - slot.started_s > self._deadline_s
                if late:
                    if not slot.overrun_noted:
                        slot.overruns += 1
                        slot.overrun_noted = True
                    note = f"no answer within {self._deadline_s:g} s"
                    readings = tuple(lost_reading(reading.identity, note) for reading in readings)
                devices.extend(readings)
                health.append(
                    SourceHealth(
                        source=slot.name,
                        available=bool(getattr(slot.source, "available", slot.available)),
                        detail=slot.source.detail,
                        collections_total=slot.collections,
                        overruns_total=slot.overruns,
                        last_duration_seconds=slot.duration_s,
                        last_success_timestamp_seconds=slot.success_s,
                    )
                )
        return Snapshot(
            time_s=self._wall_clock(),
            hostname=self.hostname,
            devices=tuple(devices),
            sources=tuple(health),
        )
