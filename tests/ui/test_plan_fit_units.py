"""Will it fit? shows memory in one unit, GiB, labelled, with GB explained where a user
compares with a card's "80 GB" (issue 42 item 9: a "24 GB" card's row read "24 GB" as
sold and "25.8 GB" usable, two GBs side by side)."""

from __future__ import annotations

import re

import pytest
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import load_catalog
from gpudesk.ui.plan.fit_page import FitPage
from gpudesk.ui.plan.fit_results import FitColumn, breakdown_html
from gpudesk.ui.state import AppState

#: A memory figure with its unit: "19.2 GiB", "0&nbsp;GiB", "25.8 GB" (not "GB/s").
_FIGURE = re.compile(r"\d(?:\s|&nbsp;)(GiB|GB|MiB|MB)(?![/\w])")
GIB = 2**30


def _units(text: str) -> set[str]:
    return set(_FIGURE.findall(text))


@pytest.fixture
def page(qtbot: QtBot) -> FitPage:
    widget = FitPage(AppState(catalog=load_catalog([], include_user=False)))
    qtbot.addWidget(widget)
    form = widget.form
    form.model_combo.setCurrentIndex(form.model_combo.findData("qwen2.5-32b"))
    widget.recompute_now()
    return widget


def test_every_memory_figure_on_the_page_is_gib(page: FitPage) -> None:
    report = page.report
    assert report is not None and report.fits
    tree = page.fits_tree
    cells = [
        tree.topLevelItem(row).text(column)
        for row in range(tree.topLevelItemCount())
        for column in (FitColumn.MEMORY, FitColumn.NEED, FitColumn.HEADROOM)
    ]
    assert len(cells) == 3 * len(report.fits) >= 30
    assert all(_units(cell) == {"GiB"} for cell in cells), cells[:6]
    assert _units(page.total_label.text()) == {"GiB"}, page.total_label.text()
    axis = page.bar_plot.getPlotItem().getAxis("bottom").labelText
    assert "GiB" in axis and "GB" not in axis.replace("GiB", "")
    tree.setCurrentItem(tree.topLevelItem(0))
    assert _units(page.gpu_text.toPlainText()) == {"GiB"}, page.gpu_text.toPlainText()
    # the breakdown's amounts, and what each formula comes to, read in GiB too
    amounts = re.findall(r"<b>([\d,.]+)&nbsp;(\w+)</b>", breakdown_html(report.estimate))
    assert amounts and {unit for _, unit in amounts} == {"GiB"}
    results = [
        re.findall(r" = [\d,.]+ ([GM]i?B)\b", part.formula) for part in report.estimate.parts
    ]
    assert sum(map(len, results)) >= 4 and {unit for found in results for unit in found} == {"GiB"}


def test_the_figures_are_the_gib_of_the_bytes(page: FitPage) -> None:
    """A "24 GB" RTX 4090 holds 24 GiB: its row says so, not 25.8 of another GB."""
    report = page.report
    assert report is not None
    tree = page.fits_tree
    rows = {
        tree.topLevelItem(row).data(FitColumn.GPU, 256): tree.topLevelItem(row)
        for row in range(tree.topLevelItemCount())
    }
    result = next(fit for fit in report.fits if fit.gpu_id == "rtx-4090")
    item = rows["rtx-4090"]
    assert item.text(FitColumn.MEMORY) == f"{result.usable_gib:,.1f} GiB"
    assert item.text(FitColumn.MEMORY) == "24.0 GiB"
    assert item.text(FitColumn.NEED) == f"{result.per_gpu_gb * 1e9 / GIB:,.1f} GiB"
    tip = item.toolTip(FitColumn.MEMORY)
    assert tip.startswith("Sold as '24 GB', which is 24 GiB"), tip


def test_gb_is_explained_where_the_user_compares(page: FitPage) -> None:
    header = page.fits_tree.headerItem()
    for column in (FitColumn.MEMORY, FitColumn.NEED, FitColumn.HEADROOM):
        assert "GiB" in header.toolTip(column) and "'80 GB'" in header.toolTip(column)
    note = page.formula_view.toPlainText()
    assert "'80 GB'" in note and "1 GiB = 1.074 GB" in note
    assert "80 GB" in page.bar_plot.toolTip()
