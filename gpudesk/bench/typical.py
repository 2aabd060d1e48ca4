"""Typical achieved fractions of a catalog's dense peak: a benchmark fact.

What well-run hardware of a kind reaches in the best GEMM shapes and in a
device copy, from published measurements (``data/typical_fractions.toml``,
each row with its source). ``gpudesk doctor`` judges a measured figure
against them and the speed model calibrates a benchmark with them; both read
them here.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True, slots=True)
class TypicalFraction:
    fraction: float
    source: str
    measured_on: str = ""


@dataclass(frozen=True, slots=True)
class TypicalFractions:
    gemm: dict[tuple[str, str], TypicalFraction]
    #: For GPUs not in the table: the lowest NVIDIA GEMM fraction published there.
    gemm_default: TypicalFraction | None
    copy: TypicalFraction

    def for_gemm(self, catalog_id: str | None, dtype: str) -> TypicalFraction | None:
        if catalog_id is not None and (catalog_id, dtype) in self.gemm:
            return self.gemm[(catalog_id, dtype)]
        return self.gemm_default


def load_typical_fractions(text: str | None = None) -> TypicalFractions:
    """The sourced table in ``gpudesk/bench/data/typical_fractions.toml``."""
    if text is None:
        text = (
            resources.files("gpudesk.bench")
            .joinpath("data", "typical_fractions.toml")
            .read_text("utf-8")
        )
    data = tomllib.loads(text)
    gemm: dict[tuple[str, str], TypicalFraction] = {}
    lowest: TypicalFraction | None = None
    for item in data.get("gemm", []):
        fraction = float(item["measured_tflops"]) / float(item["peak_tflops"])
        typical = TypicalFraction(fraction, str(item["source"]), str(item.get("measured_on", "")))
        if lowest is None or fraction < lowest.fraction:
            lowest = typical
        for catalog_id in item["catalog_ids"]:
            for dtype in item["dtypes"]:
                gemm[(str(catalog_id), str(dtype))] = typical
    copy = data["copy"]
    return TypicalFractions(
        gemm=gemm,
        gemm_default=lowest,
        copy=TypicalFraction(float(copy["fraction"]), str(copy["source"])),
    )
