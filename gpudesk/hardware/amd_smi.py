"""AMD's own library, ``amdsmi`` (ROCm's counterpart of NVML), used first when installed.

Optional: without the package (or when ``amdsmi_init()`` fails, e.g. no amdgpu
driver) AMD GPUs are read from sysfs alone. Devices are tied to their sysfs
entry by PCI address (``amdsmi_get_gpu_device_bdf``); each figure amdsmi gives
replaces the sysfs one, and a figure it cannot give (an exception, or the
"N/A" string the binding returns for unsupported fields) keeps the sysfs value.

Units follow the ROCm 6 Python API reference
(https://rocm.docs.amd.com/projects/amdsmi/en/latest/reference/amdsmi-py-api.html):
VRAM in MiB, power in W, temperature in degrees C, clocks in MHz, activity in %.

Tests pass a fake module at this boundary: ``AmdSmi(module=fake)``.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpudesk.hardware.models import normalise_bdf

_log = logging.getLogger(__name__)

_BDF = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


@dataclass(frozen=True, slots=True)
class AmdSmiReading:
    """What amdsmi said: per PCI address, the snapshot fields it could read.

    ``available`` is False when the package is missing or would not start
    (``detail`` says which).
    """

    available: bool
    detail: str | None = None
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)


def _number(value: Any, *, limit: float) -> float | None:
    """A finite number in [0, limit] (amdsmi gives "N/A" strings for unsupported fields)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if not 0 <= number <= limit:  # also rejects NaN
        return None
    return number


def _whole(value: Any, *, limit: float) -> int | None:
    number = _number(value, limit=limit)
    return None if number is None else round(number)


class AmdSmi:
    """Lazy access to the ``amdsmi`` module.

    Args:
        module: the module to use; imported on first use when None.
    """

    def __init__(self, module: Any | None = None) -> None:
        self._module = module
        self._lock = threading.Lock()
        self._initialised = False
        self._handles: dict[str, Any] = {}

    def _error_class(self) -> type[BaseException]:
        error = getattr(self._module, "AmdSmiException", None)
        return error if isinstance(error, type) and issubclass(error, Exception) else Exception

    def _start(self) -> str | None:
        """Import and initialise; the reason it cannot be used, or None when it can."""
        if self._initialised:
            return None
        if self._module is None:
            try:
                import amdsmi  # type: ignore[import-not-found]
            except ImportError:
                return "amdsmi is not installed"
            except Exception as exc:  # a broken install (missing libamd_smi.so) raises others
                return f"amdsmi could not be imported: {type(exc).__name__}: {exc}"
            self._module = amdsmi
        try:
            self._module.amdsmi_init()
        except Exception as exc:
            return f"amdsmi_init failed: {exc}"
        self._initialised = True
        return None

    def _call(self, name: str, *args: Any) -> Any | None:
        function: Callable[..., Any] | None = getattr(self._module, name, None)
        if function is None:
            return None
        try:
            return function(*args)
        except self._error_class() as exc:
            _log.debug("amdsmi %s: %s", name, exc)
            return None

    def _enum(self, enum_name: str, member: str) -> Any | None:
        return getattr(getattr(self._module, enum_name, None), member, None)

    def read_all(self) -> AmdSmiReading:
        """Every AMD GPU amdsmi sees, keyed by PCI address; never raises for amdsmi trouble."""
        with self._lock:
            reason = self._start()
            if reason is not None:
                return AmdSmiReading(available=False, detail=reason)
            handles = self._call("amdsmi_get_processor_handles")
            if not isinstance(handles, list | tuple):
                return AmdSmiReading(available=False, detail="amdsmi listed no devices")
            self._handles = {}
            devices: dict[str, dict[str, Any]] = {}
            for handle in handles[:256]:
                bdf = self._call("amdsmi_get_gpu_device_bdf", handle)
                if not isinstance(bdf, str) or not _BDF.match(bdf.strip()):
                    continue
                address = normalise_bdf(bdf)
                self._handles[address] = handle
                fields = self._identity(handle)
                fields.update(self._live(handle))
                devices[address] = fields
            return AmdSmiReading(available=True, devices=devices)

    def sample(self, address: str) -> dict[str, Any] | None:
        """Live fields of the device at this PCI address; None when amdsmi does not know it."""
        with self._lock:
            handle = self._handles.get(address)
            if handle is None or not self._initialised:
                return None
            return self._live(handle)

    def _identity(self, handle: Any) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        asic = self._call("amdsmi_get_gpu_asic_info", handle)
        if isinstance(asic, dict):
            name = asic.get("market_name")
            if isinstance(name, str) and name.strip() and name.isprintable() and len(name) < 120:
                fields["name"] = name.strip()
        vram = self._call("amdsmi_get_gpu_vram_usage", handle)
        if isinstance(vram, dict):
            total = _whole(vram.get("vram_total"), limit=16 * 1024 * 1024)
            if total:
                fields["memory_total_mib"] = total
        for key, clock in (("sm_clock_max_mhz", "GFX"), ("memory_clock_max_mhz", "MEM")):
            kind = self._enum("AmdSmiClkType", clock)
            info = None if kind is None else self._call("amdsmi_get_clock_info", handle, kind)
            if isinstance(info, dict):
                value = _whole(info.get("max_clk"), limit=100_000)
                if value:
                    fields[key] = value
        return fields

    def _live(self, handle: Any) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        vram = self._call("amdsmi_get_gpu_vram_usage", handle)
        if isinstance(vram, dict):
            used = _whole(vram.get("vram_used"), limit=16 * 1024 * 1024)
            if used is not None:
                fields["memory_used_mib"] = used
        activity = self._call("amdsmi_get_gpu_activity", handle)
        if isinstance(activity, dict):
            for key, name in (
                ("utilization_gpu_percent", "gfx_activity"),
                ("utilization_memory_percent", "umc_activity"),
            ):
                value = _whole(activity.get(name), limit=100)
                if value is not None:
                    fields[key] = value
        power = self._call("amdsmi_get_power_info", handle)
        if isinstance(power, dict):
            for name in ("current_socket_power", "average_socket_power"):
                watts = _number(power.get(name), limit=10_000)
                if watts is not None:
                    fields["power_draw_w"] = round(watts, 1)
                    break
        metric = self._enum("AmdSmiTemperatureMetric", "CURRENT")
        for sensor in ("EDGE", "HOTSPOT"):
            kind = self._enum("AmdSmiTemperatureType", sensor)
            if kind is None or metric is None:
                continue
            value = _whole(self._call("amdsmi_get_temp_metric", handle, kind, metric), limit=200)
            if value:
                fields["temperature_c"] = value
                break
        kind = self._enum("AmdSmiClkType", "GFX")
        info = None if kind is None else self._call("amdsmi_get_clock_info", handle, kind)
        if isinstance(info, dict):
            value = _whole(info.get("clk"), limit=100_000)
            if value is not None:
                fields["sm_clock_mhz"] = value
        return fields

    def shutdown(self) -> None:
        with self._lock:
            if self._initialised:
                self._initialised = False
                self._call("amdsmi_shut_down")


_default: AmdSmi | None = None
_default_lock = threading.Lock()


def default_amdsmi() -> AmdSmi:
    """The process-wide :class:`AmdSmi` (detection and the live monitor share it)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = AmdSmi()
        return _default
