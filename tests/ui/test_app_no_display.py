"""`gpudesk` without a display prints a clear message and exits 1 (no Qt abort)."""

from __future__ import annotations

import os
import subprocess
import sys

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
    assert "no display available" in result.stderr
    assert "gpudesk list" in result.stderr and "QT_QPA_PLATFORM" in result.stderr
    assert "Aborted" not in result.stderr and "qt.qpa" not in result.stderr


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
    assert 0 < float(result.stdout.strip()) < 60
    assert target.read_text("utf-8") == "[General]\ntheme=dark\n"
