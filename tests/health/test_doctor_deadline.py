"""Issue 39: the doctor's detection runs under a deadline; a stuck NVML call is a finding.

In-process, with the Python stand-in for the binding: its
``nvmlDeviceGetCount`` waits on an event, as a call stuck in the driver of a
GPU that fell off the bus would. (The real binding over the fake library,
end to end, is tests/cli/test_cli_doctor_stuck.py.)
"""

from __future__ import annotations

import threading
import time

import pytest
from hardware import fake_pynvml as fakes

from gpudesk.hardware.detect import detect
from gpudesk.hardware.models import DetectionResult
from gpudesk.hardware.nvml import Nvml
from gpudesk.health import doctor
from gpudesk.progress import Progress


class StuckPynvml(fakes.FakePynvml):
    """Two GPUs, but counting them never returns until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__(fakes.two_gpus().gpus)
        self.release = threading.Event()
        self.entered = threading.Event()

    def nvmlDeviceGetCount(self) -> int:
        self.entered.set()
        self.release.wait(600)
        return super().nvmlDeviceGetCount()


def test_a_stuck_nvml_call_is_a_finding_at_the_deadline() -> None:
    fake = StuckPynvml()
    nvml = Nvml(module=fake)
    started = time.monotonic()
    try:
        with pytest.raises(doctor.DetectionTimeoutError) as caught:
            doctor.detect_within(lambda progress: detect(nvml, progress), timeout_s=0.5)
        assert time.monotonic() - started < 8
        finding = caught.value.finding
        assert (finding.check, finding.severity) == ("nvml", "error")
        assert finding.message.startswith(
            "NVML did not answer within 0.5 s (while reading the CPU)"
        )
        # The abandoned call holds NVML's lock: a shutdown with a deadline gives up.
        began = time.monotonic()
        nvml.shutdown(wait_s=0.2)
        assert time.monotonic() - began < 5 and nvml.initialised
    finally:
        fake.release.set()
    for worker in threading.enumerate():
        if worker.name == "deadline: GPU detection":
            worker.join(10)
    nvml.shutdown()
    assert not nvml.initialised


def test_a_stuck_stage_after_nvml_is_named_as_detection() -> None:
    release = threading.Event()

    def detector(progress: Progress) -> DetectionResult:
        progress.report(0.9, "reading the PCI bus")
        release.wait(600)
        raise AssertionError("abandoned, never answers")

    try:
        with pytest.raises(doctor.DetectionTimeoutError) as caught:
            doctor.detect_within(detector, timeout_s=0.3)
    finally:
        release.set()
    assert caught.value.finding.check == "detection"
    assert caught.value.finding.message == (
        "GPU detection did not answer within 0.3 s (after reading the PCI bus)"
    )


def test_a_detection_in_time_is_returned_and_its_errors_pass_through() -> None:
    nvml = Nvml(module=fakes.two_gpus())
    result = doctor.detect_within(lambda progress: detect(nvml, progress), timeout_s=60)
    assert len(result.gpus) >= 2
    nvml.shutdown()

    def broken(progress: Progress) -> DetectionResult:
        raise OSError("sysfs went away")

    with pytest.raises(OSError, match="sysfs went away"):
        doctor.detect_within(broken, timeout_s=60)
