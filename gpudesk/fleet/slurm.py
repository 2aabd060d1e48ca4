"""Survey a Slurm cluster: one ``srun`` step, one task per node, each running the node report.

No Python import of Slurm: this drives the commands every Slurm site has
(``scontrol``, ``srun``, ``scancel``), each with a timeout, and reads their
output as untrusted text. Policy, written down first:

- The nodes are those ``scontrol show node -o`` lists (narrowed by
  ``--partition`` and ``--nodelist``). A node Slurm reports down, drained,
  failing or not responding is not asked to run anything: it is an error
  row saying so, and the rest go on.
- The other nodes run one ``srun`` step with ``--ntasks-per-node=1``,
  ``--no-kill`` and ``--kill-on-bad-exit=0`` (a node that dies ends its own
  task only). With ``--bench quick`` the step asks for each node's GPUs the
  way Slurm declares them (``--gres=gpu:h100:8``), so it runs only when they
  are free; nodes that declare different GPU GRES get one step per kind,
  run at the same time.
- Each task runs ``python -m gpudesk.fleet.node`` with this Python (the
  site's shared file system puts it on every node) and writes its report
  between delimiter lines carrying a per-survey nonce, base64 with its
  length and SHA-256 (fleet/node.py); other output on the node's stdout is
  ignored.
- ``timeout_s`` covers the whole step, from submission: waiting in the
  queue counts. Past it the step is cancelled (``scancel``) and every node
  without a report is an error row.
- No retries: a node that fails is an error row, never re-run elsewhere.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpudesk.external import (
    LineBuffer,
    Stream,
    ToolError,
    ToolOutputLimitError,
    ToolProcess,
    ToolResult,
    ToolStartError,
    ToolTimeoutError,
    read_many,
    run_tool,
)
from gpudesk.fleet.checks import summarise
from gpudesk.fleet.document import SURVEY_SCHEMA_VERSION, NodeView
from gpudesk.fleet.errors import FleetError
from gpudesk.fleet.node import BENCH_MODES, REPORT_BEGIN, REPORT_END, BenchMode
from gpudesk.fleet.survey import FleetUsageError, NodeDone
from gpudesk.progress import NullProgress, Progress
from gpudesk.terminal_text import scrub

#: Seconds a query command (scontrol, scancel) may take before Slurm counts as unreachable.
COMMAND_TIMEOUT_S = 6.0
#: The most a query command may print (``scontrol show node -o`` of a 10,000-node cluster
#: is about 20 MB).
MAX_QUERY_OUTPUT_BYTES = 64 * 1024 * 1024
#: Seconds srun gets after SIGTERM (it cancels its step on the nodes) before SIGKILL.
SRUN_TERM_WAIT_S = 3.0
#: The longest stdout line kept (a report's base64 lines are far shorter).
MAX_LINE_CHARS = 100_000
#: The most one node's report may hold (a node with 8 benchmarked GPUs sends about 200 kB).
MAX_REPORT_BYTES = 16 * 1024 * 1024
#: Node states (any of the ``+``-joined flags) in which a node is not asked to run anything.
UNUSABLE_STATES = frozenset(
    {
        "DOWN",
        "DRAIN",
        "DRAINED",
        "DRAINING",
        "FAIL",
        "FAILING",
        "FUTURE",
        "INVAL",
        "MAINT",
        "NOT_RESPONDING",
        "NO_RESPOND",
        "POWERED_DOWN",
        "POWERING_DOWN",
        "POWER_DOWN",
        "POWERING_UP",
        "REBOOT_ISSUED",
        "REBOOT_REQUESTED",
        "UNKNOWN",
    }
)
HINT = (
    "hint: run this on a Slurm login node (srun and scontrol on PATH, SLURM_CONF "
    "or /etc/slurm/slurm.conf naming a controller that answers: try `sinfo`)"
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_NODELIST = re.compile(r"^[A-Za-z0-9._,\[\]-]{1,4000}$")
_KEY = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:]{0,63})=")
_LABELLED = re.compile(r"^\s*(\d{1,9}): ?(.*)$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/=]{1,200}$")
_SRUN_NODE_ERROR = re.compile(
    r"^srun: error: (?:Node failure on )?([A-Za-z0-9._-]{1,200})\b[:,]?\s*(.*)$"
)


class SlurmUnavailableError(FleetError):
    """No Slurm here: a command is missing or the controller does not answer."""


@dataclass(frozen=True, slots=True)
class Gres:
    """One generic resource a node declares: ``gpu:h100:8`` is ("gpu", "h100", 8)."""

    name: str
    type: str | None
    count: int

    def __str__(self) -> str:
        return ":".join(part for part in (self.name, self.type, str(self.count)) if part)


@dataclass(frozen=True, slots=True)
class SlurmNode:
    """What ``scontrol show node`` says of one node (as declared to Slurm)."""

    name: str
    state: str
    gres: tuple[Gres, ...] = ()
    features: tuple[str, ...] = ()
    real_memory_mb: int | None = None
    partitions: tuple[str, ...] = ()
    reason: str | None = None
    address: str | None = None
    hostname: str | None = None

    @property
    def gpus(self) -> tuple[Gres, ...]:
        return tuple(item for item in self.gres if item.name == "gpu")

    @property
    def gpu_request(self) -> str:
        """``--gres`` for this node's GPUs as declared ("" when it declares none)."""
        return ",".join(str(item) for item in self.gpus if item.count > 0)

    @property
    def state_flags(self) -> tuple[str, ...]:
        flags = []
        for part in self.state.upper().split("+"):
            if part.endswith("*"):
                flags.append("NOT_RESPONDING")
            flags.append(part.rstrip("*~#!%$@^-"))
        return tuple(flag for flag in flags if flag)

    def unusable(self) -> str | None:
        """Why the survey does not run on this node, or None."""
        bad = [flag for flag in self.state_flags if flag in UNUSABLE_STATES]
        if not bad:
            return None
        reason = f" ({self.reason})" if self.reason else ""
        return f"Slurm reports the node {self.state}{reason}; not surveyed"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "gres": [
                {"name": item.name, "type": item.type, "count": item.count} for item in self.gres
            ],
            "features": list(self.features),
            "real_memory_mb": self.real_memory_mb,
            "partitions": list(self.partitions),
            "reason": self.reason,
        }


def _null(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "(null)", "N/A", "none", "None") else value


def _count(text: str) -> int | None:
    match = re.fullmatch(r"(\d{1,15})([KMGT]?)", text.strip())
    if match is None:
        return None
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}[match.group(2)]
    return int(match.group(1)) * scale


def parse_gres(text: str | None) -> tuple[Gres, ...]:
    """``gpu:h100:8(S:0-1),gpu:a100:2,shard:4`` as Gres items; unreadable items are left out."""
    text = _null(text)
    if text is None:
        return ()
    items: list[Gres] = []
    # Commas also separate socket lists inside "(S:0,1)": drop parenthesised parts first.
    for raw in re.sub(r"\([^)]*\)", "", text).split(","):
        parts = [part.strip() for part in raw.split(":") if part.strip()]
        parts = [part for part in parts if part != "no_consume"]
        if not parts or not _NAME.match(parts[0]):
            continue
        count = _count(parts[-1]) if len(parts) > 1 else 1
        if count is None:
            continue
        kind = parts[1] if len(parts) >= 3 else None
        if kind is not None and not _NAME.match(kind):
            continue
        items.append(Gres(parts[0], kind, count))
    return tuple(items)


def parse_records(text: str) -> list[dict[str, str]]:
    """``scontrol show ... -o`` output: one ``Key=Value ...`` record per line.

    Values may hold spaces (``OS=Linux 6.1 #1 SMP``, ``Reason=bad gpu [root@...]``),
    so a value runs up to the next `` Key=``.
    """
    records: list[dict[str, str]] = []
    for line in text.splitlines():
        keys = list(_KEY.finditer(line))
        if not keys:
            continue
        record: dict[str, str] = {}
        for position, match in enumerate(keys):
            end = keys[position + 1].start() if position + 1 < len(keys) else len(line)
            record.setdefault(match.group(1), line[match.end() : end].strip())
        records.append(record)
    return records


def _one_line(text: str, limit: int = 200) -> str:
    """A Slurm value as the survey document's views take it: one printable line (a
    control character as its ``\\uXXXX`` escape, a tab a space), at most ``limit``
    characters."""
    return scrub(text.replace("\t", " "))[:limit]


def parse_nodes(text: str) -> list[SlurmNode]:
    """The nodes of ``scontrol show node -o``; records without a usable NodeName are left out."""
    nodes: list[SlurmNode] = []
    for record in parse_records(text):
        name = record.get("NodeName", "")
        if not _NAME.match(name):
            continue
        memory = _count(record.get("RealMemory", ""))
        features = _null(record.get("AvailableFeatures")) or _null(record.get("Features")) or ""
        partitions = _null(record.get("Partitions")) or ""
        nodes.append(
            SlurmNode(
                name=name,
                state=_one_line(record.get("State") or "UNKNOWN"),
                gres=parse_gres(record.get("Gres")),
                features=tuple(
                    _one_line(item)
                    for item in (part.strip() for part in features.split(","))
                    if item
                )[:200],
                real_memory_mb=memory,
                partitions=tuple(_one_line(item) for item in partitions.split(",") if item)[:200],
                reason=(_null(record.get("Reason")) or "")[:400] or None,
                address=(_null(record.get("NodeAddr")) or "")[:200] or None,
                hostname=(_null(record.get("NodeHostName")) or "")[:200] or None,
            )
        )
    return nodes


def _program(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SlurmUnavailableError(f"no Slurm here: `{name}` is not on PATH")
    return path


def _run_slurm(arguments: list[str], timeout_s: float, no_answer: str) -> ToolResult:
    """Run a Slurm command (found on PATH) through :func:`gpudesk.external.run_tool`.

    Raises:
        SlurmUnavailableError: missing, not startable, or no answer within ``timeout_s``
            (then ``no_answer`` is the message).
    """
    program = _program(arguments[0])
    try:
        return run_tool(
            [program, *arguments[1:]], timeout_s, max_stdout_bytes=MAX_QUERY_OUTPUT_BYTES
        )
    except ToolTimeoutError as exc:
        raise SlurmUnavailableError(no_answer) from exc
    except ToolOutputLimitError as exc:
        raise SlurmUnavailableError(
            f"{arguments[0]} printed more than {MAX_QUERY_OUTPUT_BYTES // (1024 * 1024)} MiB"
        ) from exc
    except ToolStartError as exc:
        error = exc.os_error
        raise SlurmUnavailableError(
            f"cannot run {arguments[0]}: {error.strerror or error}"
        ) from exc


def _query(
    arguments: list[str], timeout_s: float = COMMAND_TIMEOUT_S, usage_field: str = "slurm"
) -> str:
    """Run a Slurm query command; its stdout.

    Raises:
        SlurmUnavailableError: missing, timed out, or the controller did not answer.
        FleetUsageError: Slurm refused the arguments (an unknown node or partition).
    """
    done = _run_slurm(
        arguments,
        timeout_s,
        f"`{' '.join(arguments)}` gave no answer within {timeout_s:g} s "
        "(is the Slurm controller up?)",
    )
    if done.returncode != 0:
        # scontrol says "Node n9 not found" on stdout, other errors on stderr.
        said = done.stderr_text.strip() or done.stdout_text.strip()
        message = " ".join(said.split())[:300] or f"exit {done.returncode}"
        lowered = message.lower()
        if "not found" in lowered or "invalid" in lowered:
            raise FleetUsageError(usage_field, f"{arguments[0]}: {message}")
        raise SlurmUnavailableError(f"{arguments[0]} failed: {message}")
    return done.stdout_text


def check_controller(timeout_s: float = COMMAND_TIMEOUT_S) -> None:
    """Fail fast when no controller answers (``scontrol show`` retries for about 10 s first).

    Raises:
        SlurmUnavailableError: scontrol missing, or ``scontrol ping`` finds no controller up.
    """
    done = _run_slurm(
        ["scontrol", "ping"],
        timeout_s,
        f"`scontrol ping` gave no answer within {timeout_s:g} s: no Slurm controller reachable",
    )
    # "Slurmctld(primary) at head is UP"; a backup that is UP serves the cluster too.
    if re.search(r"\bis UP\b", done.stdout_text) is None:
        first = next((line for line in done.stdout_text.splitlines() if " at " in line), "")
        text = " ".join((first or done.stderr_text).split())[:300] or f"exit {done.returncode}"
        raise SlurmUnavailableError(f"no Slurm controller reachable: {text}")


def slurm_nodes(partition: str | None = None, nodelist: str | None = None) -> list[SlurmNode]:
    """The nodes to survey, as Slurm declares them.

    Raises:
        SlurmUnavailableError, FleetUsageError: as :func:`_query`.
    """
    if partition is not None and not _NAME.match(partition):
        raise FleetUsageError("partition", f"{partition!r} is not a Slurm partition name")
    if nodelist is not None and not _NODELIST.match(nodelist):
        raise FleetUsageError("nodelist", f"{nodelist!r} is not a Slurm node list (n[1-3],gpu7)")
    arguments = ["scontrol", "show", "node", "-o"]
    if nodelist is not None:
        arguments.append(nodelist)
    nodes = parse_nodes(_query(arguments, usage_field="nodelist"))
    if partition is not None:
        nodes = [node for node in nodes if partition in node.partitions]
    return nodes


def _config_value(text: str, key: str) -> str | None:
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == key:
            found = _null(value)
            return found[:200] if found else None
    return None


@dataclass(slots=True)
class _Task:
    node: str | None = None
    lines: list[str] = field(default_factory=list)
    header: tuple[str, int, str] | None = None
    stderr: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Step:
    """One srun step and what its tasks said."""

    nodes: list[SlurmNode]
    tool: ToolProcess
    name: str
    started: float
    tasks: dict[int, _Task] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    lines: dict[Stream, LineBuffer] = field(
        default_factory=lambda: {
            "stdout": LineBuffer(MAX_LINE_CHARS),
            "stderr": LineBuffer(MAX_LINE_CHARS),
        }
    )

    def close(self) -> None:
        """End srun if it still runs, and whatever it left holding its output."""
        if self.tool.poll() is None:
            _cancel(self)
        self.tool.close()


def node_command(bench: BenchMode, nonce: str, python: str) -> list[str]:
    """What each task runs; it says hello first so a task that fails later is still named."""
    bootstrap = (
        "import os,sys;"
        "print('GPUDESK-NODE-HELLO',sys.argv[1],os.environ.get('SLURMD_NODENAME',''),flush=True);"
        "from gpudesk.fleet.node import main;"
        "raise SystemExit(main(sys.argv[2:]))"
    )
    return [python, "-c", bootstrap, nonce, "--bench", bench, "--nonce", nonce]


def srun_command(
    nodes: list[SlurmNode],
    bench: BenchMode,
    timeout_s: float,
    job_name: str,
    partition: str | None,
    task: list[str],
) -> list[str]:
    minutes = max(1, int(timeout_s // 60) + 1)
    command = [
        "srun",
        f"--job-name={job_name}",
        f"--nodes={len(nodes)}",
        f"--ntasks={len(nodes)}",
        "--ntasks-per-node=1",
        f"--nodelist={','.join(node.name for node in nodes)}",
        "--label",
        "--no-kill",
        "--kill-on-bad-exit=0",
        "--input=none",
        f"--time={minutes}",
    ]
    if partition is not None:
        command.append(f"--partition={partition}")
    request = nodes[0].gpu_request if bench == "quick" else ""
    if request:
        command.append(f"--gres={request}")
    return [*command, *task]


class _Collector:
    """Turns the steps' labelled output into node rows."""

    def __init__(self, nonce: str, wanted: set[str]) -> None:
        self.nonce = nonce
        self.wanted = wanted
        self.reports: dict[str, tuple[dict[str, Any] | None, str | None]] = {}

    def stdout(self, step: _Step, line: str) -> str | None:
        """Take one stdout line; the node name when it completed a report."""
        match = _LABELLED.match(line)
        if match is None:
            return None
        task = step.tasks.setdefault(int(match.group(1)), _Task())
        text = match.group(2).strip()
        words = text.split()
        if len(words) >= 3 and words[0] == "GPUDESK-NODE-HELLO" and words[1] == self.nonce:
            if words[2] in self.wanted:
                task.node = words[2]
            return None
        if len(words) == 5 and words[0] == REPORT_BEGIN and words[1] == self.nonce:
            if words[2] in self.wanted and words[3].isdigit() and len(words[4]) == 64:
                task.node = task.node or words[2]
                task.header = (words[2], int(words[3]), words[4])
                task.lines = []
            return None
        if task.header is None:
            return None
        if words == [REPORT_END, self.nonce]:
            node, length, digest = task.header
            task.header = None
            self.reports[node] = self._decode(task.lines, length, digest)
            task.lines = []
            return node
        if _BASE64.match(text) and sum(len(item) for item in task.lines) < 2 * MAX_REPORT_BYTES:
            task.lines.append(text)
        return None

    @staticmethod
    def _decode(
        lines: list[str], length: int, digest: str
    ) -> tuple[dict[str, Any] | None, str | None]:
        try:
            raw = base64.b64decode("".join(lines), validate=True)
        except (binascii.Error, ValueError):
            return None, "the node's report was not valid base64"
        if len(raw) != length or hashlib.sha256(raw).hexdigest() != digest:
            return None, "the node's report arrived incomplete (length or checksum differs)"
        if length > MAX_REPORT_BYTES:
            return None, f"the node's report is over {MAX_REPORT_BYTES} bytes"
        try:
            value = json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return None, "the node's report is not valid JSON"
        if not isinstance(value, dict):
            return None, "the node's report is not a JSON object"
        error = value.get("error")
        if isinstance(error, str):
            return None, f"on the node: {error[:500]}"
        return value, None

    def stderr(self, step: _Step, line: str) -> None:
        match = _LABELLED.match(line)
        if match is not None:
            task = step.tasks.setdefault(int(match.group(1)), _Task())
            text = match.group(2).strip()
            if text:
                task.stderr = [*task.stderr[-4:], text[:300]]
            return
        node_error = _SRUN_NODE_ERROR.match(line.strip())
        if node_error is not None and node_error.group(1) in self.wanted:
            message = node_error.group(2).strip() or "failed"
            step.errors.setdefault(node_error.group(1), f"srun: {message}"[:300])
        elif line.startswith("srun: error:"):
            step.errors.setdefault("", line.removeprefix("srun: error:").strip()[:300])


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _cancel(step: _Step) -> None:
    """Cancel the step's job by its (unique) name, then end srun and what it started.

    srun, sent SIGTERM, cancels its step on the nodes; SIGKILL follows after
    :data:`SRUN_TERM_WAIT_S` (a wrapper script may ignore SIGTERM), and waiting
    for it is bounded (:mod:`gpudesk.external`).
    """
    scancel = shutil.which("scancel")
    if scancel is not None:
        with contextlib.suppress(ToolError):
            run_tool([scancel, f"--name={step.name}"], COMMAND_TIMEOUT_S)
    step.tool.stop(term_wait_s=SRUN_TERM_WAIT_S)


def survey_slurm(
    *,
    partition: str | None = None,
    nodelist: str | None = None,
    bench: BenchMode = "none",
    timeout_s: float = 300.0,
    on_node: Callable[[NodeDone], None] | None = None,
    progress: Progress | None = None,
    python: str | None = None,
    env: Mapping[str, str] | None = None,
    poll_s: float = 0.2,
) -> dict[str, Any]:
    """Survey the Slurm cluster's nodes; the survey document (as Ray's, ``scheduler: "slurm"``).

    Args:
        partition, nodelist: narrow the nodes (as Slurm spells them).
        bench: "none", or "quick" for the quick benchmark on each node's GPUs.
        timeout_s: the whole survey, from submission (queue time counts).
        on_node: called in the calling thread as each node finishes.
        progress: told of each finished node; cancelling it cancels the step.
        python: the interpreter the tasks run (default: this one).
        env: the environment of srun and so of the tasks (default: this one's).

    Raises:
        Cancelled: ``progress`` was cancelled (the step is cancelled first).
        SlurmUnavailableError: srun/scontrol missing or no controller answered.
        FleetUsageError: a bad partition, node list, bench mode or timeout.
    """
    if bench not in BENCH_MODES:
        raise FleetUsageError("bench", f"bench must be one of {', '.join(BENCH_MODES)}")
    if not 0 < timeout_s <= 86_400:
        raise FleetUsageError("timeout", "timeout must be more than 0 and at most 86400 seconds")
    _program("srun")
    if nodelist is None and os.environ.get("SLURM_JOB_ID") and os.environ.get("SLURM_JOB_NODELIST"):
        # Inside a job (sbatch, salloc): survey the job's own nodes.
        nodelist = os.environ["SLURM_JOB_NODELIST"]
    surveyed_at = dt.datetime.now(dt.UTC)
    check_controller()
    nodes = slurm_nodes(partition, nodelist)
    if not nodes:
        where = f" in partition {partition}" if partition else ""
        raise SlurmUnavailableError(f"Slurm lists no nodes{where} to survey")
    config = _query(["scontrol", "show", "config"])
    progress = progress or NullProgress()
    rows = _survey_nodes(
        nodes, partition, bench, timeout_s, on_node, progress, python or sys.executable, env, poll_s
    )
    views = [NodeView.model_validate_json(json.dumps(row), strict=True) for row in rows]
    return {
        "survey_schema_version": SURVEY_SCHEMA_VERSION,
        "scheduler": "slurm",
        "cluster": {
            "address": _config_value(config, "ClusterName") or "slurm",
            "scheduler": "slurm",
            "ray_version": None,
            "slurm_version": _config_value(config, "SLURM_VERSION"),
            "partition": partition,
            "nodes_alive": sum(1 for node in nodes if node.unusable() is None),
            "surveyed_at": surveyed_at.isoformat(),
        },
        "nodes": rows,
        "summary": summarise(views),
    }


def _row(
    node: SlurmNode,
    value: dict[str, Any] | None,
    error: str | None,
    duration_s: float,
) -> dict[str, Any]:
    benches = (
        [run for run in (value.get("benches") or []) if isinstance(run, dict)] if value else []
    )
    hostname = value.get("hostname") if value else None
    return {
        "node_id": node.name,
        "hostname": hostname if isinstance(hostname, str) else node.hostname,
        "ip": node.address,
        "detection": value.get("detection") if value else None,
        "bench": benches[0] if benches else None,
        "benches": benches,
        "error": error,
        "duration_s": round(max(0.0, duration_s), 3),
        "slurm": node.to_json(),
    }


def _groups(nodes: Iterable[SlurmNode], bench: BenchMode) -> list[list[SlurmNode]]:
    groups: dict[str, list[SlurmNode]] = {}
    for node in nodes:
        groups.setdefault(node.gpu_request if bench == "quick" else "", []).append(node)
    return list(groups.values())


def _survey_nodes(
    nodes: list[SlurmNode],
    partition: str | None,
    bench: BenchMode,
    timeout_s: float,
    on_node: Callable[[NodeDone], None] | None,
    progress: Progress,
    python: str,
    env: Mapping[str, str] | None,
    poll_s: float,
) -> list[dict[str, Any]]:
    total = len(nodes)
    rows: dict[str, dict[str, Any]] = {}
    finished = 0
    progress.report(0.0, f"surveying {total} node{'s' if total != 1 else ''} with Slurm")

    def finish(
        node: SlurmNode, value: dict[str, Any] | None, error: str | None, took: float
    ) -> None:
        nonlocal finished
        row = _row(node, value, error, took)
        rows[node.name] = row
        finished += 1
        if on_node is not None:
            on_node(NodeDone(finished, total, row))
        progress.report(finished / total, f"{finished} of {total} nodes answered")

    usable = []
    for node in nodes:
        reason = node.unusable()
        if reason is None:
            usable.append(node)
        else:
            finish(node, None, reason, 0.0)
    nonce = secrets.token_hex(8)
    collector = _Collector(nonce, {node.name for node in usable})
    steps: list[_Step] = []
    started = time.monotonic()
    srun = _program("srun")
    by_name = {node.name: node for node in usable}

    def take(step: _Step, stream: Stream, lines: list[str]) -> None:
        for line in lines:
            if stream == "stderr":
                collector.stderr(step, line)
                continue
            done = collector.stdout(step, line)
            if done is not None and done not in rows:
                value, error = collector.reports[done]
                finish(by_name[done], value, error, time.monotonic() - step.started)

    try:
        for number, group in enumerate(_groups(usable, bench)):
            job_name = f"gpudesk-survey-{nonce}-{number}"
            command = srun_command(
                group, bench, timeout_s, job_name, partition, node_command(bench, nonce, python)
            )
            try:
                # The survey cancels gently at timeout_s (scancel, SIGTERM); the runner's
                # own deadline is the hard stop behind it, once that cancel had its time.
                tool = ToolProcess(
                    [srun, *command[1:]], timeout_s=timeout_s + 2 * SRUN_TERM_WAIT_S, env=env
                )
            except ToolStartError as exc:
                why = exc.os_error.strerror or exc.os_error
                raise SlurmUnavailableError(f"cannot run srun: {why}") from exc
            steps.append(_Step(group, tool, job_name, time.monotonic()))
        by_tool = {step.tool: step for step in steps}
        # Read until every srun has exited and said all it had to say: a process a
        # wrapper script left behind may hold the pipes open for good (gpudesk.external).
        while listening := [step for step in steps if not step.tool.done_reading()]:
            if progress.is_cancelled():
                for step in steps:
                    _cancel(step)
                progress.check()  # raises Cancelled
            if time.monotonic() - started > timeout_s:
                for step in steps:
                    _cancel(step)
                break
            for tool, stream, data in read_many([step.tool for step in listening], poll_s):
                step = by_tool[tool]
                buffer = step.lines[stream]
                take(step, stream, buffer.feed(data) if data else buffer.finish())
        timed_out = time.monotonic() - started > timeout_s
        for step in steps:
            for stream, buffer in step.lines.items():
                take(step, stream, buffer.finish())  # a last line without its newline
            if step.tool.wait(SRUN_TERM_WAIT_S) is None:
                _cancel(step)
            for node in step.nodes:
                if node.name not in rows:
                    error = _missing_reason(step, node, timed_out, timeout_s)
                    finish(node, None, error, time.monotonic() - step.started)
    finally:
        for step in steps:
            step.close()
    return [rows[node.name] for node in nodes]


def _missing_reason(step: _Step, node: SlurmNode, timed_out: bool, timeout_s: float) -> str:
    if timed_out:
        started = any(task.node == node.name for task in step.tasks.values())
        where = "" if started else " (its task never started)"
        return f"no answer within {timeout_s:g} s{where}"
    if node.name in step.errors:
        return step.errors[node.name]
    for task in step.tasks.values():
        if task.node == node.name and task.stderr:
            return f"the task failed: {task.stderr[-1]}"
    general = step.errors.get("")
    code = step.tool.returncode
    if general:
        return f"srun: {general}"
    return f"srun ended (exit {code}) before the node sent its report"


def slurm_reachable(timeout_s: float = 3.0) -> bool:
    """True when srun is here and the controller answers (for the GUI's choice)."""
    if shutil.which("srun") is None:
        return False
    try:
        check_controller(timeout_s)
    except SlurmUnavailableError:
        return False
    return True
