"""Test configuration: Qt offscreen, GUI tests marked, no leaked threads.

Without Qt (the CI's Qt-free job: no PySide6, pyqtgraph or pytest-qt) the
modules that import Qt are not collected and tests that ask for ``qtbot`` or
``qapp`` are marked ``gui``: ``pytest -m "not gui"`` runs the rest.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import reach
from hypothesis import HealthCheck, settings

QT_AVAILABLE = all(
    importlib.util.find_spec(name) is not None for name in ("PySide6", "pyqtgraph", "pytestqt")
)
#: An import of Qt, of a Qt package of ours, or of a test helper that needs Qt.
_QT_IMPORT = re.compile(
    r"^\s*(?:from|import)\s+(?:PySide6|shiboken6|pyqtgraph|pytestqt|gpudesk\.ui\b|"
    r"gpudesk\.render\b|gpudesk\.report\.pdf\b|gpudesk\.report\s+import\s+pdf\b|"
    r"ui_catalog_fixtures\b)",
    re.MULTILINE,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    if not QT_AVAILABLE:
        # pytest-qt's ini key, declared so that pyproject.toml stays valid without it.
        parser.addini("qt_api", "Qt binding for pytest-qt (unused: pytest-qt is absent)")


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Without Qt, leave out test modules that import it (they cannot even be imported)."""
    if QT_AVAILABLE or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return bool(_QT_IMPORT.search(collection_path.read_text(encoding="utf-8"))) or None


# Hypothesis runs the same examples on every run, wherever it runs: derandomised (no
# example database, no random seed), with no deadline and no too-slow check that a loaded
# two-CPU machine would trip. HYPOTHESIS_PROFILE=explore searches afresh, for local hunting;
# a bug it finds becomes an explicit example test next to the property.
settings.register_profile(
    "gpudesk",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gpudesk"))


def _no_constants_from_loaded_modules() -> None:
    """Derandomised is not enough: Hypothesis (6.131+) also draws constants it finds in
    the source of every module loaded so far, so a test's examples depended on which
    tests ran before it in that process (a floor met alone missed under xdist: 'read'
    in 10 of 100 examples alone, 6 in the suite). Under the CI profile that pool stays
    empty; HYPOTHESIS_PROFILE=explore keeps it."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - an older Hypothesis has no such pool
        return
    empty = getattr(providers, "_local_constants", None)
    if empty is not None and hasattr(providers, "_get_local_constants"):
        providers._get_local_constants = lambda: empty


if os.environ.get("HYPOTHESIS_PROFILE", "gpudesk") == "gpudesk":
    _no_constants_from_loaded_modules()

# Before any QApplication exists: tests never need a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_QUICK_BACKEND", "software")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "reaches(**floors): at least this many examples reach each named check (tests/reach.py)",
    )


def pytest_assertion_pass(item: pytest.Item, lineno: int, orig: str, expl: str) -> None:
    reach.assert_passed()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Count a property test's examples and those that reached its check (tests/reach.py)."""
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    if handle is None:
        return (yield)
    inner = handle.inner_test
    tally = reach.Tally()

    def counted(*args: object, **kwargs: object) -> object:
        tally.start_example()
        result = inner(*args, **kwargs)
        tally.end_example()  # only examples that passed: a failing one fails the test anyway
        return result

    handle.inner_test = counted
    reach.begin(tally)
    try:
        result = yield
    finally:
        reach.end()
        handle.inner_test = inner
    marker = item.get_closest_marker("reaches")
    floors = {str(label): int(floor) for label, floor in (marker.kwargs if marker else {}).items()}
    report = os.environ.get("GPUDESK_REACH_REPORT")
    if report:  # for choosing floors (tests/reach.py)
        with open(report, "a", encoding="utf-8") as out:
            out.write(f"{item.nodeid}\t{tally.examples}\t{tally.asserted}\t{tally.labels}\n")
    missing = reach.shortfall(tally, floors)
    assert missing is None, f"property test reached its check too rarely: {missing}"
    return result


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "qtbot" in fixtures or "qapp" in fixtures:
            item.add_marker(pytest.mark.gui)


@pytest.fixture(autouse=True)
def _isolated_user_data(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Each test gets its own user data folder and settings: never the real ones."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    yield


@pytest.fixture
def pids(tmp_path: Path) -> Iterator[Path]:
    """A file fake tools append their PIDs to; every PID in it is killed after the test
    (tests/stray_processes.py checks they are gone)."""
    path = tmp_path / "pids"
    path.touch()
    yield path
    for word in path.read_text().split():
        with contextlib.suppress(OSError):
            os.kill(int(word), signal.SIGKILL)


@pytest.fixture(autouse=True)
def _fixed_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees an 80-column terminal, not the one pytest was started in (or none,
    under xdist or a CI runner): a test about other widths sets COLUMNS itself."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")


@pytest.fixture(autouse=True)
def _no_host_gpus(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detection reads an empty sysfs tree and no Mac, unless a test builds its own."""
    monkeypatch.setenv("GPUDESK_SYSFS_ROOT", str(tmp_path_factory.mktemp("empty-sysfs")))
    monkeypatch.delenv("GPUDESK_SYSTEM_PROFILER_JSON", raising=False)
    monkeypatch.setattr("gpudesk.hardware.apple.is_macos", lambda: False)


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    """Fail a test that leaves a Python or Qt thread running."""
    before = set(threading.enumerate())
    yield
    leaked = [
        thread
        for thread in threading.enumerate()
        if thread not in before and thread.is_alive() and not thread.daemon
    ]
    assert not leaked, f"test left threads running: {leaked}"
    ui_worker = sys.modules.get("gpudesk.ui.worker")
    if ui_worker is None:  # core tests never load Qt
        return
    running = ui_worker.running_threads()
    assert not running, f"test left QThreads running: {running}"


@pytest.fixture(autouse=True)
def _no_leaked_widgets(request: pytest.FixtureRequest) -> Iterator[None]:
    """Delete the widgets a GUI test built, and fail it if any outlived it (widget_leaks.py)."""
    if request.node.get_closest_marker("gui") is None:  # core tests never load Qt
        yield
        return
    import widget_leaks

    before = widget_leaks.alive()
    failed = request.session.testsfailed
    yield
    # pytest drops the test's fixture values only after teardown: drop them now, or a
    # fixture's view would count as kept.
    if isinstance(request.node, pytest.Function):
        request.node.funcargs.clear()
    leaked = widget_leaks.sweep(before)
    # A failed test's traceback keeps its widgets: that failure is the one to report.
    assert not leaked or request.session.testsfailed > failed, (
        f"test left widgets alive (kept from Python, or never given to qtbot): {leaked}"
    )


@pytest.fixture(autouse=True)
def _fresh_gpu_colors() -> Iterator[None]:
    """Each test starts a new session of GPU colors (without importing Qt for core tests)."""
    yield
    colors = sys.modules.get("gpudesk.render.colors")
    if colors is not None:
        colors.SESSION_SLOTS.reset()
