"""The Slurm survey's readers of untrusted text (scontrol output, node reports), and the
declared-versus-detected rules, without a cluster (tests/fleet/test_fleet_slurm.py has one)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import reach
from hypothesis import given, settings, strategies as st
from survey_factory import gpu, node, survey

from gpudesk.cli import main
from gpudesk.fleet.checks import find_outliers, outlier_line
from gpudesk.fleet.document import DetectionView, NodeView, SlurmNodeView
from gpudesk.fleet.node import encode_report
from gpudesk.fleet.slurm import (
    Gres,
    _Collector,
    _Step,
    parse_gres,
    parse_nodes,
    parse_records,
    srun_command,
)
from gpudesk.health.declared import declared_findings, pci_address

SCONTROL = (
    "NodeName=gpu7 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUTot=128 "
    "AvailableFeatures=h100,ib ActiveFeatures=h100,ib Gres=gpu:h100:8(S:0-1),shard:16 "
    "NodeAddr=10.0.0.7 NodeHostName=gpu7 Version=22.05.8 OS=Linux 6.1.0 #1 SMP PREEMPT "
    "RealMemory=2063000 AllocMem=0 State=IDLE+DRAIN ThreadsPerCore=2 Partitions=gpu,long "
    "Reason=xid 79 on GPU 3 [root@2026-12-01T10:00:00]\n"
    "NodeName=cpu1 Arch=x86_64 Gres=(null) RealMemory=500 State=MIXED Partitions=cpu\n"
    "this line is not a record\n"
    "NodeName=-bad State=IDLE\n"
)


def test_scontrol_records_keep_values_with_spaces() -> None:
    first = parse_records(SCONTROL)[0]
    assert first["OS"] == "Linux 6.1.0 #1 SMP PREEMPT"
    assert first["Reason"] == "xid 79 on GPU 3 [root@2026-12-01T10:00:00]"


def test_scontrol_nodes_as_declared() -> None:
    nodes = parse_nodes(SCONTROL)
    assert [item.name for item in nodes] == ["gpu7", "cpu1"]  # "-bad" is no node name
    gpu7, cpu1 = nodes
    assert gpu7.gres == (Gres("gpu", "h100", 8), Gres("shard", None, 16))
    assert gpu7.gpu_request == "gpu:h100:8"
    assert gpu7.features == ("h100", "ib")
    assert gpu7.real_memory_mb == 2063000
    assert gpu7.partitions == ("gpu", "long")
    assert gpu7.unusable() is not None and "IDLE+DRAIN" in gpu7.unusable()  # type: ignore[operator]
    assert cpu1.gres == () and cpu1.gpu_request == "" and cpu1.unusable() is None


@pytest.mark.parametrize(
    ("state", "usable"),
    [
        ("IDLE", True),
        ("MIXED", True),
        ("ALLOCATED", True),
        ("IDLE*", False),
        ("DOWN*+DRAIN", False),
        ("MIXED+DRAIN", False),
        ("DRAINED", False),
        ("IDLE+POWERED_DOWN", False),
    ],
)
def test_node_states_that_are_not_surveyed(state: str, usable: bool) -> None:
    (item,) = parse_nodes(f"NodeName=n1 State={state}")
    assert (item.unusable() is None) is usable


def test_gres_forms() -> None:
    assert parse_gres("gpu:2") == (Gres("gpu", None, 2),)
    assert parse_gres("gpu:a100:4(S:0,1),gpu:h100:2") == (
        Gres("gpu", "a100", 4),
        Gres("gpu", "h100", 2),
    )
    assert parse_gres("gpu:no_consume:2") == (Gres("gpu", None, 2),)
    assert parse_gres("(null)") == () and parse_gres(None) == ()
    assert parse_gres("gpu:h100:lots,gpu:$(rm):1") == ()


def test_control_characters_in_slurm_values_reach_the_survey_escaped() -> None:
    # Found by test_scontrol_parser_takes_any_text: a feature "\x1b" made a node row the
    # survey document's strict view refuses (names are one printable line).
    (item,) = parse_nodes(
        "NodeName=gpu7 AvailableFeatures=h100,\x1b[31m,a\tb State=IDLE\x07 Partitions=gpu,\x9b"
    )
    assert item.features == ("h100", "\\u001b[31m", "a b")
    assert item.state == "IDLE\\u0007" and item.partitions == ("gpu", "\\u009b")
    view = SlurmNodeView.model_validate_json(json.dumps(item.to_json()), strict=True)
    assert view.features == item.features


_SCONTROL_FIELDS = {
    "NodeName": st.sampled_from(["gpu7", "n1", "-bad", "a" * 250, ""]),
    "Gres": st.sampled_from(["gpu:h100:8(S:0-1),shard:16", "(null)", "gpu:2", "gpu:x:-1"]),
    "State": st.sampled_from(["IDLE", "MIXED+DRAIN", "DOWN*", ""]),
    "RealMemory": st.sampled_from(["2063000", "-5", "9" * 30, "lots"]),
    "AvailableFeatures": st.sampled_from(["h100,ib", "(null)", ",,"]),
    "Partitions": st.sampled_from(["gpu,long", ""]),
    "Reason": st.sampled_from(["xid 79 on GPU 3 [root@2026-12-01T10:00:00]", "a=b c"]),
}


@st.composite
def _scontrol_texts(draw: st.DrawFn) -> str:
    """Any text, or scontrol records built of real and odd values with random text put
    in: random text alone holds a node record in few examples."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.text(max_size=400))
    records = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(["gpu7", "n1", "n2"]) | _SCONTROL_FIELDS["NodeName"])
        keys = draw(
            st.lists(st.sampled_from(sorted(set(_SCONTROL_FIELDS) - {"NodeName"})), unique=True)
        )
        if "Gres" not in keys and draw(st.booleans()):
            keys.append("Gres")  # the field the GPU checks read: in most records
        values = [draw(_SCONTROL_FIELDS[key] | st.text(max_size=12)) for key in keys]
        records.append(" ".join([f"NodeName={name}", *map("{}={}".format, keys, values)]))
    text = "\n".join(records)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=20)) + text[at:]
    return text


@settings(max_examples=200, deadline=None)
@given(_scontrol_texts())
@pytest.mark.reaches(node=78, gres=15)
def test_scontrol_parser_takes_any_text(text: str) -> None:
    for item in parse_nodes(text):
        reach.reached("node")
        if item.gres:
            reach.reached("gres")
        assert item.name and not item.name.startswith("-") and len(item.name) <= 200
        assert all(gres.count >= 0 for gres in item.gres)
        item.unusable()
        # What a node row carries must pass the survey document's strict view.
        SlurmNodeView.model_validate_json(json.dumps(item.to_json()), strict=True)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["NodeName", "Gres", "State", "RealMemory", "AvailableFeatures"]),
            st.text(alphabet="abc019:,()*+=-_ []$;", max_size=30),
        ),
        max_size=8,
    )
)
def test_scontrol_parser_takes_any_record(fields: list[tuple[str, str]]) -> None:
    line = " ".join(f"{key}={value}" for key, value in [("NodeName", "n1"), *fields])
    for item in parse_nodes(line):
        assert "-" not in item.name[:1]
        SlurmNodeView.model_validate_json(json.dumps(item.to_json()), strict=True)


def test_srun_asks_for_the_gpus_as_declared() -> None:
    nodes = parse_nodes("NodeName=n1 Gres=gpu:h100:8 State=IDLE\nNodeName=n2 Gres=gpu:h100:8")
    command = srun_command(nodes, "quick", 300, "job", "gpu", ["python"])
    assert "--gres=gpu:h100:8" in command and "--ntasks-per-node=1" in command
    assert "--nodelist=n1,n2" in command and "--partition=gpu" in command
    assert not any(
        item.startswith("--gres") for item in srun_command(nodes, "none", 300, "j", None, [])
    )


class _FakeProcess:
    returncode = 0


def _step() -> _Step:
    return _Step(parse_nodes("NodeName=n1\nNodeName=n2"), _FakeProcess(), "job", 0.0)  # type: ignore[arg-type]


def _feed(collector: _Collector, step: _Step, task: int, text: str) -> list[str]:
    done = []
    for line in text.splitlines():
        name = collector.stdout(step, f"{task}: {line}")
        if name:
            done.append(name)
    return done


def test_a_report_survives_noise_and_interleaving(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURMD_NODENAME", "n1")
    block = encode_report({"hostname": "h1", "detection": {"gpus": []}, "x": "é" * 500}, "abc")
    collector, step = _Collector("abc", {"n1", "n2"}), _step()
    lines = block.splitlines()
    noisy = [lines[0], "Some library says hello", *lines[1:3], "{not json", *lines[3:]]
    # Another task's lines in between do not disturb this one.
    collector.stdout(step, "1: GPUDESK-NODE-REPORT-BEGIN abc n2 10 " + "0" * 64)
    assert _feed(collector, step, 0, "\n".join(noisy)) == ["n1"]
    value, error = collector.reports["n1"]
    assert error is None and value is not None and value["x"] == "é" * 500


def test_a_forged_or_damaged_report_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURMD_NODENAME", "n1")
    block = encode_report({"hostname": "h1"}, "abc").splitlines()
    collector, step = _Collector("abc", {"n1"}), _step()
    # Another survey's nonce: ignored entirely.
    assert _feed(collector, step, 0, encode_report({"hostname": "x"}, "zzz")) == []
    # A lost base64 line: the length and checksum no longer match.
    assert _feed(collector, step, 0, "\n".join([block[0], *block[2:]])) == ["n1"]
    assert collector.reports["n1"][1] is not None and "incomplete" in collector.reports["n1"][1]
    # A node name that was not asked for is not taken.
    other = _Collector("abc", {"n2"})
    assert _feed(other, _step(), 0, "\n".join(block)) == []


_REPORT_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def _srun_output(
    draw: st.DrawFn,
) -> tuple[list[tuple[int, str]], dict[str, list[object]], set[str]]:
    """Labelled srun output lines: report blocks of nodes n1, n2 and n3 (not asked for)
    on tasks 0-2, whole or damaged (a line lost, doubled, changed or put in), with noise
    on task 3, or random lines; the reports sent with this survey's nonce, by node; and
    the nodes whose block arrived intact. Random lines alone hold no report."""
    if draw(st.integers(0, 3)) == 0:
        lines = draw(st.lists(st.text(max_size=120), max_size=30))
        return [(position % 3, line) for position, line in enumerate(lines)], {}, set()
    streams: list[list[tuple[int, str]]] = []
    sent: dict[str, list[object]] = {}
    intact: set[str] = set()
    for task in range(draw(st.integers(1, 3))):
        node = draw(st.sampled_from(["n1", "n2", "n1", "n2", "n3"]))
        report = (  # a survey's report, or the error row of a node whose survey failed
            draw(st.dictionaries(st.sampled_from(["hostname", "gpus", "x"]), _REPORT_VALUES))
            if draw(st.integers(0, 3))
            else {"error": draw(st.text(max_size=20))}
        )
        nonce = draw(st.sampled_from(["abc", "abc", "abc", "zzz"]))
        with mock.patch.dict(os.environ, {"SLURMD_NODENAME": node}):
            block = encode_report(report, nonce).splitlines()
        damage = draw(st.sampled_from(["none"] * 4 + ["lose", "double", "change", "insert"]))
        at = draw(st.integers(1, len(block) - 2) | st.integers(0, len(block) - 1))
        if damage == "lose":
            del block[at]
        elif damage == "double":
            block.insert(at, block[at])
        elif damage == "change":
            block[at] = draw(st.text(max_size=80))
        elif damage == "insert":
            block.insert(at, draw(st.text(max_size=80)))
        elif nonce == "abc":
            intact.add(node)
        if nonce == "abc":
            sent.setdefault(node, []).append(report)
        streams.append([(task, line) for line in block])
    streams.append([(3, line) for line in draw(st.lists(st.text(max_size=120), max_size=5))])
    lines: list[tuple[int, str]] = []
    while any(streams):  # interleaved, each stream in its order
        stream = draw(st.sampled_from([stream for stream in streams if stream]))
        lines.append(stream.pop(0))
    return lines, sent, intact


@settings(max_examples=100, deadline=None)
@given(_srun_output())
@pytest.mark.reaches(report=14, refused=19)
def test_the_collector_takes_any_output(
    output: tuple[list[tuple[int, str]], dict[str, list[object]], set[str]],
) -> None:
    lines, sent, intact = output
    collector, step = _Collector("abc", {"n1", "n2"}), _step()
    for task, line in lines:
        collector.stdout(step, f"{task}: {line}")
        collector.stderr(step, line)
    assert set(collector.reports) <= {"n1", "n2"}  # n3 was not asked for
    for name, (value, error) in collector.reports.items():
        assert (value is None) != (error is None)
        if value is not None:
            reach.reached("report")
            # Damage is caught by the checksum: what is taken is what a node sent.
            assert value in sent.get(name, [])
        else:
            reach.reached("refused")
            assert error
    # An intact block always arrives (as the report, or the error the node sent).
    assert intact - {"n3"} <= set(collector.reports)


def _slurm(gres: list[tuple[str | None, int]], **fields: Any) -> dict[str, Any]:
    return {
        "name": fields.pop("name", "n3"),
        "state": "IDLE",
        "gres": [{"name": "gpu", "type": kind, "count": count} for kind, count in gres],
        **fields,
    }


def _views(
    gpus: list[dict[str, Any]], slurm: dict[str, Any]
) -> tuple[SlurmNodeView, DetectionView]:
    detection = {"status": "ok", "gpus": gpus, "ram_total_gib": 503.0}
    return (
        SlurmNodeView.model_validate_json(json.dumps(slurm), strict=True),
        DetectionView.model_validate_json(json.dumps(detection), strict=True),
    )


def test_declared_more_gpus_than_detected_names_the_missing_pci() -> None:
    gpus = [gpu(index) for index in range(7)]
    gpus.append(gpu(7, pci_bus_id="00000000:8A:00.0", lost=True))
    found = declared_findings(*_views(gpus, _slurm([("h100", 8)])))
    assert [item.message for item in found] == [
        "Slurm declares gpu:h100:8, 7 detected (PCI 0000:8a:00.0 missing)"
    ]
    assert found[0].severity == "error" and found[0].rule == "slurm_gres"


def test_a_mixed_node_declared_as_one_model() -> None:
    gpus = [gpu(0), gpu(1, name="NVIDIA GeForce RTX 4090", catalog_id="rtx-4090")]
    found = declared_findings(*_views(gpus, _slurm([("h100", 2)], features=["h100"])))
    assert {item.rule for item in found} == {"slurm_gres_type", "slurm_feature"}
    assert any("1 x rtx-4090" in item.message for item in found)
    # Declared as what it is: nothing to say.
    exact = _slurm([("h100", 1), ("rtx4090", 1)], features=["h100", "rtx4090", "ib"])
    assert declared_findings(*_views(gpus, exact)) == []


def test_memory_and_undeclared_gpus() -> None:
    found = declared_findings(*_views([gpu(0)], _slurm([], real_memory_mb=1_000_000)))
    assert {item.rule for item in found} == {"slurm_gres", "slurm_memory"}
    assert any("Slurm declares no GPU GRES" in item.message for item in found)
    assert pci_address("00000000:1B:00.0") == "0000:1b:00.0"


def test_findings_are_node_outliers_in_fleet_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = [node("n1", [gpu(0), gpu(1)]), node("n3", [gpu(0)])]
    for row in nodes:
        row["slurm"] = _slurm([(None, 2)], name=row["node_id"])
    views = [NodeView.model_validate_json(json.dumps(row), strict=True) for row in nodes]
    (outlier,) = find_outliers(views)
    assert outlier.node_id == "n3" and outlier.gpu_index is None
    assert outlier_line(outlier, "n3") == "n3: Slurm declares gpu:2, 1 detected"
    document = survey(nodes)
    document["cluster"].update(scheduler="slurm", slurm_version="22.05.8", ray_version=None)
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(document))
    assert main(["fleet", "show", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Slurm cluster" in text and "  n3: Slurm declares gpu:2, 1 detected" in text
    # The node's finding marks its rows of the inventory too.
    (n3_row,) = [line for line in text.splitlines() if line.startswith("n3 ")]
    assert n3_row.rstrip().endswith("GRES differs")


def test_slurm_flags_need_slurm(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "survey", "--partition", "gpu"]) == 2
    assert "add --slurm" in capsys.readouterr().err
    assert main(["fleet", "survey", "--slurm", "--address", "10.0.0.1:6379"]) == 2


def test_no_srun_exits_3_with_a_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    started = time.monotonic()
    assert main(["fleet", "survey", "--slurm"]) == 3
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert "`srun` is not on PATH" in err and "hint:" in err


def test_a_hung_controller_exits_3_within_10_s(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Stand-ins that never answer, as commands do when the controller host drops packets.
    for name in ("srun", "scontrol"):
        script = tmp_path / name
        script.write_text("#!/bin/sh\nexec sleep 60\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    started = time.monotonic()
    assert main(["fleet", "survey", "--slurm", "--nodelist", "n[1-3]"]) == 3
    assert time.monotonic() - started < 10
    assert "no answer" in capsys.readouterr().err


def test_bad_node_lists_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("srun", "scontrol"):
        script = tmp_path / name
        script.write_text("#!/bin/sh\necho 'Slurmctld(primary) at h is UP'\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert main(["fleet", "survey", "--slurm", "--nodelist", "n1;rm -rf /"]) == 2
    assert "--nodelist" in capsys.readouterr().err
