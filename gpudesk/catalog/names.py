"""Short GPU names for chart labels, table headers and chips: one rule everywhere."""

from __future__ import annotations

from gpudesk.catalog.schema import CatalogEntry, Interconnect, Kind, Status, Topology


def short_name(entry: CatalogEntry) -> str:
    """The name without the vendor prefix ("NVIDIA GeForce RTX 4090" -> "RTX 4090")."""
    name = entry.name
    vendor_prefix = f"{entry.vendor} "
    if name.lower().startswith(vendor_prefix.lower()):
        name = name[len(vendor_prefix) :]
    if name.startswith("GeForce "):
        name = name[len("GeForce ") :]
    return name or entry.name


#: How a kind reads for people ("TPU", not "tpu").
KIND_LABELS: dict[Kind, str] = {
    Kind.GPU: "GPU",
    Kind.SOC: "SoC (shared memory)",
    Kind.TPU: "TPU",
    Kind.NPU: "NPU",
    Kind.ASIC: "Other accelerator (ASIC)",
}

#: How a status reads for people.
STATUS_LABELS: dict[Status, str] = {
    Status.SHIPPING: "Shipping",
    Status.ANNOUNCED: "Announced",
    Status.CLOUD_ONLY: "Cloud only",
    Status.END_OF_LIFE: "End of life",
}


def status_words(entry: CatalogEntry) -> str:
    """ "Announced 2026-03-16", "Cloud only", "Shipping"."""
    label = STATUS_LABELS[entry.status]
    if entry.status_date is not None and entry.status is not Status.SHIPPING:
        return f"{label} {entry.status_date.isoformat()}"
    return label


def identity_parts(entry: CatalogEntry) -> list[str]:
    """Vendor, architecture, year, segment, and the kind and status where they are not
    a shipping GPU's; a field an announced part leaves empty is left out, never guessed."""
    parts = [entry.vendor]
    if entry.architecture is not None:
        parts.append(entry.architecture)
    if entry.release_year is not None:
        parts.append(str(entry.release_year))
    if entry.segment is not None:
        parts.append(entry.segment.value)
    if entry.kind is not Kind.GPU:
        parts.append(KIND_LABELS[entry.kind])
    if entry.status is not Status.SHIPPING:
        parts.append(status_words(entry))
    return parts


_TOPOLOGY_WORDS: dict[Topology, str] = {
    Topology.SWITCH: "through a switch",
    Topology.MESH: "to each peer (mesh)",
    Topology.BRIDGE: "over a bridge",
    Topology.TORUS: "to torus neighbours",
    Topology.NONE: "no peer-to-peer link",
}


#: How a link whose vendor published no rate is said (never "0 GB/s").
NO_PUBLISHED_RATE = "no published rate,"


def interconnect_words(link: Interconnect) -> str:
    """ "NVLink 4: 450 GB/s each way through a switch, up to 8 devices"."""
    name = link.generation or link.kind.value
    if link.topology is Topology.NONE:
        return f"{name}: {_TOPOLOGY_WORDS[link.topology]}"
    if link.gbs_per_direction is None:  # the vendor names the link, not its rate
        words = f"{name}: {NO_PUBLISHED_RATE} {_TOPOLOGY_WORDS[link.topology]}"
        if link.max_devices is not None:
            words += f", up to {link.max_devices} devices"
        return words
    words = f"{name}: {link.gbs_per_direction:,.4g} GB/s each way {_TOPOLOGY_WORDS[link.topology]}"
    if link.max_devices is not None:
        words += f", up to {link.max_devices} devices"
    return words
