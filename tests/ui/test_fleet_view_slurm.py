"""The Fleet tab surveys a real three-node Slurm cluster on a worker, and Cancel cancels the step
(tests/slurm_cluster.py; skipped, saying why, without Slurm, munge and root)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import fake_nvml_lib
import pytest
from pytestqt.qtbot import QtBot
from slurm_cluster import SlurmCluster, hold_node, missing_programs, start_cluster
from ui_catalog_fixtures import small_catalog

from gpudesk.ui.fleet_view import FleetView
from gpudesk.ui.state import AppState

pytestmark = [
    # Local clusters run on one xdist worker in turn: Ray picks worker ports in 10002-19999,
    # where a Slurm node would listen (a slurmd found 17001 taken beside a Ray test)
    pytest.mark.xdist_group("local_clusters"),
    pytest.mark.skipif(
        bool(missing_programs()) or os.geteuid() != 0,
        reason="needs Slurm and munge and root (the test cluster runs SlurmUser=root)",
    ),
]


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlurmCluster]:
    started = start_cluster(fake_nvml_lib.environment())
    # srun inherits this process's environment: the cluster's config and the fake NVML.
    for name in ("SLURM_CONF", "LD_LIBRARY_PATH", "PYTHONPATH", "FAKE_NVML_SCENARIO"):
        monkeypatch.setenv(name, started.env[name])
    try:
        yield started
    finally:
        started.close()


def _view(qtbot: QtBot) -> FleetView:
    view = FleetView(AppState(catalog=small_catalog()))
    qtbot.addWidget(view)
    return view


def test_slurm_is_offered_and_surveys_every_node(cluster: SlurmCluster, qtbot: QtBot) -> None:
    view = _view(qtbot)
    # srun is on PATH here, so the tab offers Slurm first; the Ray address does not apply.
    assert view.scheduler_combo.currentData() == "slurm"
    assert not view.address_edit.isEnabled()
    view.start_survey()
    assert view.cancel_button.isEnabled()
    seen: set[str] = set()
    deadline = time.monotonic() + 120
    while view._worker is not None and time.monotonic() < deadline:
        seen.add(view.summary_label.text())
        qtbot.wait(50)
    assert view.survey is not None, view.summary_label.text()
    assert sorted(node.label for node in view.survey.nodes) == ["n1", "n2", "n3"]
    assert view.survey.cluster.scheduler == "slurm"
    assert view.summary_label.text().startswith("Slurm cluster gpudesk-test")
    # Progress per node came through the worker.
    assert any("of 3 nodes answered" in text for text in seen), seen


def test_cancel_cancels_the_step(cluster: SlurmCluster, qtbot: QtBot) -> None:
    hold_node(cluster, "n2")
    view = _view(qtbot)
    view.start_survey()
    qtbot.waitUntil(lambda: bool(cluster.task_pids("n2")), timeout=60_000)
    view.cancel_survey()
    qtbot.waitUntil(lambda: view._worker is None, timeout=30_000)
    assert view.summary_label.text() == "Survey cancelled."
    assert view.survey is None
    # The step's job is gone from the queue (scancel), not left running.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        queue = cluster.command("squeue", "-h", "-o", "%j").stdout.split()
        if not any(name.startswith("gpudesk-survey-") for name in queue):
            break
        time.sleep(0.2)
    assert not any(name.startswith("gpudesk-survey-") for name in queue), queue
