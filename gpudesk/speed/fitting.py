"""Fitting the engines' efficiencies to the published measurements.

The physics (:mod:`~gpudesk.speed.physics`) is the same for every GPU; what an
engine reaches of it differs by engine and GPU generation. Per engine, one
:class:`~gpudesk.speed.physics.Efficiency` (bandwidth and compute fractions,
fixed cost per layer, KV re-read factor, GPU hand-over) is fitted to all its decode,
prefill and serving rows at once, minimising the squared log error; then one per GPU
generation, pulled towards the engine's (partial pooling: a generation with few rows
stays near the engine's figures). Training utilisation and matmul efficiency are
geometric means per generation and precision, pulled towards the overall mean the same
way. Rows marked ``held_out`` are never used here.

The fit runs in about a second and its result is stored in ``fitted.json`` beside this
module (``python -m gpudesk.speed.fitting`` rewrites it); a test re-fits and
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

import numpy as np

from gpudesk.catalog.loader import load_catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.speed.data import (
    CURRENT_BUILDS_FROM,
    Checkpointing,
    Measurement,
    MeasurementFile,
    Workload,
    load_measurements,
)
from gpudesk.speed.estimate import (
    Backend,
    Engine,
    KvFormat,
    Mode,
    SpeedRequest,
    backend_for,
    compute_cap,
    compute_precision,
    dtype_class,
    fitted_gpus,
    kv_pool_bytes,
    model_costs,
    prefill_chunk,
    share_cap,
    within_peak,
)
from gpudesk.speed.hardware import DeviceRates, Precision, rates_for
from gpudesk.speed.physics import (
    Efficiency,
    Gpus,
    ModelCosts,
    decode_step,
    kv_read_factor,
    max_sequences,
    prefill_time,
    tp_comm_s,
    train_flops_per_token,
    unfused_scores_bytes,
    unfused_scores_s,
)
from gpudesk.speed.serving import StepShape
from gpudesk.speed.shapes import shape_for
from gpudesk.speed.step import attention_pairs, step_time
from gpudesk.speed.under_load import engine_limits
from gpudesk.workload.errors import PlanningInputError
from gpudesk.workload.quant import QuantFormat

FITTED_FILE = "fitted.json"
#: Weight of the pull towards the pooled figures: as much as this many rows at the robust
#: scale per unit of distance in the unconstrained parameters.
SHRINKAGE = 1.0
#: Log error beyond which a row counts less and less (log 1.35: the decode tolerance).
ROBUST_SCALE = math.log(1.35)
#: Range quantiles of the out-of-source residuals: the 7.5th and 92.5th percentile.
LOW_QUANTILE, HIGH_QUANTILE = 0.075, 0.925
#: A range is never narrower than this either side (measurement noise alone is ~5-10%).
MIN_SPREAD = 0.12
#: A range widens by sqrt(1 + WIDEN_ROWS / rows) when its curve rests on few rows, and by
#: FALLBACK_WIDEN per step its basis falls back (no data for this engine/backend/vendor).
WIDEN_ROWS = 4.0
FALLBACK_WIDEN = 1.35
INFERENCE_ENGINES = (Engine.LLAMA_CPP, Engine.VLLM, Engine.TENSORRT_LLM)
#: Where the search starts: plausible for any engine (fractions, 30 us per layer).
START = Efficiency(
    bandwidth=0.7,
    compute=0.4,
    layer_s=30e-6,
    kv_factor=1.5,
    hop_s=2e-4,
    sequence_s=5e-6,
    gemm_half=5000.0,
    attention=0.5,
    hbm=0.7,
    older_layer_s=30e-6,
)


@dataclass(frozen=True, slots=True)
class Row:
    """A measurement with everything needed to predict it."""

    measurement: Measurement
    rates: DeviceRates
    costs: ModelCosts
    request: SpeedRequest | None  # None for matmul and training rows
    precision: Precision
    #: the page the figure was copied from: rows of one source are fitted or left out together
    source: str = ""

    @property
    def curve(self) -> str:
        """The fitted curve an inference row belongs to: engine[-backend]/vendor/dtype."""
        assert self.request is not None
        return curve_key(self.request, self.rates)


#: Engines priced with another engine's fitted curve: measurements.toml has no SGLang
#: rows, and SGLang runs decode in CUDA graphs with FlashInfer/FlashAttention kernels as
#: vLLM does, so it takes vLLM's step efficiencies (its basis says so).
CURVE_OF = {Engine.SGLANG: Engine.VLLM}


def engine_key(request: SpeedRequest, rates: DeviceRates) -> str:
    """ "llama.cpp-cuda", "llama.cpp-vulkan", "vllm", ...: an engine and its backend."""
    if request.engine is Engine.LLAMA_CPP:
        return f"{request.engine.value}-{backend_for(rates.vendor, request.backend).value}"
    return CURVE_OF.get(request.engine, request.engine).value


def curve_key(request: SpeedRequest, rates: DeviceRates) -> str:
    dtype = dtype_class(request.quant, rates, request.engine)
    return _key(engine_key(request, rates), rates.vendor, dtype)


def _costs_for_training(row: Measurement) -> ModelCosts:
    if row.model is not None:
        shape = shape_for(row.model)
        embedding = 0 if shape.tied_embeddings else shape.embedding_params
        return ModelCosts(
            layers=shape.layers,
            hidden=shape.hidden,
            matmul_params_active=float(shape.active_params - embedding),
            params_total=float(shape.total_params),
            experts=shape.experts,
            active_experts=shape.active_experts,
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
            precision = compute_precision(quant, rates, None)
            rows.append(Row(item, rates, costs, None, precision, item.source))
            continue
        quant = QuantFormat(item.quant or "bf16")
        if item.workload is Workload.TRAIN:
            precision = compute_precision(quant, rates, None)
            rows.append(Row(item, rates, _costs_for_training(item), None, precision, item.source))
            continue
        kv = KvFormat(item.kv_quant or "fp16")
        assert item.model is not None
        engine = Engine(item.engine)
        # As speed estimates a request: llama.cpp's rows are of its GGUF files.
        costs = _cached_costs(
            item.model, quant, kv, engine.weights_in_gguf(Mode(item.workload.value))
        )
        request = SpeedRequest(
            mode=Mode(item.workload.value),
            engine=engine,
            backend=Backend(item.backend) if item.backend else None,
            quant=quant,
            kv_quant=kv,
            count=item.count,
            batch=item.batch,
            concurrency=item.concurrency,
            seq_in=item.seq_in if item.seq_in is not None else max(1, item.context or 1),
            seq_out=item.seq_out,
            context=item.context,
        ).resolved()
        precision = compute_precision(quant, rates, engine)
        rows.append(Row(item, rates, costs, request, precision, item.source))
    return rows


@functools.cache
def _cached_costs(model_id: str, quant: QuantFormat, kv: KvFormat, gguf: bool) -> ModelCosts:
    return model_costs(shape_for(model_id), quant, kv, gguf=gguf)


def serve_concurrency(rates: DeviceRates, costs: ModelCosts, request: SpeedRequest) -> int:
    """Sequences a serving request runs together (0: not even one fits)."""
    assert request.seq_in is not None and request.seq_out is not None
    pool = kv_pool_bytes(rates, costs, request.count)
    fitting = max_sequences(pool, costs, seq_in=request.seq_in, seq_out=request.seq_out)
    if pool <= 0:
        return 0
    wanted = request.concurrency or request.engine.max_sequences or fitting
    return min(wanted, fitting)


def train_unit(row: Row) -> float:
    """Tokens/s per GPU ``row`` would reach at 100% of the dense 16-bit peak."""
    item = row.measurement
    assert item.seq_in is not None
    flops = train_flops_per_token(
        row.costs,
        seq=item.seq_in,
        frozen_base=False,
        full_recompute=item.checkpointing is Checkpointing.FULL,
    )
    return row.rates.fp16_tflops * 1e12 / flops


def older_step_s(row: Row, eff: Efficiency) -> float:
    """Seconds ``row``'s older llama.cpp build adds to each decode step (0 for every other
    row)."""
    if not row.measurement.older_build or row.measurement.workload is not Workload.DECODE:
        return 0.0
    return row.costs.layers * eff.older_layer_s


def row_cap(row: Row, *, current: bool = False) -> float:
    """The most ``row``'s compute share may be, for the build it measured (an older
    llama.cpp build dequantised GGUF prompts into cuBLAS FP16 where a current one runs
    int8 MMQ: :func:`~gpudesk.speed.estimate.share_cap`); ``current``: a current build."""
    if row.request is None:
        return compute_cap(row.rates, row.precision)
    older = row.measurement.older_build and not current
    return share_cap(row.rates, row.request, older_build=older)


def older_factor(row: Row, eff: Efficiency) -> float:
    """How many times longer ``row``'s llama.cpp run took than a current build with its
    defaults would (an older build's decode steps' cost per layer and prompt kernels; a
    run without FlashAttention's attention scores); 1 for every other row."""
    item = row.measurement
    if not (item.older_build or item.unfused_attention) or row.request is None:
        return 1.0
    current = _predict(row, eff, current=True)
    measured_build = _predict(row, eff, current=False)
    if row.measurement.unit == "s":
        return measured_build / current
    return current / measured_build


def predict(row: Row, eff: Efficiency) -> float:
    """The model's figure for ``row`` in the row's unit, at efficiency ``eff``."""
    return _predict(row, eff, current=False)


def _predict(row: Row, eff: Efficiency, *, current: bool) -> float:
    """:func:`predict`; ``current``: as a current llama.cpp build would run the row."""
    item = row.measurement
    if item.workload is Workload.MATMUL:
        return row.rates.peak_tflops(row.precision) * eff.compute
    if item.workload is Workload.TRAIN:
        return train_unit(row) * eff.compute
    request = row.request
    assert request is not None and request.seq_in is not None and request.seq_out is not None
    gpus = fitted_gpus(row.rates, request)
    eff = within_peak(eff, row.rates, row.precision, cap=row_cap(row, current=current))
    if item.workload is Workload.DECODE:
        assert request.context is not None
        step = decode_step(row.costs, gpus, eff, batch=request.batch, context=request.context)
        extra = 0.0 if current else older_step_s(row, eff)
        return request.batch / (step.total_s + extra)
    if item.workload is Workload.PREFILL:
        chunk = prefill_chunk(request.engine)
        times = prefill_time(
            row.costs, gpus, eff, tokens=request.seq_in, batch=request.batch, chunk=chunk
        )
        seconds = times.total_s
        if item.unfused_attention and not current:
            # a current llama.cpp runs FlashAttention (``-fa auto``); this run did not
            seconds += request.batch * unfused_scores_s(
                row.costs, gpus, eff, tokens=request.seq_in, chunk=chunk
            )
        if item.unit == "s":
            return seconds
        return request.batch * request.seq_in / seconds
    steady = steady_state(row)
    mixed = step_time(row.costs, gpus, eff, steady.mixed).total_s
    plain = step_time(row.costs, gpus, eff, steady.decoding).total_s
    return steady.decodes / (steady.busy * mixed + (1 - steady.busy) * plain)


@dataclass(frozen=True, slots=True)
class SteadyState:
    """The steps a saturated engine repeats (the simulator's scheduler, on average): every
    step decodes ``decodes`` sequences; a ``busy`` share of them also computes a prompt
    chunk, within the token budget, as fast as finished requests free their places."""

    decodes: int
    busy: float
    mixed: StepShape
    decoding: StepShape


def steady_state(row: Row) -> SteadyState:
    """``row``'s serving run as its engine runs it saturated: ``concurrency`` requests at
    most (and the engine's ``max_num_seqs``), prompts chunked within its token budget
    (:func:`~gpudesk.speed.under_load.engine_limits`). Per output token a request needs
    ``seq_in / seq_out`` prompt tokens, so decodes + prompt tokens fit the budget."""
    request = row.request
    assert request is not None and request.seq_in is not None and request.seq_out is not None
    seq_in, seq_out = request.seq_in, request.seq_out
    limits = engine_limits(
        request.engine.value, gpu_name=row.rates.name, memory_gb=row.rates.memory_gb
    )
    budget = limits.max_num_batched_tokens
    running = min(max(1, serve_concurrency(row.rates, row.costs, request)), limits.max_num_seqs)
    if limits.reserve_output:
        # an engine that holds each request's whole KV from the start runs fewer at once
        pool = kv_pool_bytes(row.rates, row.costs, request.count)
        whole = row.costs.kv_bytes(seq_in + seq_out)
        if whole > 0:
            running = max(1, min(running, math.floor(pool / whole)))
    decodes = max(1, round(min(running, budget * seq_out / (seq_in + seq_out))))
    prompt_per_step = decodes * seq_in / seq_out
    room = max(1, budget - decodes)
    chunk = min(seq_in, room)
    busy = prompt_per_step / chunk
    if busy > 1:  # the budget binds: every step carries prompt tokens
        chunk, busy = min(room, max(1, round(prompt_per_step))), 1.0
    context = decodes * (seq_in + seq_out / 2)
    # a chunk's tokens attend, on average over the prompt, to half of it
    mixed = StepShape(chunk, chunk * seq_in / 2, 1, decodes, context)
    return SteadyState(decodes, busy, mixed, StepShape(0, 0.0, 0, decodes, context))


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


#: where :attr:`Efficiency.older_layer_s` sits in the unconstrained vector
OLDER_LAYER_INDEX = 9


def _to_vector(eff: Efficiency) -> list[float]:
    return [
        _logit(eff.bandwidth),
        _logit(eff.compute / 2),
        math.log(eff.layer_s),
        math.log(eff.kv_factor - 1 + 1e-6),
        math.log(eff.hop_s),
        math.log(eff.sequence_s),
        math.log(eff.gemm_half),
        _logit(eff.attention),
        _logit(eff.hbm),
        math.log(max(eff.older_layer_s, 1e-13)),
    ]


def _from_vector(z: Sequence[float]) -> Efficiency:
    return Efficiency(
        bandwidth=_sigmoid(z[0]),
        # up to twice the 16-bit peak: an FP8 curve is a share of the 16-bit peak too
        compute=2 * _sigmoid(z[1]),
        layer_s=math.exp(max(-30.0, min(0.0, z[2]))),
        kv_factor=1 + math.exp(max(-30.0, min(3.0, z[3]))),
        hop_s=math.exp(max(-30.0, min(0.0, z[4]))),
        sequence_s=math.exp(max(-30.0, min(0.0, z[5]))),
        gemm_half=math.exp(max(-10.0, min(20.0, z[6]))),
        attention=_sigmoid(z[7]),
        hbm=_sigmoid(z[8]),
        # an older build is never faster
        older_layer_s=math.exp(max(-30.0, min(0.0, z[9]))),
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


class RowBatch:
    """Rows as arrays, so one efficiency's log errors over all of them is a few array
    operations (the same formulas as :mod:`~gpudesk.speed.physics`; a test checks
    they agree with :func:`log_error` row by row)."""

    def __init__(self, rows: Sequence[Row]) -> None:
        columns: dict[str, list[float]] = {
            name: []
            for name in [
                "kind",
                "weights",
                "kv",
                "bw",
                "flops",
                "peak_one",
                "f_step",
                "layers",
                "batch",
                "hops",
                "f_matmul",
                "f_attention",
                "x_prefill",
                "passes",
                "in_memory",
                "cap",
                "hbm",
                "older",
                "scores",
                "prompt_tokens",
                "comm_step",
                "comm_prefill",
                *STEADY_COLUMNS,
                "value",
                "sign",
            ]
        }
        for row in rows:
            request = row.request
            assert request is not None and request.seq_in is not None
            assert request.seq_out is not None and request.context is not None
            item = row.measurement
            costs = row.costs
            gpus = fitted_gpus(row.rates, request)
            kind = {Workload.DECODE: 0.0, Workload.PREFILL: 1.0, Workload.SERVE: 2.0}[item.workload]
            batch = float(request.batch)
            context = float(request.context)
            chunk = prefill_chunk(request.engine)
            tokens = float(request.seq_in)
            in_flight = (
                request.batch * tokens if chunk is None else min(request.batch * tokens, chunk)
            )
            values = {
                "kind": kind,
                "weights": costs.weights_read(int(batch)),
                "kv": batch * costs.kv_bytes(context),
                "bw": gpus.bandwidth_bytes_s,
                "flops": gpus.flops_s,
                "peak_one": gpus.peak_tflops,
                "f_step": batch * costs.decode_flops(context),
                "layers": float(costs.layers),
                "batch": batch,
                "hops": float(gpus.count - 1) if gpus.layer_split else 0.0,
                "f_matmul": request.batch * 2.0 * costs.matmul_params_active * tokens,
                "f_attention": request.batch * costs.attention_flops_prefill(tokens),
                "x_prefill": max(1.0, in_flight) * costs.hidden,
                "passes": 1.0
                if chunk is None
                else float(max(1, math.ceil(request.batch * tokens / chunk))),
                "in_memory": costs.in_memory_bytes,
                "cap": row_cap(row),
                "hbm": 1.0 if gpus.hbm else 0.0,
                "older": 1.0 if item.older_build else 0.0,
                "scores": request.batch * unfused_scores_bytes(costs, tokens=tokens, chunk=chunk)
                if item.unfused_attention and item.workload is Workload.PREFILL
                else 0.0,
                "prompt_tokens": request.batch * tokens,
                "comm_step": tp_comm_s(costs, gpus, batch),
                "comm_prefill": tp_comm_s(costs, gpus, request.batch * tokens),
                "value": item.value,
                "sign": -1.0 if item.unit == "s" else 1.0,
            }
            values.update(_steady_columns(row, gpus))
            for name, figure in values.items():
                columns[name].append(float(figure))
        self.size = len(rows)
        self.a = {name: np.array(column, dtype=float) for name, column in columns.items()}
        kinds = self.a["kind"]
        self.decode = kinds == 0.0
        self.prefill = kinds == 1.0
        self.serve = kinds == 2.0
        self.seconds = self.a["sign"] < 0

    def log_errors(self, eff: Efficiency, tokens_total: np.ndarray | None = None) -> Any:
        a = self.a
        peak = a["peak_one"]
        plain = np.minimum(eff.compute, a["cap"])

        def share(x: Any) -> Any:
            if eff.gemm_half <= 0:
                return plain
            return plain * x / (x + eff.gemm_half * peak)

        bandwidth = eff.bandwidth * np.where(a["hbm"] > 0, eff.hbm, 1.0)
        memory = (a["weights"] + eff.kv_factor * a["kv"]) / (a["bw"] * bandwidth)
        compute = a["f_step"] / (a["flops"] * plain)
        over = a["layers"] * eff.layer_s + a["batch"] * eff.sequence_s + a["hops"] * eff.hop_s
        step = np.maximum(memory, compute) + over + a["comm_step"]
        decode = a["batch"] / (step + a["older"] * a["layers"] * eff.older_layer_s)
        p_compute = (a["f_matmul"] + a["f_attention"] / eff.attention) / (
            a["flops"] * share(a["x_prefill"])
        )
        p_memory = a["passes"] * a["in_memory"] / (a["bw"] * bandwidth)
        p_time = (
            np.maximum(p_memory, p_compute)
            + a["passes"] * a["layers"] * eff.layer_s
            + a["comm_prefill"]
            + a["scores"] / (a["bw"] * bandwidth)
        )
        prefill = np.where(self.seconds, p_time, a["prompt_tokens"] / p_time)
        # serving: the steady state's two steps (step.step_time's terms, vectorised)
        fixed = a["layers"] * eff.layer_s + a["s_decodes"] * eff.sequence_s + a["hops"] * eff.hop_s
        kv_read = eff.kv_factor * a["s_kv"]
        decode_attention = a["s_decode_attention"] / (a["flops"] * plain)
        plain_step = (
            np.maximum(
                (a["s_weights_plain"] + kv_read) / (a["bw"] * bandwidth),
                a["s_decode_matmul"] / (a["flops"] * plain) + decode_attention,
            )
            + fixed
            + a["s_comm_plain"]
        )
        mixed_share = share(a["s_x_mixed"])
        mixed_step = (
            np.maximum(
                (a["s_weights_mixed"] + kv_read) / (a["bw"] * bandwidth),
                a["s_prompt_matmul"] / (a["flops"] * mixed_share)
                + a["s_prompt_attention"] / (a["flops"] * mixed_share * eff.attention)
                + decode_attention,
            )
            + fixed
            + a["s_comm_mixed"]
        )
        busy = a["s_busy"]
        serve = a["s_decodes"] / (busy * mixed_step + (1 - busy) * plain_step)
        predicted = np.where(self.decode, decode, np.where(self.prefill, prefill, serve))
        return np.log(predicted / a["value"]) * a["sign"]


#: :class:`RowBatch`'s columns of a serving row's steady state
STEADY_COLUMNS = (
    "s_decodes",
    "s_busy",
    "s_weights_mixed",
    "s_weights_plain",
    "s_kv",
    "s_decode_attention",
    "s_decode_matmul",
    "s_prompt_matmul",
    "s_prompt_attention",
    "s_x_mixed",
    "s_comm_mixed",
    "s_comm_plain",
)


def _steady_columns(row: Row, gpus: Gpus) -> dict[str, float]:
    """:class:`RowBatch`'s figures of a serving row's steady state (zeros for others)."""
    if row.measurement.workload is not Workload.SERVE:
        # unused for other rows; one decode and one token keep the arithmetic finite
        return {**dict.fromkeys(STEADY_COLUMNS, 0.0), "s_decodes": 1.0, "s_x_mixed": 1.0}
    costs = row.costs
    steady = steady_state(row)
    decodes = steady.decodes
    tokens = steady.mixed.prefill_tokens + decodes
    context = steady.decoding.decode_context / decodes
    return {
        "s_decodes": float(decodes),
        "s_busy": steady.busy,
        "s_weights_mixed": costs.weights_read(max(1, tokens)),
        "s_weights_plain": costs.weights_read(decodes),
        "s_kv": decodes * costs.kv_bytes(context) * kv_read_factor(costs, gpus),
        "s_decode_attention": decodes * costs.attention_flops_decode(context),
        "s_decode_matmul": 2.0 * costs.matmul_params_active * decodes,
        "s_prompt_matmul": 2.0 * costs.matmul_params_active * tokens,
        "s_prompt_attention": 4.0 * costs.attention_width * attention_pairs(costs, steady.mixed),
        "s_x_mixed": max(1.0, tokens) * costs.hidden,
        "s_comm_mixed": tp_comm_s(costs, gpus, tokens),
        "s_comm_plain": tp_comm_s(costs, gpus, decodes),
    }


def fit_efficiency(
    rows: Sequence[Row], prior: Efficiency, weight: float, *, iterations: int = 600
) -> Efficiency:
    """The efficiency minimising the robust loss of ``rows``' log errors, + ``weight`` x
    the squared distance (in the unconstrained parameters) from ``prior``."""
    prior_z = _to_vector(prior)
    batch = RowBatch(rows)
    scale2 = ROBUST_SCALE**2
    # The older-build cost per layer is only told apart from the rest where the rows hold
    # decode steps of both an older and a current llama.cpp build; elsewhere it keeps the
    # prior's.
    decoded = [row for row in rows if row.measurement.workload is Workload.DECODE]
    older = {
        row.measurement.older_build for row in decoded if row.measurement.engine == "llama.cpp"
    }
    pinned = None if older == {True, False} else prior_z[OLDER_LAYER_INDEX]

    def loss(z: list[float]) -> float:
        if pinned is not None:
            z = [*z[:OLDER_LAYER_INDEX], pinned, *z[OLDER_LAYER_INDEX + 1 :]]
        errors = batch.log_errors(_from_vector(z))
        total = float(np.sum(scale2 * np.log1p(errors * errors / scale2)))
        if not math.isfinite(total):
            return math.inf
        pull = sum((a - b) ** 2 for a, b in zip(z, prior_z, strict=True))
        return total + weight * scale2 * pull

    best = nelder_mead(loss, prior_z, iterations=iterations)
    # a restart escapes a collapsed simplex
    best = nelder_mead(loss, best, step=0.2, iterations=iterations // 2)
    if pinned is not None:
        best[OLDER_LAYER_INDEX] = pinned
    return _from_vector(best)


# -- the fitted result ------------------------------------------------------------------


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


def _parents(key: str) -> list[str]:
    """A curve's fallbacks, most specific first: engine-backend/vendor/*, engine-backend/*/*,
    engine/*/* (every backend of llama.cpp), */*/*."""
    engine, vendor, _dtype = key.split("/")
    base = engine.split("-")[0] if engine.startswith("llama.cpp-") else engine
    chain = [_key(engine, vendor, "*"), _key(engine, "*", "*"), _key(base, "*", "*")]
    chain.append(_key("*", "*", "*"))
    out: list[str] = []
    for level in chain:
        if level != key and level not in out:
            out.append(level)
    return out


#: Engines whose prompt attention is FlashAttention (vLLM's and SGLang's CUDA backends):
#: their attention share starts from FlashAttention-2's, not from the pooled curve's,
#: which llama.cpp's rows set (they ran without
#: FlashAttention; their scores' traffic is charged apart,
#: :func:`~gpudesk.speed.physics.unfused_scores_s`, so the pooled share is that of the
#: FLOPs alone). Dao, 'FlashAttention-2', 2023 (arXiv:2307.08691):
#: the forward pass reaches 50-73% of the A100's peak, where its GEMMs reach about 80%
#: (the same paper's baseline): 0.5 / 0.8, the low end (chunked prompts attend to paged
#: KV), as a share of the GEMM's. The engine's own rows still move it.
FLASH_ATTENTION_ENGINES = frozenset({"vllm", "sglang"})
FLASH_ATTENTION_SHARE = 0.5 / 0.8
#: Engines whose matrix multiplies are the vendor's GEMM library (cuBLAS/cuBLASLt,
#: CUTLASS, hipBLASLt): their compute share starts from the share published matmul
#: benchmarks reach (the fit's "matmul" rows, every generation pooled), not from the
#: pooled inference curve's, which llama.cpp's own kernels set. Their rows still move it.
LIBRARY_GEMM_ENGINES = frozenset({"vllm", "sglang", "tensorrt-llm"})


def _achieved_shares(matmul: Sequence[Row]) -> list[float]:
    """The share of the dense peak each matmul row reached."""
    unit = Efficiency(bandwidth=1.0, compute=1.0, layer_s=0.0)
    return [row.measurement.value / predict(row, unit) for row in matmul]


def _matmul_share(rows: Sequence[Row]) -> float | None:
    """The pooled share of the dense peak the matmul rows reach (None: no such rows)."""
    matmul = [row for row in rows if row.measurement.workload is Workload.MATMUL]
    return _geometric_fit(_achieved_shares(matmul), 0.5, 0.0) if matmul else None


def _fit_inference(rows: Sequence[Row], matmul_share: float | None = None) -> dict[str, Any]:
    """Every curve with rows, each pulled towards its parent (partial pooling); a level
    whose rows are its parent's rows takes the parent's figures without a refit."""
    table: dict[str, Any] = {}
    members: dict[str, list[Row]] = {}
    for row in rows:
        key = row.curve
        for level in [key, *_parents(key)]:
            members.setdefault(level, []).append(row)
    fitted: dict[str, Efficiency] = {}
    order = sorted(members, key=lambda key: (len(_parents(key)), key))
    for key in order:
        chosen = members[key]
        if key == _key("*", "*", "*"):
            eff = fit_efficiency(chosen, START, 0.05, iterations=500)
        else:
            parent = next(level for level in _parents(key) if level in members)
            prior = fitted[parent]
            engine = key.split("/")[0]
            from_pool = parent == _key("*", "*", "*")
            if engine in FLASH_ATTENTION_ENGINES and from_pool:
                prior = replace(prior, attention=FLASH_ATTENTION_SHARE)
            if engine in LIBRARY_GEMM_ENGINES and from_pool and matmul_share is not None:
                prior = replace(prior, compute=matmul_share)
            if len(members[parent]) == len(chosen) and prior == fitted[parent]:
                eff = fitted[parent]
            else:
                weight = 0.3 if key.endswith("/*/*") else SHRINKAGE
                eff = fit_efficiency(chosen, prior, weight, iterations=250)
        fitted[key] = eff
        table[key] = _fitted_dict(eff, chosen)
    return table


#: Training utilisation: log u = base + fp8 gain + mixture-of-experts factor + a slope
#: per doubling of GPUs beyond 8 + a vendor offset, least squares, each term but the
#: base pulled towards 0 by as much as this many rows.
TRAIN_SHRINKAGE = 2.0
#: What a training estimate assumes with no training data at all (a fit left out the only
#: training sources): a typical MFU of large dense runs.
DEFAULT_TRAIN_UTILISATION = 0.4


def _train_features(row: Row) -> dict[str, float]:
    return train_features(
        row.rates,
        row.precision,
        row.costs.experts is not None,
        row.measurement.count,
        hidden=row.costs.hidden,
        experts=row.costs.experts,
        active_experts=row.costs.active_experts,
    )


#: The width the ``width`` term is centred on (Llama 3 8B's hidden size).
TRAIN_WIDTH_CENTRE = 4096


def train_features(
    rates: DeviceRates,
    precision: Precision,
    moe: bool,
    count: int,
    *,
    hidden: int | None = None,
    experts: int | None = None,
    active_experts: int | None = None,
) -> dict[str, float]:
    """The terms a training estimate's utilisation adds up (see :func:`_fit_train`).

    ``width``: log2 of the hidden size over 4,096. A wider model's matmuls are larger
    GEMMs and its per-token elementwise work (norms, activations, optimizer) is a smaller
    share of its FLOPs, so it keeps the GPU busier (as prefill's GEMM-shape curve).
    ``sparsity``: log2 of experts over active experts for a mixture of experts: the
    sparser the routing, the fewer tokens each expert's GEMM gets and the more all-to-all
    traffic per FLOP.
    """
    features = {"base": 1.0, f"vendor:{rates.vendor}": 1.0}
    if precision is Precision.FP8:
        features["fp8"] = 1.0
    if moe:
        features["moe"] = 1.0
        if experts and active_experts:
            features["sparsity"] = math.log2(experts / active_experts) - 2.0
    if count > 8:
        features["scale"] = math.log2(count / 8)
    if hidden:
        features["width"] = math.log2(hidden / TRAIN_WIDTH_CENTRE)
    return features


def memory_ratio(rates: DeviceRates) -> float:
    """The dense 16-bit peak over the bandwidth, FLOPs per byte: how much harder a GPU's
    memory-bound work (norms, activations, optimizer, communication buffers) is to hide."""
    return rates.fp16_tflops * 1e12 / (rates.bandwidth_gbs * 1e9)


def effective_utilisation(utilisation: float, ratio: float, intensity: float) -> float:
    """Share of the 16-bit peak when a token's time is its FLOPs at ``utilisation`` of the
    peak plus the same FLOPs at ``intensity`` FLOPs per byte over the bandwidth (the
    memory-bound part): 1 / (1/u + peak / (bandwidth x intensity))."""
    return 1.0 / (1.0 / utilisation + ratio / intensity)


#: Candidate intensities (FLOPs per byte of memory-bound training traffic), log-spaced.
TRAIN_INTENSITIES = tuple(10 ** (1 + 3 * step / 36) for step in range(37))


def _descend(targets: Sequence[float], features: Sequence[dict[str, float]]) -> dict[str, float]:
    """Coordinate descent on the log utilisation terms (a ridge regression)."""
    names = sorted({name for item in features for name in item})
    coef = {name: 0.0 for name in names}
    for _ in range(100):
        for name in names:
            num = 0.0
            den = 0.0 if name == "base" else TRAIN_SHRINKAGE
            for target, item in zip(targets, features, strict=True):
                x = item.get(name)
                if not x:
                    continue
                rest = sum(coef[other] * value for other, value in item.items() if other != name)
                num += x * (target - rest)
                den += x * x
            coef[name] = num / den if den > 0 else 0.0
    return coef


def _fit_train(rows: Sequence[Row]) -> dict[str, Any]:
    """The utilisation terms and the memory-bound intensity that fit ``rows`` best (least
    squares in log tokens/s; the intensity by a search over :data:`TRAIN_INTENSITIES`)."""
    measured = [row.measurement.value / train_unit(row) for row in rows]
    ratios = [memory_ratio(row.rates) for row in rows]
    features = [_train_features(row) for row in rows]
    best: tuple[float, float, dict[str, float]] | None = None
    for intensity in TRAIN_INTENSITIES:
        targets = []
        for value, ratio in zip(measured, ratios, strict=True):
            inverse = 1.0 / value - ratio / intensity
            targets.append(-math.log(max(inverse, 0.25)))
        coef = _descend(targets, features)
        error = 0.0
        for value, ratio, item in zip(measured, ratios, features, strict=True):
            u = math.exp(sum(coef.get(name, 0.0) * x for name, x in item.items()))
            error += math.log(effective_utilisation(u, ratio, intensity) / value) ** 2
        if best is None or error < best[0]:
            best = (error, intensity, coef)
    assert best is not None
    _, intensity, coef = best
    counts = {name: sum(1 for item in features if item.get(name)) for name in coef}
    out: dict[str, Any] = {name: {"log": coef[name], "rows": counts[name]} for name in coef}
    out["intensity"] = {"log": math.log(intensity), "rows": len(rows)}
    return out


def fit_all(rows: Sequence[Row], *, spreads: bool = True) -> dict[str, Any]:
    """Fit every curve to the rows not held out; a JSON-ready dict.

    With ``spreads`` the ranges are fitted too: from leave-one-source-out residuals
    (:func:`out_of_source_errors`), so a source never narrows its own range.
    """
    training = [row for row in rows if not row.measurement.held_out]
    result: dict[str, Any] = {"inference": {}, "train": {}, "matmul": {}, "spread": {}}
    inference = [row for row in training if row.request is not None]
    result["inference"] = _fit_inference(inference, _matmul_share(training))
    train_rows = [row for row in training if row.measurement.workload is Workload.TRAIN]
    if train_rows:
        result["train"] = _fit_train(train_rows)
    matmul = [row for row in training if row.measurement.workload is Workload.MATMUL]
    if matmul:
        achieved = _achieved_shares(matmul)
        overall = _geometric_fit(achieved, 0.5, 0.0)
        result["matmul"][_key("*", "*")] = {"utilisation": overall, "rows": len(matmul)}
        groups: dict[str, list[float]] = {}
        for row, value in zip(matmul, achieved, strict=True):
            groups.setdefault(_key(row.rates.family, row.precision.value), []).append(value)
        for key, values in sorted(groups.items()):
            result["matmul"][key] = {
                "utilisation": _geometric_fit(values, overall, 1.0),
                "rows": len(values),
            }
    if spreads:
        errors = out_of_source_errors(rows)
        for workload in (Workload.DECODE, Workload.PREFILL, Workload.SERVE, Workload.TRAIN):
            chosen = [error for row, error in errors if row.measurement.workload is workload]
            if not chosen:
                continue
            low, high = _spread(chosen)
            result["spread"][workload.value] = {
                "low_ratio": low,
                "high_ratio": high,
                "rows": len(chosen),
            }
    return result


def sources(rows: Sequence[Row]) -> list[str]:
    """Every source, in file order."""
    return list(dict.fromkeys(row.source for row in rows))


def held_out_sources(rows: Sequence[Row]) -> list[str]:
    """Sources whose every row is held out: never in any fit."""
    return [
        source
        for source in sources(rows)
        if all(row.measurement.held_out for row in rows if row.source == source)
    ]


def leave_one_source_out(rows: Sequence[Row]) -> dict[str, FittedParams]:
    """Per source, the fit of every other source (no spreads): what predicts that source.

    A held-out source is predicted by the fit of all the fitted sources.
    """
    out: dict[str, FittedParams] = {}
    full: FittedParams | None = None
    held = set(held_out_sources(rows))
    for source in sources(rows):
        if source in held:
            if full is None:
                full = FittedParams(fit_all(rows, spreads=False))
            out[source] = full
            continue
        others = [row for row in rows if row.source != source]
        out[source] = FittedParams(fit_all(others, spreads=False))
    return out


def out_of_source_errors(rows: Sequence[Row]) -> list[tuple[Row, float]]:
    """Each inference and training row's log error predicted by a fit without its source."""
    fits = loso_fits(rows)
    out: list[tuple[Row, float]] = []
    for row in rows:
        if row.measurement.workload is Workload.MATMUL:
            continue
        eff, _ = fits[row.source].efficiency_for_row(row)
        out.append((row, log_error(row, eff)))
    return out


def loso_fits(rows: Sequence[Row]) -> dict[str, FittedParams]:
    """:func:`leave_one_source_out`, computed once per set of rows."""
    return _loso_cached(tuple(rows))


@functools.lru_cache(maxsize=4)
def _loso_cached(rows: tuple[Row, ...]) -> dict[str, FittedParams]:
    return leave_one_source_out(rows)


def _geometric_fit(values: Sequence[float], prior: float, weight: float) -> float:
    logs = [math.log(value) for value in values]
    return math.exp((sum(logs) + weight * math.log(prior)) / (len(logs) + weight))


def _fitted_dict(eff: Efficiency, rows: Sequence[Row]) -> dict[str, float | int]:
    return {
        "bandwidth": eff.bandwidth,
        "compute": eff.compute,
        "layer_s": eff.layer_s,
        "kv_factor": eff.kv_factor,
        "hop_s": eff.hop_s,
        "sequence_s": eff.sequence_s,
        "gemm_half": eff.gemm_half,
        "attention": eff.attention,
        "hbm": eff.hbm,
        "older_layer_s": eff.older_layer_s,
        "rows": len(rows),
    }


@dataclass(frozen=True, slots=True)
class Curve:
    """The efficiency an estimate uses and what it rests on."""

    efficiency: Efficiency
    words: str
    #: rows of the curve used; 0 when none of this engine's
    rows: int
    #: how many steps the lookup fell back from the exact curve (0: its own data)
    fallbacks: int
    own_engine: bool


class FittedParams:
    """The stored fit, with the fallbacks an estimate for any engine and GPU needs."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def curve(
        self,
        engine: Engine,
        rates: DeviceRates,
        quant: QuantFormat = QuantFormat.BF16,
        backend: Backend | None = None,
    ) -> Curve:
        """The most specific fitted curve: engine (and backend) on this vendor and weight
        format, else on this vendor, else on every vendor, else every engine pooled."""
        table = self.data["inference"]
        request = SpeedRequest(mode=Mode.DECODE, engine=engine, quant=quant, backend=backend)
        key = curve_key(request, rates)
        engine_name = key.split("/")[0]
        dtype = dtype_class(quant, rates, engine)
        vendor = rates.vendor
        for steps, level in enumerate([key, *_parents(key)]):
            item = table.get(level)
            if item is None:
                continue
            eff = Efficiency(
                bandwidth=item["bandwidth"],
                compute=item["compute"],
                layer_s=item["layer_s"],
                kv_factor=item["kv_factor"],
                hop_s=item["hop_s"],
                sequence_s=item["sequence_s"],
                gemm_half=item["gemm_half"],
                attention=item["attention"],
                hbm=item["hbm"],
                older_layer_s=item.get("older_layer_s", 0.0),
            )
            level_engine, level_vendor, level_dtype = level.split("/")
            words = {
                0: f"{engine_name} on {vendor} GPUs, {dtype} weights",
            }.get(steps, "")
            if not words:
                bits = [level_engine if level_engine != "*" else "every engine"]
                bits.append(f"on {level_vendor} GPUs" if level_vendor != "*" else "on every vendor")
                words = " ".join(bits)
            # "llama.cpp-vulkan" is llama.cpp's own; "tensorrt-llm" has a hyphen of its own.
            own = level_engine == engine.value or level_engine.startswith(f"{engine.value}-")
            note = f"fitted to {item['rows']} published measurements ({words})"
            if engine is Engine.LLAMA_CPP and eff.older_layer_s > 0:
                note += (
                    f"; for a {CURRENT_BUILDS_FROM}+ build (older builds' rows add "
                    f"{eff.older_layer_s * 1e6:.0f} us per layer)"
                )
            missing = []
            if level_dtype == "*" and steps:
                missing.append(f"{dtype} weights")
            if level_vendor == "*" and steps:
                missing.append(f"{vendor} GPUs")
            if level_engine != engine_name and steps:
                missing.append(engine_name)
            if missing and own:
                note += f"; no published {engine_name} measurement for {', '.join(missing)}"
            if not own:
                note += f"; no published {engine.value} measurement in the data"
            return Curve(eff, note, item["rows"], steps, own)
        raise PlanningInputError("the speed model has no fitted parameters")

    def inference(
        self,
        engine: Engine,
        rates: DeviceRates,
        quant: QuantFormat = QuantFormat.BF16,
        backend: Backend | None = None,
    ) -> tuple[Efficiency, str, bool]:
        """(efficiency, basis words, whether this engine has its own measurements)."""
        curve = self.curve(engine, rates, quant, backend)
        return curve.efficiency, curve.words, curve.own_engine

    def train_utilisation(
        self,
        rates: DeviceRates,
        precision: Precision,
        *,
        moe: bool,
        count: int,
        hidden: int | None = None,
        experts: int | None = None,
        active_experts: int | None = None,
    ) -> tuple[float, str, int]:
        """(share of the dense 16-bit peak, basis words, rows behind the vendor term)."""
        table = self.data["train"]
        if "base" not in table:
            return (
                DEFAULT_TRAIN_UTILISATION,
                (
                    f"no published training measurement in the fit: "
                    f"{DEFAULT_TRAIN_UTILISATION:.0%} of the 16-bit peak assumed"
                ),
                0,
            )
        features = train_features(
            rates,
            precision,
            moe,
            count,
            hidden=hidden,
            experts=experts,
            active_experts=active_experts,
        )
        total = 0.0
        parts = []
        for name, value in features.items():
            item = table.get(name)
            if item is None:
                continue
            total += item["log"] * value
            if name == "fp8":
                parts.append(f"FP8 ×{math.exp(item['log']):.2f} ({item['rows']} rows)")
            elif name == "moe":
                parts.append(f"mixture of experts ×{math.exp(item['log']):.2f}")
            elif name == "scale":
                parts.append(f"×{math.exp(item['log']):.3f} per doubling of GPUs past 8")
            elif name == "width" and value:
                parts.append(f"width ×{math.exp(item['log'] * value):.2f} (hidden {hidden:,})")
            elif name == "sparsity":
                parts.append(
                    f"routing {experts} experts / {active_experts} ×"
                    f"{math.exp(item['log'] * value):.2f}"
                )
        if "intensity" in table:
            intensity = math.exp(table["intensity"]["log"])
            base_share = min(2.0, math.exp(total))
            total = math.log(effective_utilisation(base_share, memory_ratio(rates), intensity))
            parts.append(
                f"memory-bound work at {intensity:,.0f} FLOPs/byte over "
                f"{rates.bandwidth_gbs:,.0f} GB/s"
            )
        vendor_rows = table.get(f"vendor:{rates.vendor}", {}).get("rows", 0)
        words = (
            f"fitted to {table['base']['rows']} published training measurements"
            + (f" ({', '.join(parts)})" if parts else "")
            + ("" if vendor_rows else f"; none on {rates.vendor} GPUs")
        )
        return min(2.0, math.exp(total)), words, vendor_rows

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

    def spread(self, workload: Workload, rows: int, fallbacks: int) -> tuple[float, float, int]:
        """(low, high) multipliers and the residuals behind them: the out-of-source
        quantiles of ``workload``, widened for a curve of few ``rows`` and per fallback."""
        item = self.data["spread"].get(workload.value)
        if item is None:
            low, high, count = math.exp(-0.4), math.exp(0.4), 0
        else:
            low, high, count = item["low_ratio"], item["high_ratio"], item["rows"]
        widen = math.sqrt(1 + WIDEN_ROWS / max(rows, 1)) * FALLBACK_WIDEN**fallbacks
        return math.exp(math.log(low) * widen), math.exp(math.log(high) * widen), count

    def efficiency_for_row(self, row: Row) -> tuple[Efficiency, str]:
        workload = row.measurement.workload
        if workload is Workload.MATMUL:
            value, words = self.utilisation("matmul", row.rates.family, row.precision)
            return Efficiency(bandwidth=1.0, compute=value, layer_s=0.0), words
        if workload is Workload.TRAIN:
            value, words, _ = self.train_utilisation(
                row.rates,
                row.precision,
                moe=row.costs.experts is not None,
                count=row.measurement.count,
                hidden=row.costs.hidden,
                experts=row.costs.experts,
                active_experts=row.costs.active_experts,
            )
            return Efficiency(bandwidth=1.0, compute=value, layer_s=0.0), words
        assert row.request is not None
        curve = self.curve(row.request.engine, row.rates, row.request.quant, row.request.backend)
        return curve.efficiency, curve.words


def _fitted_path() -> Path:
    return Path(str(resources.files("gpudesk.speed").joinpath(FITTED_FILE)))


def fresh_rows() -> list[Row]:
    """The bundled measurements against the bundled catalog."""
    catalog = load_catalog([], include_user=False)
    return build_rows(load_measurements(), catalog.entries)


def fresh_fit() -> dict[str, Any]:
    """Fit from the bundled measurements and the bundled catalog."""
    return fit_all(fresh_rows())


@functools.cache
def fitted_params() -> FittedParams:
    """The stored fit (``fitted.json``)."""
    return FittedParams(json.loads(_fitted_path().read_text("utf-8")))


def write_fitted() -> Path:
    path = _fitted_path()
    path.write_text(json.dumps(fresh_fit(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


__all__ = [
    "Curve",
    "FittedParams",
    "Row",
    "build_rows",
    "fit_all",
    "fitted_params",
    "fresh_fit",
    "fresh_rows",
    "leave_one_source_out",
    "log_error",
    "loso_fits",
    "out_of_source_errors",
    "predict",
    "replace",
    "serve_concurrency",
    "write_fitted",
]

if __name__ == "__main__":
    print(write_fitted())
