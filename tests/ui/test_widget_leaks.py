"""The GUI tests' widget check (tests/widget_leaks.py) deletes what qtbot closed and names
what Python kept."""

from __future__ import annotations

import shiboken6
import widget_leaks
from PySide6.QtWidgets import QFrame, QLabel, QMenu, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot


def test_closed_widgets_are_deleted_and_kept_ones_named_then_deleted(qtbot: QtBot) -> None:
    before = widget_leaks.alive()
    closed = QLabel("closed")
    closed.deleteLater()  # what qtbot leaves after a test: never run without an event loop
    kept = QFrame()
    kept.setObjectName("kept")
    QVBoxLayout(kept).addWidget(QLabel("inside"))
    assert len(widget_leaks.alive() - before) == 3
    assert widget_leaks.sweep(before) == ["QFrame('kept') with 2 widgets"]
    assert not shiboken6.isValid(closed)
    assert not shiboken6.isValid(kept)  # the next test starts clean all the same
    assert widget_leaks.alive() == before


def test_the_same_leak_is_named_once_with_a_count(qtbot: QtBot) -> None:
    before = widget_leaks.alive()
    menus = [QMenu() for _ in range(3)]
    assert widget_leaks.sweep(before) == ["3 x QMenu('') with 1 widgets"]
    assert not any(shiboken6.isValid(menu) for menu in menus)


def test_widgets_alive_before_the_test_are_not_its_leak(qtbot: QtBot) -> None:
    earlier = QWidget()
    qtbot.addWidget(earlier)
    before = widget_leaks.alive()
    assert widget_leaks.sweep(before) == []
    assert shiboken6.isValid(earlier)
