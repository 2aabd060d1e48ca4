"""Painting compare charts into any ``QPainter``: PDF pages, SVG, images.

Each function builds the same chart scene the compare tab shows, offscreen
(no widget, no window), and calls ``scene.render(painter, target, source)``,
so a ``QPdfWriter`` painter receives vector paths and real text, never a
raster. The chart is laid out at a logical width of :data:`LOGICAL_WIDTH_PX`
pixels with the target's aspect ratio and scaled into ``target``; fonts are
sized in those logical pixels, so text keeps its proportion to the chart at
any output size.

Call these from the GUI thread (Qt's graphics items are not thread-safe) with
a ``QApplication`` (or ``QGuiApplication``) alive.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from PySide6.QtCore import QCoreApplication, QRectF, QSizeF
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsScene

from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.radar import DEFAULT_RADAR_AXES, NormalisationChoice, check_axes
from gpudesk.measured import MeasuredSeries
from gpudesk.render.radar import RadarItem, build_radar_normalisation, build_radar_series
from gpudesk.render.scatter import DEFAULT_X_KEY, DEFAULT_Y_KEY, ScatterChart
from gpudesk.render.style import chart_style

#: Logical width the charts are laid out at before scaling into the target.
LOGICAL_WIDTH_PX = 800.0


@contextmanager
def export_mode(
    scene: QGraphicsScene, painter: QPainter, target: QRectF, source: QRectF
) -> Iterator[None]:
    """Tell pyqtgraph items they are being exported while the block runs.

    In export mode a scatter draws each symbol as a vector path instead of
    stamping cached raster pixmaps, so PDF and SVG output stay vector; the
    resolution scale keeps symbols in proportion to the scaled chart.
    """
    items = [item for item in scene.items() if hasattr(item, "setExportMode")]
    scale = painter.transform().m11() * target.width() / max(1.0, source.width())
    options = {"antialias": True, "painter": painter, "resolutionScale": scale}
    for item in items:
        item.setExportMode(True, options)
    try:
        yield
    finally:
        for item in items:
            item.setExportMode(False)


def _logical_size(target: QRectF, minimum_height: float = 240.0) -> QSizeF:
    if target.width() <= 0 or target.height() <= 0:
        raise ValueError(f"empty target rectangle {target}")
    height = LOGICAL_WIDTH_PX * target.height() / target.width()
    return QSizeF(LOGICAL_WIDTH_PX, max(minimum_height, height))


def build_radar_item(
    entries: Sequence[CatalogEntry],
    catalog: Catalog,
    size: QSizeF,
    *,
    axes: Sequence[str] | None = None,
    normalisation: NormalisationChoice | None = None,
    measured: MeasuredSeries | None = None,
    dark: bool = False,
    caption: bool = True,
) -> RadarItem:
    """A laid-out radar item of ``size`` for ``entries`` (shared by render and export)."""
    chosen_axes = tuple(axes) if axes is not None else DEFAULT_RADAR_AXES
    check_axes(chosen_axes)
    choice = normalisation if normalisation is not None else NormalisationChoice()
    item = RadarItem()
    item.set_style(chart_style(dark))
    item.set_size(size)
    item.set_data(
        build_radar_series(entries, chosen_axes, measured=measured, dark=dark),
        chosen_axes,
        build_radar_normalisation(choice, chosen_axes, catalog.entries, entries),
        caption=choice.describe().capitalize() if caption else "",
    )
    return item


def render_radar(
    painter: QPainter,
    target: QRectF,
    entries: Sequence[CatalogEntry],
    catalog: Catalog,
    *,
    axes: Sequence[str] | None = None,
    normalisation: NormalisationChoice | None = None,
    measured: MeasuredSeries | None = None,
    dark: bool = False,
) -> None:
    """Paint the spec radar of ``entries`` into ``target`` as vectors.

    Args:
        painter: an active painter (``QPdfWriter``, ``QSvgGenerator``, ``QImage``).
        target: where the chart goes, in the painter's coordinates.
        entries: the compared GPUs, in compare order (sets the colors).
        catalog: the loaded catalog (the outer ring when the reference is the catalog).
        axes: 5-8 metric keys from ``gpudesk.compare.radar.RADAR_AXES``;
            default ``DEFAULT_RADAR_AXES``.
        normalisation: reference (catalog/selection) and scale (linear/log);
            default the compared GPUs' own maximum, linear.
        measured: an extra "this machine (measured)" series.
        dark: dark-theme colors (the chart leaves the background unpainted).

    Raises:
        ValueError: bad axes or an empty target.
    """
    size = _logical_size(target)
    item = build_radar_item(
        entries,
        catalog,
        size,
        axes=axes,
        normalisation=normalisation,
        measured=measured,
        dark=dark,
    )
    item.use_cache = False  # paint straight into the painter: vectors, exact text
    scene = QGraphicsScene()
    scene.addItem(item)
    source = QRectF(0, 0, size.width(), size.height())
    scene.setSceneRect(source)
    scene.render(painter, target, source)
    scene.removeItem(item)


def build_scatter_chart(
    entries: Sequence[CatalogEntry],
    catalog: Catalog,
    size: QSizeF,
    *,
    x_key: str = DEFAULT_X_KEY,
    y_key: str = DEFAULT_Y_KEY,
    log_x: bool = False,
    log_y: bool = False,
    dark: bool = False,
) -> ScatterChart:
    """A never-shown scatter chart of ``size``, laid out and ready to render its scene.

    The plot's axes size their ticks through a view's device transform, so the
    plot needs a view; the widget is never shown (hence "GUI thread only").
    """
    chart = ScatterChart()
    chart.setMinimumSize(1, 1)
    chart.resize(int(size.width()), int(size.height()))
    chart.resizeEvent(None)  # a hidden widget gets no resize event: lay out now
    chart.set_style(chart_style(dark))
    chart.plot.set_data(catalog.entries, entries, x_key, y_key, log_x=log_x, log_y=log_y)
    layout = chart.plot.layout
    if layout is not None:
        layout.activate()
    QCoreApplication.sendPostedEvents()  # deferred layout requests of the plot's parts
    _warm_up(chart.scene(), size)
    chart.plot.layout_labels()  # now that the final view transform is known
    return chart


def _warm_up(scene: QGraphicsScene, size: QSizeF) -> None:
    """Render once to a throwaway image.

    pyqtgraph's ``TextItem`` replaces the painter's transform on its very first
    paint; doing that paint here keeps the real render's scaling intact.
    """
    image = QImage(
        max(1, int(size.width())), max(1, int(size.height())), QImage.Format.Format_ARGB32
    )
    image.fill(0)
    painter = QPainter(image)
    scene.render(painter, QRectF(image.rect()), QRectF(0, 0, size.width(), size.height()))
    painter.end()


def render_scatter(
    painter: QPainter,
    target: QRectF,
    entries: Sequence[CatalogEntry],
    catalog: Catalog,
    *,
    x_key: str = DEFAULT_X_KEY,
    y_key: str = DEFAULT_Y_KEY,
    log_x: bool = False,
    log_y: bool = False,
) -> None:
    """Paint the catalog scatter with ``entries`` highlighted into ``target`` as vectors.

    The whole catalog is drawn in grey, ``entries`` in their compare colors
    with name labels, and the Pareto frontier as a dashed line. Light colors.

    Raises:
        ValueError: an empty target.
        KeyError: an unknown metric key.
    """
    size = _logical_size(target)
    chart = build_scatter_chart(
        entries, catalog, size, x_key=x_key, y_key=y_key, log_x=log_x, log_y=log_y
    )
    scene = chart.scene()
    source = QRectF(0, 0, size.width(), size.height())
    with export_mode(scene, painter, target, source):
        scene.render(painter, target, source)
    chart.close()
    chart.deleteLater()
