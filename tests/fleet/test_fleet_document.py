"""Reading survey files back: untrusted, so a bad file is a SurveyFileError saying what is wrong."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import reach
from hypothesis import given, settings, strategies as st
from survey_factory import gemm_run, gpu, node, survey

from gpudesk.fleet.checks import summarise
from gpudesk.fleet.document import MAX_DEPTH, SurveyFileError, parse_survey, read_survey


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_valid_survey_round_trips(tmp_path: Path) -> None:
    document = survey([node("a", [gpu(0)], [gemm_run(0, 700.0)])])
    view, data = read_survey(_write(tmp_path, document))
    assert data == document
    assert view.nodes[0].label == "host-a"
    assert view.nodes[0].bench_views()[0].results[0].value == 700.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[]", "not a JSON object"),
        ("{", "not valid JSON"),
        ('{"cluster": NaN}', "not valid JSON"),
        ('{"x": "\\ud800"}', "not valid Unicode"),
        ("[" * 5000 + "]" * 5000, "nested"),
        (json.dumps({"survey_schema_version": 99, "cluster": {}, "nodes": []}), "newer"),
        (json.dumps({"cluster": {}, "nodes": []}), "cluster.address"),
    ],
)
def test_bad_documents_are_refused_with_the_reason(text: str, expected: str) -> None:
    with pytest.raises(SurveyFileError, match=expected):
        parse_survey(text, "bad.json")


def test_lax_types_are_refused_naming_the_field() -> None:
    document = survey([node("a", [gpu(0)])])
    document["cluster"]["nodes_alive"] = True  # a boolean is not a count
    with pytest.raises(SurveyFileError, match=r"cluster\.nodes_alive"):
        parse_survey(json.dumps(document), "bad.json")


def test_depth_limit_applies_inside_a_node() -> None:
    deep: object = 1
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    document = survey([node("a")])
    document["nodes"][0]["detection"]["extra"] = deep
    with pytest.raises(SurveyFileError, match="nested more than"):
        parse_survey(json.dumps(document), "bad.json")


def test_unreadable_detection_leaves_the_node_without_gpus_not_a_crash() -> None:
    document = survey([node("a", [gpu(0, memory_total_mib="80 GB")])])
    view, _ = parse_survey(json.dumps(document), "odd.json")
    assert view.nodes[0].detection_view() is None
    assert summarise(view.nodes)["gpus"] == 0


def test_fifo_directory_and_missing_file_are_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "survey.fifo"
    os.mkfifo(fifo)
    with pytest.raises(SurveyFileError, match="not a regular file"):
        read_survey(fifo)
    with pytest.raises(SurveyFileError, match=r"not a regular file|cannot"):
        read_survey(tmp_path)
    with pytest.raises(SurveyFileError, match="cannot be read"):
        read_survey(tmp_path / "missing.json")


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)


_SURVEY_BYTES = json.dumps(
    survey([node("a", [gpu(0)], [gemm_run(0, 700.0)]), node("b", [gpu(0)])])
).encode()


@st.composite
def _survey_bytes(draw: st.DrawFn) -> bytes:
    """Any bytes, or a real survey document whole, cut short, or with bytes changed or
    put in: random bytes alone are never a survey."""
    kind = draw(st.sampled_from(["random", "whole", "cut", "changed", "changed", "put in"]))
    if kind == "random":
        return draw(st.binary(max_size=400))
    raw = _SURVEY_BYTES
    at = draw(st.integers(0, len(raw)))
    if kind == "cut":
        return raw[:at]
    if kind == "changed":
        return raw[:at] + draw(st.binary(min_size=1, max_size=3)) + raw[at + 1 :]
    if kind == "put in":
        return raw[:at] + draw(st.binary(max_size=8)) + raw[at:]
    return raw


@settings(max_examples=200, deadline=None)
@given(_survey_bytes())
@pytest.mark.reaches(survey=28, refused=72)
def test_any_bytes_give_a_survey_or_a_survey_file_error(raw: bytes) -> None:
    try:
        view, data = parse_survey(raw, "fuzz.json")
    except SurveyFileError as exc:
        reach.reached("refused")
        assert exc.source == "fuzz.json" and exc.message
        return
    reach.reached("survey")
    assert isinstance(data, dict)
    json.dumps(summarise(view.nodes), allow_nan=False)
    if raw == _SURVEY_BYTES:
        assert [item.node_id for item in view.nodes] == ["a", "b"]


#: What a node really has in each field (another node's, or a plausible one).
_NODE_FIELD_VALUES = {
    "node_id": st.sampled_from(["c", "gpu-node-7", "a"]) | st.text(max_size=8),
    "detection": st.builds(
        lambda count: node("x", [gpu(index) for index in range(count)])["detection"],
        st.integers(0, 3),
    ),
    "bench": st.none() | st.builds(lambda tflops: gemm_run(0, tflops), st.floats(1, 900)),
    "benches": st.lists(st.builds(lambda tflops: gemm_run(0, tflops), st.floats(1, 900))),
    "error": st.none() | st.sampled_from(["no answer within 5 s"]) | st.text(max_size=20),
    "hostname": st.sampled_from(["host-c", "gpu7.example.org"]) | st.text(max_size=20),
}


@settings(max_examples=200, deadline=None)
@given(
    field_value=st.sampled_from(sorted(_NODE_FIELD_VALUES)).flatmap(
        lambda field: st.tuples(st.just(field), _NODE_FIELD_VALUES[field] | _json_values)
    ),
)
@pytest.mark.reaches(summarised=46, refused=53)
def test_any_value_in_a_node_field_is_refused_cleanly_or_summarised(
    field_value: tuple[str, object],
) -> None:
    field, value = field_value
    document = survey([node("a", [gpu(0)], [gemm_run(0, 700.0)]), node("b", [gpu(0)])])
    document["nodes"][0][field] = value
    try:
        view, _ = parse_survey(json.dumps(document), "fuzz.json")
    except SurveyFileError as exc:
        reach.reached("refused")
        assert exc.source == "fuzz.json" and exc.message
        return
    reach.reached("summarised")
    summary = summarise(view.nodes)
    json.dumps(summary, allow_nan=False)
    assert summary["nodes"] == 2


def test_the_views_read_fields_that_detection_really_writes() -> None:
    from gpudesk.fleet.document import DetectionView, GpuView
    from gpudesk.hardware.models import DetectionResult, GpuSnapshot

    written = set(GpuSnapshot.model_fields) | {"catalog_id"}
    assert set(GpuView.model_fields) <= written
    assert set(DetectionView.model_fields) <= set(DetectionResult.model_fields)


def test_the_header_names_the_address_auto_resolved_to() -> None:
    from gpudesk.fleet.document import ClusterInfo

    base = {"address": "auto", "nodes_alive": 1, "surveyed_at": "2026-12-02T14:00:00+00:00"}
    cluster = ClusterInfo.model_validate({**base, "ray_version": "2.60.0"}, strict=False)
    assert cluster.title == "Ray cluster auto (Ray 2.60.0)"  # an older survey
    used = ClusterInfo.model_validate(
        {**base, "ray_version": "2.60.0", "address_used": "10.0.0.5:6379"}, strict=False
    )
    assert used.title == "Ray cluster 10.0.0.5:6379 (auto; Ray 2.60.0)"


def test_a_cpu_node_benchmarks_on_all_its_cpus_though_ray_gave_blas_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    import gpudesk.bench.runner as runner
    from gpudesk.fleet import node as node_task

    seen: list[int] = []

    class _Result:
        def to_json(self) -> str:
            return "{}"

    def fake_run(*args: object, **kwargs: object) -> _Result:
        seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return _Result()

    monkeypatch.setattr(runner, "run_benchmark", fake_run)
    monkeypatch.setattr(node_task, "node_cpus", lambda: 3)
    with threadpool_limits(limits=1, user_api="blas"):
        assert node_task._quick_benches(0, []) == [{}]
    assert seen and set(seen) == {3}
