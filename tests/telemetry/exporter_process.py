"""Run ``gpudesk exporter`` against the fake NVML (and a fake sysfs tree), and scrape it."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import fake_nvml_lib
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

_SERVING = re.compile(r"serving (http://\S+/metrics)")


@dataclass
class Exporter:
    process: subprocess.Popen[str]
    url: str

    def scrape(self) -> str:
        with urllib.request.urlopen(self.url, timeout=10) as response:
            return str(response.read().decode("utf-8"))

    def samples(self) -> list[Sample]:
        return [
            sample
            for family in text_string_to_metric_families(self.scrape())
            for sample in family.samples
        ]

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])


def _serving_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    assert process.stderr is not None
    deadline = time.monotonic() + timeout_s
    seen = ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.2)
        if ready:
            line = process.stderr.readline()
            seen += line
            found = _SERVING.search(line)
            if found:
                return found.group(1)
        if process.poll() is not None:
            break
    raise AssertionError(f"the exporter did not start (exit {process.poll()}):\n{seen}")


@contextmanager
def running_exporter(
    pids: Path,
    arguments: Sequence[str] = (),
    scenario: str = "two_gpus",
    settings: Mapping[str, str] | None = None,
) -> Iterator[Exporter]:
    """The exporter on a kernel-chosen loopback port; stopped with SIGTERM, exit 0 checked."""
    env = fake_nvml_lib.environment(scenario=scenario, settings=settings)
    process = subprocess.Popen(
        [sys.executable, "-m", "gpudesk", "exporter", "--listen", "127.0.0.1:0", *arguments],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    with pids.open("a") as file:
        file.write(f"{process.pid}\n")
    try:
        exporter = Exporter(process, _serving_line(process, 60.0))
        yield exporter
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(5)
        if process.stderr is not None:
            process.stderr.close()


def values(samples: list[Sample], family: str, /, **labels: str) -> list[float]:
    """The values of ``family``'s samples whose labels include ``labels``."""
    return [
        sample.value
        for sample in samples
        if sample.name == family and all(sample.labels.get(k) == v for k, v in labels.items())
    ]
