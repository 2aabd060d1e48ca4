"""Regenerate the README's screenshots from the app: ``python scripts/readme_screenshots.py``.

Renders the main window offscreen at 1366x768 on the bundled catalog, with a throwaway
settings and data folder (nothing of yours is read or changed), and writes
``docs/screenshots/{catalog,catalog-dark,compare,machine,plan,fleet}.png``. The Fleet
shot opens a crafted survey (``tests/survey_factory.py``); This machine shows what this
machine has (on a server without a GPU, the "No GPU detected" banner).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
SIZE = (1366, 768)
COMPARED = ["rtx-4090", "a100-80gb-pcie", "h100-sxm5", "mi300x"]


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="gpudesk-shots-"))
    os.environ.update(
        QT_QPA_PLATFORM="offscreen",
        XDG_CONFIG_HOME=str(scratch / "config"),
        XDG_DATA_HOME=str(scratch / "data"),
    )
    sys.path.insert(0, str(ROOT / "tests"))
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication
    from survey_factory import gemm_run, gpu, node, survey

    from gpudesk.render.app import create_application
    from gpudesk.ui import theme
    from gpudesk.ui.main_window import MainWindow

    app = create_application()
    assert isinstance(app, QApplication)

    def pump() -> None:
        for _ in range(10):
            app.processEvents()

    nodes = [
        node(
            f"gpu-{index:02d}",
            [gpu(slot, catalog_id="h100-sxm5") for slot in range(8)],
            # One slow GPU (an outlier against the fleet median); the rest in line.
            [
                gemm_run(
                    slot, 560.0 if (index, slot) == (1, 5) else 812.0 - index - slot, "h100-sxm5"
                )
                for slot in range(8)
            ],
        )
        for index in range(2)
    ]
    survey_path = scratch / "survey.json"
    survey_path.write_text(json.dumps(survey(nodes)), encoding="utf-8")
    OUT.mkdir(parents=True, exist_ok=True)
    for mode in ("light", "dark"):
        theme.apply_theme(mode)
        settings = QSettings(str(scratch / f"{mode}.conf"), QSettings.Format.IniFormat)
        settings.setValue("ui/theme", mode)
        window = MainWindow(settings=settings)
        window.save_on_close = False
        window.resize(*SIZE)
        window.show()
        pump()
        window.state.set_compare(COMPARED)
        pump()
        shots = {"catalog": ("Catalog", None)}
        if mode == "light":
            shots |= {
                "compare": ("Compare", None),
                "machine": ("This machine", 0),
                "plan": ("Plan", 0),
                "fleet": ("Fleet", None),
            }
        for name, (title, sub) in shots.items():
            window.show_tab(title)
            pump()
            view = window.view(title)
            if title == "Fleet":
                view.open_file(survey_path)  # type: ignore[attr-defined]
            if sub is not None:
                view.tabs.setCurrentIndex(sub)  # type: ignore[attr-defined]
            pump()
            target = OUT / (f"{name}-dark.png" if mode == "dark" else f"{name}.png")
            window.grab().save(str(target))
            print(f"wrote {target.relative_to(ROOT)}")
        window.close()
        pump()
    return 0


if __name__ == "__main__":
    sys.exit(main())
