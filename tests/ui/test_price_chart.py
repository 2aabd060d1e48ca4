"""Compare → Cloud rates: the range rows and the history lines, and the tab painting them."""

from __future__ import annotations

import pytest
from catalog_factory import make_entry
from pytestqt.qtbot import QtBot

from gpudesk.catalog.rate_book import RateBook
from gpudesk.ui.price_chart import PriceRangeChart, RangeRow, history_points, range_rows


@pytest.fixture(scope="module")
def book() -> RateBook:
    return RateBook.load(include_user=False)


def test_range_rows_span_lowest_to_highest_with_the_median_between(book: RateBook) -> None:
    h100, l40s, none = make_entry("h100-sxm5"), make_entry("l40s"), make_entry("zz-unrented")
    summaries = [book.summary(e.id) for e in (h100, l40s, none)]
    rows, top = range_rows([h100, l40s, none], summaries)
    assert top >= max(s.highest.usd_per_gpu_hour for s in summaries[:2] if s.highest)
    first, second, third = rows
    assert isinstance(first, RangeRow) and isinstance(second, RangeRow)
    for row in (first, second):
        assert 0 < row.low <= row.median <= row.high <= 1
        assert row.words.startswith("lowest $") and "median $" in row.words
    assert isinstance(third, str) and "no on-demand rate" in third


def test_history_points_are_dated_lowest_rates_in_the_unit_square(book: RateBook) -> None:
    lines, first, last, top = history_points([book.history("h100-sxm5"), book.history("l40s")])
    assert top >= 1
    assert first is not None and last is not None and first < last
    assert len(lines[0]) >= 3  # the H100 has at least three dated snapshots
    assert all(0 <= x <= 1 and 0 < y <= 1 for line in lines for x, y in line)
    assert lines[0][0][0] == 0 or lines[1][0][0] == 0  # the earliest date is the left edge
    assert history_points([[]]) == ([[]], None, None, 1.0)


def test_the_cloud_rates_tab_paints_without_errors(qtbot: QtBot, book: RateBook) -> None:
    from PySide6.QtGui import QColor

    chart = PriceRangeChart()
    qtbot.addWidget(chart)
    entries = [make_entry("h100-sxm5"), make_entry("rtx-4090")]
    chart.set_data(
        entries,
        [book.summary(e.id) for e in entries],
        [book.history(e.id) for e in entries],
        [QColor("#0072b2"), QColor("#e69f00")],
    )
    chart.resize(900, 500)
    image = chart.grab().toImage()
    assert image.width() == 900
    # the H100's bar is painted in its colour somewhere on the first row
    found = any(image.pixelColor(x, 40).name() == "#0072b2" for x in range(0, 900, 2)) or any(
        image.pixelColor(x, 42).name() == "#0072b2" for x in range(0, 900, 2)
    )
    assert found


def test_each_history_line_is_named_and_a_gpu_without_one_says_so() -> None:
    from gpudesk.ui.price_chart import history_key

    lines = [[(0.0, 0.5), (1.0, 0.2)], []]
    assert history_key(["H100 SXM5 80GB", "RTX 4090"], lines) == [
        (0, "H100 SXM5 80GB"),
        (1, "RTX 4090: no dated snapshot"),
    ]


def test_the_history_key_is_painted_under_the_lines(qtbot: QtBot, book: RateBook) -> None:
    from PySide6.QtGui import QColor

    chart = PriceRangeChart()
    qtbot.addWidget(chart)
    entries = [make_entry("h100-sxm5"), make_entry("rtx-4090")]
    chart.set_data(
        entries,
        [book.summary(e.id) for e in entries],
        [book.history(e.id) for e in entries],
        [QColor("#0072b2"), QColor("#e69f00")],
    )
    chart.resize(900, 560)
    image = chart.grab().toImage()

    # the key's swatch: a short level stroke in the H100's colour in the lower half,
    # left of where the line itself is still that low (it falls from the top left)
    def stroke(y: int) -> bool:
        run = 0
        for x in range(0, 300):
            run = run + 1 if image.pixelColor(x, y).name() == "#0072b2" else 0
            if run >= 12:
                return True
        return False

    assert any(stroke(y) for y in range(image.height() // 2, image.height()))


def test_snapshots_years_apart_are_not_drawn_as_a_steady_line() -> None:
    """Issue 42 item 8: two snapshots years apart were one solid line, with two y ticks."""
    import datetime as dt

    from gpudesk.ui.price_chart import GAP_DAYS, long_gaps, value_ticks, year_ticks

    span_days = 3 * 365
    line = [(0.0, 0.9), (0.02, 0.85), (1.0, 0.4)]  # a month apart, then nearly three years
    assert long_gaps(line, span_days) == [False, True]
    assert long_gaps([(0.0, 0.5), (GAP_DAYS / span_days, 0.5)], span_days) == [False]
    assert value_ticks(5.0) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert value_ticks(2.0) == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert len(value_ticks(10.0)) >= 5
    assert year_ticks(dt.date(2023, 6, 1), dt.date(2026, 2, 1)) == [
        dt.date(2024, 1, 1),
        dt.date(2025, 1, 1),
        dt.date(2026, 1, 1),
    ]
