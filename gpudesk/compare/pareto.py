"""The Pareto frontier of a scatter: GPUs that no other GPU beats on both axes.

For price (x, lower is better) against dense FP16 tensor TFLOPS (y, higher is
better) the frontier is every GPU for which no other GPU is both cheaper (or
as cheap) and faster (or as fast), with at least one of the two strictly.

Ties: two GPUs with exactly equal x and y do not dominate each other, so both
are on the frontier when one of them is. A GPU that equals another on one axis
and is worse on the other is dominated. Points with a missing or non-finite
value on either axis are left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScatterPoint:
    """One GPU on a scatter: its id and its two values (None where missing)."""

    id: str
    x: float | None
    y: float | None


def _usable(point: ScatterPoint) -> bool:
    return (
        point.x is not None
        and point.y is not None
        and math.isfinite(point.x)
        and math.isfinite(point.y)
    )


def pareto_frontier(
    points: Sequence[ScatterPoint],
    x_lower_is_better: bool = True,
    y_higher_is_better: bool = True,
) -> list[str]:
    """Ids of the non-dominated points, sorted by x ascending (then y, then id).

    Args:
        points: the candidates; points missing a value are excluded.
        x_lower_is_better: True when a smaller x is better (price, power).
        y_higher_is_better: True when a larger y is better (throughput).
    """
    usable = [point for point in points if _usable(point)]
    x_sign = -1.0 if x_lower_is_better else 1.0
    y_sign = 1.0 if y_higher_is_better else -1.0
    # "goodness" on both axes: larger is better after the sign flip
    scored = [(x_sign * float(p.x or 0.0), y_sign * float(p.y or 0.0), p) for p in usable]
    # Sort best-x first, then best-y; a point is on the frontier when its y
    # beats every point seen before it, or ties the best-so-far point exactly.
    scored.sort(key=lambda item: (-item[0], -item[1], item[2].id))
    frontier: list[ScatterPoint] = []
    best_y = -math.inf
    best_x_at_best_y = math.inf
    for good_x, good_y, point in scored:
        if good_y > best_y:
            frontier.append(point)
            best_y = good_y
            best_x_at_best_y = good_x
        elif good_y == best_y and good_x == best_x_at_best_y:
            frontier.append(point)  # an exact duplicate of a frontier point
    frontier.sort(key=lambda p: (float(p.x or 0.0), float(p.y or 0.0), p.id))
    return [point.id for point in frontier]
