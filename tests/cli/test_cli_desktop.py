"""``gpudesk install-desktop``: a launcher naming this installation, an icon, an uninstall."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gpudesk.cli import main


def test_install_writes_launcher_with_absolute_exec_and_icon(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["install-desktop"]) == 0
    data = Path(os.environ["XDG_DATA_HOME"])
    desktop = data / "applications" / "gpudesk.desktop"
    icon = data / "icons/hicolor/scalable/apps/gpudesk.svg"
    text = desktop.read_text()
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    command = exec_line.removeprefix("Exec=").split()[0]
    assert Path(command).is_absolute()
    assert command.startswith(str(Path(sys.executable).parent)) or command == sys.executable
    assert f"Icon={icon}" in text
    assert icon.read_bytes().startswith(b"<")
    assert "[Desktop Entry]" in text and "Name=GPUDesk" in text
    assert str(desktop) in capsys.readouterr().out

    assert main(["install-desktop", "--uninstall"]) == 0
    assert not desktop.exists() and not icon.exists()
    assert main(["install-desktop", "--uninstall"]) == 0  # nothing left: still fine


def test_an_unwritable_folder_is_one_line_and_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the folder should be")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    assert main(["install-desktop"]) == 1
    assert "cannot write" in capsys.readouterr().err
