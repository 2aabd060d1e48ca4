"""One set of health rules: doctor and the fleet survey judge a snapshot the same way."""

from __future__ import annotations

import pytest
from health_snapshots import SNAPSHOTS, doctor_findings, fleet_findings, judged

from gpudesk.health.rules import FLEET_CHECKS


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_doctor_and_the_fleet_give_the_same_findings(name: str) -> None:
    gpu = SNAPSHOTS[name]
    ours = doctor_findings(gpu)
    theirs, outliers = fleet_findings(gpu)
    assert judged(ours) == judged(theirs)
    # the fleet's outliers are exactly the warnings and errors, under the fleet's names
    problems = [f for f in ours if f.severity != "info"]
    assert [(o["rule"], o["severity"], o["message"]) for o in outliers] == judged(problems)
    assert [o["check"] for o in outliers] == [FLEET_CHECKS.get(f.rule, f.rule) for f in problems]


def test_an_idle_gpu_at_gen_1_with_sync_boost_is_one_note_everywhere() -> None:
    gpu = SNAPSHOTS["idle_sync_boost_gen1"]
    ours = doctor_findings(gpu)
    theirs, outliers = fleet_findings(gpu)
    assert [(f.rule, f.severity) for f in ours] == [("pcie_gen", "info")]
    assert judged(theirs) == judged(ours)
    assert outliers == []  # not "throttled: sync_boost", not "PCIe Gen 1 of 5 while not idle"


@pytest.mark.parametrize(
    ("name", "rule", "severity"),
    [
        ("healthy", None, None),
        ("busy_gen3", "pcie_gen", "warning"),
        ("unknown_load_gen3", "pcie_gen", "info"),
        ("x8", "pcie_width", "warning"),
        ("hot", "throttle", "error"),
        ("power_capped", "power_cap", "warning"),
        ("slow_clocks", "clocks", "warning"),
        ("ecc", "ecc", "error"),
        ("ecc_lifetime", "ecc", "warning"),
        ("remap_pending", "remapped_rows", "error"),
        ("retire_pending", "retired_pages", "error"),
        ("prohibited", "compute_mode", "error"),
        ("exclusive", "compute_mode", "info"),
        ("lost", "lost", "error"),
    ],
)
def test_each_rule_fires_on_its_fault(name: str, rule: str | None, severity: str | None) -> None:
    found = [(f.rule, f.severity) for f in doctor_findings(SNAPSHOTS[name])]
    assert found == ([] if rule is None else [(rule, severity)])
