"""The Compare charts keep their choices between starts (issue 42 item 9): the radar's
axes, ring and scale, the scatter's figures and log toggles, the bars' figure, the tab.
A settings file is untrusted: whatever it holds under these keys, the charts open."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings as hypothesis_settings, strategies as st
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot
from ui_catalog_fixtures import small_catalog

from gpudesk.compare.radar import MAX_AXES, MIN_AXES, RADAR_AXES
from gpudesk.ui.compare_charts import _SAVED, CHART_TABS, CompareCharts, saved_choices
from gpudesk.ui.main_window import MainWindow
from gpudesk.ui.settings import open_settings
from gpudesk.ui.state import AppState


def _charts() -> CompareCharts:
    return CompareCharts(AppState(catalog=small_catalog()), lambda *_: None)


def test_the_radar_scatter_and_chart_tab_come_back_after_a_restart(
    qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / "gpudesk.conf"
    window = MainWindow(settings=open_settings(path), state=AppState(catalog=small_catalog()))
    qtbot.addWidget(window)
    charts = window.view("Compare").charts  # type: ignore[attr-defined]
    charts.scale_combo.setCurrentIndex(charts.scale_combo.findData("log"))
    charts.reference_combo.setCurrentIndex(charts.reference_combo.findData("catalog"))
    charts.log_x_check.setChecked(True)
    axes = ["memory_gb", "bandwidth_gbs", "fp32_tflops", "bf16_tensor_tflops", "fp64_tflops"]
    charts.axis_picker.set_checked_axes(axes)
    charts.setCurrentIndex(2)  # Bars
    window.save_settings()
    window.save_on_close = False
    window.close()

    again = MainWindow(settings=open_settings(path), state=AppState(catalog=small_catalog()))
    again.save_on_close = False
    qtbot.addWidget(again)
    restored = again.view("Compare").charts  # type: ignore[attr-defined]
    assert restored.scale_combo.currentData() == "log"
    assert restored.reference_combo.currentData() == "catalog"
    assert restored.log_x_check.isChecked() and not restored.log_y_check.isChecked()
    assert restored.axis_picker.checked_axes() == axes
    assert restored.tabText(restored.currentIndex()) == "Bars"
    assert again.settings_problems == []
    again.close()


_ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=40),
    st.sampled_from(["log", "linear", "catalog", "true", "false", "Bars", "memory_gb"]),
    st.lists(st.sampled_from([*RADAR_AXES, "nope", ""]), max_size=12).map(json.dumps),
    st.lists(st.integers(), max_size=3),
)


@hypothesis_settings(max_examples=100)
@given(values=st.fixed_dictionaries({name: _ANY for name in _SAVED}))
def test_any_saved_chart_choice_is_used_or_ignored(values: dict[str, object]) -> None:
    choices = saved_choices(values)
    assert set(choices) <= set(_SAVED)
    axes = choices.get("axes")
    assert axes is None or (
        isinstance(axes, list)
        and MIN_AXES <= len(axes) <= MAX_AXES
        and set(axes) <= set(RADAR_AXES)
    )
    assert choices.get("scale", "log") in ("linear", "log")
    assert choices.get("reference", "catalog") in ("selection", "catalog")
    assert all(isinstance(choices.get(name, False), bool) for name in ("log_x", "log_y"))
    assert choices.get("tab", "Bars") in CHART_TABS
    # what was on offer is kept as it was
    for name, offered in (
        ("scale", ("log", "linear")),
        ("reference", ("catalog", "selection")),
        ("tab", CHART_TABS),
    ):
        if values[name] in offered:
            assert choices[name] == values[name]


def test_a_crafted_file_leaves_the_charts_as_they_were(qtbot: QtBot, tmp_path: Path) -> None:
    saved = QSettings(str(tmp_path / "s.conf"), QSettings.Format.IniFormat)
    for key, value in {
        "axes": json.dumps(["memory_gb"] * 9),
        "scale": "cubic",
        "log_x": "yes",
        "tab": "Secret",
        "x": "price_usd'; rm -rf",
    }.items():
        saved.setValue(_SAVED[key], value)
    charts = _charts()
    qtbot.addWidget(charts)
    before = (charts.axis_picker.checked_axes(), charts.scale_combo.currentData())
    charts.restore_settings(saved)
    assert (charts.axis_picker.checked_axes(), charts.scale_combo.currentData()) == before
    assert not charts.log_x_check.isChecked() and charts.currentIndex() == 0
