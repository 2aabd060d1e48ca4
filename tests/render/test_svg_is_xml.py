"""Issue 30: an SVG export is well-formed XML whatever text it holds (control characters too)."""

from __future__ import annotations

import xml.dom.minidom
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QPointF, QRectF, QSizeF
from PySide6.QtGui import QColor, QPainter

from gpudesk.cli import main
from gpudesk.render.export import svg_bytes

EVIL = "Evil\x1b]0;pwned\x07\x1b[31mRED\x9b2J\x00 & <b>\"q'\ufffe ]]>\x7f"


def _toml_string(text: str) -> str:
    return (
        '"'
        + "".join(
            f"\\u{ord(char):04X}" if char in '"\\' or not " " <= char <= "~" else char
            for char in text
        )
        + '"'
    )


def test_compare_svg_with_control_characters_in_a_name_is_xml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from catalog_factory import entry_data, to_toml

    text = to_toml(entry_data("evil-gpu", name="PLACEHOLDER"))
    (tmp_path / "evil-gpu.toml").write_text(
        text.replace('"PLACEHOLDER"', _toml_string(EVIL)), encoding="utf-8"
    )
    out = tmp_path / "radar.svg"
    code = main(["--catalog", str(tmp_path), "compare", "evil-gpu", "rtx-4090", "--svg", str(out)])
    assert code == 0, capsys.readouterr().err
    document = xml.dom.minidom.parseString(out.read_bytes())
    title = document.getElementsByTagName("title")[0].firstChild
    assert title is not None
    assert "Evil\ufffd]0;pwned\ufffd\ufffd[31mRED" in title.data  # what was there, marked
    assert "& <b>\"q'" in title.data  # markup characters stay text


@pytest.mark.usefixtures("qapp")
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(title=st.text(max_size=30), label=st.text(max_size=30))
def test_any_text_makes_well_formed_svg(title: str, label: str) -> None:
    def paint(painter: QPainter, target: QRectF) -> None:
        painter.drawText(QPointF(10, 20), label)

    data = svg_bytes(paint, QSizeF(120, 40), QColor("white"), title)
    xml.dom.minidom.parseString(data)  # raises on any character XML 1.0 forbids
