"""The collection loop: scrapes never wait on a source, and a stuck source goes down."""

from __future__ import annotations

import threading

from gpudesk.telemetry.collector import Collector
from gpudesk.telemetry.readings import DeviceIdentity, DeviceReading, Source, Vendor

IDENTITY = DeviceIdentity(key="GPU-1", vendor=Vendor.NVIDIA, source=Source.NVML, uuid="GPU-1")


class Stuck:
    """A source whose second read blocks until released (an NVML call stuck in the driver)."""

    detail: str | None = None

    def __init__(self) -> None:
        self.reads = 0
        self.release = threading.Event()

    def read(self) -> list[DeviceReading]:
        self.reads += 1
        if self.reads > 1:
            self.release.wait(10)
        return [DeviceReading(identity=IDENTITY, up=True, power_watts=70.0)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_collection_past_its_deadline_serves_its_devices_as_down() -> None:
    source, clock = Stuck(), Clock()
    collector = Collector([("nvml", source, True)], deadline_s=5.0, clock=clock, hostname="h")
    collector.collect(0)
    assert collector.snapshot().devices[0].power_watts == 70.0
    worker = threading.Thread(target=collector.collect, args=(0,))
    worker.start()
    try:
        while source.reads < 2:
            threading.Event().wait(0.01)
        clock.now = 4.0  # within the deadline: the last collection is served as it was
        assert collector.snapshot().devices[0].up
        clock.now = 6.0  # past it: down, no readings, one overrun however often scraped
        for _ in range(3):
            snapshot = collector.snapshot()
        device = snapshot.devices[0]
        assert not device.up and device.power_watts is None
        assert device.note == "no answer within 5 s"
        assert snapshot.sources[0].overruns_total == 1
    finally:
        source.release.set()
        worker.join(5)
    assert collector.snapshot().devices[0].up


def test_the_background_loop_collects_and_stops() -> None:
    source = Stuck()
    source.release.set()
    collector = Collector([("nvml", source, True)], interval_s=0.1, hostname="h")
    collector.start()
    try:
        assert collector.wait_first(5.0)
    finally:
        collector.stop()
    assert source.reads >= 1
    assert collector.snapshot().sources[0].collections_total >= 1


def test_an_unavailable_source_is_reported_and_never_read() -> None:
    source = Stuck()
    source.detail = "NVML: library not found"
    collector = Collector([("nvml", source, False)], hostname="h")
    collector.start()
    collector.stop()
    snapshot = collector.snapshot()
    assert source.reads == 0 and snapshot.devices == ()
    assert not snapshot.sources[0].available
    assert snapshot.sources[0].detail == "NVML: library not found"
