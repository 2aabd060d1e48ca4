"""``gpudesk fleet survey`` and ``gpudesk fleet show``: a Ray or Slurm cluster, node by node.

Exit codes (survey): 0 every node answered, 1 a node failed or its detection
was refused (the results are still printed and written), 2 bad usage or Ray missing, 3 no cluster
reachable (no Ray cluster; with --slurm, srun missing or no controller).
``show``: 0, or 2 for a file that cannot be read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_NOTHING_DETECTED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    path_argument,
    write_output,
)
from gpudesk.cli.flag_tables import Flag, add_flags
from gpudesk.cli.textwidth import error_text, terminal_table, wrap_paragraph

if TYPE_CHECKING:
    from gpudesk.fleet.document import SurveyView
    from gpudesk.fleet.survey import NodeDone


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError("must be more than 0 and at most 86400 seconds")
    return value


FLEET_DESCRIPTION = (
    "Survey every node of a running Ray cluster (or, with --slurm, a Slurm "
    "cluster) with GPUDesk's own detection (and the quick benchmark), and find the "
    "GPUs that stand out from their siblings. Ray needs pip install "
    "'.[fleet]' from the GPUDesk checkout; Slurm needs only srun and scontrol."
)
SURVEY_DESCRIPTION = (
    "Run one task per alive node, pinned to it, with GPUDesk's detection and, with "
    "--bench quick, the quick benchmark on each GPU (the CPU on nodes without one). "
    "With --slurm: one srun step, one task per node, and what Slurm declares "
    "(GRES, features, memory) checked against what each node has. "
    "A progress line per node goes to stderr. Exit 0 every node answered, 1 a node "
    "failed or its detection was refused (results still written), 2 bad usage, "
    "3 no cluster reachable."
)
SURVEY_FLAGS: tuple[Flag, ...] = (
    (
        ("--slurm",),
        {
            "action": "store_true",
            "help": "survey the Slurm cluster this machine submits to (srun, scontrol) "
            "instead of Ray",
        },
    ),
    (
        ("--partition",),
        {
            "metavar": "P",
            "help": "with --slurm: only the nodes of partition P (the step runs there)",
        },
    ),
    (
        ("--nodelist",),
        {
            "metavar": "LIST",
            "help": "with --slurm: only these nodes, as Slurm writes them (n[1-3],gpu7); "
            "inside a job, its own nodes by default",
        },
    ),
    (
        ("--address",),
        {
            "default": "auto",
            "metavar": "ADDR",
            "help": "the cluster: auto (default; RAY_ADDRESS or the local cluster), "
            "HOST:PORT, or ray://HOST:PORT",
        },
    ),
    (
        ("--bench",),
        {
            "choices": ("none", "quick"),
            "default": "none",
            "help": "none (default): detection only; quick: also the quick benchmark on every GPU",
        },
    ),
    (
        ("--timeout",),
        {
            "type": _timeout,
            "default": 300.0,
            "metavar": "S",
            "help": "seconds each node may take before it is reported as failed (default "
            "300; with --slurm the whole step, queue time included)",
        },
    ),
    (("--json",), {"action": "store_true", "help": "print the survey as JSON"}),
    (
        ("--out",),
        {
            "type": path_argument,
            "metavar": "FILE",
            "help": "also write the survey JSON to FILE (atomically)",
        },
    ),
    (
        ("--ship-code",),
        {
            "action": "store_true",
            "help": "send this GPUDesk to the nodes with Ray's runtime environment "
            "(instead of the one installed there)",
        },
    ),
)
SHOW_DESCRIPTION = (
    "Print the inventory and outliers of a survey file written by "
    "`gpudesk fleet survey --out FILE` (or --json). Exit 0, or 2 for an unreadable file."
)
SHOW_ARGUMENTS: tuple[Flag, ...] = (
    (("file",), {"type": path_argument, "metavar": "FILE", "help": "the survey JSON file"}),
    (("--json",), {"action": "store_true", "help": "print the survey as JSON"}),
)


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``fleet`` (with ``survey`` and ``show``) to ``subparsers``."""
    parser = subparsers.add_parser(
        "fleet",
        help="survey the GPUs of a Ray or Slurm cluster, node by node",
        description=FLEET_DESCRIPTION,
    )
    commands = parser.add_subparsers(dest="fleet_command", metavar="COMMAND", required=True)
    survey = commands.add_parser(
        "survey", help="survey a running Ray or Slurm cluster", description=SURVEY_DESCRIPTION
    )
    add_flags(survey, SURVEY_FLAGS)
    survey.set_defaults(handler=run_survey)
    show = commands.add_parser(
        "show",
        help="the inventory and outliers of a saved survey",
        description=SHOW_DESCRIPTION,
    )
    add_flags(show, SHOW_ARGUMENTS)
    show.set_defaults(handler=run_show)


def _progress_line(done: NodeDone) -> None:
    row = done.row
    slurm = row.get("slurm") or {}
    where = f"{row.get('hostname') or '?'} ({row.get('ip') or '?'})"
    if slurm.get("name"):
        where = f"{slurm['name']} ({row.get('hostname') or '?'})"
    if row.get("error"):
        outcome = f"FAILED: {row['error']}"
    else:
        detection = row.get("detection") or {}
        gpus = [gpu for gpu in detection.get("gpus", []) if gpu.get("kind") == "gpu"]
        runs = len(row.get("benches") or [])
        outcome = f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''}"
        if runs:
            outcome += f", {runs} benchmark run{'s' if runs != 1 else ''}"
    print(
        error_text(
            f"gpudesk: node {done.position}/{done.total} {where}: {outcome} "
            f"({row.get('duration_s', 0):.1f} s)"
        ),
        file=sys.stderr,
        flush=True,
    )


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout meanwhile to stderr, at the descriptor level.

    Ray prints now and then (warnings, worker notices), from Python and from
    its C++ core; on stdout that would break ``--json`` for every script.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _dump(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _slurm_survey(args: argparse.Namespace) -> dict[str, Any]:
    from gpudesk.fleet.slurm import HINT, SlurmUnavailableError, survey_slurm
    from gpudesk.fleet.survey import FleetUsageError

    if args.address != "auto":
        raise CliError("--address is for Ray: leave it out with --slurm", EXIT_USAGE)
    if args.ship_code:
        raise CliError("--ship-code is for Ray: leave it out with --slurm", EXIT_USAGE)
    try:
        with _stdout_to_stderr():
            return survey_slurm(
                partition=args.partition,
                nodelist=args.nodelist,
                bench=args.bench,
                timeout_s=args.timeout,
                on_node=_progress_line,
            )
    except FleetUsageError as exc:
        raise CliError(f"--{exc.field}: {exc}", EXIT_USAGE) from exc
    except SlurmUnavailableError as exc:
        raise CliError(f"{exc}\n{HINT}", EXIT_NOTHING_DETECTED) from exc


def _ray_survey(args: argparse.Namespace) -> dict[str, Any]:
    from gpudesk.fleet.survey import (
        ClusterUnreachableError,
        FleetUnavailableError,
        FleetUsageError,
        parse_address,
        survey,
    )

    try:
        parse_address(args.address)
    except FleetUsageError as exc:
        raise CliError(f"--address: {exc}", EXIT_USAGE) from exc
    try:
        with _stdout_to_stderr():
            document = survey(
                args.address,
                bench=args.bench,
                timeout_s=args.timeout,
                on_node=_progress_line,
                ship_code=args.ship_code,
            )
    except FleetUnavailableError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    except ClusterUnreachableError as exc:
        raise CliError(
            f"{exc}\nhint: start one with `ray start --head`, or pass the head's address "
            "with --address HOST:PORT (the GCS port printed by `ray start`, 6379 by default)",
            EXIT_NOTHING_DETECTED,
        ) from exc
    return document


def run_survey(args: argparse.Namespace) -> int:
    from gpudesk.fleet.document import parse_survey
    from gpudesk.storage import atomic_write_text

    if args.out is not None and args.out.is_dir():
        raise CliError(f"--out: {args.out} is a folder, not a file", EXIT_USAGE)
    if args.slurm:
        document = _slurm_survey(args)
    elif args.partition is not None or args.nodelist is not None:
        raise CliError("--partition and --nodelist are for Slurm: add --slurm", EXIT_USAGE)
    else:
        document = _ray_survey(args)
    text = _dump(document)
    if args.out is not None:
        write_output(args.out, lambda: atomic_write_text(args.out, text))
    view, _ = parse_survey(text, "survey")
    if args.json:
        sys.stdout.write(text)
    else:
        print(survey_text(view, document["summary"]))
    return survey_exit(document["summary"])


def survey_exit(summary: dict[str, Any]) -> int:
    """1 when a node failed or its detection was refused (unreadable: not a CPU node), else 0."""
    failed = summary.get("nodes_failed") or summary.get("nodes_refused")
    return EXIT_FAILURE if failed else EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    from gpudesk.fleet.checks import summarise
    from gpudesk.fleet.document import SurveyFileError, read_survey

    try:
        view, data = read_survey(args.file)
    except SurveyFileError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    summary = summarise(view.nodes)
    if args.json:
        # The summary is recomputed: a file's own summary is not trusted.
        sys.stdout.write(_dump({**data, "summary": summary}))
    else:
        print(survey_text(view, summary))
    return EXIT_OK


def _figure(value: float | None) -> str:
    from gpudesk.bench.text import format_figure

    return format_figure(value) if value is not None else ""


def _gemm_cell(gemm: Any, of_peak: str) -> str:
    text = f"{gemm.label} {_figure(gemm.value)} {gemm.unit}"
    return f"{text} ({of_peak.strip()})" if of_peak.strip() else text


def survey_text(view: SurveyView, summary: dict[str, Any]) -> str:
    """The readable survey: cluster line, inventory table, outliers, failed nodes."""
    from gpudesk.bench.text import format_fraction_of_peak
    from gpudesk.fleet.checks import Outlier, check_label, outlier_line
    from gpudesk.fleet.inventory import inventory

    outliers = [Outlier(**item) for item in summary["outliers"]]
    cluster = view.cluster
    lines = [
        wrap_paragraph(
            f"{cluster.title}, surveyed {cluster.surveyed_at:%Y-%m-%d %H:%M} UTC:",
            subsequent_indent="  ",
        ),
        f"{summary['nodes']} node{'s' if summary['nodes'] != 1 else ''}, {summary['gpus']} GPU"
        f"{'s' if summary['gpus'] != 1 else ''}, {summary['nodes_failed']} failed",
    ]
    if summary["by_model"]:
        lines.append(
            wrap_paragraph(
                "Models: "
                + ", ".join(f"{count} x {model}" for model, count in summary["by_model"].items()),
                subsequent_indent="  ",
            )
        )
    rows: list[list[str]] = []
    errors: list[str] = []
    for row in inventory(list(view.nodes), outliers):
        if row.error is not None:
            named = row.node if row.node == row.node_id else f"{row.node} ({row.node_id[:12]})"
            errors.append(f"{named}: {row.error}")
            continue
        gemm = row.gemm
        rows.append(
            [
                row.node,
                "CPU" if row.gpu_index is None else str(row.gpu_index),
                row.model,
                f"{row.memory_gib:.1f} GiB" if row.memory_gib else "n/a",  # as the GUI
                row.driver or "",
                _gemm_cell(gemm, format_fraction_of_peak(gemm.fraction_of_peak)) if gemm else "",
                f"{_figure(row.copy.value)} GB/s" if row.copy else "",
                ", ".join(dict.fromkeys(check_label(check) for check in row.checks)) or "ok",
            ]
        )
    if rows:
        lines.append("")
        lines.append(
            terminal_table(
                ["Node", "GPU", "Model", "Memory", "Driver", "GEMM (of peak)", "Copy", "Checks"],
                rows,
                {3, 6},
            )
        )
    lines.append("")
    if outliers:
        lines.append(f"Outliers ({len(outliers)}):")
        labels = {node.node_id: node.label for node in view.nodes}
        for outlier in outliers:
            where = labels.get(outlier.node_id, outlier.node_id[:12])
            lines.append(
                wrap_paragraph(outlier_line(outlier, where), indent="  ", subsequent_indent="    ")
            )
    else:
        lines.append("Outliers: none")
    # The published reference: one line per model (fleet median), not one per GPU.
    for line in summary.get("reference", []):
        lines.append(wrap_paragraph(f"Reference: {line['message']}", subsequent_indent="    "))
    if errors:
        lines.append("")
        lines.append(f"Failed nodes ({len(errors)}):")
        lines.extend(
            wrap_paragraph(error, indent="  ", subsequent_indent="    ") for error in errors
        )
    return "\n".join(lines)
