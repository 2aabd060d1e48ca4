"""The Fleet tab's Memory column says GiB, as the Devices and Plan tabs do, with the
vendor's "80 GB" explained beside it (issue 42 item 9: it read "80 GB" for a GPU that
reports 81,559 MiB = 79.6 GiB, while Devices said GiB)."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot
from survey_factory import gemm_run, gpu, node, survey
from ui_catalog_fixtures import small_catalog

from gpudesk.ui.fleet_table import MEMORY_TIP
from gpudesk.ui.fleet_view import COLUMNS, FleetView
from gpudesk.ui.state import AppState


def test_memory_reads_in_gib_with_the_vendors_gb_explained(qtbot: QtBot, tmp_path: Path) -> None:
    nodes = [
        node(f"n{i}", [gpu(0, catalog_id="a100")], [gemm_run(0, 280.0, "a100")]) for i in range(2)
    ]
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(survey(nodes)), encoding="utf-8")
    view = FleetView(AppState(catalog=small_catalog()))
    qtbot.addWidget(view)
    assert view.open_file(path)
    column = COLUMNS.index("Memory")
    cells = [view.model.item(row, column) for row in range(view.model.rowCount())]
    assert len(cells) == 2
    # survey_factory's GPU reports 81,559 MiB, nvidia-smi's total for an H100 80GB
    assert [cell.text() for cell in cells] == [f"{81559 / 1024:.1f} GiB"] * 2 == ["79.6 GiB"] * 2
    assert all(cell.toolTip() == MEMORY_TIP for cell in cells)
    header = view.model.horizontalHeaderItem(column)
    assert header is not None and header.toolTip() == MEMORY_TIP
    assert "'80 GB'" in MEMORY_TIP and "1.074 GB" in MEMORY_TIP
