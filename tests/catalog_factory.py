"""Building valid catalog entries and files for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpudesk.catalog.schema import CatalogEntry


def entry_data(entry_id: str = "test-gpu", **overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": entry_id,
        "name": f"Test {entry_id.upper()}",
        "vendor": "NVIDIA",
        "segment": "consumer",
        "architecture": "Testwell",
        "release_year": 2023,
        "memory_gb": 16,
        "memory_type": "GDDR6",
        "bandwidth_gbs": 500.0,
        "fp32_tflops": 20.0,
        "sources": ["Test datasheet"],
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def make_entry(entry_id: str = "test-gpu", **overrides: Any) -> CatalogEntry:
    return CatalogEntry.model_validate(entry_data(entry_id, **overrides))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):  # an inline table, e.g. one [[cloud_rates]] item
        return "{" + ", ".join(f"{key} = {_toml_value(item)}" for key, item in value.items()) + "}"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    escaped = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def to_toml(data: dict[str, Any]) -> str:
    return "".join(f"{key} = {_toml_value(value)}\n" for key, value in data.items())


def write_entry(directory: Path, entry_id: str = "test-gpu", **overrides: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{entry_id}.toml"
    path.write_text(to_toml(entry_data(entry_id, **overrides)), encoding="utf-8")
    return path
