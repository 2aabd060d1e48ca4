"""The core packages run on headless servers: they must import no Qt."""

import pkgutil
import subprocess
import sys

import gpudesk

QT_FREE_PACKAGES = ("catalog", "hardware", "bench", "planning", "compare", "fleet", "cli")


def _core_modules() -> list[str]:
    names = ["gpudesk", "gpudesk.paths", "gpudesk.storage", "gpudesk.progress", "gpudesk.measured"]
    for info in pkgutil.walk_packages(gpudesk.__path__, "gpudesk."):
        top = info.name.split(".")[1]
        if top in QT_FREE_PACKAGES:
            names.append(info.name)
    return names


def test_core_modules_import_without_qt() -> None:
    modules = _core_modules()
    assert "gpudesk.catalog.loader" in modules
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'shiboken6', 'pyqtgraph', 'pynvml')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout
