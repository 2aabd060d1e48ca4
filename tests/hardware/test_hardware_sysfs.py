"""The sysfs reader on fake trees: GPUs found, fields read, garbage and unreadable files n/a."""

from __future__ import annotations

import os
from pathlib import Path

import pynvml
import pytest
import reach
from hardware import fake_pynvml as fakes, fake_sysfs as trees
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk.hardware.detect import NO_DRIVER_HINT, NOUVEAU_HINT, NVML_MISSING_HINT, detect
from gpudesk.hardware.models import DeviceSource, NvmlStatus
from gpudesk.hardware.nvml import Nvml
from gpudesk.hardware.sysfs import (
    MAX_ATTRIBUTE_BYTES,
    SysfsReader,
    parse_dpm_levels,
    parse_link_speed,
    pcie_generation,
    read_attribute,
)

GIB_MIB = 1024


def _no_library() -> fakes.FakePynvml:
    return fakes.init_failure(pynvml.NVMLError_LibraryNotFound)


def _by_bus(root: Path) -> dict[str, object]:
    return {gpu.pci_bus_id: gpu for gpu in SysfsReader(root).read_all()}


def test_gpus_are_found_and_non_gpus_ignored(tmp_path: Path) -> None:
    trees.full_tree(tmp_path)
    gpus = SysfsReader(tmp_path).read_all()
    assert [gpu.pci_bus_id for gpu in gpus] == [
        trees.RTX_4090,
        trees.RADEON,
        trees.ARC,
        trees.MI300X,
    ]
    assert [gpu.vendor for gpu in gpus] == ["NVIDIA", "AMD", "Intel", "AMD"]
    assert {gpu.source for gpu in gpus} == {DeviceSource.SYSFS}


def test_mi300x_fields(tmp_path: Path) -> None:
    trees.full_tree(tmp_path)
    gpu = SysfsReader(tmp_path).read_all()[-1]
    assert gpu.name == "AMD Instinct MI300X"
    assert (gpu.pci_vendor_id, gpu.pci_device_id) == ("0x1002", "0x74a1")
    assert gpu.pci_subsystem_device_id == "0x74a1"
    assert (gpu.kernel_driver, gpu.driver_loaded) == ("amdgpu", True)
    assert gpu.memory_total_mib == 192 * GIB_MIB
    assert gpu.memory_used_mib == 3 * GIB_MIB
    assert gpu.memory_free_mib == 189 * GIB_MIB
    assert (gpu.utilization_gpu_percent, gpu.utilization_memory_percent) == (37, 4)
    assert gpu.temperature_c == 41  # the edge sensor, not the junction one
    assert gpu.power_draw_w == 152.3
    assert (gpu.power_limit_w, gpu.power_default_limit_w) == (750.0, 750.0)
    assert (gpu.sm_clock_mhz, gpu.sm_clock_max_mhz) == (1800, 2100)
    assert (gpu.memory_clock_mhz, gpu.memory_clock_max_mhz) == (1300, 1300)
    assert gpu.fan_percent == 50
    assert (gpu.pcie_speed_current_gts, gpu.pcie_gen_current, gpu.pcie_width_current) == (
        32.0,
        5,
        16,
    )


def test_radeon_power_from_power1_input_and_subsystem(tmp_path: Path) -> None:
    trees.full_tree(tmp_path)
    gpu = _by_bus(tmp_path)[trees.RADEON]
    assert gpu.power_draw_w == 25.0  # type: ignore[attr-defined]
    assert gpu.name is None  # type: ignore[attr-defined]
    assert gpu.pci_subsystem_vendor_id == "0x1da2"  # type: ignore[attr-defined]
    assert gpu.memory_total_mib == 24 * GIB_MIB  # type: ignore[attr-defined]


def test_arc_identity_link_and_memory(tmp_path: Path) -> None:
    trees.full_tree(tmp_path)
    gpu = _by_bus(tmp_path)[trees.ARC]
    assert gpu.kernel_driver == "xe"  # type: ignore[attr-defined]
    assert gpu.memory_total_mib == 12 * GIB_MIB  # type: ignore[attr-defined]
    assert gpu.memory_used_mib is None  # type: ignore[attr-defined]
    assert (gpu.pcie_gen_max, gpu.pcie_width_max) == (1, 1)  # type: ignore[attr-defined]


def test_i915_local_memory(tmp_path: Path) -> None:
    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.arc_b580(driver="i915"))
    tree.write(trees.ARC, "drm/card1/lmem_total_bytes", str(16 * 1024**3))
    tree.write(trees.ARC, "drm/card1/lmem_avail_bytes", str(12 * 1024**3))
    (gpu,) = SysfsReader(tmp_path).read_all()
    assert (gpu.memory_total_mib, gpu.memory_used_mib) == (16 * GIB_MIB, 4 * GIB_MIB)


def test_nvidia_without_a_driver(tmp_path: Path) -> None:
    trees.full_tree(tmp_path)
    gpu = _by_bus(tmp_path)[trees.RTX_4090]
    assert gpu.kernel_driver is None and gpu.driver_loaded is False  # type: ignore[attr-defined]
    assert gpu.memory_total_mib is None  # type: ignore[attr-defined]
    assert (gpu.pcie_gen_current, gpu.pcie_gen_max) == (1, 4)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "value", "field"),
    [
        ("mem_info_vram_total", "lots", "memory_total_mib"),
        ("mem_info_vram_total", "-5", "memory_total_mib"),
        ("gpu_busy_percent", "250", "utilization_gpu_percent"),
        ("gpu_busy_percent", "1e3", "utilization_gpu_percent"),
        ("hwmon/hwmon3/temp1_input", "hot", None),
        ("hwmon/hwmon3/power1_average", "0x10", "power_draw_w"),
        ("pp_dpm_sclk", "garbage here", "sm_clock_mhz"),
        ("current_link_speed", "Unknown", "pcie_speed_current_gts"),
        ("current_link_width", "255", "pcie_width_current"),
        ("vendor", "nvidia", "pci_vendor_id"),
        ("product_name", "AMD\x01Instinct", "name"),
    ],
)
def test_garbage_makes_that_field_na(
    tmp_path: Path, name: str, value: str, field: str | None
) -> None:
    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.mi300x())
    tree.write(trees.MI300X, name, value)
    gpus = SysfsReader(tmp_path).read_all()
    if name == "vendor":
        assert gpus == []  # no known vendor: not a GPU we report
        return
    (gpu,) = gpus
    if field is not None:
        assert getattr(gpu, field) is None
    else:
        assert gpu.temperature_c == 56  # edge unreadable: the junction sensor
    assert gpu.memory_used_mib == 3 * GIB_MIB or name.startswith("mem_info")


def test_binary_oversized_and_unreadable_files_are_na(tmp_path: Path) -> None:
    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.mi300x())
    tree.write(trees.MI300X, "mem_info_vram_total", b"\xff\xfe\x00\x01")
    tree.write(trees.MI300X, "gpu_busy_percent", "1" * (MAX_ATTRIBUTE_BYTES + 10))
    used = tree.write(trees.MI300X, "mem_info_vram_used", "1024")
    used.chmod(0)
    (gpu,) = SysfsReader(tmp_path).read_all()
    assert gpu.memory_total_mib is None
    assert gpu.utilization_gpu_percent is None
    if os.geteuid() != 0:  # root reads files whatever their mode
        assert gpu.memory_used_mib is None
    assert gpu.temperature_c == 41


def test_a_directory_or_fifo_in_place_of_a_file_is_na(tmp_path: Path) -> None:
    tree = trees.FakeSysfs(tmp_path)
    path = tree.add(trees.mi300x())
    (path / "gpu_busy_percent").unlink()
    (path / "gpu_busy_percent").mkdir()
    (path / "mem_busy_percent").unlink()
    os.mkfifo(path / "mem_busy_percent")  # reading a FIFO would block forever
    (gpu,) = SysfsReader(tmp_path).read_all()
    assert gpu.utilization_gpu_percent is None and gpu.utilization_memory_percent is None


def test_a_root_without_a_pci_bus_finds_nothing(tmp_path: Path) -> None:
    assert SysfsReader(tmp_path / "missing").read_all() == []
    assert SysfsReader(tmp_path).read_all() == []


def test_parsers() -> None:
    assert parse_link_speed("8.0 GT/s PCIe") == 8.0
    assert parse_link_speed("8 GT/s") == 8.0
    assert parse_link_speed("Unknown") is None
    assert pcie_generation(16.0) == 4 and pcie_generation(2.5) == 1
    assert pcie_generation(7.0) is None
    assert parse_dpm_levels("0: 500Mhz *\n1: 2100Mhz") == (500, 2100)
    assert parse_dpm_levels("0: 500Mhz\n1: 2100Mhz") == (None, 2100)
    assert parse_dpm_levels("hello") == (None, None)


def test_read_attribute_strips_and_rejects_nul(tmp_path: Path) -> None:
    path = tmp_path / "a"
    path.write_text("  42\n")
    assert read_attribute(path) == "42"
    path.write_bytes(b"4\x002")
    assert read_attribute(path) is None
    assert read_attribute(tmp_path / "none") is None


def test_sampling_reads_live_figures_and_marks_a_removed_device_lost(tmp_path: Path) -> None:
    tree = trees.full_tree(tmp_path)
    reader = SysfsReader(tmp_path)
    gpus = {gpu.pci_bus_id: gpu for gpu in reader.read_all()}
    tree.write(trees.MI300X, "gpu_busy_percent", "99")
    sample = reader.sample(gpus[trees.MI300X])
    assert sample.uuid == f"pci:{trees.MI300X}"
    assert (sample.utilization_gpu_percent, sample.power_draw_w) == (99, 152.3)
    assert (sample.temperature_c, sample.memory_used_mib) == (41, 3 * GIB_MIB)
    (tmp_path / "bus" / "pci" / "devices" / trees.MI300X).unlink()
    assert reader.sample(gpus[trees.MI300X]).lost


_FILES = [
    "class",
    "vendor",
    "device",
    "subsystem_vendor",
    "current_link_speed",
    "max_link_width",
    "mem_info_vram_total",
    "mem_info_vram_used",
    "gpu_busy_percent",
    "pp_dpm_sclk",
    "pp_dpm_mclk",
    "product_name",
    "hwmon/hwmon3/temp1_input",
    "hwmon/hwmon3/temp1_label",
    "hwmon/hwmon3/power1_average",
    "hwmon/hwmon3/power1_cap",
    "hwmon/hwmon3/pwm1",
    "tile0/physical_vram_size_bytes",
]


#: What the kernel writes in such files (numbers, ids, link speeds, clock levels), or
#: any bytes: a file of random bytes is rarely a number, so no value was ever read.
_SYSFS_CONTENT = st.one_of(
    st.binary(max_size=300),
    st.integers(0, 100).map(lambda n: b"%d\n" % n),
    st.integers(0, 100).map(lambda n: b"%d" % n),
    st.integers(-(2**70), 2**70).map(lambda n: b"%d\n" % n),
    st.integers(0, 0xFFFF).map(lambda n: b"0x%04x\n" % n),
    st.sampled_from([b"16.0 GT/s PCIe\n", b"Unknown\n", b"0: 500Mhz\n1: 1800Mhz *\n", b""]),
    st.text(max_size=20).map(lambda text: text.encode("utf-8", "surrogatepass")),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    # The two files whose value the test checks, drawn more often than the rest.
    name=st.sampled_from(_FILES) | st.sampled_from(["gpu_busy_percent", "max_link_width"]),
    content=_SYSFS_CONTENT,
    device=st.sampled_from(["mi300x", "mi300x", "arc", "rtx"]),
)
@pytest.mark.reaches(found=68, dropped=6, value_read=4)
def test_any_bytes_in_any_file_never_crash(
    tmp_path_factory: pytest.TempPathFactory, name: str, content: bytes, device: str
) -> None:
    root = tmp_path_factory.mktemp("sysfs")
    tree = trees.FakeSysfs(root)
    made = {"mi300x": trees.mi300x, "arc": trees.arc_b580, "rtx": trees.rtx_4090}[device]()
    tree.add(made)
    tree.write(made.address, name, content)
    reader = SysfsReader(root)
    gpus = reader.read_all()
    if not gpus:  # only a garbled PCI class or id can hide the device
        reach.reached("dropped")
        assert name in {"class", "vendor", "device"}
    for gpu in gpus:
        reach.reached("found")
        assert gpu.pci_bus_id == made.address and gpu.source is DeviceSource.SYSFS
        sample = reader.sample(gpu)
        assert not sample.lost
        for value in (gpu.utilization_gpu_percent, gpu.fan_percent, sample.utilization_gpu_percent):
            assert value is None or 0 <= value <= 100
        assert gpu.pcie_width_max is None or 0 < gpu.pcie_width_max <= 32
        assert (
            gpu.memory_used_mib is None
            or gpu.memory_total_mib is None
            or (gpu.memory_used_mib <= gpu.memory_total_mib)
        )
        gpu.model_dump_json()  # every field is of its declared type
        # A number the kernel could have written is read as written.
        number = content.strip()
        if number.isdigit() and int(number) <= 100:
            if name == "gpu_busy_percent" and device == "mi300x":
                reach.reached("value_read")
                assert gpu.utilization_gpu_percent == int(number)
            elif name == "max_link_width" and 0 < int(number) <= 32:
                reach.reached("value_read")
                assert gpu.pcie_width_max == int(number)
    fake = fakes.FakePynvml([])
    result = detect(Nvml(module=fake), sysfs_root=root)
    assert len(result.gpus) == len(gpus)
    result.model_dump_json()


def test_detect_merges_nvml_and_sysfs_without_duplicates(tmp_path: Path) -> None:
    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.rtx_4090(address="0000:01:00.0", driver="nvidia"))
    tree.add(trees.mi300x())
    result = detect(Nvml(module=fakes.two_gpus()), sysfs_root=tmp_path)
    physical = result.physical_gpus
    assert [gpu.source for gpu in physical] == [
        DeviceSource.NVML,
        DeviceSource.NVML,
        DeviceSource.SYSFS,
    ]
    assert [gpu.index for gpu in physical] == [0, 1, 2]
    assert physical[0].vendor == "NVIDIA" and physical[0].driver_loaded is True
    assert physical[0].kernel_driver == "nvidia"  # the bus facts joined by PCI address
    assert result.status_text == "2 NVIDIA GPUs via NVML; 1 AMD GPU via sysfs"


@pytest.mark.parametrize(
    ("driver", "loaded", "hint"),
    [
        (None, False, NO_DRIVER_HINT),
        ("nouveau", False, NOUVEAU_HINT),
        ("nvidia", True, NVML_MISSING_HINT),
    ],
)
def test_nvidia_off_nvml_gets_a_hint_by_cause(
    tmp_path: Path, driver: str | None, loaded: bool, hint: str
) -> None:
    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.rtx_4090(driver=driver))
    result = detect(Nvml(module=_no_library()), sysfs_root=tmp_path)
    (gpu,) = result.gpus
    assert (gpu.driver_loaded, gpu.hint) == (loaded, hint)
    assert result.status is NvmlStatus.LIBRARY_NOT_FOUND
    assert result.nvml_problem_matters


def test_nvml_library_missing_on_an_amd_machine_is_no_problem(tmp_path: Path) -> None:
    tree = trees.FakeSysfs(tmp_path)
    tree.add(trees.mi300x())
    tree.add(trees.radeon())
    result = detect(Nvml(module=_no_library()), sysfs_root=tmp_path)
    assert not result.nvml_problem_matters
    assert result.status_text == (
        "2 AMD GPUs via sysfs; NVIDIA driver not installed (NVML library not found)"
    )
