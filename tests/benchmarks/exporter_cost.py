"""What ``gpudesk exporter`` costs: CPU share and resident memory, scraped every second.

Eight GPUs from the fake ``libnvidia-ml.so.1`` (tests/hardware/fake_nvml.c, scenario
``eight_h100``) under the real nvidia-ml-py; the exporter collects once a second
(its default) and this script scrapes ``/metrics`` once a second, as a Prometheus
with ``scrape_interval: 1s`` would. After a warm-up, the exporter's CPU time
(``utime + stime`` of ``/proc/PID/stat``, clock ticks) over the wall time gives its
share of one CPU; ``VmRSS`` and ``VmHWM`` of ``/proc/PID/status`` its memory.
Targets (issue 44): at most 1 % of one CPU and 60 MB RSS. The fake answers a call
in microseconds; a real driver's calls take longer (NVML's own time is not ours).

Run: ``python tests/benchmarks/exporter_cost.py [SECONDS]`` (default 60); prints
one line of JSON after the text.
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fake_nvml_lib

WARM_UP_S = 5.0
CPU_TARGET_PERCENT = 1.0
RSS_TARGET_MB = 60.0
GPUS = 8


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the command: state is field 3, utime 14 and stime 15 (proc(5)), here 0-based 11, 12.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _memory_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key} for {pid}")


def main() -> None:
    duration_s = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    env = fake_nvml_lib.environment(scenario="eight_h100")
    process = subprocess.Popen(
        [sys.executable, "-m", "gpudesk", "exporter", "--listen", "127.0.0.1:0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"(http://\S+/metrics) \((\d+) device", line)
        if found is None or int(found.group(2)) != GPUS:
            raise SystemExit(f"exporter did not start with {GPUS} GPUs: {line!r}")
        url = found.group(1)
        scrape_ms: list[float] = []

        def scrape() -> int:
            started = time.perf_counter()
            with urllib.request.urlopen(url, timeout=10) as response:
                size = len(response.read())
            scrape_ms.append((time.perf_counter() - started) * 1000)
            return size

        deadline = time.monotonic() + WARM_UP_S
        while time.monotonic() < deadline:
            scrape()
            time.sleep(1.0)
        scrape_ms.clear()
        cpu_start, wall_start = _cpu_seconds(process.pid), time.monotonic()
        size = 0
        next_scrape = wall_start
        while time.monotonic() - wall_start < duration_s:
            size = scrape()
            next_scrape += 1.0
            time.sleep(max(next_scrape - time.monotonic(), 0.0))
        wall = time.monotonic() - wall_start
        cpu = _cpu_seconds(process.pid) - cpu_start
        rss, peak = _memory_mb(process.pid, "VmRSS"), _memory_mb(process.pid, "VmHWM")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        if process.stderr is not None:
            process.stderr.close()
    share = cpu / wall * 100
    result = {
        "gpus": GPUS,
        "seconds": round(wall, 1),
        "scrapes": len(scrape_ms),
        "cpu_percent_of_one_cpu": round(share, 3),
        "rss_mb": round(rss, 1),
        "peak_rss_mb": round(peak, 1),
        "scrape_ms_median": round(statistics.median(scrape_ms), 2),
        "metrics_bytes": size,
        "cpu_target_percent": CPU_TARGET_PERCENT,
        "rss_target_mb": RSS_TARGET_MB,
    }
    print(
        f"exporter, {GPUS} fake GPUs, scraped every 1 s for {wall:.0f} s: "
        f"CPU {share:.2f} % of one CPU (target <= {CPU_TARGET_PERCENT:g} %), "
        f"RSS {rss:.1f} MB, peak {peak:.1f} MB (target <= {RSS_TARGET_MB:g} MB), "
        f"scrape median {result['scrape_ms_median']} ms, {size} bytes"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
