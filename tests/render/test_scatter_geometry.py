"""The scatter's label geometry: segment-rectangle hits and candidate places."""

from __future__ import annotations

import math

import pytest
import reach
from hypothesis import given, strategies as st
from PySide6.QtCore import QPointF, QRectF

from gpudesk.render.scatter import label_candidates, segment_hits_rect

coordinate = st.floats(min_value=-50, max_value=150, allow_nan=False)


def _walk_hits(a: QPointF, b: QPointF, rect: QRectF) -> bool:
    steps = max(1, int(math.hypot(b.x() - a.x(), b.y() - a.y()) * 20))
    return any(
        rect.contains(
            QPointF(a.x() + (b.x() - a.x()) * i / steps, a.y() + (b.y() - a.y()) * i / steps)
        )
        for i in range(steps + 1)
    )


# The rectangle the property test uses is QRectF(20, 30, 40, 16): x 20..60, y 30..46.
# Coordinates anywhere on the canvas hit it in about 1 segment of 6; these also draw
# points near it and exactly on its edges (grazes), so hits and misses both come often.
x_coordinate = st.one_of(coordinate, st.floats(15, 65), st.sampled_from([20.0, 60.0]))
y_coordinate = st.one_of(coordinate, st.floats(25, 51), st.sampled_from([30.0, 46.0]))


@given(x_coordinate, y_coordinate, x_coordinate, y_coordinate)
@pytest.mark.reaches(hit=24, miss=26)
def test_segment_hits_rect_agrees_with_walking_the_segment(
    x0: float, y0: float, x1: float, y1: float
) -> None:
    rect = QRectF(20, 30, 40, 16)
    a, b = QPointF(x0, y0), QPointF(x1, y1)
    hit = segment_hits_rect(a, b, rect)
    if hit:  # a graze may fall between the walk's steps: a hair larger box catches it
        reach.reached("hit")
        assert _walk_hits(a, b, rect.adjusted(-0.2, -0.2, 0.2, 0.2))
    else:
        reach.reached("miss")
        assert not _walk_hits(a, b, rect)


def test_candidates_keep_clear_of_their_own_marker() -> None:
    own = QRectF(93, 93, 14, 14)
    rects = label_candidates(own, 60, 14, 2.0)
    assert len(rects) == 70
    assert len(label_candidates(own, 60, 14, 2.0, rings=2)) == 28
    for rect in rects:
        assert rect.width() == 60 and rect.height() == 14
        assert not rect.intersects(own)
