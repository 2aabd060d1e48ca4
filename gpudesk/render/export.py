"""Writing charts to PNG and SVG files, offscreen and atomically.

``export_radar`` needs no window: it lays a radar item out in an offscreen
scene (what ``gpudesk compare --png/--svg`` calls). ``export_chart`` writes
what a chart widget shows (the context menu's Export PNG…/SVG…). Both paint
into an image or an SVG generator in memory and then write the file with
:func:`gpudesk.storage.atomic_write_bytes`, so a failed write never leaves a
half-written file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QCoreApplication,
    QEvent,
    QIODevice,
    QRectF,
    QSize,
    QSizeF,
)
from PySide6.QtGui import QColor, QImage, QPainter, QResizeEvent
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.radar import NormalisationChoice
from gpudesk.measured import MeasuredSeries
from gpudesk.progress import Progress
from gpudesk.render.paint import build_radar_item, export_mode
from gpudesk.render.style import chart_style
from gpudesk.storage import atomic_write_bytes

ImageFormat = Literal["png", "svg"]
IMAGE_FORMATS: tuple[ImageFormat, ...] = ("png", "svg")
#: Logical size of a radar written by the CLI (PNG pixels are this times the scale).
RADAR_EXPORT_SIZE = QSizeF(960, 720)
#: PNG pixels per logical pixel: sharp on high-density screens and in documents.
PNG_SCALE = 2.0

Painter = Callable[[QPainter, QRectF], None]


def png_bytes(paint: Painter, size: QSizeF, background: QColor, scale: float = PNG_SCALE) -> bytes:
    """Run ``paint`` on a ``size``×``scale`` image filled with ``background``; PNG data."""
    width, height = round(size.width() * scale), round(size.height() * scale)
    if width <= 0 or height <= 0:
        raise ValueError(f"cannot export an empty chart ({width}×{height} px)")
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(background)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    try:
        paint(painter, QRectF(0, 0, width, height))
    finally:
        painter.end()
    # Only now: a QPicture (pyqtgraph caches bars and axes in them) replays
    # scaled by the device's dpi, so painting must happen at the default dpi.
    dots_per_metre = round(96 * scale / 0.0254)
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    return _encode_png(image)


def _encode_png(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]
        raise OSError("could not encode the chart as PNG")
    buffer.close()
    return bytes(data.data())


def svg_bytes(paint: Painter, size: QSizeF, background: QColor, title: str = "") -> bytes:
    """Run ``paint`` on an SVG canvas of ``size`` with a ``background`` rectangle; SVG text."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(round(size.width()), round(size.height())))
    generator.setViewBox(QRectF(0, 0, size.width(), size.height()))
    generator.setResolution(96)
    # Scrubbed before Qt sees it: PySide reads a str that starts with U+FFFE as UTF-16 with
    # a reversed byte-order mark, so "\ufffeab" became the title "\u6100\u6200".
    generator.setTitle(_NOT_XML_TEXT.sub("\ufffd", title) or "GPUDesk chart")
    generator.setDescription("Written by GPUDesk")
    painter = QPainter(generator)
    try:
        target = QRectF(0, 0, size.width(), size.height())
        painter.fillRect(target, background)
        paint(painter, target)
    finally:
        painter.end()
    buffer.close()
    return well_formed_xml(bytes(data.data()))


#: What XML 1.0 forbids (C0 controls but tab, newline and carriage return; U+FFFE,
#: U+FFFF; lone surrogates), and what it discourages (DEL, C1): a GPU name holding one
#: made the SVG unreadable to every XML parser. Qt's generator writes them raw.
_NOT_XML_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
#: The same characters written as character references, ``&#27;`` or ``&#x1b;``.
_NOT_XML_REFERENCE = re.compile(r"&#(?:x([0-9a-fA-F]+)|([0-9]+));")


def _reference(match: re.Match[str]) -> str:
    code = int(match.group(1), 16) if match.group(1) else int(match.group(2))
    if code > 0x10FFFF or _NOT_XML_TEXT.fullmatch(chr(code)):
        return "\ufffd"
    return match.group(0)


def well_formed_xml(data: bytes) -> bytes:
    """``data`` (UTF-8 XML) with every character XML cannot hold replaced by U+FFFD."""
    text = data.decode("utf-8", "replace")
    text = _NOT_XML_REFERENCE.sub(_reference, _NOT_XML_TEXT.sub("\ufffd", text))
    return text.encode("utf-8")


def _write(
    path: Path,
    image_format: str,
    paint: Painter,
    size: QSizeF,
    background: QColor,
    title: str,
    progress: Progress | None = None,
) -> None:
    if image_format == "png":
        data = png_bytes(paint, size, background)
    elif image_format == "svg":
        data = svg_bytes(paint, size, background, title)
    else:
        raise ValueError(f"unknown image format {image_format!r}; use png or svg")
    if progress is not None:
        progress.check()  # cancelled while painting: the old file stays
    atomic_write_bytes(Path(path), data)


def export_radar(
    entries: Sequence[CatalogEntry],
    path: Path,
    image_format: ImageFormat | str,
    catalog: Catalog,
    *,
    axes: Sequence[str] | None = None,
    normalisation: NormalisationChoice | None = None,
    measured: MeasuredSeries | None = None,
    dark: bool = False,
    size: QSizeF = RADAR_EXPORT_SIZE,
    progress: Progress | None = None,
) -> None:
    """Write the radar chart of ``entries`` to ``path`` as PNG or SVG, with no window.

    Needs a ``QApplication`` (create it with ``gpudesk.render.app.create_application``;
    the offscreen platform works).

    Raises:
        OSError: the file cannot be written (the old file, if any, is kept).
        ValueError: unknown format or bad axes.
        gpudesk.progress.Cancelled: ``progress`` was cancelled; nothing was written.
    """
    item = build_radar_item(
        entries,
        catalog,
        size,
        axes=axes,
        normalisation=normalisation,
        measured=measured,
        dark=dark,
    )
    item.use_cache = False
    scene = QGraphicsScene()
    scene.addItem(item)
    source = QRectF(0, 0, size.width(), size.height())

    def paint(painter: QPainter, target: QRectF) -> None:
        scene.render(painter, target, source)

    title = "Spec radar: " + ", ".join(entry.name for entry in entries)
    try:
        _write(path, image_format, paint, size, chart_style(dark).background, title, progress)
    finally:
        scene.removeItem(item)


@contextmanager
def _uncached(scene: QGraphicsScene) -> Iterator[None]:
    """Items with a picture cache paint directly while exporting (exact text in SVG)."""
    items = [item for item in scene.items() if getattr(item, "use_cache", None) is True]
    for item in items:
        item.use_cache = False  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for item in items:
            item.use_cache = True  # type: ignore[attr-defined]


#: Logical size of a chart exported from the window: a fixed report aspect (4:3), so a
#: chart stretched across a wide window is not written as a 3060×882 strip.
CHART_EXPORT_SIZE = QSize(960, 720)


@contextmanager
def _sized(view: QGraphicsView, size: QSize) -> Iterator[None]:
    """The view laid out at ``size`` while the block runs, then back as it was."""
    old = view.size()
    if old == size:
        yield
        return
    view.setUpdatesEnabled(False)
    try:
        _resize_now(view, size, old)
        yield
    finally:
        _resize_now(view, old, size)
        view.setUpdatesEnabled(True)


def _resize_now(view: QGraphicsView, size: QSize, old: QSize) -> None:
    view.resize(size)
    if not view.isVisible():
        # A hidden widget's resize event waits until it is shown (and a sent one does
        # not reach pyqtgraph's handler): the view lays its scene out now.
        QCoreApplication.sendEvent(view, QResizeEvent(size, old))
        view.resizeEvent(QResizeEvent(size, old))
    # pyqtgraph lays its plot items out on a posted layout request
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


def export_chart(
    view: QGraphicsView,
    path: Path,
    image_format: ImageFormat | str,
    size: QSize | None = CHART_EXPORT_SIZE,
) -> None:
    """Write the chart widget ``view`` to ``path`` as PNG or SVG.

    The chart is laid out at ``size`` (the report aspect) for the export, whatever
    the widget's shape on screen; ``size=None`` writes the widget's own shape.

    Raises:
        OSError: the file cannot be written.
        ValueError: unknown format or an empty widget.
    """
    with _sized(view, size if size is not None else view.size()):
        scene = view.scene()
        viewport = view.viewport().rect()
        source = view.mapToScene(viewport).boundingRect()
        logical = QSizeF(viewport.width(), viewport.height())
        background = view.backgroundBrush().color()

        def paint(painter: QPainter, target: QRectF) -> None:
            with _uncached(scene), export_mode(scene, painter, target, source):
                scene.render(painter, target, source)

        _write(path, image_format, paint, logical, background, view.windowTitle())
