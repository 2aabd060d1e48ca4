"""The details pane: notes for readers, provenance folded away, rates and staleness."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from catalog_factory import make_entry
from PySide6.QtCore import Qt, QUrl
from pytestqt.qtbot import QtBot

from gpudesk.catalog.schema import CatalogEntry
from gpudesk.ui import details_pane
from gpudesk.ui.details_pane import (
    PROVENANCE_LINK,
    PROVENANCE_TITLE,
    DetailsPane,
    entry_details_html,
)

_RATES = [
    {
        "provider": "AWS",
        "usd_per_gpu_hour": 6.88,
        "kind": "on_demand",
        "date": dt.date(2026, 11, 20),
        "source": "https://aws.amazon.com/ec2/instance-types/p5/",
    },
    {
        "provider": "Lambda",
        "usd_per_gpu_hour": 2.99,
        "kind": "on_demand",
        "date": dt.date(2026, 11, 20),
        "source": "https://lambda.ai/pricing",
    },
    {
        "provider": "Vast.ai",
        "usd_per_gpu_hour": 1.6,
        "kind": "marketplace",
        "date": dt.date(2024, 3, 1),
        "source": "https://vast.ai/pricing",
    },
]


def _entry() -> CatalogEntry:
    return make_entry(
        "h-test",
        price_usd=25_000,
        price_kind="estimate",
        price_date=dt.date(2024, 3, 9),
        price_note="range $25k-$30k reported",
        notes="A plain sentence for a reader.",
        provenance="Maintainer text: FP8 derived from the whitepaper table.",
        cloud_rates=_RATES,
        l3_cache_mb=256,
    )


def test_provenance_is_folded_until_asked_for() -> None:
    entry = make_entry(notes="For readers.", provenance="How it was derived.")
    folded = entry_details_html(entry)
    assert PROVENANCE_TITLE in folded and "How it was derived." not in folded
    assert "For readers." in folded
    assert "How it was derived." in entry_details_html(entry, show_provenance=True)
    assert PROVENANCE_TITLE not in entry_details_html(make_entry(notes="x"))


def test_stale_price_and_rates_are_flagged_and_the_default_rate_named() -> None:
    text = entry_details_html(_entry(), today=dt.date(2026, 12, 1))
    assert "price from 2024-03, may be out of date" in text
    assert "rate from 2024-03, may be out of date" in text
    # the price (in the summary at the top and in its group) and the 2024 rate; the
    # 2026 rates are current
    assert text.count("may be out of date") == 3
    assert f"over {details_pane.RATE_STALE_AFTER_DAYS} days old" in text
    lambda_line = text[text.index("<b>Lambda</b>") :].split("</li>")[0]
    assert "used by default" in lambda_line
    assert "used by default" not in text[text.index("<b>AWS</b>") :].split("</li>")[0]
    assert "range $25k-$30k reported" in text
    assert 'href="https://lambda.ai/pricing"' in text
    # a rate is stale after 90 days, a price after 12 months
    fresh = entry_details_html(_entry(), today=dt.date(2024, 5, 1))
    assert "may be out of date" not in fresh


def test_pane_toggles_provenance_and_opens_web_links_outside(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(
        details_pane.QDesktopServices, "openUrl", lambda url: opened.append(url.toString())
    )
    pane = DetailsPane()
    qtbot.addWidget(pane)
    pane.show_entry(_entry())
    assert "Maintainer text" not in pane.toPlainText()
    assert "A plain sentence for a reader." in pane.toPlainText()
    pane.anchorClicked.emit(QUrl(PROVENANCE_LINK))
    assert "Maintainer text" in pane.toPlainText()
    pane.show_entry(make_entry("other", provenance="Other derivation."))
    assert "Other derivation." in pane.toPlainText(), "the choice stays for the next GPU"
    pane.anchorClicked.emit(QUrl(PROVENANCE_LINK))
    assert "Other derivation." not in pane.toPlainText()
    pane.anchorClicked.emit(QUrl("https://lambda.ai/pricing"))
    assert opened == ["https://lambda.ai/pricing"]
    pane.anchorClicked.emit(QUrl("file:///etc/passwd"))
    assert opened == ["https://lambda.ai/pricing"], "only web links leave the app"


def test_no_bundled_entry_shows_internal_wording_even_unfolded(qtbot: QtBot) -> None:
    from gpudesk.catalog.loader import load_directory
    from gpudesk.catalog.sourcing import INTERNAL_MARKERS
    from gpudesk.paths import bundled_catalog_dir

    pane = DetailsPane()
    qtbot.addWidget(pane)
    pane.set_provenance_shown(True)
    for entry in load_directory(bundled_catalog_dir()).entries:
        pane.show_entry(entry)
        text = pane.toPlainText()
        assert not [marker for marker in INTERNAL_MARKERS if marker in text], entry.id


def _alignment_of(pane: DetailsPane, text: str) -> Qt.AlignmentFlag:
    """The alignment of the last block holding ``text`` (the summary at the top may
    hold a figure too; the group's row comes after it)."""
    cursor = pane.document().find(text)
    while not (following := pane.document().find(text, cursor)).isNull():
        cursor = following
    block = cursor.block()
    assert block.isValid(), text
    return block.blockFormat().alignment()


def test_a_sentence_gets_the_full_width_and_figures_stay_right_aligned(qtbot: QtBot) -> None:
    note = "Reported range $10,000-13,000 per GPU (an analyst's estimate of the average price)."
    pane = DetailsPane()
    qtbot.addWidget(pane)
    pane.show_entry(
        make_entry(
            "h-note",
            price_usd=12_000,
            price_kind="estimate",
            price_date=dt.date(2020, 3, 9),
            price_note=note,
        )
    )
    assert not _alignment_of(pane, note) & Qt.AlignmentFlag.AlignRight
    assert _alignment_of(pane, "12,000") & Qt.AlignmentFlag.AlignRight
    assert _alignment_of(pane, "may be out of date") & Qt.AlignmentFlag.AlignRight
    html_text = entry_details_html(
        make_entry(
            "h-short",
            price_usd=999,
            price_kind="street",
            price_date=dt.date.today(),
            price_note="list price",
        )
    )
    assert "<td align='right'>list price</td>" in html_text, "a short note stays a figure"


def test_one_line_per_rate_with_the_figures_first_and_the_file_behind_the_fold(
    qtbot: QtBot,
) -> None:
    from pathlib import Path

    from gpudesk.catalog.loader import load_directory
    from gpudesk.paths import bundled_catalog_dir

    entry = next(e for e in load_directory(bundled_catalog_dir()).entries if e.id == "h100-sxm5")
    origin = Path("/somewhere/catalog/nvidia/h100-sxm5.toml")
    pane = DetailsPane()
    qtbot.addWidget(pane)
    pane.show_entry(entry, origin)
    text = pane.toPlainText()
    lines = text.splitlines()
    nebius = [line for line in lines if line.startswith("Nebius · on-demand")]
    assert nebius == ["Nebius · on-demand · $2.95/GPU-h · eu-north1 · 2026-12-02 · page"]
    assert any(line.startswith("Lambda · on-demand · $3.99/GPU-h · us-east-1") for line in lines)
    # price and rent come before the groups; the file path and derivations are folded
    assert text.index("rent from $") < text.index("Identity")
    assert str(origin) not in text and "divided by its GPU count" in text
    pane.set_provenance_shown(True)
    unfolded = pane.toPlainText()
    assert f"Entry file: {origin}" in unfolded
    assert "at commit 2c3d7ea7d76b" in unfolded  # where Lambda's rate came from


def _anchor_colors(pane: DetailsPane) -> set[str]:
    colors: set[str] = set()
    block = pane.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.charFormat().isAnchor():
                colors.add(fragment.charFormat().foreground().color().name())
            it += 1
        block = block.next()
    return colors


def test_links_take_the_themes_link_colour_in_a_pane_built_before_the_theme(
    qtbot: QtBot,
) -> None:
    """The real app builds the catalog (and this pane) before it applies the saved theme:
    links kept Qt's default #0000ff, unreadable on the dark theme."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from gpudesk.ui import theme

    QApplication.setPalette(QPalette())  # Qt's defaults, as before apply_theme
    pane = DetailsPane()
    qtbot.addWidget(pane)
    entry = make_entry("linked", name="Linked", sources=["https://example.com/spec"])
    pane.show_entry(entry)
    try:
        for mode in (theme.ThemeMode.DARK, theme.ThemeMode.LIGHT):
            theme.apply_theme(mode)
            link = QApplication.palette().color(QPalette.ColorRole.Link).name()
            assert _anchor_colors(pane) == {link}, mode
    finally:
        theme.apply_theme(theme.ThemeMode.LIGHT)


def test_a_price_statement_shows_only_when_the_entry_makes_one() -> None:
    # A priced entry listed "No price: n/a" and "No cloud rate: n/a", which said nothing.
    priced = entry_details_html(_entry(), today=dt.date(2026, 12, 1))
    assert "No price" not in priced and "No cloud rate" not in priced
    stated = make_entry(
        "no-price",
        price_unavailable={"reason": "sold only inside a system", "date": dt.date(2026, 12, 1)},
    )
    text = entry_details_html(stated, today=dt.date(2026, 12, 1))
    assert "No price" in text and "sold only inside a system (as of 2026-12-01)" in text


def test_the_computer_priced_row_shows_only_for_a_system_price() -> None:
    # A card priced on its own listed "Computer priced: n/a", which said nothing.
    alone = entry_details_html(_entry(), today=dt.date(2026, 12, 1))
    assert "Computer priced" not in alone
    system = make_entry(
        "in-a-box",
        price_usd=300_000,
        price_kind="system",
        price_system="Example 8-GPU server",
        price_date=dt.date(2026, 11, 1),
    )
    text = entry_details_html(system, today=dt.date(2026, 12, 1))
    assert "Computer priced" in text and "Example 8-GPU server" in text


def test_a_system_price_shows_the_memory_of_the_computer_priced() -> None:
    entry = make_entry(
        memory_gb=64,
        price_usd=1399,
        price_date=dt.date(2024, 10, 29),
        price_kind="system",
        price_system="Mac mini (2024), M4 Pro, 24 GB",
        price_system_memory_gb=24,
    )
    # memory in one unit on the pane: the chip's and the computer's, as sold, in GiB
    assert details_pane.field_text(entry, "price_system_memory_gb") == "24 GiB"
    page = entry_details_html(entry)
    assert "64 GiB" in page and not re.search(r"\d GB(?![/\w])", page.replace("24 GB", "")), page
    assert "Memory of the computer priced" in page
    # a chip's own price has no such row
    assert "Memory of the computer priced" not in entry_details_html(_entry())
