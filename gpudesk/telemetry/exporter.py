"""``gpudesk exporter``'s work: find the devices, collect in the background, serve ``/metrics``.

Read-only: it reads counters and never runs a benchmark or changes a setting.
With no GPU at all it still serves its own health (under systemd an exit
would only be restarted, again and again).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.telemetry.collector import DEFAULT_DEADLINE_S, DEFAULT_INTERVAL_S, Collector
from gpudesk.telemetry.errors import ExporterBindError
from gpudesk.telemetry.exposition import registry_for, serve
from gpudesk.telemetry.listen import ListenAddress
from gpudesk.telemetry.nvidia import THROTTLE_REASON_NAMES
from gpudesk.telemetry.sources import open_sources

#: How long the first collection may take before the server starts anyway.
FIRST_COLLECTION_WAIT_S = 10.0


def run_exporter(
    entries: Sequence[CatalogEntry],
    listen: ListenAddress,
    stop: threading.Event,
    *,
    processes: bool = False,
    interval_s: float = DEFAULT_INTERVAL_S,
    deadline_s: float = DEFAULT_DEADLINE_S,
    sysfs_root: Path | None = None,
    on_serving: Callable[[ListenAddress, Collector], None] | None = None,
) -> None:
    """Serve until ``stop`` is set.

    Raises:
        ExporterBindError: the address could not be bound (nothing is served).
    """
    sources = open_sources(entries, sysfs_root=sysfs_root, processes=processes)
    collector = Collector(sources, interval_s=interval_s, deadline_s=deadline_s)
    registry = registry_for(collector.snapshot, THROTTLE_REASON_NAMES)
    try:
        server, thread = serve(registry, listen.host, listen.port)
    except OSError as exc:
        raise ExporterBindError(
            f"cannot listen on {listen.host}:{listen.port}: {exc.strerror or exc}"
        ) from exc
    try:
        collector.start()
        collector.wait_first(FIRST_COLLECTION_WAIT_S)
        bound = ListenAddress(listen.host, int(server.server_port), listen.loopback)
        if on_serving is not None:
            on_serving(bound, collector)
        stop.wait()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(2.0)
        collector.stop()
        for _, source, _ in sources:
            close = getattr(source, "close", None)
            if close is not None:
                close()
