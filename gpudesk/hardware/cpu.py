"""The CPU and total RAM: the fallback benchmark target.

Linux is read from ``/proc``; elsewhere ``platform`` and ``os`` give what they
can and the rest stays None.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from gpudesk.hardware.models import CpuInfo

_CPUINFO = Path("/proc/cpuinfo")
_MEMINFO = Path("/proc/meminfo")


def parse_cpuinfo(text: str) -> tuple[str | None, int | None, int | None]:
    """Model name, physical cores and logical CPUs from ``/proc/cpuinfo`` text.

    Physical cores count distinct (physical id, core id) pairs; when those are
    absent (some ARM and virtual machines) the core count is None.
    """
    model: str | None = None
    threads = 0
    cores: set[tuple[str, str]] = set()
    physical_id = core_id = None
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if physical_id is not None and core_id is not None:
                cores.add((physical_id, core_id))
            physical_id = core_id = None
            continue
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "processor":
            threads += 1
        elif key in ("model name", "hardware", "cpu model") and model is None and value:
            model = value
        elif key == "physical id":
            physical_id = value
        elif key == "core id":
            core_id = value
    return model, (len(cores) or None), (threads or None)


def parse_meminfo_gib(text: str) -> float | None:
    """``MemTotal`` from ``/proc/meminfo`` text, in GiB."""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return round(int(parts[1]) / 2**20, 1)
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_cpu() -> CpuInfo:
    """Describe this machine's CPU; fields the OS does not give are None."""
    model = cores = threads = None
    text = _read(_CPUINFO)
    if text is not None:
        model, cores, threads = parse_cpuinfo(text)
    if model is None:
        model = platform.processor() or None
    if threads is None:
        threads = os.cpu_count()
    return CpuInfo(
        model=model,
        architecture=platform.machine() or None,
        cores=cores,
        threads=threads,
    )


def read_ram_gib() -> float | None:
    """Total RAM in GiB, or None when it cannot be found."""
    text = _read(_MEMINFO)
    if text is not None:
        value = parse_meminfo_gib(text)
        if value is not None:
            return value
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        page_size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    if pages <= 0 or page_size <= 0:
        return None
    return round(pages * page_size / 2**30, 1)
