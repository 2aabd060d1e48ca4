"""Reference figures per GPU model: what healthy GPUs of that model measured.

Each model has a small distribution of published measurements
(``data/reference_figures.toml``, every value with its source):
:class:`Reference` gives its median, 5th and 95th percentile, n and sources.
``gpudesk doctor`` and the fleet survey judge a measured figure against it
(:func:`gpudesk.health.rules.reference_finding`).
"""

from __future__ import annotations

import statistics
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

#: Below this many measurements a 5th percentile says nothing; only the median is used.
MIN_N_FOR_PERCENTILES = 5


@dataclass(frozen=True, slots=True)
class ReferenceMeasurement:
    value: float
    stack: str
    date: str
    source: str
    shape: str = ""


def _percentile(values: Sequence[float], share: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True, slots=True)
class Reference:
    """One model's distribution for one test ("gemm bf16")."""

    label: str
    test: str
    unit: str
    measurements: tuple[ReferenceMeasurement, ...]

    @property
    def n(self) -> int:
        return len(self.measurements)

    @property
    def values(self) -> list[float]:
        return [m.value for m in self.measurements]

    @property
    def median(self) -> float:
        return float(statistics.median(self.values))

    @property
    def p5(self) -> float | None:
        """The 5th percentile, where there are enough measurements for one."""
        return _percentile(self.values, 0.05) if self.n >= MIN_N_FOR_PERCENTILES else None

    @property
    def p95(self) -> float | None:
        return _percentile(self.values, 0.95) if self.n >= MIN_N_FOR_PERCENTILES else None

    @property
    def spread(self) -> tuple[float, float]:
        return min(self.values), max(self.values)

    @property
    def sources(self) -> list[str]:
        return list(dict.fromkeys(m.source for m in self.measurements))

    @property
    def cited(self) -> str:
        """A short citation: "Bekman's matmul table, 5 figures 2024-08-06 to 2025-01-05"."""
        dates = sorted(m.date for m in self.measurements)
        when = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
        what = "figure" if self.n == 1 else "figures"
        return f"Bekman's matmul table, {self.n} {what} {when}"

    def to_json(self) -> dict[str, object]:
        return {
            "label": self.label,
            "test": self.test,
            "unit": self.unit,
            "median": self.median,
            "p5": self.p5,
            "p95": self.p95,
            "min": self.spread[0],
            "max": self.spread[1],
            "n": self.n,
            "sources": self.sources,
        }


@dataclass(frozen=True, slots=True)
class References:
    by_key: dict[tuple[str, str], Reference]

    def get(self, catalog_id: str | None, test: str) -> Reference | None:
        """The reference for a catalog id and a test key ("gemm bf16"), if there is one."""
        if catalog_id is None:
            return None
        return self.by_key.get((catalog_id, test))


def load_references(text: str | None = None) -> References:
    """The sourced distributions in ``gpudesk/bench/data/reference_figures.toml``."""
    if text is None:
        text = (
            resources.files("gpudesk.bench")
            .joinpath("data", "reference_figures.toml")
            .read_text("utf-8")
        )
    data = tomllib.loads(text)
    by_key: dict[tuple[str, str], Reference] = {}
    for item in data.get("gemm", []):
        measurements = tuple(
            ReferenceMeasurement(
                value=float(row["value"]),
                stack=str(row["stack"]),
                date=str(row["date"]),
                source=str(row["source"]),
                shape=str(row.get("shape", "")),
            )
            for row in item["measurements"]
        )
        for dtype in item["dtypes"]:
            reference = Reference(
                str(item["label"]), f"gemm {dtype}", str(item["unit"]), measurements
            )
            for catalog_id in item["catalog_ids"]:
                by_key[(str(catalog_id), f"gemm {dtype}")] = reference
    return References(by_key)
