"""This machine → Devices → "Check health": the doctor's findings in the GUI."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_nvidia_smi import write_fake_nvidia_smi
from hardware import fake_pynvml as fakes
from health_snapshots import SNAPSHOTS, detection_of, fleet_findings, judged
from pytestqt.qtbot import QtBot
from ui.test_devices_view import _state, _view

from gpudesk.health import doctor
from gpudesk.health.doctor import DoctorReport
from gpudesk.ui.devices_view import DevicesView
from gpudesk.ui.health_panel import HealthPanel

#: What nvidia-smi prints for fake_pynvml's two GPUs.
RTX_4090 = (
    "0, NVIDIA GeForce RTX 4090, GPU-4090aaaa-0000-0000-0000-000000000000, 00000000:01:00.0, "
    "0x268410DE, 24564, 550.54.14, 450.00, 3120, 10501, [N/A]"
)
RTX_3080 = (
    "1, NVIDIA GeForce RTX 3080, GPU-3080bbbb-0000-0000-0000-000000000000, 00000000:41:00.0, "
    "0x220A10DE, 12288, 550.54.14, 350.00, 2100, 9751, [N/A]"
)


def _check(qtbot: QtBot, view: DevicesView) -> str:
    view.check_health()
    assert view.checking_health  # the check runs on a worker, the window stays live
    qtbot.waitUntil(lambda: not view.checking_health, timeout=20_000)
    return view.health.text()


@pytest.fixture
def smi_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    monkeypatch.setenv("PATH", str(folder))
    return folder


def test_check_health_shows_agreement_and_findings(qtbot: QtBot, smi_on_path: Path) -> None:
    write_fake_nvidia_smi(smi_on_path, rows=(RTX_4090, RTX_3080))
    view = _view(qtbot, fakes.two_gpus())
    assert view.health.isHidden()
    text = _check(qtbot, view)
    assert view.health.isVisible()
    assert isinstance(view.health.report, DoctorReport) and view.health.report.ok
    assert "Passed, with 2 warnings" in text  # the 3080's software power cap and thermal slowdown
    assert "GPU 0: NVIDIA GeForce RTX 4090 — nvidia-smi agrees on 11 of 11 fields" in text
    # the idle 4090's gen-1 link is a note; the 3080's power cap a warning
    assert "Note pcie_link: PCIe gen 1 of 4 while idle" in text
    assert "Warning throttle: clocks are held down now: sw power cap" in text
    assert view.health_button.isEnabled()


def test_a_disagreement_is_named(qtbot: QtBot, smi_on_path: Path) -> None:
    write_fake_nvidia_smi(smi_on_path, rows=(RTX_4090.replace("24564", "24576"), RTX_3080))
    view = _view(qtbot, fakes.two_gpus())
    text = _check(qtbot, view)
    assert "Problems found" in text
    assert "Disagrees memory.total: GPUDesk 24564, nvidia-smi 24576" in text


def test_without_nvidia_smi_the_panel_says_so(qtbot: QtBot, smi_on_path: Path) -> None:
    view = _view(qtbot, fakes.two_gpus())
    text = _check(qtbot, view)
    assert "nvidia-smi not found" in text and "gpudesk doctor --nvidia-smi" in text


def test_without_an_nvidia_gpu_the_panel_says_so(qtbot: QtBot, smi_on_path: Path) -> None:
    write_fake_nvidia_smi(smi_on_path, rows=())
    view = _view(qtbot, fakes.driver_not_loaded(), _state())
    text = _check(qtbot, view)
    assert "No NVIDIA GPU to check" in text and "driver is not loaded" in text


def test_closing_during_a_check_leaves_no_threads(qtbot: QtBot, smi_on_path: Path) -> None:
    write_fake_nvidia_smi(smi_on_path, rows=(RTX_4090, RTX_3080))
    view = _view(qtbot, fakes.two_gpus())
    view.check_health()
    view.shutdown()
    assert not view.checking_health


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_check_health_shows_the_findings_doctor_and_the_fleet_give(qtbot: QtBot, name: str) -> None:
    gpu = SNAPSHOTS[name]
    report = doctor.examine(detection_of(gpu), None, None, {0: "h100-sxm5"})
    panel = HealthPanel()
    qtbot.addWidget(panel)
    panel.show_report(report)
    text = panel.text()
    fleet, _ = fleet_findings(gpu)
    words = {"info": "Note", "warning": "Warning", "error": "Error"}
    assert judged(report.gpus[0].findings) == judged(fleet)
    for _rule, severity, message in judged(fleet):
        assert f"{words[severity]} " in text and message in text
    shown = sum(text.count(f"{word} ") for word in words.values())
    assert shown == len(fleet) or (not fleet and "Nothing to report." in text)
    problems = [f for f in fleet if f.severity != "info"]
    if not report.ok:
        assert "Problems found" in text
    elif problems:
        assert f"Passed, with {len(problems)} warning" in text
    else:
        assert "All checks passed" in text
