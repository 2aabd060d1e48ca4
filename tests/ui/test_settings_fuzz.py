"""Property test for the settings file (issue 20): whatever it holds, the window opens.

The file is either random bytes or an INI file whose GPUDesk keys hold
hostile values (deep JSON, numbers past 32 bits, Qt's ``@Variant``/
``@ByteArray`` forms with garbage, markup, huge text). The window always
builds and shows, every problem is said at most once per part, and a file
that had to be set aside is kept under a new name with its bytes unchanged.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pytestqt.qtbot import QtBot
from ui_catalog_fixtures import small_catalog

from gpudesk.ui import theme
from gpudesk.ui.main_window import MainWindow
from gpudesk.ui.settings import settings_path
from gpudesk.ui.state import AppState

KEYS = [
    "catalog/filters",
    "catalog/header",
    "catalog/columns",
    "catalog/splitter",
    "compare/ids",
    "window/geometry",
    "ui/theme",
    "export/folder",
    "export/paper",
]
VALUES = [
    json.dumps({"min_memory_gb": 2**40, "max_price_usd": -(2**40), "min_year": 2**31}),
    json.dumps({"text": "<img src=x>", "segments_off": [1, None, "consumer"]}),
    json.dumps({"features": "mig", "vendors_off": {"a": 1}}),
    json.dumps(["a100", 7, None, "x" * 1000]),
    "[" * 5000 + "]" * 5000,
    "{" * 50,
    "@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x18)",
    "@ByteArray(\\xff\\xfe\\0\\0garbage)",
    "@Rect(1 2 3)",
    "@Size(99999999999 -1)",
    "dark",
    "purple",
    "",
    "x" * 100_000,
    "4294967296",
    "-9223372036854775809",
    "true",
]


@st.composite
def settings_files(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 5)) == 0:
        return draw(st.binary(max_size=2000))
    lines: list[str] = []
    for key in draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=6, unique=True)):
        section, _, name = key.partition("/")
        hostile = st.sampled_from(VALUES)
        value = draw(st.one_of(hostile, hostile, hostile, st.text(max_size=40)))
        lines.append(f"[{section}]\n{name}={value}\n")
    return "".join(lines).encode("utf-8", "surrogatepass")


COUNTS = {"files": 0, "with_problems": 0, "set_aside": 0}


@pytest.fixture(autouse=True)
def _light_theme_after() -> object:
    yield None
    theme.apply_theme(theme.ThemeMode.LIGHT)


@pytest.mark.timeout(900)  # many examples; a slow shared machine
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(content=settings_files())
def test_any_settings_file_opens_the_window(qtbot: QtBot, content: bytes) -> None:
    folder = settings_path().parent
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    settings_path().write_bytes(content)
    window = MainWindow(state=AppState(catalog=small_catalog()))
    try:
        window.show()
        qtbot.waitExposed(window)
        window.show_tab("Compare")
        window.show_tab("Catalog")
        COUNTS["files"] += 1
        problems = window.settings_problems
        assert len(problems) == len(set(problems))  # each said once
        COUNTS["with_problems"] += bool(problems)
        kept = [name for name in os.listdir(folder) if ".bad-" in name]
        if kept:
            COUNTS["set_aside"] += 1
            assert (folder / kept[0]).read_bytes() == content
        window.close()
    finally:
        window.deleteLater()


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> object:
    yield None
    target = os.environ.get("GPUDESK_FUZZ_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"settings": COUNTS}) + "\n")
