"""`gpudesk` without a display prints a clear message and exits 1 (no Qt abort)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland check")
@pytest.mark.parametrize("argv", [[], ["gui"]])
def test_no_display_prints_a_message_and_exits_1(argv: list[str]) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    result = subprocess.run(
        [sys.executable, "-m", "gpudesk", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "no display available (neither DISPLAY nor WAYLAND_DISPLAY is set)" in result.stderr
    assert "gpudesk list" in result.stderr
    # offscreen would start an invisible window that never exits
    assert "offscreen" not in result.stderr
    assert "Aborted" not in result.stderr and "qt.qpa" not in result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland check")
@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("DISPLAY", ":937", "DISPLAY=:937: the X server does not answer"),
        ("WAYLAND_DISPLAY", "wayland-937", "WAYLAND_DISPLAY=wayland-937: no compositor"),
    ],
)
def test_a_stale_display_is_named_and_exits_1_instead_of_aborting(
    variable: str, value: str, expected: str, tmp_path: object
) -> None:
    env = {
        key: item
        for key, item in os.environ.items()
        if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    env[variable] = value
    env["XDG_RUNTIME_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "gpudesk"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert expected in result.stderr
    assert "hint:" in result.stderr


def test_startup_check_prints_seconds_and_leaves_settings_alone() -> None:
    from gpudesk.ui.settings import settings_path

    target = settings_path()  # in this test's own XDG_CONFIG_HOME (conftest)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("[General]\ntheme=dark\n", "utf-8")
    env = {key: value for key, value in os.environ.items() if key != "QT_QPA_PLATFORM"}
    result = subprocess.run(
        [sys.executable, "-m", "gpudesk", "--startup-check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    value, unit = result.stdout.split()
    assert unit == "s" and 0 < float(value) < 60
    assert target.read_text("utf-8") == "[General]\ntheme=dark\n"


@pytest.mark.parametrize("platform", ["offscreen", "minimal"])
def test_an_invisible_qt_platform_is_refused_instead_of_running_forever(platform: str) -> None:
    env = {key: value for key, value in os.environ.items() if key != "QT_QPA_PLATFORM"}
    env["QT_QPA_PLATFORM"] = platform
    result = subprocess.run(
        [sys.executable, "-m", "gpudesk"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert f"QT_QPA_PLATFORM={platform} draws the window nowhere" in result.stderr
    assert "env -u QT_QPA_PLATFORM gpudesk" in result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="shared-library loading")
def test_a_missing_qt_system_library_is_named_and_exits_1_without_a_traceback(
    tmp_path: Path,
) -> None:
    # an unloadable libEGL.so.1 first on the search path stands in for one not installed
    (tmp_path / "libEGL.so.1").write_bytes(b"not a shared library")
    env = {key: value for key, value in os.environ.items() if key != "QT_QPA_PLATFORM"}
    env["LD_LIBRARY_PATH"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "gpudesk", "--startup-check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "cannot load Qt's libraries" in result.stderr
    assert "libEGL.so.1" in result.stderr
    assert "Quick start" in result.stderr
    assert "Traceback" not in result.stderr
