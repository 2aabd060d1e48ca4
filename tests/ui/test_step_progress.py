"""The worker progress bar the benchmark panel and Verify on this machine share."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from gpudesk.ui.step_progress import StepProgressBar


def test_busy_until_a_fraction_then_a_percentage_naming_the_step(qtbot: QtBot) -> None:
    bar = StepProgressBar()
    qtbot.addWidget(bar)
    bar.show()
    assert bar.isHidden() is False
    bar.finish()
    assert not bar.isVisible()
    bar.begin("starting numpy")
    assert bar.isVisible() and bar.maximum() == 0
    assert bar.format().startswith("starting numpy (") and "%p%" not in bar.format()
    bar.advance(0.0, "warm-up")  # no fraction yet: still busy
    assert bar.maximum() == 0 and bar.format().startswith("warm-up (")
    bar.advance(0.25, "FP32 GEMM")
    assert (bar.maximum(), bar.value()) == (1000, 250)
    assert bar.format().startswith("FP32 GEMM — %p% (")
    bar.finish()
    assert not bar.isVisible() and bar.maximum() == 1000
