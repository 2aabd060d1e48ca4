"""``gpudesk fleet survey --slurm`` on a real three-node Slurm cluster on this machine.

tests/slurm_cluster.py starts munged, slurmctld and three slurmd (n1, n2, n3)
per test in a temporary folder, about half a second; every node's tasks load
the fake NVML (two GPUs: an H100 and an RTX 4090, unless the node's settings
say otherwise). .ci/run installs Debian's slurm-wlm and munge; the daemons
run as root (SlurmUser=root), so elsewhere these tests are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import fake_nvml_lib
import pytest
from slurm_cluster import (
    SlurmCluster,
    hold_node,
    missing_programs,
    start_cluster,
)

pytestmark = [
    # Local clusters run on one xdist worker in turn: Ray picks worker ports in 10002-19999,
    # where a Slurm node would listen (a slurmd found 17001 taken beside a Ray test)
    pytest.mark.xdist_group("local_clusters"),
    pytest.mark.skipif(
        bool(missing_programs()) or os.geteuid() != 0,
        reason=f"needs Slurm and munge ({', '.join(missing_programs()) or 'installed'}) "
        "and root (the test cluster runs SlurmUser=root); .ci/run installs them",
    ),
]

#: What n1 and n2 have (the fake's two GPUs), declared as Slurm would name them.
MIXED = "gpu:h100:1,gpu:rtx4090:1"


@pytest.fixture
def cluster_factory() -> Iterator[Any]:
    started: list[SlurmCluster] = []

    def start(**options: Any) -> SlurmCluster:
        env = fake_nvml_lib.environment()
        cluster = start_cluster(env, **options)
        started.append(cluster)
        return cluster

    yield start
    for cluster in started:
        cluster.close()


def survey(
    cluster: SlurmCluster, *arguments: str, timeout: float = 240
) -> tuple[int, str, str, float]:
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "gpudesk", "fleet", "survey", "--slurm", *arguments],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - began


def show(cluster: SlurmCluster, path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "gpudesk", "fleet", "show", str(path)],
        env={**cluster.env, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def rows(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["slurm"]["name"]: row for row in document["nodes"]}


def test_three_nodes_quick_bench_json(cluster_factory: Any, tmp_path: Path) -> None:
    cluster = cluster_factory(gres=dict.fromkeys(("n1", "n2", "n3"), MIXED))
    out = tmp_path / "survey.json"
    code, stdout, stderr, _ = survey(cluster, "--bench", "quick", "--json", "--out", str(out))
    assert code == 0, stderr
    document = json.loads(stdout)
    assert document["scheduler"] == "slurm" and document["cluster"]["scheduler"] == "slurm"
    assert document["cluster"]["address"] == "gpudesk-test"
    assert (
        document["cluster"]["slurm_version"].startswith("22.")
        or document["cluster"]["slurm_version"]
    )
    by_name = rows(document)
    assert sorted(by_name) == ["n1", "n2", "n3"]
    for name, row in by_name.items():
        assert row["error"] is None, (name, row["error"])
        assert row["node_id"] == name and row["slurm"]["gres"][0]["type"] == "h100"
        models = [gpu["catalog_id"] for gpu in row["detection"]["gpus"]]
        assert models == ["h100-sxm5", "rtx-4090"]
        assert row["benches"] and row["bench"]["results"], name  # the quick benchmark ran
    # Declared as the nodes are: no declared-versus-detected finding.
    assert not [o for o in document["summary"]["outliers"] if o["check"].startswith("slurm_")]
    assert json.loads(out.read_text()) == document
    text = show(cluster, out)
    assert "Slurm cluster gpudesk-test" in text and "3 nodes, 6 GPUs, 0 failed" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_gres_mismatch_is_a_finding_in_json_and_fleet_show(
    cluster_factory: Any, tmp_path: Path
) -> None:
    # n1's Python prints to stdout on start-up (a site's sitecustomize): the report survives.
    noisy = tmp_path / "noisy"
    noisy.mkdir()
    (noisy / "sitecustomize.py").write_text("print('site notice: quota 93% full')\n")
    pythonpath = os.pathsep.join([str(noisy), cluster_env_pythonpath()])
    cluster = cluster_factory(
        gres={"n1": "gpu:2", "n2": "gpu:2", "n3": "gpu:2"},
        node_env={"n3": {"FAKE_NVML_GPU_COUNT": "1"}, "n1": {"PYTHONPATH": pythonpath}},
    )
    out = tmp_path / "survey.json"
    code, stdout, stderr, _ = survey(cluster, "--json", "--out", str(out))
    assert code == 0, stderr
    document = json.loads(stdout)
    by_name = rows(document)
    assert all(row["error"] is None for row in by_name.values())
    assert len(by_name["n3"]["detection"]["gpus"]) == 1
    findings = [o for o in document["summary"]["outliers"] if o["check"] == "slurm_gres"]
    assert findings == [
        {
            "node_id": "n3",
            "gpu_index": None,
            "check": "slurm_gres",
            "value": 1,
            "fleet_median": None,
            "message": "Slurm declares gpu:2, 1 detected",
            "severity": "error",
            "rule": "slurm_gres",
        }
    ]
    assert "  n3: Slurm declares gpu:2, 1 detected" in show(cluster, out)


def test_a_drained_node_is_an_error_row(cluster_factory: Any) -> None:
    cluster = cluster_factory()
    cluster.set_node("n2", "drain", reason="bad riser")
    code, stdout, stderr, _ = survey(cluster, "--json")
    assert code == 1, stderr
    by_name = rows(json.loads(stdout))
    assert "DRAIN" in by_name["n2"]["error"] and "bad riser" in by_name["n2"]["error"]
    assert by_name["n1"]["error"] is None and by_name["n3"]["error"] is None
    assert by_name["n1"]["detection"]["gpus"]


def test_a_node_stopped_mid_survey(cluster_factory: Any) -> None:
    cluster = cluster_factory()
    hold_node(cluster, "n2")  # n2's task waits in its prolog, so the survey is under way
    process = subprocess.Popen(
        [sys.executable, "-m", "gpudesk", "fleet", "survey", "--slurm", "--json"],
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not cluster.task_pids("n2"):
            assert time.monotonic() < deadline, cluster.logs()
            time.sleep(0.1)
        # The node goes away: its slurmd and everything it was running, each by PID.
        cluster.stop("slurmd-n2", signal.SIGKILL)
        for pid in cluster.task_pids("n2"):
            os.kill(pid, signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1, stderr
    by_name = rows(json.loads(stdout))
    assert by_name["n2"]["error"] and by_name["n2"]["detection"] is None
    for name in ("n1", "n3"):
        assert by_name[name]["error"] is None and by_name[name]["detection"]["gpus"]


def test_a_node_past_the_timeout(cluster_factory: Any) -> None:
    cluster = cluster_factory()
    hold_node(cluster, "n3")
    code, stdout, stderr, took = survey(cluster, "--json", "--timeout", "8")
    assert code == 1, stderr
    by_name = rows(json.loads(stdout))
    assert by_name["n3"]["error"].startswith("no answer within 8 s")
    assert by_name["n1"]["error"] is None and by_name["n2"]["error"] is None
    assert took < 30


def test_no_controller_exits_3_quickly(cluster_factory: Any) -> None:
    cluster = cluster_factory()
    cluster.stop("slurmctld")
    code, _, stderr, took = survey(cluster)
    assert code == 3, stderr
    assert took < 10
    assert "no Slurm controller reachable" in stderr and "hint:" in stderr


def test_partition_and_nodelist_narrow_the_survey(cluster_factory: Any) -> None:
    cluster = cluster_factory()
    code, stdout, stderr, _ = survey(
        cluster, "--json", "--partition", "gpu", "--nodelist", "n[1-2]"
    )
    assert code == 0, stderr
    assert sorted(rows(json.loads(stdout))) == ["n1", "n2"]
    code, _, stderr, _ = survey(cluster, "--nodelist", "n9")
    assert code == 2 and "--slurm" not in stderr and "n9" in stderr


def cluster_env_pythonpath() -> str:
    return fake_nvml_lib.environment()["PYTHONPATH"]


def test_inside_a_batch_job_the_survey_takes_the_jobs_nodes(cluster_factory: Any) -> None:
    cluster = cluster_factory()
    out = cluster.root / "survey.json"
    job = cluster.command(
        "sbatch",
        "--parsable",
        "--nodes=2",
        "--ntasks-per-node=1",
        "--gres=gpu:2",
        f"--output={cluster.root / 'job.log'}",
        "--wrap",
        f"{sys.executable} -m gpudesk fleet survey --slurm --bench none --out {out}",
    ).stdout.strip()
    deadline = time.monotonic() + 120
    while cluster.command("squeue", "-h", "-j", job, check=False).stdout.strip():
        assert time.monotonic() < deadline, cluster.logs()
        time.sleep(0.5)
    log = (cluster.root / "job.log").read_text()
    document = json.loads(out.read_text())
    by_name = rows(document)
    assert len(by_name) == 2, log  # the job's two nodes, not the cluster's three
    assert all(row["error"] is None for row in by_name.values()), log
