"""Human-readable device fields, shared by ``gpudesk detect`` and the GUI cards.

A field the device did not report reads "n/a".
"""

from __future__ import annotations

from gpudesk.hardware.models import CpuInfo, GpuSnapshot

NA = "n/a"


def _num(value: float | None, unit: str = "", decimals: int = 0) -> str:
    if value is None:
        return NA
    text = f"{value:,.{decimals}f}"
    return f"{text} {unit}".rstrip() if unit else text


def on_off(value: bool | None) -> str:
    if value is None:
        return NA
    return "on" if value else "off"


def memory_text(gpu: GpuSnapshot) -> str:
    """ "1,234 / 24,564 MiB used", or what is known of it."""
    if gpu.memory_total_mib is None:
        return NA
    used = NA if gpu.memory_used_mib is None else f"{gpu.memory_used_mib:,}"
    return f"{used} / {gpu.memory_total_mib:,} MiB used"


def memory_size_text(gpu: GpuSnapshot) -> str:
    """ "24.0 GiB"."""
    gib = gpu.memory_total_gib
    return NA if gib is None else f"{gib:.1f} GiB"


def bus_width_text(gpu: GpuSnapshot) -> str:
    """ "384-bit bus" or "bus width n/a"."""
    if gpu.memory_bus_width_bits is None:
        return f"bus width {NA}"
    return f"{gpu.memory_bus_width_bits}-bit bus"


def clock_text(current: int | None, maximum: int | None) -> str:
    """ "210 / 3,120 MHz" (current / max)."""
    if current is None and maximum is None:
        return NA
    return f"{_num(current)} / {_num(maximum)} MHz"


def power_text(gpu: GpuSnapshot) -> str:
    """ "25.5 W of 450 W limit (default 450 W)"."""
    if gpu.power_draw_w is None and gpu.power_limit_w is None:
        return NA
    text = f"{_num(gpu.power_draw_w, 'W', 1)} of {_num(gpu.power_limit_w, 'W')} limit"
    if gpu.power_default_limit_w is not None and gpu.power_default_limit_w != gpu.power_limit_w:
        text += f" (default {_num(gpu.power_default_limit_w, 'W')})"
    return text


def power_limit_text(gpu: GpuSnapshot) -> str:
    """ "450 W (default 450 W)"."""
    if gpu.power_limit_w is None:
        return NA
    text = _num(gpu.power_limit_w, "W")
    if gpu.power_default_limit_w is not None and gpu.power_default_limit_w != gpu.power_limit_w:
        text += f" (default {_num(gpu.power_default_limit_w, 'W')})"
    return text


def pci_ids_text(gpu: GpuSnapshot) -> str:
    """ "PCI 1002:74a1 (subsystem 1002:74a1)" from the "0x"-prefixed ids."""

    def bare(value: str | None) -> str:
        return NA if value is None else value.removeprefix("0x")

    text = f"PCI {bare(gpu.pci_vendor_id)}:{bare(gpu.pci_device_id)}"
    if gpu.pci_subsystem_vendor_id or gpu.pci_subsystem_device_id:
        text += (
            f" (subsystem {bare(gpu.pci_subsystem_vendor_id)}:{bare(gpu.pci_subsystem_device_id)})"
        )
    return text


def pcie_text(gpu: GpuSnapshot) -> str:
    """ "gen 1 x16 (max gen 4 x16)"; the current link drops at idle to save power."""
    if all(
        value is None
        for value in (
            gpu.pcie_gen_current,
            gpu.pcie_gen_max,
            gpu.pcie_width_current,
            gpu.pcie_width_max,
        )
    ):
        return NA
    current = f"gen {_num(gpu.pcie_gen_current)} x{_num(gpu.pcie_width_current)}"
    maximum = f"gen {_num(gpu.pcie_gen_max)} x{_num(gpu.pcie_width_max)}"
    return f"{current} (max {maximum})"


def temperature_text(gpu: GpuSnapshot) -> str:
    return _num(gpu.temperature_c, "C")


def fan_text(gpu: GpuSnapshot) -> str:
    return _num(gpu.fan_percent, "%")


def utilization_text(gpu: GpuSnapshot) -> str:
    """ "GPU 3 %, memory 1 %"."""
    if gpu.utilization_gpu_percent is None and gpu.utilization_memory_percent is None:
        return NA
    return (
        f"GPU {_num(gpu.utilization_gpu_percent, '%')}, "
        f"memory {_num(gpu.utilization_memory_percent, '%')}"
    )


def clock_events_text(gpu: GpuSnapshot) -> str:
    if gpu.clock_event_reasons is None:
        return NA
    return ", ".join(gpu.clock_event_reasons) or "none"


def mig_text(gpu: GpuSnapshot) -> str:
    if gpu.mig_enabled is None:
        return NA
    if gpu.mig_enabled:
        count = gpu.mig_instance_count or 0
        return f"on, {count} instance{'s' if count != 1 else ''}"
    return "off"


def count_text(value: int | None) -> str:
    return _num(value)


def plural_text(value: int | None, noun: str) -> str:
    """ "1 process", "2 processes", "n/a processes"."""
    if value == 1:
        return f"1 {noun}"
    plural = noun + ("es" if noun.endswith("s") else "s")
    return f"{_num(value)} {plural}"


def cpu_text(cpu: CpuInfo) -> str:
    """ "AMD EPYC, 2 cores / 2 threads, x86_64"."""
    parts = [cpu.model or "unknown CPU"]
    if cpu.cores is not None or cpu.threads is not None:
        parts.append(f"{_num(cpu.cores)} cores / {_num(cpu.threads)} threads")
    if cpu.architecture:
        parts.append(cpu.architecture)
    return ", ".join(parts)


def ram_text(ram_gib: float | None) -> str:
    return _num(ram_gib, "GiB", 1)
