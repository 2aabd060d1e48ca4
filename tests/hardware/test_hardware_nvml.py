"""NVML access against the Python stand-in for the binding, where a test needs fine control.

The scenarios a user meets (two GPUs, MIG, lost GPUs, driver states, old
drivers) run through the real nvidia-ml-py in ``test_nvml_real_binding.py``.
"""

from __future__ import annotations

import ctypes.util
import logging

import pynvml
import pytest
from hardware import fake_pynvml as fakes

from gpudesk.hardware.detect import detect
from gpudesk.hardware.models import NvmlStatus, hint_for
from gpudesk.hardware.nvml import (
    FailureKind,
    GpuLostError,
    Nvml,
    NvmlUnavailableError,
    classify_failure,
    decode_clock_event_reasons,
    default_nvml,
    format_cuda_version,
    set_default_nvml,
)
from gpudesk.progress import Cancelled, ProgressState


def test_result_is_json_serialisable_with_a_timestamp() -> None:
    result = detect(Nvml(module=fakes.two_gpus()))
    data = result.model_dump(mode="json")
    assert data["status"] == "ok"
    assert data["timestamp"].endswith("Z") or "+00:00" in data["timestamp"]
    assert type(result).model_validate_json(result.model_dump_json()) == result


def test_unsupported_fields_read_na_and_the_rest_is_read() -> None:
    result = detect(Nvml(module=fakes.unsupported_fields()))
    assert result.status is NvmlStatus.OK
    (gpu,) = result.gpus
    assert gpu.fan_percent is None
    assert gpu.ecc_enabled is None
    assert (gpu.power_limit_w, gpu.power_default_limit_w, gpu.power_draw_w) == (None, None, None)
    # the other fields of the same device are still there
    assert gpu.name == "NVIDIA GeForce RTX 3060 Laptop GPU"
    assert gpu.temperature_c == 35
    assert gpu.memory_total_mib == 6144
    assert gpu.lost is False


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (pynvml.NVMLError_LibraryNotFound, NvmlStatus.LIBRARY_NOT_FOUND),
        (pynvml.NVMLError_DriverNotLoaded, NvmlStatus.DRIVER_NOT_LOADED),
        (pynvml.NVMLError_LibRmVersionMismatch, NvmlStatus.VERSION_MISMATCH),
        (pynvml.NVMLError_NoPermission, NvmlStatus.NO_PERMISSION),
        (pynvml.NVMLError_GpuIsLost, NvmlStatus.GPU_LOST),
        (pynvml.NVMLError_Unknown, NvmlStatus.UNKNOWN),
        (pynvml.NVMLError_OperatingSystem, NvmlStatus.UNKNOWN),
    ],
)
def test_init_failures_become_a_typed_status_with_a_hint(
    error: type[pynvml.NVMLError], status: NvmlStatus
) -> None:
    result = detect(Nvml(module=fakes.init_failure(error)))
    assert result.status is status
    assert result.hint == hint_for(status)
    assert result.detail == str(error())
    assert result.gpus == ()
    assert result.driver_version is None
    # the CPU is still described
    assert result.cpu.threads is not None and result.cpu.threads >= 1


def test_every_status_has_a_distinct_one_line_hint() -> None:
    hints = [hint_for(status) for status in NvmlStatus if status is not NvmlStatus.OK]
    assert len(set(hints)) == len(hints) == len(NvmlStatus) - 1
    assert all("\n" not in hint and len(hint) > 20 for hint in hints)
    assert "reboot" in hint_for(NvmlStatus.VERSION_MISMATCH)
    assert "Install the NVIDIA driver" in hint_for(NvmlStatus.LIBRARY_NOT_FOUND)


def test_gpu_lost_during_detection_marks_that_gpu_only() -> None:
    fake = fakes.two_gpus()
    fake.gpus[0].lost = True
    result = detect(Nvml(module=fake))
    assert result.status is NvmlStatus.GPU_LOST
    lost, alive = result.gpus
    assert (lost.index, lost.lost, lost.name) == (0, True, None)
    assert (alive.index, alive.lost, alive.name) == (1, False, "NVIDIA GeForce RTX 3080")
    assert result.usable_gpus == (alive,)


def test_missing_functions_read_na_fall_back_and_log_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = fakes.missing_function()
    nvml = Nvml(module=fake)
    with caplog.at_level(logging.INFO, logger="gpudesk.hardware.nvml"):
        first = detect(nvml)
        second = detect(nvml)
    for result in (first, second):
        assert result.status is NvmlStatus.OK
        (gpu,) = result.gpus
        assert gpu.memory_bus_width_bits is None
        assert gpu.cuda_cores is None
        # fell back to the older functions
        assert result.cuda_driver_version == "12.4"
        assert gpu.clock_event_reasons == ("gpu_idle",)
        # only compute processes answered (the binding lacks the graphics call)
        assert gpu.running_process_count == 1
        assert gpu.memory_total_mib == 24564
    assert fake.calls["nvmlSystemGetCudaDriverVersion"] == 2
    messages = [record.getMessage() for record in caplog.records]
    graphics = "nvmlDeviceGetGraphicsRunningProcesses"
    fallbacks = [f"{graphics}_v3", f"{graphics}_v2", f"{graphics} (unversioned symbol)"]
    for name in [*fakes.OLD_DRIVER_MISSING, *fallbacks]:
        assert sum(f"function {name} is" in message for message in messages) == 1, name


def test_init_is_lazy_and_done_once_and_shutdown_is_clean() -> None:
    fake = fakes.two_gpus()
    nvml = Nvml(module=fake)
    assert fake.calls["nvmlInit"] == 0
    detect(nvml)
    detect(nvml)
    assert fake.calls["nvmlInit"] == 1
    assert nvml.initialised
    nvml.shutdown()
    nvml.shutdown()
    assert fake.calls["nvmlShutdown"] == 1
    assert fake.initialised == 0
    # after shutdown a query reads n/a instead of crashing
    assert nvml.query("nvmlSystemGetDriverVersion") is None


def test_a_failed_init_is_retried_on_the_next_detection() -> None:
    fake = fakes.driver_not_loaded()
    nvml = Nvml(module=fake)
    assert detect(nvml).status is NvmlStatus.DRIVER_NOT_LOADED
    fake.init_error = None
    fake.gpus = [fakes.rtx_4090()]
    result = detect(nvml)
    assert result.status is NvmlStatus.OK
    assert len(result.gpus) == 1
    nvml.shutdown()


def test_typed_errors_from_handles() -> None:
    fake = fakes.two_gpus()
    nvml = Nvml(module=fake)
    fake.gpus[1].lost = True
    with pytest.raises(GpuLostError):
        nvml.handle_by_uuid(fake.gpus[1].uuid)
    with pytest.raises(NvmlUnavailableError) as caught:
        nvml.handle_by_uuid("GPU-not-there")
    assert caught.value.status is NvmlStatus.UNKNOWN


def test_detection_reports_progress_and_can_be_cancelled() -> None:
    seen: list[str] = []
    progress = ProgressState(on_report=lambda fraction, message: seen.append(message))
    detect(Nvml(module=fakes.two_gpus()), progress)
    assert "reading GPU 0" in seen and "reading GPU 1" in seen
    cancelled = ProgressState()
    cancelled.cancel()
    with pytest.raises(Cancelled):
        detect(Nvml(module=fakes.two_gpus()), cancelled)


def test_default_instance_is_replaceable() -> None:
    fake_nvml = Nvml(module=fakes.zero_devices())
    set_default_nvml(fake_nvml)
    try:
        assert default_nvml() is fake_nvml
        assert detect().status is NvmlStatus.NO_DEVICES
    finally:
        set_default_nvml(None)
    assert default_nvml() is not fake_nvml


HAS_NVIDIA_DRIVER = ctypes.util.find_library("nvidia-ml") is not None


@pytest.mark.skipif(HAS_NVIDIA_DRIVER, reason="an NVIDIA driver is installed here")
def test_real_binding_on_this_machine_reports_library_not_found() -> None:
    """This machine has no NVIDIA driver: the real pynvml must say so, typed."""
    result = detect(Nvml())
    assert result.status is NvmlStatus.LIBRARY_NOT_FOUND
    assert result.detail == "NVML Shared Library Not Found"
    assert result.gpus == ()


def test_helpers() -> None:
    assert format_cuda_version(12040) == "12.4"
    assert format_cuda_version(11080) == "11.8"
    assert decode_clock_event_reasons(0) == ()
    assert decode_clock_event_reasons(0x1 | 0x40) == ("gpu_idle", "hw_thermal_slowdown")
    assert decode_clock_event_reasons(0x1000) == ("0x1000",)


@pytest.mark.parametrize(
    ("error", "kind", "status"),
    [
        (pynvml.NVMLError_FunctionNotFound(), FailureKind.MISSING, NvmlStatus.DRIVER_TOO_OLD),
        (pynvml.NVMLLibraryMismatchError("no _v3"), FailureKind.MISSING, NvmlStatus.DRIVER_TOO_OLD),
        (AttributeError("nvmlX"), FailureKind.MISSING, NvmlStatus.DRIVER_TOO_OLD),
        (pynvml.NVMLError_GpuIsLost(), FailureKind.LOST, NvmlStatus.GPU_LOST),
        (pynvml.NVMLError_NotSupported(), FailureKind.NOT_SUPPORTED, NvmlStatus.UNKNOWN),
        (pynvml.NVMLError_NotFound(), FailureKind.NOT_FOUND, NvmlStatus.UNKNOWN),
        (pynvml.NVMLError_NoPermission(), FailureKind.FAILED, NvmlStatus.NO_PERMISSION),
        (ctypes.ArgumentError("argument 2"), FailureKind.FAILED, NvmlStatus.UNKNOWN),
        (OverflowError("big"), FailureKind.FAILED, NvmlStatus.UNKNOWN),
    ],
)
def test_one_classifier_for_every_failure(
    error: Exception, kind: FailureKind, status: NvmlStatus
) -> None:
    failure = classify_failure(error, pynvml)
    assert (failure.kind, failure.status) == (kind, status)
    assert failure.detail


def test_any_exception_from_one_field_makes_only_that_field_na(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = fakes.two_gpus()

    def mismatch(handle: object) -> None:
        raise pynvml.NVMLLibraryMismatchError("Unversioned function called ...")

    def ctypes_error(handle: object, sensor: int) -> None:
        raise ctypes.ArgumentError("argument 2: wrong type")

    fake.nvmlDeviceGetComputeRunningProcesses_v3 = mismatch  # type: ignore[method-assign]
    fake.nvmlDeviceGetGraphicsRunningProcesses_v3 = mismatch  # type: ignore[method-assign]
    fake.nvmlDeviceGetTemperature = ctypes_error  # type: ignore[method-assign]
    nvml = Nvml(module=fake)
    with caplog.at_level(logging.INFO, logger="gpudesk.hardware.nvml"):
        result = detect(nvml)
        detect(nvml)
    assert result.status is NvmlStatus.OK
    for gpu in result.gpus:
        assert gpu.temperature_c is None and gpu.running_process_count is None
        assert gpu.name is not None and gpu.memory_total_mib is not None
        assert gpu.fan_percent is not None
    messages = [record.getMessage() for record in caplog.records]
    assert sum("nvmlDeviceGetTemperature" in message for message in messages) == 1


def test_nvml_init_function_not_found_is_driver_too_old() -> None:
    result = detect(Nvml(module=fakes.init_failure(pynvml.NVMLError_FunctionNotFound)))
    assert result.status is NvmlStatus.DRIVER_TOO_OLD
    assert result.hint == hint_for(NvmlStatus.DRIVER_TOO_OLD)
    assert "nvmlInit_v2" in (result.detail or "")
