"""The GUI's sampler reads through the telemetry sources: every vendor, same fields."""

from __future__ import annotations

from pathlib import Path

from hardware import fake_pynvml as fakes, fake_sysfs
from hardware.fake_sysfs import FakeSysfs

from gpudesk.hardware.detect import detect
from gpudesk.hardware.nvml import Nvml
from gpudesk.telemetry.live import LiveSampler
from gpudesk.telemetry.readings import Vendor


def test_every_vendor_is_read_and_the_charted_ones_are_sampled(tmp_path: Path) -> None:
    tree = FakeSysfs(tmp_path / "sys")
    tree.add(fake_sysfs.mi300x())
    tree.add(fake_sysfs.arc_b580())
    nvml = Nvml(module=fakes.FakePynvml([fakes.rtx_4090()]))
    result = detect(nvml, sysfs_root=tree.root)
    sampler = LiveSampler(nvml, result.gpus, sysfs_root=tree.root)
    sample, readings = sampler.sample()
    assert [reading.identity.vendor for reading in readings] == [
        Vendor.NVIDIA,
        Vendor.INTEL,
        Vendor.AMD,
    ]
    # Detection's indices and names, whatever order the sources found them in.
    detected = {gpu.key: gpu for gpu in result.gpus}
    for reading in readings:
        assert reading.identity.index == detected[reading.identity.key].index
        assert reading.up
    intel = readings[1]
    assert intel.memory_total_bytes == 12 * 1024**3 and intel.utilization_ratio is None
    # The charts sample the GPUs with live figures (the Arc has none there), in their units.
    assert [device.uuid for device in sample.devices] == [
        "GPU-4090aaaa-0000-0000-0000-000000000000",
        f"pci:{fake_sysfs.MI300X}",
    ]
    amd = sample.devices[1]
    assert amd.utilization_gpu_percent == 37
    assert amd.memory_used_mib == 3 * 1024
    assert amd.temperature_c == 41
    assert amd.sm_clock_mhz == 1800


def test_a_lost_gpu_is_a_lost_sample() -> None:
    fake = fakes.lost_during_monitoring(after_samples=1)
    nvml = Nvml(module=fake)
    sampler = LiveSampler(nvml, detect(nvml).gpus)
    for _ in range(3):
        sample, readings = sampler.sample()
    assert [device.lost for device in sample.devices] == [False, True]
    assert [reading.up for reading in readings] == [True, False]
