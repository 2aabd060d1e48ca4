"""The whole-house layering contract names every package, and docs/layers.md says the same."""

from __future__ import annotations

import pkgutil
import re
import tomllib
from pathlib import Path

import gpudesk

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = "The whole house is layered"


def _layers() -> list[set[str]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c for c in data["tool"]["importlinter"]["contracts"] if c["name"].startswith(CONTRACT)
    ]
    assert contract["type"] == "layers"
    return [
        {name.strip().removeprefix("gpudesk.") for name in re.split(r"[|:]", layer)}
        for layer in contract["layers"]
    ]


def test_every_package_and_top_level_module_has_a_layer() -> None:
    layered = set().union(*_layers())
    present = {module.name for module in pkgutil.iter_modules(gpudesk.__path__)}
    assert present - layered == set(), "add these to the whole-house contract in pyproject.toml"
    assert layered - present == set(), "the contract names modules that do not exist"


def test_health_sits_above_bench_and_hardware_and_below_fleet_and_ui() -> None:
    order = {name: depth for depth, layer in enumerate(_layers()) for name in layer}
    assert order["ui"] < order["fleet"] < order["health"] < order["bench"] < order["hardware"]
    assert order["cli"] < order["ui"] and order["hardware"] < order["catalog"]


def test_the_docs_page_lists_the_same_layers_in_the_same_order() -> None:
    page = (ROOT / "docs" / "layers.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| ") and "`" in line]
    documented = [set(re.findall(r"`([\w.]+)`", row.split("|")[2])) for row in rows]
    assert documented == _layers()
