"""The comparison report as PDF: one ``QPdfWriter``, one ``QPainter``, vector charts.

The content comes from :mod:`gpudesk.report.content`; this module only lays
it out (:mod:`gpudesk.report.layout`) and paints it. Charts are painted by the
same code that draws them on screen (:mod:`gpudesk.render.paint`), into
this painter, so they stay vector. Text uses the bundled DejaVu Sans, loaded
explicitly, so the PDF looks the same on every machine.

The PDF is painted into memory and then written with
:func:`gpudesk.storage.atomic_write_bytes` (a temporary file in the same
folder, fsynced, renamed over the target): a failed or cancelled export never
leaves a truncated PDF and never touches an existing file of that name. Qt's
own file output would swallow write errors such as a full disk; Python's
does not.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QPen,
    QPicture,
)

from gpudesk import __version__
from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.limits import check_comparison_size
from gpudesk.compare.radar import NormalisationChoice, Reference, Scale
from gpudesk.errors import GpuDeskError
from gpudesk.fleet.document import SurveyView
from gpudesk.paths import resources_dir
from gpudesk.progress import NullProgress, Progress
from gpudesk.render.app import ensure_application
from gpudesk.render.colors import gpu_colors
from gpudesk.render.latency import paint_latency
from gpudesk.render.paint import render_radar, render_scatter
from gpudesk.report.content import (
    BestFor,
    LocalData,
    ReportContent,
    build_report,
    collect_local_data,
)
from gpudesk.report.layout import (
    GRID_COLOR,
    MUTED_COLOR,
    TEXT_COLOR,
    Cell,
    Flow,
    Table,
    TableRow,
    draw_text_in,
)
from gpudesk.speed.planner import SpeedWorkload

_log = logging.getLogger(__name__)
#: A GPU slow against its fleet median, on paper (the light theme's error colour, 6:1 on white).
SLOW_COLOR = QColor("#b03a2e")

Paper = Literal["a4", "letter"]
PAPER_SIZES: dict[str, QPageSize.PageSizeId] = {
    "a4": QPageSize.PageSizeId.A4,
    "letter": QPageSize.PageSizeId.Letter,
}
#: Device units per inch. Vector output does not depend on it; it sets the
#: precision of coordinates (1/300 inch) and the width of cosmetic pens.
RESOLUTION_DPI = 300
PT = RESOLUTION_DPI / 72.0
MM = RESOLUTION_DPI / 25.4
MARGIN_X_MM = 17.0
MARGIN_TOP_MM = 18.0
MARGIN_BOTTOM_MM = 17.0

BEST_FILL = QColor("#d5efd5")
FONT_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")
FALLBACK_FAMILY = "DejaVu Sans"

_font_family: str | None = None


class ReportError(GpuDeskError, OSError):
    """The report could not be written; the message names the path."""


# --------------------------------------------------------------------------
# set-up: fonts (the application: gpudesk.render.app.ensure_application)
# --------------------------------------------------------------------------
def report_font_family() -> str:
    """The family of the bundled DejaVu Sans, loaded once."""
    global _font_family
    if _font_family is not None:
        return _font_family
    family = ""
    for name in FONT_FILES:
        path = resources_dir() / "fonts" / name
        font_id = QFontDatabase.addApplicationFont(str(path))
        if font_id < 0:
            _log.warning("could not load the bundled font %s; text may differ", path)
            continue
        families = QFontDatabase.applicationFontFamilies(font_id)
        if families and not family:
            family = families[0]
    _font_family = family or FALLBACK_FAMILY
    return _font_family


# --------------------------------------------------------------------------
# the public entry point
# --------------------------------------------------------------------------
def write_pdf_report(
    entries: Sequence[CatalogEntry],
    path: Path | str,
    *,
    catalog: Catalog,
    paper: Paper | str = "a4",
    include_local: bool = False,
    progress: Progress | None = None,
    local: LocalData | None = None,
    charts: ReportCharts | None = None,
    fleet: SurveyView | None = None,
    speed: SpeedWorkload | None = None,
) -> None:
    """Write the comparison report of 2-6 GPUs to ``path`` as PDF.

    Without ``charts`` this must run on the GUI thread (the CLI's case); the
    GUI prepares them with :func:`prepare_charts` and runs this on a worker.

    Args:
        entries: the compared GPUs, in the order shown.
        path: the PDF file; replaced atomically if it exists.
        catalog: the loaded catalog (date, peaks for local results).
        paper: "a4" (default) or "letter".
        include_local: add the "This machine" section.
        progress: progress and cancellation (raises ``Cancelled``; nothing is written).
        local: this machine's data; collected now when None and ``include_local``.
        charts: the charts from :func:`prepare_charts` for the same entries
            and paper; drawn now when None.
        fleet: a fleet survey to summarise in a "Fleet" section.
        speed: a "How fast?" workload for a "How fast" section.

    Raises:
        ValueError: fewer than 2 or more than 6 GPUs, an unknown paper size,
            or ``charts`` prepared for another paper.
        OSError: the file could not be written; ``filename`` is ``path`` and
            an existing file is left as it was.
        gpudesk.progress.Cancelled: cancelled through ``progress``.
    """
    path = Path(path)
    progress = progress or NullProgress()
    if paper not in PAPER_SIZES:
        raise ValueError(f"unknown paper size {paper!r}: use 'a4' or 'letter'")
    if charts is not None and charts.paper != paper:
        raise ValueError(f"charts were prepared for {charts.paper}, not {paper}")
    check_comparison_size(len(entries))  # before detecting anything
    if include_local and local is None:
        progress.report(0.0, "detecting this machine")
        local = collect_local_data()
    # built once: the charts and the pages both read this content
    progress.report(0.01, "collecting the figures")
    content = build_report(
        entries, catalog, local=local, include_local=include_local, fleet=fleet, speed=speed
    )
    if charts is None:
        progress.report(0.02, "drawing the charts")
        charts = prepare_charts(content.entries, catalog, paper=paper)
    progress.check()
    data = render_pdf_bytes(content, charts, progress=progress)
    progress.check()
    progress.report(0.97, f"writing {path.name}")
    _write_atomically(path, data)
    progress.report(1.0, f"wrote {path}")


def _write_atomically(path: Path, data: bytes) -> None:
    from gpudesk.storage import atomic_write_bytes

    try:
        atomic_write_bytes(path, data)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ReportError(exc.errno or 0, reason, str(path)) from exc


# --------------------------------------------------------------------------
# painting
# --------------------------------------------------------------------------
def render_pdf_bytes(
    content: ReportContent, charts: ReportCharts, *, progress: Progress | None = None
) -> bytes:
    """Lay out and paint the report on ``charts.paper``; return the PDF file's bytes.

    Safe on a worker thread: it paints only recorded charts and text.
    """
    progress = progress or NullProgress()
    ensure_application()
    family = report_font_family()
    paper = charts.paper
    buffer_bytes = QByteArray()
    buffer = QBuffer(buffer_bytes)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(RESOLUTION_DPI)
    writer.setPageLayout(
        QPageLayout(
            QPageSize(PAPER_SIZES[paper]),
            QPageLayout.Orientation.Portrait,
            QMarginsF(0, 0, 0, 0),
        )
    )
    writer.setTitle(f"{content.title}: {content.subtitle}")
    writer.setCreator(f"GPUDesk {__version__}")
    if hasattr(writer, "setAuthor"):  # Qt >= 6.8
        writer.setAuthor("GPUDesk")

    page_rect, body = body_rect(paper)
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError("Qt could not start the PDF painter")
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        flow = Flow(writer, body, family, PT)
        progress.report(0.1, "laying out the pages")
        _lay_out(flow, content, charts)
        progress.check()
        total = len(flow.pages)
        for number, page in enumerate(flow.pages, start=1):
            if number > 1:
                writer.newPage()
            progress.report(0.1 + 0.85 * (number - 1) / total, f"painting page {number} of {total}")
            for op in page.ops:
                painter.save()
                op(painter)
                painter.restore()
            _page_frame(painter, flow, content, page_rect, number, total)
            progress.check()
    finally:
        painter.end()
        buffer.close()
    return bytes(buffer_bytes.data())


def _page_frame(
    painter: QPainter,
    flow: Flow,
    content: ReportContent,
    page_rect: QRectF,
    number: int,
    total: int,
) -> None:
    """Running header (after the first page) and footer with "Page N of M"."""
    small = flow.font(7.5)
    left = MARGIN_X_MM * MM
    width = page_rect.width() - 2 * left
    line_height = 10 * PT
    if number > 1:
        top = (MARGIN_TOP_MM - 9) * MM
        rect = QRectF(left, top, width, line_height)
        draw_text_in(painter, rect, f"{content.title}: {content.subtitle}", small, MUTED_COLOR)
        painter.setPen(QPen(GRID_COLOR, 0.5 * PT))
        painter.drawLine(
            QPointF(left, rect.bottom() + 1.5 * PT), QPointF(left + width, rect.bottom() + 1.5 * PT)
        )
    bottom = page_rect.height() - (MARGIN_BOTTOM_MM - 6) * MM
    rect = QRectF(left, bottom, width, line_height)
    facts = " · ".join(content.header_facts)
    draw_text_in(painter, rect, facts, small, MUTED_COLOR)
    draw_text_in(
        painter, rect, f"Page {number} of {total}", small, MUTED_COLOR, Qt.AlignmentFlag.AlignRight
    )


# --------------------------------------------------------------------------
# the report's sections
# --------------------------------------------------------------------------
def _lay_out(flow: Flow, content: ReportContent, charts: ReportCharts) -> None:
    _cover(flow, content)
    _summary(flow, content)
    _spec_table(flow, content)
    _charts(flow, content, charts)
    if content.speed is not None:
        _speed(flow, content)
    if content.local is not None:
        _this_machine(flow, content)
    if content.fleet is not None:
        _fleet(flow, content)
    _notes(flow, content)


def _cover(flow: Flow, content: ReportContent) -> None:
    flow.text(content.title, size_pt=20, bold=True, after_pt=2)
    flow.text(content.subtitle, size_pt=12, after_pt=4)
    flow.text("   ·   ".join(content.header_facts), size_pt=9, color=MUTED_COLOR, after_pt=4)
    flow.rule()


def _summary(flow: Flow, content: ReportContent) -> None:
    flow.heading("Summary")
    rows = []
    colors = gpu_colors([gpu.id for gpu in content.gpus])
    for gpu, color in zip(content.gpus, colors, strict=True):
        best = ", ".join(gpu.best_for) if gpu.best_for else "—"
        rows.append(
            TableRow(
                (
                    Cell(gpu.name, bold=True, swatch=color),
                    Cell(gpu.description),
                    Cell(best),
                )
            )
        )
    flow.table(
        Table(
            header=(
                Cell("GPU", bold=True),
                Cell("What it is", bold=True),
                Cell("Best for", bold=True),
            ),
            rows=tuple(rows),
            column_weights=(1.15, 2.1, 1.35),
            font_size_pt=8.5,
            stripes=False,
        )
    )
    if content.best_for:
        flow.heading("Best for", level=2, reserve_pt=40)
        rows = []
        caveats: list[str] = []
        for line in content.best_for:
            value = line.value_text
            if line.caveat:
                if line.caveat not in caveats:
                    caveats.append(line.caveat)
                value += " " + "*" * (caveats.index(line.caveat) + 1)
            rows.append(
                TableRow(
                    (
                        Cell(line.title),
                        Cell(" and ".join(line.winner_names), bold=True),
                        Cell(value),
                        Cell(_runner_up(line), muted=True),
                    )
                )
            )
        flow.table(
            Table(
                header=(
                    Cell("Best for", bold=True),
                    Cell("GPU", bold=True),
                    Cell("Value", bold=True),
                    Cell("Next best", bold=True),
                ),
                rows=tuple(rows),
                column_weights=(1.45, 1.25, 1.0, 1.7),
                font_size_pt=8.5,
            )
        )
        for number, caveat in enumerate(caveats, start=1):
            flow.text(f"{'*' * number} {caveat}.", size_pt=8, color=MUTED_COLOR)
    else:
        flow.text(
            'No figure is known for two or more of these GPUs, so no "best for" can be given.',
            size_pt=9.5,
        )


def _runner_up(line: BestFor) -> str:
    if not line.runner_up_name:
        return "—"
    # A forced line break (U+2028) keeps the value whole under the name.
    return f"{line.runner_up_name}\u2028{line.runner_up_value}"


def _spec_table(flow: Flow, content: ReportContent) -> None:
    flow.heading("Specifications", reserve_pt=80)
    count = len(content.spec_columns)
    header = (
        Cell("", bold=True),
        *(
            Cell(name, bold=True, swatch=color)
            for name, color in zip(
                content.spec_columns, gpu_colors([gpu.id for gpu in content.gpus]), strict=True
            )
        ),
    )
    rows: list[TableRow] = []
    for group in content.spec_groups:
        rows.append(TableRow((Cell(group.title, bold=True),), group=True))
        for row in group.rows:
            cells = [Cell(row.label)]
            for cell in row.cells:
                cells.append(
                    Cell(
                        cell.text,
                        bold=cell.best,
                        fill=BEST_FILL if cell.best else None,
                        align_right=row.numeric,
                        muted=cell.text == "n/a",
                    )
                )
            rows.append(TableRow(tuple(cells)))
    label_weight = 1.7 if count <= 4 else 1.45
    flow.table(
        Table(
            header=tuple(header),
            rows=tuple(rows),
            column_weights=(label_weight, *([1.0] * count)),
            font_size_pt=8.0 if count <= 4 else 7.5,
        )
    )
    flow.text(
        "Best value in each row: bold on green. n/a: not in the catalog. Tensor figures are "
        "dense (no sparsity); see Notes.",
        size_pt=8,
        color=MUTED_COLOR,
    )


@dataclass(frozen=True, slots=True)
class ChartSpec:
    key: str
    title: str
    caption: str
    #: height / width of the chart block
    aspect: float


CHART_SPECS: tuple[ChartSpec, ...] = (
    ChartSpec(
        "radar",
        "Spec radar",
        "Each axis is one figure, scaled so that the outer ring is the largest value among "
        "the compared GPUs (named under the axis label); tensor figures are dense. A missing "
        "figure leaves a gap.",
        0.62,
    ),
    ChartSpec(
        "scatter",
        "Price and performance",
        "Dense FP16 tensor TFLOPS against catalog price. Grey points are the rest of the "
        "catalog; the line is the Pareto frontier: no GPU is both cheaper and faster than a "
        "GPU on it.",
        0.62,
    ),
)


@dataclass(frozen=True, slots=True)
class ReportCharts:
    """The charts, recorded as vector drawings at their size on the page.

    Charts are Qt graphics scenes and must be built on the GUI thread; the
    recorded pictures can then be painted into the PDF on any thread.
    """

    paper: str
    pictures: dict[str, tuple[QPicture, QSizeF]]
    #: Captions that replace a chart spec's own (the radar's scale and outer ring as drawn).
    captions: dict[str, str] = field(default_factory=dict)


def body_rect(paper: str) -> tuple[QRectF, QRectF]:
    """The page and the area content may use, in device units, for ``paper``."""
    page = QRectF(QPageSize(PAPER_SIZES[paper]).rectPixels(RESOLUTION_DPI))
    body = QRectF(
        MARGIN_X_MM * MM,
        MARGIN_TOP_MM * MM,
        page.width() - 2 * MARGIN_X_MM * MM,
        page.height() - (MARGIN_TOP_MM + MARGIN_BOTTOM_MM) * MM,
    )
    return page, body


def prepare_charts(
    entries: Sequence[CatalogEntry],
    catalog: Catalog,
    *,
    paper: Paper | str = "a4",
    radar_axes: Sequence[str] | None = None,
    radar_normalisation: NormalisationChoice | None = None,
) -> ReportCharts:
    """Draw the report's charts into vector pictures (call on the GUI thread).

    ``radar_axes`` and ``radar_normalisation`` draw the radar as the Compare tab shows
    it (axes, outer ring, scale); by default its default axes on the selection's maximum,
    linear. The radar's caption says which.

    Raises:
        RuntimeError: called from another thread than the application's.
        ValueError: an unknown paper size.
    """
    from PySide6.QtCore import QThread
    from PySide6.QtWidgets import QApplication

    if paper not in PAPER_SIZES:
        raise ValueError(f"unknown paper size {paper!r}: use 'a4' or 'letter'")
    ensure_application()
    app = QApplication.instance()
    if app is None or QThread.currentThread() is not app.thread():
        raise RuntimeError("report charts must be prepared on the GUI thread")
    report_font_family()  # load the bundled font here, not on a worker thread
    _, body = body_rect(paper)
    pictures: dict[str, tuple[QPicture, QSizeF]] = {}
    for spec in CHART_SPECS:
        size = QSizeF(body.width(), body.width() * spec.aspect)
        target = QRectF(QPointF(0, 0), size)
        picture = QPicture()
        painter = QPainter(picture)
        try:
            if spec.key == "radar":
                render_radar(
                    painter,
                    target,
                    list(entries),
                    catalog,
                    axes=radar_axes,
                    normalisation=radar_normalisation,
                )
            else:
                render_scatter(painter, target, list(entries), catalog)
        finally:
            painter.end()
        pictures[spec.key] = (picture, size)
    return ReportCharts(paper, pictures, {"radar": radar_caption(radar_normalisation)})


def radar_caption(choice: NormalisationChoice | None) -> str:
    """The radar's caption for its outer ring and scale."""
    choice = choice if choice is not None else NormalisationChoice()
    ring = (
        "the largest value in the whole catalog"
        if choice.reference is Reference.CATALOG
        else "the largest value among the compared GPUs"
    )
    if choice.scale is Scale.LOG:
        return (
            "Each axis is one figure on a logarithmic scale: a ring at every power of ten "
            f"(×10 from one ring to the next, on every axis), the outer ring the power of "
            f"ten at or above {ring} (the range is named under the axis label); tensor "
            "figures are dense. A missing figure leaves a gap."
        )
    return (
        f"Each axis is one figure, scaled so that the outer ring is {ring} (named "
        "under the axis label); tensor figures are dense. A missing figure leaves a gap."
    )


def _play(painter: QPainter, picture: QPicture, rect: QRectF) -> None:
    painter.save()
    painter.translate(rect.topLeft())
    # A picture replays scaled by device dpi / its own dpi; it was recorded in
    # device units already, so undo that scaling.
    factor = picture.logicalDpiX() / RESOLUTION_DPI
    painter.scale(factor, factor)
    painter.drawPicture(QPointF(0, 0), picture)
    painter.restore()


def _picture_painter(picture: QPicture) -> Callable[[QPainter, QRectF], None]:
    def paint(painter: QPainter, rect: QRectF) -> None:
        _play(painter, picture, rect)

    return paint


def _charts(flow: Flow, content: ReportContent, charts: ReportCharts) -> None:
    for index, spec in enumerate(CHART_SPECS):
        picture, size = charts.pictures[spec.key]
        title = spec.title if index else f"Charts: {spec.title.lower()}"
        flow.heading(title, reserve_pt=size.height() / PT + 30)
        flow.block(size.height(), _picture_painter(picture))
        flow.space(3)
        caption = charts.captions.get(spec.key, spec.caption)
        if spec.key == "scatter" and content.scatter_missing:
            missing = ", ".join(content.scatter_missing)
            caption += f" Not shown (no price or no FP16 tensor figure in the catalog): {missing}."
        flow.text(caption, size_pt=8, color=MUTED_COLOR)


def _this_machine(flow: Flow, content: ReportContent) -> None:
    local = content.local
    assert local is not None
    flow.heading("This machine")
    flow.text(local.message, size_pt=9.5, color=TEXT_COLOR if local.available else MUTED_COLOR)
    if not local.available:
        return
    for line in local.detection:
        flow.text(line, size_pt=9, after_pt=1.5)
    if local.gpus:
        flow.space(3)
        flow.table(
            Table(
                header=(
                    Cell("Detected GPU", bold=True),
                    Cell("Memory", bold=True),
                    Cell("Catalog entry", bold=True),
                ),
                rows=tuple(
                    TableRow((Cell(label), Cell(memory, align_right=True), Cell(match)))
                    for label, memory, match in local.gpus
                ),
                column_weights=(2.0, 0.8, 2.2),
                font_size_pt=8.5,
            )
        )
    for bench in local.benchmarks:
        flow.heading(bench.title, level=2, reserve_pt=50)
        flow.text(bench.details, size_pt=8.5, color=MUTED_COLOR)
        flow.table(
            Table(
                header=(
                    Cell("Test", bold=True),
                    Cell("Measured", bold=True),
                    Cell("Catalog peak", bold=True),
                    Cell("% of peak", bold=True),
                ),
                rows=tuple(
                    TableRow(
                        (
                            Cell(row.label),
                            Cell(row.measured, align_right=True),
                            Cell(row.peak, align_right=True, muted=row.peak == "n/a"),
                            Cell(row.percent, align_right=True, muted=row.percent == "n/a"),
                        )
                    )
                    for row in bench.rows
                ),
                column_weights=(1.6, 1.2, 1.2, 0.8),
                font_size_pt=8.5,
            )
        )
        for note in bench.notes:
            flow.text(note, size_pt=8.5, indent_pt=2, after_pt=1.5, bullet=True)
    for note in local.notes:
        flow.text(note, size_pt=8.5, color=MUTED_COLOR, after_pt=1.5)


def _speed(flow: Flow, content: ReportContent) -> None:
    speed = content.speed
    assert speed is not None
    flow.heading("How fast")
    flow.text(speed.heading, size_pt=9.5)
    flow.space(3)
    headers = ("GPU", "GPUs", "tokens/s", "range", "limit", speed.cost_header)
    flow.table(
        Table(
            header=tuple(Cell(text, bold=True) for text in headers),
            rows=tuple(
                TableRow(
                    (
                        Cell(name),
                        Cell(count, align_right=True),
                        Cell(value, align_right=True, muted=not count),
                        Cell(spread, align_right=True),
                        Cell(limit),
                        Cell(cost, align_right=True),
                    )
                )
                for name, count, value, spread, limit, cost in speed.rows
            ),
            column_weights=(2.2, 0.6, 1.0, 1.3, 0.9, 1.0),
            font_size_pt=8.5,
        )
    )
    flow.space(3)
    for line in speed.measured:  # the user's measurements of the same workload
        flow.text(line, size_pt=8.5, after_pt=1.5)
    _speed_under_load(flow, content)
    for line in speed.basis:
        flow.text(line, size_pt=8, color=MUTED_COLOR, after_pt=1.5)


def _speed_under_load(flow: Flow, content: ReportContent) -> None:
    """Serving's latency table and curve (the How fast? page's), then what is not supported."""
    speed = content.speed
    assert speed is not None
    if speed.latency_rows:
        flow.space(3)
        flow.table(
            Table(
                header=tuple(Cell(text, bold=True) for text in speed.latency_header),
                rows=tuple(
                    TableRow(
                        tuple(Cell(text, align_right=column > 1) for column, text in enumerate(row))
                    )
                    for row in speed.latency_rows
                ),
                column_weights=(2.2, 1.4, *([1.0] * (len(speed.latency_header) - 2))),
                font_size_pt=8.5,
            )
        )
    curve = speed.curve
    if curve is not None:
        height = flow.body.width() * 0.55
        flow.heading("Latency against request rate", level=2, reserve_pt=height / PT + 20)

        def paint(painter: QPainter, rect: QRectF) -> None:
            # chart fonts are sized for 12-pixel text: about 8.5 pt here
            paint_latency(painter, rect, curve, scale=0.72 * PT)

        flow.block(height, paint)
        flow.space(3)
        flow.text(
            "p50 and p90 time to first token and time per output token of the simulated "
            "benchmark at each request rate (Poisson arrivals), in the layout the table "
            "names; the dotted lines are the SLO's bounds.",
            size_pt=8,
            color=MUTED_COLOR,
        )
    if speed.not_supported:
        flow.space(3)
        flow.text(
            f"Not supported ({len(speed.not_supported)}, never ranked): the engine cannot "
            "run this request on them.",
            size_pt=8.5,
            after_pt=1.5,
        )
        for line in speed.not_supported:
            flow.text(line, size_pt=8, indent_pt=2, after_pt=1.5, bullet=True)


def _fleet(flow: Flow, content: ReportContent) -> None:
    fleet = content.fleet
    assert fleet is not None
    flow.heading("Fleet")
    flow.text(fleet.heading, size_pt=9.5)
    if fleet.models:
        flow.space(3)
        flow.table(
            Table(
                header=(
                    Cell("Model", bold=True),
                    Cell("Devices", bold=True),
                    Cell("Measured (median)", bold=True),
                    Cell("Range", bold=True),
                    Cell("Flagged", bold=True),
                ),
                rows=tuple(
                    TableRow(
                        (
                            Cell(model),
                            Cell(devices, align_right=True),
                            Cell(measured, muted=measured == "not measured"),
                            Cell(spread, align_right=True),
                            Cell(flagged, align_right=True),
                        )
                    )
                    for model, devices, measured, spread, flagged in fleet.models
                ),
                column_weights=(1.8, 0.7, 1.8, 1.2, 0.7),
                font_size_pt=8.5,
            )
        )
    if fleet.reference:
        flow.heading("Against the published reference", level=2, reserve_pt=30)
        for line in fleet.reference:
            flow.text(line, size_pt=8.5, indent_pt=2, after_pt=1.5, bullet=True)
    for title, lines in (("Outliers", fleet.outliers), ("Failed nodes", fleet.failed)):
        if lines:
            flow.heading(title, level=2, reserve_pt=30)
            for position, line in enumerate(lines):
                # A GPU slow against its fleet median stands out: bold, in the alarm colour.
                slow = title == "Outliers" and position < fleet.slow
                flow.text(
                    line,
                    size_pt=8.5,
                    indent_pt=2,
                    after_pt=1.5,
                    bullet=True,
                    bold=slow,
                    color=SLOW_COLOR if slow else TEXT_COLOR,
                )
    for line in fleet.left_out:
        flow.text(line, size_pt=8.5, color=MUTED_COLOR, after_pt=1.5)


def _notes(flow: Flow, content: ReportContent) -> None:
    flow.heading("Notes")
    for section in content.notes:
        flow.heading(section.title, level=2, reserve_pt=24)
        for item in section.items:
            flow.text(item, size_pt=8.5, indent_pt=2, after_pt=2, bullet=True)
