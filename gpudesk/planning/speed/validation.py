"""The speed model against every published measurement: errors and range coverage.

Each measurement is estimated exactly as a user's request would be (fitted efficiency,
range, caps), then compared: |log(estimate / measured)| per row, its median per
workload, and the share of rows inside [low, high]; separately for the rows the fit used
and the held-out ones. ``python -m gpudesk.planning.speed.validation`` prints the table
the README and the issue note quote.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from gpudesk.catalog.loader import load_catalog
from gpudesk.planning.speed.data import Workload, load_measurements
from gpudesk.planning.speed.estimate import Engine, Mode, SpeedRequest
from gpudesk.planning.speed.fitting import FittedParams, Row, build_rows, fitted_params
from gpudesk.planning.speed.planner import estimate_for

#: The issue's tolerances: median |log ratio| per workload.
TOLERANCE = {
    Workload.DECODE: math.log(1.35),
    Workload.TRAIN: math.log(1.35),
    Workload.PREFILL: math.log(1.5),
    Workload.SERVE: math.log(1.5),
}
MIN_INSIDE_SHARE = 0.6


@dataclass(frozen=True, slots=True)
class Checked:
    """One measurement and the model's answer for it."""

    row: Row
    estimate: float
    low: float
    high: float

    @property
    def log_ratio(self) -> float:
        return math.log(self.estimate / self.row.measurement.value)

    @property
    def inside(self) -> bool:
        value = self.row.measurement.value
        return self.low * (1 - 1e-9) <= value <= self.high * (1 + 1e-9)


def _request(row: Row) -> SpeedRequest:
    item = row.measurement
    if row.request is not None:
        return row.request
    from gpudesk.planning.quant import QuantFormat
    from gpudesk.planning.speed.data import Checkpointing

    return SpeedRequest(
        mode=Mode.TRAIN,
        engine=Engine.VLLM,
        quant=QuantFormat(item.quant or "bf16"),
        count=item.count,
        seq_in=item.seq_in,
        checkpointing=item.checkpointing
        if item.checkpointing is Checkpointing.FULL
        else Checkpointing.NONE,
    )


def check_row(row: Row, fitted: FittedParams) -> Checked:
    """Estimate one measured row the way a user's request is estimated."""
    item = row.measurement
    if item.workload is Workload.MATMUL:
        value, _ = fitted.utilisation("matmul", row.rates.family, row.precision)
        estimate = row.rates.peak_tflops(row.precision) * value
        return Checked(row, estimate, estimate, estimate)
    result = estimate_for(row.rates, row.costs, _request(row), fitted)
    if item.workload is Workload.TRAIN:
        per_gpu = result.tokens_per_s / result.count
        scale = per_gpu / result.tokens_per_s
        return Checked(row, per_gpu, result.low * scale, result.high * scale)
    if item.workload is Workload.PREFILL and item.unit == "s":
        assert result.time_to_first_token_s is not None
        ttft = result.time_to_first_token_s
        # time = tokens / rate: the range flips
        return Checked(
            row,
            ttft,
            ttft * result.tokens_per_s / result.high,
            ttft * result.tokens_per_s / result.low,
        )
    return Checked(row, result.tokens_per_s, result.low, result.high)


@dataclass(frozen=True, slots=True)
class Summary:
    workload: Workload
    held_out: bool
    rows: int
    median_abs_log: float
    inside_share: float

    @property
    def median_ratio(self) -> float:
        """exp(median |log ratio|): 1.2 means a typical row is off by 20%."""
        return math.exp(self.median_abs_log)


def check_all(fitted: FittedParams | None = None) -> list[Checked]:
    fitted = fitted or fitted_params()
    catalog = load_catalog([], include_user=False)
    return [check_row(row, fitted) for row in build_rows(load_measurements(), catalog.entries)]


def summarise(checked: Sequence[Checked]) -> list[Summary]:
    out: list[Summary] = []
    for workload in (Workload.DECODE, Workload.PREFILL, Workload.SERVE, Workload.TRAIN):
        for held_out in (False, True):
            chosen = [
                item
                for item in checked
                if item.row.measurement.workload is workload
                and item.row.measurement.held_out is held_out
            ]
            if not chosen:
                continue
            out.append(
                Summary(
                    workload=workload,
                    held_out=held_out,
                    rows=len(chosen),
                    median_abs_log=statistics.median(abs(item.log_ratio) for item in chosen),
                    inside_share=sum(item.inside for item in chosen) / len(chosen),
                )
            )
    return out


def overall_inside_share(checked: Sequence[Checked]) -> float:
    chosen = [item for item in checked if item.row.measurement.workload is not Workload.MATMUL]
    return sum(item.inside for item in chosen) / len(chosen)


def report_text(checked: Sequence[Checked]) -> str:
    lines = [
        "| Workload | Rows | Set | Median error (x) | Median abs log | Inside [low, high] |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for item in summarise(checked):
        lines.append(
            f"| {item.workload.value} | {item.rows} | {'held out' if item.held_out else 'fitted'} "
            f"| {item.median_ratio:.2f} | {item.median_abs_log:.3f} | {item.inside_share:.0%} |"
        )
    lines.append(f"\nAll rows inside [low, high]: {overall_inside_share(checked):.0%}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report_text(check_all()))
