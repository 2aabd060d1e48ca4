"""Finds the widgets a GUI test leaves alive, and deletes them.

pytest-qt closes the widgets given to ``qtbot.addWidget`` and calls ``deleteLater``, but
Qt 6 runs a deferred delete only from an event loop entered after the call: between tests
none runs, so closed widgets piled up hidden until some later test happened to spin one
(9,814 after two test files; every theme switch restyled them all). :func:`sweep` runs
those deletes; whatever the test built that is still alive afterwards is kept by Python (a
global, a cache, a connection, a fixture) or was never handed to qtbot: a leak.

Imports Qt: only GUI tests load this module.
"""

from __future__ import annotations

import gc
from collections import Counter

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QWidget

#: Qt's own top-level helpers, made and deleted on Qt's schedule (the tooltip label lives
#: until its hide timer fires): deleted with the rest, never counted as a test's leak.
_QT_INTERNAL = frozenset({"QTipLabel", "QWhatsThat"})

#: Deleting one widget can free Python objects whose own widgets were deleteLater'd.
_MAX_ROUNDS = 8


def alive() -> set[int]:
    """The addresses of every widget alive now (empty without a QApplication)."""
    if QApplication.instance() is None:
        return set()
    return {_address(widget) for widget in QApplication.allWidgets()}


def sweep(before: set[int]) -> list[str]:
    """Delete what a test left behind; name the widgets it built that outlived their owners.

    Args:
        before: :func:`alive` when the test started: those widgets are not the test's.

    Returns:
        One line per kind of leaked top-level widget (how many, their class, object
        name and number of widgets in each); empty when the test left nothing alive.
    """
    if QApplication.instance() is None:
        return []
    _run_deferred_deletes(before)
    new = [widget for widget in QApplication.allWidgets() if _address(widget) not in before]
    if not new:
        return []
    tops = [widget for widget in new if widget.isWindow()]
    kinds = Counter(
        f"{type(top).__name__}({top.objectName()!r}) with {_size(top, new)} widgets"
        for top in tops
        if top.metaObject().className() not in _QT_INTERNAL
    )
    leaked = [kind if count == 1 else f"{count} x {kind}" for kind, count in kinds.items()]
    for top in tops:  # the next test starts clean whatever this one kept
        top.close()
        top.deleteLater()
    del new, tops
    _run_deferred_deletes(before)
    return leaked


def _run_deferred_deletes(before: set[int]) -> None:
    """Run pending ``deleteLater`` calls, collecting garbage while new widgets remain.

    A delete can free Python objects in cycles, and a freed object can post more deletes
    (a single-shot timer whose context went holds its slot until its own deleteLater):
    rounds go on until one frees nothing. A full collection costs about 0.1 s on the
    test process's heap; most tests leave nothing after the first deletes and skip it.
    """
    left = -1
    for _ in range(_MAX_ROUNDS):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        now = sum(1 for widget in QApplication.allWidgets() if _address(widget) not in before)
        if now == 0:
            return
        freed = gc.collect()  # a cycle may hold the last Python reference to a widget
        if freed == 0 and now == left:
            return
        left = now


def _address(widget: QWidget) -> int:
    address: int = shiboken6.getCppPointer(widget)[0]
    return address


def _size(top: QWidget, widgets: list[QWidget]) -> int:
    return sum(1 for widget in widgets if widget is top or top.isAncestorOf(widget))
