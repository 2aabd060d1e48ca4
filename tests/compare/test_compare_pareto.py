"""Pareto frontier: hand-checked small sets, directions, ties, missing values."""

from __future__ import annotations

from gpudesk.compare.pareto import ScatterPoint, pareto_frontier


def pts(*items: tuple[str, float | None, float | None]) -> list[ScatterPoint]:
    return [ScatterPoint(*item) for item in items]


def test_cheaper_and_faster() -> None:
    # price (lower better) vs TFLOPS (higher better)
    points = pts(
        ("budget", 500, 40),
        ("mid", 1600, 165),
        ("worse-mid", 2000, 150),  # dearer and slower than mid
        ("pricey", 30000, 835),
        ("dud", 35000, 400),  # dominated by pricey
        ("a100", 15000, 312),
    )
    assert pareto_frontier(points, True, True) == ["budget", "mid", "a100", "pricey"]


def test_single_point_and_empty() -> None:
    assert pareto_frontier(pts(("only", 1, 1))) == ["only"]
    assert pareto_frontier([]) == []


def test_missing_values_are_excluded() -> None:
    points = pts(("a", 100, 10), ("b", None, 1000), ("c", 50, None), ("d", 200, 20))
    assert pareto_frontier(points) == ["a", "d"]


def test_exact_duplicates_are_both_on_the_frontier() -> None:
    points = pts(("x1", 100, 10), ("x2", 100, 10), ("y", 200, 30))
    assert pareto_frontier(points) == ["x1", "x2", "y"]


def test_equal_on_one_axis_worse_on_other_is_dominated() -> None:
    # same price, slower: dominated; same speed, dearer: dominated
    points = pts(("best", 100, 50), ("same-price", 100, 40), ("same-speed", 150, 50))
    assert pareto_frontier(points) == ["best"]


def test_duplicate_of_dominated_point_stays_off() -> None:
    points = pts(("a", 100, 50), ("b", 120, 40), ("b2", 120, 40))
    assert pareto_frontier(points) == ["a"]


def test_other_directions() -> None:
    points = pts(("p", 1, 1), ("q", 2, 2), ("r", 3, 1))
    # both higher-is-better: q and r (r has the largest x, q the largest y)
    assert pareto_frontier(points, x_lower_is_better=False, y_higher_is_better=True) == ["q", "r"]
    # both lower-is-better: p only
    assert pareto_frontier(points, x_lower_is_better=True, y_higher_is_better=False) == ["p"]


def test_sorted_along_x() -> None:
    points = pts(("c", 300, 30), ("a", 100, 10), ("b", 200, 20))
    assert pareto_frontier(points) == ["a", "b", "c"]
