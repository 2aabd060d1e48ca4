"""Issue 39: ``gpudesk doctor`` answers within 30 s when nvidia-smi or NVML is stuck.

A GPU that fell off the bus leaves nvidia-smi and NVML calls stuck in the
driver. The doctor must say so as a finding (exit 1), not hang. The fakes:
an nvidia-smi that sleeps, one whose child holds its stdout open, and the
fake libnvidia-ml.so.1 told to sleep in nvmlDeviceGetCount_v2. Each fake
writes the PIDs it starts, and whatever is still alive at the end is killed
by PID.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import fake_nvml_lib as fake
import pytest
from fake_nvidia_smi import AGREEING, write_fake_nvidia_smi
from stray_processes import all_gone

from gpudesk.health import doctor

#: The issue's bound for `doctor --skip-bench` with a stuck tool.
DOCTOR_BOUND_S = 30.0


def _fake_smi(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "nvidia-smi"
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _doctor(
    smi: Path, settings: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], str, float]:
    started = time.monotonic()
    done = fake.run_gpudesk(
        ["doctor", "--json", "--skip-bench", "--nvidia-smi", str(smi)],
        settings=settings,
        timeout=120,
    )
    took = time.monotonic() - started
    return done.returncode, json.loads(done.stdout), done.stderr, took


HANGING = {
    "sleeps": "echo $$ >> {pids}; exec sleep 600",
    "child holds stdout": "echo $$ >> {pids}; sleep 600 & echo $! >> {pids}; exec sleep 600",
}


@pytest.mark.parametrize("behaviour", sorted(HANGING))
def test_a_hanging_nvidia_smi_is_an_error_finding_within_30_s(
    tmp_path: Path, pids: Path, behaviour: str
) -> None:
    smi = _fake_smi(tmp_path / "bin", HANGING[behaviour].format(pids=pids))
    code, report, stderr, took = _doctor(smi)
    assert took < DOCTOR_BOUND_S, stderr
    assert code == 1, stderr
    message = f"nvidia-smi did not answer within {doctor.SMI_TIMEOUT_S:g} s ({smi})"
    (finding,) = [f for f in report["findings"] if f["check"] == "nvidia_smi"]
    assert finding["severity"] == "error" and finding["message"].startswith(message)
    assert "nvidia_smi: nvidia-smi did not answer" in stderr
    # NVML still answered: both GPUs are in the report, without agreement to show.
    assert len(report["gpus"]) == 2
    assert all_gone(pids)


def test_an_answer_with_a_child_left_holding_stdout_is_used(tmp_path: Path, pids: Path) -> None:
    rows = tmp_path / "rows"
    rows.write_text("\n".join(AGREEING) + "\n")
    smi = _fake_smi(tmp_path / "bin", f"sleep 600 & echo $! >> {pids}; cat {rows}")
    code, report, stderr, took = _doctor(smi)
    assert took < DOCTOR_BOUND_S, stderr
    assert code == 0, stderr
    assert all(field["match"] for gpu in report["gpus"] for field in gpu["agreement"].values())
    (finding,) = [f for f in report["findings"] if f["check"] == "nvidia_smi"]
    assert finding["severity"] == "warning" and "left a process" in finding["message"]
    assert all_gone(pids)


def test_a_hanging_nvml_is_an_error_finding_within_30_s(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path / "bin")
    code, report, stderr, took = _doctor(smi, settings={"FAKE_NVML_HANG_S": "600"})
    assert took < DOCTOR_BOUND_S, stderr
    assert code == 1, stderr
    assert report["ok"] is False and report["gpus"] == []
    (finding,) = report["findings"]
    assert finding["check"] == "nvml" and finding["severity"] == "error"
    assert finding["message"].startswith(
        f"NVML did not answer within {doctor.NVML_TIMEOUT_S:g} s (while reading the CPU)"
    )
    assert "gpudesk: doctor found: nvml: NVML did not answer" in stderr


def test_a_hanging_nvml_fails_an_expect_gate_in_text_too(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path / "bin")
    started = time.monotonic()
    done = fake.run_gpudesk(
        ["doctor", "--skip-bench", "--expect", "1x h100-sxm5", "--nvidia-smi", str(smi)],
        settings={"FAKE_NVML_HANG_S": "600"},
        timeout=120,
    )
    assert time.monotonic() - started < DOCTOR_BOUND_S, done.stderr
    assert done.returncode == 1, done.stderr
    assert "X nvml: NVML did not answer" in done.stdout
    assert "expect 1x h100-sxm5: FAIL" in done.stdout
