"""``gpudesk exporter``: every GPU's live readings as Prometheus ``/metrics``.

Exit codes: 0 when stopped (SIGTERM, as systemd stops it, or Ctrl-C), 2 for a
bad or non-loopback ``--listen`` without ``--allow-remote`` (nothing is bound
then), 1 when the address cannot be bound.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    interval_argument,
    load_catalog_for,
)
from gpudesk.telemetry.listen import DEFAULT_HOST, DEFAULT_PORT


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``exporter`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "exporter",
        help="serve every GPU's live readings as Prometheus /metrics",
        description=(
            "Serve NVIDIA (NVML), AMD (amdgpu sysfs) and Intel (i915/xe sysfs) GPUs' "
            "utilisation, memory, temperatures, power, clocks, fan, PCIe link, energy and "
            "health counters, with each device's catalog peaks, as Prometheus /metrics "
            "(docs/exporter.md lists the families per vendor). Readings are collected in "
            "the background and served from the last collection. Listens on "
            f"{DEFAULT_HOST}:{DEFAULT_PORT} by default: the Prometheus wiki's default port "
            "allocations (github.com/prometheus/prometheus/wiki/Default-port-allocations) "
            "fill 9090-9999, so the port lies outside them. Exit 0 when stopped, 2 for a "
            "bad or non-loopback --listen without --allow-remote, 1 when the address "
            "cannot be bound."
        ),
    )
    parser.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default=f"{DEFAULT_HOST}:{DEFAULT_PORT}",
        help=f"address to serve on (default {DEFAULT_HOST}:{DEFAULT_PORT}; [::1]:PORT for "
        "IPv6; port 0: any free port, printed on stderr)",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --listen (0.0.0.0, a LAN address, a host name): the "
        "exporter has no authentication",
    )
    parser.add_argument(
        "--processes",
        action="store_true",
        help="also export each GPU process's memory with pid, user, container and pod "
        "labels (a new series per process)",
    )
    parser.add_argument(
        "--interval",
        metavar="SECONDS",
        type=interval_argument,
        default=1.0,
        help="time between collections (default 1)",
    )
    parser.add_argument(
        "--deadline",
        metavar="SECONDS",
        type=interval_argument,
        default=5.0,
        help="a collection still running after this long serves its GPUs as down (default 5)",
    )
    parser.set_defaults(handler=run_exporter_command)


def run_exporter_command(args: argparse.Namespace) -> int:
    from gpudesk.telemetry.errors import ExporterBindError, ListenAddressError
    from gpudesk.telemetry.exporter import run_exporter
    from gpudesk.telemetry.listen import parse_listen

    try:
        listen = parse_listen(args.listen, allow_remote=args.allow_remote)
    except ListenAddressError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    catalog = load_catalog_for(args)
    stop = threading.Event()

    def stop_serving(signum: int, frame: object) -> None:
        stop.set()

    previous = {
        number: signal.signal(number, stop_serving) for number in (signal.SIGTERM, signal.SIGINT)
    }

    def serving(bound: Any, collector: Any) -> None:
        devices = collector.snapshot().devices
        print(
            f"gpudesk exporter: serving {bound.url} ({len(devices)} device(s))",
            file=sys.stderr,
            flush=True,
        )

    try:
        run_exporter(
            catalog.entries,
            listen,
            stop,
            processes=args.processes,
            interval_s=args.interval,
            deadline_s=args.deadline,
            on_serving=serving,
        )
    except ExporterBindError as exc:
        raise CliError(str(exc), EXIT_FAILURE) from exc
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return EXIT_OK
