"""Detect this machine's GPUs in the background and tell the app state (no plots imported).

The main window can call :func:`detect_in_background` at start-up so that the
compare view knows "this machine" before the This machine tab is ever opened.
"""

from __future__ import annotations

from gpudesk.hardware.detect import detect
from gpudesk.hardware.match import match_devices, matched_catalog_ids
from gpudesk.hardware.models import DetectionResult
from gpudesk.hardware.nvml import Nvml, default_nvml
from gpudesk.progress import Progress
from gpudesk.ui.state import AppState
from gpudesk.ui.worker import TaskWorker


def detected_catalog_ids(result: DetectionResult, state: AppState) -> list[str]:
    """Catalog ids of this machine's GPUs (:func:`gpudesk.hardware.match.matched_catalog_ids`)."""
    return matched_catalog_ids(result.gpus, match_devices(result.gpus, state.entries()))


def detect_in_background(state: AppState, nvml: Nvml | None = None) -> TaskWorker:
    """Start a detection on a worker; on success ``state.set_detected(...)`` is called.

    The state owns the worker (:mod:`gpudesk.ui.worker`); the caller may keep the
    returned handle to call ``shutdown()`` on it when closing.
    """
    access = nvml if nvml is not None else default_nvml()

    def work(progress: Progress) -> DetectionResult:
        return detect(access, progress)

    def finished(result: object) -> None:
        if isinstance(result, DetectionResult):
            state.set_detected(detected_catalog_ids(result, state), result.gpus)

    worker = TaskWorker(work, owner=state)
    worker.finished.connect(finished)
    worker.start()
    return worker
