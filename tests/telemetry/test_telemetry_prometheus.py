"""A real Prometheus server scrapes ``gpudesk exporter`` (fake NVML) and answers queries.

Debian's ``prometheus`` package (installed by .ci/run with --no-install-recommends;
its system service is never started) runs here on 127.0.0.1 with a temporary
configuration and data folder, and is stopped by its PID. Without
/usr/bin/prometheus the test is skipped with the reason, except in CI
(``CI=true``), where a missing server is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from telemetry.exporter_process import running_exporter
from telemetry.test_telemetry_dashboard import dashboard_expressions

PROMETHEUS = Path("/usr/bin/prometheus")
H100 = "GPU-h100aaaa-1111-2222-3333-444455556666"


def _prometheus_binary() -> str:
    found = str(PROMETHEUS) if PROMETHEUS.exists() else shutil.which("prometheus")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but /usr/bin/prometheus is missing: .ci/run installs it")
        pytest.skip("/usr/bin/prometheus is not installed (Debian package prometheus)")
    return found


def _free_port() -> int:
    # Prometheus cannot print a kernel-chosen port back: take a free one and hand it over.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _query(port: int, expression: str) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
    with urllib.request.urlopen(url, timeout=5) as response:
        document = json.loads(response.read())
    assert document["status"] == "success", document
    result: list[dict[str, Any]] = document["data"]["result"]
    return result


def _wait_for(port: int, expression: str, timeout_s: float) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout_s
    last: object = None
    while time.monotonic() < deadline:
        try:
            result = _query(port, expression)
        except OSError as exc:  # the server is still starting
            last = exc
        else:
            if result:
                return result
            last = result
        time.sleep(0.25)
    raise AssertionError(f"{expression!r} gave nothing within {timeout_s} s: {last}")


def test_a_real_prometheus_scrapes_the_exporter(pids: Path, tmp_path: Path) -> None:
    binary = _prometheus_binary()
    with running_exporter(pids, ["--interval", "0.5"]) as exporter:
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: gpudesk\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{exporter.port}']\n",
            encoding="utf-8",
        )
        port = _free_port()
        log = (tmp_path / "prometheus.log").open("w")
        server = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        log.close()  # the server has its own copy of the descriptor
        with pids.open("a") as file:
            file.write(f"{server.pid}\n")
        try:
            up = _wait_for(port, 'up{job="gpudesk"} == 1', 60)
            assert up[0]["value"][1] == "1"
            power = _wait_for(port, f'gpudesk_gpu_power_watts{{uuid="{H100}"}}', 30)
            assert float(power[0]["value"][1]) == 72.0
            assert power[0]["metric"]["catalog_id"] == "h100-sxm5"
            assert power[0]["metric"]["vendor"] == "NVIDIA"
            gpus = _wait_for(port, "count(gpudesk_gpu_up == 1)", 30)
            assert gpus[0]["value"][1] == "2"
            # A field the H100 does not report has no series at all.
            assert _query(port, f'gpudesk_gpu_fan_ratio{{uuid="{H100}"}}') == []
            # Every query of the Grafana dashboard in resources/ is PromQL this server runs.
            answered = [
                expression for expression in dashboard_expressions() if _query(port, expression)
            ]
            # 22 of 28 answer here; the rest ask for counters the fake leaves empty (XIDs).
            assert len(answered) >= 20, answered
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(5)
        assert server.returncode == 0, (tmp_path / "prometheus.log").read_text()[-2000:]
