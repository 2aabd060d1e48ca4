"""The longest context a GPU holds (issue 42 points 10 and 11): ``fit --emit`` sizes its
command with it and ``fit --gpu`` reports it, so it must be exactly the boundary of
:func:`gpudesk.memory.fit.check_count`, the one test of "does it hold"."""

from __future__ import annotations

import pytest
import reach
from hypothesis import given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.memory.breakdown import Engine, MemoryEstimate, WorkloadSpec, estimate_memory
from gpudesk.memory.fit import (
    CONTEXT_STEP,
    check_count,
    fit_across,
    fit_longest_context,
    largest_context,
    usable_for,
)
from gpudesk.workload.presets import find_preset
from gpudesk.workload.quant import QuantFormat

PRESETS = ("qwen2.5-32b", "llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "gemma-2-9b")
GPUS = ("rtx-4090", "rtx-3060-12gb", "l4", "a100-40gb-sxm4", "h100-sxm5", "apple-m2-pro-16c")
ENGINES = (Engine.LLAMA_CPP, Engine.VLLM, Engine.TRANSFORMERS)


def _estimator(preset: str, quant: str, engine: Engine):  # type: ignore[no-untyped-def]
    model = find_preset(preset)
    spec = WorkloadSpec(quant=QuantFormat(quant), engine=engine)

    def estimate_at(seq: int) -> MemoryEstimate:
        return estimate_memory(model, spec.model_copy(update={"seq": seq}))

    return model, estimate_at


def _entry(gpu_id: str):  # type: ignore[no-untyped-def]
    return next(entry for entry in load_catalog().entries if entry.id == gpu_id)


@settings(max_examples=60, deadline=None)
@given(
    preset=st.sampled_from(PRESETS),
    gpu_id=st.sampled_from(GPUS),
    quant=st.sampled_from(("q4_k_m", "q8_0", "bf16", "awq")),
    engine=st.sampled_from(ENGINES),
    count=st.sampled_from((1, 2, 4)),
)
@pytest.mark.reaches(boundary=6)
def test_the_longest_context_is_the_boundary_of_check_count(
    preset: str, gpu_id: str, quant: str, engine: Engine, count: int
) -> None:
    if quant.startswith("q") and engine is not Engine.LLAMA_CPP:
        engine = Engine.LLAMA_CPP  # GGUF formats are llama.cpp's
    model, estimate_at = _estimator(preset, quant, engine)
    assert model.shape is not None
    entry = _entry(gpu_id)
    usable = usable_for(entry, estimate_at(CONTEXT_STEP))
    context = largest_context(estimate_at, usable, count, model.shape.context)
    if context is None:
        assert not check_count(estimate_at(CONTEXT_STEP), count, usable)
        return
    assert CONTEXT_STEP <= context <= model.shape.context
    assert check_count(estimate_at(context), count, usable)
    if context < model.shape.context:
        assert context % CONTEXT_STEP == 0
        assert not check_count(estimate_at(context + CONTEXT_STEP), count, usable)
        reach.reached("boundary")


def test_the_fewest_gpus_first_then_the_longest_context_they_hold() -> None:
    _, estimate_at = _estimator("qwen2.5-32b", "bf16", Engine.VLLM)
    entry = _entry("rtx-4090")
    longest = fit_longest_context(entry, estimate_at, (1, 2, 4, 8), 131072)
    assert longest is not None
    # 65.5 GB of bf16 weights over ~23 GB usable each: not on two, on four
    report = fit_across([entry], estimate_at(longest.context), (1, 2, 4, 8))
    assert report.results[0].count == longest.count == 4
    assert (
        not check_count(
            estimate_at(longest.context + CONTEXT_STEP), 4, usable_for(entry, report.estimate)
        )
        or longest.context == 131072
    )


def test_nothing_fits_gives_none() -> None:
    _, estimate_at = _estimator("llama-3.1-70b", "bf16", Engine.VLLM)
    assert fit_longest_context(_entry("rtx-3060-12gb"), estimate_at, (1, 2), 131072) is None


def test_a_context_shorter_than_one_step_is_checked_as_is() -> None:
    _, estimate_at = _estimator("llama-3.1-8b", "q4_k_m", Engine.LLAMA_CPP)
    entry = _entry("h100-sxm5")
    usable = usable_for(entry, estimate_at(100))
    assert largest_context(estimate_at, usable, 1, 100) == 100
    assert largest_context(estimate_at, usable, 1, 0) is None


def test_a_model_declaring_more_context_than_an_estimate_takes_is_searched_up_to_the_cap() -> None:
    # Llama 4 Scout declares 10,485,760 tokens, above the 10,000,000 an estimate accepts:
    # the search stops at the cap instead of failing on the model's own context
    from gpudesk.memory.breakdown import MAX_SEQ

    model, estimate_at = _estimator("llama-4-scout-17b-16e", "q4_k_m", Engine.LLAMA_CPP)
    assert model.shape is not None and model.shape.context > MAX_SEQ
    found = fit_longest_context(_entry("h100-sxm5"), estimate_at, (1, 2, 4, 8), model.shape.context)
    assert found is not None
    assert CONTEXT_STEP <= found.context <= MAX_SEQ
