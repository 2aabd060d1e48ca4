"""Checking backends off the GUI thread, and which one ``auto`` picks."""

from __future__ import annotations

from bench_fakes import FakeBackend, FakeConfig

from gpudesk.bench.availability import BackendInfo, auto_choice, check_backends
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
