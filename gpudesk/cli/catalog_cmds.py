"""``gpudesk list``, ``show`` and ``validate``: the catalog from the command line."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpudesk.catalog.loader import load_directory, user_folder_present
from gpudesk.catalog.metrics import METRICS, derived_values
from gpudesk.catalog.names import interconnect_words, short_name
from gpudesk.catalog.prices import STALE_AFTER_MONTHS, default_cloud_rate, is_stale, stale_note
from gpudesk.catalog.query import (
    SHOWN_BY_DEFAULT,
    CatalogFilter,
    Feature,
    NameLookupError,
    entries_without,
    filter_entries,
    find_entry,
    sort_entries,
)
from gpudesk.catalog.records import entries_csv, entry_record
from gpudesk.catalog.schema import CatalogEntry, Kind, Segment, Status
from gpudesk.catalog.sourcing import sourcing_issues
from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    fit_columns,
    format_table,
    load_catalog_for,
    path_argument,
    print_json,
    table_width,
    terminal_width,
)
from gpudesk.cli.textwidth import output_width, wrap_paragraph
from gpudesk.paths import bundled_catalog_dir, user_catalog_dir


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    listing = subparsers.add_parser(
        "list",
        help="list catalog GPUs, filtered and sorted",
        description="List the catalog's GPUs, filtered and sorted. The table fits the "
        "terminal (columns on the right are dropped; --wide shows all).",
        epilog="sortable fields: "
        + ", ".join(dict.fromkeys(["name", "id", "release_year", *METRICS])),
    )
    segments = ", ".join(segment.value for segment in Segment)
    listing.add_argument(
        "--segment",
        action="append",
        choices=[segment.value for segment in Segment],
        help=f"only this segment ({segments}); repeat for several",
    )
    listing.add_argument(
        "--vendor", action="append", metavar="V", help="only this vendor (NVIDIA, AMD, Intel, ...)"
    )
    listing.add_argument(
        "--kind",
        action="append",
        choices=[kind.value for kind in Kind],
        help="only this kind of device (gpu, soc, tpu, npu, asic); repeat for several",
    )
    listing.add_argument(
        "--status",
        action="append",
        choices=[status.value for status in Status],
        help="only parts with this status (shipping, announced, cloud-only, end-of-life); "
        "repeat for several. Default: every status but announced",
    )
    listing.add_argument(
        "--include-announced",
        action="store_true",
        help="also list announced parts (not on sale yet; hidden by default)",
    )
    listing.add_argument(
        "--min-memory-gb",
        type=float,
        metavar="N",
        help="at least N GiB of memory (as sold: a vendor's 'N GB')",
    )
    listing.add_argument(
        "--max-price-usd", type=float, metavar="N", help="priced at most N USD (unpriced GPUs drop)"
    )
    listing.add_argument("--min-year", type=int, metavar="Y", help="released in Y or later")
    listing.add_argument("--max-year", type=int, metavar="Y", help="released in Y or earlier")
    listing.add_argument(
        "--require", metavar="FEATURES", help="comma list of: ecc, mig, nvlink, tensor-cores"
    )
    listing.add_argument(
        "--search", metavar="TEXT", default="", help="words in the name, id, architecture or notes"
    )
    listing.add_argument(
        "--sort",
        metavar="FIELD[:desc]",
        help="sort by a field (see the list below), e.g. price_usd or memory_gb:desc",
    )
    listing.add_argument(
        "--wide", action="store_true", help="show every column even if wider than the terminal"
    )
    output = listing.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print a JSON array")
    output.add_argument("--csv", action="store_true", help="print CSV")
    listing.set_defaults(handler=run_list)

    show = subparsers.add_parser("show", help="show one GPU with every field")
    show.add_argument("name", help='id, full name or unambiguous fragment ("4090", "a100 pcie")')
    show.add_argument("--json", action="store_true", help="print the entry as JSON")
    show.set_defaults(handler=run_show)

    validate = subparsers.add_parser("validate", help="check catalog folders, list every problem")
    validate.add_argument(
        "dirs",
        nargs="*",
        type=path_argument,
        metavar="DIR",
        help="folders to check (default: the bundled and user catalogs, and any --catalog DIR)",
    )
    validate.add_argument(
        "--strict",
        action="store_true",
        help="also check that every source can be followed (specific pages, no home pages, "
        "no local paths), cloud rates have a date and pricing page, and notes hold no "
        "maintainer wording; deprecated fields count as problems",
    )
    validate.set_defaults(handler=run_validate)


def _parse_features(text: str | None) -> frozenset[Feature]:
    if not text:
        return frozenset()
    features: set[Feature] = set()
    for word in text.split(","):
        word = word.strip().lower()
        if not word:
            continue
        try:
            features.add(Feature(word))
        except ValueError:
            known = ", ".join(feature.value for feature in Feature)
            raise CliError(
                f"--require: unknown feature {word!r} (known: {known})", EXIT_USAGE
            ) from None
    return frozenset(features)


def _parse_sort(text: str | None) -> tuple[str, bool] | None:
    if not text:
        return None
    key, _, direction = text.partition(":")
    if direction not in ("", "asc", "desc"):
        raise CliError(f"--sort: direction must be asc or desc, not {direction!r}", EXIT_USAGE)
    if key not in METRICS and key not in CatalogEntry.model_fields:
        from gpudesk.cli.parsing import nearest

        # the 24 numeric fields made a 330-column line; --help's epilog lists them
        guess = nearest(key, [*METRICS, *CatalogEntry.model_fields])
        hint = f"; did you mean {guess!r}?" if guess else ""
        raise CliError(
            f"--sort: unknown field {key!r}{hint} (gpudesk list --help lists them)", EXIT_USAGE
        )
    return key, direction == "desc"


_LIST_COLUMNS = (
    "memory_gb",
    "bandwidth_gbs",
    "fp32_tflops",
    "fp16_tensor_tflops",
    "tdp_w",
    "price_usd",
    "fp16_tensor_tflops_per_kusd",
)


def run_list(args: argparse.Namespace) -> int:
    statuses = _statuses(args.status, include_announced=args.include_announced)
    criteria = CatalogFilter(
        text=args.search,
        segments=frozenset(Segment(s) for s in args.segment) if args.segment else None,
        vendors=frozenset(args.vendor) if args.vendor else None,
        kinds=frozenset(Kind(kind) for kind in args.kind) if args.kind else None,
        statuses=statuses,
        min_memory_gb=args.min_memory_gb,
        max_price_usd=args.max_price_usd,
        min_year=args.min_year,
        max_year=args.max_year,
        features=_parse_features(args.require),
    )
    sort = _parse_sort(args.sort)
    catalog = load_catalog_for(args)
    entries = filter_entries(catalog.entries, criteria)
    hidden = _announced_hidden(catalog.entries, criteria)
    entries = (
        sort_entries(entries, sort[0], descending=sort[1])
        if sort
        else sort_entries(entries, "name")
    )
    today = dt.date.today()
    if args.json:
        print_json([_json_record(entry, today) for entry in entries])
    elif args.csv:
        sys.stdout.write(entries_csv(entries))
    else:
        width = None if args.wide else terminal_width()
        shown = sort[0] if sort else None
        headers, rows = _list_table(entries, compact=False, today=today, sort_key=shown)
        if width is not None and table_width(headers, rows) > width:
            # Short names and headers first; then columns go from the right (the sort
            # column stands first of them, so it goes last).
            headers, rows = _list_table(entries, compact=True, today=today, sort_key=shown)
        # ID, Name and the sort column stay, whatever the width
        keep = 3 if shown not in (None, "id", "name") else 2
        headers, rows, dropped = fit_columns(headers, rows, width, keep=keep)
        numeric = {
            index
            for index, header in enumerate(headers)
            if index >= 2 and (header in _NUMERIC_HEADERS)
        }
        print(format_table(headers, rows, right_aligned=numeric))
        print(f"\n{len(entries)} of {len(catalog.entries)} entries")
        if hidden:
            print(
                wrap_paragraph(
                    f"{hidden} announced part{'s' if hidden != 1 else ''} (not on sale yet) "
                    "hidden: --include-announced lists them"
                )
            )
        unranked = len(entries_without(entries, shown)) if shown is not None else 0
        if unranked:
            print(
                wrap_paragraph(
                    f"{unranked} without {shown} in the catalog (not published, or not "
                    "known) listed last, not ranked"
                )
            )
        if MEMORY_HEADER_COMPACT in headers or METRICS["memory_gb"].header in headers:
            print(wrap_paragraph(MEMORY_FOOTNOTE))
        price_shown = any(cell.endswith("*") for row in rows for cell in row)
        if price_shown:
            print(f"* price seen more than {STALE_AFTER_MONTHS} months ago, may be out of date")
        if dropped:
            print(
                wrap_paragraph(
                    f"(not shown for the terminal's width: {', '.join(dropped)}; --wide shows all)"
                )
            )
    return EXIT_OK


def _statuses(wanted: list[str] | None, *, include_announced: bool) -> frozenset[Status] | None:
    """The statuses to list: those asked for, else all but announced (unless included)."""
    if wanted:
        return frozenset(Status(status) for status in wanted)
    return None if include_announced else SHOWN_BY_DEFAULT


def _announced_hidden(entries: list[CatalogEntry], criteria: CatalogFilter) -> int:
    """How many announced parts the other criteria keep but the status default hides."""
    if criteria.statuses is None or Status.ANNOUNCED in criteria.statuses:
        return 0
    if criteria.statuses != SHOWN_BY_DEFAULT:
        return 0  # statuses the user named: nothing is hidden behind their back
    announced = replace(criteria, statuses=frozenset({Status.ANNOUNCED}))
    return len(filter_entries(entries, announced))


def _price_is_stale(entry: CatalogEntry, today: dt.date) -> bool:
    return entry.price_usd is not None and is_stale(entry.price_date, today)


def _list_cell(entry: CatalogEntry, key: str, today: dt.date) -> str:
    text = METRICS[key].format(METRICS[key].value(entry))
    if key == "price_usd" and _price_is_stale(entry, today):
        return text + "*"
    return text


def _json_record(entry: CatalogEntry, today: dt.date) -> dict[str, Any]:
    """The entry's record plus whether its price and default cloud rate are stale."""
    record = entry_record(entry)
    rate = default_cloud_rate(entry)
    record["price_stale"] = None if entry.price_usd is None else _price_is_stale(entry, today)
    record["cloud_hourly_stale"] = None if rate is None else is_stale(rate.date, today)
    return record


#: Under a list that shows memory: the unit, and the vendor's "GB" it is the same as.
MEMORY_FOOTNOTE = "Memory in GiB, as sold: a vendor's '80 GB' is 80 GiB, 81,920 MiB in nvidia-smi"

#: Short headers for a narrow terminal (units stay).
_COMPACT_HEADERS = {
    "memory_gb": "Mem GiB",
    "bandwidth_gbs": "BW GB/s",
    "fp32_tflops": "FP32 TF",
    "fp16_tensor_tflops": "FP16 TC TF",
    "tdp_w": "TDP W",
    "price_usd": "USD",
    "fp16_tensor_tflops_per_kusd": "TF/kUSD",
    # shown only when sorted by
    "memory_bus_bits": "Bus bit",
    "l2_cache_mb": "L2 MB",
    "l3_cache_mb": "L3 MB",
    "boost_clock_mhz": "Boost MHz",
    "shader_cores": "Shaders",
    "fp16_tflops": "FP16 TF",
    "fp64_tflops": "FP64 TF",
    "tf32_tensor_tflops": "TF32 TC TF",
    "bf16_tensor_tflops": "BF16 TC TF",
    "fp8_tensor_tflops": "FP8 TC TF",
    "int8_tensor_tops": "INT8 TOPS",
    "mig_max_instances": "MIG",
    "memory_gb_per_kusd": "GiB/kUSD",
    "fp32_tflops_per_w": "FP32 TF/W",
    "fp16_tensor_tflops_per_w": "TC TF/W",
    "cloud_hourly_usd": "USD/h",
}
MEMORY_HEADER_COMPACT = _COMPACT_HEADERS["memory_gb"]
_COMPACT_NAME_CHARS = 26
#: The list's number columns (right-aligned): every metric's header, long and short.
_NUMERIC_HEADERS = frozenset(
    [*(metric.header for metric in METRICS.values()), *_COMPACT_HEADERS.values()]
)
_COMPACT_ORDER = (
    "memory_gb",
    "fp16_tensor_tflops",
    "price_usd",
    "bandwidth_gbs",
    "fp16_tensor_tflops_per_kusd",
    "fp32_tflops",
    "tdp_w",
)


def _list_table(
    entries: list[CatalogEntry], *, compact: bool, today: dt.date, sort_key: str | None = None
) -> tuple[list[str], list[list[str]]]:
    """The list's headers and rows: every column, or (``compact``) short names and the
    buyers' first figures first, the right-most dropped first when space runs out.

    The ``sort_key`` column (a METRICS key or an entry field) is always in the table,
    and in the compact one right after the name: the column a list is sorted by is the
    one a reader checks the order against (``list --sort price_usd`` at 80 columns had
    dropped the price).
    """

    def name(entry: CatalogEntry) -> str:
        if not compact:
            return entry.name
        text = short_name(entry)
        return text if len(text) <= _COMPACT_NAME_CHARS else text[: _COMPACT_NAME_CHARS - 1] + "…"

    if compact:
        keys: tuple[str, ...] = (*_COMPACT_ORDER, "segment")
    else:
        keys = ("segment", *_LIST_COLUMNS)
    if sort_key is not None and sort_key not in ("id", "name"):
        keys = (sort_key, *(key for key in keys if key != sort_key)) if compact else keys
        if sort_key not in keys:
            keys = (*keys, sort_key)
    headers = ["ID", "Name", *(_column_header(key, compact) for key in keys)]
    rows = [
        [entry.id, name(entry), *(_column_cell(entry, key, today, compact) for key in keys)]
        for entry in entries
    ]
    return headers, rows


#: A text field's cell in the compact table (``--sort architecture``) keeps this many
#: characters, so that ID, Name and it fit 80 columns.
_COMPACT_FIELD_CHARS = 20


def _column_header(key: str, compact: bool) -> str:
    if key == "segment":
        return "Segment"
    if compact and key in _COMPACT_HEADERS:
        return _COMPACT_HEADERS[key]
    return METRICS[key].header if key in METRICS else key


def _column_cell(entry: CatalogEntry, key: str, today: dt.date, compact: bool) -> str:
    if key == "segment":
        return _segment_cell(entry)
    if key in METRICS:
        return _list_cell(entry, key, today)
    value = getattr(entry, key, None)
    value = getattr(value, "value", value)  # an enum's own word
    text = "" if value is None else str(value)
    if compact and len(text) > _COMPACT_FIELD_CHARS:
        return text[: _COMPACT_FIELD_CHARS - 1] + "…"
    return text


def run_show(args: argparse.Namespace) -> int:
    catalog = load_catalog_for(args)
    try:
        entry = find_entry(catalog.entries, args.name)
    except NameLookupError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    today = dt.date.today()
    if args.json:
        print_json(_json_record(entry, today))
        return EXIT_OK
    print(entry.name)
    print("=" * len(entry.name))
    record = entry.model_dump(mode="json")
    width = max(len(key) for key in [*record, *derived_values(entry)])
    text_width = max(40, output_width() - width - 2)
    for key, value in record.items():
        if key in ("id", "name", "device_type") or value is None or value == []:
            continue
        indent = "\n" + " " * (width + 2)
        if key == "cloud_rates":
            lines = [_rate_line(entry, index, today) for index in range(len(entry.cloud_rates))]
            shown = indent.join(_wrap(line, text_width, indent) for line in lines)
            print(f"{key.ljust(width)}  {shown}")
            continue
        if key == "price_date" and _price_is_stale(entry, today):
            value = f"{value}  ({stale_note('price', entry.price_date)})"
        if key == "interconnect" and entry.interconnect is not None:
            shown = _wrap(interconnect_words(entry.interconnect), text_width, indent)
            shown += indent + _wrap(entry.interconnect.source, text_width, indent)
        elif key in METRICS:
            shown = f"{METRICS[key].format(float(value))} {METRICS[key].unit}".rstrip()
            if key == "memory_gb":  # the figure as sold, which is GiB
                shown += f" (sold as '{float(value):g} GB': GPU vendors' GB are GiB)"
        elif isinstance(value, bool):
            shown = "yes" if value else "no"
        elif isinstance(value, list):
            shown = indent.join(_wrap(str(item), text_width, indent) for item in value)
        else:
            shown = _wrap(str(value), text_width, indent)
        print(f"{key.ljust(width)}  {shown}")
    for key, value in derived_values(entry).items():
        metric = METRICS[key]
        print(f"{key.ljust(width)}  {metric.format(value)} {metric.unit if value else ''}".rstrip())
    if entry.sparsity_speedup and entry.fp16_tensor_tflops:
        print()
        print(
            wrap_paragraph(
                f"Tensor figures are dense. With 2:4 sparsity FP16 tensor would be "
                f"{entry.fp16_tensor_sparse_tflops:,.1f} TFLOPS (x{entry.sparsity_speedup:g})."
            )
        )
    return EXIT_OK


def _missing(directory: Path) -> bool:
    try:
        return not directory.exists() and not directory.is_symlink()
    except OSError:
        return False


def _problem_text(problem: object) -> str:
    """One problem per line, never wrapped: ``FILE: FIELD: message`` is what grep and
    editors' error lists read."""
    return str(problem)


def _rate_line(entry: CatalogEntry, index: int, today: dt.date) -> str:
    rate = entry.cloud_rates[index]
    seen = rate.date.isoformat() if rate.date else "undated"
    line = (
        f"{rate.provider}, {rate.kind.value.replace('_', '-')}: "
        f"{rate.usd_per_gpu_hour:,.2f} USD/GPU-hour, seen {seen}"
    )
    if rate is default_cloud_rate(entry):
        line += " [default: lowest on-demand]"
    if is_stale(rate.date, today):
        line += f" ({stale_note('rate', rate.date)})"
    if rate.source:
        line += f" {rate.source}"
    return line


def _wrap(text: str, width: int, indent: str) -> str:
    """Wrap long text (notes, sources) under the value column of ``show``."""
    return (
        indent.join(textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False))
        or text
    )


def run_validate(args: argparse.Namespace) -> int:
    extra: list[Path] = list(getattr(args, "catalog", None) or [])
    dirs: list[Path] = [*args.dirs, *extra]
    if not args.dirs:
        # What every other command loads: bundled, the user's folder, --catalog DIRs.
        dirs = [bundled_catalog_dir()]
        if user_folder_present(user_catalog_dir()):
            dirs.append(user_catalog_dir())
        dirs.extend(extra)
    problem_count = 0
    entry_count = 0
    for directory in dirs:
        if _missing(directory):
            where = "your catalog folder" if directory == user_catalog_dir() else "it"
            print(
                wrap_paragraph(
                    f"{directory}: does not exist yet; create {where} with "
                    f"'mkdir -p {directory}' and put one TOML file per GPU there "
                    "(docs/catalog.md#updating-a-price-or-adding-a-gpu), then validate again",
                    subsequent_indent="    ",
                )
            )
            problem_count += 1
            continue
        part = load_directory(directory)
        entry_count += len(part.entries)
        for problem in part.problems:
            print(_problem_text(problem))
            problem_count += 1
        for notice in part.notices:
            if args.strict:
                print(_problem_text(notice))
                problem_count += 1
            else:
                print(_problem_text(notice), file=sys.stderr)
        if args.strict:
            for entry in part.entries:
                origin = part.origins[entry.id]
                for issue in sourcing_issues(entry):
                    print(_problem_text(f"{origin}: {issue.field}: {issue.message}"))
                    problem_count += 1
    summary = f"{entry_count} valid entries, {problem_count} problem(s) in {len(dirs)} folder(s)"
    print(summary, file=sys.stderr)
    return EXIT_FAILURE if problem_count else EXIT_OK


def _segment_cell(entry: CatalogEntry) -> str:
    return entry.segment.value if entry.segment is not None else "n/a"
