"""``gpudesk bench``: the built-in throughput test on this machine.

Module-level imports stay cheap (no numpy, no torch): everything heavy is
imported inside the handler.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    check_output_path,
    format_table,
    path_argument,
    write_output,
)
from gpudesk.cli.output import StderrProgress
from gpudesk.cli.textwidth import error_text, terminal_table

if TYPE_CHECKING:
    from gpudesk.bench.results import BenchResult

_BACKEND_CHOICES = ("auto", "numpy", "torch", "cupy")


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``bench`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "bench",
        help="measure GEMM throughput, memory bandwidth and transfers against the catalog",
        description=(
            "Measure GEMM throughput (FP64/FP32 on the CPU; FP32, TF32, FP16, BF16, FP64 on a "
            "GPU), memory-copy bandwidth, host/device transfers and a size sweep; each figure "
            "is set against the catalog's peak for the matched device. Every run is saved to "
            "the history. Exit 0 ok, 1 a test or the backend failed, 2 bad usage or an "
            "unavailable backend."
        ),
    )
    parser.add_argument(
        "--backend",
        choices=_BACKEND_CHOICES,
        default="auto",
        help="auto (default: torch, then cupy, then numpy), or one backend by name",
    )
    parser.add_argument(
        "--device", type=int, default=0, metavar="N", help="device index (default 0)"
    )
    parser.add_argument(
        "--full", action="store_true", help="the full run: larger sizes and sweep (minutes)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--out", type=path_argument, metavar="FILE", help="also write the JSON result to FILE"
    )
    parser.add_argument(
        "--tests",
        metavar="LIST",
        help="comma-separated subset of gemm,copy,h2d,d2h,sweep",
    )
    parser.add_argument(
        "--dtypes", metavar="LIST", help="comma-separated subset of fp64,fp32,tf32,fp16,bf16"
    )
    parser.add_argument(
        "--list-backends",
        action="store_true",
        help="list the backends, whether each is available here and why not",
    )
    parser.add_argument(
        "--no-save", action="store_true", help="do not save this run to the history"
    )
    parser.set_defaults(handler=run_bench)


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [part for part in text.split(",") if part.strip()]


def _list_backends(as_json: bool) -> int:
    from gpudesk.bench.backends import backend_statuses
    from gpudesk.cli.common import print_json

    statuses = backend_statuses()
    if as_json:
        print_json([status.model_dump(mode="json") for status in statuses])
        return EXIT_OK
    rows = [
        [
            status.name,
            "yes" if status.available else "no",
            status.version or "",
            status.reason,
        ]
        for status in statuses
    ]
    print(terminal_table(["Backend", "Available", "Version", "Why not"], rows, wrap={3}))
    return EXIT_OK


def run_bench(args: argparse.Namespace) -> int:
    if args.list_backends:
        return _list_backends(args.json)

    from gpudesk.bench.backends import BackendError, UnknownBackendError, choose_backend
    from gpudesk.bench.history import save_run
    from gpudesk.bench.plan import make_plan
    from gpudesk.bench.runner import run_benchmark
    from gpudesk.cli.common import load_catalog_for
    from gpudesk.storage import atomic_write_text

    if args.device < 0:
        raise CliError("--device must be 0 or more", EXIT_USAGE)
    if args.out is not None:
        check_output_path(args.out)  # before a run of minutes, not after it
    try:
        backend = choose_backend(args.backend)
        caps = backend.capabilities(args.device)
        plan = make_plan(
            caps,
            full=args.full,
            device_index=args.device,
            tests=_split(args.tests),
            dtypes=_split(args.dtypes),
        )
    except (UnknownBackendError, BackendError, ValueError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    if not plan.tests or ("gemm" in plan.tests and not plan.gemm_dtypes and len(plan.tests) == 1):
        raise CliError(
            f"nothing to run: backend {backend.name} cannot run the chosen tests/dtypes", EXIT_USAGE
        )

    catalog = load_catalog_for(args, report_problems=False)
    progress = StderrProgress()
    try:
        result = run_benchmark(plan, backend, progress.state, catalog=catalog.entries)
    finally:
        progress.close()

    if not args.no_save:
        try:
            saved = save_run(result)
        except OSError as exc:
            print(
                error_text(f"gpudesk: could not save the run to the history: {exc}"),
                file=sys.stderr,
            )
        else:
            if not args.json:
                print(f"saved to {saved}", file=sys.stderr)
    text = result.to_json()
    if args.out is not None:
        write_output(args.out, lambda: atomic_write_text(args.out, text))
    if args.json:
        sys.stdout.write(text)
    else:
        print(render_text(result))
    if result.error is not None:
        print(error_text(f"gpudesk: {result.error}"), file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK if result.ok else EXIT_FAILURE


# --- human output -------------------------------------------------------------


def _percent_bar(fraction: float | None, width: int = 10) -> str:
    from gpudesk.bench.text import format_fraction_of_peak

    if fraction is None:
        return ""
    # clamp before scaling: an imported report may hold any finite fraction (1e308 * 10 is inf)
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return f"{format_fraction_of_peak(fraction):>5} " + "#" * filled + "." * (width - filled)


def _method(result: BenchResult) -> str:
    """How the figures were measured, in one line (from the rows themselves)."""
    measured = [row for row in result.results if row.value is not None]
    repetitions = sorted({row.repetitions for row in measured if row.repetitions})
    warmups = sorted({row.warmup for row in measured if row.warmup is not None})
    timers = sorted({row.timer for row in measured if row.timer})
    parts = [
        "median of " + "/".join(str(n) for n in repetitions) + " timed repetitions"
        if repetitions
        else "median of the timed repetitions",
        "after " + "/".join(str(n) for n in warmups) + " warm-up" if warmups else "",
        "timer " + ", ".join(timers) if timers else "",
        "GEMM FLOPs = 2n^3; copy bytes = read + write",
    ]
    return "; ".join(part for part in parts if part)


def render_text(result: BenchResult) -> str:
    """The human report: context lines, the results table, the sweep, the notes."""
    # Imported here, not at the top: bench.summary loads the result models (pydantic),
    # which every other subcommand (and `gpudesk --help`) would pay for at start-up.
    from gpudesk.bench.summary import run_summary
    from gpudesk.bench.text import format_figure, size_label
    from gpudesk.cli.textwidth import wrap_long_lines

    # the label column is 10 wide: a long line continues under its value
    lines = [wrap_long_lines(f"{line.label + ':':<10}{line.text}") for line in run_summary(result)]
    if result.error is not None:
        return "\n".join(lines)
    lines.append(wrap_long_lines(f"Method:   {_method(result)}"))
    lines.append("")
    rows: list[list[str]] = []
    for row in result.results:
        if row.value is None:
            rows.append([row.label, size_label(row), "failed", "", "", "", row.error or ""])
            continue
        rows.append(
            [
                row.label,
                size_label(row),
                format_figure(row.value),
                f"{format_figure(row.min)}–{format_figure(row.max)}",
                f"{format_figure(row.peak)}" if row.peak is not None else "n/a",
                _percent_bar(row.fraction_of_peak),
                row.unit,
            ]
        )
    lines.append(
        format_table(
            ["Test", "Size", "Median", "Min–max", "Peak", "% of peak", "Unit"], rows, {1, 2, 3, 4}
        )
    )
    if result.sweep:
        lines.append("")
        lines.append("Size sweep (GEMM throughput against n):")
        sweep_rows = [
            [
                row.dtype.upper(),
                str(row.size),
                format_figure(row.value),
                _percent_bar(row.fraction_of_peak),
            ]
            for row in result.sweep
        ]
        lines.append(format_table(["Dtype", "n", "TFLOPS", "% of peak"], sweep_rows, {1, 2}))
    notes = [*result.notes]
    for row in result.results:
        notes.extend(f"{row.label}: {note}" for note in row.notes)
    if notes:
        lines.append("")
        lines.extend(wrap_long_lines(f"Note: {note}") for note in notes)
    return "\n".join(lines)
