"""Survey a Ray cluster: one task per alive node, pinned to it, each detecting (and benchmarking).

The only module that imports Ray. Scheduling policy, written down first:

- One task per alive node, with node-affinity scheduling (``soft=False``):
  the task runs on that node or fails, never on another.
- A survey task asks for no CPU (a busy cluster still answers a detection).
  With ``--bench quick`` it asks for every GPU Ray counts on its node, so it
  runs only when they are free and never disturbs a job using them; a node
  whose GPUs stay busy hits the timeout and says so.
- ``max_calls=1``: each task gets a fresh worker process, so NVML and CUDA
  start clean on every node and nothing leaks between surveys.
- Benchmarks on nodes that share a host (the same IP: several Ray nodes on
  one machine) run one after another, so they do not measure each other;
  nodes on different hosts run at once. Detection-only surveys run all nodes
  at once.
- ``timeout_s`` is per node, from the moment its task is submitted. A task
  past it is cancelled and its node reported with the error; the rest go on.
- No retries (``max_retries=0``): a node that dies mid-survey is an error
  row, not a task silently re-run elsewhere (it could not be, being pinned).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import logging
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudesk.fleet.checks import summarise
from gpudesk.fleet.document import SURVEY_SCHEMA_VERSION, NodeView
from gpudesk.fleet.errors import FleetError
from gpudesk.fleet.node import BENCH_MODES, BenchMode, survey_this_node
from gpudesk.progress import NullProgress, Progress

#: How `auto` and explicit addresses are spelled for Ray.
ADDRESS_HELP = "auto, HOST:PORT (the head's GCS port, 6379 by default) or ray://HOST:PORT"
_CONNECT_CHECK_S = 3.0


class FleetUnavailableError(FleetError):
    """Ray is not installed here."""


class FleetUsageError(FleetError, ValueError):
    """A survey argument that cannot be used; ``field`` names it."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


class ClusterUnreachableError(FleetError):
    """No Ray cluster answered at ``address``."""

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(f"no Ray cluster at {address}: {reason}")
        self.address = address
        self.reason = reason


@dataclass(frozen=True, slots=True)
class NodeDone:
    """What the progress callback receives as each node finishes."""

    position: int
    total: int
    row: dict[str, Any]


NodeTask = Callable[[BenchMode], dict[str, Any]]


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise FleetUnavailableError(
            "the fleet survey needs Ray: pip install '.[fleet]' from the GPUDesk checkout"
        ) from exc
    return ray


def parse_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` for an explicit address, None for ``auto``.

    Raises:
        FleetUsageError: anything else (Ray's ``local`` would start a new,
            empty cluster, which has nothing to survey).
    """
    text = address.strip()
    if text == "auto":
        return None
    rest = text.removeprefix("ray://")
    host, sep, port_text = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise FleetUsageError("address", f"{address!r} is not {ADDRESS_HELP}")
    problem = _host_problem(host)
    if problem is not None:
        raise FleetUsageError("address", f"{address!r}: {problem}")
    return host, int(port_text)


#: A host name label (RFC 1123; underscores too, which resolvers pass and clusters use).
_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?")
_MAX_LABEL = 63
_MAX_NAME = 253


def _host_problem(host: str) -> str | None:
    """Why ``host`` is neither an IP address nor a name a resolver takes, or None.

    ``socket.getaddrinfo`` IDNA-encodes a name first and raises ``UnicodeError``
    for an empty label (``a..b``) or one over 63 characters; checked here so
    that it is a usage error, worded, before anything is sent.
    """
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    try:
        ascii_name = host.encode("idna").decode("ascii")
    except UnicodeError:
        ascii_name = None
    name = host.removesuffix(".")  # a fully qualified "head." is a name
    labels = name.split(".")
    if any(not label for label in labels):
        return "a host name has an empty label (two dots in a row, or a leading dot)"
    longest = max(labels, key=len)
    if len(longest) > _MAX_LABEL:
        return f"a host name label is {len(longest)} characters; at most {_MAX_LABEL}"
    if ascii_name is None:
        return "not a host name (it cannot be spelled in IDNA)"
    if len(ascii_name.removesuffix(".")) > _MAX_NAME:
        return f"a host name is at most {_MAX_NAME} characters"
    if not all(_LABEL.fullmatch(label) for label in ascii_name.removesuffix(".").split(".")):
        return "a host name has only letters, digits, '-' and '_' between its dots"
    return None


def check_reachable(address: str, timeout_s: float = _CONNECT_CHECK_S) -> None:
    """Fail fast when nothing listens at an explicit address (Ray itself retries for a minute).

    Raises:
        ClusterUnreachableError: the TCP connection was refused or timed out.
    """
    target = parse_address(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout_s):
            pass
    except OSError as exc:
        raise ClusterUnreachableError(address, exc.strerror or str(exc)) from exc


def _connect(ray: Any, address: str, ship_code: bool) -> bool:
    """Connect to the cluster; True when this call connected (and so must disconnect)."""
    if ray.is_initialized():
        return False
    runtime_env: dict[str, Any] | None = None
    if ship_code:
        import gpudesk

        runtime_env = {"py_modules": [str(Path(gpudesk.__file__).parent)]}
    try:
        ray.init(
            address=address,
            logging_level=logging.ERROR,
            log_to_driver=False,
            runtime_env=runtime_env,
        )
    except ConnectionError as exc:
        raise ClusterUnreachableError(address, str(exc).splitlines()[0]) from exc
    return True


def _gcs_address(ray: Any) -> str | None:
    """The connected cluster's GCS address (host:port), or None where Ray does not say."""
    try:
        value = ray.get_runtime_context().gcs_address
    except Exception:  # an older Ray, or a client connection: the header keeps --address
        return None
    return value if isinstance(value, str) and value else None


#: Ray's failures of a pinned task, in words (Ray's own messages carry lease ids and tracebacks).
_RAY_FAILURES = {
    "TaskUnschedulableError": "the node left the cluster before its task could run",
    "NodeDiedError": "the node died during the survey",
    "WorkerCrashedError": "the survey task's worker process died on the node",
    "OutOfMemoryError": "Ray killed the survey task: the node ran out of memory",
    "TaskCancelledError": "the survey task was cancelled",
}


def describe_task_error(exc: BaseException) -> str:
    """One line for a failed node task."""
    text = str(exc)
    if "No module named 'gpudesk" in text:
        return (
            "gpudesk is not importable on this node: install it there "
            "(pip install '.[fleet]' from the GPUDesk checkout) or survey with --ship-code"
        )
    name = type(exc).__name__
    if name in _RAY_FAILURES:
        return f"{_RAY_FAILURES[name]} ({name})"
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        name, text = type(cause).__name__, str(cause)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return f"{name}: {last}"[:500] if last else name


@dataclass(slots=True)
class _Job:
    node: dict[str, Any]
    position: int
    started: float = 0.0
    ref: Any = None


@dataclass(slots=True)
class _Schedule:
    """Nodes grouped by host; each group runs its nodes one at a time."""

    groups: list[list[_Job]]
    running: dict[Any, _Job] = field(default_factory=dict)


def _node_gpus(node: dict[str, Any]) -> int:
    resources = node.get("Resources") or {}
    value = resources.get("GPU", 0)
    return int(value) if isinstance(value, int | float) and value > 0 else 0


def survey(
    address: str = "auto",
    *,
    bench: BenchMode = "none",
    timeout_s: float = 300.0,
    on_node: Callable[[NodeDone], None] | None = None,
    ship_code: bool = False,
    node_task: NodeTask = survey_this_node,
    poll_s: float = 0.2,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Survey every alive node of the cluster at ``address``; the survey document.

    Args:
        address: as Ray accepts it (see :data:`ADDRESS_HELP`).
        bench: "none", or "quick" for the quick benchmark on each node.
        timeout_s: per node, from the submission of its task.
        on_node: called in the calling thread as each node finishes.
        ship_code: send this GPUDesk's package to the nodes (Ray runtime
            environment) instead of using the one installed there.
        node_task: what runs on each node (tests replace it).
        progress: told of each finished node; cancelling it stops the survey
            within ``poll_s`` (running tasks are cancelled, Ray disconnected).

    Raises:
        Cancelled: ``progress`` was cancelled.
        FleetUnavailableError: Ray is not installed.
        FleetUsageError: a bad address, bench mode or timeout.
        ClusterUnreachableError: no cluster answered.
    """
    if bench not in BENCH_MODES:
        raise FleetUsageError("bench", f"bench must be one of {', '.join(BENCH_MODES)}")
    if not 0 < timeout_s <= 86_400:
        raise FleetUsageError("timeout", "timeout must be more than 0 and at most 86400 seconds")
    parse_address(address)
    ray = _import_ray()
    check_reachable(address)
    surveyed_at = dt.datetime.now(dt.UTC)
    connected = _connect(ray, address, ship_code)
    try:
        address_used = _gcs_address(ray)
        alive = [node for node in ray.nodes() if node.get("Alive")]
        rows = _run(ray, alive, bench, timeout_s, on_node, node_task, poll_s, progress)
    finally:
        if connected:
            ray.shutdown()
    views = [NodeView.model_validate_json(json.dumps(row), strict=True) for row in rows]
    return {
        "survey_schema_version": SURVEY_SCHEMA_VERSION,
        "scheduler": "ray",
        "cluster": {
            "address": address,
            # What "auto" resolved to (RAY_ADDRESS, the local cluster): the GCS host:port.
            "address_used": address_used,
            "scheduler": "ray",
            "ray_version": getattr(ray, "__version__", None),
            "nodes_alive": len(alive),
            "surveyed_at": surveyed_at.isoformat(),
        },
        "nodes": rows,
        "summary": summarise(views),
    }


def _run(
    ray: Any,
    alive: list[dict[str, Any]],
    bench: BenchMode,
    timeout_s: float,
    on_node: Callable[[NodeDone], None] | None,
    node_task: NodeTask,
    poll_s: float,
    progress: Progress | None,
) -> list[dict[str, Any]]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote_task = ray.remote(max_retries=0, max_calls=1)(node_task)
    jobs = [_Job(node, position) for position, node in enumerate(alive)]
    if bench == "quick":
        hosts: dict[str, list[_Job]] = {}
        for job in jobs:
            hosts.setdefault(str(job.node.get("NodeManagerAddress")), []).append(job)
        schedule = _Schedule(list(hosts.values()))
    else:
        schedule = _Schedule([[job] for job in jobs])
    rows: list[dict[str, Any] | None] = [None] * len(jobs)
    finished = 0
    progress = progress or NullProgress()
    progress.report(0.0, f"surveying {len(jobs)} node{'s' if len(jobs) != 1 else ''}")

    def start(job: _Job) -> None:
        gpus = _node_gpus(job.node) if bench == "quick" else 0
        job.ref = remote_task.options(
            num_cpus=0,
            num_gpus=gpus,
            scheduling_strategy=NodeAffinitySchedulingStrategy(job.node["NodeID"], soft=False),
        ).remote(bench)
        job.started = time.monotonic()
        schedule.running[job.ref] = job

    def finish(job: _Job, value: dict[str, Any] | None, error: str | None) -> None:
        nonlocal finished
        row = _row(job, value, error)
        rows[job.position] = row
        finished += 1
        if on_node is not None:
            on_node(NodeDone(finished, len(jobs), row))
        progress.report(finished / max(1, len(jobs)), f"{finished} of {len(jobs)} nodes answered")
        group = next(group for group in schedule.groups if job in group)
        following = group.index(job) + 1
        if following < len(group):
            start(group[following])

    for group in schedule.groups:
        start(group[0])
    while schedule.running:
        if progress.is_cancelled():
            for ref in schedule.running:
                ray.cancel(ref, force=True)
            progress.check()  # raises Cancelled
        ready, _ = ray.wait(list(schedule.running), num_returns=1, timeout=poll_s)
        for ref in ready:
            job = schedule.running.pop(ref)
            try:
                value = ray.get(ref)
            except Exception as exc:  # any task failure is that node's error row
                finish(job, None, describe_task_error(exc))
            else:
                if isinstance(value, dict):
                    finish(job, value, None)
                else:
                    finish(job, None, f"the node task returned {type(value).__name__}")
        now = time.monotonic()
        for ref, job in list(schedule.running.items()):
            if now - job.started > timeout_s:
                schedule.running.pop(ref)
                try:
                    ray.cancel(ref, force=True)
                except Exception as exc:  # cancelling a task on a dead node may fail too
                    logging.getLogger(__name__).debug("cancel failed: %s", exc)
                finish(job, None, f"no answer within {timeout_s:g} s")
    return [row for row in rows if row is not None]


def _row(job: _Job, value: dict[str, Any] | None, error: str | None) -> dict[str, Any]:
    node = job.node
    benches = list(value.get("benches") or []) if value else []
    hostname = value.get("hostname") if value else None
    return {
        "node_id": str(node.get("NodeID")),
        "hostname": hostname if isinstance(hostname, str) else node.get("NodeManagerHostname"),
        "ip": node.get("NodeManagerAddress"),
        "detection": value.get("detection") if value else None,
        "bench": benches[0] if benches else None,
        "benches": benches,
        "error": error,
        "duration_s": round(time.monotonic() - job.started, 3),
    }
