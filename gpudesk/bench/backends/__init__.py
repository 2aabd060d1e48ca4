"""Benchmark backends by name; GPU ones are imported only when asked for.

``auto`` picks the first available of torch, cupy, then numpy (the CPU,
always available).
"""

from __future__ import annotations

from gpudesk.bench.backends.base import Backend, BackendError, BackendStatus
from gpudesk.bench.errors import BenchError

BACKEND_NAMES: tuple[str, ...] = ("numpy", "torch", "cupy")
#: The order ``auto`` tries: a GPU first.
AUTO_ORDER: tuple[str, ...] = ("torch", "cupy", "numpy")


class UnknownBackendError(BenchError, ValueError):
    """A backend name that does not exist."""


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (not yet checked for availability).

    Raises:
        UnknownBackendError: the name is not one of :data:`BACKEND_NAMES`.
    """
    key = name.strip().lower()
    if key == "numpy":
        from gpudesk.bench.backends.numpy_backend import NumpyBackend

        return NumpyBackend()
    if key == "torch":
        from gpudesk.bench.backends.torch_backend import TorchBackend

        return TorchBackend()
    if key == "cupy":
        from gpudesk.bench.backends.cupy_backend import CupyBackend

        return CupyBackend()
    raise UnknownBackendError(f"unknown backend {name!r}; choose auto, {', '.join(BACKEND_NAMES)}")


def backend_statuses() -> list[BackendStatus]:
    """Every backend's availability, with the reason when unavailable."""
    return [get_backend(name).status() for name in BACKEND_NAMES]


def choose_backend(name: str = "auto") -> Backend:
    """The named backend if available; for ``auto`` the first available.

    Raises:
        UnknownBackendError: no such backend.
        BackendError: the named backend is unavailable (the message says why).
    """
    if name.strip().lower() != "auto":
        backend = get_backend(name)
        status = backend.status()
        if not status.available:
            raise BackendError(f"backend {backend.name} is not available: {status.reason}")
        return backend
    for candidate in AUTO_ORDER:
        backend = get_backend(candidate)
        if backend.status().available:
            return backend
    raise BackendError("no backend is available")  # numpy always is; kept for safety


__all__ = [
    "AUTO_ORDER",
    "BACKEND_NAMES",
    "Backend",
    "BackendError",
    "BackendStatus",
    "UnknownBackendError",
    "backend_statuses",
    "choose_backend",
    "get_backend",
]
