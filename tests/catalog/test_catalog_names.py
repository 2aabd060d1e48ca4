"""Short GPU names: the vendor and "GeForce" go; nothing else changes."""

from __future__ import annotations

from catalog_factory import make_entry

from gpudesk.catalog.names import short_name


def test_vendor_and_geforce_prefixes_go() -> None:
    entry = make_entry("rtx-4090", name="NVIDIA GeForce RTX 4090", vendor="NVIDIA")
    assert short_name(entry) == "RTX 4090"


def test_vendor_prefix_matches_without_case() -> None:
    entry = make_entry("mi300x", name="amd Instinct MI300X", vendor="AMD")
    assert short_name(entry) == "Instinct MI300X"


def test_a_name_without_prefix_stays_and_a_bare_vendor_name_is_kept() -> None:
    assert short_name(make_entry("a100", name="A100 80GB", vendor="NVIDIA")) == "A100 80GB"
    assert short_name(make_entry("odd", name="NVIDIA", vendor="NVIDIA")) == "NVIDIA"
