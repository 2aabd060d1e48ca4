"""The readings as text: the lines ``gpudesk monitor`` shows in 80 columns, and cell texts.

One place words a reading for people (the GUI's monitor table uses the same
cells), so "n/a", units and rounding read the same everywhere.
"""

from __future__ import annotations

from gpudesk.telemetry.readings import DeviceReading, Snapshot

NA = "n/a"
WIDTH = 80
GIB = 1024**3


def percent(ratio: float | None) -> str:
    return NA if ratio is None else f"{ratio * 100:.0f}%"


def memory(reading: DeviceReading) -> str:
    used, total = reading.memory_used_bytes, reading.memory_total_bytes
    if used is None and total is None:
        return NA
    used_text = "?" if used is None else f"{used / GIB:.1f}"
    total_text = "?" if total is None else f"{total / GIB:.1f}"
    return f"{used_text}/{total_text} GiB"


def temperature(reading: DeviceReading) -> str:
    value = reading.temperatures_celsius.get("gpu")
    if value is None and reading.temperatures_celsius:
        value = max(reading.temperatures_celsius.values())
    return NA if value is None else f"{value:.0f}°C"


def power(reading: DeviceReading) -> str:
    draw, limit = reading.power_watts, reading.power_limit_watts
    if draw is None and limit is None:
        return NA
    draw_text = "?" if draw is None else f"{draw:.0f}"
    return draw_text if limit is None else f"{draw_text}/{limit:.0f} W"


def clock(reading: DeviceReading) -> str:
    value = reading.clocks_hertz.get("graphics")
    return NA if value is None else f"{value / 1e6:.0f} MHz"


def pcie(reading: DeviceReading) -> str:
    generation, width = reading.pcie_link_generation, reading.pcie_link_width
    if generation is None and width is None:
        return NA
    return f"Gen{generation or '?'} x{width or '?'}"


def energy(reading: DeviceReading) -> str:
    joules = reading.energy_joules_total
    return NA if joules is None else f"{joules / 1e3:.1f} kJ"


def health(reading: DeviceReading) -> str:
    """The health counters a device reports, in a few words ("" when none)."""
    parts: list[str] = []
    if reading.ecc_errors_total:
        corrected = reading.ecc_errors_total.get("corrected", 0)
        uncorrected = reading.ecc_errors_total.get("uncorrected", 0)
        parts.append(f"ECC {corrected}/{uncorrected}")
    if reading.xid_events_total is not None:
        parts.append(f"XID {sum(reading.xid_events_total.values())}")
    if reading.pcie_replays_total is not None:
        parts.append(f"replays {reading.pcie_replays_total}")
    if reading.row_remap_failure:
        parts.append("ROW REMAP FAILED")
    elif reading.row_remap_pending:
        parts.append("remap pending")
    if reading.throttle_reasons:
        parts.append("throttle " + ",".join(reading.throttle_reasons))
    return "  ".join(parts)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


_HEADER = (
    f"{'#':>2} {'GPU':<24} {'util':>4} {'memory':>15} {'temp':>5} {'power':>9} "
    f"{'clock':>9} {'fan':>4}"
)


def device_lines(reading: DeviceReading) -> list[str]:
    """Two lines per device (one when it is down), each at most :data:`WIDTH` columns."""
    identity = reading.identity
    index = "" if identity.index is None else str(identity.index)
    name = identity.name or identity.vendor.value
    if identity.parent_uuid:
        # A MIG instance sits under its GPU: its position there is no GPU index.
        index, name = "", f"  MIG {identity.mig_profile or identity.name or ''}"
    if not reading.up:
        return [_fit(f"{index:>2} {_fit(name, 24):<24} DOWN: {reading.note or 'no answer'}", WIDTH)]
    first = (
        f"{index:>2} {_fit(name, 24):<24} {percent(reading.utilization_ratio):>4} "
        f"{memory(reading):>15} {temperature(reading):>5} {power(reading):>9} "
        f"{clock(reading):>9} {percent(reading.fan_ratio):>4}"
    )
    if identity.parent_uuid:
        return [_fit(first, WIDTH)]
    second_parts = [f"PCIe {pcie(reading)}", f"energy {energy(reading)}"]
    if identity.catalog_id:
        second_parts.append(identity.catalog_id)
    words = health(reading)
    if words:
        second_parts.append(words)
    if reading.note:
        second_parts.append(reading.note)
    second = "   " + "  ".join(second_parts)
    return [_fit(first, WIDTH), _fit(second, WIDTH)]


def screen_lines(snapshot: Snapshot, clock_text: str) -> list[str]:
    """The whole monitor screen: a title, the header, each device's lines."""
    title = f"gpudesk monitor  {snapshot.hostname}  {clock_text}  (q quits)"
    lines = [_fit(title, WIDTH), _HEADER]
    if not snapshot.devices:
        lines.append("no GPU found (NVML, amdgpu, i915/xe or a Mac's GPU)")
    for reading in snapshot.devices:
        lines.extend(device_lines(reading))
    return lines
