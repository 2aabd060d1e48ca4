"""Short GPU names for chart labels, table headers and chips: one rule everywhere."""

from __future__ import annotations

from gpudesk.catalog.schema import CatalogEntry


def short_name(entry: CatalogEntry) -> str:
    """The name without the vendor prefix ("NVIDIA GeForce RTX 4090" -> "RTX 4090")."""
    name = entry.name
    vendor_prefix = f"{entry.vendor} "
    if name.lower().startswith(vendor_prefix.lower()):
        name = name[len(vendor_prefix) :]
    if name.startswith("GeForce "):
        name = name[len("GeForce ") :]
    return name or entry.name
