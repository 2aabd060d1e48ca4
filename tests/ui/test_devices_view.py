"""The Devices view over the fake NVML: every scenario renders, the monitor survives a lost GPU."""

from __future__ import annotations

import ctypes.util
import threading
from pathlib import Path

import pytest
from catalog_factory import make_entry
from hardware import fake_pynvml as fakes
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from gpudesk.catalog.loader import Catalog
from gpudesk.hardware.models import DetectionResult, NvmlStatus
from gpudesk.hardware.nvml import Nvml
from gpudesk.ui.devices_view import DevicesView
from gpudesk.ui.state import AppState
from gpudesk.ui.words import plain_words
from gpudesk.ui.worker import running_threads


def _state() -> AppState:
    entries = [
        make_entry(
            "rtx-4090",
            name="NVIDIA GeForce RTX 4090",
            memory_gb=24,
            pci_device_ids=["0x2684"],
        ),
        make_entry(
            "rtx-3080-12gb",
            name="NVIDIA GeForce RTX 3080 12GB",
            memory_gb=12,
            nvml_names=["NVIDIA GeForce RTX 3080"],
        ),
        make_entry("a100-40gb-sxm4", name="NVIDIA A100 SXM4 40GB", memory_gb=40),
        make_entry("rtx-3060-12gb", name="NVIDIA GeForce RTX 3060 12GB", memory_gb=12),
    ]
    return AppState(catalog=Catalog(entries=entries))


def _view(
    qtbot: QtBot,
    fake: object | None,
    state: AppState | None = None,
    *,
    interval_ms: int = 1000,
) -> DevicesView:
    nvml = Nvml() if fake is None else Nvml(module=fake)
    view = DevicesView(
        state or _state(), nvml=nvml, autostart=False, monitor_interval_ms=interval_ms
    )
    qtbot.addWidget(view)
    view.resize(1300, 820)
    view.show()
    with qtbot.waitSignal(view.detection_finished, timeout=10_000):
        view.refresh()
    qtbot.waitUntil(lambda: not view.busy, timeout=5000)
    return view


def _texts(view: DevicesView) -> str:
    return "\n".join(label.text() for label in view.findChildren(QLabel) if label.isVisible())


@pytest.mark.parametrize("scenario", sorted(fakes.SCENARIOS))
def test_every_scenario_renders(qtbot: QtBot, scenario: str) -> None:
    view = _view(qtbot, fakes.SCENARIOS[scenario]())
    result = view.result
    assert isinstance(result, DetectionResult)
    physical_cards = [card for card in view.cards if card.gpu.kind.value == "gpu"]
    if result.usable_gpus:
        assert view.cards
        assert view.monitor.isVisible()
        assert len(view.monitor.devices) == len(physical_cards)
    else:
        assert view.cards == []
        assert view.diagnosis.isVisible()
        assert plain_words(result.hint) == view.diagnosis.hint.text()
        assert not view.monitor.isVisible()
    assert "CPU" in view.cpu_label.text()
    assert view.grab().width() > 0
    view.shutdown()


def test_detection_runs_off_the_gui_thread(qtbot: QtBot) -> None:
    fake = fakes.two_gpus()
    seen: list[int] = []
    original = fake.nvmlDeviceGetCount

    def count() -> int:
        seen.append(threading.get_ident())
        return original()

    fake.nvmlDeviceGetCount = count  # type: ignore[method-assign]
    _view(qtbot, fake)
    assert seen and threading.get_ident() not in seen


def test_two_gpus_cards_link_into_the_catalog_and_tell_the_state(qtbot: QtBot) -> None:
    state = _state()
    requested: list[str] = []
    state.entry_requested.connect(requested.append)
    view = _view(qtbot, fakes.two_gpus(), state)
    assert not view.diagnosis.isVisible()
    assert state.detected_catalog_ids == ["rtx-4090", "rtx-3080-12gb"]
    first, second = view.cards
    assert "NVIDIA GeForce RTX 4090" in first.title.text()
    assert 'href="rtx-4090"' in first.catalog_label.text()
    assert "by PCI device id" in first.catalog_label.text()
    assert "by NVML name" in second.catalog_label.text()
    assert first.values["Driver"].text() == "550.54.14"
    assert first.values["CUDA"].text() == "12.4"
    assert first.values["Compute cap."].text() == "8.9"
    assert first.values["PCIe"].text() == "gen 1 x16 (max gen 4 x16)"
    assert first.values["Power limit"].text() == "450 W"
    # memory and power axes run from 0 to the largest card's total / limit
    memory_range = view.monitor.plots["memory_used_mib"].getPlotItem().viewRange()[1]
    power_range = view.monitor.plots["power_draw_w"].getPlotItem().viewRange()[1]
    assert memory_range[0] <= 0 and 23.9 <= memory_range[1] <= 25
    assert power_range[0] <= 0 and 450 <= power_range[1] <= 470
    first.catalog_label.linkActivated.emit("rtx-4090")
    assert requested == ["rtx-4090"]
    first.compare_button.click()
    assert state.compare_ids == ["rtx-4090"]
    assert first.compare_button.text() == "In Compare ✓"  # it says what it did
    assert "Added rtx-4090" in first.compare_button.toolTip()
    assert "2 GPUs" in view.summary.text()


def test_unsupported_fields_show_na(qtbot: QtBot) -> None:
    view = _view(qtbot, fakes.unsupported_fields())
    (card,) = view.cards
    assert card.values["Fan"].text() == "n/a"
    assert card.values["ECC"].text() == "n/a"
    assert card.values["Power limit"].text() == "n/a"
    assert card.values["Power draw"].text() == "n/a"
    assert card.values["Temperature"].text() == "35 °C"
    assert "not in catalog; closest:" in card.catalog_label.text()
    assert 'href="rtx-3060-12gb"' in card.catalog_label.text()
    assert not card.compare_button.isVisible()


def test_mig_instances_get_their_own_cards(qtbot: QtBot) -> None:
    view = _view(qtbot, fakes.mig_a100())
    assert [card.gpu.kind.value for card in view.cards] == ["gpu", "mig", "mig"]
    parent, first, _ = view.cards
    assert parent.values["MIG"].text() == "on, 2 instances"
    assert first.values["SMs"].text() == "42"
    assert first.values["Parent GPU"].text() == "GPU 0"
    assert "through its parent GPU" in first.catalog_label.text()
    assert "1 GPU (2 MIG instances)" in view.summary.text()
    assert len(view.monitor.devices) == 1  # MIG instances are not sampled


@pytest.mark.parametrize(
    ("scenario", "status"),
    [
        ("driver_not_loaded", NvmlStatus.DRIVER_NOT_LOADED),
        ("version_mismatch", NvmlStatus.VERSION_MISMATCH),
        ("no_permission", NvmlStatus.NO_PERMISSION),
        ("zero_devices", NvmlStatus.NO_DEVICES),
    ],
)
def test_diagnosis_panel_names_the_cause_and_the_fix(
    qtbot: QtBot, scenario: str, status: NvmlStatus
) -> None:
    state = _state()
    state.set_detected(["stale-id"])
    view = _view(qtbot, fakes.SCENARIOS[scenario](), state)
    assert view.diagnosis.isVisible()
    from gpudesk.hardware.models import title_for

    # words, not the raw status code; no Markdown backticks in a label; said once
    assert view.diagnosis.title.text() == f"<b>{title_for(status)}</b>"
    assert "No GPU detected" not in view.diagnosis.title.text()
    assert status.value not in view.diagnosis.detail.text()
    assert "`" not in view.diagnosis.hint.text()
    assert view.diagnosis.works.isVisible()
    assert state.detected_catalog_ids == []
    assert "No GPU detected" in view.summary.text()


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="an NVIDIA driver is installed here"
)
def test_real_nvml_on_this_machine_shows_the_library_not_found_panel(qtbot: QtBot) -> None:
    view = _view(qtbot, None)
    assert view.result is not None
    assert view.result.status is NvmlStatus.LIBRARY_NOT_FOUND
    assert "Install the NVIDIA driver" in view.diagnosis.hint.text()
    # the banner's last line says what works without a GPU; the hint does not repeat it
    assert "CPU benchmark" not in view.diagnosis.hint.text()
    assert "NVML Shared Library Not Found" in view.diagnosis.detail.text()
    # Nothing to check: the health controls say so instead of repeating the banner.
    assert not view.health_button.isEnabled() and not view.health_throughput.isEnabled()
    assert "no GPU was detected" in view.health_button.toolTip()


def _wait_samples(qtbot: QtBot, view: DevicesView, count: int) -> None:
    qtbot.waitUntil(lambda: len(view.monitor.history) >= count, timeout=10_000)


def test_monitor_keeps_running_when_a_device_is_lost(qtbot: QtBot) -> None:
    fake = fakes.lost_during_monitoring(after_samples=3)
    view = _view(qtbot, fake, interval_ms=10)
    lost_uuid = fake.gpus[1].uuid
    alive_uuid = fake.gpus[0].uuid
    with qtbot.waitSignal(view.monitor.device_lost, timeout=10_000) as blocker:
        pass
    assert blocker.args == [lost_uuid]
    before = len(view.monitor.history)
    fake.gpus[0].temperature_c = 71
    _wait_samples(qtbot, view, before + 3)
    assert view.monitor.running
    assert view.monitor.history.is_lost(lost_uuid)
    assert view.monitor.latest_value(alive_uuid, "temperature_c") == 71
    assert view.monitor.latest_value(lost_uuid, "temperature_c") is None
    card = view.card_for(lost_uuid)
    assert card is not None and card.is_lost
    alive_card = view.card_for(alive_uuid)
    assert alive_card is not None and not alive_card.is_lost
    assert alive_card.values["Temperature"].text() == "71 °C"
    assert "LOST" in view.monitor.legend.text()
    view.monitor.redraw()
    assert "GPU 1: lost" in view.monitor.plots["temperature_c"].getPlotItem().titleLabel.text


def test_monitor_samples_off_the_gui_thread(qtbot: QtBot) -> None:
    fake = fakes.two_gpus()
    view = _view(qtbot, fake, interval_ms=10)
    threads: list[int] = []
    original = fake.nvmlDeviceGetPowerUsage

    def power(handle: fakes.FakeGpu) -> int:
        threads.append(threading.get_ident())
        return original(handle)

    fake.nvmlDeviceGetPowerUsage = power  # type: ignore[method-assign]
    _wait_samples(qtbot, view, len(view.monitor.history) + 2)
    assert threads and threading.get_ident() not in threads


def test_pause_and_resume(qtbot: QtBot) -> None:
    view = _view(qtbot, fakes.two_gpus(), interval_ms=10)
    _wait_samples(qtbot, view, 2)
    view.monitor.pause_button.click()
    assert view.monitor.paused and not view.monitor.running
    assert view.monitor.pause_button.text() == "Resume"
    assert view.monitor.status_label.text() == "paused"
    qtbot.waitUntil(lambda: view.monitor._worker is None, timeout=5000)
    count = len(view.monitor.history)
    qtbot.wait(100)
    assert len(view.monitor.history) == count
    view.monitor.pause_button.click()
    assert view.monitor.running and view.monitor.pause_button.text() == "Pause"
    _wait_samples(qtbot, view, count + 2)


def test_refresh_keeps_history_of_the_same_devices(qtbot: QtBot) -> None:
    view = _view(qtbot, fakes.two_gpus(), interval_ms=10)
    _wait_samples(qtbot, view, 3)
    with qtbot.waitSignal(view.detection_finished, timeout=10_000):
        view.refresh_button.click()
    assert len(view.monitor.history) >= 3
    assert len(view.cards) == 2


def test_refresh_after_the_driver_comes_back(qtbot: QtBot) -> None:
    fake = fakes.driver_not_loaded()
    view = _view(qtbot, fake)
    assert view.diagnosis.isVisible()
    fake.init_error = None
    fake.gpus = [fakes.rtx_4090()]
    with qtbot.waitSignal(view.detection_finished, timeout=10_000):
        view.refresh()
    assert not view.diagnosis.isVisible()
    assert len(view.cards) == 1
    assert view.monitor.isVisible()


def test_detection_failure_is_shown_not_raised(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> object:
        raise RuntimeError("cpu info exploded")

    monkeypatch.setattr("gpudesk.hardware.detect.read_cpu", broken)
    view = DevicesView(_state(), nvml=Nvml(module=fakes.two_gpus()), autostart=False)
    qtbot.addWidget(view)
    view.show()
    view.refresh()
    qtbot.waitUntil(lambda: not view.busy, timeout=10_000)
    assert view.diagnosis.isVisible()
    assert "cpu info exploded" in view.diagnosis.detail.text()
    assert view.refresh_button.isEnabled()


def test_shutdown_leaves_no_threads(qtbot: QtBot) -> None:
    view = _view(qtbot, fakes.two_gpus(), interval_ms=5)
    _wait_samples(qtbot, view, 3)
    view.close()
    assert not view.monitor.running
    assert running_threads() == []
    view.shutdown()  # twice is fine


def test_deleting_the_view_during_a_detection_calls_nothing_on_it(qtbot: QtBot) -> None:
    """The view torn down, not closed, with a detection running and its progress queued.

    The progress slot is a lambda holding the view: Qt cannot disconnect it, so
    without the worker's owner guard it would run on the deleted view's labels
    (RuntimeError "already deleted", which pytest-qt turns into a failure).
    """
    import shiboken6

    from gpudesk.ui.worker import live_workers

    fake = fakes.two_gpus()
    entered, release = threading.Event(), threading.Event()
    original_init = fake.nvmlInit

    def slow_init() -> None:
        entered.set()
        release.wait(10)
        original_init()

    fake.nvmlInit = slow_init  # type: ignore[method-assign]
    view = DevicesView(_state(), nvml=Nvml(module=fake), autostart=False)
    view.show()
    summary = view.summary
    detected: list[object] = []
    view.detection_finished.connect(detected.append)
    view.refresh()
    # Block the GUI thread (no event processing): "reading the CPU" stays queued.
    assert entered.wait(10)
    threading.Timer(0.05, release.set).start()
    shiboken6.delete(view)  # no closeEvent, no shutdown()
    assert not shiboken6.isValid(summary)
    assert running_threads() == []  # deleting the owner cancelled and waited
    qtbot.waitUntil(lambda: not live_workers(), timeout=5000)  # queued events delivered
    assert detected == []


def test_autostart_detects_on_construction(qtbot: QtBot) -> None:
    view = DevicesView(_state(), nvml=Nvml(module=fakes.zero_devices()))
    qtbot.addWidget(view)
    assert view.busy
    qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=10_000)
    assert view.result is not None and view.result.status is NvmlStatus.NO_DEVICES


def test_background_detection_tells_the_state_without_the_view(qtbot: QtBot) -> None:
    from gpudesk.ui.detection import detect_in_background

    state = _state()
    fake = fakes.two_gpus()
    fake.gpus[0].lost = True  # a lost GPU is not "this machine's" GPU
    with qtbot.waitSignal(state.detected_changed, timeout=10_000):
        worker = detect_in_background(state, nvml=Nvml(module=fake))
    assert worker.wait(5000)
    assert state.detected_catalog_ids == ["rtx-3080-12gb"]


def test_sysfs_gpus_get_cards_and_live_figures(qtbot: QtBot, tmp_path: Path) -> None:
    """AMD, Intel and a driverless NVIDIA card from a fake sysfs tree, with NVML missing."""
    import pynvml
    from hardware import fake_sysfs as trees

    from gpudesk.catalog.loader import load_catalog

    tree = trees.full_tree(tmp_path)
    state = AppState(catalog=load_catalog())
    view = DevicesView(
        state,
        nvml=Nvml(module=fakes.init_failure(pynvml.NVMLError_LibraryNotFound)),
        autostart=False,
        monitor_interval_ms=50,
        sysfs_root=tmp_path,
    )
    qtbot.addWidget(view)
    view.resize(1300, 820)
    view.show()
    with qtbot.waitSignal(view.detection_finished, timeout=10_000):
        view.refresh()
    titles = [card.title.text() for card in view.cards]
    assert len(titles) == 4
    assert "NVIDIA GeForce RTX 4090" in titles[0] and "driver not loaded" in titles[0]
    rtx = view.cards[0]
    assert rtx.hint_label.isVisibleTo(rtx) and "No kernel driver" in rtx.hint_label.text()
    mi300x = view.card_for(f"pci:{trees.MI300X}")
    assert mi300x is not None and "mi300x" in mi300x.catalog_label.text()
    assert "196,608 MiB" in mi300x.values["Memory"].text()
    assert "4 GPUs" in view.summary.text() and "via sysfs" in view.summary.text()
    assert view.diagnosis.isVisibleTo(view)  # an NVIDIA card is on the bus: NVML matters
    # the two amdgpu cards are monitored; the driverless NVIDIA and the Arc have no live figures
    assert [device.key for device in view.monitor.devices] == [
        f"pci:{trees.RADEON}",
        f"pci:{trees.MI300X}",
    ]
    tree.write(trees.MI300X, "gpu_busy_percent", "77")
    qtbot.waitUntil(
        lambda: view.monitor.latest_value(f"pci:{trees.MI300X}", "utilization_gpu_percent") == 77.0,
        timeout=5000,
    )
    qtbot.waitUntil(lambda: "GPU 77 %" in mi300x.values["Utilization"].text(), timeout=5000)
    view.shutdown()


def test_an_amd_only_machine_shows_no_nvidia_diagnosis(qtbot: QtBot, tmp_path: Path) -> None:
    import pynvml
    from hardware import fake_sysfs as trees

    trees.FakeSysfs(tmp_path).add(trees.mi300x())
    view = DevicesView(
        _state(),
        nvml=Nvml(module=fakes.init_failure(pynvml.NVMLError_LibraryNotFound)),
        autostart=False,
        sysfs_root=tmp_path,
    )
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.detection_finished, timeout=10_000):
        view.refresh()
    assert not view.diagnosis.isVisibleTo(view)
    assert "1 AMD GPU via sysfs" in view.summary.text()
    view.shutdown()


def test_monitor_window_grows_keeps_a_minimum_span_and_says_no_data(qtbot: QtBot) -> None:
    from gpudesk.hardware.models import DeviceSample
    from gpudesk.hardware.monitor import MonitorSample
    from gpudesk.ui.device_monitor import MIN_WINDOW_S, NO_DATA_TEXT

    view = _view(qtbot, fakes.two_gpus())
    monitor = view.monitor
    qtbot.waitUntil(lambda: len(monitor.history) > 0, timeout=10_000)
    monitor.pause()
    uuid = monitor.devices[0].key
    monitor.history.clear()
    for second in range(40):  # 40 s of a GPU at 61-62 °C that reports no fan or clock
        monitor.history.add(
            MonitorSample(
                time_s=1000.0 + second,
                devices=(DeviceSample(uuid=uuid, temperature_c=61 + second % 2),),
            )
        )
    monitor.redraw()
    x_low, x_high = monitor.plots["temperature_c"].getPlotItem().viewRange()[0]
    assert x_high == pytest.approx(0) and -41 < x_low < -MIN_WINDOW_S  # what exists, not 300 s
    y_low, y_high = monitor.plots["temperature_c"].getPlotItem().viewRange()[1]
    assert y_high - y_low >= 10  # not +-0.5 °C of noise filling the plot
    no_data = monitor._no_data["sm_clock_mhz"]
    assert no_data.isVisible() and no_data.toPlainText() == NO_DATA_TEXT
    assert not monitor._no_data["temperature_c"].isVisible()


def test_two_driverless_gpus_say_the_fix_once(qtbot: QtBot, tmp_path: Path) -> None:
    """The no-driver advice appears once: not in the summary, not again on the second card."""
    import pynvml
    from hardware import fake_sysfs as trees

    from gpudesk.catalog.loader import load_catalog
    from gpudesk.hardware.models import title_for

    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.rtx_4090())
    tree.add(trees.rtx_4090("0000:02:00.0"))
    state = AppState(catalog=load_catalog())
    view = DevicesView(
        state,
        nvml=Nvml(module=fakes.init_failure(pynvml.NVMLError_LibraryNotFound)),
        autostart=False,
        sysfs_root=tmp_path,
    )
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.detection_finished, timeout=10_000):
        view.refresh()
    title = title_for(NvmlStatus.LIBRARY_NOT_FOUND)
    assert view.diagnosis.isVisibleTo(view) and title in view.diagnosis.title.text()
    assert title not in view.summary.text()
    first, second = view.cards
    # GPUs seen in sysfs alone: the health check would only repeat the banner
    assert not view.health_button.isEnabled() and not view.health_throughput.isEnabled()
    assert "no GPU answers NVML" in view.health_button.toolTip()
    assert "no GPU answers NVML" in view.health_throughput.toolTip()
    assert "No kernel driver" in first.hint_label.text()
    assert second.hint_label.text() == "The same problem as GPU 0 above."
    assert "No kernel driver" in second.hint_label.toolTip()
    assert len(state.detected_gpus) == 2
    view.shutdown()
