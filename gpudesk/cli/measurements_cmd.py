"""``gpudesk measurements``: import, list, show, export and remove the user's measurements.

The rows live in a SQLite file in the user's data folder
(:mod:`gpudesk.measurements.store`); ``speed`` calibrates with them.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    load_catalog_for,
    path_argument,
)
from gpudesk.cli.textwidth import terminal_table, wrap_paragraph

if TYPE_CHECKING:
    from gpudesk.measurements.store import Measurement, StoredMeasurement

_BACKENDS = ("cuda", "rocm", "vulkan", "metal", "sycl", "cpu")
_QUANTS = (
    "fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "awq", "gptq", "mxfp4",
    "q4_0", "q4_k_m", "q5_k_m", "q6_k", "q8_0",
)  # fmt: skip


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``measurements`` with its subcommands."""
    parser = subparsers.add_parser(
        "measurements",
        help="your own tokens/s measurements: import llama-bench/vLLM results, list, export",
        description=(
            "Keep the tokens/s you measured (llama-bench json/jsonl/csv/markdown, vllm bench "
            "serve --save-result, vllm bench throughput --output-json, GPUDesk exports and "
            "speed --verify) in a local database; later speed estimates for the same GPU, "
            "engine and backend are calibrated with them."
        ),
    )
    commands = parser.add_subparsers(dest="measurements_command", metavar="COMMAND")
    imports = commands.add_parser(
        "import", help="read result files into the database (duplicates are ignored)"
    )
    imports.add_argument(
        "files",
        nargs="+",
        type=path_argument,
        metavar="FILE",
        help="llama-bench, vLLM bench, or GPUDesk export, speed --verify --json or bench "
        "--json files (a bench file is read and its GEMM/copy figures refused: not tokens/s)",
    )
    imports.add_argument("--gpu", metavar="NAME", help="the GPU, where the file does not say")
    imports.add_argument("--count", type=int, metavar="N", help="how many GPUs (default 1)")
    what = imports.add_mutually_exclusive_group()
    what.add_argument("--model", metavar="PRESET", help="the model (a preset id or a name)")
    what.add_argument(
        "--gguf", metavar="FILE", type=path_argument, help="the GGUF file that was measured"
    )
    what.add_argument(
        "--config", metavar="PATH", type=path_argument, help="the model's config.json"
    )
    imports.add_argument("--quant", choices=_QUANTS, help="weight format, where unsaid")
    imports.add_argument("--backend", choices=_BACKENDS, help="llama.cpp backend, where unsaid")
    imports.add_argument("--json", action="store_true", help="machine-readable output")
    imports.set_defaults(handler=run_import)
    listing = commands.add_parser("list", help="every stored measurement")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=run_list)
    show = commands.add_parser("show", help="one measurement with every field")
    show.add_argument("id", type=int, metavar="ID", help="the id 'measurements list' shows")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(handler=run_show)
    export = commands.add_parser(
        "export", help="a shareable, versioned file others can import (default: stdout)"
    )
    export.add_argument("--out", type=path_argument, metavar="FILE", help="write to FILE")
    export.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output (the file itself is JSON; with --out, what was written)",
    )
    export.set_defaults(handler=run_export)
    remove = commands.add_parser("remove", help="delete measurements by id")
    remove.add_argument("ids", nargs="+", type=int, metavar="ID", help="ids to delete")
    remove.add_argument("--json", action="store_true", help="machine-readable output")
    remove.set_defaults(handler=run_remove)
    parser.set_defaults(handler=lambda args: _missing(parser))


def _missing(parser: argparse.ArgumentParser) -> int:
    raise CliError("give a subcommand: import, list, show, export or remove", EXIT_USAGE)


def _store() -> Any:
    from gpudesk.measurements.store import MeasurementStore

    return MeasurementStore()


def _store_call(action: Any) -> Any:
    from gpudesk.measurements.store import StoreError

    try:
        return action()
    except StoreError as exc:
        raise CliError(str(exc), EXIT_FAILURE) from exc
    except OSError as exc:
        raise CliError(f"the measurement database: {exc.strerror or exc}", EXIT_FAILURE) from exc


# import --------------------------------------------------------------------------------


def run_import(args: argparse.Namespace) -> int:
    from gpudesk.catalog.query import NameLookupError, find_entry
    from gpudesk.measurements.file_import import ImportHints

    catalog = load_catalog_for(args)
    gpu_id = _import_gpu_id(args, catalog)
    if args.count is not None and not 1 <= args.count <= 100_000:
        raise CliError("--count must be 1 to 100,000", EXIT_USAGE)
    model_file, shape, model_name = _import_model(args)

    def resolve(name: str) -> str | None:
        try:
            return find_entry(catalog.entries, name).id
        except NameLookupError:
            return None

    hints = ImportHints(
        gpu_id=gpu_id,
        count=args.count,
        model=model_name,
        model_file=model_file.path if model_file else None,
        quant=args.quant or (model_file.quant.value if model_file and model_file.quant else None),
        backend=args.backend,
        resolve_gpu=resolve,
        shape_given=shape is not None,
    )
    files, rows = _parse_files(args.files, hints, shape, model_file, catalog.entries)
    added, duplicates = _store_call(lambda: _store().add(rows)) if rows else (0, 0)
    document = {
        "files": files,
        "added": added,
        "already_stored": duplicates,
        "database": str(_store().path),
    }
    if args.json:
        from gpudesk.cli.common import print_json

        print_json(document)
    else:
        print(_import_text(files))
        database = document["database"]
        print(wrap_paragraph(f"Added {added}, already stored {duplicates} ({database})."))
    if not rows:
        errors = [item for item in files if "error" in item]
        if len(files) == 1 and errors:  # one file: its reason, in the one line on stderr
            raise CliError(
                f"nothing could be imported: {errors[0]['file']} {errors[0]['error']}", EXIT_USAGE
            )
        raise CliError(
            "nothing could be imported" + (": see the reasons above" if not args.json else ""),
            EXIT_USAGE,
        )
    return EXIT_OK


def _import_gpu_id(args: argparse.Namespace, catalog: Any) -> str | None:
    """``--gpu``'s catalog id ('cpu' for the CPU), or None when not given."""
    from gpudesk.catalog.query import NameLookupError, find_entry

    if args.gpu is None:
        return None
    if args.gpu.strip().lower() == "cpu":
        return "cpu"
    try:
        return find_entry(catalog.entries, args.gpu).id
    except NameLookupError as exc:
        raise CliError(f"--gpu: {exc}", EXIT_USAGE) from exc


def _import_model(args: argparse.Namespace) -> tuple[Any, Any, str | None]:
    """The model file (``--gguf``), the shape (``--gguf`` or ``--config``) and the model's
    name the rows are stored under."""
    model_file = None
    shape = None
    model_name = args.model
    if args.gguf is not None:
        from gpudesk.cli.model_file_args import load_model_file

        model_file = load_model_file(args)
        assert model_file is not None
        shape = model_file.shape
        model_name = model_file.name or Path(model_file.path).stem
    elif args.config is not None:
        from gpudesk.workload.architecture import load_hf_config
        from gpudesk.workload.errors import PlanningInputError

        try:
            shape = load_hf_config(args.config)
        except PlanningInputError as exc:
            raise CliError(f"--config {exc}", EXIT_USAGE) from exc
        model_name = str(args.config)
    return model_file, shape, model_name


def _parse_files(
    paths: list[Path], hints: Any, shape: Any, model_file: Any, entries: Any
) -> tuple[list[dict[str, Any]], list[Measurement]]:
    """Each file's summary (its format and rows, or why it was refused) and the rows of
    them all, each with its estimate."""
    from gpudesk.measurements.file_import import ImportFileError, parse_file

    files: list[dict[str, Any]] = []
    rows: list[Measurement] = []
    for path in paths:
        try:
            result = parse_file(path, hints)
        except ImportFileError as exc:
            files.append({"file": str(path), "error": exc.reason, "rows": 0, "refused": []})
            continue
        placed = [_with_estimate(row, shape, model_file, entries) for row in result.rows]
        rows.extend(placed)
        files.append(
            {
                "file": str(path),
                "format": result.source_format,
                "rows": len(placed),
                "refused": result.refused,
                "models_placed": result.placed,
            }
        )
    return files, rows


def _file_line(path: str, text: str) -> str:
    """``path: text`` on one line where it fits the terminal; else the path alone (kept
    whole) and the text wrapped under it."""
    from gpudesk.cli.textwidth import display_width, output_width

    line = f"{path}: {text}"
    if display_width(line) <= output_width():
        return line
    return f"{path}:\n" + wrap_paragraph(text, indent="  ")


def _import_text(files: list[dict[str, Any]]) -> str:
    """Each file: its format and rows (or why it was refused), models placed, rows refused."""
    lines: list[str] = []
    for item in files:
        if "error" in item:
            lines.append(_file_line(item["file"], item["error"]))
            continue
        lines.append(_file_line(item["file"], f"{item['format']}, {item['rows']} measurement(s)"))
        for how in item["models_placed"]:
            lines.append(
                textwrap.fill(how, 80, initial_indent="  model: ", subsequent_indent="    ")
            )
        for reason in item["refused"]:
            lines.append(
                textwrap.fill(reason, 80, initial_indent="  refused: ", subsequent_indent="    ")
            )
    return "\n".join(lines)


def _with_estimate(row: Measurement, shape: Any, model_file: Any, entries: Any) -> Measurement:
    """The row with GPUDesk's estimate for the same workload, when it can be made."""
    from gpudesk.measurements.rows import with_estimate_for

    return with_estimate_for(row, entries, shape, model_file)


def estimate_tokens_per_s(
    row: Measurement, shape: Any, model_file: Any, entry: Any
) -> float | None:
    """GPUDesk's uncalibrated speed estimate for the measured workload, or None."""
    from gpudesk.measurements.rows import estimate_for_measurement

    return estimate_for_measurement(row, shape, entry, model_file)


# list / show / export / remove ---------------------------------------------------------


def _row_json(row: StoredMeasurement) -> dict[str, Any]:
    data: dict[str, Any] = {"id": row.id, "stored_at": row.stored_at}
    data.update(row.measurement.model_dump(mode="json"))
    ratio = row.measurement.ratio
    data["ratio"] = None if ratio is None else round(ratio, 4)
    return data


def run_list(args: argparse.Namespace) -> int:
    rows = _store_call(lambda: _store().rows())
    if args.json:
        from gpudesk.cli.common import print_json

        print_json({"database": str(_store().path), "measurements": [_row_json(r) for r in rows]})
        return EXIT_OK
    if not rows:
        print("No measurements yet: gpudesk measurements import FILE, or speed ... --verify.")
        return EXIT_OK
    table = []
    for row in rows:
        m = row.measurement
        table.append(
            [
                str(row.id),
                f"{m.count}× {m.gpu_id}" if m.count > 1 else m.gpu_id,
                m.engine + (f"/{m.backend}" if m.backend else ""),
                m.model[:40],
                m.quant or "",
                m.mode,
                "/".join(str(v) for v in (m.seq_in, m.seq_out) if v) or "",
                f"{m.tokens_per_s:,.1f}",
                "" if m.estimate_tokens_per_s is None else f"{m.estimate_tokens_per_s:,.1f}",
                "" if m.ratio is None else f"{m.ratio:.2f}",
            ]
        )
    headers = ["ID", "GPU", "Engine", "Model", "Quant", "Mode", "Lengths", "tok/s", "Est.", "Ratio"]
    print(terminal_table(headers, table, right_aligned={0, 7, 8, 9}))
    print("\nRatio = measured / GPUDesk's estimate for the same workload, at import.")
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    row = _store_call(lambda: _store().get(args.id))
    if row is None:
        raise CliError(f"no measurement {args.id}; see gpudesk measurements list", EXIT_USAGE)
    data = _row_json(row)
    if args.json:
        from gpudesk.cli.common import print_json

        print_json(data)
    else:
        width = max(len(key) for key in data)
        for key, value in data.items():
            print(f"{key:<{width}}  {'' if value is None else value}")
    return EXIT_OK


def run_export(args: argparse.Namespace) -> int:
    import json

    from gpudesk.measurements.store import export_document

    rows = _store_call(lambda: _store().rows())
    text = json.dumps(export_document(rows), indent=2, ensure_ascii=False) + "\n"
    if args.out is None:
        print(text, end="")
        return EXIT_OK
    from gpudesk.cli.common import write_output
    from gpudesk.storage import atomic_write_bytes

    write_output(args.out, lambda: atomic_write_bytes(args.out, text.encode("utf-8")))
    if args.json:
        from gpudesk.cli.common import print_json

        print_json({"file": str(args.out), "measurements": len(rows)})
    else:
        print(f"Wrote {len(rows)} measurement(s) to {args.out}")
    return EXIT_OK


def run_remove(args: argparse.Namespace) -> int:
    removed = _store_call(lambda: _store().remove(args.ids))
    if args.json:
        from gpudesk.cli.common import print_json

        print_json({"removed": removed, "asked": list(args.ids)})
    else:
        print(f"Removed {removed} of {len(args.ids)}.")
    if removed == 0:
        raise CliError("none of those ids is stored; see gpudesk measurements list", EXIT_USAGE)
    return EXIT_OK


# the hook ``speed`` calls ----------------------------------------------------------------


def calibrated_results(args: argparse.Namespace, results: list[Any]) -> list[Any]:
    """``speed``'s estimates calibrated with the user's stored measurements that match
    (same GPU, count, engine, mode and backend); unchanged with ``--no-calibration``."""
    if getattr(args, "no_calibration", False) or not results:
        return results
    from gpudesk.measurements.calibration import calibrate_all
    from gpudesk.measurements.store import StoreError

    try:
        rows = _store().rows()
    except (StoreError, OSError):
        return results  # an unreadable database never blocks an estimate
    return calibrate_all(results, rows, engine=args.engine, backend=getattr(args, "backend", None))
