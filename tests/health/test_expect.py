"""The acceptance gate's core: SPEC parsing (property-tested) and the checks on crafted reports."""

from __future__ import annotations

import re

import pytest
from health_snapshots import detection_of, h100
from hypothesis import given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
from gpudesk.health import doctor
from gpudesk.health.expect import (
    MAX_COUNT,
    ExpectGroup,
    ExpectLink,
    SpecError,
    check_expectations,
    interface_link,
    parse_spec,
)

IDS = ["h100-sxm5", "a100-80gb-sxm4", "rtx-4090"]


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        ("8x h100-sxm5", [(8, "h100-sxm5")]),
        ("8 x H100-SXM5", [(8, "h100-sxm5")]),
        ("8×h100-sxm5", [(8, "h100-sxm5")]),
        ("h100-sxm5", [(1, "h100-sxm5")]),
        ("4x h100-sxm5 + 2x a100-80gb-sxm4", [(4, "h100-sxm5"), (2, "a100-80gb-sxm4")]),
        ("2*rtx-4090, h100-sxm5", [(2, "rtx-4090"), (1, "h100-sxm5")]),
    ],
)
def test_specs_people_write(text: str, groups: list[tuple[int, str]]) -> None:
    assert parse_spec(text, IDS).groups == tuple(ExpectGroup(n, m) for n, m in groups)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("  + ", "empty"),
        ("h100-sxm5 +", "is not"),
        ("0x h100-sxm5", "between 1 and 4096"),
        ("5000x h100-sxm5", "between 1 and 4096"),
        ("3000x h100-sxm5 + 3000x rtx-4090", "more than 4096"),
        ("2x h100", "not a catalog id (did you mean h100-sxm5?)"),
        ("2x h100-sxm5 extra", "is not"),
        ("x" * 500, "longer than"),
    ],
)
def test_bad_specs_say_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(SpecError, match=re.escape(reason)):
        parse_spec(text, IDS)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_any_text_is_a_spec_or_a_spec_error(text: str) -> None:
    try:
        spec = parse_spec(text, IDS)
    except SpecError as exc:
        assert exc.reason and "\n" not in exc.reason.replace(repr(text), "")
        return
    assert all(1 <= group.count <= MAX_COUNT and group.catalog_id in IDS for group in spec.groups)
    assert parse_spec(str(spec), IDS) == spec  # what it prints reads back the same


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 500), st.sampled_from(IDS), st.sampled_from(["x", " x ", "×", "*"])
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([" + ", ",", "+"]),
)
def test_well_formed_specs_parse_to_their_groups(
    groups: list[tuple[int, str, str]], joiner: str
) -> None:
    text = joiner.join(f"{count}{sign}{model}" for count, model, sign in groups)
    spec = parse_spec(text, IDS)
    assert [(g.count, g.catalog_id) for g in spec.groups] == [(c, m) for c, m, _ in groups]


def test_interface_link() -> None:
    assert interface_link("PCIe 5.0 x16") == (5, 16)
    assert interface_link("PCIe 4.0 x8") == (4, 8)
    assert interface_link("SXM5") is None and interface_link(None) is None


def _report_with(gemm_tflops: float | None):  # type: ignore[no-untyped-def]
    detection = detection_of(h100(0))
    throughput = None
    if gemm_tflops is not None:
        figure = doctor.ThroughputFigure(
            test="gemm",
            dtype="bf16",
            value=gemm_tflops,
            unit="TFLOPS",
            fraction_of_peak=gemm_tflops / 989.4,
        )
        throughput = {0: [figure]}
    report = doctor.examine(detection, None, None, {0: "h100-sxm5"}, throughput=throughput)
    return report, detection


@pytest.fixture(scope="module")
def entries() -> dict:
    return {entry.id: entry for entry in load_catalog([]).entries}


def test_throughput_below_the_declared_fraction_fails(entries: dict) -> None:
    spec = parse_spec("h100-sxm5")
    report, detection = _report_with(600.0)
    checks = check_expectations(spec, report, detection, entries, min_gemm_fraction=0.7)
    (throughput,) = [c for c in checks if c.check == "throughput"]
    assert (
        not throughput.passed
        and "61% of the catalog peak, under the declared 70%" in throughput.detail
    )
    report, detection = _report_with(780.0)
    checks = check_expectations(spec, report, detection, entries, min_gemm_fraction=0.7)
    assert all(c.passed for c in checks), checks


def test_a_gate_that_needs_a_figure_fails_without_one(entries: dict) -> None:
    report, detection = _report_with(None)
    checks = check_expectations(
        parse_spec("h100-sxm5"), report, detection, entries, min_gemm_fraction=0.7
    )
    (throughput,) = [c for c in checks if c.check == "throughput"]
    assert not throughput.passed and "not measured" in throughput.detail


def test_declared_link_flags_override_the_catalog(entries: dict) -> None:
    detection = detection_of(h100(0, pcie_gen_max=4, pcie_gen_current=4))
    report = doctor.examine(detection, None, None, {0: "h100-sxm5"})
    spec = parse_spec("h100-sxm5")
    (link,) = [c for c in check_expectations(spec, report, detection, entries) if c.check == "link"]
    assert not link.passed and "gen 4 at most where gen 5 is declared" in link.detail
    checks = check_expectations(spec, report, detection, entries, link=ExpectLink(gen=4))
    (link,) = [c for c in checks if c.check == "link"]
    assert link.passed
