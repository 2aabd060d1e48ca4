"""The Compare tab: state drives the table and all three charts; controls change the geometry."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import pytest
from catalog_factory import make_entry
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QGuiApplication, QImage
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.compare.radar import DEFAULT_RADAR_AXES
from gpudesk.measured import MeasuredSeries
from gpudesk.render.export import export_chart
from gpudesk.render.radar import MEASURED_SERIES_ID
from gpudesk.ui import theme
from gpudesk.ui.compare_view import CompareView
from gpudesk.ui.state import AppState

_PRICE: dict[str, Any] = {"price_date": dt.date(2025, 1, 1), "price_kind": "street"}


def _entries() -> list[CatalogEntry]:
    """Five GPUs with round numbers; ``small`` has no FP64, ``nopricegpu`` no price."""
    return [
        make_entry(
            "small",
            name="Small GPU",
            memory_gb=24,
            bandwidth_gbs=1000,
            fp32_tflops=80.0,
            fp16_tensor_tflops=160.0,
            price_usd=1600,
            tdp_w=450,
            **_PRICE,
        ),
        make_entry(
            "big",
            name="Big GPU",
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
            "huge",
            name="Huge GPU",
            memory_gb=96,
            bandwidth_gbs=4000,
            fp32_tflops=60.0,
            fp16_tensor_tflops=800.0,
            fp64_tflops=30.0,
            price_usd=32000,
            tdp_w=400,
            **_PRICE,
        ),
        make_entry(
            "nopricegpu",
            name="Unpriced GPU",
            memory_gb=48,
            bandwidth_gbs=900,
            fp32_tflops=40.0,
            fp16_tensor_tflops=180.0,
            fp64_tflops=1.0,
            tdp_w=300,
        ),
        make_entry(
            "flagship",
            name="Flagship GPU",
            memory_gb=192,
            bandwidth_gbs=8000,
            fp32_tflops=100.0,
            fp16_tensor_tflops=2000.0,
            fp64_tflops=40.0,
            price_usd=40000,
            tdp_w=1000,
            **_PRICE,
        ),
    ]


@pytest.fixture
def state() -> AppState:
    return AppState(catalog=Catalog(entries=_entries()))


@pytest.fixture
def view(qtbot: QtBot, state: AppState) -> CompareView:
    widget = CompareView(state)
    qtbot.addWidget(widget)
    widget.resize(1400, 850)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _radar_ids(view: CompareView) -> list[str]:
    return [series.id for series in view.radar.item.series]


def test_empty_state_until_two_gpus(view: CompareView, state: AppState) -> None:
    assert view.stack.currentWidget() is view.empty_label
    assert "Ctrl+D" in view.empty_label.text()
    state.set_compare(["small"])
    assert view.stack.currentWidget() is view.empty_label
    assert view.comparison is None
    state.set_compare(["small", "big"])
    assert view.stack.currentWidget() is view.splitter
    assert view.comparison is not None


def test_selecting_gpus_updates_table_and_all_charts(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big", "huge"])
    assert [column.id for column in view.comparison.columns] == ["small", "big", "huge"]
    assert _radar_ids(view) == ["small", "big", "huge"]
    assert [point.id for point in view.scatter.plot.selection_points] == ["small", "big", "huge"]
    assert {bar.id for bar in view.bars.plot.bars} == {"small", "big", "huge"}

    state.add_to_compare("nopricegpu")
    assert _radar_ids(view) == ["small", "big", "huge", "nopricegpu"]
    # no price: the scatter names it as not plotted instead of dropping it silently
    assert [point.id for point in view.scatter.plot.selection_points] == ["small", "big", "huge"]
    assert view.scatter.plot.missing_names == ["Unpriced GPU"]
    assert "Unpriced GPU" in view.scatter_note.text()
    # bars: FP16 tensor, best first
    assert [bar.id for bar in view.bars.plot.bars] == ["huge", "big", "nopricegpu", "small"]

    state.remove_from_compare("big")
    assert _radar_ids(view) == ["small", "huge", "nopricegpu"]
    assert "big" not in {bar.id for bar in view.bars.plot.bars}


def test_scatter_context_and_frontier(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big"])
    plot = view.scatter.plot
    assert {point.id for point in plot.context_points} == {"huge", "flagship"}
    # price vs FP16 tensor: big (16k, 320) is beaten by nobody cheaper-and-faster? small is
    # cheaper but slower, huge is faster but dearer -> all four priced GPUs are on it
    assert plot.frontier_ids == ["small", "big", "huge", "flagship"]
    # hover text of each point: its name and both raw values with units
    tips = [str(point.data()) for point in plot.selection_item.points()]
    assert tips[0].splitlines() == [
        "Small GPU",
        "Price: 1,600 USD",
        "FP16 tensor, dense: 160.0 TFLOPS",
    ]
    assert [label.toPlainText() for label in plot.label_items()] == ["Small GPU", "Big GPU"]
    view.y_combo.setCurrentIndex(view.y_combo.findData("fp32_tflops"))
    # FP32: small (1.6k, 80) beats big (16k, 20) and huge (32k, 60)
    assert plot.frontier_ids == ["small", "flagship"]
    view.log_x_check.setChecked(True)
    small = next(point for point in plot.selection_points if point.id == "small")
    assert small.plot_x == pytest.approx(math.log10(1600))
    assert small.x == 1600


def test_axis_choice_changes_the_polygons(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big", "huge"])
    item = view.radar.item
    assert item.axes == DEFAULT_RADAR_AXES
    before = item.polygon("big")
    assert len(before) == 6
    view.axis_picker.set_checked_axes(
        ["memory_gb", "bandwidth_gbs", "fp32_tflops", "fp16_tensor_tflops", "fp32_tflops_per_w"]
    )
    after = item.polygon("big")
    assert len(after) == 5
    assert item.axes[-1] == "fp32_tflops_per_w"
    # the first axis stays at 12 o'clock: same x as the centre
    first = after[0]
    assert first is not None and first.x() == pytest.approx(item.layout.center.x())


def test_normalisation_choice_changes_the_radii(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big", "huge"])
    item = view.radar.item
    memory = DEFAULT_RADAR_AXES.index("memory_gb")

    def radius(series_id: str) -> float:
        point = item.series_points[series_id][memory]
        assert point is not None
        return point.radius

    assert view.reference_combo.currentData() == "selection"  # the default
    assert radius("huge") == pytest.approx(1.0)  # selection max: huge itself
    view.reference_combo.setCurrentIndex(view.reference_combo.findData("catalog"))
    assert radius("huge") == pytest.approx(96 / 192)  # catalog max: flagship's 192 GB
    view.reference_combo.setCurrentIndex(view.reference_combo.findData("selection"))
    assert radius("huge") == pytest.approx(1.0)  # selection max: huge itself
    assert radius("small") == pytest.approx(24 / 96)
    pixel = item.polygon("huge")[memory]
    assert pixel is not None
    assert item.layout.center.y() - pixel.y() == pytest.approx(item.layout.radius)
    linear_small = radius("small")
    view.scale_combo.setCurrentIndex(view.scale_combo.findData("log"))
    # log in powers of ten: 24..96 GB within 10..100, the minimum off the hub
    decades = item._normalisation.decades
    assert decades >= 1
    bottom = 100 / 10**decades
    assert radius("small") == pytest.approx(0.2 + 0.8 * math.log10(24 / bottom) / decades)
    assert radius("small") > 0.2 + 1e-6
    assert radius("small") != pytest.approx(linear_small)
    assert radius("huge") == pytest.approx(0.2 + 0.8 * math.log10(96 / bottom) / decades)


def test_missing_values_are_gaps_with_legend_note(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big"])
    item = view.radar.item
    fp64 = DEFAULT_RADAR_AXES.index("fp64_tflops")
    assert item.series_points["small"][fp64] is None
    assert item.polygon("small")[fp64] is None
    legend = [entry.text for entry in item.layout.legend]
    assert legend[0] == "Small GPU (n/a: FP64)"
    assert legend[1] == "Big GPU"


def test_radar_hover_shows_raw_value_and_unit(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big"])
    item = view.radar.item
    memory = DEFAULT_RADAR_AXES.index("memory_gb")
    pixel = item.polygon("big")[memory]
    assert pixel is not None
    text = item.tooltip_at(QPointF(pixel.x() + 2, pixel.y() + 1))
    assert text is not None
    assert text.splitlines()[:2] == ["Big GPU", "Memory: 80 GiB"]
    assert item.tooltip_at(QPointF(3, 3)) is None


def test_memory_rows_explain_the_vendors_gb(view: CompareView, state: AppState) -> None:
    """Memory reads GiB beside names like "H100 SXM5 80GB": its row label says why."""
    state.set_compare(["small", "big"])
    model = view.table_model
    tips = {
        str(model.headerData(row, Qt.Orientation.Vertical)): model.headerData(
            row, Qt.Orientation.Vertical, Qt.ItemDataRole.ToolTipRole
        )
        for row in range(model.rowCount())
    }
    assert "a vendor's '80 GB' is 80 GiB" in tips["Memory (GiB)"]
    assert "80 GB" not in tips["Bandwidth (GB/s)"]


def test_radar_labels_stay_inside_the_chart(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big", "huge", "nopricegpu", "flagship"])
    item = view.radar.item
    bounds = item.boundingRect()
    for rect in item.layout.label_rects:
        assert bounds.contains(rect), rect
    for entry in item.layout.legend:
        assert bounds.contains(entry.text_rect)
    for first, second in zip(item.layout.label_rects, item.layout.label_rects[1:], strict=False):
        assert not first.intersects(second)


def test_axis_picker_keeps_five_to_eight(view: CompareView) -> None:
    picker = view.axis_picker
    checkable = Qt.ItemFlag.ItemIsUserCheckable
    assert len(picker.checked_axes()) == 6
    five = list(DEFAULT_RADAR_AXES[:5])
    picker.set_checked_axes(five)
    for row in range(picker.count()):
        item = picker.item(row)
        is_checked = item.checkState() == Qt.CheckState.Checked
        assert bool(item.flags() & checkable) is not is_checked  # checked ones are locked
    eight = [str(picker.item(row).data(Qt.ItemDataRole.UserRole)) for row in range(8)]
    picker.set_checked_axes(eight)
    unchecked = [picker.item(row) for row in range(8, picker.count())]
    assert unchecked and all(not item.flags() & checkable for item in unchecked)
    with pytest.raises(ValueError):
        picker.set_checked_axes(five[:4])


def test_table_best_highlight_and_baseline_ratios(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big", "huge"])
    model = view.table_model
    row = model.row_of("memory_gb")
    assert model.data(model.index(row, 2)) == "96"
    assert model.data(model.index(row, 2), Qt.ItemDataRole.BackgroundRole) is not None
    assert model.data(model.index(row, 0), Qt.ItemDataRole.BackgroundRole) is None
    price = model.row_of("price_usd")
    assert model.data(model.index(price, 0), Qt.ItemDataRole.BackgroundRole) is not None
    view.set_baseline("small")
    row = model.row_of("memory_gb")
    assert model.data(model.index(row, 0)) == "24"
    assert model.data(model.index(row, 1)) == "80 (×3.3)"
    assert model.data(model.index(row, 2)) == "96 (×4.0)"
    assert "80" in str(model.data(model.index(row, 1), Qt.ItemDataRole.ToolTipRole))
    assert "baseline" in str(model.headerData(0, Qt.Orientation.Horizontal))
    # the baseline survives a selection change that keeps it
    state.add_to_compare("flagship")
    assert view.baseline_id() == "small"


def test_copy_as_text_and_csv_export(view: CompareView, state: AppState, tmp_path: Path) -> None:
    state.set_compare(["small", "big"])
    view.copy_as_text()
    text = QGuiApplication.clipboard().text()
    assert text.splitlines()[0].split() == ["Small", "GPU", "Big", "GPU"]
    assert "* best in row" in text
    target = tmp_path / "table.csv"
    view.export_csv(target)
    lines = target.read_text("utf-8").splitlines()
    assert lines[0].startswith("group,key,label,unit,Small GPU,Big GPU")
    assert any(line.startswith("Memory,memory_gb,Memory,GiB,24,80,big") for line in lines)


def test_measured_series_in_radar_table_and_bars(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big"])
    state.set_measured(
        MeasuredSeries(
            label="This machine (measured)",
            catalog_id="small",
            values={"fp32_tflops": 70.0, "bandwidth_gbs": 900.0},
            measured_at=dt.datetime(2025, 5, 1, 12, 0),
        )
    )
    item = view.radar.item
    assert _radar_ids(view)[-1] == MEASURED_SERIES_ID
    points = item.series_points[MEASURED_SERIES_ID]
    present = [DEFAULT_RADAR_AXES[i] for i, point in enumerate(points) if point is not None]
    assert present == ["bandwidth_gbs", "fp32_tflops"]  # others are gaps, not zeros
    assert view.comparison is not None and view.comparison.columns[-1].measured
    view.bar_combo.setCurrentIndex(view.bar_combo.findData("fp32_tflops"))
    assert [bar.id for bar in view.bars.plot.bars] == ["small", "measured", "big"]
    state.set_measured(None)
    assert MEASURED_SERIES_ID not in _radar_ids(view)


def test_add_detected_gpu_button(view: CompareView, state: AppState, qtbot: QtBot) -> None:
    state.set_compare(["small", "big"])
    assert not view.add_detected_button.isVisible()
    state.set_detected(["huge"])
    assert view.add_detected_button.isVisible()
    qtbot.mouseClick(view.add_detected_button, Qt.MouseButton.LeftButton)
    assert state.compare_ids == ["small", "big", "huge"]
    assert not view.add_detected_button.isVisible()


def test_theme_switch_restyles_charts(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big"])
    theme.notifier().changed.emit(True)
    try:
        assert view.radar.item._style.dark
        assert view.radar.backgroundBrush().color().lightness() < 80
    finally:
        theme.notifier().changed.emit(False)
    assert not view.radar.item._style.dark


@pytest.mark.parametrize("chart", ["radar", "scatter", "bars"])
@pytest.mark.parametrize("image_format", ["png", "svg"])
def test_chart_export_writes_files(
    view: CompareView, state: AppState, tmp_path: Path, chart: str, image_format: str
) -> None:
    state.set_compare(["small", "big", "huge"])
    view.chart_tabs.setCurrentIndex(["radar", "scatter", "bars"].index(chart))
    widget = getattr(view, chart)
    target = tmp_path / f"chart.{image_format}"
    export_chart(widget, target, image_format)
    data = target.read_bytes()
    if image_format == "png":
        image = QImage(str(target))
        assert not image.isNull()
        # a fixed report aspect (4:3), not the widget's shape on screen
        assert (image.width(), image.height()) == (2 * 960, 2 * 720)
        # not a blank canvas: more than a handful of distinct colors
        colors = {
            image.pixel(x, y)
            for x in range(0, image.width(), 7)
            for y in range(0, image.height(), 7)
        }
        assert len(colors) > 10
    else:
        text = data.decode("utf-8")
        assert text.lstrip().startswith("<?xml")
        assert "Big GPU" in text


def test_chart_export_to_missing_folder_raises(
    view: CompareView, state: AppState, tmp_path: Path
) -> None:
    state.set_compare(["small", "big"])
    with pytest.raises(OSError):
        export_chart(view.radar, tmp_path / "no" / "such" / "radar.png", "png")


def test_hovering_a_vertex_sets_the_tooltip(
    view: CompareView, state: AppState, qtbot: QtBot
) -> None:
    state.set_compare(["small", "big"])
    item = view.radar.item
    pixel = item.polygon("big")[DEFAULT_RADAR_AXES.index("bandwidth_gbs")]
    assert pixel is not None
    viewport = view.radar.viewport()
    qtbot.mouseMove(viewport, view.radar.mapFromScene(item.mapToScene(pixel)))
    qtbot.waitUntil(lambda: item.toolTip() != "", timeout=2000)
    assert item.toolTip().splitlines()[:2] == ["Big GPU", "Bandwidth: 2,000 GB/s"]


def test_six_gpus_all_show_and_two_stretch(qtbot: QtBot) -> None:
    state = AppState()  # the bundled catalog: real names and numbers
    view = CompareView(state)
    qtbot.addWidget(view)
    view.resize(1340, 700)  # a 1366x768 screen's window
    view.show()
    qtbot.waitExposed(view)
    ids = ["h100-sxm5", "a100-80gb-sxm4", "rtx-4090", "rtx-5090", "mi300x", "rtx-a6000"]
    assert all(state.catalog.by_id(gpu_id) is not None for gpu_id in ids)
    state.set_compare(ids)
    table = view.table
    header = table.horizontalHeader()
    shown = sum(header.sectionSize(column) for column in range(header.count()))
    # every GPU column fits the table's viewport: no "best" hidden off to the right
    assert shown <= table.viewport().width() + 1
    state.set_compare(ids[:2])
    shown = sum(header.sectionSize(column) for column in range(header.count()))
    # two GPUs share out the table's width instead of leaving empty space
    assert shown >= table.viewport().width() - header.count()


def test_removing_a_gpu_keeps_the_others_colors(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big", "huge"])
    before = {series.id: series.color.name() for series in view.radar.item.series}
    state.remove_from_compare("big")
    after = {series.id: series.color.name() for series in view.radar.item.series}
    assert after == {key: before[key] for key in ("small", "huge")}


def test_scatter_axes_fit_the_data_and_label_the_grey_frontier(
    view: CompareView, state: AppState
) -> None:
    state.set_compare(["small", "big"])
    plot = view.scatter.plot
    (x_low, x_high), (y_low, _y_high) = plot.getViewBox().viewRange()
    assert x_low >= 0.0 and y_low >= 0.0  # prices and TFLOPS never pad below zero
    # the grey GPUs on the frontier are named
    assert {label.toPlainText() for label in plot.frontier_labels} == {
        "Huge GPU",
        "Flagship GPU",
    }
    view.log_x_check.setChecked(True)
    (x_low, x_high), _ = plot.getViewBox().viewRange()
    assert 3.0 < x_low < math.log10(1600) and x_high < 5.0  # fits 1.6k..32k, not 0.01
    ticks = plot.getAxis("bottom")._tickLevels
    assert ticks is not None
    # 1.6k..40k spans under two decades: 1-2-5 steps, compact dollars, nothing crowded
    assert [label for _, label in ticks[0]] == ["$2k", "$5k", "$10k", "$20k"]


def test_radar_fills_up_to_three_gpus_and_outlines_more(view: CompareView, state: AppState) -> None:
    state.set_compare(["small", "big", "huge"])
    item = view.radar.item
    assert all(item.fills_series(series) for series in item.series)
    state.add_to_compare("flagship")
    assert not any(item.fills_series(series) for series in item.series)


def test_six_gpus_chosen_before_the_tab_is_shown_still_fit(qtbot: QtBot) -> None:
    state = AppState()
    view = CompareView(state)
    qtbot.addWidget(view)
    view.resize(1340, 700)
    state.set_compare(
        ["h100-sxm5", "a100-80gb-sxm4", "rtx-4090", "rtx-5090", "mi300x", "rtx-a6000"]
    )
    view.show()  # the Compare tab opened after the selection was made
    header = view.table.horizontalHeader()

    def all_columns_fit() -> bool:
        shown = sum(header.sectionSize(column) for column in range(header.count()))
        return shown <= view.table.viewport().width() + 1

    qtbot.waitUntil(all_columns_fit, timeout=3000)


_SIX = ["rtx-4090", "a100-80gb-pcie", "h100-sxm5", "mi300x", "gaudi-3", "l40s"]


def _six_at_1366(qtbot: QtBot) -> CompareView:
    state = AppState()
    view = CompareView(state)
    qtbot.addWidget(view)
    view.resize(1350, 680)  # the Compare tab of a maximised window on a 1366x768 screen
    view.show()
    qtbot.waitExposed(view)
    state.set_compare(_SIX)
    return view


def test_six_gpus_at_1366_put_the_charts_in_a_tab_and_the_table_gets_the_height(
    qtbot: QtBot,
) -> None:
    """ "Charts below" left the table 9 rows and the radar ~170 px at 1366x768."""
    from gpudesk.ui.compare_view import ChartLayout

    view = _six_at_1366(qtbot)
    qtbot.waitUntil(lambda: view.chart_layout() is ChartLayout.TAB, timeout=3000)
    assert view.stack.currentWidget() is view.layout_tabs
    row_px = view.table.verticalHeader().defaultSectionSize()
    qtbot.waitUntil(lambda: view.table.viewport().height() // row_px >= 20, timeout=3000)
    view.layout_tabs.setCurrentWidget(view.chart_tabs)
    qtbot.waitUntil(lambda: view.radar.height() >= 450, timeout=3000)
    # A user's pick stays: below, the table keeps two thirds of the height (on a page
    # tall enough for the radar's controls, its minimum).
    view.resize(1350, 1300)
    view._on_layout_clicked()
    view.set_chart_layout(ChartLayout.BELOW)
    QGuiApplication.processEvents()
    assert view.stack.currentWidget() is view.splitter
    table_px, charts_px = view.splitter.sizes()
    assert table_px >= 1.8 * charts_px, (table_px, charts_px)
    view.resize(1900, 1000)
    QGuiApplication.processEvents()
    assert view.chart_layout() is ChartLayout.BELOW


def test_the_tab_layout_goes_back_beside_on_a_wide_window(qtbot: QtBot) -> None:
    from gpudesk.ui.compare_view import ChartLayout

    view = _six_at_1366(qtbot)
    qtbot.waitUntil(lambda: view.chart_layout() is ChartLayout.TAB, timeout=3000)
    view.resize(3000, 1000)
    qtbot.waitUntil(lambda: view.chart_layout() is ChartLayout.BESIDE, timeout=3000)
    assert view.table_panel.parent() is view.splitter


def test_row_labels_are_whole_when_there_is_room(qtbot: QtBot) -> None:
    """ "FP16 tensor (dens...FLOPS per 1k USD)" was elided with room to spare."""
    view = _six_at_1366(qtbot)
    header = view.table.verticalHeader()
    model = view.table_model
    label = next(
        str(model.headerData(row, Qt.Orientation.Vertical))
        for row in range(model.rowCount())
        if "per price" in str(model.headerData(row, Qt.Orientation.Vertical))
    )
    needed = header.fontMetrics().horizontalAdvance(label)
    qtbot.waitUntil(lambda: header.width() >= needed + 8, timeout=3000)
    # and every GPU column still fits
    columns = view.table.horizontalHeader()
    shown = sum(columns.sectionSize(column) for column in range(columns.count()))
    assert shown <= view.table.viewport().width() + 1


@pytest.mark.parametrize("chart", ["radar", "scatter", "bars"])
def test_a_strip_shaped_chart_exports_at_the_report_aspect(
    qtbot: QtBot, state: AppState, tmp_path: Path, chart: str
) -> None:
    """A chart stretched across a wide window was written as a 3060x882 strip; hidden
    (another chart tab current) it must be laid out at the export size too."""
    view = CompareView(state)
    qtbot.addWidget(view)
    view.resize(2400, 560)
    view.show()
    qtbot.waitExposed(view)
    state.set_compare(["small", "big", "huge"])
    view.chart_tabs.setCurrentIndex(3)  # Cloud rates: the chart exported is hidden
    widget = getattr(view, chart)
    before = widget.size()
    target = tmp_path / "chart.png"
    export_chart(widget, target, "png")
    image = QImage(str(target))
    assert (image.width(), image.height()) == (1920, 1440)
    assert widget.size() == before  # back as it was on screen
    # the plot fills the canvas: something is drawn in its lower quarter
    background = image.pixel(5, image.height() - 5)
    lower = {
        image.pixel(x, y)
        for x in range(0, image.width(), 9)
        for y in range(image.height() * 3 // 4, image.height() - 40, 9)
    }
    assert len(lower - {background}) > 3


def test_old_prices_and_rates_carry_a_sign_and_words_not_colour_alone(qtbot: QtBot) -> None:
    today = dt.date.today()
    fresh, old = today - dt.timedelta(days=30), today - dt.timedelta(days=400)

    def priced(entry_id: str, seen: dt.date, rate_seen: dt.date) -> CatalogEntry:
        rate = {
            "provider": "Example Cloud",
            "usd_per_gpu_hour": 2.5,
            "kind": "on_demand",
            "date": rate_seen,
            "source": "https://example.com/pricing",
        }
        return make_entry(
            entry_id,
            price_usd=1000,
            price_kind="street",
            price_date=seen,
            cloud_rates=[rate],
        )

    entries = [
        priced("new", fresh, fresh),
        # a rate 91 days old is past the 90-day limit, though the price is this month's
        priced("oldrate", fresh, today - dt.timedelta(days=91)),
        priced("oldprice", old, today - dt.timedelta(days=90)),
    ]
    state = AppState(catalog=Catalog(entries=entries))
    view = CompareView(state)
    qtbot.addWidget(view)
    state.set_compare(["new", "oldrate", "oldprice"])
    model = view.table_model
    seen, cloud = model.row_of("price_date"), model.row_of("cloud_hourly_usd")

    def cell(row: int, column: int, role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole) -> str:
        return str(model.data(model.index(row, column), role))

    assert cell(seen, 0) == fresh.isoformat() and cell(seen, 1) == fresh.isoformat()
    assert cell(seen, 2) == f"⚠ {old.isoformat()}"
    assert f"price from {old:%Y-%m}, may be out of date" in cell(
        seen, 2, Qt.ItemDataRole.ToolTipRole
    )
    assert not cell(cloud, 0).startswith("⚠") and not cell(cloud, 2).startswith("⚠")
    assert cell(cloud, 1) == "⚠ 2.50"
    assert "over 90 days old" in cell(cloud, 1, Qt.ItemDataRole.ToolTipRole)
    assert "⚠ " not in cell(seen, 0, Qt.ItemDataRole.ToolTipRole)
    # the sign is explained in words under the table
    assert "over 12 months" in view.table_note.text()
    assert "over 90 days" in view.table_note.text()


def test_a_measured_run_says_so_carries_a_cross_and_never_rescales_the_axes(
    view: CompareView, state: AppState, qtbot: QtBot
) -> None:
    """Issue 42 item 1: a CPU's 0.046 TFLOPS pulled every log axis down to 0.001."""
    from gpudesk.compare.radar import Scale

    state.set_compare(["small", "big", "huge"])
    view.scale_combo.setCurrentIndex(view.scale_combo.findData(Scale.LOG.value))
    before = view.radar.item._normalisation
    assert not view.remove_measured_button.isVisible()
    state.set_measured(
        MeasuredSeries(
            label="Xeon CPU (measured, numpy)",
            catalog_id=None,
            values={"fp32_tflops": 0.046, "bandwidth_gbs": 12.0},
            measured_at=dt.datetime(2025, 5, 1, 12, 0),
        )
    )
    assert view.radar.item._normalisation == before, "the spec axes keep their rings"
    assert "and your measured run" in view.title.text()
    button = view.remove_measured_button
    assert button.isVisible() and button.text().startswith("✕")
    assert "Remove" in button.accessibleName()
    assert (
        view.table_model.headerData(3, Qt.Orientation.Horizontal) == "Xeon CPU\n(measured, numpy)"
    )
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert state.measured is None
    assert MEASURED_SERIES_ID not in _radar_ids(view)
    assert not button.isVisible() and "measured" not in view.title.text()


def test_the_radar_has_its_panel_to_itself_and_says_what_its_rings_are(
    view: CompareView, state: AppState, qtbot: QtBot
) -> None:
    """Issue 42 item 5: at 1920 px the axis list beside the radar left it 330 px across,
    its caption was cut ("…of the maximur") and the log radar dropped a ring's label."""
    from PySide6.QtCore import QSizeF
    from PySide6.QtGui import QFontMetricsF

    from gpudesk.compare.radar import Scale, ring_radii
    from gpudesk.render.radar import CAPTION_PX, _wrap_words
    from gpudesk.render.style import chart_font

    state.set_compare(["small", "big", "huge", "nopricegpu", "flagship"])
    view.resize(1920, 1000)
    view.layout_combo.setCurrentIndex(view.layout_combo.findData("beside"))
    qtbot.wait(20)
    panel = view.radar.parentWidget()
    assert panel is not None
    assert view.axis_picker.parentWidget() is not panel, "the axis list opens from a button"
    assert view.radar.width() >= 0.9 * panel.width()
    assert view.radar.item.layout.radius >= 200, view.radar.item.layout.radius
    assert view.charts.axes_button.text() == "Axes (6 of 11)"
    # the caption wraps at any width instead of being cut
    item = view.radar.item
    item.set_size(QSizeF(380, 420))
    caption = f"{item._caption} · {item.ring_note()}"
    metrics = QFontMetricsF(chart_font(CAPTION_PX))
    rect = item.layout.caption_rect
    assert rect is not None
    needed = len(_wrap_words(caption, metrics, rect.width())) * metrics.height()
    assert needed <= rect.height() + 0.5, (needed, rect.height())
    # every ring of the log radar keeps its label, and the caption says what the outer is
    view.scale_combo.setCurrentIndex(view.scale_combo.findData(Scale.LOG.value))
    item.set_size(QSizeF(700, 600))
    normalisation = item._normalisation
    assert normalisation is not None and normalisation.decades >= 2
    rings = ring_radii(Scale.LOG, normalisation.inner, normalisation.decades)
    assert len(item.layout.ring_labels) == len(rings)
    assert "power of ten above the selection maximum" in item._caption


def test_every_chart_draws_the_bf16_stand_in_and_keeps_bare_module_prices_out(
    qtbot: QtBot,
) -> None:
    """Issue 42 items 6 and 7: Bars and the scatter called Gaudi 3 "n/a" where the radar
    drew its BF16 figure; a $75 used SXM2 module set the whole Pareto frontier."""
    used = {"price_date": dt.date(2026, 2, 1), "price_kind": "used"}
    gaudi = make_entry(
        "gaudi", name="Gaudi Test", bf16_tensor_tflops=1835.0, price_usd=15000, **_PRICE
    )
    card = make_entry("card", name="Card Test", fp16_tensor_tflops=165.0, price_usd=1600, **_PRICE)
    module = make_entry(
        "module",
        name="Module Test",
        form_factor="SXM2",
        fp16_tensor_tflops=125.0,
        price_usd=75,
        **used,
    )
    state = AppState(catalog=Catalog(entries=[gaudi, card, module]))
    view = CompareView(state)
    qtbot.addWidget(view)
    view.resize(1400, 850)
    view.show()
    state.set_compare(["gaudi", "card"])
    view.bar_combo.setCurrentIndex(view.bar_combo.findData("fp16_tensor_tflops"))
    bars = {bar.id: bar.value for bar in view.bars.plot.bars}
    assert bars == {"gaudi": 1835.0, "card": 165.0}
    assert "(BF16 figure)" in view.bars.data_text()
    # its value text, "(BF16)" and all, fits right of the longest bar
    label = max(view.bars.plot._labels, key=lambda item: item.pos().x())
    assert label.toPlainText().endswith("(BF16)")
    right = label.mapRectToScene(label.boundingRect()).right()
    assert right <= view.bars.plot.getViewBox().sceneBoundingRect().right() + 1
    view.x_combo.setCurrentIndex(view.x_combo.findData("price_usd"))
    view.y_combo.setCurrentIndex(view.y_combo.findData("fp16_tensor_tflops"))
    plot = view.scatter.plot
    assert [point.id for point in plot.selection_points] == ["gaudi", "card"]
    assert plot.missing_names == []
    assert "Gaudi Test: BF16 figure" in view.scatter_note.text()
    # the module's $75 is no frontier point nor a grey one: its baseboard is not in it
    assert plot.bare_module_ids == ["module"]
    assert "module" not in plot.frontier_ids
    assert "used modules priced without their baseboard" in view.scatter_note.text()
