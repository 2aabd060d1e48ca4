"""``gpudesk prices``: cloud rates per GPU from SkyPilot's catalog, and their history.

``gpudesk prices [NAME]`` shows the rates; ``gpudesk prices update`` imports a
new snapshot (from SkyPilot over HTTPS, a URL, or a local folder) into the
user's price history. The bundled snapshot works offline from the first run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any

from gpudesk.catalog.price_snapshots import (
    CATALOG_REPOSITORY,
    DEFAULT_BASE_URL,
    DEFAULT_CLOUDS,
    ImportReport,
    PriceDataError,
    PriceHistory,
    PriceSourceError,
    default_history_path,
    fetch_clouds,
    read_folder,
)
from gpudesk.catalog.query import NameLookupError, find_entry
from gpudesk.catalog.rate_book import (
    RATE_STALE_AFTER_DAYS,
    ProviderRate,
    RateBook,
    RateFilter,
    RateSummary,
    format_usd,
)
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.catalog.skypilot import RATE_BASIS, valid_cloud_name
from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    fit_columns,
    format_table,
    load_catalog_for,
    print_json,
    terminal_width,
)
from gpudesk.cli.textwidth import error_text, wrap_paragraph

#: Problems listed after an import; the rest are counted.
_PROBLEMS_SHOWN = 8


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "prices",
        help="cloud rates per GPU (lowest, median, highest on-demand; spot; history)",
        description="Cloud rates per GPU from SkyPilot's public catalog (bundled, or "
        "imported with 'gpudesk prices update'), plus the catalog's hand-entered rates "
        "for providers SkyPilot lacks. Each provider counts once, at its lowest rate; "
        f"a rate per GPU-hour is the {RATE_BASIS}.",
        epilog="gpudesk prices update [--from DIR|URL] [--clouds a,b]: import a snapshot "
        f"(default: {DEFAULT_BASE_URL}) into {default_history_path()}",
    )
    parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="a GPU (id, name or fragment); 'update' imports a new snapshot",
    )
    parser.add_argument("--spot", action="store_true", help="show spot rates")
    parser.add_argument("--region", metavar="R", help="only regions containing R")
    parser.add_argument("--provider", metavar="P", help="only providers containing P")
    parser.add_argument("--history", action="store_true", help="a dated series of the rates")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--from",
        dest="source",
        metavar="DIR|URL",
        help="with 'update': a folder (a SkyPilot checkout, <cloud>/vms.csv files, or "
        "dated snapshot folders) or an https:// base URL",
    )
    parser.add_argument(
        "--clouds",
        metavar="a,b",
        help="with 'update': only these clouds (e.g. lambda,aws); default: "
        + ",".join(DEFAULT_CLOUDS),
    )
    parser.set_defaults(handler=run_prices)


def run_prices(args: argparse.Namespace) -> int:
    if args.name == "update":
        return run_update(args)
    if args.source is not None or args.clouds is not None:
        raise CliError("--from and --clouds go with 'gpudesk prices update'", EXIT_USAGE)
    catalog = load_catalog_for(args)
    book = RateBook.load()
    for problem in book.problems:
        print(error_text(f"gpudesk: prices: {problem}"), file=sys.stderr)
    rate_filter = RateFilter(region=args.region, provider=args.provider)
    if args.name is None:
        if args.history:
            raise CliError("--history needs a GPU: gpudesk prices NAME --history", EXIT_USAGE)
        return _all_gpus(catalog.entries, book, rate_filter, spot=args.spot, as_json=args.json)
    try:
        entry = find_entry(catalog.entries, args.name)
    except NameLookupError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    if args.history:
        return _history(entry, book, rate_filter, as_json=args.json)
    summary = book.summary(entry.id, entry, rate_filter)
    today = book.catalog_date() or dt.date.today()
    if args.json:
        record = summary.as_json()
        record["name"] = entry.name
        record["catalog_date"] = today.isoformat()
        record["stale_after_days"] = RATE_STALE_AFTER_DAYS
        print_json(record)
        return EXIT_OK
    _print_one(entry, summary, today, spot=args.spot)
    return EXIT_OK


def _print_one(entry: CatalogEntry, summary: RateSummary, today: dt.date, *, spot: bool) -> None:
    from gpudesk.cli.textwidth import wrap_paragraph

    unit = summary.unit  # "GPU", or "chip" for a TPU slice or a Trainium instance
    print(wrap_paragraph(f"{entry.name}: cloud rates per {unit}-hour"))
    lines = _summary_lines(summary)
    if not lines:
        no_rate = "no rate found (see 'gpudesk show' for the entry's price notes)"
        print(wrap_paragraph(no_rate, indent="  "))
        return
    for line in lines:
        print(wrap_paragraph(line, indent="  ", subsequent_indent="    "))
    rates = summary.spot if spot else summary.rates
    headers = ["Provider", "Kind", f"$/{unit}-h", "Region", "Date", "Instance", "Source"]
    rows = [_rate_row(rate, today) for rate in rates]
    headers, rows, _ = fit_columns(headers, rows, terminal_width())
    print()
    print(format_table(headers, rows, right_aligned={2}))
    print()
    print(wrap_paragraph(f"A rate per {unit}-hour is the {summary.basis}."))


def _summary_lines(summary: RateSummary) -> list[str]:
    lines: list[str] = []
    low, median, high = summary.lowest, summary.median_usd, summary.highest
    if low is not None and median is not None and high is not None:
        lines.append(
            f"on-demand: lowest {format_usd(low.usd_per_gpu_hour)} ({_where(low)}), "
            f"median {format_usd(median)}, highest {format_usd(high.usd_per_gpu_hour)} "
            f"({_where(high)}); {len(summary.on_demand)} provider(s)"
        )
    if summary.marketplace:
        best = summary.marketplace[0]
        lines.append(f"marketplace: from {format_usd(best.usd_per_gpu_hour)} ({_where(best)})")
    if summary.lowest_spot is not None:
        spot = summary.lowest_spot
        lines.append(f"spot: lowest {format_usd(spot.usd_per_gpu_hour)} ({_where(spot)})")
    return lines


def _where(rate: ProviderRate) -> str:
    parts = [rate.provider, rate.region, rate.date.isoformat() if rate.date else "undated"]
    return " ".join(part for part in parts[:2] if part) + (f", {parts[2]}")


def _rate_row(rate: ProviderRate, today: dt.date) -> list[str]:
    date = rate.date.isoformat() if rate.date else "undated"
    if rate.is_stale(today):
        date += " (stale)"
    instance = f"{rate.instance_type} ({rate.gpu_count}x)" if rate.instance_type else "-"
    return [
        rate.provider,
        rate.kind.replace("_", "-"),
        format_usd(rate.usd_per_gpu_hour),
        rate.region or "-",
        date,
        instance,
        rate.link or "-",
    ]


def _all_gpus(
    entries: list[CatalogEntry],
    book: RateBook,
    rate_filter: RateFilter,
    *,
    spot: bool,
    as_json: bool,
) -> int:
    summaries = [(entry, book.summary(entry.id, entry, rate_filter)) for entry in entries]
    summaries = [(entry, s) for entry, s in summaries if s.rates]
    if as_json:
        print_json(
            {
                "catalog_date": None if book.catalog_date() is None else str(book.catalog_date()),
                "rate_basis": RATE_BASIS,
                "gpus": [s.as_json() for _entry, s in summaries],
            }
        )
        return EXIT_OK
    headers = ["GPU", "Lowest", "Where", "Median", "Highest", "Spot", "Providers", "Date"]
    rows: list[list[str]] = []
    for entry, summary in summaries:
        low, high, median = summary.lowest, summary.highest, summary.median_usd
        spot_rate = summary.lowest_spot
        if spot and spot_rate is None:
            continue
        rows.append(
            [
                entry.id,
                "-" if low is None else format_usd(low.usd_per_gpu_hour),
                "-" if low is None else f"{low.provider} {low.region}".strip(),
                "-" if median is None else format_usd(median),
                "-" if high is None else format_usd(high.usd_per_gpu_hour),
                "-" if spot_rate is None else format_usd(spot_rate.usd_per_gpu_hour),
                str(len({rate.provider for rate in summary.rates})),
                "-" if summary.date is None else summary.date.isoformat(),
            ]
        )
    headers, rows, _ = fit_columns(headers, rows, terminal_width())
    print(format_table(headers, rows, right_aligned={1, 3, 4, 5, 6}))
    print()
    print(
        wrap_paragraph(
            "On-demand rates per GPU-hour; each provider once, at its lowest. "
            f"{RATE_BASIS.capitalize()}."
        )
    )
    return EXIT_OK


def _history(entry: CatalogEntry, book: RateBook, rate_filter: RateFilter, *, as_json: bool) -> int:
    points = book.history(entry.id, rate_filter)
    if as_json:
        print_json({"gpu": entry.id, "name": entry.name, "history": [p.as_json() for p in points]})
        return EXIT_OK
    if not points:
        print(f"{entry.name}: no dated SkyPilot rates")
        return EXIT_OK
    headers = ["Date", "Lowest", "Where", "Median", "Highest", "Providers", "Spot"]
    rows = [
        [
            p.date.isoformat(),
            format_usd(p.lowest.usd_per_gpu_hour),
            f"{p.lowest.provider} {p.lowest.region}",
            format_usd(p.median_usd),
            format_usd(p.highest.usd_per_gpu_hour),
            str(p.providers),
            "-" if p.lowest_spot is None else format_usd(p.lowest_spot.usd_per_gpu_hour),
        ]
        for p in points
    ]
    from gpudesk.cli.textwidth import terminal_table, wrap_paragraph

    print(wrap_paragraph(f"{entry.name}: on-demand rates per GPU-hour by snapshot date"))
    print(terminal_table(headers, rows, right_aligned={1, 3, 4, 5, 6}))
    return EXIT_OK


def run_update(args: argparse.Namespace) -> int:
    clouds = _parse_clouds(args.clouds)
    source = args.source or DEFAULT_BASE_URL
    today = dt.date.today()
    try:
        if "://" in source:
            report = fetch_clouds(source, clouds or DEFAULT_CLOUDS, today=today)
        else:
            folder = Path(source)
            if not folder.is_dir():
                raise CliError(
                    f"{source}: not a folder (give a folder or an https:// URL)", EXIT_USAGE
                )
            report = read_folder(folder, clouds=clouds, today=today)
    except PriceDataError as exc:
        code = EXIT_USAGE if isinstance(exc, PriceSourceError) else EXIT_FAILURE
        raise CliError(str(exc), code) from exc
    history = PriceHistory(default_history_path())
    stored = 0
    if report.snapshots:
        try:
            stored = history.store(report.snapshots)
        except PriceDataError as exc:
            raise CliError(str(exc)) from exc
    if args.json:
        print_json(_report_json(report, source, stored, history.path))
    else:
        _print_report(report, source, stored, history.path)
    return EXIT_OK if report.snapshots else EXIT_FAILURE


def _parse_clouds(text: str | None) -> list[str] | None:
    if text is None:
        return None
    clouds = [part.strip().lower() for part in text.split(",") if part.strip()]
    bad = [cloud for cloud in clouds if not valid_cloud_name(cloud)]
    if not clouds or bad:
        raise CliError(f"--clouds: {text!r} is not a list like 'lambda,aws'", EXIT_USAGE)
    return clouds


def _report_json(report: ImportReport, source: str, stored: int, path: Path) -> dict[str, Any]:
    return {
        "source": source,
        "stored_in": str(path),
        "offers_stored": stored,
        "snapshots": [
            {
                "taken": s.taken.isoformat(),
                "basis": s.basis,
                "clouds": s.clouds,
                "offers": len(s.offers),
            }
            for s in report.snapshots
        ],
        "problems": [str(problem) for problem in report.problems],
        "more_problems": report.more_problems,
        "failed_clouds": report.failed_clouds,
        "unmapped_accelerators": dict(sorted(report.unmapped.items())),
    }


def _print_report(report: ImportReport, source: str, stored: int, path: Path) -> None:
    from gpudesk.cli.textwidth import wrap_paragraph

    if report.snapshots:
        dates = ", ".join(sorted({s.taken.isoformat() for s in report.snapshots}))
        gpus = {offer.gpu_id for s in report.snapshots for offer in s.offers}
        clouds = sorted({cloud for s in report.snapshots for cloud in s.clouds})
        print(
            wrap_paragraph(
                f"Imported {len(report.snapshots)} snapshot(s) ({dates}) from {source}: "
                f"{stored} offers for {len(gpus)} GPUs from {', '.join(clouds)}; kept in {path}"
            )
        )
    else:
        print(
            wrap_paragraph(f"Nothing imported from {source}; the stored prices are unchanged."),
            file=sys.stderr,
        )
    problems = report.problems
    if problems:
        total = len(problems) + report.more_problems
        print(f"{total} row(s) or file(s) skipped:", file=sys.stderr)
        for problem in problems[:_PROBLEMS_SHOWN]:
            print(
                wrap_paragraph(str(problem), indent="  ", subsequent_indent="    "),
                file=sys.stderr,
            )
        if total > _PROBLEMS_SHOWN:
            print(f"  ... and {total - _PROBLEMS_SHOWN} more", file=sys.stderr)
    if report.failed_clouds:
        print(
            wrap_paragraph(
                "Kept the last good data for: " + ", ".join(sorted(set(report.failed_clouds)))
            ),
            file=sys.stderr,
        )
    if report.unmapped:
        # one name a line: a single paragraph of them ran to 875 columns
        print("Accelerator names not mapped to a catalog GPU (rows, not guessed):")
        for name, count in sorted(report.unmapped.items()):
            reason = report.unmapped_reasons.get(name)
            print(
                wrap_paragraph(
                    f"{name} ({count})" + (f": {reason}" if reason else ""),
                    indent="  ",
                    subsequent_indent="    ",
                )
            )
    print(f"Source: {CATALOG_REPOSITORY}")
