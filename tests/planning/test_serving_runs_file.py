"""The published serving runs kept for validation (gpudesk/speed/serving_runs.toml).

Each run must cite its source, name a catalog GPU and a preset model, say how it was
driven (dataset, lengths, rate or concurrency) and carry at least one measured figure;
percentiles must be ordered. The checker is exercised on broken rows too, so it can fail.
"""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeGuard

from hypothesis import given, strategies as st

import gpudesk.speed
from gpudesk.catalog.loader import load_catalog
from gpudesk.workload.presets import load_presets
from gpudesk.workload.quant import QuantFormat

RUNS_FILE = Path(gpudesk.speed.__file__).parent / "serving_runs.toml"

REQUIRED = (
    "source",
    "published",
    "engine",
    "gpu",
    "tp",
    "model",
    "quant",
    "dataset",
    "request_rate",
)
ENGINES = frozenset({"vllm", "sglang", "tensorrt-llm"})
DATASETS = frozenset({"random", "sharegpt", "sonnet", "other"})
KV_FORMATS = frozenset({"bf16", "fp16", "fp8"})
COUNTS: tuple[str, ...] = (
    "tp",
    "pp",
    "dp",
    "ep",
    "input_len",
    "output_len",
    "num_prompts",
    "max_concurrency",
)
COUNTS += ("total_input_tokens", "total_output_tokens", "completed")
RATES = ("output_tokens_per_s", "output_tokens_per_s_per_gpu", "requests_per_s")
LATENCIES = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")
STATS = ("mean", "p50", "p90", "p99")
SERVER_KEYS = frozenset(
    {
        "max_num_seqs",
        "max_num_batched_tokens",
        "enable_chunked_prefill",
        "enable_prefix_caching",
        "num_scheduler_steps",
        "max_model_len",
        "chunked_prefill_size",
        "max_batch_size",
        "max_num_tokens",
    }
)
KNOWN = frozenset(
    {
        *REQUIRED,
        *COUNTS,
        *RATES,
        *LATENCIES,
        "engine_version",
        "kv",
        "server",
        "note",
        "random_range_ratio",
        "random_range_low",
    }
)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _one_of(value: object, allowed: frozenset[str] | set[str]) -> bool:
    return isinstance(value, str) and value in allowed


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def check_run(run: Mapping[str, Any], gpus: frozenset[str], models: frozenset[str]) -> list[str]:
    """Everything wrong with one run, each problem naming its field; empty when it is fine."""
    problems = [f"missing {key}" for key in REQUIRED if key not in run]
    problems += [f"unknown key {key}" for key in run if key not in KNOWN]
    source = run.get("source")
    if "source" in run and not (
        isinstance(source, str) and source.startswith("https://") and " — " in source
    ):
        problems.append("source must be 'https://… — title/publisher'")
    if "published" in run and not isinstance(run["published"], datetime.date):
        problems.append("published must be a date")
    if "engine" in run and not _one_of(run["engine"], ENGINES):
        problems.append(f"engine {run['engine']!r} is not one of {sorted(ENGINES)}")
    if "gpu" in run and not _one_of(run["gpu"], gpus):
        problems.append(f"gpu {run['gpu']!r} is not a catalog id")
    if "model" in run and not _one_of(run["model"], models):
        problems.append(f"model {run['model']!r} is not a preset id")
    if "quant" in run and not _one_of(run["quant"], {str(fmt) for fmt in QuantFormat}):
        problems.append(f"quant {run['quant']!r} is not a QuantFormat value")
    if "kv" in run and not _one_of(run["kv"], KV_FORMATS):
        problems.append(f"kv {run['kv']!r} is not one of {sorted(KV_FORMATS)}")
    if "dataset" in run and not _one_of(run["dataset"], DATASETS):
        problems.append(f"dataset {run['dataset']!r} is not one of {sorted(DATASETS)}")
    if run.get("dataset") == "random":
        problems += [
            f"random dataset needs {key}" for key in ("input_len", "output_len") if key not in run
        ]
    problems += [
        f"{key} must be a positive integer"
        for key in COUNTS
        if key in run and not _is_count(run[key])
    ]
    rate = run.get("request_rate")
    if "request_rate" in run and rate != "inf" and not (_is_number(rate) and rate > 0):
        problems.append("request_rate must be 'inf' or a positive number")
    server = run.get("server", {})
    if not isinstance(server, Mapping):
        problems.append("server must be a table")
    else:
        problems += [f"server has unknown key {key}" for key in server if key not in SERVER_KEYS]
    for key in RATES:
        if key in run and not (_is_number(run[key]) and run[key] > 0):
            problems.append(f"{key} must be a positive number")
    for key in LATENCIES:
        if key in run:
            problems += _check_latency(key, run[key])
    if not any(key in run for key in (*RATES, *LATENCIES)):
        problems.append("no measured figure (throughput or latency)")
    ratio = run.get("random_range_ratio", 0.0)
    if not (_is_number(ratio) and 0 <= ratio < 1):
        problems.append("random_range_ratio must be from 0 to below 1 (vLLM's len x (1 ± r))")
    low = run.get("random_range_low", 0.0)
    if not (_is_number(low) and 0 <= low <= 1):
        problems.append("random_range_low must be from 0 to 1 (SGLang's [low x len, len])")
    if "random_range_ratio" in run and "random_range_low" in run:
        problems.append("give random_range_ratio or random_range_low, not both")
    if "note" in run and not isinstance(run["note"], str):
        problems.append("note must be text")
    return problems


def _check_latency(key: str, table: object) -> list[str]:
    if not isinstance(table, Mapping) or not table:
        return [f"{key} must be a non-empty table of {', '.join(STATS)}"]
    problems = [f"{key} has unknown statistic {stat}" for stat in table if stat not in STATS]
    values = {stat: table[stat] for stat in STATS if stat in table}
    problems += [
        f"{key}.{stat} must be a positive number"
        for stat, value in values.items()
        if not (_is_number(value) and value > 0)
    ]
    if not problems:
        ordered = [values[stat] for stat in ("p50", "p90", "p99") if stat in values]
        if ordered != sorted(ordered):
            problems.append(f"{key} percentiles are not in order (p50 <= p90 <= p99)")
    return problems


@cache
def _runs() -> tuple[dict[str, Any], ...]:
    with RUNS_FILE.open("rb") as handle:
        return tuple(tomllib.load(handle)["runs"])


@cache
def _gpus() -> frozenset[str]:
    return frozenset(entry.id for entry in load_catalog([], include_user=False).entries)


@cache
def _models() -> frozenset[str]:
    return frozenset(preset.id for preset in load_presets())


def test_every_run_is_cited_complete_and_names_a_catalog_gpu_and_preset_model() -> None:
    runs = _runs()
    assert len(runs) >= 40
    for index, run in enumerate(runs, start=1):
        problems = check_run(run, _gpus(), _models())
        assert not problems, f"run #{index} ({run.get('source', '?')[:80]}): {problems}"


def test_the_runs_span_vendors_layouts_engines_and_moe() -> None:
    runs = _runs()
    vendors = {entry.id: entry.vendor for entry in load_catalog([], include_user=False).entries}
    moe = {preset.id for preset in load_presets() if preset.active_params is not None}
    assert {vendors[run["gpu"]] for run in runs} >= {"NVIDIA", "AMD"}
    assert any(run["tp"] == 1 for run in runs) and any(run["tp"] > 1 for run in runs)
    assert any(run["model"] in moe for run in runs) and any(run["model"] not in moe for run in runs)
    assert {run["engine"] for run in runs} == ENGINES
    assert len({run["source"].split(" — ")[0] for run in runs}) >= 10


_GOOD: dict[str, Any] = {
    "source": "https://example.org/run — example",
    "published": datetime.date(2025, 6, 1),
    "engine": "vllm",
    "gpu": "h100-sxm5",
    "tp": 8,
    "model": "llama-3.1-70b",
    "quant": "fp8",
    "dataset": "random",
    "input_len": 1000,
    "output_len": 1000,
    "request_rate": "inf",
    "ttft_ms": {"p50": 100.0, "p99": 300.0},
}
_GPUS = frozenset({"h100-sxm5"})
_MODELS = frozenset({"llama-3.1-70b"})


def test_a_good_row_passes_and_each_kind_of_bad_row_is_named() -> None:
    assert check_run(_GOOD, _GPUS, _MODELS) == []
    bad: dict[str, tuple[str, object]] = {
        "gpu": ("gpu", "h100"),
        "model": ("model", "llama-70b"),
        "engine": ("engine", "tgi"),
        "quant": ("quant", "fp7"),
        "source": ("source", "example.org"),
        "published": ("published", "2025-06-01"),
        "request_rate": ("request_rate", "fast"),
        "tp": ("tp", 0),
        "ttft_ms": ("ttft_ms", {"p50": 300.0, "p99": 100.0}),
        "tpot_ms": ("tpot_ms", {"median": 10.0}),
        "unknown key": ("speed", 1.0),
        "random_range_ratio": ("random_range_ratio", 1.0),
        "random_range_low": ("random_range_low", -0.5),
    }
    for named, (key, value) in bad.items():
        problems = check_run({**_GOOD, key: value}, _GPUS, _MODELS)
        assert any(named in problem for problem in problems), (key, problems)
    no_figures = {key: value for key, value in _GOOD.items() if key != "ttft_ms"}
    assert check_run(no_figures, _GPUS, _MODELS) == ["no measured figure (throughput or latency)"]


@given(key=st.sampled_from(REQUIRED), index=st.integers(min_value=0, max_value=39))
def test_dropping_any_required_key_of_any_published_run_is_reported(key: str, index: int) -> None:
    run = dict(_runs()[index])
    del run[key]
    assert f"missing {key}" in check_run(run, _gpus(), _models())


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(key=st.sampled_from(sorted(KNOWN)), value=_VALUES)
def test_any_value_in_any_field_is_judged_without_crashing(key: str, value: object) -> None:
    problems = check_run({**_GOOD, key: value}, _GPUS, _MODELS)
    assert all(isinstance(problem, str) for problem in problems)
