"""Checking backends off the GUI thread, and which one ``auto`` picks."""

from __future__ import annotations

from bench_fakes import FakeBackend, FakeConfig

from gpudesk.bench.availability import (
    BackendInfo,
    auto_choice,
    check_backends,
    gpus_without_backend,
)
from gpudesk.bench.backends.base import BackendStatus
from gpudesk.bench.devices import DeviceInfo
from gpudesk.hardware.models import DeviceKind, GpuSnapshot
from gpudesk.progress import NullProgress


def _named(name: str, **config: object) -> FakeBackend:
    backend = FakeBackend(FakeConfig(**config))  # type: ignore[arg-type]
    backend.name = name
    return backend


class _BrokenDevices(FakeBackend):
    def devices(self) -> list:  # type: ignore[type-arg]
        raise RuntimeError("driver went away")


def test_check_lists_devices_and_capabilities_of_available_backends() -> None:
    infos = check_backends([_named("numpy", kind="cpu"), _named("torch")], NullProgress())
    assert [info.backend.name for info in infos] == ["numpy", "torch"]
    assert all(info.usable for info in infos)
    assert infos[1].capabilities[0].kind == "cuda"


def test_a_broken_driver_disables_only_that_backend() -> None:
    broken = _BrokenDevices()
    broken.name = "torch"
    infos = check_backends([broken, _named("numpy", kind="cpu")], NullProgress())
    assert infos[0].error == "RuntimeError: driver went away" and not infos[0].usable
    assert infos[1].usable


def test_auto_prefers_a_gpu_backend_in_auto_order() -> None:
    infos = check_backends(
        [_named("numpy", kind="cpu"), _named("cupy"), _named("torch")], NullProgress()
    )
    chosen = auto_choice(infos)
    assert chosen is not None and chosen.backend.name == "torch"


def test_auto_skips_unusable_backends_and_may_find_none() -> None:
    infos = check_backends(
        [_named("torch", available=False), _named("numpy", kind="cpu")], NullProgress()
    )
    chosen = auto_choice(infos)
    assert chosen is not None and chosen.backend.name == "numpy"
    assert auto_choice([info for info in infos if info.backend.name == "torch"]) is None


def test_unknown_backends_come_after_the_known_order() -> None:
    infos: list[BackendInfo] = check_backends([_named("other"), _named("cupy")], NullProgress())
    chosen = auto_choice(infos)
    assert chosen is not None and chosen.backend.name == "cupy"


def _gpu(index: int, vendor: str, bus: str | None = None, **fields: object) -> GpuSnapshot:
    return GpuSnapshot(
        index=index, name=f"{vendor} card {index}", vendor=vendor, pci_bus_id=bus, **fields
    )  # type: ignore[arg-type]


def _info(name: str, available: bool, devices: list[DeviceInfo], reason: str = "") -> BackendInfo:
    backend = _named(name)
    status = BackendStatus(name=name, available=available, reason=reason)
    return BackendInfo(backend, status, devices)


def test_gpus_no_backend_can_run_are_named_with_the_reason() -> None:
    numpy_info = _info("numpy", True, [DeviceInfo(kind="cpu", name="CPU")])
    torch_missing = _info("torch", False, [], "PyTorch is not importable")
    cupy_missing = _info("cupy", False, [], "CuPy is not importable")
    gpus = [
        _gpu(0, "NVIDIA", "00000000:01:00.0"),
        _gpu(1, "NVIDIA", "00000000:02:00.0", driver_loaded=False),
        _gpu(2, "Intel", "0000:03:00.0"),
    ]
    missing = gpus_without_backend(gpus, [numpy_info, torch_missing, cupy_missing])
    assert [item.gpu.index for item in missing] == [0, 1, 2]
    assert missing[0].short_reason == "needs PyTorch or CuPy"
    assert "torch: PyTorch is not importable" in missing[0].reason
    assert "cupy: CuPy is not importable" in missing[0].reason
    assert missing[1].short_reason == "no kernel driver loaded; needs PyTorch or CuPy"
    assert missing[2].short_reason == "no benchmark backend for Intel GPUs"


def test_a_gpu_a_backend_lists_is_not_named() -> None:
    # PyTorch's "0000:01:00.0" is NVML's "00000000:01:00.0"; a device without ids counts by vendor
    torch_info = _info(
        "torch",
        True,
        [
            DeviceInfo(kind="cuda", index=0, name="A", vendor="NVIDIA", pci_bus_id="0000:01:00.0"),
            DeviceInfo(kind="rocm", index=1, name="B", vendor="AMD"),
        ],
    )
    gpus = [
        _gpu(0, "NVIDIA", "00000000:01:00.0"),
        _gpu(1, "NVIDIA", "00000000:02:00.0"),
        _gpu(2, "AMD"),
        _gpu(3, "AMD"),
        GpuSnapshot(index=0, name="mig", vendor="NVIDIA", kind=DeviceKind.MIG),
    ]
    missing = gpus_without_backend(gpus, [torch_info])
    assert [item.gpu.index for item in missing] == [1, 3]
    assert missing[0].short_reason == "not seen by PyTorch or CuPy"


def test_a_gpu_in_another_pci_domain_is_not_taken_for_the_listed_one() -> None:
    # Same bus:device.function, different domain: two cards (multi-socket and VM hosts).
    listed = DeviceInfo(kind="cuda", index=0, name="A", vendor="NVIDIA", pci_bus_id="0000:01:00.0")
    torch_info = _info("torch", True, [listed])
    gpus = [_gpu(0, "NVIDIA", "00000000:01:00.0"), _gpu(1, "NVIDIA", "00000001:01:00.0")]
    missing = gpus_without_backend(gpus, [torch_info])
    assert [item.gpu.index for item in missing] == [1]
