"""`gpudesk fit` against the published measurements and exact references in
memory_references.toml, each with its own tolerance and source."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from gpudesk.cli import main

REFERENCES = tomllib.loads((Path(__file__).parent / "memory_references.toml").read_text())
CASES = {case["id"]: case for case in REFERENCES["case"]}
UNITS = {"GB": 1e9, "GiB": 2**30, "MiB": 2**20, "count": 1.0}


def _fit_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    code = main(["fit", *argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data: dict[str, Any] = json.loads(captured.out)
    return data


def _quantity(data: dict[str, Any], path: str) -> float:
    total = 0.0
    for term in path.split("+"):
        value: Any = data
        for key in term.split("."):
            value = value[key]
        total += float(value)
    return total


def test_every_case_has_a_source_and_a_stated_tolerance() -> None:
    for case in CASES.values():
        assert case["source"] and case["kind"] in ("exact", "measured"), case["id"]
        if "fits_gpu" not in case:
            assert 0 < case["tolerance"] <= 0.10 and case["unit"] in UNITS, case["id"]


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_fit_matches_the_reference(capsys: pytest.CaptureFixture[str], case_id: str) -> None:
    case = CASES[case_id]
    data = _fit_json(capsys, case["argv"])
    if "fits_gpu" in case:
        counts = {item["gpu_id"]: item["count"] for item in data["fits"]}
        assert counts.get(case["fits_gpu"]) == 1, (data["total_gb"], counts.get(case["fits_gpu"]))
        return
    terms = case["quantity"].split("+")
    in_gb = all(term.endswith("_gb") or term.startswith("breakdown.") for term in terms)
    got = _quantity(data, case["quantity"]) * (1e9 / UNITS[case["unit"]] if in_gb else 1.0)
    assert got == pytest.approx(case["reference"], rel=case["tolerance"]), (
        f"{case_id}: {got:.4g} vs {case['reference']} {case['unit']} ({case['source']})"
    )
