"""The catalog's kind and status filters (issue 43): announced parts start hidden
behind a box that says how many there are, and the year range follows the catalog
(a 2026 part is shown on first start)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from catalog_factory import make_entry
from pytestqt.qtbot import QtBot
from ui_catalog_fixtures import small_entries

from gpudesk.catalog.loader import Catalog
from gpudesk.catalog.schema import Kind, Status
from gpudesk.ui.catalog_model import ENTRY_ID_ROLE
from gpudesk.ui.catalog_view import CatalogView
from gpudesk.ui.state import AppState


def _catalog() -> Catalog:
    announced = {
        "status": "announced",
        "status_date": dt.date(2026, 3, 16),
        "segment": None,
        "architecture": None,
        "release_year": None,
        "memory_type": None,
        "fp32_tflops": None,
        "bf16_tensor_tflops": 4000.0,
    }
    extra = [
        make_entry("next-a", name="Next A", **announced),
        make_entry("next-b", name="Next B", **announced),
        make_entry(
            "tpu-x",
            name="TPU X",
            vendor="Google",
            kind="tpu",
            status="cloud-only",
            status_date=dt.date(2026, 11, 1),
            release_year=2026,
        ),
    ]
    return Catalog(entries=[*small_entries(), *extra])


@pytest.fixture
def view(qtbot: QtBot) -> Iterator[CatalogView]:
    widget = CatalogView(AppState(catalog=_catalog()))
    qtbot.addWidget(widget)
    widget.resize(1300, 700)
    widget.show()
    yield widget


def _visible(view: CatalogView) -> set[str]:
    proxy = view.proxy
    return {proxy.index(row, 0).data(ENTRY_ID_ROLE) for row in range(proxy.rowCount())}


def test_announced_parts_start_hidden_behind_a_box_with_their_count(view: CatalogView) -> None:
    panel = view.filters
    assert view.visible_count() == 7  # six GPUs and the TPU
    assert not {"next-a", "next-b"} & _visible(view)
    box = panel.status_boxes[Status.ANNOUNCED]
    assert box.text() == "Announced (2)" and not box.isChecked()
    assert panel.announced_hidden() and panel.is_default()
    box.setChecked(True)
    assert {"next-a", "next-b"} <= _visible(view) and view.visible_count() == 9
    view.reset_filters()
    assert view.visible_count() == 7 and not box.isChecked()


def test_the_kind_boxes_filter(view: CatalogView) -> None:
    panel = view.filters
    assert set(panel.kind_boxes) == {Kind.GPU, Kind.TPU}
    panel.kind_boxes[Kind.GPU].setChecked(False)
    assert _visible(view) == {"tpu-x"}


def test_the_year_range_follows_the_catalog_past_2025(view: CatalogView) -> None:
    assert view.filters.max_year.value() == 2026
    assert "tpu-x" in _visible(view)


def test_the_status_and_kind_choices_are_saved_and_restored(view: CatalogView) -> None:
    panel = view.filters
    panel.status_boxes[Status.ANNOUNCED].setChecked(True)
    panel.kind_boxes[Kind.TPU].setChecked(False)
    saved = panel.save_state()
    view.reset_filters()
    panel.restore_state(saved)
    assert panel.status_boxes[Status.ANNOUNCED].isChecked()
    assert not panel.kind_boxes[Kind.TPU].isChecked()
    # a crafted record with the wrong types changes nothing
    panel.restore_state({"statuses_on": "announced", "kinds_off": 5})
    assert panel.status_boxes[Status.ANNOUNCED].isChecked()


def test_a_catalog_of_shipping_gpus_shows_no_kind_or_status_boxes(qtbot: QtBot) -> None:
    widget = CatalogView(AppState(catalog=Catalog(entries=small_entries())))
    qtbot.addWidget(widget)
    assert not widget.filters.kind_boxes and not widget.filters.status_boxes
    assert widget.filters.kind_group.isHidden()
    assert widget.visible_count() == 6
