"""Issue 30: a node whose detection cannot be read is shown as refused, with why; never as a
healthy CPU node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from survey_factory import gemm_run, gpu, node, survey

from gpudesk.cli import main
from gpudesk.fleet.checks import summarise
from gpudesk.fleet.document import MAX_NODE_GPUS, parse_survey
from gpudesk.fleet.inventory import inventory


def _huge_node() -> dict[str, object]:
    return node("huge", [gpu(index) for index in range(MAX_NODE_GPUS + 1)])


def test_a_node_reporting_more_than_4096_gpus_is_refused_with_the_reason() -> None:
    view, _ = parse_survey(json.dumps(survey([_huge_node()])), "big.json")
    refusal = view.nodes[0].detection_refusal()
    assert refusal is not None
    assert "4097 GPUs" in refusal and "4096" in refusal
    rows = inventory(list(view.nodes), [])
    assert [row.error for row in rows] == [f"detection refused: {refusal}"]
    summary = summarise(view.nodes)
    assert summary["nodes_refused"] == [{"node_id": "huge", "reason": refusal}]


def test_fleet_show_says_refused_not_a_healthy_cpu_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = [node("a", [gpu(0)], [gemm_run(0, 700.0)]), _huge_node()]
    nodes.append(node("odd", [gpu(0, memory_total_mib="80 GB")]))
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(survey(nodes)), encoding="utf-8")
    assert main(["fleet", "show", str(path)]) == 0
    text = capsys.readouterr().out
    assert "host-huge (huge): detection refused: it reports 4097 GPUs" in text
    assert "host-odd (odd): detection refused: gpus.0.memory_total_mib" in text
    table = text.split("Outliers")[0]
    assert "host-huge" not in table and "host-odd" not in table
    assert main(["fleet", "show", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [item["node_id"] for item in data["summary"]["nodes_refused"]] == ["huge", "odd"]


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    field=st.sampled_from(["status", "gpus", "cpu", "ram_total_gib", "driver_version"]),
    value=_json_values,
)
def test_a_detection_is_read_or_refused_never_silently_dropped(field: str, value: object) -> None:
    document = survey([node("a", [gpu(0)])])
    document["nodes"][0]["detection"][field] = value
    view, _ = parse_survey(json.dumps(document), "fuzz.json")
    only = view.nodes[0]
    readable = only.detection_view() is not None
    assert readable != (only.detection_refusal() is not None)
    rows = inventory(list(view.nodes), [])
    if not readable:
        assert all(row.error and row.error.startswith("detection refused: ") for row in rows)


def test_a_survey_with_a_refused_node_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import gpudesk.fleet.survey as fleet_survey

    document = survey([node("a", [gpu(0)]), _huge_node()])
    document["summary"] = summarise(parse_survey(json.dumps(document), "s")[0].nodes)
    assert document["summary"]["nodes_failed"] == 0  # refused is not "failed"
    monkeypatch.setattr(fleet_survey, "survey", lambda *args, **kwargs: document)
    assert main(["fleet", "survey", "--out", str(tmp_path / "s.json")]) == 1
    assert "refused" in capsys.readouterr().out
    healthy = survey([node("a", [gpu(0)])])
    healthy["summary"] = summarise(parse_survey(json.dumps(healthy), "s")[0].nodes)
    monkeypatch.setattr(fleet_survey, "survey", lambda *args, **kwargs: healthy)
    assert main(["fleet", "survey"]) == 0
