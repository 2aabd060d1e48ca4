"""How long a 6-GPU PDF report takes (target: under 2 s on the reference machine).

``measure()`` times :func:`gpudesk.report.pdf.write_pdf_report` for six
bundled-catalog GPUs, from the call to the renamed file, with the catalog
loaded and the QApplication created beforehand (as in the GUI; the CLI adds
its usual start-up). The first, cold export (fonts, chart modules) is timed
separately. Run alone: ``python tests/benchmarks/bench_pdf.py [repetitions]``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIX_GPUS = ("rtx-4090", "a100-80gb-pcie", "h100-nvl", "rtx-a6000", "quadro-rtx-8000", "rtx-3090-ti")


def measure(repetitions: int = 5) -> dict[str, Any]:
    """Seconds per 6-GPU report: ``median``, ``min``, ``max``, every warm ``sample``, ``cold``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.render.app import ensure_application
    from gpudesk.report.pdf import write_pdf_report

    catalog = load_catalog()
    by_id = {entry.id: entry for entry in catalog.entries}
    missing = [entry_id for entry_id in SIX_GPUS if entry_id not in by_id]
    if missing:
        raise SystemExit(f"bench_pdf: not in the bundled catalog: {', '.join(missing)}")
    entries = [by_id[entry_id] for entry_id in SIX_GPUS]
    ensure_application()
    times: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "six.pdf"
        started = time.perf_counter()
        write_pdf_report(entries, target, catalog=catalog)
        cold = time.perf_counter() - started
        for _ in range(repetitions):
            started = time.perf_counter()
            write_pdf_report(entries, target, catalog=catalog)
            times.append(time.perf_counter() - started)
        size = target.stat().st_size
    return {
        "samples": times,
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "cold": cold,
        "repetitions": float(repetitions),
        "pdf_bytes": float(size),
    }


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    result = measure(count)
    print(
        f"6-GPU PDF report: median {result['median']:.3f} s, min {result['min']:.3f} s, "
        f"max {result['max']:.3f} s over {count}; cold first export {result['cold']:.3f} s; "
        f"{result['pdf_bytes'] / 1024:.0f} KiB"
    )
