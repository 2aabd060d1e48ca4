"""Issue 39: every caller of an external program, with a fake of it that hangs.

Each fake is a shell script put first on PATH (or named directly) that
writes the PIDs it starts; each test checks its caller answers within a
bound and that nothing the fake started is left running. The doctor's
nvidia-smi and NVML and the Slurm survey's srun have their own end-to-end
tests (tests/cli/test_cli_doctor_stuck.py, tests/fleet/test_fleet_slurm_stuck.py).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from stray_processes import all_gone

from gpudesk import _gpucheck
from gpudesk.catalog import skypilot_git
from gpudesk.fleet import slurm
from gpudesk.hardware import apple
from gpudesk.health import doctor

BOUND_S = 10.0
#: Sleeps in the foreground, with a child in the background holding stdout too.
HANG = "echo $$ >> {pids}; sleep 600 & echo $! >> {pids}; exec sleep 600"


def _fake(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _first_on_path(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")


def test_nvidia_smi_that_hangs(tmp_path: Path, pids: Path) -> None:
    smi = _fake(tmp_path / "bin", "nvidia-smi", HANG.format(pids=pids))
    started = time.monotonic()
    with pytest.raises(
        doctor.NvidiaSmiTimeoutError, match=r"^nvidia-smi did not answer within 1 s$"
    ):
        doctor.run_nvidia_smi(smi, timeout_s=1)
    assert time.monotonic() - started < BOUND_S
    assert all_gone(pids)


def test_system_profiler_that_hangs(
    tmp_path: Path, pids: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profiler = _fake(tmp_path / "bin", "system_profiler", HANG.format(pids=pids))
    monkeypatch.setattr(apple, "COMMAND_TIMEOUT_S", 1.0)
    started = time.monotonic()
    assert apple.run_command([str(profiler), "-json", "SPDisplaysDataType"]) is None
    assert time.monotonic() - started < BOUND_S
    assert all_gone(pids)
    # One that answers but leaves a child holding its output: the answer counts.
    answering = _fake(
        tmp_path / "bin", "sysctl", f"sleep 600 & echo $! >> {pids}; echo 'macOS 15.1'"
    )
    assert apple.run_command([str(answering)]) == "macOS 15.1\n"
    assert all_gone(pids)


def test_git_that_hangs(tmp_path: Path, pids: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _first_on_path(monkeypatch, tmp_path / "bin")
    _fake(tmp_path / "bin", "git", HANG.format(pids=pids))
    monkeypatch.setattr(skypilot_git, "GIT_TIMEOUT_S", 1.0)
    started = time.monotonic()
    with pytest.raises(skypilot_git.GitSourceError, match=r"^git ls-tree took longer than 1 s$"):
        skypilot_git.newest_vms_paths(tmp_path, "0123456789abcdef")
    assert time.monotonic() - started < BOUND_S
    assert all_gone(pids)


def test_git_that_fails_keeps_its_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _first_on_path(monkeypatch, tmp_path / "bin")
    _fake(tmp_path / "bin", "git", "echo 'hint: x' >&2; echo 'fatal: bad object' >&2; exit 128")
    with pytest.raises(skypilot_git.GitSourceError, match=r"^git ls-tree: fatal: bad object$"):
        skypilot_git.newest_vms_paths(tmp_path, "0123456789abcdef")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(skypilot_git.GitSourceError, match="git is not installed"):
        skypilot_git.newest_vms_paths(tmp_path, "0123456789abcdef")


def test_scontrol_that_hangs(tmp_path: Path, pids: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _first_on_path(monkeypatch, tmp_path / "bin")
    _fake(tmp_path / "bin", "scontrol", HANG.format(pids=pids))
    started = time.monotonic()
    with pytest.raises(slurm.SlurmUnavailableError, match="gave no answer within 1 s"):
        slurm.check_controller(timeout_s=1)
    assert time.monotonic() - started < BOUND_S
    assert all_gone(pids)


def test_a_gpucheck_step_that_hangs(
    tmp_path: Path, pids: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # _gpucheck runs `sys.executable -m gpudesk ...`: here that Python hangs.
    python = _fake(tmp_path / "bin", "python", HANG.format(pids=pids))
    monkeypatch.setattr(sys, "executable", str(python))
    started = time.monotonic()
    step = _gpucheck._gpudesk(["doctor", "--json"], timeout_s=1)
    assert time.monotonic() - started < BOUND_S
    assert step == {"exit": None, "seconds": 1, "error": "no answer in 1 s"}
    assert all_gone(pids)
