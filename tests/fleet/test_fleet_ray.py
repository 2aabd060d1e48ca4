"""The survey on a real local Ray cluster (a head and two worker nodes, all on 127.0.0.1).

One cluster per module keeps the start-up cost to a few seconds. Ray is told
to bind to loopback and not to report usage, so nothing leaves this machine.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray")

from gpudesk.fleet.survey import ClusterUnreachableError, survey

# Quick benchmarks on several nodes of one small machine, one after another:
# minutes on a loaded machine, past the suite's default 120 s per test.
# Local clusters (Ray, Slurm) run on one xdist worker in turn: their ports would collide
pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("local_clusters")]

LOOPBACK_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_memory_monitor_refresh_ms": "0",
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ray.cluster_utils import Cluster

    home = tmp_path_factory.mktemp("ray-home")
    patch = pytest.MonkeyPatch()
    for name, value in LOOPBACK_ENV.items():
        patch.setenv(name, value)
    # The nodes' GPUDesk must not read or write the real user folders either.
    patch.setenv("XDG_DATA_HOME", str(home / "data"))
    patch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    started = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    for _ in range(2):
        started.add_node(num_cpus=1)
    started.wait_for_nodes()
    yield started
    started.shutdown()
    patch.undo()


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **LOOPBACK_ENV}
    return subprocess.run(
        [sys.executable, "-m", "gpudesk", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_quick_survey_of_three_nodes_then_show(cluster: Any, tmp_path: Path) -> None:
    out = tmp_path / "survey.json"
    result = _cli(
        "fleet",
        "survey",
        "--address",
        cluster.address,
        "--bench",
        "quick",
        "--json",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert json.loads(out.read_text()) == document
    nodes = document["nodes"]
    assert len(nodes) == 3
    assert len({row["node_id"] for row in nodes}) == 3  # each node exactly once
    assert {row["ip"] for row in nodes} == {"127.0.0.1"}
    for row in nodes:
        assert row["error"] is None
        assert row["detection"]["cpu"]["threads"] >= 1
        assert row["bench"]["backend"] == "numpy"
        assert row["bench"]["device"]["kind"] == "cpu"
        assert any(item["test"] == "gemm" and item["value"] > 0 for item in row["bench"]["results"])
        # Ray gives tasks one BLAS thread; the CPU benchmark takes the node's CPUs back.
        blas = row["bench"]["environment"].get("blas") or []
        assert all(pool["threads"] == len(os.sched_getaffinity(0)) for pool in blas), blas
    assert document["cluster"]["nodes_alive"] == 3
    # The address Ray connected to (what "auto" would resolve to) is recorded.
    assert document["cluster"]["address_used"] == cluster.address
    assert document["summary"]["nodes"] == 3
    assert result.stderr.count("gpudesk: node ") == 3  # a progress line per node

    shown = _cli("fleet", "show", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "3 nodes" in shown.stdout
    assert shown.stdout.count("CPU: ") >= 3
    shown_json = _cli("fleet", "show", str(out), "--json")
    assert json.loads(shown_json.stdout)["summary"] == document["summary"]


def test_a_node_that_hangs_hits_the_timeout_and_the_others_are_kept(cluster: Any) -> None:
    import ray

    target = cluster.list_all_nodes()[-1].node_id

    def hang_on_target(bench: str) -> dict[str, Any]:
        import ray as node_ray

        if node_ray.get_runtime_context().get_node_id() == target:
            time.sleep(120)
        return {"hostname": "fake", "detection": None, "benches": []}

    started = time.monotonic()
    document = survey(cluster.address, timeout_s=8, node_task=hang_on_target)
    assert time.monotonic() - started < 60
    assert not ray.is_initialized()  # the survey disconnected
    errors = {row["node_id"]: row["error"] for row in document["nodes"]}
    assert len(errors) == 3
    assert errors.pop(target) == "no answer within 8 s"
    assert set(errors.values()) == {None}
    assert document["summary"]["nodes_failed"] == 1


def test_a_node_removed_mid_survey_is_an_error_row(cluster: Any) -> None:
    extra = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    target = extra.node_id

    def slow_on_target(bench: str) -> dict[str, Any]:
        import ray as node_ray

        if node_ray.get_runtime_context().get_node_id() == target:
            time.sleep(60)
        return {"hostname": "fake", "detection": None, "benches": []}

    killer = threading.Timer(4.0, cluster.remove_node, [extra])
    killer.start()
    try:
        document = survey(cluster.address, timeout_s=45, node_task=slow_on_target)
    finally:
        killer.join()
    rows = {row["node_id"]: row for row in document["nodes"]}
    assert len(rows) == 4
    error = rows.pop(target)["error"]
    assert error is not None and "no answer" not in error  # the death, not the timeout
    assert [row["error"] for row in rows.values()] == [None, None, None]


def test_no_cluster_at_the_address_exits_3_quickly() -> None:
    port = _free_port()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        started = time.monotonic()
        result = _cli("fleet", "survey", "--address", address, timeout=60)
        assert result.returncode == 3, result.stderr
        assert address in result.stderr and "hint:" in result.stderr
        assert time.monotonic() - started < 30
    with pytest.raises(ClusterUnreachableError):
        survey(f"127.0.0.1:{port}")


def test_cli_exits_1_when_a_worker_node_is_killed_and_keeps_the_others(cluster: Any) -> None:
    extra = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    env = {**os.environ, **LOOPBACK_ENV}
    command = [
        sys.executable,
        "-m",
        "gpudesk",
        "fleet",
        "survey",
        "--address",
        cluster.address,
        "--bench",
        "quick",
        "--timeout",
        "90",
        "--json",
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        # Benchmarks on one host run one node at a time: the extra node is still waiting.
        time.sleep(3.0)
        cluster.remove_node(extra)
        out, err = process.communicate(timeout=240)
    finally:
        process.kill()
    assert process.returncode == 1, err
    rows = {row["node_id"]: row for row in json.loads(out)["nodes"]}
    assert len(rows) == 4
    # Usually the extra node is still waiting for its turn (it left before its task
    # ran); on a slow machine its task may have started (then the node died under it).
    error = rows.pop(extra.node_id)["error"]
    assert error is not None and ("left the cluster" in error or "died" in error), error
    for row in rows.values():
        assert row["error"] is None
        assert row["bench"]["results"]


def test_the_fleet_tab_surveys_the_cluster_on_a_worker(cluster: Any, qtbot: Any) -> None:
    from ui_catalog_fixtures import small_catalog

    from gpudesk.ui.fleet_view import FleetView
    from gpudesk.ui.state import AppState

    view = FleetView(AppState(catalog=small_catalog()))
    qtbot.addWidget(view)
    view.scheduler_combo.setCurrentIndex(view.scheduler_combo.findData("ray"))
    view.address_edit.setText(cluster.address)
    view.start_survey()
    assert not view.survey_button.isEnabled() and view.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: view._worker is None, timeout=120_000)
    assert view.survey is not None, view.summary_label.text()
    assert len(view.survey.nodes) == len(cluster.list_all_nodes())
    assert view.model.rowCount() == len(view.survey.nodes)  # one CPU row per node
    assert view.save_button.isEnabled()
