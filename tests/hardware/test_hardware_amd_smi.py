"""amdsmi first, sysfs for the rest: a fake module at the amdsmi boundary."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

from hardware import fake_pynvml as fakes, fake_sysfs as trees

from gpudesk.hardware.amd_smi import AmdSmi
from gpudesk.hardware.detect import detect
from gpudesk.hardware.models import DeviceSource
from gpudesk.hardware.nvml import Nvml


class AmdSmiException(Exception):
    """The binding's base exception."""


class AmdSmiLibraryException(AmdSmiException):
    """Like the binding's: raised by amdsmi-lib with an error code."""

    def __init__(self, err_code: int) -> None:
        super().__init__(f"amdsmi error {err_code}")
        self.err_code = err_code


def fake_amdsmi(
    *, init_fails: bool = False, bdf: str = trees.MI300X, power: Any = 301.0
) -> types.SimpleNamespace:
    """The ROCm 6 Python API's shapes: dicts, MiB, W, degrees C, MHz, "N/A" strings."""
    calls: list[str] = []

    def init(*_args: object) -> None:
        calls.append("init")
        if init_fails:
            raise AmdSmiLibraryException(8)  # AMDSMI_STATUS_INIT_ERROR

    def temp(handle: object, sensor: str, metric: str) -> int:
        if sensor == "edge":
            raise AmdSmiLibraryException(2)  # not supported: MI300X has no edge sensor
        return 52

    return types.SimpleNamespace(
        calls=calls,
        AmdSmiException=AmdSmiException,
        AmdSmiTemperatureType=types.SimpleNamespace(EDGE="edge", HOTSPOT="hotspot"),
        AmdSmiTemperatureMetric=types.SimpleNamespace(CURRENT="current"),
        AmdSmiClkType=types.SimpleNamespace(GFX="gfx", MEM="mem"),
        amdsmi_init=init,
        amdsmi_shut_down=lambda: calls.append("shut_down"),
        amdsmi_get_processor_handles=lambda: ["h0"],
        amdsmi_get_gpu_device_bdf=lambda handle: bdf,
        amdsmi_get_gpu_asic_info=lambda handle: {"market_name": "AMD Instinct MI300X OAM"},
        amdsmi_get_gpu_vram_usage=lambda handle: {"vram_total": 196592, "vram_used": 5000},
        amdsmi_get_gpu_activity=lambda handle: {"gfx_activity": 88, "umc_activity": "N/A"},
        amdsmi_get_power_info=lambda handle: {
            "current_socket_power": power,
            "average_socket_power": 290,
        },
        amdsmi_get_temp_metric=temp,
        amdsmi_get_clock_info=lambda handle, kind: {"clk": 2000, "max_clk": 2100},
    )


def _detect(root: Path, module: Any) -> Any:
    return detect(Nvml(module=fakes.FakePynvml([])), sysfs_root=root, amdsmi=AmdSmi(module=module))


def test_amdsmi_figures_come_first_and_sysfs_fills_the_rest(tmp_path: Path) -> None:
    trees.FakeSysfs(tmp_path).add(trees.mi300x())
    (gpu,) = _detect(tmp_path, fake_amdsmi()).gpus
    assert gpu.source is DeviceSource.AMDSMI
    assert gpu.name == "AMD Instinct MI300X OAM"
    assert (gpu.memory_total_mib, gpu.memory_used_mib) == (196592, 5000)
    assert gpu.utilization_gpu_percent == 88
    assert gpu.utilization_memory_percent == 4  # "N/A" from amdsmi: the sysfs value
    assert gpu.temperature_c == 52  # edge unsupported: hotspot
    assert gpu.power_draw_w == 301.0
    assert gpu.power_limit_w == 750.0  # from hwmon
    assert gpu.pci_device_id == "0x74a1"


def test_a_non_number_power_falls_back_to_the_average(tmp_path: Path) -> None:
    trees.FakeSysfs(tmp_path).add(trees.mi300x())
    (gpu,) = _detect(tmp_path, fake_amdsmi(power="N/A")).gpus
    assert gpu.power_draw_w == 290.0


def test_amdsmi_that_will_not_start_leaves_sysfs_and_says_so(tmp_path: Path) -> None:
    trees.FakeSysfs(tmp_path).add(trees.mi300x())
    result = _detect(tmp_path, fake_amdsmi(init_fails=True))
    (gpu,) = result.gpus
    assert gpu.source is DeviceSource.SYSFS
    assert gpu.memory_total_mib == 192 * 1024
    assert result.notes == ("amdsmi_init failed: amdsmi error 8: AMD figures read from sysfs",)


def test_a_device_amdsmi_does_not_list_stays_sysfs(tmp_path: Path) -> None:
    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.mi300x())
    tree.add(trees.radeon())
    gpus = _detect(tmp_path, fake_amdsmi(bdf="00000000:0C:00.0")).gpus
    assert [gpu.source for gpu in gpus] == [DeviceSource.SYSFS, DeviceSource.AMDSMI]


def test_amdsmi_is_not_asked_without_an_amd_gpu(tmp_path: Path) -> None:
    trees.FakeSysfs(tmp_path).add(trees.arc_b580())
    module = fake_amdsmi()
    _detect(tmp_path, module)
    assert module.calls == []


def test_live_sample_through_amdsmi(tmp_path: Path) -> None:
    trees.FakeSysfs(tmp_path).add(trees.mi300x())
    access = AmdSmi(module=fake_amdsmi())
    access.read_all()
    live = access.sample(trees.MI300X)
    assert live is not None and live["utilization_gpu_percent"] == 88
    assert access.sample("0000:99:00.0") is None
    access.shutdown()
