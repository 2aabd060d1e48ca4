"""What one live-monitor tick costs on the GUI thread, and a sample off it.

Eight fake GPUs with a full 5-minute history: prints the median milliseconds
of (a) ``Monitor.sample()`` over the fake binding (the worker-thread part;
real NVML calls add the driver's own time) and (b) adding that sample to the
panel and redrawing every curve (the GUI-thread part). Target: (b) well
under 16 ms, so a 1 Hz tick never drops a frame.

Run: ``python tests/benchmarks/monitor_tick.py`` (offscreen unless a display is set).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hardware import fake_pynvml as fakes

from gpudesk.hardware.detect import detect
from gpudesk.hardware.monitor import Monitor
from gpudesk.hardware.nvml import Nvml
from gpudesk.render.app import create_application
from gpudesk.ui.device_monitor import MonitorPanel

GPUS = int(os.environ.get("GPUDESK_BENCH_GPUS", "8"))
ROUNDS = 200


def main() -> None:
    app = create_application()
    gpus = [
        fakes.rtx_4090(uuid=f"GPU-{index:08d}", bus_id=f"00000000:{index:02x}:00.0")
        for index in range(GPUS)
    ]
    nvml = Nvml(module=fakes.FakePynvml(gpus))
    result = detect(nvml)
    clock = iter(range(10**9))
    monitor = Monitor(nvml, result.gpus, clock=lambda: float(next(clock)))
    panel = MonitorPanel(interval_ms=3_600_000)
    panel.resize(900, 800)
    panel.show()
    panel.set_devices(nvml, result.gpus)
    panel.pause()
    generation = panel._generation
    sample_ms: list[float] = []
    tick_ms: list[float] = []
    for round_index in range(panel.history.capacity + ROUNDS):
        for gpu in gpus:
            gpu.utilization_gpu = round_index % 100
        started = time.perf_counter()
        sample = monitor.sample()
        sampled = time.perf_counter()
        panel._on_sample(generation, sample)
        app.processEvents()  # paint
        done = time.perf_counter()
        if round_index >= panel.history.capacity:
            sample_ms.append((sampled - started) * 1000)
            tick_ms.append((done - sampled) * 1000)
    print(f"{GPUS} GPUs, {len(panel.history)} samples of history")
    print(f"Monitor.sample() over the fake binding: median {statistics.median(sample_ms):.2f} ms")
    print(
        f"GUI thread, add + redraw + paint: median {statistics.median(tick_ms):.2f} ms, "
        f"max {max(tick_ms):.2f} ms"
    )
    panel.shutdown()


if __name__ == "__main__":
    main()
