"""Issue 20 items 6, 7 and 9 in the window: names are text, exports are safe, paths are words."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from catalog_factory import make_entry
from PySide6 import QtGui
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import Catalog
from gpudesk.compare.radar import DEFAULT_RADAR_AXES
from gpudesk.render.text import plain_tooltip
from gpudesk.ui.catalog_model import NAME_COLUMN_INDEX, CatalogTableModel
from gpudesk.ui.compare_bar import CompareBar
from gpudesk.ui.compare_view import CompareView
from gpudesk.ui.export_dialog import check_target
from gpudesk.ui.state import AppState

EVIL = "<img src='/tmp/x.png'><b>Evil</b>"
FORMULA = '=HYPERLINK("http://x","y")'


def _shown_text(markup: str) -> str:
    """What Qt displays for a tooltip: its plain text when it takes it as rich text."""
    if QtGui.Qt.mightBeRichText(markup):
        document = QTextDocument()
        document.setHtml(markup)
        return document.toPlainText()
    return markup


@pytest.fixture
def state() -> AppState:
    return AppState(
        catalog=Catalog(
            entries=[
                make_entry("evil", name=EVIL),
                make_entry("formula", name=FORMULA),
                make_entry("plain", name="Plain GPU"),
            ]
        )
    )


@pytest.fixture
def view(qtbot: QtBot, state: AppState) -> CompareView:
    widget = CompareView(state)
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    qtbot.waitExposed(widget)
    state.set_compare(["evil", "formula", "plain"])
    return widget


def test_plain_tooltip_shows_every_character() -> None:
    assert plain_tooltip("RTX 4090") == "RTX 4090"
    assert _shown_text(plain_tooltip(EVIL)) == EVIL
    assert _shown_text(plain_tooltip(EVIL + "\nline 2")) == EVIL + "\nline 2"


def test_the_compare_title_is_plain_text(view: CompareView) -> None:
    assert view.title.textFormat() == Qt.TextFormat.PlainText
    assert "<img" in view.title.text()


def test_compare_table_tooltips_show_the_name_literally(view: CompareView) -> None:
    model = view.table_model
    header = model.headerData(0, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert _shown_text(str(header)) == EVIL
    cell = model.data(model.index(1, 0), Qt.ItemDataRole.ToolTipRole)
    assert _shown_text(str(cell)).splitlines()[0] == EVIL


def test_radar_tooltip_is_escaped(view: CompareView, qtbot: QtBot) -> None:
    view.show_charts()  # 1200 px leave the three long names a table and charts in a tab
    qtbot.waitUntil(lambda: view.radar.isVisible(), timeout=2000)
    item = view.radar.item
    pixel = item.polygon("evil")[DEFAULT_RADAR_AXES.index("memory_gb")]
    assert pixel is not None
    viewport = view.radar.viewport()
    qtbot.mouseMove(viewport, view.radar.mapFromScene(item.mapToScene(pixel)))
    qtbot.waitUntil(lambda: item.toolTip() != "", timeout=2000)
    assert _shown_text(item.toolTip()).splitlines()[0] == EVIL
    assert item.tooltip_at(QPointF(pixel.x(), pixel.y())) is not None


def test_catalog_name_tooltip_and_compare_chips(qtbot: QtBot, state: AppState) -> None:
    model = CatalogTableModel(state)
    row = [entry.id for entry in state.entries()].index("evil")
    tip = model.data(model.index(row, NAME_COLUMN_INDEX), Qt.ItemDataRole.ToolTipRole)
    assert _shown_text(str(tip)) == EVIL
    state.set_compare(["evil", "plain"])
    bar = CompareBar(state)
    qtbot.addWidget(bar)
    chip = bar.chips["evil"]
    assert _shown_text(chip.toolTip()) == EVIL
    assert _shown_text(chip.remove_button.toolTip()) == f"Remove {EVIL}"


def test_no_label_in_the_compare_tab_renders_a_name_as_markup(view: CompareView) -> None:
    for label in view.findChildren(QLabel):
        if "<img" in label.text():
            assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()


def test_export_csv_from_the_window_neutralises_formulas(view: CompareView, tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    view.export_csv(target)
    cells = [cell for row in csv.reader(io.StringIO(target.read_text("utf-8"))) for cell in row]
    assert "'" + FORMULA in cells
    assert FORMULA not in cells


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("~nosuchuser/x.pdf", "no user 'nosuchuser'"),
        ("/tmp/" + "n" * 300 + ".pdf", "File name too long"),
        ("/tmp/" + "n" * 300 + "/x.pdf", "File name too long"),
        ("/", "Choose a file name"),
        ("/tmp/a\0b.pdf", "character no file name can"),
    ],
)
def test_export_dialog_paths_get_words_not_tracebacks(typed: str, words: str) -> None:
    path, problem = check_target(typed)
    assert path is None
    assert words in problem
    assert len(problem) < 200  # a 300-character name is elided, the dialog keeps its size
