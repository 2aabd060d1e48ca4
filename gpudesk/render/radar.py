"""The spec radar chart: one pyqtgraph graphics item painting a cached ``QPicture``.

Geometry (where each value lands) comes from :func:`gpudesk.compare.radar.radar_points`;
this item lays out rings, spokes, axis labels and the legend in pixels and
paints them. It lives in a plain :class:`RadarWidget` (no ViewBox), so text is
drawn at real pixel sizes and the same item renders into PNG, SVG or a PDF
painter unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPicture,
    QPolygonF,
)
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget

from gpudesk.catalog.metrics import METRICS
from gpudesk.catalog.names import short_name
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.radar import (
    DEFAULT_LOG_INNER,
    DEFAULT_RADAR_AXES,
    STAND_INS,
    AxisRange,
    Normalisation,
    NormalisationChoice,
    RadarPoint,
    Scale,
    axis_angle,
    choose_normalisation,
    entry_values,
    gap_bridges,
    gaps_by_clearance,
    measured_values,
    missing_axes,
    outline_segments,
    radar_points,
    ring_radii,
    ring_value,
    stand_in_axes,
)
from gpudesk.measured import MeasuredSeries
from gpudesk.render.colors import gpu_color_slots
from gpudesk.render.style import (
    LIGHT,
    ChartStyle,
    chart_font,
    chart_series_color,
    measured_color,
)
from gpudesk.render.text import plain_tooltip

MEASURED_SERIES_ID = "measured"
LABEL_PX = 13
LEGEND_PX = 13
CAPTION_PX = 12
RING_LABEL_PX = 10
#: Clearance around a polygon's outline that a ring label keeps.
RING_LABEL_CLEARANCE_PX = 3.0
#: Where along a ring's edge across the chosen gap a ring label may sit, best first.
RING_LABEL_POSITIONS = (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8)
MARGIN_PX = 10.0
LABEL_GAP_PX = 8.0
HOVER_RADIUS_PX = 12.0
#: More compared GPUs than this are drawn as outlines only.
MAX_FILLED_SERIES = 3
#: Side labels wider than this wrap when that makes the chart clearly bigger.
SIDE_LABEL_WRAP_PX = 118.0


@dataclass(frozen=True, slots=True)
class RadarSeries:
    """One polygon: a compared GPU or the measured series."""

    id: str
    name: str
    color: QColor
    values: tuple[float | None, ...]
    measured: bool = False
    #: axes drawn with a stand-in figure (BF16 where FP16 tensor is not listed)
    stand_ins: tuple[int, ...] = ()


def build_radar_series(
    entries: Sequence[CatalogEntry],
    axes: Sequence[str],
    *,
    measured: MeasuredSeries | None = None,
    dark: bool = False,
) -> list[RadarSeries]:
    """The series for ``entries`` in compare order (session colors), then the measured one."""
    slots = gpu_color_slots([entry.id for entry in entries])
    series = [
        RadarSeries(
            entry.id,
            short_name(entry),
            chart_series_color(slot, dark),
            tuple(entry_values(entry, axes)),
            stand_ins=tuple(stand_in_axes(entry, axes)),
        )
        for slot, entry in zip(slots, entries, strict=True)
    ]
    if measured is not None:
        values = tuple(measured_values(measured.values, axes))
        series.append(
            RadarSeries(MEASURED_SERIES_ID, measured.label, measured_color(dark), values, True)
        )
    return series


def build_radar_normalisation(
    choice: NormalisationChoice,
    axes: Sequence[str],
    catalog_entries: Sequence[CatalogEntry],
    entries: Sequence[CatalogEntry],
) -> Normalisation:
    """The rings of the compared GPUs' spec axes. A measured series never joins them: a
    CPU's 0.05 TFLOPS once pulled every log axis down to 0.001 and crowded the rings; a
    measured point off the scale sits on its edge, its value in the tooltip."""
    return choose_normalisation(choice, axes, catalog=catalog_entries, selection=entries)


@dataclass(slots=True)
class _LegendEntry:
    series: RadarSeries
    swatch: QRectF
    text_rect: QRectF
    text: str


@dataclass(slots=True)
class RadarLayout:
    """Where everything goes, in item (pixel) coordinates; y grows downwards."""

    center: QPointF
    radius: float
    label_rects: list[QRectF] = field(default_factory=list)
    #: per axis: (bold title lines, muted detail lines)
    label_lines: list[tuple[list[str], list[str]]] = field(default_factory=list)
    legend: list[_LegendEntry] = field(default_factory=list)
    caption_rect: QRectF | None = None
    label_px: int = LABEL_PX
    #: ring value labels (box, text), placed clear of every polygon
    ring_labels: list[tuple[QRectF, str]] = field(default_factory=list)
    #: the axis whose values the log rings show (None on a linear scale)
    ring_axis: int | None = None

    def to_pixel(self, point: RadarPoint) -> QPointF:
        return QPointF(
            self.center.x() + point.x * self.radius, self.center.y() - point.y * self.radius
        )

    def on_spoke(self, index: int, count: int, fraction: float) -> QPointF:
        angle = axis_angle(index, count)
        return QPointF(
            self.center.x() + fraction * self.radius * math.cos(angle),
            self.center.y() - fraction * self.radius * math.sin(angle),
        )


def _wrap_words(text: str, metrics: QFontMetricsF, width: float) -> list[str]:
    """Greedy word wrap of ``text`` to ``width`` pixels (a long word stays whole)."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if current and metrics.horizontalAdvance(candidate) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines or [text]


def _wrap_detail(text: str, metrics: QFontMetricsF, width: float) -> list[str]:
    """Split "TFLOPS · max 118.5" at the dot when it is wider than ``width``."""
    if metrics.horizontalAdvance(text) <= width or " · " not in text:
        return [text]
    return text.split(" · ")


def _ring_number(value: float) -> str:
    """A ring value to three significant figures at most ("1,008", "44.2", "6.62");
    a power of ten as itself ("1,000", "10", "1", "0.1")."""
    if value > 0 and abs(math.log10(value) - round(math.log10(value))) < 1e-9:
        return f"{value:,.0f}" if value >= 1 else f"{value:g}"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _label_rect(anchor: QPointF, angle: float, width: float, height: float) -> QRectF:
    """A label box beside ``anchor``, on the outward side of the spoke at ``angle``."""
    cos, sin = math.cos(angle), math.sin(angle)
    if cos > 0.25:
        left = anchor.x()
    elif cos < -0.25:
        left = anchor.x() - width
    else:
        left = anchor.x() - width / 2
    if sin > 0.25:
        top = anchor.y() - height
    elif sin < -0.25:
        top = anchor.y()
    else:
        top = anchor.y() - height / 2
    return QRectF(left, top, width, height)


class RadarItem(pg.GraphicsObject):  # type: ignore[misc]
    """The radar chart: rings, spokes, labels, one polygon per series, legend.

    Missing values are gaps: the outline stops at a missing axis, a dashed line
    bridges the gap, and the legend names what is n/a. Hover a vertex for its
    raw value and unit, an axis label for its reference maximum.
    """

    def __init__(self, parent: pg.GraphicsObject | None = None) -> None:
        super().__init__(parent)
        self._size = QSizeF(640, 480)
        self._axes: tuple[str, ...] = DEFAULT_RADAR_AXES
        self._series: list[RadarSeries] = []
        self._normalisation: Normalisation | None = None
        self._style: ChartStyle = LIGHT
        self._caption = ""
        self._picture: QPicture | None = None
        #: Paint straight onto the target painter instead of the cached picture
        #: (for PDF/SVG output, where a replayed picture may scale text wrongly).
        self.use_cache = True
        self.series_points: dict[str, list[RadarPoint | None]] = {}
        self.layout: RadarLayout = RadarLayout(QPointF(320, 240), 100.0)
        self._relayout()

    # inputs ----------------------------------------------------------------
    def set_data(
        self,
        series: Sequence[RadarSeries],
        axes: Sequence[str],
        normalisation: Normalisation,
        caption: str = "",
    ) -> None:
        """Show ``series`` over ``axes``; computes every point with ``radar_points``."""
        self._series = list(series)
        self._axes = tuple(axes)
        self._normalisation = normalisation
        self._caption = caption
        self.series_points = {
            item.id: radar_points(item.values, self._axes, normalisation) for item in self._series
        }
        self._changed()

    def set_size(self, size: QSizeF) -> None:
        if size.width() <= 0 or size.height() <= 0 or size == self._size:
            return
        self.prepareGeometryChange()
        self._size = QSizeF(size)
        self._changed()

    def set_style(self, style: ChartStyle) -> None:
        self._style = style
        self._changed()

    def data_text(self) -> str:
        """Each series' value on each axis, and the caption: the chart as text."""
        lines = [f"Radar: {self._caption}" if self._caption else "Radar"]
        for series in self._series:
            cells = []
            for index, (key, value) in enumerate(zip(self._axes, series.values, strict=True)):
                label = METRICS[key].label
                if value is None:
                    cells.append(f"{label} n/a")
                    continue
                stand_in = f" ({STAND_INS[key][0]})" if index in series.stand_ins else ""
                cells.append(f"{label} {value:,.4g}{stand_in}")
            lines.append(f"{series.name}: " + "; ".join(cells))
        return "\n".join(lines)

    # computed geometry (tests and hover) -------------------------------------
    @property
    def axes(self) -> tuple[str, ...]:
        return self._axes

    @property
    def series(self) -> list[RadarSeries]:
        return list(self._series)

    def polygon(self, series_id: str) -> list[QPointF | None]:
        """The series' vertices in item pixels, None at missing axes."""
        return [
            None if point is None else self.layout.to_pixel(point)
            for point in self.series_points[series_id]
        ]

    def axis_range(self, index: int) -> AxisRange | None:
        if self._normalisation is None:
            return None
        return self._normalisation.ranges[index]

    def tooltip_at(self, pos: QPointF) -> str | None:
        """The hover text at ``pos``: a vertex's raw value, or an axis label's reference."""
        best: tuple[float, RadarSeries, RadarPoint] | None = None
        for series in self._series:
            for point in self.series_points.get(series.id, []):
                if point is None:
                    continue
                pixel = self.layout.to_pixel(point)
                distance = math.hypot(pixel.x() - pos.x(), pixel.y() - pos.y())
                if distance <= HOVER_RADIUS_PX and (best is None or distance < best[0]):
                    best = (distance, series, point)
        if best is not None:
            _, series, point = best
            metric = METRICS[self._axes[point.axis_index]]
            value = f"{metric.format(point.value)} {metric.unit}".strip()
            lines = [series.name, f"{metric.label}: {value}"]
            if point.axis_index in series.stand_ins:
                stand_in = STAND_INS[self._axes[point.axis_index]][0]
                lines.append(f"the {stand_in} figure: no {metric.label} figure is listed")
            axis_range = self.axis_range(point.axis_index)
            if axis_range is not None and axis_range.max_value > 0:
                share = 100.0 * point.value / axis_range.max_value
                lines.append(
                    f"{share:.0f}% of the outer ring's {metric.format(axis_range.max_value)}"
                )
            if series.measured:
                lines.append("measured on this machine")
            return "\n".join(lines)
        for index, rect in enumerate(self.layout.label_rects):
            if rect.contains(pos):
                return self._axis_tooltip(index)
        return None

    def _axis_tooltip(self, index: int) -> str:
        metric = METRICS[self._axes[index]]
        lines = [metric.header]
        axis_range = self.axis_range(index)
        if axis_range is None:
            lines.append("no GPU here has this figure")
        else:
            lines.append(f"outer ring: {metric.format(axis_range.max_value)} {metric.unit}".strip())
        missing = [
            series.name
            for series in self._series
            if self.series_points.get(series.id) and self.series_points[series.id][index] is None
        ]
        if missing:
            lines.append("n/a for " + ", ".join(missing))
        return "\n".join(lines)

    def hoverEvent(self, event: object) -> None:
        if getattr(event, "isExit", lambda: True)():
            self.setToolTip("")
            return
        pos = event.pos()  # type: ignore[attr-defined]
        self.setToolTip(plain_tooltip(self.tooltip_at(QPointF(pos.x(), pos.y())) or ""))

    # QGraphicsItem -----------------------------------------------------------
    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self._size.width(), self._size.height())

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem | None = None,
        widget: QWidget | None = None,
    ) -> None:
        if not self.use_cache:
            self.draw(painter)
            return
        if self._picture is None:
            picture = QPicture()
            recorder = QPainter(picture)
            self.draw(recorder)
            recorder.end()
            self._picture = picture
        painter.drawPicture(0, 0, self._picture)

    # layout ----------------------------------------------------------------
    def _changed(self) -> None:
        self._picture = None
        self._relayout()
        self.update()

    def _label_lines(self) -> list[tuple[str, str]]:
        """(title, detail) per axis: "FP32", "TFLOPS · max 163.4"."""
        lines = []
        for index, key in enumerate(self._axes):
            metric = METRICS[key]
            axis_range = self.axis_range(index)
            if axis_range is None:
                second = f"{metric.unit} · no data".strip(" ·")
            else:
                top = metric.format(axis_range.max_value)
                if self._scale() is Scale.LOG:
                    # each axis has its own decades: say where its centre ring starts
                    span = f"{metric.format(axis_range.min_positive)} to {top}"
                else:
                    span = f"max {top}"
                second = f"{metric.unit} · {span}" if metric.unit else span
            lines.append((metric.label, second))
        return lines

    def _legend_texts(self) -> list[str]:
        texts = []
        for series in self._series:
            missing = missing_axes(self.series_points.get(series.id, []))
            notes = []
            if series.stand_ins:
                names = ", ".join(METRICS[self._axes[i]].label for i in series.stand_ins)
                stand_in = STAND_INS[self._axes[series.stand_ins[0]]][0]
                notes.append(f"{stand_in} figure on {names}")
            if missing and len(missing) < len(self._axes):
                notes.append("n/a: " + ", ".join(METRICS[self._axes[i]].label for i in missing))
            elif missing:
                notes.append("no values on these axes")
            text = series.name + (" (" + "; ".join(notes) + ")" if notes else "")
            texts.append(text)
        return texts

    def _relayout(self) -> None:
        bounds = self.boundingRect().adjusted(MARGIN_PX, MARGIN_PX, -MARGIN_PX, -MARGIN_PX)
        top = bounds.top()
        caption_rect = None
        if self._caption:
            # Wrapped, never cut ("…of the maximur"): as many lines as the longest
            # ring note needs at this width.
            caption_metrics = QFontMetricsF(chart_font(CAPTION_PX))
            widest = f"{self._caption} · ring values: Memory per price axis; other axes: range"
            caption_lines = min(3, len(_wrap_words(widest, caption_metrics, bounds.width())))
            height = caption_metrics.height() * caption_lines
            caption_rect = QRectF(bounds.left(), top, bounds.width(), height)
            top += height + 4
        legend = self._layout_legend(bounds)
        legend_height = 0.0
        if legend:
            legend_height = max(entry.text_rect.bottom() for entry in legend) - min(
                entry.text_rect.top() for entry in legend
            )
            shift = bounds.bottom() - legend_height
            for entry in legend:
                entry.swatch.translate(0, shift)
                entry.text_rect.translate(0, shift)
        plot = QRectF(bounds.left(), top, bounds.width(), bounds.bottom() - legend_height - 6 - top)
        center = plot.center()
        count = len(self._axes)
        texts = self._label_lines()

        def lines_for(
            pixel_size: int, wrap: bool, details: bool
        ) -> tuple[list[tuple[list[str], list[str]]], list[tuple[float, float]]]:
            plain = QFontMetricsF(chart_font(pixel_size))
            bold = QFontMetricsF(chart_font(pixel_size, bold=True))
            lines: list[tuple[list[str], list[str]]] = []
            for index, (title, detail) in enumerate(texts):
                side = abs(math.cos(axis_angle(index, count))) > 0.25
                titles = _wrap_words(title, bold, SIDE_LABEL_WRAP_PX) if wrap and side else [title]
                if not details:
                    notes: list[str] = []
                elif wrap and side:
                    notes = _wrap_detail(detail, plain, SIDE_LABEL_WRAP_PX)
                else:
                    notes = [detail]
                lines.append((titles, notes))
            sizes = [
                (
                    max(
                        *(bold.horizontalAdvance(line) for line in titles),
                        *(plain.horizontalAdvance(line) for line in notes),
                        0.0,
                    )
                    + 2,
                    bold.height() * len(titles) + plain.height() * len(notes),
                )
                for titles, notes in lines
            ]
            return lines, sizes

        def rects_for(sizes: list[tuple[float, float]], radius: float) -> list[QRectF]:
            rects = []
            for index, (width, height) in enumerate(sizes):
                angle = axis_angle(index, count)
                anchor = QPointF(
                    center.x() + (radius + LABEL_GAP_PX) * math.cos(angle),
                    center.y() - (radius + LABEL_GAP_PX) * math.sin(angle),
                )
                rects.append(_label_rect(anchor, angle, width, height))
            return rects

        def largest_radius(sizes: list[tuple[float, float]]) -> float:
            def fits(radius: float) -> bool:
                return all(plot.contains(rect) for rect in rects_for(sizes, radius))

            low, high = 20.0, max(20.0, min(plot.width(), plot.height()) / 2)
            if fits(high):
                return high
            for _ in range(30):  # bisection: the largest radius whose labels all fit
                middle = (low + high) / 2
                if fits(middle):
                    low = middle
                else:
                    high = middle
            return low

        def overlapping(rects: list[QRectF]) -> bool:
            return any(
                rect.intersects(other)
                for index, rect in enumerate(rects)
                for other in rects[index + 1 :]
            )

        # From roomy to compact: full labels, wrapped side labels, smaller
        # type, no "max" line (the tooltip still has it). A more compact form
        # wins only if it gives a clearly bigger chart or the roomier labels
        # would overlap each other.
        candidates: list[tuple[float, int, list[tuple[list[str], list[str]]], list[QRectF]]] = []
        gains: list[float] = []
        for pixel_size, wrap, details, gain in (
            (LABEL_PX, False, True, 1.0),
            (LABEL_PX, True, True, 1.1),
            (LABEL_PX - 2, True, True, 1.15),
            (LABEL_PX - 2, True, False, 1.35),  # losing the "max" line costs most
        ):
            lines, sizes = lines_for(pixel_size, wrap, details)
            radius = largest_radius(sizes)
            candidates.append((radius, pixel_size, lines, rects_for(sizes, radius)))
            gains.append(gain)
        clean = [index for index, item in enumerate(candidates) if not overlapping(item[3])]
        if clean:
            chosen = candidates[clean[0]]
            for index in clean[1:]:
                if candidates[index][0] > chosen[0] * gains[index]:
                    chosen = candidates[index]
        else:
            chosen = max(candidates, key=lambda candidate: candidate[0])
        radius, pixel_size, lines, rects = chosen
        self.layout = RadarLayout(
            center=center,
            radius=radius,
            label_rects=rects,
            label_lines=lines,
            legend=legend,
            caption_rect=caption_rect,
            label_px=pixel_size,
        )
        self._layout_ring_labels()

    def series_outline(self, series: RadarSeries) -> QPainterPath:
        """The data of ``series`` in item pixels: its outline, gap bridges and vertices.

        The translucent fill is not included: a ring label on its small
        background box hides a patch of tint, never a line or a point.
        """
        points = self.series_points.get(series.id, [])
        pixels = self.polygon(series.id)
        outline = QPainterPath()
        for start, end in [*outline_segments(points), *gap_bridges(points)]:
            a, b = pixels[start], pixels[end]
            assert a is not None and b is not None
            outline.moveTo(a)
            outline.lineTo(b)
        stroker = QPainterPathStroker()
        stroker.setWidth(2.6 + 2 * RING_LABEL_CLEARANCE_PX)
        shape = stroker.createStroke(outline)
        for pixel in pixels:
            if pixel is not None:
                shape.addEllipse(
                    pixel, 4.0 + RING_LABEL_CLEARANCE_PX, 4.0 + RING_LABEL_CLEARANCE_PX
                )
        return shape

    def _ring_texts(self, reference_axis: int) -> list[tuple[float, str]]:
        """(radius, text) per ring: shares on a linear scale, ``reference_axis`` values on log."""
        inner = DEFAULT_LOG_INNER if self._normalisation is None else self._normalisation.inner
        radii = ring_radii(self._scale(), inner, self._decades())
        if self._scale() is Scale.LINEAR:
            return [(radius, f"{radius * 100:.0f}%") for radius in radii]
        axis_range = self.axis_range(reference_axis)
        if axis_range is None:
            return []
        metric = METRICS[self._axes[reference_axis]]
        texts = []
        for radius in radii:
            value = _ring_number(ring_value(axis_range, Scale.LOG, inner, radius, self._decades()))
            # the unit once, on the outer ring: short labels fit between the lines
            texts.append((radius, f"{value} {metric.unit}".strip() if radius >= 1.0 else value))
        return texts

    def _ring_labels_in_gap(
        self,
        gap: int,
        texts: list[tuple[float, str]],
        outlines: list[QPainterPath],
        placed: list[tuple[QRectF, str]] | None = None,
    ) -> list[tuple[QRectF, str]]:
        """The ring labels that fit clear of the data on the ring edges across ``gap``.

        Each label is centred on its ring's edge between spokes ``gap`` and
        ``gap + 1``: at the middle if that is clear, else slid along the edge.
        """
        count = len(self._axes)
        layout = self.layout
        metrics = QFontMetricsF(chart_font(RING_LABEL_PX))
        placed = [] if placed is None else list(placed)
        for radius, text in sorted(texts, reverse=True):  # outer rings first
            start = layout.on_spoke(gap, count, radius)
            end = layout.on_spoke((gap + 1) % count, count, radius)
            width = metrics.horizontalAdvance(text) + 6
            height = metrics.height()
            for along in RING_LABEL_POSITIONS:
                point = start + (end - start) * along
                box = QRectF(point.x() - width / 2, point.y() - height / 2, width, height)
                if (
                    not any(outline.intersects(box) for outline in outlines)
                    and not any(box.intersects(other) for other, _ in placed)
                    and not any(box.intersects(rect) for rect in layout.label_rects)
                ):
                    placed.append((box, text))
                    break
        return placed

    def _layout_ring_labels(self) -> None:
        """Ring values along the bisector of the axis gap where most fit clear of the data.

        Gaps are tried from the least covered, and the gap where most labels
        fit clear of every polygon wins; a ring whose label fits nowhere clear
        gets it there all the same, over the data on its veil, so no decade
        goes unlabelled.
        """
        count = len(self._axes)
        layout = self.layout
        if count < 3 or not self._series:
            return
        radii = [
            [None if point is None else point.radius for point in self.series_points[item.id]]
            for item in self._series
            if item.id in self.series_points
        ]
        outlines = [self.series_outline(series) for series in self._series]
        log = self._scale() is Scale.LOG
        best: tuple[list[tuple[QRectF, str]], int | None, int | None, list[tuple[float, str]]]
        best = ([], None, None, [])
        for gap in gaps_by_clearance(radii, count):
            reference: int | None = None
            if log:
                # the spoke starting the gap gives the ring values; the next if it has no data
                reference = gap if self.axis_range(gap) is not None else (gap + 1) % count
            texts = self._ring_texts(reference if reference is not None else 0)
            placed = self._ring_labels_in_gap(gap, texts, outlines)
            if best[2] is None or len(placed) > len(best[0]):
                best = (placed, reference, gap, texts)
            if len(placed) == len(texts):
                break
        labels, axis, chosen_gap, texts = best
        if chosen_gap is not None and len(labels) < len(texts):
            # Every ring keeps its label ("10,000, 1,000, —, 10, 1" read as a missing
            # decade): the ones left out go on their ring over the data, on their veil.
            shown = {text for _, text in labels}
            missing = [(radius, text) for radius, text in texts if text not in shown]
            labels = self._ring_labels_in_gap(chosen_gap, missing, [], placed=labels)
        layout.ring_labels, layout.ring_axis = labels, axis

    def ring_note(self) -> str:
        """What the rings mean, for the caption line."""
        if self._scale() is Scale.LINEAR:
            return "rings every 25% of the maximum"
        axis = self.layout.ring_axis
        if axis is None:
            return "rings at equal ratios"
        metric = METRICS[self._axes[axis]]
        if self._decades() > 0:
            return f"ring values on the {metric.label} axis"
        return f"ring values: {metric.label} axis; other axes: range under each name"

    def _layout_legend(self, bounds: QRectF) -> list[_LegendEntry]:
        metrics = QFontMetricsF(chart_font(LEGEND_PX))
        line_height = metrics.height() + 4
        swatch = 12.0
        entries: list[_LegendEntry] = []
        x, y = bounds.left(), 0.0
        for series, text in zip(self._series, self._legend_texts(), strict=True):
            available = bounds.width() - swatch - 6
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, available)
            width = swatch + 6 + metrics.horizontalAdvance(shown) + 18
            if x > bounds.left() and x + width > bounds.right():
                x, y = bounds.left(), y + line_height
            swatch_rect = QRectF(x, y + (line_height - swatch) / 2, swatch, swatch)
            text_rect = QRectF(x + swatch + 6, y, width - swatch - 6, line_height)
            entries.append(_LegendEntry(series, swatch_rect, text_rect, shown))
            x += width
        return entries

    # painting --------------------------------------------------------------
    def draw(self, painter: QPainter) -> None:
        """Paint the whole chart with ``painter`` (item coordinates)."""
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        self._draw_grid(painter)
        for series in sorted(self._series, key=lambda item: item.measured):
            self._draw_series(painter, series)
        self._draw_ring_labels(painter)
        self._draw_labels(painter)
        self._draw_legend(painter)
        if self.layout.caption_rect is not None:
            painter.setFont(chart_font(CAPTION_PX))
            painter.setPen(QPen(self._style.muted))
            caption = f"{self._caption} · {self.ring_note()}" if self._series else self._caption
            painter.drawText(
                self.layout.caption_rect,
                int(
                    Qt.AlignmentFlag.AlignLeft
                    | Qt.AlignmentFlag.AlignTop
                    | Qt.TextFlag.TextWordWrap
                ),
                caption,
            )
        painter.restore()

    def _decades(self) -> int:
        return 0 if self._normalisation is None else self._normalisation.decades

    def _scale(self) -> Scale:
        return Scale.LINEAR if self._normalisation is None else self._normalisation.scale

    def _draw_grid(self, painter: QPainter) -> None:
        count = len(self._axes)
        layout = self.layout
        inner = DEFAULT_LOG_INNER if self._normalisation is None else self._normalisation.inner
        radii = ring_radii(self._scale(), inner, self._decades())
        grid = QPen(self._style.grid, 1.0)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for radius in radii:
            ring = QPolygonF([layout.on_spoke(i, count, radius) for i in range(count)])
            pen = QPen(grid)
            if radius == 1.0:
                pen.setColor(self._style.muted)
            painter.setPen(pen)
            painter.drawPolygon(ring)
        painter.setPen(grid)
        for index in range(count):
            painter.drawLine(layout.center, layout.on_spoke(index, count, 1.0))

    def _draw_ring_labels(self, painter: QPainter) -> None:
        """Ring values where the layout put them, small, on a background box."""
        font = chart_font(RING_LABEL_PX)
        painter.setFont(font)
        veil = QColor(self._style.background)
        veil.setAlpha(230)
        for box, text in self.layout.ring_labels:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QBrush(veil))
            painter.drawRoundedRect(box, 3.0, 3.0)
            painter.setPen(QPen(self._style.muted))
            painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), text)

    def fills_series(self, series: RadarSeries) -> bool:
        """Whether ``series`` is drawn filled: up to 3 GPUs are; more are outlines only.

        Four to six overlapping tints turn into one muddy blob; outlines stay
        readable. The measured series is never filled.
        """
        compared = sum(1 for item in self._series if not item.measured)
        return not series.measured and compared <= MAX_FILLED_SERIES

    def _draw_series(self, painter: QPainter, series: RadarSeries) -> None:
        points = self.series_points.get(series.id, [])
        pixels = self.polygon(series.id)
        present = [pixel for pixel in pixels if pixel is not None]
        if not present:
            return
        color = QColor(series.color)
        if len(present) >= 3 and self.fills_series(series):
            fill = QColor(color)
            fill.setAlpha(46)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QBrush(fill))
            painter.drawPolygon(QPolygonF(present))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        solid = QPen(color, 2.6 if series.measured else 2.2)
        solid.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        if series.measured:
            solid.setStyle(Qt.PenStyle.DashDotLine)
        painter.setPen(solid)
        path = QPainterPath()
        for start, end in outline_segments(points):
            a, b = pixels[start], pixels[end]
            assert a is not None and b is not None
            path.moveTo(a)
            path.lineTo(b)
        painter.drawPath(path)
        dashed = QPen(color, 1.3, Qt.PenStyle.DashLine)
        painter.setPen(dashed)
        for start, end in gap_bridges(points):
            a, b = pixels[start], pixels[end]
            assert a is not None and b is not None
            painter.drawLine(a, b)
        painter.setPen(QPen(self._style.background, 1.2))
        painter.setBrush(QBrush(color))
        for pixel in present:
            if series.measured:
                painter.drawRect(QRectF(pixel.x() - 4, pixel.y() - 4, 8, 8))
            else:
                painter.drawEllipse(pixel, 4.0, 4.0)

    def _draw_labels(self, painter: QPainter) -> None:
        bold = chart_font(self.layout.label_px, bold=True)
        plain = chart_font(self.layout.label_px)
        bold_height = QFontMetricsF(bold).height()
        plain_height = QFontMetricsF(plain).height()
        count = len(self._axes)
        for index, (rect, (titles, details)) in enumerate(
            zip(self.layout.label_rects, self.layout.label_lines, strict=True)
        ):
            cos = math.cos(axis_angle(index, count))
            if cos > 0.25:
                align = Qt.AlignmentFlag.AlignLeft
            elif cos < -0.25:
                align = Qt.AlignmentFlag.AlignRight
            else:
                align = Qt.AlignmentFlag.AlignHCenter
            flags = int(align | Qt.AlignmentFlag.AlignVCenter)
            y = rect.top()
            painter.setFont(bold)
            painter.setPen(QPen(self._style.text))
            for line in titles:
                painter.drawText(QRectF(rect.left(), y, rect.width(), bold_height), flags, line)
                y += bold_height
            painter.setFont(plain)
            painter.setPen(QPen(self._style.muted))
            for line in details:
                painter.drawText(QRectF(rect.left(), y, rect.width(), plain_height), flags, line)
                y += plain_height

    def _draw_legend(self, painter: QPainter) -> None:
        painter.setFont(chart_font(LEGEND_PX))
        for entry in self.layout.legend:
            painter.setPen(QPen(entry.series.color, 2.0))
            fill = QColor(entry.series.color)
            if entry.series.measured:
                painter.setBrush(Qt.BrushStyle.NoBrush)
            else:
                painter.setBrush(QBrush(fill))
            painter.drawRect(entry.swatch.adjusted(1, 1, -1, -1))
            painter.setPen(QPen(self._style.text))
            painter.drawText(
                entry.text_rect,
                int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                entry.text,
            )


class RadarWidget(pg.GraphicsView):  # type: ignore[misc]
    """A view holding one :class:`RadarItem` that always fills it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.item = RadarItem()  # before the base class, whose constructor resizes
        super().__init__(parent, background=LIGHT.background)
        self.addItem(self.item)
        self.setMinimumSize(360, 300)

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)
        self.item.set_size(QSizeF(self.viewport().width(), self.viewport().height()))

    def set_style(self, style: ChartStyle) -> None:
        self.setBackground(style.background)
        self.item.set_style(style)

    def data_text(self) -> str:
        """What the chart shows, as text (screen readers, "Copy data as text")."""
        return self.item.data_text()
