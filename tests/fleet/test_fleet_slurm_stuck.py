"""Issue 39: ``fleet survey --slurm --timeout 10`` ends within 20 s whatever srun leaves behind.

Sites wrap srun in scripts; a wrapper that leaves a child holding srun's
output (or that hangs itself, ignoring SIGTERM) must not hold the survey
past its timeout. The wrapper is an ``srun`` ahead of the real one on PATH,
against the real three-node cluster of tests/slurm_cluster.py; it writes the
PIDs it starts, and any still alive at the end is killed by PID.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_nvml_lib
import pytest
from slurm_cluster import SlurmCluster, missing_programs, start_cluster
from stray_processes import all_gone

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

#: The issue's bound for `--timeout 10`.
SURVEY_BOUND_S = 20.0


@pytest.fixture
def cluster() -> Iterator[SlurmCluster]:
    started = start_cluster(fake_nvml_lib.environment())
    yield started
    started.close()


def _survey_with_wrapper(
    cluster: SlurmCluster, folder: Path, body: str
) -> tuple[int, dict[str, Any], str, float]:
    real = shutil.which("srun", path=cluster.env.get("PATH"))
    assert real is not None
    folder.mkdir()
    wrapper = folder / "srun"
    wrapper.write_text(f"#!/bin/sh\n{body.format(srun=real)}\n", encoding="utf-8")
    wrapper.chmod(0o755)
    env = {**cluster.env, "PATH": f"{folder}{os.pathsep}{cluster.env.get('PATH', '')}"}
    command = ["fleet", "survey", "--slurm", "--json", "--timeout", "10"]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "gpudesk", *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    took = time.monotonic() - started
    return done.returncode, json.loads(done.stdout), done.stderr, took


def _rows(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["slurm"]["name"]: row for row in document["nodes"]}


def test_an_srun_whose_child_holds_its_output_ends_the_survey_in_time(
    cluster: SlurmCluster, tmp_path: Path, pids: Path
) -> None:
    code, document, stderr, took = _survey_with_wrapper(
        cluster, tmp_path / "bin", f'sleep 600 & echo $! >> {pids}\nexec "{{srun}}" "$@"'
    )
    assert took < SURVEY_BOUND_S, stderr
    assert code == 0, stderr
    by_name = _rows(document)
    assert sorted(by_name) == ["n1", "n2", "n3"]
    assert all(row["error"] is None and row["detection"]["gpus"] for row in by_name.values())
    assert all_gone(pids)  # the child srun left behind was stopped with its group


def test_a_wrapper_that_hangs_and_ignores_sigterm_is_stopped_at_the_timeout(
    cluster: SlurmCluster, tmp_path: Path, pids: Path
) -> None:
    body = (
        f"trap '' TERM\necho $$ >> {pids}\n"
        f"sleep 600 & echo $! >> {pids}\n"
        '"{srun}" "$@"\n'
        "while :; do sleep 1; done"
    )
    code, document, stderr, took = _survey_with_wrapper(cluster, tmp_path / "bin", body)
    assert took < SURVEY_BOUND_S, stderr
    # The nodes answered before the wrapper hung: their reports count.
    by_name = _rows(document)
    assert all(row["error"] is None for row in by_name.values()), stderr
    assert code == 0, stderr
    assert all_gone(pids)


def test_an_srun_that_never_answers_gives_error_rows_at_the_timeout(
    cluster: SlurmCluster, tmp_path: Path, pids: Path
) -> None:
    body = f"trap '' TERM\necho $$ >> {pids}\nsleep 600 & echo $! >> {pids}\nexec sleep 600"
    code, document, stderr, took = _survey_with_wrapper(cluster, tmp_path / "bin", body)
    assert took < SURVEY_BOUND_S, stderr
    assert code == 1, stderr
    errors = {name: row["error"] for name, row in _rows(document).items()}
    assert errors == dict.fromkeys(
        ("n1", "n2", "n3"), "no answer within 10 s (its task never started)"
    )
    assert all_gone(pids)
