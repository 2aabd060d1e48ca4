"""Survey documents are checked against physics as result files are (issue 39 item 5).

A benchmark run in a survey whose figures cannot be (1e308 TFLOPS, a fraction of
peak of 1e308, three times the catalog peak, zero, infinity) is left out of the
node's runs the way an unreadable run is, with the reason in
``NodeView.bench_refusals``. Names are at most 256 characters, as
:mod:`gpudesk.bench.plausible` bounds them, and in a run one printable line (a
control character in a node's own fields is kept, and escaped where shown).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
import reach
from hypothesis import given, settings, strategies as st
from survey_factory import cpu_run, gemm_run, gpu, node, survey

from gpudesk.bench.peaks import peak_for
from gpudesk.bench.plausible import (
    ABSOLUTE_CEILING,
    MAX_FRACTION_OF_PEAK,
    MAX_NAME_CHARS,
    PEAK_MULTIPLE,
    catalog_entry,
)
from gpudesk.fleet.checks import summarise
from gpudesk.fleet.document import NodeView, SurveyFileError, SurveyView, parse_survey
from gpudesk.fleet.inventory import inventory

H100_BF16 = 989.4  # the bundled catalog's dense BF16 peak of h100-sxm5
H100_COPY = 3350.0  # its bandwidth_gbs
_INF = "__infinity__"  # written as 1e999: JSON that json.loads reads as inf


def _text(document: dict[str, Any]) -> str:
    return json.dumps(document).replace(f'"{_INF}"', "1e999").replace(f'"-{_INF}"', "-1e999")


def _parse(document: dict[str, Any]) -> SurveyView:
    return parse_survey(_text(document), "survey.json")[0]


def _infinite(run: dict[str, Any]) -> dict[str, Any]:
    """The run with its first figure 1e999 in the JSON (json.loads reads inf)."""
    run["results"][0]["value"] = _INF
    return run


def _one_run(run: dict[str, Any]) -> NodeView:
    return _parse(survey([node("a", [gpu(0)], [run])])).nodes[0]


def test_a_possible_run_is_read_with_no_refusal() -> None:
    node_view = _one_run(gemm_run(0, 780.0))
    assert [row.value for row in node_view.bench_views()[0].results] == [780.0, 2900.0]
    assert node_view.bench_refusals() == ()


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (gemm_run(0, 1e308), r"results\.0\.value: 1e\+308 is more than 2× the catalog peak"),
        (gemm_run(0, 3 * H100_BF16), r"results\.0\.value: 2968\.2 is more than 2×"),
        (gemm_run(0, 0.0), r"results\.0\.value: 0 is not a positive figure"),
        (gemm_run(0, -5.0), r"unreadable: results\.0\.value: .*greater than or equal to 0"),
        (_infinite(gemm_run(0, 700.0)), r"unreadable: results\.0\.value: .*finite"),
        (gemm_run(0, 700.0, fraction_of_peak=1e308), r"results\.0\.fraction_of_peak: 1e\+308"),
        (gemm_run(0, 700.0, fraction_of_peak=2.5), r"fraction_of_peak: 2\.5 is more than any"),
        (gemm_run(0, 700.0, fraction_of_peak=0.3), r"fraction_of_peak: 0\.3 is not value ÷ peak"),
        (gemm_run(0, 700.0, peak=1e-3), r"results\.0\.value: 700 is 7e\+05× the file's own peak"),
        (gemm_run(0, 700.0, peak=1e308), r"results\.0\.peak: 1e\+308 is more than a TFLOPS peak"),
        (gemm_run(0, 700.0, unit="GB/s"), r"results\.0\.unit: a gemm result is in TFLOPS"),
        (gemm_run(0, 25_000.0, None, peak=None, fraction_of_peak=None), r"no catalog peak"),
        (gemm_run(0, 25_000.0, "not-in-the-catalog"), r"more than any device reaches in TFLOPS"),
        (_infinite(cpu_run(1.0)), r"unreadable: results\.0\.value: .*finite"),
    ],
)
def test_an_impossible_run_is_left_out_with_the_reason(run: dict[str, Any], expected: str) -> None:
    node_view = _one_run(run)
    assert node_view.bench_views() == []
    (refusal,) = node_view.bench_refusals()
    assert refusal.startswith("benchmark run 1")
    assert " left out: " in refusal
    assert re.search(expected, refusal), refusal


def test_a_copy_over_twice_the_catalog_bandwidth_is_left_out() -> None:
    run = gemm_run(0, 700.0)
    run["results"][1]["value"] = 3 * H100_COPY
    (refusal,) = _one_run(run).bench_refusals()
    assert "results.1.value: 10050 is more than 2× the catalog peak" in refusal
    assert "3,350 GB/s for memory copy" in refusal


def test_twice_the_peak_is_the_limit_not_beyond() -> None:
    assert _one_run(gemm_run(0, PEAK_MULTIPLE * H100_BF16)).bench_refusals() == ()
    assert _one_run(gemm_run(0, PEAK_MULTIPLE * H100_BF16 * 1.0001)).bench_views() == []


def test_nan_is_not_json_and_refuses_the_file() -> None:
    text = json.dumps(survey([node("a", [gpu(0)], [gemm_run(0, math.nan)])]))
    assert "NaN" in text
    with pytest.raises(SurveyFileError, match="not a number JSON allows"):
        parse_survey(text, "survey.json")


def test_only_the_impossible_run_of_a_node_is_left_out() -> None:
    runs = [gemm_run(0, 780.0), gemm_run(1, 1e308), gemm_run(2, 790.0)]
    node_view = _parse(survey([node("a", [gpu(0), gpu(1), gpu(2)], runs)])).nodes[0]
    assert [run.device.index for run in node_view.bench_views() if run.device] == [0, 2]
    (refusal,) = node_view.bench_refusals()
    assert refusal.startswith("benchmark run 2 (cuda 1, NVIDIA H100 80GB HBM3) left out:")


def test_an_unreadable_run_beside_a_possible_one_is_named_too() -> None:
    bad = gemm_run(1, 700.0)
    bad["results"][0]["value"] = "fast"
    node_view = _parse(survey([node("a", [gpu(0), gpu(1)], [gemm_run(0, 780.0), bad])])).nodes[0]
    assert len(node_view.bench_views()) == 1
    assert node_view.bench_refusals() == (
        "benchmark run 2 left out: unreadable: results.0.value: Input should be a valid number",
    )


def test_a_survey_whose_every_figure_is_impossible_still_opens_with_the_problems() -> None:
    from gpudesk.cli.fleet_cmd import survey_text

    nodes = [
        node("a", [gpu(0)], [gemm_run(0, 1e308)]),
        node("b", [gpu(0)], [gemm_run(0, 700.0, fraction_of_peak=1e308)]),
        node("c", [gpu(0)], [_infinite(gemm_run(0, 700.0))]),
        node("d", [], [cpu_run(-1.0)]),
    ]
    view = _parse(survey(nodes))
    assert all(node_view.bench_views() == [] for node_view in view.nodes)
    refusals = [node_view.bench_refusals() for node_view in view.nodes]
    assert [len(reasons) for reasons in refusals] == [1, 1, 1, 1]
    assert "1e+308" in refusals[0][0] and "fraction_of_peak" in refusals[1][0]
    summary = summarise(view.nodes)
    assert summary["gpus"] == 3 and summary["outliers"] == []
    rows = inventory(list(view.nodes), [])
    assert len(rows) == 4
    assert all(row.gemm is None and row.copy is None for row in rows)
    text = survey_text(view, summary)
    assert "host-a" in text
    assert "e+308" not in text and "inf" not in text.lower()


# Names: one printable line of at most MAX_NAME_CHARS characters, wherever they are read.


def test_a_name_of_the_limit_is_read_and_one_more_is_not() -> None:
    assert MAX_NAME_CHARS == 256
    fine = _parse(survey([node("a", [gpu(0, "G" * MAX_NAME_CHARS)])])).nodes[0]
    assert fine.detection_view() is not None
    refused = _parse(survey([node("a", [gpu(0, "G" * (MAX_NAME_CHARS + 1))])])).nodes[0]
    assert refused.detection_view() is None
    assert refused.detection_refusal() == "gpus.0.name: String should have at most 256 characters"
    long_run = gemm_run(0, 700.0)
    long_run["device"]["name"] = "G" * (MAX_NAME_CHARS + 1)
    assert _one_run(long_run).bench_refusals() == (
        "benchmark run 1 left out: unreadable: device.name: Value error, "
        "257 characters, more than 256",
    )


def test_a_megabyte_node_name_refuses_the_survey_naming_the_field() -> None:
    document = survey([node("a", [gpu(0)])])
    document["nodes"][0]["hostname"] = "h" * 1_000_000
    with pytest.raises(SurveyFileError, match=r"nodes\.0\.hostname: .*at most 256 characters"):
        parse_survey(json.dumps(document), "survey.json")
    document["nodes"][0]["hostname"] = "h" * MAX_NAME_CHARS
    assert _parse(document).nodes[0].label == "h" * MAX_NAME_CHARS


def test_a_megabyte_gpu_name_refuses_the_detection_not_the_survey() -> None:
    node_view = _parse(survey([node("a", [gpu(0, "H" * 1_000_000)])])).nodes[0]
    assert node_view.detection_refusal() is not None
    assert "gpus.0.name" in node_view.detection_refusal()  # type: ignore[operator]
    assert summarise([node_view])["nodes_refused"][0]["node_id"] == "a"


@pytest.mark.parametrize("control", ["\x1b[2J", "\x07", "\u202e", "\x9b", "\n", "\t", "\u2028"])
def test_control_characters_leave_a_run_out_but_are_kept_and_escaped_in_node_fields(
    control: str,
) -> None:
    run = gemm_run(0, 700.0)
    run["device"]["name"] = f"NVIDIA{control}H100"
    (refusal,) = _one_run(run).bench_refusals()
    assert "device.name: Value error, a control character (U+" in refusal
    dtype = gemm_run(0, 700.0)
    dtype["results"][0]["dtype"] = f"bf{control}16"
    assert (
        "results.0.dtype: Value error, a control character" in _one_run(dtype).bench_refusals()[0]
    )
    # A node's own names and its detection: kept (`fleet show` escapes them:
    # tests/cli/test_cli_control_chars.py),
    # so one odd hostname neither refuses the survey nor hides the node's GPUs.
    document = survey([node("a", [gpu(0, f"H100{control}")], [gemm_run(0, 700.0)])])
    document["nodes"][0]["hostname"] = f"host{control}a"
    node_view = _parse(document).nodes[0]
    assert node_view.label == f"host{control}a"
    detection = node_view.detection_view()
    assert detection is not None and detection.gpus[0].name == f"H100{control}"
    assert len(node_view.bench_views()) == 1


def test_a_megabyte_bench_device_name_and_a_huge_index_leave_the_run_out() -> None:
    named = gemm_run(0, 700.0)
    named["device"]["name"] = "x" * 1_000_000
    assert "device.name: Value error, 1,000,000 characters" in _one_run(named).bench_refusals()[0]
    indexed = gemm_run(0, 700.0)
    indexed["device"]["index"] = 10**30
    assert "device.index" in _one_run(indexed).bench_refusals()[0]


# Any figure: what is read is possible.

_HOSTILE = st.one_of(
    st.none(),
    st.floats(allow_nan=False),  # any finite or infinite float, negative and subnormal too
    st.sampled_from([0.0, -0.0, 5e-324, 1e308, -1e308, H100_BF16, 2 * H100_BF16, 20_000.01]),
    st.floats(min_value=1.0, max_value=2 * H100_BF16),  # possible for some rows
)
#: Possible for every row (the H100 SXM5 FP64 peak is 34 TFLOPS, so 68 is its ceiling)
#: and value ÷ peak at most 2.
_POSSIBLE_VALUE = st.floats(min_value=1.0, max_value=60.0)
_POSSIBLE_PEAK = st.floats(min_value=30.0, max_value=60.0)
_CATALOG_IDS = st.sampled_from(["h100-sxm5", None, "not-in-the-catalog"])


@st.composite
def _rows(draw: st.DrawFn) -> dict[str, Any]:
    test, dtype, unit = draw(
        st.sampled_from(
            [
                ("gemm", "bf16", "TFLOPS"),
                ("gemm", "fp64", "TFLOPS"),
                ("copy", "uint8", "GB/s"),
                ("h2d", "pinned", "GB/s"),
                ("gemm", "bf16", "GB/s"),
            ]
        )
    )
    value = draw(st.one_of(_POSSIBLE_VALUE, _HOSTILE))
    peak = draw(st.one_of(_POSSIBLE_PEAK, _HOSTILE))
    consistent = value / peak if value is not None and peak not in (None, 0.0) else None
    if consistent is not None and not math.isfinite(consistent):
        consistent = None
    fraction = draw(st.one_of(st.just(consistent), st.just(consistent), _HOSTILE))
    row: dict[str, Any] = {"test": test, "dtype": dtype, "unit": unit}
    for name, figure in (("value", value), ("peak", peak), ("fraction_of_peak", fraction)):
        if figure is not None:
            row[name] = figure if math.isfinite(figure) else (_INF if figure > 0 else f"-{_INF}")
    return row


@pytest.mark.reaches(kept=40, left_out=150)
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(_CATALOG_IDS, st.lists(_rows(), min_size=1, max_size=2)), min_size=1, max_size=3
    )
)
def test_every_figure_read_from_a_survey_is_possible(
    runs: list[tuple[str | None, list[dict[str, Any]]]],
) -> None:
    documents = []
    for index, (catalog_id, rows) in enumerate(runs):
        run = gemm_run(index, 700.0, catalog_id)
        run["results"] = rows
        documents.append(run)
    view = _parse(survey([node("a", [gpu(i) for i in range(len(runs))], documents)]))
    node_view = view.nodes[0]
    read, refused = node_view.bench_views(), node_view.bench_refusals()
    assert len(read) + len(refused) == len(runs)
    assert all(" left out: " in reason for reason in refused)
    if refused:
        reach.reached("left_out")
    for run in read:
        reach.reached("kept")
        entry = catalog_entry(run.catalog_id)
        for row in run.results:
            assert row.unit in ABSOLUTE_CEILING
            catalog_peak = peak_for(entry, row.test, row.dtype)
            ceiling = (
                ABSOLUTE_CEILING[row.unit]  # type: ignore[index]
                if catalog_peak is None
                else PEAK_MULTIPLE * catalog_peak
            )
            for figure in (row.value, row.peak):
                assert figure is None or (math.isfinite(figure) and 0 < figure <= ceiling)
            fraction = row.fraction_of_peak
            assert fraction is None or (
                math.isfinite(fraction) and 0 < fraction <= MAX_FRACTION_OF_PEAK
            )
            if row.value is not None and row.peak is not None:
                assert row.value / row.peak <= MAX_FRACTION_OF_PEAK
    # The inventory shows only what was read: nothing it shows is impossible.
    read_rows = [row for run in read for row in run.results]
    for line in inventory(list(view.nodes), []):
        for shown in (line.gemm, line.copy):
            assert shown is None or shown in read_rows
