"""Bar chart order: best first by the metric's direction, missing last."""

from __future__ import annotations

from gpudesk.compare.bars import BarValue, bar_order


def test_bar_order_best_first_missing_last() -> None:
    bars = [BarValue("a", "A", 2.0), BarValue("b", "B", None), BarValue("c", "C", 5.0)]
    assert [bar.id for bar in bar_order(bars, True)] == ["c", "a", "b"]
    assert [bar.id for bar in bar_order(bars, False)] == ["a", "c", "b"]  # price: cheapest first
    assert [bar.id for bar in bar_order(bars, None)] == ["c", "a", "b"]
    tied = [BarValue("x", "X", 1.0), BarValue("y", "Y", 1.0)]
    assert [bar.id for bar in bar_order(tied, True)] == ["x", "y"]
