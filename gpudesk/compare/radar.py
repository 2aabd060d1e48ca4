"""Radar (spider) chart geometry: values on 5-8 axes to points on the unit disc.

Conventions (what the chart item and the tests rely on):

* Axis ``i`` of ``n`` points at angle ``90° - i·360°/n``: the first axis at
  12 o'clock, the next ones clockwise. Coordinates are mathematical (y up);
  the painter flips y.
* Radius 1.0 is the outer ring and means "the reference maximum on this axis".
  The reference is the whole catalog's maximum or the selection's maximum
  (:class:`Reference`), computed by :func:`axis_ranges`.
* Linear scale: ``r = value / max``.
* Log scale: the decades from the smallest positive reference value ``lo`` to
  the maximum ``hi`` map linearly onto ``[inner, 1]``:
  ``r = inner + (1 - inner) · log10(value / lo) / log10(hi / lo)``. The inner
  radius (default 0.2) keeps the smallest value off the centre, where every
  polygon would collapse to a point; a value below ``lo`` is clamped to
  ``inner``. When ``lo == hi`` every value sits on the outer ring.
* A missing value gives ``None``: the chart shows a gap, never a zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.chart_values import (  # STAND_INS: re-exported for the painters
    STAND_INS as STAND_INS,
    chart_value,
    sets_catalog_scale,
    stand_in,
)

#: Figures the user can put on a radar axis, in menu order.
RADAR_AXES: tuple[str, ...] = (
    "memory_gb",
    "bandwidth_gbs",
    "fp32_tflops",
    # Its own axis: a TF32 measurement (or peak) is never shown on the FP32 axis.
    "tf32_tensor_tflops",
    "fp16_tensor_tflops",
    "bf16_tensor_tflops",
    "fp64_tflops",
    "fp32_tflops_per_w",
    "fp16_tensor_tflops_per_w",
    "fp16_tensor_tflops_per_kusd",
    "memory_gb_per_kusd",
)
#: The axes shown until the user picks others.
DEFAULT_RADAR_AXES: tuple[str, ...] = (
    "memory_gb",
    "bandwidth_gbs",
    "fp32_tflops",
    "fp16_tensor_tflops",
    "fp64_tflops",
    "fp16_tensor_tflops_per_kusd",
)
MIN_AXES = 5
MAX_AXES = 8
#: Radius of the smallest reference value on a log scale.
DEFAULT_LOG_INNER = 0.2


class Reference(StrEnum):
    """What radius 1.0 means on each axis."""

    CATALOG = "catalog"  # the largest value in the whole catalog
    SELECTION = "selection"  # the largest value among the compared GPUs


class Scale(StrEnum):
    LINEAR = "linear"
    LOG = "log"


@dataclass(frozen=True, slots=True)
class AxisRange:
    """The reference values of one axis: the maximum and the smallest positive value."""

    max_value: float
    min_positive: float


@dataclass(frozen=True, slots=True)
class Normalisation:
    """How values become radii: one range per axis (None: no data on that axis)."""

    ranges: tuple[AxisRange | None, ...]
    scale: Scale = Scale.LINEAR
    inner: float = DEFAULT_LOG_INNER
    #: On a log scale, the powers of ten every axis spans (0: each axis from its own
    #: smallest value to its maximum, rings at odd values). See :func:`decade_span`.
    decades: int = 0


@dataclass(frozen=True, slots=True)
class RadarPoint:
    """Where one value lands: radius in [0, 1], angle in radians, unit-disc x/y (y up)."""

    axis_index: int
    value: float
    radius: float
    angle_rad: float
    x: float
    y: float


def check_axes(axes: Sequence[str]) -> None:
    """Raise ValueError unless ``axes`` are 5-8 distinct known radar axes."""
    unknown = [key for key in axes if key not in METRICS]
    if unknown:
        raise ValueError(f"unknown radar axis: {', '.join(unknown)}")
    if len(set(axes)) != len(axes):
        raise ValueError("a radar axis is listed twice")
    if not MIN_AXES <= len(axes) <= MAX_AXES:
        raise ValueError(f"a radar chart needs {MIN_AXES} to {MAX_AXES} axes, got {len(axes)}")


def axis_angle(index: int, count: int) -> float:
    """Angle of axis ``index`` of ``count`` in radians: 12 o'clock first, then clockwise."""
    return math.pi / 2 - 2 * math.pi * index / count


def entry_values(entry: CatalogEntry, axes: Sequence[str]) -> list[float | None]:
    """An entry's value on each axis (None where the catalog has none), by the rule every
    chart follows (:func:`gpudesk.compare.chart_values.chart_value`): where it lacks the
    FP16 tensor figure but has BF16, BF16 stands in; :func:`stand_in_axes` says where."""
    return [chart_value(entry, key) for key in axes]


def stand_in_axes(entry: CatalogEntry, axes: Sequence[str]) -> list[int]:
    """The axes on which :func:`entry_values` drew the stand-in figure for ``entry``."""
    return [index for index, key in enumerate(axes) if stand_in(entry, key) is not None]


def reference_values(entry: CatalogEntry, axes: Sequence[str]) -> list[float | None]:
    """:func:`entry_values` as a catalog maximum sees them: a used module's bare price
    sets no per-price maximum (:func:`~gpudesk.compare.chart_values.sets_catalog_scale`)."""
    return [chart_value(entry, key) if sets_catalog_scale(entry, key) else None for key in axes]


def measured_values(values: Mapping[str, float], axes: Sequence[str]) -> list[float | None]:
    """A measured series on each axis: only measured figures, the rest None."""
    return [values.get(key) for key in axes]


def axis_ranges(
    series: Iterable[Sequence[float | None]], axis_count: int
) -> tuple[AxisRange | None, ...]:
    """Per-axis reference ranges over some series of values (catalog or selection)."""
    maxima: list[float | None] = [None] * axis_count
    minima: list[float | None] = [None] * axis_count
    for values in series:
        if len(values) != axis_count:
            raise ValueError(f"expected {axis_count} values, got {len(values)}")
        for index, value in enumerate(values):
            if value is None or not math.isfinite(value) or value <= 0:
                continue
            current_max = maxima[index]
            current_min = minima[index]
            maxima[index] = value if current_max is None else max(current_max, value)
            minima[index] = value if current_min is None else min(current_min, value)
    ranges: list[AxisRange | None] = []
    for high, low in zip(maxima, minima, strict=True):
        ranges.append(None if high is None or low is None else AxisRange(high, low))
    return tuple(ranges)


def normalisation_for(
    reference_entries: Iterable[CatalogEntry],
    axes: Sequence[str],
    scale: Scale = Scale.LINEAR,
    *,
    extra_series: Iterable[Sequence[float | None]] = (),
    inner: float = DEFAULT_LOG_INNER,
) -> Normalisation:
    """The normalisation whose outer ring is the maximum over ``reference_entries``.

    ``extra_series`` (a measured series) joins the reference, so a measured
    figure never lands outside the outer ring.
    """
    series = [entry_values(entry, axes) for entry in reference_entries]
    series.extend(list(values) for values in extra_series)
    ranges = axis_ranges(series, len(axes))
    decades = decade_span(ranges) if scale is Scale.LOG else 0
    return Normalisation(ranges, scale, inner, decades)


def decade_top(value: float) -> float:
    """The power of ten at or above ``value`` (100 for 81.7 and for 100)."""
    return float(10.0 ** math.ceil(math.log10(value) - 1e-9))


def decade_span(ranges: Sequence[AxisRange | None]) -> int:
    """The powers of ten a decade log radar shows on every axis (at least one).

    Each axis runs from ``decades`` powers of ten below the power of ten at or above
    its maximum up to that power, so every ring is a power of ten on every axis
    (10, 100, 1,000) and an axis' smallest value sits off the hub. With each axis
    from its own minimum instead, the minimum was drawn at the hub and the rings
    stood for odd values (10.3, 29.0, 81.7).
    """
    spans = [
        round(math.log10(decade_top(item.max_value)))
        - math.floor(math.log10(item.min_positive) + 1e-9)
        for item in ranges
        if item is not None and item.max_value > 0 and item.min_positive > 0
    ]
    return max([1, *spans])


def radius_for(
    value: float, axis_range: AxisRange, scale: Scale, inner: float, decades: int = 0
) -> float:
    """The radius in [0, 1] of ``value`` on an axis with ``axis_range``."""
    high = axis_range.max_value
    if scale is Scale.LINEAR:
        return min(1.0, max(0.0, value / high))
    low = axis_range.min_positive
    if value <= 0:
        return 0.0
    if decades > 0:
        bottom = decade_top(high) / 10.0**decades
        fraction = math.log10(value / bottom) / decades
        return min(1.0, inner + (1.0 - inner) * max(0.0, fraction))
    if high <= low:
        return 1.0
    fraction = math.log10(value / low) / math.log10(high / low)
    return min(1.0, inner + (1.0 - inner) * max(0.0, fraction))


def radar_points(
    values: Sequence[float | None], axes: Sequence[str], normalisation: Normalisation
) -> list[RadarPoint | None]:
    """Where each value lands on the chart; None for a missing value.

    Args:
        values: one value per axis, None where missing.
        axes: the axis keys (their count sets the angles).
        normalisation: per-axis reference ranges and the scale.

    Raises:
        ValueError: the three lengths disagree.
    """
    count = len(axes)
    if len(values) != count or len(normalisation.ranges) != count:
        raise ValueError(
            f"{len(values)} values and {len(normalisation.ranges)} ranges for {count} axes"
        )
    points: list[RadarPoint | None] = []
    for index, (value, axis_range) in enumerate(zip(values, normalisation.ranges, strict=True)):
        if value is None or axis_range is None or not math.isfinite(value):
            points.append(None)
            continue
        radius = radius_for(
            value, axis_range, normalisation.scale, normalisation.inner, normalisation.decades
        )
        angle = axis_angle(index, count)
        points.append(
            RadarPoint(
                axis_index=index,
                value=value,
                radius=radius,
                angle_rad=angle,
                x=radius * math.cos(angle),
                y=radius * math.sin(angle),
            )
        )
    return points


def ring_radii(
    scale: Scale, inner: float = DEFAULT_LOG_INNER, decades: int = 0
) -> tuple[float, ...]:
    """Radii of the grid rings: quarters on a linear scale; on log, one ring per power
    of ten with ``decades``, else inner..1 in quarters."""
    if scale is Scale.LINEAR:
        return (0.25, 0.5, 0.75, 1.0)
    if decades > 0:
        return tuple(inner + (1.0 - inner) * index / decades for index in range(decades + 1))
    step = (1.0 - inner) / 4
    return tuple(inner + step * index for index in range(5))


def ring_value(
    axis_range: AxisRange, scale: Scale, inner: float, radius: float, decades: int = 0
) -> float:
    """The value a ring at ``radius`` stands for on an axis: the inverse of :func:`radius_for`."""
    high = axis_range.max_value
    if scale is Scale.LINEAR:
        return radius * high
    if decades > 0 and inner < 1.0:
        fraction = max(0.0, (radius - inner) / (1.0 - inner))
        return float(decade_top(high) / 10.0 ** (decades * (1.0 - fraction)))
    low = axis_range.min_positive
    if high <= low or inner >= 1.0:
        return high
    fraction = max(0.0, (radius - inner) / (1.0 - inner))
    return float(low * (high / low) ** fraction)


def gap_crossing(first_radius: float, second_radius: float, count: int) -> float:
    """Where the straight edge between two neighbouring vertices crosses the gap's bisector.

    The vertices sit at radii ``first_radius`` and ``second_radius`` on
    neighbouring spokes of a ``count``-axis chart, ``2π/count`` apart; the edge
    meets the bisector at ``2·r1·r2·cos(π/count) / (r1 + r2)``.
    """
    total = first_radius + second_radius
    if total <= 0:
        return 0.0
    return 2.0 * first_radius * second_radius * math.cos(math.pi / count) / total


def gaps_by_clearance(series_radii: Sequence[Sequence[float | None]], count: int) -> list[int]:
    """Gaps (between spokes ``i`` and ``i + 1``) ordered from the least to the most covered.

    A gap's cover is how far the polygons' edges reach along its bisector
    (:func:`gap_crossing`); ring labels go where the data leaves the most
    room. A missing value counts as the centre (only a thin dashed bridge
    crosses there). Ties keep clockwise order from 12 o'clock.
    """
    if count < 2:
        return list(range(count))
    coverage = []
    for index in range(count):
        following = (index + 1) % count
        reach = 0.0
        for radii in series_radii:
            reach = max(reach, gap_crossing(radii[index] or 0.0, radii[following] or 0.0, count))
        coverage.append(reach)
    return sorted(range(count), key=lambda index: (round(coverage[index], 9), index))


def missing_axes(points: Sequence[RadarPoint | None]) -> list[int]:
    """Indices of the axes a series has no value on."""
    return [index for index, point in enumerate(points) if point is None]


def outline_segments(points: Sequence[RadarPoint | None]) -> list[tuple[int, int]]:
    """Pairs of neighbouring axes that both have a value: the solid outline.

    The closing segment (last axis to first) is included when both exist.
    With fewer than two axes nothing is drawn.
    """
    count = len(points)
    if count < 2:
        return []
    segments = []
    for index in range(count):
        following = (index + 1) % count
        if points[index] is not None and points[following] is not None:
            segments.append((index, following))
    return segments


def gap_bridges(points: Sequence[RadarPoint | None]) -> list[tuple[int, int]]:
    """Pairs of present axes with only missing axes between them: drawn dashed.

    These close the polygon across a gap, so the shape stays readable while
    the dashed line says "no value here" rather than "zero".
    """
    present = [index for index, point in enumerate(points) if point is not None]
    if len(present) < 2 or len(present) == len(points):
        return []
    bridges: list[tuple[int, int]] = []
    count = len(points)
    for position, index in enumerate(present):
        following = present[(position + 1) % len(present)]
        # with two present axes both ways round are the same line: keep one
        if (index + 1) % count != following and (following, index) not in bridges:
            bridges.append((index, following))
    return bridges


@dataclass(frozen=True, slots=True)
class NormalisationChoice:
    """The user's normalisation: which maximum is the outer ring, and the scale.

    The default rings the compared GPUs' own maximum: against the whole
    catalog's (a B200 or MI325X on most axes) the polygons of most selections
    shrink to the centre, where their differences cannot be read.
    """

    reference: Reference = Reference.SELECTION
    scale: Scale = Scale.LINEAR

    def describe(self) -> str:
        """One line for a chart caption."""
        where = "whole catalog" if self.reference is Reference.CATALOG else "selection"
        if self.scale is Scale.LOG:
            # The outer ring is the power of ten at or above the maximum, not the maximum.
            return (
                f"log scale · ×10 per ring, outer ring the power of ten above the {where} maximum"
            )
        return f"{self.scale.value} scale · outer ring = {where} maximum"


def choose_normalisation(
    choice: NormalisationChoice,
    axes: Sequence[str],
    *,
    catalog: Iterable[CatalogEntry],
    selection: Iterable[CatalogEntry],
    extra_series: Iterable[Sequence[float | None]] = (),
) -> Normalisation:
    """The :class:`Normalisation` for ``choice``: reference taken from catalog or selection.

    The selection always joins the catalog reference, so a GPU compared from a
    user folder outside the loaded catalog never lands outside the outer ring.
    """
    selected = list(selection)
    if choice.reference is Reference.SELECTION:
        return normalisation_for(selected, axes, choice.scale, extra_series=extra_series)
    chosen = {entry.id for entry in selected}
    # The rest of the catalog as a maximum sees it; the compared GPUs as they are.
    others = [reference_values(entry, axes) for entry in catalog if entry.id not in chosen]
    return normalisation_for(
        selected, axes, choice.scale, extra_series=[*others, *map(list, extra_series)]
    )
