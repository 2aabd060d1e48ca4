"""``gpudesk install-desktop [--uninstall]``: the launcher and icon in the user's XDG folders.

The ``.desktop`` file names this installation's own ``gpudesk`` by absolute
path, so a launcher works for an install inside a virtual environment that
is not on the desktop session's PATH.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from gpudesk.cli.common import EXIT_OK, CliError

DESKTOP_FILE = "gpudesk.desktop"
ICON_FILE = "gpudesk.svg"


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``install-desktop`` to ``subparsers``."""
    parser = subparsers.add_parser(
        "install-desktop",
        help="add GPUDesk to the desktop's application menu (launcher and icon)",
        description=(
            "Install gpudesk.desktop into $XDG_DATA_HOME/applications and the icon into "
            "$XDG_DATA_HOME/icons/hicolor/scalable/apps (~/.local/share by default), with the "
            "absolute path of this installation's gpudesk. Exit 0, or 1 if a file cannot be "
            "written."
        ),
    )
    parser.add_argument(
        "--uninstall", action="store_true", help="remove the launcher and icon instead"
    )
    parser.set_defaults(handler=run_install_desktop)


def data_home() -> Path:
    value = os.environ.get("XDG_DATA_HOME", "")
    # The XDG spec: a relative path is invalid and must be ignored.
    return Path(value) if value and os.path.isabs(value) else Path.home() / ".local" / "share"


def launcher_command() -> str:
    """The Exec= command: this installation's script, else this Python with ``-m gpudesk``."""
    script = Path(sys.executable).parent / "gpudesk"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m gpudesk"


def desktop_entry(template: str, command: str, icon: Path) -> str:
    """The bundled entry with Exec= and Icon= pointing at this installation."""
    lines = []
    for line in template.splitlines():
        if line.startswith("Exec="):
            line = f"Exec={command}"
        elif line.startswith("Icon="):
            line = f"Icon={icon}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def targets() -> tuple[Path, Path]:
    base = data_home()
    return base / "applications" / DESKTOP_FILE, base / "icons/hicolor/scalable/apps" / ICON_FILE


def run_install_desktop(args: argparse.Namespace) -> int:
    from gpudesk.paths import resources_dir
    from gpudesk.storage import atomic_write_bytes, atomic_write_text

    desktop, icon = targets()
    if args.uninstall:
        for path in (desktop, icon):
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise CliError(f"cannot remove {path}: {exc.strerror or exc}") from exc
            print(f"removed {path}")
        return EXIT_OK
    template = (resources_dir() / DESKTOP_FILE).read_text(encoding="utf-8")
    icon_data = (resources_dir() / "icons" / ICON_FILE).read_bytes()
    try:
        for path in (desktop, icon):
            path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(icon, icon_data)
        atomic_write_text(desktop, desktop_entry(template, launcher_command(), icon))
    except OSError as exc:
        raise CliError(f"cannot write {exc.filename or desktop}: {exc.strerror or exc}") from exc
    print(f"installed {desktop}")
    print(f"installed {icon}")
    return EXIT_OK
