"""``gpudesk compare``: side-by-side table as JSON/CSV, radar chart images, PDF report.

Only the image and PDF outputs need Qt; they import it inside the handler and
render offscreen, so ``--json`` and ``--csv`` work on a server without Qt.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudesk.catalog.names import short_name
from gpudesk.catalog.query import NameLookupError, find_entry
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    check_output_path,
    load_catalog_for,
    path_argument,
    print_json,
    write_output,
)
from gpudesk.cli.interrupts import interrupts_deferred
from gpudesk.cli.textwidth import display_width, output_width, terminal_table, wrap_paragraph
from gpudesk.compare.limits import MAX_COMPARED, MIN_COMPARED, is_comparable_count

if TYPE_CHECKING:
    from gpudesk.catalog.loader import Catalog
    from gpudesk.compare.table import Comparison
    from gpudesk.fleet.document import SurveyView
    from gpudesk.progress import Progress


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    compare = subparsers.add_parser(
        "compare",
        help=f"compare {MIN_COMPARED}-{MAX_COMPARED} GPUs: table (JSON/CSV), "
        "radar chart (PNG/SVG), PDF report",
    )
    compare.add_argument("names", nargs="+", metavar="NAME", help="id, name or fragment")
    shown = compare.add_mutually_exclusive_group()
    shown.add_argument(
        "--json",
        action="store_true",
        help="print the side-by-side table as JSON (what a pipe gets without --text)",
    )
    shown.add_argument(
        "--text",
        action="store_true",
        help="print the side-by-side table as text fitted to the terminal (what a "
        "terminal gets by default)",
    )
    compare.add_argument("--csv", type=path_argument, metavar="FILE", help="write the table as CSV")
    compare.add_argument(
        "--png", type=path_argument, metavar="FILE", help="write the radar chart as PNG"
    )
    compare.add_argument(
        "--svg", type=path_argument, metavar="FILE", help="write the radar chart as SVG"
    )
    compare.add_argument("--pdf", type=path_argument, metavar="FILE", help="write a PDF report")
    compare.add_argument("--paper", choices=("a4", "letter"), default="a4", help="PDF paper size")
    compare.add_argument(
        "--include-local",
        action="store_true",
        help="add this machine (detected GPUs, latest benchmark) to the PDF",
    )
    compare.add_argument(
        "--fleet",
        type=path_argument,
        metavar="SURVEY",
        help="add a saved fleet survey (gpudesk fleet survey --out) to the PDF",
    )
    compare.add_argument("--baseline", metavar="NAME", help="show the others as ratios to it")
    compare.set_defaults(handler=run_compare)


def resolve_selection(entries: list[CatalogEntry], names: list[str]) -> list[CatalogEntry]:
    """The GPUs named, in order, or a usage error naming what was wrong."""
    if not is_comparable_count(len(names)):
        raise CliError(
            f"compare needs {MIN_COMPARED} to {MAX_COMPARED} GPUs, got {len(names)}", EXIT_USAGE
        )
    selected: list[CatalogEntry] = []
    for name in names:
        try:
            entry = find_entry(entries, name)
        except NameLookupError as exc:
            raise CliError(str(exc), EXIT_USAGE) from exc
        if entry in selected:
            raise CliError(f"{name!r} names {entry.id} twice", EXIT_USAGE)
        selected.append(entry)
    return selected


def run_compare(args: argparse.Namespace) -> int:
    catalog = load_catalog_for(args)
    selected = resolve_selection(catalog.entries, args.names)
    baseline_id: str | None = None
    if args.baseline:
        try:
            baseline_id = find_entry(selected, args.baseline).id
        except NameLookupError as exc:
            raise CliError(
                f"--baseline: {exc} (it must be one of the compared GPUs)", EXIT_USAGE
            ) from exc
    outputs = [path for path in (args.csv, args.png, args.svg, args.pdf) if path is not None]
    for path in outputs:
        check_output_path(path)
    if args.fleet is not None and args.pdf is None:
        raise CliError("--fleet adds a section to the PDF: use it with --pdf FILE", EXIT_USAGE)
    # Read before anything is written: a bad survey file must cost no output.
    fleet = _read_fleet(args.fleet) if args.fleet is not None else None

    from gpudesk.compare.table import build_comparison

    comparison = build_comparison(selected, baseline_id=baseline_id)
    if args.csv is not None:
        from gpudesk.storage import atomic_write_text

        write_output(args.csv, lambda: atomic_write_text(args.csv, comparison.to_csv()))
    if args.png is not None or args.svg is not None or args.pdf is not None:
        # Ctrl-C while Qt paints stops between steps, never inside Qt (cli/interrupts.py).
        with interrupts_deferred() as progress:
            _write_qt_outputs(args, selected, catalog, fleet, progress)
    if args.json or (not outputs and not args.text and not sys.stdout.isatty()):
        # A pipe without --text keeps getting JSON, as it always has (scripts read it).
        print_json(comparison.to_json())
    elif args.text or not outputs:
        print(comparison_text(comparison, selected))
    for path in outputs:
        print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK


def comparison_text(comparison: Comparison, selected: list[CatalogEntry]) -> str:
    """The side-by-side table as text that fits :func:`output_width`.

    GPUs are headed by their short names; labels wrap; when even that is too wide the
    GPUs are shown a few at a time, each block with the labels again.
    """
    width = output_width()
    names = {entry.id: short_name(entry) for entry in selected}
    gpu_indices = list(range(len(comparison.columns)))

    def table(indices: list[int]) -> str:
        headers = [
            "",
            *(names.get(comparison.columns[i].id, comparison.columns[i].name) for i in indices),
        ]
        rows: list[list[str]] = []
        for group, all_rows in comparison.groups():
            shown = [row for row in all_rows if not row.is_empty]
            if not shown:
                continue
            rows.append([group.value.upper(), *([""] * len(indices))])
            for row in shown:
                cells = []
                for index in indices:
                    text = comparison.cell_text(row, index)
                    cells.append(text + " *" if comparison.is_best(row, index) else text)
                rows.append([f"  {row.header}", *cells])
        right = set(range(1, len(indices) + 1))
        # a GPU's column wraps too: a text cell (the device-to-device link's 65
        # characters) set the column's width, one GPU a block at 80 columns
        return terminal_table(headers, rows, right, width, wrap={0, *right}, wrap_headers=True)

    per_block = len(gpu_indices)
    while True:
        blocks = [gpu_indices[i : i + per_block] for i in range(0, len(gpu_indices), per_block)]
        texts = [table(block) for block in blocks]
        widest = max(display_width(line) for text in texts for line in text.splitlines())
        if widest <= width or per_block == 1:
            break
        per_block -= 1
    notes = ["* best in row"]
    baseline = next((c for c in comparison.columns if c.id == comparison.baseline_id), None)
    if baseline is not None:
        notes.append(f"×N: ratio to {names.get(baseline.id, baseline.name)} (baseline)")
    notes.append("--json for every figure as data")
    return "\n\n".join(texts) + "\n\n" + wrap_paragraph("; ".join(notes), width)


def _read_fleet(path: Path) -> Any:
    """The survey for the PDF's Fleet section, or a usage error naming the file."""
    from gpudesk.fleet.document import SurveyFileError, read_survey

    try:
        view, _ = read_survey(path)
    except SurveyFileError as exc:
        raise CliError(f"--fleet: {exc}", EXIT_USAGE) from exc
    return view


def _write_qt_outputs(
    args: argparse.Namespace,
    selected: list[CatalogEntry],
    catalog: Catalog,
    fleet: SurveyView | None,
    progress: Progress,
) -> None:
    """The --png, --svg and --pdf files; ``progress`` is checked before each is replaced."""
    if args.png is not None or args.svg is not None:
        export_radar = _offscreen_radar_exporter()
        for path, image_format in ((args.png, "png"), (args.svg, "svg")):
            if path is not None:
                progress.check()
                write_output(
                    path,
                    functools.partial(
                        export_radar, selected, path, image_format, catalog, progress=progress
                    ),
                )
    if args.pdf is not None:
        progress.check()
        from gpudesk.report.pdf import write_pdf_report

        write_output(
            args.pdf,
            lambda: write_pdf_report(
                selected,
                args.pdf,
                catalog=catalog,
                paper=args.paper,
                include_local=args.include_local,
                fleet=fleet,
                progress=progress,
            ),
        )


def _offscreen_radar_exporter() -> Any:
    """``export_radar``, with a QApplication that needs no window or display."""
    from gpudesk.render.app import ensure_application

    try:
        ensure_application()
        from gpudesk.render.export import export_radar
    except ImportError as exc:
        raise CliError(f"--png/--svg need the Qt libraries (PySide6): {exc}") from exc
    return export_radar
