"""Ranking under load says which GPU it is at on a terminal, and nothing elsewhere."""

from __future__ import annotations

import io

import pytest

from gpudesk.cli.speed_cmd import RankProgress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_rewrites_one_line_and_clears_it(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    progress = RankProgress(enabled=True)
    progress.gpu(0, 3, "NVIDIA H100 SXM5 80GB")
    progress.gpu(2, 3, "AMD Instinct MI300X")
    progress.close()
    text = terminal.getvalue()
    assert "ranking under load: NVIDIA H100 SXM5 80GB (1 of 3)" in text
    assert "AMD Instinct MI300X (3 of 3)" in text
    assert text.count("\r\x1b[K") == 3 and "\n" not in text
    assert text.endswith("\r\x1b[K")  # the line is gone before the table prints


def test_progress_is_silent_when_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    progress = RankProgress(enabled=False)
    progress.gpu(0, 1, "x")
    progress.close()
    assert terminal.getvalue() == ""


def test_the_ranking_tells_each_gpu_before_estimating_it() -> None:
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.speed.estimate import KvFormat, Mode, SpeedRequest, model_costs
    from gpudesk.speed.planner import rank_catalog
    from gpudesk.speed.shapes import shape_for
    from gpudesk.workload.quant import QuantFormat

    by_id = {entry.id: entry for entry in load_catalog().entries}
    entries = [by_id[gpu] for gpu in ("h100-sxm5", "l40s", "rtx-4090")]
    told: list[tuple[int, int, str]] = []
    rank_catalog(
        entries,
        model_costs(shape_for("llama-3.1-8b"), QuantFormat.BF16, KvFormat.FP16),
        SpeedRequest(mode=Mode.SERVE, seq_in=256, seq_out=64, num_prompts=20),
        on_gpu=lambda done, total, name: told.append((done, total, name)),
    )
    assert told == [(index, 3, entry.name) for index, entry in enumerate(entries)]
