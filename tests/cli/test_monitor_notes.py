"""A warning while `gpudesk monitor` draws its screen ("gpu0 lost") goes to the screen's
last lines, not to stderr over the screen."""

from __future__ import annotations

import logging

from gpudesk.cli.monitor_cmd import ScreenNotes


def test_warnings_become_the_screens_last_lines() -> None:
    lost = logging.getLogger("gpudesk.telemetry.nvidia")
    with ScreenNotes.installed() as notes:
        lost.warning("%s lost: %s", "gpu0", "GPU is lost\nreboot the system")
        for index in range(4):
            lost.warning("gpu%d lost", index + 1)
        lost.info("not a warning")
        lines = notes.lines(width=20)
    assert lines == ["note: gpu2 lost", "note: gpu3 lost", "note: gpu4 lost"]
    assert all(len(line) < 20 for line in lines)
    with ScreenNotes.installed() as first:
        lost.warning("gpu0 lost: GPU is lost\nreboot the system")
    assert first.lines() == ["note: gpu0 lost: GPU is lost reboot the system"]
    # the handler leaves with its block: later warnings are no longer caught
    assert first not in logging.getLogger("gpudesk").handlers
    lost.warning("after")
    assert first.lines() == ["note: gpu0 lost: GPU is lost reboot the system"]
