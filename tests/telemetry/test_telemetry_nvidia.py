"""NVML's source over the fake binding: a driver that loads after the start is picked up."""

from __future__ import annotations

import pynvml
from hardware import fake_pynvml as fakes

from gpudesk.hardware.nvml import Nvml
from gpudesk.telemetry.collector import Collector
from gpudesk.telemetry.nvidia import REDISCOVER_S, NvidiaSource, mig_profile


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_nvml_that_was_not_loaded_is_tried_again_and_its_gpus_appear() -> None:
    fake = fakes.FakePynvml([fakes.rtx_4090()], init_error=pynvml.NVMLError_DriverNotLoaded)
    clock = Clock()
    source = NvidiaSource(Nvml(module=fake), clock=clock)
    assert not source.discover()
    assert source.detail is not None and "Driver Not Loaded" in source.detail
    collector = Collector([("nvml", source, False)], hostname="h")
    fake.init_error = None  # the driver is loaded now (modprobe after the exporter started)
    collector.collect(0)
    assert collector.snapshot().devices == ()  # not tried again before REDISCOVER_S
    assert fake.calls["nvmlInit"] == 1
    clock.now += REDISCOVER_S
    collector.collect(0)
    snapshot = collector.snapshot()
    assert [reading.identity.name for reading in snapshot.devices] == ["NVIDIA GeForce RTX 4090"]
    assert snapshot.devices[0].up and snapshot.devices[0].power_watts is not None
    assert snapshot.sources[0].available and snapshot.sources[0].detail is None


def test_mig_profiles_from_names() -> None:
    assert mig_profile("NVIDIA A100-SXM4-40GB MIG 3g.20gb") == "3g.20gb"
    assert mig_profile("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me") == "1g.10gb+me"
    assert mig_profile("NVIDIA H100 80GB HBM3") is None
    assert mig_profile(None) is None
