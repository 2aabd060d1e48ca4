"""Which preset a llama-bench or vLLM file's model is, on the words people's files use.

Each row of VARIANTS is a ``model`` cell (llama.cpp's ``model_type``) and its ``params``
cell copied from a llama-bench table posted in public, with where it was posted:

- PR4766: https://github.com/ggml-org/llama.cpp/pull/4766 (comment of 2024-01-10,
  CodeLlama 7B on an RTX 4090, CUDA; the old "pp 512" test column)
- PR16991: https://github.com/ggml-org/llama.cpp/pull/16991 (RTX PRO 6000 Blackwell)
- PR15616: https://github.com/ggml-org/llama.cpp/pull/15616 (2025-08-27, M2 Ultra; that
  table has no params column)
- GG54: https://github.com/geerlingguy/ai-benchmarks/issues/54 (2026-09-22, CPU)
- GG34: https://github.com/geerlingguy/ai-benchmarks/issues/34 (comment of 2025-11-26,
  which quotes the model cell in prose)
- PR21629: https://github.com/ggml-org/llama.cpp/pull/21629 (RTX 2070, Q1_0)
- IK345: https://github.com/ikawrakow/ik_llama.cpp/issues/345 (size printed as "?B")
- PR19848: https://github.com/ggml-org/llama.cpp/pull/19848 (2026-02-24, LFM2 on CPU)
- CANN: tests/planning/measurement_files/llama-bench-cann-ascend.json (its
  ``model_n_params``; see test_measurement_import.py)
"""

from __future__ import annotations

import pytest

from gpudesk.measurements.models import parameter_count, place_model, quant_from_type

VARIANTS = [
    # model cell, params cell, preset it is (None: not placed), weight format
    ("llama 7B F16", "6.74 B", "llama-2-7b", "fp16", "PR4766"),
    ("llama 7B Q8_0", "6.74 B", "llama-2-7b", "q8_0", "PR4766"),
    ("llama 7B Q4_0", "6.74 B", "llama-2-7b", "q4_0", "PR4766"),
    ("gpt-oss 20B MXFP4 MoE", "20.91 B", "gpt-oss-20b", "mxfp4", "PR16991"),
    ("qwen3moe 30B.A3B Q8_0", None, "qwen3-30b-a3b", "q8_0", "PR15616"),
    # Qwen 2.5 Coder 7B: "qwen2 7B" does not say Qwen2 or Qwen2.5, and no count is given
    ("qwen2 7B Q8_0", None, None, "q8_0", "PR15616"),
    ("llama 1B Q4_K - Medium", "1.10 B", "tinyllama-1.1b", "q4_k_m", "GG54"),
    # Llama 3.2 3B: "llama 3B" is no preset's name; its 3.21 B parameters place it
    ("llama 3B Q4_K - Medium", "3.21 B", "llama-3.2-3b", "q4_k_m", "GG54"),
    ("gpt-oss 120B Q4_K - Medium", None, "gpt-oss-120b", "q4_k_m", "GG34"),
    # Q1_0 is a weight format GPUDesk does not estimate
    ("qwen3 8B Q1_0", "8.19 B", "qwen3-8b", None, "PR21629"),
    ("llama ?B Q4_K - Medium", "3.61 B", None, "q4_k_m", "IK345"),
    ("lfm2moe 24B.A2B Q4_0", "23.84 B", None, "q4_0", "PR19848"),
]


@pytest.mark.parametrize(("cell", "params", "preset", "quant", "source"), VARIANTS)
def test_posted_model_cells_are_placed_or_not(
    cell: str, params: str | None, preset: str | None, quant: str | None, source: str
) -> None:
    count = parameter_count(params) if params else None
    placed = place_model([], cell, count)
    assert (placed.preset_id if placed else None) == preset, source
    assert quant_from_type(cell) == quant, source


def test_the_exact_count_of_llama_bench_json_places_a_size_label_that_is_off() -> None:
    # llama.cpp calls Qwen2.5 0.5B "qwen2 1B"; its model_n_params is exact
    placed = place_model([], "qwen2 1B F16", (494_032_768, 0.0))
    assert placed is not None
    assert placed.preset_id == "qwen2.5-0.5b"
    assert "by its parameter count" in placed.how
    assert place_model([], "qwen2 1B F16", (600_000_000, 0.0)) is None


@pytest.mark.parametrize(
    ("name", "preset"),
    [
        ("Meta-Llama-3.1-8B-Instruct-Q4_K_M", "llama-3.1-8b"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("Llama-3.3-70B-Instruct-Q4_K_M", "llama-3.3-70b"),
        ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"),
        ("Qwen2.5-7B-Instruct-Q8_0", "qwen2.5-7b"),
        ("tinyllama-1.1b-1t-openorca.Q4_K_M", "tinyllama-1.1b"),
        ("qwen2.5:0.5b-instruct-fp16", "qwen2.5-0.5b"),
        ("Phi-4-mini-instruct-Q4_K_M", "phi-4-mini"),
        ("Llama-3.2-3B-Instruct-Q4_K_M", "llama-3.2-3b"),
        ("Llama-3.2-11B-Vision-Instruct", None),
        ("my-finetune", None),
    ],
)
def test_names_place_the_longest_preset_they_hold(name: str, preset: str | None) -> None:
    placed = place_model([name])
    assert (placed.preset_id if placed else None) == preset


def test_a_parenthesised_note_after_the_weight_format_is_ignored() -> None:
    assert quant_from_type("llama 7B Q4_0 (guessed)") == "q4_0"
    assert parameter_count("494.03 M") == pytest.approx((494.03e6, 5e3))


def test_a_digit_straight_after_the_preset_is_another_model() -> None:
    assert place_model(["Llama-3.1-80B"]) is None
    assert place_model(["qwen2.5-7b0"]) is None
