"""Telemetry: the sampler thread, and NVML context without a driver."""

from __future__ import annotations

import itertools
import threading
from typing import Any

from bench_fakes import catalog_entry

from gpudesk.bench.devices import DeviceInfo
from gpudesk.bench.telemetry import (
    NoTelemetry,
    SampledTelemetry,
    SystemProbe,
    describe_cuda_device,
)


def test_sampler_collects_until_stopped_and_joins() -> None:
    readings = itertools.count()
    got_three = threading.Event()

    def read() -> dict[str, Any] | None:
        index = next(readings)
        if index >= 2:
            got_three.set()
        return {
            "sm_clock_mhz": 1800 + index,
            "power_w": 300.0,
            "temperature_c": 60.0,
            "clock_event_reasons": ("sw_power_cap",) if index == 1 else (),
        }

    sampler = SampledTelemetry(read, interval_s=0.001)
    sampler.start()
    assert got_three.wait(5)
    telemetry = sampler.stop()
    assert telemetry.available
    assert len(telemetry.samples) >= 3
    assert telemetry.samples[0].sm_clock_mhz == 1800
    assert telemetry.throttle_reasons() == ["sw_power_cap"]
    summary = telemetry.summary()
    assert summary["sm_clock_mhz_min"] == 1800
    assert summary["power_w_max"] == 300.0


def test_sampler_stops_when_the_device_stops_answering() -> None:
    sampler = SampledTelemetry(lambda: None, interval_s=0.001)
    sampler.start()
    telemetry = sampler.stop()
    assert telemetry.samples == ()
    assert telemetry.reason in ("", "sampling stopped: the device stopped answering")


def test_no_telemetry_says_why() -> None:
    telemetry = NoTelemetry("no driver")
    telemetry.start()
    assert telemetry.stop().model_dump() == {
        "available": False,
        "reason": "no driver",
        "samples": (),
    }


def test_cpu_probe_has_no_catalog_match() -> None:
    device = DeviceInfo(kind="cpu", name="Some CPU")
    catalog_id, env, telemetry = SystemProbe().describe(device, [])
    assert catalog_id is None
    assert env == {}
    assert not telemetry.stop().available


class _NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


class _NoDriver:
    NVMLError = _NVMLError

    def nvmlInit(self) -> None:
        raise _NVMLError(12)  # library not found


def test_cuda_device_without_nvml_still_matches_by_name() -> None:
    from gpudesk.hardware.nvml import Nvml

    entry = catalog_entry(nvml_names=("NVIDIA Fake GPU",))
    device = DeviceInfo(kind="cuda", name="NVIDIA Fake GPU", memory_total_bytes=80 * 2**30)
    catalog_id, env, telemetry = describe_cuda_device(device, [entry], nvml=Nvml(_NoDriver()))
    assert catalog_id == "fake-gpu"
    assert str(env["nvml"]).startswith("unavailable")
    result = telemetry.stop()
    assert not result.available
    assert result.reason.startswith("unavailable")
