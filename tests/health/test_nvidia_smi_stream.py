"""nvidia-smi's output is read as it comes and cut at the cap, never held whole (issue 30)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from gpudesk.health import doctor


def _script(folder: Path, body: str) -> Path:
    path = folder / "nvidia-smi"
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_endless_output_is_stopped_at_the_cap_not_read_until_the_timeout(tmp_path: Path) -> None:
    # prints forever: reading it all first (the old way) only ends at the timeout
    smi = _script(tmp_path, "chunk = b'x' * 65536\nwhile True:\n    sys.stdout.buffer.write(chunk)")
    started = time.monotonic()
    with pytest.raises(doctor.NvidiaSmiFailedError, match="printed more than 1024 KiB"):
        doctor.run_nvidia_smi(smi, timeout_s=20)
    assert time.monotonic() - started < 10


def test_output_over_the_cap_then_a_hang_is_stopped_at_the_cap(tmp_path: Path) -> None:
    smi = _script(
        tmp_path,
        f"sys.stdout.buffer.write(b'x' * {doctor.MAX_SMI_OUTPUT_BYTES + 1})\n"
        "sys.stdout.flush()\ntime.sleep(60)",
    )
    started = time.monotonic()
    with pytest.raises(doctor.NvidiaSmiFailedError, match="printed more than"):
        doctor.run_nvidia_smi(smi, timeout_s=20)
    assert time.monotonic() - started < 10


def test_output_at_the_cap_is_read_whole(tmp_path: Path) -> None:
    size = doctor.MAX_SMI_OUTPUT_BYTES
    smi = _script(tmp_path, f"sys.stdout.buffer.write(b'y' * {size})")
    assert doctor.run_nvidia_smi(smi, timeout_s=20) == "y" * size


def test_endless_errors_are_stopped_too(tmp_path: Path) -> None:
    smi = _script(tmp_path, "while True:\n    sys.stderr.write('e' * 65536)")
    with pytest.raises(doctor.NvidiaSmiFailedError, match="of errors"):
        doctor.run_nvidia_smi(smi, timeout_s=20)


def test_a_hang_is_a_timeout_and_a_failure_keeps_its_first_line(tmp_path: Path) -> None:
    hang = _script(tmp_path, "print('0, partial', flush=True)\ntime.sleep(60)")
    with pytest.raises(doctor.NvidiaSmiFailedError, match="nvidia-smi did not answer within 1 s"):
        doctor.run_nvidia_smi(hang, timeout_s=1)
    failing = _script(
        tmp_path, "print('NVIDIA-SMI has failed\\nsecond', file=sys.stderr)\nsys.exit(9)"
    )
    with pytest.raises(doctor.NvidiaSmiFailedError, match=r"exit status 9: NVIDIA-SMI has failed$"):
        doctor.run_nvidia_smi(failing, timeout_s=20)
