"""The catalog browser: filters, numeric sorting, details and the compare selection."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtTest import QAbstractItemModelTester
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot
from ui_catalog_fixtures import small_catalog

from gpudesk.catalog.query import CatalogFilter
from gpudesk.catalog.schema import Segment
from gpudesk.ui.catalog_columns import COLUMNS, column_index
from gpudesk.ui.catalog_model import ENTRY_ID_ROLE
from gpudesk.ui.catalog_view import CatalogView
from gpudesk.ui.state import AppState


@pytest.fixture
def view(qtbot: QtBot) -> Iterator[CatalogView]:
    state = AppState(catalog=small_catalog())
    widget = CatalogView(state)
    qtbot.addWidget(widget)
    widget.resize(1300, 700)
    widget.show()
    yield widget


def visible_ids(view: CatalogView) -> list[str]:
    proxy = view.proxy
    return [proxy.index(row, 0).data(ENTRY_ID_ROLE) for row in range(proxy.rowCount())]


def test_starts_with_everything_and_the_first_row_selected(view: CatalogView) -> None:
    assert view.visible_count() == 6
    assert view.current_entry() is not None
    assert view.details.entry is not None
    assert view.details.entry.id == view.current_entry().id  # type: ignore[union-attr]


def test_typing_filters_after_a_pause(qtbot: QtBot, view: CatalogView) -> None:
    qtbot.keyClicks(view.filters.search, "ampere")
    qtbot.waitUntil(lambda: view.visible_count() == 2, timeout=2000)
    assert sorted(visible_ids(view)) == ["a100", "rtx-a6000"]
    # notes are searched too
    view.filters.search.setText("hbm2e")
    view.filters.flush()
    assert visible_ids(view) == ["a100"]
    view.filters.search.setText("no such gpu")
    view.filters.flush()
    assert view.visible_count() == 0
    assert view.details.entry is None


def test_segment_boxes_filter(view: CatalogView) -> None:
    view.filters.segment_boxes[Segment.CONSUMER].setChecked(False)
    assert sorted(visible_ids(view)) == ["a100", "mi300x", "rtx-a6000"]
    view.filters.segment_boxes[Segment.DATACENTER].setChecked(False)
    assert visible_ids(view) == ["rtx-a6000"]


def test_vendor_boxes_come_from_the_data_and_filter(view: CatalogView) -> None:
    assert list(view.filters.vendor_boxes) == ["AMD", "Intel", "NVIDIA"]
    view.filters.vendor_boxes["NVIDIA"].setChecked(False)
    assert sorted(visible_ids(view)) == ["arc-b580", "mi300x"]


def test_memory_price_and_year_filter(view: CatalogView) -> None:
    view.filters.min_memory.setValue(48)
    assert sorted(visible_ids(view)) == ["a100", "mi300x", "rtx-a6000"]
    view.filters.max_price.setValue(5000)  # also drops the unpriced MI300X
    assert visible_ids(view) == ["rtx-a6000"]
    view.filters.reset()
    view.filters.min_year.setValue(2022)
    view.filters.max_year.setValue(2023)
    assert sorted(visible_ids(view)) == ["mi300x", "rtx-4090"]


def test_feature_boxes_filter(view: CatalogView) -> None:
    from gpudesk.catalog.query import Feature

    view.filters.feature_boxes[Feature.ECC].setChecked(True)
    assert sorted(visible_ids(view)) == ["a100", "mi300x", "rtx-a6000"]
    view.filters.feature_boxes[Feature.NVLINK].setChecked(True)
    assert sorted(visible_ids(view)) == ["a100", "rtx-a6000"]
    view.filters.feature_boxes[Feature.MIG].setChecked(True)
    assert visible_ids(view) == ["a100"]
    view.reset_filters()
    view.filters.feature_boxes[Feature.TENSOR_CORES].setChecked(True)
    assert sorted(visible_ids(view)) == ["a100", "mi300x", "rtx-4090", "rtx-a6000"]


def test_reset_filters_shows_everything(view: CatalogView) -> None:
    view.filters.segment_boxes[Segment.CONSUMER].setChecked(False)
    view.filters.min_memory.setValue(100)
    assert view.visible_count() == 1
    view.reset_filters()
    assert view.visible_count() == 6
    assert view.criteria() == CatalogFilter()


def test_counts_signal_reports_n_of_m(qtbot: QtBot, view: CatalogView) -> None:
    with qtbot.waitSignal(view.counts_changed, timeout=1000) as blocker:
        view.filters.min_memory.setValue(48)
    assert blocker.args == [3, 6]


def test_numeric_sort_with_missing_last_both_ways(view: CatalogView) -> None:
    price = column_index("price_usd")
    view.table.sortByColumn(price, Qt.SortOrder.AscendingOrder)
    assert visible_ids(view) == ["arc-b580", "gtx-1080", "rtx-4090", "rtx-a6000", "a100", "mi300x"]
    view.table.sortByColumn(price, Qt.SortOrder.DescendingOrder)
    assert visible_ids(view) == ["a100", "rtx-a6000", "rtx-4090", "gtx-1080", "arc-b580", "mi300x"]
    # numeric, not lexical: 8 < 12 < 24 < 48 < 80 < 192
    view.table.sortByColumn(column_index("memory_gb"), Qt.SortOrder.AscendingOrder)
    assert visible_ids(view) == ["gtx-1080", "arc-b580", "rtx-4090", "rtx-a6000", "a100", "mi300x"]
    tensor = column_index("fp16_tensor_tflops")
    view.table.sortByColumn(tensor, Qt.SortOrder.DescendingOrder)
    assert visible_ids(view)[-2:] == ["arc-b580", "gtx-1080"]
    view.table.sortByColumn(tensor, Qt.SortOrder.AscendingOrder)
    assert visible_ids(view)[-2:] == ["arc-b580", "gtx-1080"]


def test_sorting_keeps_the_selected_gpu_selected(view: CatalogView) -> None:
    assert view.select_entry("rtx-4090")
    view.table.sortByColumn(column_index("memory_gb"), Qt.SortOrder.DescendingOrder)
    assert view.current_entry() is not None
    assert view.current_entry().id == "rtx-4090"  # type: ignore[union-attr]
    assert [entry.id for entry in view.selected_entries()] == ["rtx-4090"]


def test_cells_are_formatted_aligned_and_greyed_when_missing(view: CatalogView) -> None:
    view.table.sortByColumn(column_index("price_usd"), Qt.SortOrder.AscendingOrder)
    proxy = view.proxy
    last = proxy.rowCount() - 1  # the unpriced MI300X
    price = proxy.index(last, column_index("price_usd"))
    assert price.data() == "n/a"
    assert price.data(Qt.ItemDataRole.ForegroundRole) is not None
    first_price = proxy.index(0, column_index("price_usd"))
    # the fixtures' prices are from 2025-01: older than a year, so flagged by a sign
    # in the cell (not its colour alone) and words in the tooltip
    assert first_price.data() == "⚠ 249"
    stale = first_price.data(Qt.ItemDataRole.ForegroundRole)
    assert stale is not None and stale.name() == "#c26a00"
    tip = first_price.data(Qt.ItemDataRole.ToolTipRole)
    assert "seen 2025-01-01" in tip and "price from 2025-01, may be out of date" in tip
    assert proxy.index(0, column_index("memory_gb")).data(Qt.ItemDataRole.ForegroundRole) is None
    alignment = Qt.AlignmentFlag(first_price.data(Qt.ItemDataRole.TextAlignmentRole))
    assert alignment & Qt.AlignmentFlag.AlignRight
    header = proxy.headerData(column_index("memory_gb"), Qt.Orientation.Horizontal)
    assert "(GiB)" in header
    # the one unit, explained where a user sets it beside a vendor's "80 GB"
    tip = proxy.headerData(
        column_index("memory_gb"), Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    )
    assert tip.startswith("Memory (GiB)\n") and "a vendor's '80 GB' is 80 GiB" in tip
    # a missing cell's tooltip names the column, without the header's explanation
    assert "80 GB" not in COLUMNS[column_index("memory_gb")].tooltip
    assert view.filters.min_memory.suffix() == " GiB"


def test_details_pane_shows_the_selected_entry(view: CatalogView) -> None:
    assert view.select_entry("a100")
    text = view.details.toPlainText()
    assert "NVIDIA A100 80GB" in text
    for group in ("Identity", "Memory", "Compute", "Power", "Features", "Price", "Derived"):
        assert group in text
    assert "HBM2e training card" in text
    assert "20.80" in text  # FP16 tensor TFLOPS per 1k USD
    assert 'href="https://example.com/a100-datasheet"' in view.details.toHtml()
    view.table.selectRow(visible_ids(view).index("mi300x"))
    assert view.details.entry is not None and view.details.entry.id == "mi300x"
    assert "AMD Instinct MI300X" in view.details.toPlainText()


def test_compare_check_column_adds_and_removes(view: CatalogView) -> None:
    proxy = view.proxy
    row = visible_ids(view).index("rtx-4090")
    check = proxy.index(row, column_index("compare"))
    assert proxy.setData(check, Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert view.state.compare_ids == ["rtx-4090"]
    assert check.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    assert list(view.compare_bar.chips) == ["rtx-4090"]
    proxy.setData(check, Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    assert view.state.compare_ids == []
    assert view.compare_bar.chips == {}


def test_compare_selection_is_limited_to_six(qtbot: QtBot) -> None:
    from catalog_factory import make_entry

    from gpudesk.catalog.loader import Catalog

    entries = [make_entry(f"gpu-{number}") for number in range(8)]
    state = AppState(catalog=Catalog(entries=entries))
    view = CatalogView(state)
    qtbot.addWidget(view)
    view.table.selectAll()
    messages: list[str] = []
    view.status_message.connect(messages.append)
    assert view.add_selected_to_compare() == 6
    assert len(state.compare_ids) == 6
    assert any("at most 6" in message for message in messages)
    row = visible_ids(view).index("gpu-7")
    check = view.proxy.index(row, column_index("compare"))
    assert not view.proxy.setData(check, Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
    assert "gpu-7" not in state.compare_ids
    assert len(view.compare_bar.chips) == 6
    assert not view.compare_bar.add_button.isEnabled()
    # a chip's remove button frees a place
    first = state.compare_ids[0]
    view.compare_bar.chips[first].remove_button.click()
    assert first not in state.compare_ids and len(state.compare_ids) == 5
    assert view.proxy.setData(check, Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
    assert state.compare_ids[-1] == "gpu-7"
    view.compare_bar.clear_button.click()
    assert state.compare_ids == []


def test_clicking_the_compare_cell_toggles(qtbot: QtBot, view: CatalogView) -> None:
    row = visible_ids(view).index("arc-b580")
    rect = view.table.visualRect(view.proxy.index(row, column_index("compare")))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.state.compare_ids == ["arc-b580"]
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.state.compare_ids == []


def test_compare_changes_elsewhere_show_in_the_table(view: CatalogView) -> None:
    view.state.set_compare(["mi300x", "a100"])
    row = visible_ids(view).index("mi300x")
    assert view.proxy.index(row, 0).data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    assert list(view.compare_bar.chips) == ["mi300x", "a100"]


def test_fit_filter_chip_filters_and_clears(view: CatalogView) -> None:
    view.state.set_fit_filter({"a100", "rtx-4090", "unknown-id"})
    assert sorted(visible_ids(view)) == ["a100", "rtx-4090"]
    assert view.compare_bar.fit_chip_text() == "Fits my workload (2)"
    assert view.compare_bar.fit_chip is not None
    view.compare_bar.fit_chip.remove_button.click()
    assert view.state.fit_filter_ids is None
    assert view.visible_count() == 6
    assert view.compare_bar.fit_chip_text() is None


def test_select_entry_clears_filters_that_hide_it(view: CatalogView) -> None:
    view.filters.search.setText("ampere")
    view.filters.flush()
    assert view.select_entry("gtx-1080")
    assert view.current_entry() is not None and view.current_entry().id == "gtx-1080"  # type: ignore[union-attr]
    assert not view.select_entry("no-such-gpu")


def test_columns_can_be_hidden_and_shown(view: CatalogView) -> None:
    assert view.column_visible("fp64_tflops")
    view.set_column_visible("fp64_tflops", False)
    assert view.table.isColumnHidden(column_index("fp64_tflops"))
    assert not view.column_visible("fp8_tensor_tflops")
    view.set_column_visible("fp8_tensor_tflops", True)
    assert view.column_visible("fp8_tensor_tflops")
    view.reset_columns()
    assert view.column_visible("fp64_tflops") and not view.column_visible("fp8_tensor_tflops")


def test_proxy_passes_the_model_tester(qtbot: QtBot) -> None:
    state = AppState(catalog=small_catalog())
    view = CatalogView(state)
    qtbot.addWidget(view)
    tester = QAbstractItemModelTester(
        view.proxy, QAbstractItemModelTester.FailureReportingMode.Fatal
    )
    view.filters.min_memory.setValue(24)
    view.table.sortByColumn(column_index("fp32_tflops"), Qt.SortOrder.DescendingOrder)
    view.filters.search.setText("nvidia")
    view.filters.flush()
    view.filters.reset()
    state.set_compare(["a100"])
    state.set_catalog(small_catalog())
    assert view.proxy.rowCount() == 6
    assert view.proxy.parent(view.proxy.index(0, 0)) == QModelIndex()
    del tester


def test_details_groups_cover_every_field_once() -> None:
    from gpudesk.catalog.schema import ENTRY_FIELDS
    from gpudesk.ui.details_pane import FIELD_GROUPS, SECTION_FIELDS

    shown = [name for _, fields in FIELD_GROUPS for name in fields]
    assert len(shown) == len(set(shown))
    assert not set(shown) & SECTION_FIELDS
    assert set(shown) | SECTION_FIELDS == set(ENTRY_FIELDS)


def test_source_urls_become_links_without_trailing_punctuation() -> None:
    from gpudesk.ui.details_pane import linkify

    html = linkify("TechPowerUp (https://www.techpowerup.com/gpu-specs/). <b>")
    assert '<a href="https://www.techpowerup.com/gpu-specs/">' in html
    assert html.endswith("</a>). &lt;b&gt;")
    assert linkify("Whitepaper v2.0") == "Whitepaper v2.0"


def test_search_puts_the_named_gpu_first_and_ctrl_d_adds_it(qtbot: QtBot) -> None:
    # The bundled catalog: other cards' notes mention the RTX 5090.
    state = AppState()
    widget = CatalogView(state)
    qtbot.addWidget(widget)
    widget.show()
    messages: list[str] = []
    widget.status_message.connect(messages.append)
    widget.filters.search.setText("RTX 5090")
    widget.filters.flush()
    assert visible_ids(widget)[0] == "rtx-5090"
    assert widget.visible_count() > 1  # the notes matches are still there, after it
    widget.table.setFocus()
    widget._select_row(0)
    assert widget.add_selected_to_compare() == 1
    assert state.compare_ids == ["rtx-5090"]
    assert "RTX 5090" in messages[-1]


def test_escape_in_the_search_box_clears_it(qtbot: QtBot, view: CatalogView) -> None:
    view.filters.search.setText("ampere")
    view.filters.flush()
    assert view.visible_count() == 2
    view.filters.search.setFocus()
    qtbot.keyClick(view.filters.search, Qt.Key.Key_Escape)
    assert view.filters.search.text() == ""
    assert view.visible_count() == 6


def test_first_click_on_a_numeric_header_sorts_best_first(qtbot: QtBot, view: CatalogView) -> None:
    header = view.table.horizontalHeader()

    def click(key: str) -> None:
        section = column_index(key)
        x = header.sectionViewportPosition(section) + header.sectionSize(section) // 2
        qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))

    click("memory_gb")
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    assert visible_ids(view)[0] == "mi300x"  # 192 GB first
    click("price_usd")  # lower is better: cheapest first
    assert header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
    assert visible_ids(view)[0] == "arc-b580"


def test_no_match_notice_with_reset(qtbot: QtBot, view: CatalogView) -> None:
    assert not view.no_match.isVisible()
    view.filters.search.setText("no such gpu")
    view.filters.flush()
    assert view.no_match.isVisible()
    qtbot.mouseClick(view.no_match_reset, Qt.MouseButton.LeftButton)
    assert view.visible_count() == 6
    assert not view.no_match.isVisible()


def test_no_match_notice_for_filters_restored_from_the_last_session(qtbot: QtBot) -> None:
    from PySide6.QtCore import QSettings

    settings = QSettings("gpudesk-tests", "no-match")
    first = CatalogView(AppState(catalog=small_catalog()))
    qtbot.addWidget(first)
    first.filters.min_memory.setValue(1000)
    first.save_settings(settings)
    again = CatalogView(AppState(catalog=small_catalog()))
    qtbot.addWidget(again)
    again.show()
    again.restore_settings(settings)
    assert again.visible_count() == 0
    assert again.no_match.isVisible()


def test_tab_leaves_the_table_and_a_chip_x_works_from_the_keyboard(
    qtbot: QtBot, view: CatalogView
) -> None:
    assert not view.table.tabKeyNavigation()  # Tab moves to the next control
    assert view.table.frozen_view.focusPolicy() == Qt.FocusPolicy.NoFocus
    view.state.set_compare(["a100", "rtx-4090"])
    chip = view.compare_bar.chips["a100"]
    button = chip.remove_button
    assert button.focusPolicy() & Qt.FocusPolicy.TabFocus
    button.setFocus()
    qtbot.keyClick(button, Qt.Key.Key_Space)
    assert view.state.compare_ids == ["rtx-4090"]


def _next_tab_stop(widget: QWidget) -> QWidget:
    following = widget.nextInFocusChain()
    while not following.focusPolicy() & Qt.FocusPolicy.TabFocus:
        following = following.nextInFocusChain()
    return following


def test_tab_goes_segments_then_vendors_then_limits(view: CatalogView) -> None:
    filters = view.filters
    last_segment = list(filters.segment_boxes.values())[-1]
    vendors = list(filters.vendor_boxes.values())
    assert len(vendors) >= 2
    assert _next_tab_stop(last_segment) is vendors[0]
    for first, second in itertools.pairwise(vendors):
        assert _next_tab_stop(first) is second
    assert _next_tab_stop(vendors[-1]) is filters.min_memory
    assert _next_tab_stop(filters.reset_button) not in vendors


def test_the_first_compare_chip_does_not_move_the_table(qtbot: QtBot, view: CatalogView) -> None:
    from PySide6.QtCore import QPoint

    view.resize(1100, 700)
    view.show()
    qtbot.waitExposed(view)
    before = view.table.mapTo(view, QPoint(0, 0)).y()
    first = view.state.entries()[0].id
    view.state.set_compare([first])
    qtbot.wait(20)
    assert view.compare_bar.chips
    assert view.table.mapTo(view, QPoint(0, 0)).y() == before


def test_a_row_the_name_does_not_explain_says_where_it_matched(view: CatalogView) -> None:
    name = column_index("name")

    def name_cell(row: int) -> tuple[str, str]:
        index = view.proxy.index(row, name)
        return index.data(), index.data(Qt.ItemDataRole.ToolTipRole)

    view.filters.search.setText("hbm2e")
    view.filters.flush()
    text, tip = name_cell(0)
    assert text.endswith(" · in notes")
    assert "Matched in notes" in tip
    assert view.proxy.cell_paint(0, name)[0] == text  # what the delegate draws
    view.filters.search.setText("ampere")
    view.filters.flush()
    assert all(name_cell(row)[0].endswith(" · in architecture") for row in range(2))
    view.filters.search.setText("a100")
    view.filters.flush()
    assert name_cell(0)[0] == "A100 80GB"  # the name says why: no note
    view.filters.clear_search()
    assert "·" not in name_cell(0)[0]


def test_after_escape_the_gpu_in_the_details_pane_stays_in_view(qtbot: QtBot) -> None:
    widget = CatalogView(AppState())  # the bundled catalog: more rows than the table shows
    qtbot.addWidget(widget)
    widget.resize(1366, 700)
    widget.show()
    qtbot.waitExposed(widget)
    widget.filters.search.setText("mi300x")
    widget.filters.flush()
    assert widget.details.entry is not None and widget.details.entry.id == "mi300x"
    widget.filters.clear_search()  # what Escape in the box does (tested above)
    assert widget.visible_count() > 30
    current = widget.table.currentIndex()
    assert widget.current_entry() is not None and widget.current_entry().id == "mi300x"  # type: ignore[union-attr]
    assert widget.details.entry.id == "mi300x"
    # the selected row is on screen, in the table and in its frozen name column alike
    for table in (widget.table, widget.table.frozen_view):
        assert table.viewport().rect().contains(table.visualRect(current))
