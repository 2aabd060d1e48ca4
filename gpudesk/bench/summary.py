"""What one benchmark run was, in labelled lines: the CLI report, the GUI panel and the
PDF report each lay these out their own way and never rebuild them."""

from __future__ import annotations

from dataclasses import dataclass

from gpudesk.bench.results import BenchResult
from gpudesk.bench.text import format_figure


@dataclass(frozen=True, slots=True)
class SummaryLine:
    """One fact about a run, e.g. ``SummaryLine("BLAS", "OpenBLAS 0.3.27, 2 threads, ...")``.

    ``key`` names the fact for code (``device``, ``backend``, ``blas``, ``cuda``,
    ``catalog``, ``telemetry``, ``imported``, ``error``); ``label`` is its word.
    """

    key: str
    label: str
    text: str


def run_summary(result: BenchResult, catalog_name: str | None = None) -> tuple[SummaryLine, ...]:
    """The run's context: device, backend, BLAS and CUDA, catalog peaks, NVML, origin, error.

    Args:
        result: the run.
        catalog_name: the matched catalog entry's name, when the caller has the
            catalog (the run itself stores only the id).
    """
    env = result.environment
    kind = f" ({result.device.kind})" if result.device is not None else ""
    when = result.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
    version = env.get("backend_version")
    lines = [
        SummaryLine("device", "Device", f"{result.device_name}{kind}"),
        SummaryLine(
            "backend",
            "Backend",
            f"{result.backend}{f' {version}' if version else ''}, {result.mode} run, {when}, "
            f"{result.duration_s:.1f} s",
        ),
    ]
    blas = env.get("blas")
    if isinstance(blas, list) and blas and isinstance(blas[0], dict):
        first = blas[0]
        lines.append(
            SummaryLine(
                "blas",
                "BLAS",
                f"{first.get('library')} {first.get('version')}, {first.get('threads')} threads, "
                f"kernel {first.get('kernel')}",
            )
        )
    if env.get("cuda_runtime") or env.get("driver_version"):
        lines.append(
            SummaryLine(
                "cuda",
                "CUDA",
                f"runtime {env.get('cuda_runtime') or 'n/a'}, "
                f"driver {env.get('driver_version') or 'n/a'}",
            )
        )
    lines.append(SummaryLine("catalog", "Catalog", _catalog_text(result, catalog_name)))
    telemetry = result.telemetry
    if telemetry is not None and telemetry.available and telemetry.samples:
        figures = telemetry.summary()
        reasons = ", ".join(telemetry.throttle_reasons()) or "none"
        lines.append(
            SummaryLine(
                "telemetry",
                "NVML",
                f"SM clock {format_figure(figures['sm_clock_mhz_median'])} MHz (median), "
                f"power up to {format_figure(figures['power_w_max'])} W, "
                f"up to {format_figure(figures['temperature_c_max'])} °C; "
                f"clock events: {reasons}",
            )
        )
    elif telemetry is not None and telemetry.reason:
        lines.append(SummaryLine("telemetry", "NVML", telemetry.reason))
    if result.imported_from:
        lines.append(SummaryLine("imported", "Source", f"imported from {result.imported_from}"))
    if result.error:
        lines.append(SummaryLine("error", "Failed", result.error))
    return tuple(lines)


def _catalog_text(result: BenchResult, catalog_name: str | None) -> str:
    if result.catalog_id:
        return f"peaks from catalog entry {catalog_name or result.catalog_id}"
    if result.device is not None and result.device.kind == "cpu":
        return "a CPU has no catalog peak"
    match = result.environment.get("catalog_match")
    return "no catalog entry matched, so no peaks" + (f" ({match})" if match else "")
