"""The line above the How fast? table counts GPU types in grammatical English."""

from __future__ import annotations

import pytest

from gpudesk.speed.estimate import Mode, SpeedRequest
from gpudesk.ui.plan.speed_table import summary_html


@pytest.mark.parametrize(
    ("count", "not_holding", "words"),
    [
        (3, 1, "3 GPU types hold it, 1 does not."),
        (1, 2, "1 GPU type holds it, 2 do not."),
        (4, 0, "4 GPU types hold it."),
    ],
)
def test_the_summary_agrees_in_number(count: int, not_holding: int, words: str) -> None:
    assert summary_html(SpeedRequest(mode=Mode.SERVE), count, not_holding).endswith(words)
