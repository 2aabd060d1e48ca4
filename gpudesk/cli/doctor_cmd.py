"""``gpudesk doctor``: a health check of this machine's NVIDIA GPUs.

Exit codes: 0 when NVML and nvidia-smi agree on every field and nothing is an
error; 1 when a field disagrees or an error is found (both named), NVML or
nvidia-smi not answering in time included; 3 when there is no NVIDIA GPU or
no nvidia-smi; 2 on bad usage. With --skip-bench it answers within 30 s.

With ``--expect SPEC`` it is an acceptance gate (:mod:`gpudesk.health.expect`):
0 when every declared-against-detected check passes, 1 with one line per
failed check, 3 when nothing is detected, 2 for a bad SPEC. ``--json`` prints a
document in every case, 3 included.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

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
from gpudesk.cli.textwidth import error_text, wrap_paragraph

if TYPE_CHECKING:
    from gpudesk.health.doctor import DoctorReport, Finding
    from gpudesk.health.expect import ExpectCheck, ExpectSpec


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction above 0 and at most 1")
    return value


def _bounded(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not between {low} and {high}")
        return value

    return parse


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
    gate = parser.add_argument_group(
        "acceptance gate",
        "Compare what is declared with what is detected: count, model, memory, PCIe link, "
        "health and throughput. Exit 0 when every check passes, 1 with one line per failed "
        "check, 3 when nothing is detected, 2 for a bad SPEC.",
    )
    gate.add_argument(
        "--expect",
        metavar="SPEC",
        help='the GPUs this machine should have, e.g. "8x h100-sxm5" or '
        '"4x h100-sxm5 + 2x a100-80gb-pcie" (catalog ids; see `gpudesk list`)',
    )
    gate.add_argument(
        "--min-gemm-fraction",
        metavar="F",
        type=_fraction,
        help="each GPU's BF16/FP16 GEMM must reach this fraction of the catalog's dense peak "
        "(e.g. 0.7; needs the benchmark, so not with --skip-bench)",
    )
    gate.add_argument(
        "--pcie-gen",
        metavar="G",
        type=_bounded(1, 7),
        help="the PCIe generation each GPU must link at (default: the catalog's interface)",
    )
    gate.add_argument(
        "--pcie-width",
        metavar="W",
        type=_bounded(1, 32),
        help="the PCIe lanes each GPU must link with (default: the catalog's interface)",
    )
    parser.set_defaults(handler=run_doctor)


def _spec(args: argparse.Namespace, known_ids: list[str]) -> ExpectSpec | None:
    from gpudesk.health.expect import SpecError, parse_spec

    gate_flags = [
        flag
        for flag, value in (
            ("--min-gemm-fraction", args.min_gemm_fraction),
            ("--pcie-gen", args.pcie_gen),
            ("--pcie-width", args.pcie_width),
        )
        if value is not None
    ]
    if args.expect is None:
        if gate_flags:
            raise CliError(f"{gate_flags[0]} needs --expect SPEC", EXIT_USAGE)
        return None
    if args.min_gemm_fraction is not None and args.skip_bench:
        raise CliError("--min-gemm-fraction needs the benchmark: drop --skip-bench", EXIT_USAGE)
    try:
        return parse_spec(args.expect, known_ids)
    except SpecError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc


def _nothing_detected(
    args: argparse.Namespace, spec: ExpectSpec | None, check: str, message: str, detection: Any
) -> int:
    """Exit 3, with a JSON document under --json (it used to print nothing)."""
    from gpudesk.cli.textwidth import wrap_paragraph
    from gpudesk.health.doctor import DoctorReport, Finding

    print(wrap_paragraph(f"gpudesk: {message}", subsequent_indent="  "), file=sys.stderr)
    if args.json:
        report = DoctorReport(
            ok=False,
            gpus=[],
            findings=[Finding(severity="error", check=check, message=message)],
            driver_version=detection.driver_version,
            cuda_driver_version=detection.cuda_driver_version,
        )
        data = report.model_dump(mode="json")
        data["detected"] = check != "detection"  # NVML found a GPU (nvidia-smi is missing)
        if spec is not None:
            from gpudesk.health.expect import ExpectCheck

            failed = ExpectCheck(
                check="count" if check == "detection" else "health", passed=False, detail=message
            )
            data["expect"] = _expect_json(spec, [failed], detected=False)
        print_json(data)
    return EXIT_NOTHING_DETECTED


def _expect_json(spec: ExpectSpec, checks: list[ExpectCheck], *, detected: bool) -> dict[str, Any]:
    return {
        "spec": str(spec),
        "passed": detected and all(check.passed for check in checks),
        "checks": [check.model_dump(mode="json") for check in checks],
    }


def _print_text(report: DoctorReport, spec: ExpectSpec | None, checks: list[ExpectCheck]) -> None:
    from gpudesk.health import doctor

    lines = doctor.verdict_lines(report)
    if spec is not None:
        passed = all(check.passed for check in checks)
        lines.append(f"expect {spec}: {'pass' if passed else 'FAIL'}")
        lines.extend(f"{'  ' if c.passed else 'X '}{c.check}: {c.detail}" for c in checks)
    for line in lines:
        print(wrap_paragraph(line, subsequent_indent="    "))


def _stuck(args: argparse.Namespace, spec: ExpectSpec | None, finding: Finding) -> int:
    """Exit 1 with the report of a detection that did not answer (NVML stuck in the driver)."""
    from gpudesk.health.doctor import DoctorReport
    from gpudesk.health.expect import ExpectCheck

    report = DoctorReport(ok=False, gpus=[], findings=[finding])
    checks = (
        [] if spec is None else [ExpectCheck(check="health", passed=False, detail=finding.message)]
    )
    if args.json:
        data = report.model_dump(mode="json")
        if spec is not None:
            data["expect"] = _expect_json(spec, checks, detected=False)
        print_json(data)
    else:
        _print_text(report, spec, checks)
    print(_found_text(report.errors), file=sys.stderr)
    return EXIT_FAILURE


def run_doctor(args: argparse.Namespace) -> int:
    from gpudesk.hardware.models import title_for
    from gpudesk.health import doctor
    from gpudesk.health.expect import ExpectLink, check_expectations

    catalog = load_catalog_for(args)
    spec = _spec(args, [entry.id for entry in catalog.entries])
    try:
        detection = doctor.detect_within()
    except doctor.DetectionTimeoutError as exc:  # a health problem, not a usage one
        return _stuck(args, spec, exc.finding)
    except Exception as exc:  # the contract: 1 on an unexpected failure, never a traceback
        raise CliError(f"detection failed unexpectedly: {type(exc).__name__}: {exc}") from exc
    try:
        report = doctor.check_machine(
            detection, catalog.entries, args.nvidia_smi, skip_bench=args.skip_bench
        )
    except doctor.NoNvidiaGpuError as exc:
        status = exc.detection.status
        message = (
            f"no NVIDIA GPU to check: {title_for(status)} [{status.value}]; {exc.detection.hint}"
        )
        return _nothing_detected(args, spec, "detection", message, detection)
    except doctor.NvidiaSmiNotFoundError as exc:
        if args.nvidia_smi:
            message = (
                f"nothing to compare with: --nvidia-smi {exc.where} does not exist "
                "(nvidia-smi comes with the NVIDIA driver; give its path with --nvidia-smi)"
            )
        else:
            message = (
                "nothing to compare with: nvidia-smi is not on PATH (it comes with the NVIDIA "
                "driver; give its path with --nvidia-smi)"
            )
        return _nothing_detected(args, spec, "nvidia_smi", message, detection)
    except doctor.NvidiaSmiUnusableError as exc:
        raise CliError(f"--nvidia-smi {exc.path}: {exc.reason}", EXIT_USAGE) from exc
    checks: list[ExpectCheck] = []
    if spec is not None:
        checks = check_expectations(
            spec,
            report,
            detection,
            {entry.id: entry for entry in catalog.entries},
            link=ExpectLink(args.pcie_gen, args.pcie_width),
            min_gemm_fraction=args.min_gemm_fraction,
            measured=report.benchmark == "run",
        )
    if args.json:
        data = report.model_dump(mode="json")
        if spec is not None:
            data["expect"] = _expect_json(spec, checks, detected=True)
        print_json(data)
    else:
        _print_text(report, spec, checks)
    if spec is not None:
        failed = [check for check in checks if not check.passed]
        for check in failed:
            print(
                error_text(f"gpudesk: expect failed: {check.check}: {check.detail}"),
                file=sys.stderr,
            )
        return EXIT_FAILURE if failed else EXIT_OK
    if report.ok:
        return EXIT_OK
    print(_found_text(report.errors), file=sys.stderr)
    return EXIT_FAILURE


def _found_text(errors: list[str]) -> str:
    """``gpudesk: doctor found: ...``, wrapped to the terminal."""
    from gpudesk.cli.textwidth import wrap_paragraph

    return wrap_paragraph("gpudesk: doctor found: " + "; ".join(errors), subsequent_indent="  ")
