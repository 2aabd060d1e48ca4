"""The catalog table's first column widths: Qt's resizeColumnsToContents, measured per string.

Before the table is shown, CatalogView measures each distinct text once with
the style instead of letting Qt's delegate ask the model seven roles per cell
(a sixth of start-up). The widths must be the ones Qt would give.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from catalog_factory import make_entry
from hypothesis import HealthCheck, given, settings, strategies as st
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication
from ui_catalog_fixtures import small_catalog

from gpudesk.catalog.loader import Catalog, load_catalog
from gpudesk.ui import theme
from gpudesk.ui.catalog_view import CatalogView
from gpudesk.ui.state import AppState


def widths(view: CatalogView) -> list[int]:
    header = view.table.horizontalHeader()
    return [header.sectionSize(column) for column in range(header.count())]


def qt_widths(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The widths Qt's own resizeColumnsToContents gives the same unshown view."""
    with monkeypatch.context() as patch:
        patch.setattr(
            CatalogView,
            "_resize_columns_to_contents_unshown",
            lambda view: view.table.resizeColumnsToContents(),
        )
        view = CatalogView(AppState(catalog=catalog))
    try:
        return widths(view)
    finally:
        view.deleteLater()


def our_widths(catalog: Catalog) -> list[int]:
    view = CatalogView(AppState(catalog=catalog))
    try:
        return widths(view)
    finally:
        view.deleteLater()


@pytest.fixture
def dark_and_big() -> Iterator[None]:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    font = app.font()
    theme.apply_theme(theme.ThemeMode.DARK)
    bigger = QFont(font)
    bigger.setPointSizeF(font.pointSizeF() * 1.5)
    app.setFont(bigger)
    yield
    app.setFont(font)
    theme.apply_theme(theme.ThemeMode.LIGHT)


def test_the_bundled_catalog_gets_the_widths_qt_gives(
    qtbot: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = load_catalog(include_user=False)
    assert our_widths(catalog) == qt_widths(catalog, monkeypatch)


def test_with_a_bigger_font_and_the_dark_theme_too(
    qtbot: object, monkeypatch: pytest.MonkeyPatch, dark_and_big: None
) -> None:
    catalog = small_catalog()
    assert our_widths(catalog) == qt_widths(catalog, monkeypatch)


names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40
).filter(lambda name: name.strip() != "")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(names, min_size=1, max_size=4))
def test_any_names_get_the_widths_qt_gives(
    qtbot: object, monkeypatch: pytest.MonkeyPatch, given_names: list[str]
) -> None:
    # Wide, narrow, combining, right-to-left, tab and line-break characters alike.
    entries = [
        make_entry(f"gpu-{number}", name=name, architecture=name[::-1])
        for number, name in enumerate(given_names)
    ]
    catalog = Catalog(entries=entries)
    assert our_widths(catalog) == qt_widths(catalog, monkeypatch)
