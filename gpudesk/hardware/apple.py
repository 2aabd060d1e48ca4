"""Apple Silicon: the chip, its GPU cores and unified memory, from ``system_profiler``.

``system_profiler SPDisplaysDataType SPHardwareDataType -json`` gives the chip
(``SPHardwareDataType[0].chip_type``, e.g. "Apple M3 Max"), the memory
(``physical_memory``, "64 GB") and the GPU (``SPDisplaysDataType[*]`` with
``sppci_model`` and ``sppci_cores`` as a string, "40"); ``sysctl -n
kern.osproductversion hw.memsize iogpu.wired_limit_mb`` gives the macOS
version, the exact memory in bytes and the GPU wired-memory limit. Both run
with a timeout; their output is untrusted (size-capped, strictly typed).

Memory for models: macOS lets the GPU wire only part of unified memory. Its
default limit (Metal's ``recommendedMaxWorkingSetSize``) is two thirds of the
memory up to 36 GB and three quarters above, unless the user set
``iogpu.wired_limit_mb`` (then that). Measured points: 16 GB M4 -> 10.67 GB
(exo-explore/exo PR #1672), 32 GB -> 22,906.5 MB (llama.cpp Metal logs,
``recommendedMaxWorkingSetSize``), 64 GB M2 Max -> 48 GB / 75 %
(ggml-org/llama.cpp issue #1870; gpustack/gpustack issue #1375).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpudesk.external import ToolError, run_tool
from gpudesk.hardware.errors import HardwareError
from gpudesk.hardware.models import DeviceSource, GpuSnapshot

#: The JSON of both data types is a few KiB; more than this is not system_profiler's.
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
COMMAND_TIMEOUT_S = 15.0
PROFILER_COMMAND = ("system_profiler", "SPDisplaysDataType", "SPHardwareDataType", "-json")
SYSCTL_COMMAND = ("sysctl", "-n", "kern.osproductversion", "hw.memsize", "iogpu.wired_limit_mb")
#: Environment variable naming a captured ``system_profiler`` JSON to read instead (tests, demos).
PROFILER_JSON_ENV = "GPUDESK_SYSTEM_PROFILER_JSON"

#: Unified memory up to this size gets two thirds for the GPU; above, three quarters.
_SMALL_MEMORY_GIB = 36
_MEMORY = re.compile(r"^([0-9]{1,5}(?:\.[0-9]{1,3})?) ?(GB|TB|MB)$")
_CHIP = re.compile(r"^Apple M[0-9]{1,2}(?: (?:Pro|Max|Ultra))?$")
_VERSION = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,4}){0,3}$")

Runner = Callable[[Sequence[str]], str | None]


class AppleParseError(HardwareError, ValueError):
    """The system_profiler output is not what it should be; ``field`` names the part."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True, slots=True)
class AppleReading:
    """What the Mac reported: the GPU (None on a Mac without Apple Silicon) and the OS."""

    gpu: GpuSnapshot | None
    os_version: str | None = None
    detail: str | None = None


def memory_for_models_mib(total_mib: int, wired_limit_mib: int | None = None) -> int:
    """The unified memory the GPU may use for a model (see the module docstring)."""
    if wired_limit_mib is not None and 0 < wired_limit_mib <= total_mib:
        return wired_limit_mib
    if total_mib <= _SMALL_MEMORY_GIB * 1024:
        return total_mib * 2 // 3
    return total_mib * 3 // 4


def _memory_mib(text: Any) -> int | None:
    """ "64 GB" -> 65536 (system_profiler's GB are GiB)."""
    if not isinstance(text, str):
        return None
    found = _MEMORY.match(text.strip())
    if found is None:
        return None
    value = float(found.group(1))
    factor = {"MB": 1, "GB": 1024, "TB": 1024 * 1024}[found.group(2)]
    mib = round(value * factor)
    return mib if mib > 0 else None


def _first_dict(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = data.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise AppleParseError(key, "is not a list")
    return [item for item in items[:16] if isinstance(item, dict)]


def _cores(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 4:
        number = int(value.strip())
    else:
        return None
    return number if 0 < number <= 1024 else None


def parse_profiler(
    text: str, *, memsize_bytes: int | None = None, wired_limit_mib: int | None = None
) -> GpuSnapshot | None:
    """The Apple GPU from ``system_profiler ... -json`` output; None when there is none.

    Raises:
        AppleParseError: the text is not JSON of the expected shape.
    """
    if len(text) > MAX_OUTPUT_BYTES:
        raise AppleParseError("output", f"over {MAX_OUTPUT_BYTES} bytes")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise AppleParseError("output", f"not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise AppleParseError("output", "not a JSON object")
    hardware = _first_dict(data, "SPHardwareDataType")
    displays = _first_dict(data, "SPDisplaysDataType")
    chip = hardware[0].get("chip_type") if hardware else None
    apple_gpus = [
        item
        for item in displays
        if isinstance(item.get("sppci_model"), str) and item["sppci_model"].startswith("Apple ")
    ]
    if not isinstance(chip, str) or not chip.startswith("Apple "):
        chip = apple_gpus[0]["sppci_model"] if apple_gpus else None
    if not isinstance(chip, str) or not _CHIP.match(chip.strip()):
        return None  # an Intel Mac, a virtual machine, or a chip name we cannot trust
    chip = chip.strip()
    cores = _cores(apple_gpus[0].get("sppci_cores")) if apple_gpus else None
    total = None
    if memsize_bytes is not None and memsize_bytes > 0:
        total = memsize_bytes // (1024 * 1024)
    elif hardware:
        total = _memory_mib(hardware[0].get("physical_memory"))
    return GpuSnapshot(
        index=0,
        name=chip,
        vendor="Apple",
        source=DeviceSource.SYSTEM_PROFILER,
        driver_loaded=True,
        gpu_core_count=cores,
        memory_total_mib=total,
        memory_for_models_mib=None
        if total is None
        else memory_for_models_mib(total, wired_limit_mib),
    )


def parse_sysctl(text: str) -> tuple[str | None, int | None, int | None]:
    """(macOS version, memory bytes, wired limit MiB) from ``sysctl -n`` lines, None when off."""
    lines = [line.strip() for line in text.splitlines()[:8]]
    version = lines[0] if lines and _VERSION.match(lines[0]) else None

    def number(position: int) -> int | None:
        if len(lines) > position and lines[position].isdigit() and len(lines[position]) < 20:
            return int(lines[position])
        return None

    return version, number(1), number(2)


def run_command(command: Sequence[str]) -> str | None:
    """Run a command with a timeout; its stdout, or None when it failed, ran long or
    printed more than :data:`MAX_OUTPUT_BYTES` (:func:`gpudesk.external.run_tool`)."""
    try:
        completed = run_tool(command, COMMAND_TIMEOUT_S, max_stdout_bytes=MAX_OUTPUT_BYTES)
    except ToolError:
        return None
    if completed.returncode != 0:
        return None
    return completed.stdout_text


def read_apple(runner: Runner = run_command, *, profiler_json: str | None = None) -> AppleReading:
    """Ask macOS (or read a captured output) for the Apple GPU; never raises for bad output."""
    os_version = memsize = wired = None
    if profiler_json is None:
        sysctl = runner(SYSCTL_COMMAND)
        if sysctl is not None:
            os_version, memsize, wired = parse_sysctl(sysctl)
        profiler_json = runner(PROFILER_COMMAND)
        if profiler_json is None:
            return AppleReading(
                gpu=None, os_version=_macos(os_version), detail="system_profiler failed"
            )
    try:
        gpu = parse_profiler(profiler_json, memsize_bytes=memsize, wired_limit_mib=wired)
    except AppleParseError as exc:
        return AppleReading(gpu=None, os_version=_macos(os_version), detail=str(exc))
    return AppleReading(gpu=gpu, os_version=_macos(os_version))


def _macos(version: str | None) -> str | None:
    return None if version is None else f"macOS {version}"


def is_macos() -> bool:
    return sys.platform == "darwin"
