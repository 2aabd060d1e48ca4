"""Chart rendering and export without a window: files, vectors in PDF, label layout."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import make_entry
from pypdf import PdfReader
from PySide6.QtCore import QPointF, QRectF, QSizeF
from PySide6.QtGui import QImage, QPageSize, QPainter, QPdfWriter
from PySide6.QtWidgets import QApplication

from gpudesk.catalog.loader import Catalog
from gpudesk.compare.radar import NormalisationChoice, Reference, Scale
from gpudesk.render.export import PNG_SCALE, RADAR_EXPORT_SIZE, export_radar
from gpudesk.render.paint import build_radar_item, render_radar, render_scatter

_PRICE: dict[str, Any] = {"price_date": dt.date(2025, 1, 1), "price_kind": "street"}


def _catalog() -> Catalog:
    return Catalog(
        entries=[
            make_entry(
                "alpha",
                name="Alpha 24GB",
                memory_gb=24,
                bandwidth_gbs=1000,
                fp32_tflops=80.0,
                fp16_tensor_tflops=160.0,
                fp64_tflops=1.2,
                price_usd=1600,
                tdp_w=450,
                **_PRICE,
            ),
            make_entry(
                "beta",
                name="Beta 80GB",
                memory_gb=80,
                bandwidth_gbs=2000,
                fp32_tflops=20.0,
                fp16_tensor_tflops=320.0,
                fp64_tflops=10.0,
                price_usd=16000,
                tdp_w=300,
                **_PRICE,
            ),
            make_entry(
                "gamma",
                name="Gamma 96GB",
                memory_gb=96,
                bandwidth_gbs=4000,
                fp32_tflops=60.0,
                fp16_tensor_tflops=800.0,
                tdp_w=400,
            ),
        ]
    )


def _pdf_page(tmp_path: Path, draw: Any) -> Any:
    path = tmp_path / "chart.pdf"
    writer = QPdfWriter(str(path))
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setResolution(300)
    painter = QPainter(writer)
    draw(painter, QRectF(100, 100, 2000, 1240))
    painter.end()
    return PdfReader(str(path)).pages[0]


def _image_count(page: Any) -> int:
    resources = page.get("/Resources") or {}
    xobjects = resources.get("/XObject") or {}
    return sum(1 for ref in xobjects.values() if ref.get_object().get("/Subtype") == "/Image")


def test_export_radar_png_and_svg(qapp: QApplication, tmp_path: Path) -> None:
    catalog = _catalog()
    png = tmp_path / "radar.png"
    svg = tmp_path / "radar.svg"
    export_radar(catalog.entries, png, "png", catalog)
    export_radar(catalog.entries, svg, "svg", catalog)
    image = QImage(str(png))
    assert image.width() == RADAR_EXPORT_SIZE.width() * PNG_SCALE
    assert image.height() == RADAR_EXPORT_SIZE.height() * PNG_SCALE
    text = svg.read_text("utf-8")
    # real text, not outlines: names, axis labels and the reference maximum
    for expected in ("Alpha 24GB", "Gamma 96GB", "Memory", "max 96", "n/a: FP64"):
        assert expected in text


def test_export_radar_bad_path_and_format(qapp: QApplication, tmp_path: Path) -> None:
    catalog = _catalog()
    with pytest.raises(OSError):
        export_radar(catalog.entries, tmp_path / "missing" / "radar.png", "png", catalog)
    with pytest.raises(ValueError, match="png or svg"):
        export_radar(catalog.entries, tmp_path / "radar.gif", "gif", catalog)
    with pytest.raises(ValueError, match="5 to 8"):
        export_radar(catalog.entries, tmp_path / "r.png", "png", catalog, axes=["memory_gb"])


def test_render_radar_into_pdf_is_vector(qapp: QApplication, tmp_path: Path) -> None:
    catalog = _catalog()
    page = _pdf_page(tmp_path, lambda p, r: render_radar(p, r, catalog.entries[:2], catalog))
    text = " ".join(page.extract_text().split())
    assert "Memory" in text and "Alpha 24GB" in text and "Beta 80GB" in text
    assert _image_count(page) == 0


def test_render_scatter_into_pdf_is_vector(qapp: QApplication, tmp_path: Path) -> None:
    catalog = _catalog()
    page = _pdf_page(tmp_path, lambda p, r: render_scatter(p, r, catalog.entries[:2], catalog))
    text = " ".join(page.extract_text().split())
    assert "Alpha 24GB" in text and "Price (USD)" in text and "Pareto frontier" in text
    # Gamma has no price: named as not plotted, not silently dropped
    assert "not plotted" not in text  # Gamma is context, not selection
    assert _image_count(page) == 0  # symbols drawn as paths, not cached pixmaps


def test_render_radar_options(qapp: QApplication) -> None:
    catalog = _catalog()
    axes = ["memory_gb", "bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops", "fp64_tflops"]
    choice = NormalisationChoice(Reference.SELECTION, Scale.LOG)
    item = build_radar_item(
        catalog.entries[:2], catalog, QSizeF(800, 500), axes=axes, normalisation=choice
    )
    beta = item.series_points["beta"]
    alpha = item.series_points["alpha"]
    # powers of ten: the larger value is under the outer ring, the smaller off the hub
    assert beta[0] is not None and alpha[0] is not None
    assert 0.2 < alpha[0].radius < beta[0].radius <= 1.0
    image = QImage(800, 500, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    with pytest.raises(ValueError, match="empty target"):
        render_radar(painter, QRectF(0, 0, 0, 10), catalog.entries, catalog)
    painter.end()


@pytest.mark.parametrize("size", [QSizeF(420, 320), QSizeF(800, 496), QSizeF(1400, 700)])
def test_radar_layout_fits_every_size(qapp: QApplication, size: QSizeF) -> None:
    catalog = _catalog()
    axes = [
        "memory_gb",
        "bandwidth_gbs",
        "fp32_tflops",
        "fp16_tensor_tflops",
        "bf16_tensor_tflops",
        "fp64_tflops",
        "fp16_tensor_tflops_per_kusd",
        "memory_gb_per_kusd",
    ]
    item = build_radar_item(catalog.entries, catalog, size, axes=axes)
    bounds = item.boundingRect()
    assert item.layout.radius > 40
    for rect in item.layout.label_rects:
        assert bounds.contains(rect), (size, rect)
    rects = item.layout.label_rects
    for index, rect in enumerate(rects):
        for other in rects[index + 1 :]:
            assert not rect.intersects(other)
    legend_top = min(entry.text_rect.top() for entry in item.layout.legend)
    assert max(rect.bottom() for rect in rects) <= legend_top


def test_cached_and_direct_paint_agree(qapp: QApplication) -> None:
    catalog = _catalog()
    item = build_radar_item(catalog.entries, catalog, QSizeF(600, 450))
    images = []
    for cached in (True, False):
        item.use_cache = cached
        image = QImage(600, 450, QImage.Format.Format_ARGB32)
        image.fill(0xFFFFFFFF)
        painter = QPainter(image)
        item.paint(painter)
        painter.end()
        images.append(image)
    differing = sum(
        images[0].pixel(x, y) != images[1].pixel(x, y)
        for x in range(0, 600, 5)
        for y in range(0, 450, 5)
    )
    assert differing < 60  # antialiasing may differ by a pixel here and there


def test_scatter_labels_of_crowded_points_neither_overlap_nor_leave_the_plot(
    qapp: QApplication,
) -> None:
    from gpudesk.render.paint import build_scatter_chart

    priced = {"price_date": dt.date(2024, 1, 1), "price_kind": "street"}
    # Six GPUs within a few percent of each other in price and speed, one far away.
    crowd = [
        make_entry(
            f"crowded-{index}",
            name=f"Crowded GPU number {index}",
            price_usd=1500 + 150 * index,
            fp16_tensor_tflops=150 + 8 * index,
            **priced,
        )
        for index in range(5)
    ]
    far = make_entry("far-gpu", name="Far GPU", price_usd=30000, fp16_tensor_tflops=900, **priced)
    catalog = Catalog(entries=[*crowd, far])
    chart = build_scatter_chart([*crowd, far], catalog, QSizeF(800, 500))
    shown = [label for label in chart.plot.label_items() if label.isVisible()]
    # the text boxes of the names shown (the items' outlines less their margins)
    labels = [rect for _, rect in chart.plot.label_rects]
    inside = chart.plot.getViewBox().sceneBoundingRect()
    # a name with no free place is left out and named in the legend instead
    unlabelled = {point.name for point in chart.plot.unlabelled_points}
    assert {label.toPlainText() for label in shown} | unlabelled == {
        entry.name for entry in [*crowd, far]
    }
    assert len(shown) >= 4, unlabelled
    for index, rect in enumerate(labels):
        assert inside.contains(rect), f"label {index} leaves the plot"
        for other in labels[index + 1 :]:
            assert not rect.intersects(other)
    chart.close()


@pytest.mark.parametrize("scale", list(Scale))
def test_ring_labels_keep_clear_of_the_data_and_log_rings_show_values(
    qapp: QApplication, scale: Scale
) -> None:
    catalog = _catalog()
    axes = ["memory_gb", "bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops", "fp64_tflops"]
    item = build_radar_item(
        catalog.entries,
        catalog,
        QSizeF(800, 560),
        axes=axes,
        normalisation=NormalisationChoice(Reference.SELECTION, scale),
    )
    labels = item.layout.ring_labels
    assert len(labels) >= 2
    for box, text in labels:
        for series in item.series:
            assert not item.series_outline(series).intersects(box), (text, series.name)
        for rect in item.layout.label_rects:
            assert not box.intersects(rect), text
    texts = [text for _, text in labels]
    if scale is Scale.LINEAR:
        assert item.layout.ring_axis is None
        assert set(texts) <= {"25%", "50%", "75%", "100%"}
        assert "rings every 25%" in item.ring_note()
        return
    # log: the rings show one axis' own values, within that axis' range
    axis = item.layout.ring_axis
    assert axis is not None
    metric_range = item.axis_range(axis)
    assert metric_range is not None
    numbers = [float(text.split()[0].replace(",", "")) for text in texts]
    # every ring a power of ten (10, 100, 1,000), never 10.3 or 29.0, spanning the axis
    for number in numbers:
        assert math.log10(number) == pytest.approx(round(math.log10(number)))
        assert number <= metric_range.max_value * 10
    assert max(numbers) >= metric_range.max_value
    assert len(set(numbers)) == len(numbers)
    from gpudesk.catalog.metrics import METRICS

    metric = METRICS[axes[axis]]
    assert metric.label in item.ring_note()
    # every axis tip says its own range on a log scale
    for (_, details), key in zip(item.layout.label_lines, axes, strict=True):
        assert " to " in " ".join(details), key


def test_frontier_names_at_the_cheap_end_never_cover_another_name(qapp: QApplication) -> None:
    """Grey frontier names piled onto each other and onto the selected GPUs' names at
    the cheap end of the price axis (screen and PDF)."""
    from gpudesk.render.paint import build_scatter_chart

    priced = {"price_date": dt.date(2024, 1, 1), "price_kind": "street"}
    # A staircase of cheap GPUs: each a little dearer and a little faster (all frontier).
    cheap = [
        make_entry(
            f"cheap-{index}",
            name=f"Cheap frontier GPU {index}",
            price_usd=300 + 120 * index,
            fp16_tensor_tflops=40 + 12 * index,
            **priced,
        )
        for index in range(8)
    ]
    selected = make_entry(
        "chosen", name="Chosen GPU", price_usd=700, fp16_tensor_tflops=90, **priced
    )
    far = make_entry("far-gpu", name="Far GPU", price_usd=30000, fp16_tensor_tflops=900, **priced)
    catalog = Catalog(entries=[*cheap, selected, far])
    chart = build_scatter_chart([selected, far], catalog, QSizeF(800, 500))
    plot = chart.plot
    assert len(plot.frontier_labels) >= 5
    shown = [rect for _, rect in plot.label_rects]
    assert len(shown) >= 3
    for index, rect in enumerate(shown):
        for other in shown[index + 1 :]:
            assert not rect.intersects(other)
    chart.close()


def test_the_radar_legend_says_which_figure_stands_in(qapp: QApplication) -> None:
    from gpudesk.catalog.loader import load_catalog

    catalog = load_catalog([], include_user=False)
    entries = [catalog.by_id("gaudi-3"), catalog.by_id("h100-sxm5")]
    assert all(entry is not None for entry in entries)
    item = build_radar_item(entries, catalog, QSizeF(900, 600))  # type: ignore[arg-type]
    gaudi = next(series for series in item.series if series.id == "gaudi-3")
    fp16 = item.axes.index("fp16_tensor_tflops")
    assert gaudi.stand_ins and fp16 in gaudi.stand_ins
    assert item.series_points["gaudi-3"][fp16] is not None  # drawn, not a gap
    legend = item._legend_texts()[0]
    assert "BF16 figure on FP16 tensor" in legend


def _crosses(a: QPointF, b: QPointF, rect: QRectF) -> bool:
    """Whether the segment a-b passes through rect, by walking it a pixel at a time."""
    steps = max(1, int(math.hypot(b.x() - a.x(), b.y() - a.y())))
    return any(
        rect.contains(
            QPointF(a.x() + (b.x() - a.x()) * i / steps, a.y() + (b.y() - a.y()) * i / steps)
        )
        for i in range(steps + 1)
    )


@pytest.mark.parametrize(
    ("size", "log"), [((800.0, 560.0), False), ((1300.0, 480.0), False), ((800.0, 560.0), True)]
)
def test_scatter_names_clear_every_marker_name_legend_and_the_frontier_line(
    qapp: QApplication, size: tuple[float, float], log: bool
) -> None:
    """QA saw 'Tesla V100 SXM2 16GB' and 'Instinct MI300X' on the dashed frontier
    line and on the grey points at the cheap end (screen and PDF)."""
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.render.paint import build_scatter_chart

    catalog = load_catalog([], include_user=False)
    ids = ["v100-sxm2-16gb", "mi300x", "rtx-3060-12gb", "t4", "rtx-4060-ti-16gb", "h100-sxm5"]
    entries = [catalog.by_id(entry_id) for entry_id in ids]
    assert all(entry is not None for entry in entries)
    chart = build_scatter_chart(entries, catalog, QSizeF(*size), log_x=log, log_y=log)  # type: ignore[arg-type]
    plot = chart.plot
    view = plot.getViewBox()
    inside = view.sceneBoundingRect()

    def box(point: object, side: float) -> QRectF:
        centre = view.mapViewToScene(QPointF(point.plot_x, point.plot_y))  # type: ignore[attr-defined]
        return QRectF(centre.x() - side / 2, centre.y() - side / 2, side, side)

    marks = [box(p, 14) for p in plot.selection_points] + [box(p, 8) for p in plot.context_points]
    by_id = {p.id: p for p in [*plot.selection_points, *plot.context_points]}
    corners = [
        view.mapViewToScene(QPointF(by_id[i].plot_x, by_id[i].plot_y)) for i in plot.frontier_ids
    ]
    assert len(corners) >= 3
    legend = plot.legend.sceneBoundingRect()
    rects = plot.label_rects
    assert len(rects) >= 4
    for index, (text, rect) in enumerate(rects):
        assert inside.contains(rect), text
        assert not rect.intersects(legend), text
        for mark in marks:
            assert not rect.intersects(mark), text
        for a, b in itertools.pairwise(corners):
            assert not _crosses(a, b, rect), text
        for other_text, other in rects[index + 1 :]:
            assert not rect.intersects(other), (text, other_text)
    # a name moved further out has a leader line from its marker that crosses no
    # selected marker, no other name and not the frontier line
    for text, start, end in plot.leader_lines:
        for other_text, rect in rects:
            if other_text != text:
                assert not _crosses(start, end, rect), (text, other_text)
        for point in plot.selection_points:
            if point.name != text:
                assert not _crosses(start, end, box(point, 14)), (text, point.name)
        for a, b in itertools.pairwise(corners):
            steps = max(1, int(math.hypot(b.x() - a.x(), b.y() - a.y())))
            for i in range(steps + 1):
                spot = QPointF(
                    a.x() + (b.x() - a.x()) * i / steps, a.y() + (b.y() - a.y()) * i / steps
                )
                assert not _crosses(start, end, QRectF(spot.x() - 0.5, spot.y() - 0.5, 1, 1)), text
    # a selected GPU is either named beside its point or in the legend, in its colour
    named = {text for text, _ in rects}
    legend_texts = " ".join(label.text for _, label in plot.legend.items)
    for point in plot.selection_points:
        assert point.name in named or f"{point.name} (no room" in legend_texts, point.name
    for point in plot.unlabelled_points:
        assert point.name not in named
    chart.close()
