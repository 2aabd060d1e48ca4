"""``gpudesk doctor``: a health check of this machine's NVIDIA GPUs.

Exit codes: 0 when NVML and nvidia-smi agree on every field and nothing is an
error; 1 when a field disagrees or an error is found (both named); 3 when
there is no NVIDIA GPU or no nvidia-smi; 2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpudesk.cli.common import (
    EXIT_FAILURE,
    EXIT_NOTHING_DETECTED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    load_catalog_for,
    path_argument,
    print_json,
)


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``doctor`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "doctor",
        help="check this machine's NVIDIA GPUs (agreement with nvidia-smi, health, throughput)",
        description=(
            "Compare what GPUDesk reads through NVML with nvidia-smi field by field, report "
            "PCIe links below their maximum, throttling, ECC errors, pending page retirement "
            "or row remapping, a prohibited compute mode and a driver older than the installed "
            "CUDA runtime, and (unless --skip-bench) measure BF16/FP16 GEMM and device copy "
            "against typical achieved fractions of the catalog peak. Exit 0 when all is well, "
            "1 when a field disagrees or an error is found, 3 when there is no NVIDIA GPU or "
            "no nvidia-smi, 2 on bad usage."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--skip-bench", action="store_true", help="skip the GEMM and copy measurements"
    )
    parser.add_argument(
        "--nvidia-smi",
        metavar="PATH",
        type=path_argument,
        help="the nvidia-smi to compare with (default: the one on PATH)",
    )
    parser.set_defaults(handler=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    from gpudesk.hardware.detect import detect
    from gpudesk.hardware.models import title_for
    from gpudesk.health import doctor

    try:
        detection = detect()
    except Exception as exc:  # the contract: 1 on an unexpected failure, never a traceback
        raise CliError(f"detection failed unexpectedly: {type(exc).__name__}: {exc}") from exc
    catalog = load_catalog_for(args)
    try:
        report = doctor.check_machine(
            detection, catalog.entries, args.nvidia_smi, skip_bench=args.skip_bench
        )
    except doctor.NoNvidiaGpuError as exc:
        status = exc.detection.status
        print(
            f"gpudesk: no NVIDIA GPU to check: {title_for(status)} [{status.value}]; "
            f"{exc.detection.hint}",
            file=sys.stderr,
        )
        return EXIT_NOTHING_DETECTED
    except doctor.NvidiaSmiNotFoundError as exc:
        where = f"--nvidia-smi {exc.where}" if args.nvidia_smi else "nvidia-smi is not on PATH"
        print(
            f"gpudesk: nothing to compare with: {where} does not exist "
            "(nvidia-smi comes with the NVIDIA driver; give its path with --nvidia-smi)"
            if args.nvidia_smi
            else f"gpudesk: nothing to compare with: {where} (it comes with the NVIDIA "
            "driver; give its path with --nvidia-smi)",
            file=sys.stderr,
        )
        return EXIT_NOTHING_DETECTED
    except doctor.NvidiaSmiUnusableError as exc:
        raise CliError(f"--nvidia-smi {exc.path}: {exc.reason}", EXIT_USAGE) from exc
    if args.json:
        print_json(report.model_dump(mode="json"))
    else:
        print("\n".join(doctor.verdict_lines(report)))
    if report.ok:
        return EXIT_OK
    print("gpudesk: doctor found: " + "; ".join(report.errors), file=sys.stderr)
    return EXIT_FAILURE
