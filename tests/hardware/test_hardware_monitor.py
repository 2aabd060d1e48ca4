"""Live sampling and the 5-minute history."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from hardware import fake_pynvml as fakes

from gpudesk.hardware.detect import detect
from gpudesk.hardware.models import DeviceSample
from gpudesk.hardware.monitor import (
    MONITOR_METRICS,
    Monitor,
    MonitorHistory,
    MonitorSample,
)
from gpudesk.hardware.nvml import Nvml


def _monitor(fake: fakes.FakePynvml) -> Monitor:
    nvml = Nvml(module=fake)
    ticks = itertools.count(1000)
    return Monitor(nvml, detect(nvml).gpus, clock=lambda: float(next(ticks)))


def test_one_sample_per_device() -> None:
    fake = fakes.two_gpus()
    fake.gpus[1].utilization_gpu = 97
    sample = _monitor(fake).sample()
    assert sample.time_s == 1000.0
    first, second = sample.devices
    assert (first.index, first.utilization_gpu_percent, first.memory_used_mib) == (0, 3, 1234)
    assert (first.temperature_c, first.power_draw_w, first.sm_clock_mhz) == (35, 25.5, 210)
    assert second.utilization_gpu_percent == 97
    assert not first.lost and not second.lost


def test_a_lost_gpu_is_marked_lost_and_the_others_keep_going() -> None:
    fake = fakes.lost_during_monitoring(after_samples=2)
    monitor = _monitor(fake)  # detection read utilization once already
    samples = [monitor.sample() for _ in range(4)]
    assert [s.devices[1].lost for s in samples] == [False, True, True, True]
    assert all(not s.devices[0].lost and s.devices[0].temperature_c == 35 for s in samples)
    assert monitor.is_lost(fake.gpus[1].uuid)
    # a lost device is not asked again
    reads = fake.gpus[1].samples_taken
    monitor.sample()
    assert fake.gpus[1].samples_taken == reads


def test_mig_instances_and_lost_gpus_are_not_sampled() -> None:
    monitor = _monitor(fakes.mig_a100())
    assert len(monitor.devices) == 1
    assert len(monitor.sample().devices) == 1


def test_unsupported_fields_sample_as_none() -> None:
    sample = _monitor(fakes.unsupported_fields()).sample()
    assert sample.devices[0].power_draw_w is None
    assert sample.devices[0].temperature_c == 35


def test_device_gone_from_the_bus_between_detection_and_sampling() -> None:
    fake = fakes.two_gpus()
    nvml = Nvml(module=fake)
    monitor = Monitor(nvml, detect(nvml).gpus)
    fake.gpus.pop(0)  # hot-unplugged: its UUID is no longer found
    sample = monitor.sample()
    assert [device.lost for device in sample.devices] == [True, False]


def _sample(time_s: float, *devices: DeviceSample) -> MonitorSample:
    return MonitorSample(time_s=time_s, devices=devices)


def test_history_keeps_the_last_capacity_samples() -> None:
    history = MonitorHistory(capacity=3)
    for second in range(5):
        history.add(_sample(second, DeviceSample(uuid="a", utilization_gpu_percent=second * 10)))
    assert history.times() == [2.0, 3.0, 4.0]
    assert history.values("a", "utilization_gpu_percent") == [20.0, 30.0, 40.0]
    assert history.latest("a", "utilization_gpu_percent") == 40.0
    assert len(history) == 3


def test_history_na_is_nan_and_series_stay_aligned() -> None:
    history = MonitorHistory(capacity=10)
    history.add(_sample(0, DeviceSample(uuid="a", temperature_c=40)))
    history.add(
        _sample(1, DeviceSample(uuid="a", temperature_c=None), DeviceSample(uuid="b", lost=True))
    )
    history.add(_sample(2, DeviceSample(uuid="b", temperature_c=50)))
    a = history.values("a", "temperature_c")
    b = history.values("b", "temperature_c")
    assert len(a) == len(b) == 3
    assert a[0] == 40.0 and math.isnan(a[1]) and math.isnan(a[2])
    assert math.isnan(b[0]) and math.isnan(b[1]) and b[2] == 50.0
    assert history.is_lost("b") and not history.is_lost("a")
    assert history.latest("a", "temperature_c") is None
    assert history.uuids == ["a", "b"]
    assert all(len(history.values("a", metric.key)) == 3 for metric in MONITOR_METRICS)
    history.clear()
    assert len(history) == 0 and history.uuids == []


def test_history_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError, match="capacity"):
        MonitorHistory(capacity=0)


def test_sysfs_gpus_are_sampled_next_to_nvml_ones(tmp_path: Path) -> None:
    from hardware import fake_sysfs as trees

    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.mi300x())
    tree.add(trees.rtx_4090(driver=None, address="0000:02:00.0"))  # no driver: no figures
    nvml = Nvml(module=fakes.two_gpus())
    result = detect(nvml, sysfs_root=tmp_path)
    monitor = Monitor(nvml, result.gpus, sysfs_root=tmp_path)
    assert [device.source.value for device in monitor.devices] == ["nvml", "nvml", "sysfs"]
    tree.write(trees.MI300X, "gpu_busy_percent", "64")
    sample = monitor.sample()
    amd = sample.devices[2]
    assert amd.uuid == f"pci:{trees.MI300X}"
    assert (amd.utilization_gpu_percent, amd.temperature_c, amd.power_draw_w) == (64, 41, 152.3)
    (tmp_path / "bus" / "pci" / "devices" / trees.MI300X).unlink()
    assert monitor.sample().devices[2].lost
    assert monitor.is_lost(f"pci:{trees.MI300X}")
