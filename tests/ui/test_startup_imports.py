"""Start-up pays only for the first screen: heavy machinery loads on first use."""

import os
import subprocess
import sys

_SCRIPT = """
import sys
from gpudesk.render.app import create_application
from gpudesk.ui.main_window import MainWindow
app = create_application()
window = MainWindow()
window.show()
app.processEvents()
heavy = ("pynvml", "torch", "cupy", "pyqtgraph", "numpy", "threadpoolctl")
lazy = ("gpudesk.report", "gpudesk.bench", "gpudesk.hardware", "gpudesk.workload",
        "gpudesk.memory", "gpudesk.speed", "gpudesk.measurements", "gpudesk.engines",
        "gpudesk.cost", "gpudesk.compare")
# The comparison limit is two constants the catalog's compare column needs.
light = ("gpudesk.compare", "gpudesk.compare.limits")
print(sorted(m for m in sys.modules
             if m.split(".")[0] in heavy or (m.startswith(lazy) and m not in light)))
window.close()
"""


def test_first_screen_loads_no_nvml_benchmark_plots_or_pdf() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
