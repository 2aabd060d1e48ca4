"""Issue 30: an SVG export is well-formed XML whatever text it holds (control characters too)."""

from __future__ import annotations

import re
import xml.dom.minidom
from pathlib import Path

import pytest
import reach
from hypothesis import HealthCheck, given, settings, strategies as st
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


def test_a_title_that_starts_with_u_fffe_is_kept_not_byte_swapped(qapp: object) -> None:
    # Found by test_any_text_makes_well_formed_svg: PySide reads a leading U+FFFE as a
    # reversed byte-order mark, and the title "\ufffeab" came out as "\u6100\u6200"
    # (and "\ufffe" alone as no title at all).
    for title, expected in [("\ufffeab", "\ufffdab"), ("\ufffe", "\ufffd")]:
        data = svg_bytes(lambda painter, target: None, QSizeF(120, 40), QColor("white"), title)
        (element,) = xml.dom.minidom.parseString(data).getElementsByTagName("title")
        assert element.firstChild is not None
        assert element.firstChild.data == expected


#: Characters XML 1.0 cannot hold or discourages (C0 but tab/LF/CR, DEL, C1, U+FFFE/F).
_NOT_XML_1_0 = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")
#: Any text, or text made of markup and the characters XML forbids (which plain
#: st.text() rarely draws).
_SVG_TEXT = st.one_of(
    st.text(max_size=30),
    st.text(st.sampled_from("aZ 9&<>\"';\t\r\n\x00\x08\x1b\x7f\x85\x9f\ufffe\uffff"), max_size=30),
)


@pytest.mark.usefixtures("qapp")
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(title=_SVG_TEXT, label=_SVG_TEXT)
@pytest.mark.reaches(marked=14, plain=6)
def test_any_text_makes_well_formed_svg(title: str, label: str) -> None:
    def paint(painter: QPainter, target: QRectF) -> None:
        painter.drawText(QPointF(10, 20), label)

    data = svg_bytes(paint, QSizeF(120, 40), QColor("white"), title)
    document = xml.dom.minidom.parseString(data)  # raises on any character XML 1.0 forbids
    (element,) = document.getElementsByTagName("title")
    written = "".join(node.data for node in element.childNodes)
    # The title is kept, each character XML cannot hold marked with U+FFFD (and line
    # ends normalised, as every XML parser does).
    expected = _NOT_XML_1_0.sub("\ufffd", title or "GPUDesk chart")
    assert written == expected.replace("\r\n", "\n").replace("\r", "\n")
    reach.reached("marked" if expected != (title or "GPUDesk chart") else "plain")
