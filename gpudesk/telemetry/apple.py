"""A Mac's GPU: what can be read without root, and a plain "not available without root".

The chip, its GPU cores and the unified memory come from ``system_profiler``
(:mod:`gpudesk.hardware.apple`, read once). Live, without root, the GPU's
IOAccelerator entry in the I/O Registry publishes ``PerformanceStatistics``
(``ioreg -r -d 1 -w 0 -c IOAccelerator``: ``"Device Utilization %"=N`` and
``"In use system memory"=BYTES``; the same keys macOS GPU monitors read through
IOKit). Power, temperature and clocks come only from ``powermetrics``, which
needs root (``sudo powermetrics --samplers gpu_power``): the exporter never
asks for root, so those fields are absent and the reading carries
:data:`ROOT_NOTE`.

``ioreg``'s output is untrusted text: run with a timeout and a size cap,
read only through the two patterns below, and a value out of range is None.
``GPUDESK_IOREG_OUTPUT=FILE`` reads a captured output instead (tests, demos).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from gpudesk.external import ToolError, run_tool
from gpudesk.hardware.apple import AppleReading, is_macos
from gpudesk.storage import read_regular_file
from gpudesk.telemetry.catalog_join import NO_FACTS, Identify
from gpudesk.telemetry.readings import DeviceIdentity, DeviceReading, Source, Vendor

ROOT_NOTE = (
    "power, temperature and clocks are not available without root "
    "(macOS gives them only to powermetrics, run with sudo)"
)
IOREG_COMMAND = ("ioreg", "-r", "-d", "1", "-w", "0", "-c", "IOAccelerator")
IOREG_OUTPUT_ENV = "GPUDESK_IOREG_OUTPUT"
#: One accelerator's properties are a few KiB; more is not ioreg's answer.
MAX_IOREG_BYTES = 1024 * 1024
IOREG_TIMEOUT_S = 5.0
#: Unified memory beyond this (16 TiB) is no Mac's.
_MAX_MEMORY_BYTES = 16 * 1024**4
_UTILIZATION = re.compile(r'"Device Utilization %"\s*=\s*([0-9]{1,4})\b')
_IN_USE = re.compile(r'"In use system memory"\s*=\s*([0-9]{1,20})\b')


def parse_ioreg(text: str) -> tuple[float | None, int | None]:
    """(utilisation 0-1, memory in use in bytes) from ``ioreg``'s IOAccelerator output."""
    utilization = memory = None
    found = _UTILIZATION.search(text)
    if found is not None and int(found.group(1)) <= 100:
        utilization = int(found.group(1)) / 100.0
    found = _IN_USE.search(text)
    if found is not None and int(found.group(1)) <= _MAX_MEMORY_BYTES:
        memory = int(found.group(1))
    return utilization, memory


def read_ioreg() -> str | None:
    """``ioreg``'s IOAccelerator entries (or the captured file), None when unreadable."""
    captured = os.environ.get(IOREG_OUTPUT_ENV)
    if captured:
        try:
            return read_regular_file(captured, MAX_IOREG_BYTES).decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return None
    if not is_macos():
        return None
    try:
        result = run_tool(IOREG_COMMAND, IOREG_TIMEOUT_S, max_stdout_bytes=MAX_IOREG_BYTES)
    except ToolError:
        return None
    return result.stdout.decode("utf-8", errors="replace") if result.returncode == 0 else None


@dataclass
class AppleSource:
    """The Apple Silicon GPU of this Mac (none elsewhere)."""

    read_apple: Callable[[], AppleReading | None]
    identify: Identify | None = None
    read_live: Callable[[], str | None] = read_ioreg
    detail: str | None = None
    _identity: DeviceIdentity | None = None
    _total: int | None = None

    def discover(self, first_index: int = 0) -> bool:
        found = self.read_apple()
        if found is None or found.gpu is None:
            self.detail = None if found is None else found.detail
            return False
        gpu = found.gpu.model_copy(update={"index": first_index})
        facts = NO_FACTS if self.identify is None else self.identify(gpu)
        self._identity = DeviceIdentity(
            key=f"apple:{first_index}",
            vendor=Vendor.APPLE,
            source=Source.APPLE,
            index=first_index,
            name=gpu.name or facts.name,
            catalog_id=facts.catalog_id,
            catalog_memory_bandwidth_bytes_per_second=facts.memory_bandwidth_bytes_per_second,
            catalog_dense_bf16_flops=facts.dense_bf16_flops,
        )
        if gpu.memory_total_mib is not None:
            self._total = gpu.memory_total_mib * 1024 * 1024
        return True

    def read(self) -> list[DeviceReading]:
        if self._identity is None:
            return []
        text = self.read_live()
        utilization, in_use = (None, None) if text is None else parse_ioreg(text)
        return [
            DeviceReading(
                identity=self._identity,
                up=True,
                note=ROOT_NOTE,
                utilization_ratio=utilization,
                memory_used_bytes=in_use,
                memory_total_bytes=self._total,
            )
        ]
