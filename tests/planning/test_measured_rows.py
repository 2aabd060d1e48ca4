"""The measured rows shown beside an estimate (app, Compare, PDF), and the runner's Cancel."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from gpudesk.bench.verify import VerifySettings, run_llama_cpp
from gpudesk.measurements.rows import cell_text, model_matches, rows_for
from gpudesk.measurements.store import Measurement, StoredMeasurement


@pytest.mark.parametrize(
    ("row_model", "expected"),
    [
        ("llama-3.1-8b", True),
        ("Meta-Llama-3.1-8B-Instruct-Q4_K_M", True),
        ("Llama 3.1 8B", True),
        ("llama-3.1-80b", False),  # 8 followed by a digit is another model
        ("llama 8B Q4_K - Medium", False),  # llama-bench's type names no version
        ("qwen2.5-7b", False),
        ("", False),
    ],
)
def test_model_names_match_the_preset(row_model: str, expected: bool) -> None:
    assert model_matches(row_model, "llama-3.1-8b", "Llama 3.1 8B") is expected


@given(st.text(max_size=200), st.text(max_size=80) | st.none(), st.text(max_size=80) | st.none())
def test_model_matching_never_raises(row: str, model_id: str | None, name: str | None) -> None:
    assert model_matches(row, model_id, name) in (True, False)


def _stored(row_id: int, **fields: Any) -> StoredMeasurement:
    data: dict[str, Any] = {
        "gpu_id": "rtx-4090",
        "engine": "llama.cpp",
        "model": "llama-3.1-8b",
        "quant": "q4_k_m",
        "mode": "decode",
        "seq_out": 128,
        "tokens_per_s": 120.0,
        "measured_at": "2026-11-01T10:00:00Z",
        "source": "/home/me/results/bench.json",
        "source_format": "llama-bench json",
    }
    data.update(fields)
    return StoredMeasurement(
        id=row_id, stored_at="2026-12-01T00:00:00+00:00", measurement=Measurement(**data)
    )


def test_rows_of_the_workload_come_first_newest_first_with_their_ratio() -> None:
    rows = [
        _stored(1),
        _stored(2, tokens_per_s=130.0, measured_at="2026-12-02T09:00:00Z"),
        _stored(3, model="qwen2.5-7b", tokens_per_s=150.0, estimate_tokens_per_s=100.0),
        _stored(4, gpu_id="h100-sxm5"),
        _stored(5, mode="prefill"),
        _stored(6, quant="q8_0"),
        _stored(7, count=2),
    ]
    found = rows_for(
        rows, gpu_id="rtx-4090", engine="llama.cpp", mode="decode", model_id="llama-3.1-8b",
        model_name="Llama 3.1 8B", quant="q4_k_m", estimate_tokens_per_s=100.0,
    )  # fmt: skip
    assert [item.stored.id for item in found] == [2, 1, 3, 6, 7]
    assert [item.same_workload for item in found] == [True, True, False, False, False]
    assert found[0].ratio == pytest.approx(1.3)
    assert found[0].note() == "measured 2026-12-02, llama-bench"
    assert found[0].source_text() == "llama-bench, bench.json"
    assert found[2].ratio is None and "×1.50 of its own estimate" in found[2].ratio_text()
    assert cell_text(found) == "130 (llama-bench, 2026-12-02; ×1.30 of est.) +1 more"
    assert cell_text(found[2:]) is None


def test_the_runner_stops_when_cancel_is_asked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    evals = []

    class Llama:
        def __init__(self, **kwargs: Any) -> None:
            pass

        def n_vocab(self) -> int:
            return 1000

        def eval(self, tokens: list[int]) -> None:
            evals.append(len(tokens))

        def reset(self) -> None:
            pass

    module = types.ModuleType("llama_cpp")
    module.Llama = Llama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    steps: list[tuple[float, str]] = []
    settings = VerifySettings(model_path=tmp_path / "m.gguf", n_prompt=10, n_gen=1000)
    result = run_llama_cpp(
        settings, should_stop=lambda: len(evals) >= 30, on_step=lambda f, m: steps.append((f, m))
    )
    assert result.stopped == "cancelled"
    assert result.n_gen_done == 28  # warm-up and prompt, then 28 tokens
    assert steps[0] == (0.0, "warming up")
    assert all(0 <= fraction <= 1 for fraction, _ in steps)
    assert any(message.startswith("decoding") for _, message in steps)
