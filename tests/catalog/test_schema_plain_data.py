"""The catalog schema is plain data: rate and price lookups live in the price modules."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import gpudesk.catalog.schema as schema
from gpudesk.catalog.schema import CatalogEntry

ROOT = Path(__file__).resolve().parents[2]
PRICE_MODULES = frozenset(
    {
        "gpudesk.catalog.prices",
        "gpudesk.catalog.rate_book",
        "gpudesk.catalog.price_snapshots",
        "gpudesk.catalog.skypilot",
    }
)


def _imported_modules(source: str) -> set[str]:
    """Every module an import statement names, at any depth (lazy ones in functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against gpudesk.catalog
                base = "gpudesk.catalog" + (f".{node.module}" if node.module else "")
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_the_schema_imports_no_price_module_not_even_lazily() -> None:
    source = Path(schema.__file__).read_text(encoding="utf-8")
    assert _imported_modules(source) & PRICE_MODULES == set()


def test_entries_carry_no_rate_lookups() -> None:
    # They are functions that take an entry: rate_book.lowest_on_demand_rate,
    # prices.default_cloud_rate, metrics.cloud_hourly_usd and the records' keys.
    for name in (
        "default_cloud_rate",
        "lowest_on_demand_rate",
        "cloud_hourly_usd",
        "cloud_hourly_source",
        "cloud_hourly_date",
    ):
        assert not hasattr(CatalogEntry, name), name


def test_import_linter_forbids_the_schema_the_price_modules_directly_and_indirectly() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c
        for c in data["tool"]["importlinter"]["contracts"]
        if c.get("source_modules") == ["gpudesk.catalog.schema"]
    ]
    assert contract["type"] == "forbidden"
    assert set(contract["forbidden_modules"]) == PRICE_MODULES
    assert not contract.get("allow_indirect_imports", False)
