"""A fake benchmark backend whose timings are computed, not measured.

Each call of a GEMM of size n "takes" 2n³ / rate(n) seconds with
rate(n) = peak · n / (n + 512) (small sizes underuse the device, as on a real
GPU); a copy moves bytes at ``bandwidth_gbs``. Nothing sleeps unless
``real_time=True``, so figures are exact and tests are fast.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import JsonValue

from gpudesk.bench.backends.base import (
    BackendError,
    BackendStatus,
    DeviceInfo,
    OutOfMemory,
    TimerName,
    Workload,
)
from gpudesk.bench.plan import Capabilities, TestName
from gpudesk.bench.results import Telemetry
from gpudesk.bench.telemetry import NoTelemetry, TelemetrySource
from gpudesk.catalog.schema import CatalogEntry


def gemm_rate_flops(peak_tflops: float, n: int) -> float:
    return peak_tflops * 1e12 * n / (n + 512)


@dataclass
class FakeConfig:
    kind: Literal["cpu", "cuda"] = "cuda"
    device_name: str = "Fake GPU"
    peak_tflops: dict[str, float] = field(
        default_factory=lambda: {
            "fp64": 10.0,
            "fp32": 20.0,
            "tf32": 80.0,
            "fp16": 160.0,
            "bf16": 160.0,
        }
    )
    bandwidth_gbs: float = 1000.0
    transfer_gbs: dict[str, float] = field(
        default_factory=lambda: {"pageable": 10.0, "pinned": 25.0}
    )
    free_bytes: int | None = 64 * 2**30
    #: GEMM sizes above this raise OutOfMemory when allocated.
    oom_gemm_above: int | None = None
    #: Copy/transfer sizes above this raise OutOfMemory when allocated.
    oom_bytes_above: int | None = None
    #: (test, dtype) pairs whose workload raises RuntimeError when made.
    failing: set[tuple[str, str]] = field(default_factory=set)
    sliceable: bool = False
    #: Sleep for the computed time (in slices, checking cancel if sliceable).
    real_time: bool = False
    available: bool = True
    open_error: str | None = None
    environment_error: bool = False
    gemm_dtypes: tuple[str, ...] = ("fp64", "fp32", "tf32", "fp16", "bf16")
    tests: tuple[TestName, ...] = ("gemm", "copy", "h2d", "d2h", "sweep")
    last_level_cache_bytes: int | None = 50 * 2**20


class FakeWorkload:
    def __init__(self, session: FakeSession, work: float, seconds_per_call: float) -> None:
        self.session = session
        self.work = work
        self.seconds_per_call = seconds_per_call
        self.sliceable = session.config.sliceable
        self.calls = 0
        self.released = False
        session.live += 1

    def run(self, iterations: int, check: Callable[[], None]) -> float:
        if self.released:
            raise RuntimeError("run after release")
        self.session.run_calls += 1
        self.calls += iterations
        total = iterations * self.seconds_per_call
        if self.session.config.real_time:
            deadline = time.monotonic() + total
            while (left := deadline - time.monotonic()) > 0:
                time.sleep(min(left, 0.01))
                if self.sliceable:
                    check()
        return total

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.session.live -= 1


class FakeSession:
    timer: TimerName = "perf_counter"

    def __init__(self, config: FakeConfig, index: int) -> None:
        self.config = config
        self.device = DeviceInfo(
            kind=config.kind,
            index=index,
            name=config.device_name,
            memory_total_bytes=80 * 2**30,
            last_level_cache_bytes=config.last_level_cache_bytes,
        )
        self.live = 0
        self.run_calls = 0
        self.made: list[tuple[str, str, int]] = []
        self.closed = False

    def free_memory_bytes(self) -> int | None:
        return self.config.free_bytes

    def environment(self) -> dict[str, JsonValue]:
        if self.config.environment_error:
            raise RuntimeError("environment exploded")
        return {"fake": True, "fp32_gemm_uses_tf32": False}

    def _made(self, test: str, dtype: str, size: int) -> None:
        self.made.append((test, dtype, size))
        if (test, dtype) in self.config.failing:
            raise RuntimeError(f"{test} {dtype} broke")

    def gemm(self, dtype: str, n: int) -> Workload:
        self._made("gemm", dtype, n)
        if self.config.oom_gemm_above is not None and n > self.config.oom_gemm_above:
            raise OutOfMemory(f"fake: n={n} does not fit")
        rate = gemm_rate_flops(self.config.peak_tflops[dtype], n)
        return FakeWorkload(self, 2.0 * n**3, 2.0 * n**3 / rate)

    def _bytes_check(self, nbytes: int) -> None:
        if self.config.oom_bytes_above is not None and nbytes > self.config.oom_bytes_above:
            raise OutOfMemory(f"fake: {nbytes} bytes do not fit")

    def copy(self, nbytes: int) -> Workload:
        self._made("copy", "bytes", nbytes)
        self._bytes_check(nbytes)
        moved = 2.0 * nbytes
        return FakeWorkload(self, moved, moved / (self.config.bandwidth_gbs * 1e9))

    def transfer(self, direction: Literal["h2d", "d2h"], pinned: bool, nbytes: int) -> Workload:
        self._made(direction, "pinned" if pinned else "pageable", nbytes)
        self._bytes_check(nbytes)
        rate = self.config.transfer_gbs["pinned" if pinned else "pageable"]
        return FakeWorkload(self, float(nbytes), nbytes / (rate * 1e9))

    def close(self) -> None:
        self.closed = True


class FakeBackend:
    name = "fake"

    def __init__(self, config: FakeConfig | None = None) -> None:
        self.config = config or FakeConfig()
        self.sessions: list[FakeSession] = []

    def status(self) -> BackendStatus:
        if not self.config.available:
            return BackendStatus(name=self.name, available=False, reason="fake says no")
        return BackendStatus(name=self.name, available=True, version="1.0")

    def devices(self) -> list[DeviceInfo]:
        return [FakeSession(self.config, 0).device]

    def capabilities(self, device_index: int) -> Capabilities:
        return Capabilities(
            kind=self.config.kind,
            tests=self.config.tests,
            gemm_dtypes=self.config.gemm_dtypes,
            last_level_cache_bytes=self.config.last_level_cache_bytes,
        )

    def open(self, device_index: int) -> FakeSession:
        if self.config.open_error is not None:
            raise BackendError(self.config.open_error)
        session = FakeSession(self.config, device_index)
        self.sessions.append(session)
        return session


class FixedProbe:
    """A probe that matches every device to one catalog id, without NVML."""

    def __init__(self, catalog_id: str | None, telemetry: TelemetrySource | None = None) -> None:
        self.catalog_id = catalog_id
        self.telemetry = telemetry or NoTelemetry("fake probe")

    def describe(
        self, device: DeviceInfo, entries: Sequence[CatalogEntry]
    ) -> tuple[str | None, dict[str, JsonValue], TelemetrySource]:
        return self.catalog_id, {"probe": "fixed"}, self.telemetry


class CountingTelemetry:
    """Records start/stop; returns an empty available telemetry."""

    def __init__(self) -> None:
        self.started = False
        self.stopped = False

    def start(self) -> None:
        self.started = True

    def stop(self) -> Telemetry:
        self.stopped = True
        return Telemetry(available=True)


class CancelAfter:
    """A Progress that cancels itself after ``checks`` calls to check()."""

    def __init__(self, checks: int) -> None:
        self.remaining = checks
        self.cancelled = threading.Event()
        self.reports: list[tuple[float, str]] = []

    def report(self, fraction: float, message: str) -> None:
        self.reports.append((fraction, message))

    def is_cancelled(self) -> bool:
        return self.cancelled.is_set()

    def check(self) -> None:
        from gpudesk.progress import Cancelled

        self.remaining -= 1
        if self.remaining <= 0:
            self.cancelled.set()
        if self.cancelled.is_set():
            raise Cancelled()


def catalog_entry(**overrides: object) -> CatalogEntry:
    """A valid catalog entry for peak tests (figures of an imaginary GPU)."""
    data: dict[str, object] = {
        "id": "fake-gpu",
        "name": "Fake GPU",
        "vendor": "NVIDIA",
        "segment": "datacenter",
        "architecture": "Test",
        "release_year": 2024,
        "memory_gb": 80,
        "memory_type": "HBM3",
        "bandwidth_gbs": 2000.0,
        "fp32_tflops": 40.0,
        "fp64_tflops": 20.0,
        "tf32_tensor_tflops": 100.0,
        "bf16_tensor_tflops": 200.0,
        "fp16_tensor_tflops": 200.0,
        "interface": "PCIe 5.0 x16",
        "sources": ("https://example.com/datasheet",),
    }
    data.update(overrides)
    return CatalogEntry.model_validate(data)
