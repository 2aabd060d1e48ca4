"""NVML access and detection against the fake binding (real error classes)."""

from __future__ import annotations

import ctypes.util
import logging

import pynvml
import pytest
from hardware import fake_pynvml as fakes

from gpudesk.hardware.detect import detect
from gpudesk.hardware.models import DeviceKind, NvmlStatus, hint_for
from gpudesk.hardware.nvml import (
    GpuLostError,
    Nvml,
    NvmlUnavailableError,
    decode_clock_event_reasons,
    default_nvml,
    format_cuda_version,
    set_default_nvml,
)
from gpudesk.progress import Cancelled, ProgressState


def test_two_different_gpus_every_field() -> None:
    fake = fakes.two_gpus()
    result = detect(Nvml(module=fake))
    assert result.status is NvmlStatus.OK
    assert result.driver_version == "550.54.14"
    assert result.cuda_driver_version == "12.4"
    assert [gpu.index for gpu in result.gpus] == [0, 1]
    first, second = result.gpus
    assert first.name == "NVIDIA GeForce RTX 4090"
    assert first.uuid == "GPU-4090aaaa-0000-0000-0000-000000000000"
    assert first.pci_bus_id == "00000000:01:00.0"
    assert first.pci_device_id == "0x2684"
    assert first.pci_vendor_id == "0x10de"
    assert (first.memory_total_mib, first.memory_used_mib, first.memory_free_mib) == (
        24564,
        1234,
        24564 - 1234,
    )
    assert first.memory_bus_width_bits == 384
    assert first.cuda_cores == 16384
    assert first.compute_capability == "8.9"
    assert (first.sm_clock_mhz, first.sm_clock_max_mhz) == (210, 3120)
    assert (first.memory_clock_mhz, first.memory_clock_max_mhz) == (405, 10501)
    assert (first.power_limit_w, first.power_default_limit_w, first.power_draw_w) == (
        450.0,
        450.0,
        25.5,
    )
    assert (first.temperature_c, first.fan_percent) == (35, 30)
    assert (first.utilization_gpu_percent, first.utilization_memory_percent) == (3, 1)
    assert (first.pcie_gen_current, first.pcie_gen_max) == (1, 4)
    assert (first.pcie_width_current, first.pcie_width_max) == (16, 16)
    assert first.ecc_enabled is False
    assert first.mig_enabled is None  # GeForce: MIG query not supported
    assert first.clock_event_reasons == ("gpu_idle",)
    assert first.running_process_count == 2  # pid 4242 is in both lists, counted once
    assert second.pci_device_id == "0x220a"
    assert second.memory_total_mib == 12288
    assert second.clock_event_reasons == ("sw_power_cap", "sw_thermal_slowdown")
    assert second.running_process_count == 0


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


def test_mig_instances_are_devices_linked_to_their_parent() -> None:
    result = detect(Nvml(module=fakes.mig_a100()))
    assert result.status is NvmlStatus.OK
    parent, *instances = result.gpus
    assert parent.kind is DeviceKind.GPU
    assert parent.mig_enabled is True
    assert parent.mig_instance_count == 2
    assert parent.ecc_enabled is True
    assert parent.fan_percent is None
    assert len(instances) == 2
    for position, instance in enumerate(instances):
        assert instance.kind is DeviceKind.MIG
        assert instance.index == position
        assert instance.parent_uuid == parent.uuid
        assert instance.parent_index == 0
        assert instance.name == "NVIDIA A100-SXM4-40GB MIG 3g.20gb"
        assert instance.uuid is not None and instance.uuid.startswith("MIG-")
        assert instance.memory_total_mib == 19968
        assert instance.sm_count == 42
        assert instance.compute_capability == "8.0"
        # NVML answers no clocks/power/utilization for a MIG handle: n/a, not an error
        assert instance.sm_clock_mhz is None
        assert instance.utilization_gpu_percent is None
    assert [instance.mig_gpu_instance_id for instance in instances] == [1, 2]
    assert instances[1].memory_used_mib == 1500
    assert instances[1].label == "GPU 0 MIG 1: NVIDIA A100-SXM4-40GB MIG 3g.20gb"


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
    assert "install" in hint_for(NvmlStatus.LIBRARY_NOT_FOUND)


def test_driver_not_loaded_and_version_mismatch_scenarios() -> None:
    assert detect(Nvml(module=fakes.driver_not_loaded())).status is NvmlStatus.DRIVER_NOT_LOADED
    assert detect(Nvml(module=fakes.version_mismatch())).status is NvmlStatus.VERSION_MISMATCH


def test_no_permission_to_open_the_gpu() -> None:
    result = detect(Nvml(module=fakes.no_permission()))
    assert result.status is NvmlStatus.NO_PERMISSION
    assert result.gpus == ()
    assert result.detail is not None and "Insufficient Permissions" in result.detail
    # the driver itself answered
    assert result.driver_version == "550.54.14"


def test_one_gpu_without_permission_does_not_hide_the_other() -> None:
    fake = fakes.FakePynvml(
        [fakes.rtx_4090(handle_error=pynvml.NVMLError_NoPermission), fakes.rtx_3080_12gb()]
    )
    result = detect(Nvml(module=fake))
    assert result.status is NvmlStatus.OK
    assert [gpu.name for gpu in result.gpus] == ["NVIDIA GeForce RTX 3080"]
    assert result.gpus[0].index == 1  # never assume the first GPU is index 0
    assert result.detail is not None and "device 0" in result.detail


def test_zero_devices() -> None:
    result = detect(Nvml(module=fakes.zero_devices()))
    assert result.status is NvmlStatus.NO_DEVICES
    assert result.gpus == ()
    assert result.hint == hint_for(NvmlStatus.NO_DEVICES)


def test_gpu_lost_during_detection_marks_that_gpu_only() -> None:
    fake = fakes.two_gpus()
    fake.gpus[0].lost = True
    result = detect(Nvml(module=fake))
    assert result.status is NvmlStatus.GPU_LOST
    lost, alive = result.gpus
    assert (lost.index, lost.lost, lost.name) == (0, True, None)
    assert (alive.index, alive.lost, alive.name) == (1, False, "NVIDIA GeForce RTX 3080")
    assert result.usable_gpus == (alive,)


def test_gpu_lost_midway_keeps_what_was_read() -> None:
    fake = fakes.two_gpus()
    # the GPU answers its identity, then drops off the bus at the memory query
    original = fake.nvmlDeviceGetMemoryInfo

    def lose(handle: fakes.FakeGpu) -> object:
        handle.lost = True
        return original(handle)

    fake.nvmlDeviceGetMemoryInfo = lose  # type: ignore[method-assign]
    result = detect(Nvml(module=fake))
    assert result.status is NvmlStatus.GPU_LOST
    assert result.gpus[0].lost and result.gpus[0].name == "NVIDIA GeForce RTX 4090"
    assert result.gpus[0].memory_total_mib is None


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
    for name in [*fakes.OLD_DRIVER_MISSING, "nvmlDeviceGetGraphicsRunningProcesses"]:
        assert sum(name in message for message in messages) == 1, name


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
