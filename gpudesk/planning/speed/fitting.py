"""Fitting the engines' efficiencies to the published measurements.

The physics (:mod:`~gpudesk.planning.speed.physics`) is the same for every GPU; what an
engine reaches of it differs by engine and GPU generation. Per engine, one
:class:`~gpudesk.planning.speed.physics.Efficiency` (bandwidth and compute fractions,
fixed cost per layer, KV re-read factor, GPU hand-over) is fitted to all its decode,
prefill and serving rows at once, minimising the squared log error; then one per GPU
generation, pulled towards the engine's (partial pooling: a generation with few rows
stays near the engine's figures). Training utilisation and matmul efficiency are
geometric means per generation and precision, pulled towards the overall mean the same
way. Rows marked ``held_out`` are never used here.

The fit runs in about a second and its result is stored in ``fitted.json`` beside this
module (``python -m gpudesk.planning.speed.fitting`` rewrites it); a test re-fits and
compares, so the stored figures cannot drift from the data.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from gpudesk.catalog.loader import load_catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.planning.errors import PlanningInputError
from gpudesk.planning.quant import QuantFormat
from gpudesk.planning.speed.data import (
    Checkpointing,
    Measurement,
    MeasurementFile,
    Workload,
    load_measurements,
)
from gpudesk.planning.speed.estimate import (
    Engine,
    KvFormat,
    Mode,
    SpeedRequest,
    compute_precision,
    kv_pool_bytes,
    model_costs,
)
from gpudesk.planning.speed.hardware import DeviceRates, Precision, rates_for
from gpudesk.planning.speed.physics import (
    Efficiency,
    Gpus,
    ModelCosts,
    decode_step,
    max_sequences,
    prefill_time,
    serve_times,
    train_flops_per_token,
)
from gpudesk.planning.speed.shapes import shape_for

FITTED_FILE = "fitted.json"
#: Weight of the pull towards the pooled figures: as much as this many rows at the robust
#: scale per unit of distance in the unconstrained parameters.
SHRINKAGE = 1.0
#: Log error beyond which a row counts less and less (log 1.35: the decode tolerance).
ROBUST_SCALE = math.log(1.35)
#: Range quantiles: the 10th and 90th percentile of measured / estimated.
LOW_QUANTILE, HIGH_QUANTILE = 0.1, 0.9
#: A range is never narrower than this either side (measurement noise alone is ~5-10%).
MIN_SPREAD = 0.12
INFERENCE_ENGINES = (Engine.LLAMA_CPP, Engine.VLLM, Engine.TENSORRT_LLM)
#: Where the search starts: plausible for any engine (fractions, 30 us per layer).
START = Efficiency(
    bandwidth=0.7, compute=0.4, layer_s=30e-6, kv_factor=1.5, hop_s=2e-4, sequence_s=5e-6
)


@dataclass(frozen=True, slots=True)
class Row:
    """A measurement with everything needed to predict it."""

    measurement: Measurement
    rates: DeviceRates
    costs: ModelCosts
    request: SpeedRequest | None  # None for matmul and training rows
    precision: Precision


def _costs_for_training(row: Measurement) -> ModelCosts:
    if row.model is not None:
        shape = shape_for(row.model)
        return ModelCosts(
            layers=shape.layers,
            hidden=shape.hidden,
            matmul_params_active=float(shape.active_params),
            params_total=float(shape.total_params),
        )
    assert row.params is not None and row.layers is not None and row.hidden is not None
    return ModelCosts(
        layers=row.layers,
        hidden=row.hidden,
        matmul_params_active=float(row.params),
        params_total=float(row.params),
    )


def build_rows(data: MeasurementFile, entries: Sequence[CatalogEntry]) -> list[Row]:
    """Every measurement whose GPU is in the catalog, ready to predict.

    Raises:
        PlanningInputError: a row names an unknown model or weight format.
    """
    by_id = {entry.id: entry for entry in entries}
    rows: list[Row] = []
    for item in data.measurements:
        entry = by_id.get(item.gpu)
        if entry is None:
            continue
        rates = rates_for(entry)
        if item.workload is Workload.MATMUL:
            quant = QuantFormat(item.quant or "bf16")
            costs = ModelCosts(layers=1, hidden=1, matmul_params_active=1.0, params_total=1.0)
            rows.append(Row(item, rates, costs, None, compute_precision(quant, rates, None)))
            continue
        quant = QuantFormat(item.quant or "bf16")
        if item.workload is Workload.TRAIN:
            precision = compute_precision(quant, rates, None)
            rows.append(Row(item, rates, _costs_for_training(item), None, precision))
            continue
        kv = KvFormat(item.kv_quant or "fp16")
        assert item.model is not None
        costs = _cached_costs(item.model, quant, kv)
        engine = Engine(item.engine)
        request = SpeedRequest(
            mode=Mode(item.workload.value),
            engine=engine,
            quant=quant,
            kv_quant=kv,
            count=item.count,
            batch=item.batch,
            concurrency=item.concurrency,
            seq_in=item.seq_in if item.seq_in is not None else max(1, item.context or 1),
            seq_out=item.seq_out,
            context=item.context,
        ).resolved()
        rows.append(Row(item, rates, costs, request, compute_precision(quant, rates, engine)))
    return rows


@functools.cache
def _cached_costs(model_id: str, quant: QuantFormat, kv: KvFormat) -> ModelCosts:
    return model_costs(shape_for(model_id), quant, kv)


def serve_concurrency(rates: DeviceRates, costs: ModelCosts, request: SpeedRequest) -> int:
    """Sequences a serving request runs together (0: not even one fits)."""
    assert request.seq_in is not None and request.seq_out is not None
    pool = kv_pool_bytes(rates, costs, request.count)
    fitting = max_sequences(pool, costs, seq_in=request.seq_in, seq_out=request.seq_out)
    if pool <= 0:
        return 0
    wanted = request.concurrency or request.engine.max_sequences or fitting
    return min(wanted, fitting)


def predict(row: Row, eff: Efficiency) -> float:
    """The model's figure for ``row`` in the row's unit, at efficiency ``eff``."""
    item = row.measurement
    if item.workload is Workload.MATMUL:
        return row.rates.peak_tflops(row.precision) * eff.compute
    if item.workload is Workload.TRAIN:
        assert item.seq_in is not None
        flops = train_flops_per_token(
            row.costs,
            seq=item.seq_in,
            frozen_base=False,
            full_recompute=item.checkpointing is Checkpointing.FULL,
        )
        return row.rates.peak_tflops(row.precision) * 1e12 * eff.compute / flops
    request = row.request
    assert request is not None and request.seq_in is not None and request.seq_out is not None
    gpus = Gpus(
        bandwidth_gbs=row.rates.bandwidth_gbs,
        peak_tflops=row.rates.peak_tflops(row.precision),
        count=request.count,
        layer_split=request.engine.splits_layers,
    )
    if item.workload is Workload.DECODE:
        assert request.context is not None
        step = decode_step(row.costs, gpus, eff, batch=request.batch, context=request.context)
        return request.batch / step.total_s
    if item.workload is Workload.PREFILL:
        times = prefill_time(row.costs, gpus, eff, tokens=request.seq_in, batch=request.batch)
        if item.unit == "s":
            return times.total_s
        return request.batch * request.seq_in / times.total_s
    concurrency = max(1, serve_concurrency(row.rates, row.costs, request))
    return serve_times(
        row.costs,
        gpus,
        eff,
        concurrency=concurrency,
        seq_in=request.seq_in,
        seq_out=request.seq_out,
    ).output_tokens_per_s


def log_error(row: Row, eff: Efficiency) -> float:
    """log(estimate / measured): positive when the model is too fast."""
    return math.log(predict(row, eff) / row.measurement.value) * (
        -1.0 if row.measurement.unit == "s" else 1.0
    )


# -- parameters <-> an unconstrained vector ---------------------------------------------


def _logit(value: float) -> float:
    return math.log(value / (1 - value))


def _sigmoid(value: float) -> float:
    return 1 / (1 + math.exp(-max(-40.0, min(40.0, value))))


def _to_vector(eff: Efficiency) -> list[float]:
    return [
        _logit(eff.bandwidth),
        _logit(eff.compute),
        math.log(eff.layer_s),
        math.log(eff.kv_factor - 1 + 1e-6),
        math.log(eff.hop_s),
        math.log(eff.sequence_s),
    ]


def _from_vector(z: Sequence[float]) -> Efficiency:
    return Efficiency(
        bandwidth=_sigmoid(z[0]),
        compute=_sigmoid(z[1]),
        layer_s=math.exp(max(-30.0, min(0.0, z[2]))),
        kv_factor=1 + math.exp(max(-30.0, min(3.0, z[3]))),
        hop_s=math.exp(max(-30.0, min(0.0, z[4]))),
        sequence_s=math.exp(max(-30.0, min(0.0, z[5]))),
    )


def nelder_mead(
    loss: Callable[[list[float]], float],
    start: list[float],
    *,
    step: float = 0.6,
    iterations: int = 600,
) -> list[float]:
    """Minimise ``loss`` from ``start`` (the downhill simplex of Nelder and Mead, 1965)."""
    size = len(start)
    simplex = [list(start)]
    for index in range(size):
        point = list(start)
        point[index] += step
        simplex.append(point)
    values = [loss(point) for point in simplex]
    for _ in range(iterations):
        order = sorted(range(size + 1), key=values.__getitem__)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if values[-1] - values[0] < 1e-10:
            break
        centroid = [sum(point[i] for point in simplex[:-1]) / size for i in range(size)]
        worst = simplex[-1]
        reflected = [c + (c - w) for c, w in zip(centroid, worst, strict=True)]
        value = loss(reflected)
        if value < values[0]:
            expanded = [c + 2 * (c - w) for c, w in zip(centroid, worst, strict=True)]
            expanded_value = loss(expanded)
            if expanded_value < value:
                simplex[-1], values[-1] = expanded, expanded_value
            else:
                simplex[-1], values[-1] = reflected, value
        elif value < values[-2]:
            simplex[-1], values[-1] = reflected, value
        else:
            contracted = [c + 0.5 * (w - c) for c, w in zip(centroid, worst, strict=True)]
            contracted_value = loss(contracted)
            if contracted_value < values[-1]:
                simplex[-1], values[-1] = contracted, contracted_value
            else:
                best = simplex[0]
                simplex = [best] + [
                    [b + 0.5 * (p - b) for b, p in zip(best, point, strict=True)]
                    for point in simplex[1:]
                ]
                values = [values[0]] + [loss(point) for point in simplex[1:]]
    return simplex[min(range(size + 1), key=values.__getitem__)]


def robust_loss(error: float) -> float:
    """Cauchy loss of a log error: squared near zero, logarithmic past ``ROBUST_SCALE``, so
    a few anomalous published rows (the source's own outliers) cannot pull the fit."""
    return ROBUST_SCALE**2 * math.log1p((error / ROBUST_SCALE) ** 2)


def fit_efficiency(rows: Sequence[Row], prior: Efficiency, weight: float) -> Efficiency:
    """The efficiency minimising the robust loss of ``rows``' log errors, + ``weight`` x
    the squared distance (in the unconstrained parameters) from ``prior``."""
    prior_z = _to_vector(prior)

    def loss(z: list[float]) -> float:
        eff = _from_vector(z)
        total = sum(robust_loss(log_error(row, eff)) for row in rows)
        pull = sum((a - b) ** 2 for a, b in zip(z, prior_z, strict=True))
        return total + weight * ROBUST_SCALE**2 * pull

    best = nelder_mead(loss, prior_z)
    best = nelder_mead(loss, best, step=0.2)  # a restart escapes a collapsed simplex
    return _from_vector(best)


def _geometric_fit(values: Sequence[float], prior: float, weight: float) -> float:
    logs = [math.log(value) for value in values]
    return math.exp((sum(logs) + weight * math.log(prior)) / (len(logs) + weight))


# -- the fitted result ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fitted:
    """One fitted group: its efficiency, how many rows it rests on, and its spread."""

    efficiency: Efficiency
    rows: int
    low_ratio: float
    high_ratio: float


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = q * (len(ordered) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def _spread(errors: Sequence[float]) -> tuple[float, float]:
    """(low, high) multipliers from log errors (estimate / measured)."""
    # measured / estimate = exp(-error)
    ratios = [-error for error in errors]
    low = min(-MIN_SPREAD, _quantile(ratios, LOW_QUANTILE))
    high = max(MIN_SPREAD, _quantile(ratios, HIGH_QUANTILE))
    return math.exp(low), math.exp(high)


def _key(*parts: str) -> str:
    return "/".join(parts)


def fit_all(rows: Sequence[Row]) -> dict[str, Any]:
    """Fit every group to the rows not held out; a JSON-ready dict."""
    training = [row for row in rows if not row.measurement.held_out]
    result: dict[str, Any] = {"inference": {}, "train": {}, "matmul": {}, "spread": {}}
    inference = [row for row in training if row.request is not None]
    pooled_all = fit_efficiency(inference, START, 0.05)
    result["inference"][_key("*", "*")] = _fitted_dict(pooled_all, inference)
    for engine in INFERENCE_ENGINES:
        engine_rows = [row for row in inference if row.request and row.request.engine is engine]
        if not engine_rows:
            continue
        pooled = fit_efficiency(engine_rows, pooled_all, 0.3)
        result["inference"][_key(engine.value, "*")] = _fitted_dict(pooled, engine_rows)
        for memory_class in sorted({row.rates.memory_class for row in engine_rows}):
            class_rows = [row for row in engine_rows if row.rates.memory_class == memory_class]
            by_class = fit_efficiency(class_rows, pooled, SHRINKAGE)
            result["inference"][_key(engine.value, memory_class)] = _fitted_dict(
                by_class, class_rows
            )
            for group in sorted({row.rates.group for row in class_rows}):
                group_rows = [row for row in class_rows if row.rates.group == group]
                eff = fit_efficiency(group_rows, by_class, SHRINKAGE)
                result["inference"][_key(engine.value, group)] = _fitted_dict(eff, group_rows)
    for workload, store in ((Workload.TRAIN, "train"), (Workload.MATMUL, "matmul")):
        chosen = [row for row in training if row.measurement.workload is workload]
        if not chosen:
            continue
        unit = Efficiency(bandwidth=1.0, compute=1.0, layer_s=0.0)
        achieved = [row.measurement.value / predict(row, unit) for row in chosen]
        overall = _geometric_fit(achieved, 0.5, 0.0)
        result[store][_key("*", "*")] = {"utilisation": overall, "rows": len(chosen)}
        groups: dict[str, list[float]] = {}
        for row, value in zip(chosen, achieved, strict=True):
            groups.setdefault(_key(row.rates.family, row.precision.value), []).append(value)
        for key, values in sorted(groups.items()):
            result[store][key] = {
                "utilisation": _geometric_fit(values, overall, 1.0),
                "rows": len(values),
            }
    fitted = FittedParams(result)
    for workload in (Workload.DECODE, Workload.PREFILL, Workload.SERVE, Workload.TRAIN):
        for engine_name in [engine.value for engine in INFERENCE_ENGINES] + ["*"]:
            chosen = [
                row
                for row in training
                if row.measurement.workload is workload
                and (engine_name == "*" or row.measurement.engine == engine_name)
            ]
            if len(chosen) < 6:
                continue
            errors = [log_error(row, fitted.efficiency_for_row(row)[0]) for row in chosen]
            low, high = _spread(errors)
            result["spread"][_key(workload.value, engine_name)] = {
                "low_ratio": low,
                "high_ratio": high,
                "rows": len(chosen),
            }
    return result


def _fitted_dict(eff: Efficiency, rows: Sequence[Row]) -> dict[str, float | int]:
    return {
        "bandwidth": eff.bandwidth,
        "compute": eff.compute,
        "layer_s": eff.layer_s,
        "kv_factor": eff.kv_factor,
        "hop_s": eff.hop_s,
        "sequence_s": eff.sequence_s,
        "rows": len(rows),
    }


class FittedParams:
    """The stored fit, with the fallbacks an estimate for any engine and GPU needs."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def inference(self, engine: Engine, rates: DeviceRates) -> tuple[Efficiency, str, bool]:
        """(efficiency, basis words, whether this engine has its own measurements).

        The most specific group with measurements: the engine on this generation and
        memory class, else on this memory class, else all its GPUs, else every engine.
        """
        table = self.data["inference"]
        memory = "HBM" if rates.memory_class == "hbm" else "GDDR/other memory"
        for key, words in (
            (_key(engine.value, rates.group), f"{engine.value} on {rates.family}, {memory}"),
            (_key(engine.value, rates.memory_class), f"{engine.value} on {memory} GPUs"),
            (_key(engine.value, "*"), f"{engine.value}, all GPUs"),
            (_key("*", "*"), "every engine pooled"),
        ):
            item = table.get(key)
            if item is not None:
                eff = Efficiency(
                    bandwidth=item["bandwidth"],
                    compute=item["compute"],
                    layer_s=item["layer_s"],
                    kv_factor=item["kv_factor"],
                    hop_s=item["hop_s"],
                    sequence_s=item["sequence_s"],
                )
                own = key.startswith(engine.value + "/")
                note = f"fitted to {item['rows']} published measurements ({words})"
                if not own:
                    note += f"; no published {engine.value} measurement in the data"
                return eff, note, own
        raise PlanningInputError("the speed model has no fitted parameters")

    def utilisation(self, store: str, family: str, precision: Precision) -> tuple[float, str]:
        table = self.data[store]
        item = table.get(_key(family, precision.value))
        if item is not None:
            return item["utilisation"], (
                f"fitted to {item['rows']} published measurements ({family}, {precision.value})"
            )
        overall = table[_key("*", "*")]
        return overall["utilisation"], (
            f"fitted to {overall['rows']} published measurements (every generation pooled; "
            f"none on {family} {precision.value})"
        )

    def spread(self, workload: Workload, engine: str) -> tuple[float, float, int]:
        table = self.data["spread"]
        item = table.get(_key(workload.value, engine)) or table.get(_key(workload.value, "*"))
        if item is None:
            return math.exp(-0.4), math.exp(0.4), 0
        return item["low_ratio"], item["high_ratio"], item["rows"]

    def efficiency_for_row(self, row: Row) -> tuple[Efficiency, str]:
        workload = row.measurement.workload
        if workload in (Workload.TRAIN, Workload.MATMUL):
            store = "train" if workload is Workload.TRAIN else "matmul"
            value, words = self.utilisation(store, row.rates.family, row.precision)
            return Efficiency(bandwidth=1.0, compute=value, layer_s=0.0), words
        assert row.request is not None
        eff, words, _ = self.inference(row.request.engine, row.rates)
        return eff, words


def _fitted_path() -> Path:
    return Path(str(resources.files("gpudesk.planning.speed").joinpath(FITTED_FILE)))


def fresh_fit() -> dict[str, Any]:
    """Fit from the bundled measurements and the bundled catalog."""
    catalog = load_catalog([], include_user=False)
    return fit_all(build_rows(load_measurements(), catalog.entries))


@functools.cache
def fitted_params() -> FittedParams:
    """The stored fit (``fitted.json``)."""
    return FittedParams(json.loads(_fitted_path().read_text("utf-8")))


def write_fitted() -> Path:
    path = _fitted_path()
    path.write_text(json.dumps(fresh_fit(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


__all__ = [
    "FittedParams",
    "Row",
    "build_rows",
    "fit_all",
    "fitted_params",
    "fresh_fit",
    "log_error",
    "predict",
    "replace",
    "serve_concurrency",
    "write_fitted",
]

if __name__ == "__main__":
    print(write_fitted())
