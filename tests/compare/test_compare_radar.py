"""Radar geometry: angles, outer ring, log scale, missing values, gaps."""

from __future__ import annotations

import itertools
import math

import pytest
from compare_entries import gpu
from hypothesis import given, strategies as st

from gpudesk.compare.radar import (
    DEFAULT_RADAR_AXES,
    RADAR_AXES,
    AxisRange,
    Normalisation,
    Scale,
    axis_angle,
    axis_ranges,
    check_axes,
    entry_values,
    gap_bridges,
    gap_crossing,
    gaps_by_clearance,
    normalisation_for,
    outline_segments,
    radar_points,
    radius_for,
    ring_radii,
    ring_value,
)

AXES5 = ("memory_gb", "bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops", "fp64_tflops")


def linear(*maxima: float) -> Normalisation:
    return Normalisation(tuple(AxisRange(m, m / 100) for m in maxima), Scale.LINEAR)


def test_first_axis_at_twelve_then_clockwise() -> None:
    assert axis_angle(0, 4) == pytest.approx(math.pi / 2)
    # clockwise: the second of four axes points to 3 o'clock (x > 0, y = 0)
    assert math.cos(axis_angle(1, 4)) == pytest.approx(1.0)
    assert math.sin(axis_angle(1, 4)) == pytest.approx(0.0, abs=1e-12)
    assert math.cos(axis_angle(3, 4)) == pytest.approx(-1.0)


def test_value_at_maximum_lands_on_outer_ring() -> None:
    points = radar_points([80, 2000, 60, 1000, 30], AXES5, linear(80, 2000, 60, 1000, 30))
    for point in points:
        assert point is not None
        assert point.radius == pytest.approx(1.0)
        assert math.hypot(point.x, point.y) == pytest.approx(1.0)
    top = points[0]
    assert top is not None
    assert (top.x, top.y) == pytest.approx((0.0, 1.0))


def test_linear_radius_is_fraction_of_max() -> None:
    points = radar_points([20, 500, 15, 250, 3], AXES5, linear(80, 2000, 60, 1000, 30))
    radii = [point.radius for point in points if point is not None]
    assert radii == pytest.approx([0.25, 0.25, 0.25, 0.25, 0.1])
    second = points[1]
    assert second is not None
    angle = 2 * math.pi / 5
    assert (second.x, second.y) == pytest.approx((0.25 * math.sin(angle), 0.25 * math.cos(angle)))


def test_log_scale_maps_decades_onto_inner_to_one() -> None:
    norm = Normalisation((AxisRange(100.0, 0.1),) * 5, Scale.LOG, inner=0.2)
    points = radar_points([100.0, 0.1, 10.0, 1.0, 0.01], AXES5, norm)
    radii = [point.radius for point in points if point is not None]
    # three decades from 0.1 to 100 over [0.2, 1]: each decade is 0.8 / 3
    assert radii == pytest.approx([1.0, 0.2, 0.2 + 2 * 0.8 / 3, 0.2 + 0.8 / 3, 0.2])


def test_log_single_value_range_is_outer_ring() -> None:
    norm = Normalisation((AxisRange(5.0, 5.0),) * 5, Scale.LOG)
    points = radar_points([5.0] * 5, AXES5, norm)
    assert all(p is not None and p.radius == pytest.approx(1.0) for p in points)


def test_missing_value_is_none_never_zero() -> None:
    points = radar_points([20, None, 15, 250, None], AXES5, linear(80, 2000, 60, 1000, 30))
    assert points[1] is None and points[4] is None
    assert points[0] is not None and points[0].radius > 0


def test_axis_without_reference_data_is_none() -> None:
    norm = Normalisation((AxisRange(1, 1), None, AxisRange(1, 1), AxisRange(1, 1), AxisRange(1, 1)))
    assert radar_points([1, 1, 1, 1, 1], AXES5, norm)[1] is None


def test_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError):
        radar_points([1, 2, 3], AXES5, linear(1, 1, 1, 1, 1))


def test_catalog_vs_selection_reference() -> None:
    catalog = [
        gpu("a", memory_gb=24, fp64_tflops=1.0),
        gpu("b", memory_gb=48, fp64_tflops=0.5),
        gpu("c", memory_gb=192, fp64_tflops=80.0),
    ]
    selection = catalog[:2]
    values = entry_values(catalog[1], AXES5)
    by_catalog = radar_points(values, AXES5, normalisation_for(catalog, AXES5))
    by_selection = radar_points(values, AXES5, normalisation_for(selection, AXES5))
    assert by_catalog[0] is not None and by_selection[0] is not None
    assert by_catalog[0].radius == pytest.approx(48 / 192)
    assert by_selection[0].radius == pytest.approx(1.0)
    assert by_selection[4] is not None and by_selection[4].radius == pytest.approx(0.5)
    # FP16 tensor is missing everywhere: no range, no point
    assert by_catalog[3] is None


def test_measured_series_joins_the_reference() -> None:
    norm = normalisation_for(
        [gpu("a", fp32_tflops=20.0)], AXES5, extra_series=[[None, None, 25.0, None, None]]
    )
    assert norm.ranges[2] == AxisRange(25.0, 20.0)


def test_axis_ranges_ignore_missing() -> None:
    ranges = axis_ranges([[1.0, None], [3.0, None], [2.0, None]], 2)
    assert ranges == (AxisRange(3.0, 1.0), None)


def test_outline_and_gap_bridges() -> None:
    norm = linear(1, 1, 1, 1, 1, 1)
    axes6 = DEFAULT_RADAR_AXES
    full = radar_points([0.5] * 6, axes6, norm)
    assert outline_segments(full) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)]
    assert gap_bridges(full) == []
    holed = radar_points([0.5, 0.5, None, 0.5, None, 0.5], axes6, norm)
    assert outline_segments(holed) == [(0, 1), (5, 0)]
    assert gap_bridges(holed) == [(1, 3), (3, 5)]
    two = radar_points([0.5, None, None, 0.5, None, None], axes6, norm)
    assert outline_segments(two) == []
    assert gap_bridges(two) == [(0, 3)]


def test_ring_radii() -> None:
    assert ring_radii(Scale.LINEAR) == (0.25, 0.5, 0.75, 1.0)
    assert ring_radii(Scale.LOG, 0.2) == pytest.approx((0.2, 0.4, 0.6, 0.8, 1.0))


@given(
    low=st.floats(0.001, 1e4),
    ratio=st.floats(1.0, 1e4),
    radius=st.floats(0.2, 1.0),
    scale=st.sampled_from(list(Scale)),
)
def test_ring_value_is_the_value_drawn_on_that_ring(
    low: float, ratio: float, radius: float, scale: Scale
) -> None:
    axis_range = AxisRange(low * ratio, low)
    value = ring_value(axis_range, scale, 0.2, radius)
    assert low * (0.2 if scale is Scale.LINEAR else 1.0) * 0.999 <= value
    assert value <= axis_range.max_value * 1.000001
    if ratio > 1.01:  # a one-value range puts everything on the outer ring
        assert radius_for(value, axis_range, scale, 0.2) == pytest.approx(radius, abs=1e-6)


def test_ring_values_on_a_log_axis_step_by_equal_ratios() -> None:
    axis_range = AxisRange(80.0, 24.0)
    values = [ring_value(axis_range, Scale.LOG, 0.2, r) for r in ring_radii(Scale.LOG, 0.2)]
    assert values[0] == pytest.approx(24.0) and values[-1] == pytest.approx(80.0)
    ratios = [b / a for a, b in itertools.pairwise(values)]
    assert ratios == pytest.approx([(80 / 24) ** 0.25] * 4)


def test_gap_crossing_and_the_clearest_gap() -> None:
    # equal radii: the edge's midpoint, r·cos(π/n); one vertex at the centre: the centre
    assert gap_crossing(1.0, 1.0, 6) == pytest.approx(math.cos(math.pi / 6))
    assert gap_crossing(0.0, 1.0, 6) == 0.0
    # everything full except axis 3, whose two gaps (2-3 and 3-4) come first
    full = [1.0, 1.0, 1.0, 0.1, 1.0, 1.0]
    other = [0.9, 0.9, 0.9, None, 0.9, 0.9]
    order = gaps_by_clearance([full, other], 6)
    assert set(order[:2]) == {2, 3}
    assert order[2:] == [0, 1, 4, 5]


def test_check_axes() -> None:
    check_axes(DEFAULT_RADAR_AXES)
    assert len(DEFAULT_RADAR_AXES) == 6
    assert set(DEFAULT_RADAR_AXES) <= set(RADAR_AXES)
    with pytest.raises(ValueError, match="5 to 8"):
        check_axes(AXES5[:4])
    with pytest.raises(ValueError, match="twice"):
        check_axes((*AXES5[:4], "memory_gb"))
    with pytest.raises(ValueError, match="unknown"):
        check_axes((*AXES5[:4], "speed"))


def test_tf32_has_its_own_axis_apart_from_fp32() -> None:
    from gpudesk.bench.peaks import peak_field
    from gpudesk.compare.radar import RADAR_AXES

    assert "tf32_tensor_tflops" in RADAR_AXES and "fp32_tflops" in RADAR_AXES
    # a measured TF32 row lands on the TF32 axis, an FP32 row on the FP32 one
    assert peak_field("gemm", "tf32") == "tf32_tensor_tflops"
    assert peak_field("gemm", "fp32") == "fp32_tflops"


def test_every_radar_axis_names_its_precision_and_unit() -> None:
    """A throughput axis says which precision (and "dense" for tensor figures) and its unit."""
    from gpudesk.catalog.metrics import METRICS

    for key in RADAR_AXES:
        metric = METRICS[key]
        assert metric.unit, key
        if "tflops" in key:
            assert "TFLOPS" in metric.unit, key
            assert any(p in metric.label for p in ("FP32", "FP16", "BF16", "TF32", "FP64")), key
            if "tensor" in key:
                assert "dense" in metric.label, key
        if key.endswith("_per_kusd"):
            assert metric.unit.endswith("per 1k USD"), key


def test_a_bf16_only_accelerator_is_drawn_with_its_bf16_figure_on_fp16_axes() -> None:
    """Gaudi 3 lists BF16 only: the default FP16 tensor axes left it with gaps."""
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.compare.radar import DEFAULT_RADAR_AXES, entry_values, stand_in_axes

    catalog = load_catalog([], include_user=False)
    gaudi = catalog.by_id("gaudi-3")
    h100 = catalog.by_id("h100-sxm5")
    v100 = catalog.by_id("v100-sxm2-32gb")
    assert gaudi is not None and h100 is not None and v100 is not None
    assert gaudi.fp16_tensor_tflops is None and gaudi.bf16_tensor_tflops
    axes = list(DEFAULT_RADAR_AXES)
    values = entry_values(gaudi, axes)
    fp16 = axes.index("fp16_tensor_tflops")
    per_price = axes.index("fp16_tensor_tflops_per_kusd")
    assert values[fp16] == gaudi.bf16_tensor_tflops
    assert gaudi.price_usd and values[per_price] == pytest.approx(
        gaudi.bf16_tensor_tflops / (gaudi.price_usd / 1000)
    )
    assert stand_in_axes(gaudi, axes) == [fp16, per_price]
    assert stand_in_axes(h100, axes) == []  # its own FP16 figure
    # no BF16 units (V100): its BF16 axis stays a gap, never its FP16 figure
    assert entry_values(v100, ["bf16_tensor_tflops"]) == [None]


def test_the_log_radar_rings_powers_of_ten_and_keeps_the_minimum_off_the_hub() -> None:
    """Each axis from its own minimum drew the minimum at the hub, rings at 10.3, 29.0."""
    from gpudesk.compare.radar import decade_span, decade_top

    assert decade_top(81.7) == 100 and decade_top(100) == 100 and decade_top(0.3) == 1
    ranges = (AxisRange(192.0, 24.0), AxisRange(81.7, 1.29), AxisRange(5300.0, 864.0))
    assert decade_span(ranges) == 2  # 1..100 for FP64; 10..1,000 for memory
    norm = Normalisation(ranges, Scale.LOG, inner=0.2, decades=decade_span(ranges))
    points = radar_points([24.0, 1.29, 864.0], ["memory_gb", "fp64_tflops", "bandwidth_gbs"], norm)
    assert all(point is not None and point.radius > 0.2 + 0.02 for point in points)
    radii = ring_radii(Scale.LOG, 0.2, 2)
    assert radii == pytest.approx((0.2, 0.6, 1.0))
    assert [ring_value(ranges[1], Scale.LOG, 0.2, r, 2) for r in radii] == pytest.approx(
        [1.0, 10.0, 100.0]
    )
    for value in (1.29, 10.0, 81.7):
        radius = radius_for(value, ranges[1], Scale.LOG, 0.2, 2)
        assert ring_value(ranges[1], Scale.LOG, 0.2, radius, 2) == pytest.approx(value)
