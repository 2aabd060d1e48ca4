"""AMD and Intel readings from fake sysfs trees laid out as the kernel's, read for real."""

from __future__ import annotations

from pathlib import Path

import pytest
from hardware import fake_sysfs
from hardware.fake_sysfs import GIB, FakeDevice, FakeSysfs
from hypothesis import given, strategies as st
from reach import reached

from gpudesk.telemetry.bus import BusSource, parse_error_counts
from gpudesk.telemetry.readings import DeviceReading, Source, Vendor

B580 = "0000:04:00.0"
ARC_A770 = "0000:06:00.0"


def xe_b580() -> FakeDevice:
    """An Arc B580 under xe: VRAM size, GT frequencies, hwmon power limit, energy, temps."""
    device = fake_sysfs.arc_b580(B580, driver="xe")
    device.files.update(
        {
            "tile0/gt0/freq0/act_freq": "2850",
            "tile0/gt0/freq0/rp0_freq": "2850",
            "hwmon/hwmon5/name": "xe",
            "hwmon/hwmon5/power1_max": "190000000",
            "hwmon/hwmon5/energy1_input": "5000000000",
            "hwmon/hwmon5/temp2_input": "52000",
            "hwmon/hwmon5/temp3_input": "60000",
        }
    )
    return device


def i915_a770() -> FakeDevice:
    """An Arc A770 under i915: lmem, GT frequencies, hwmon power limit and energy (no temps)."""
    return FakeDevice(
        ARC_A770,
        "0x8086",
        "0x56a0",
        driver="i915",
        files={
            "drm/card1/lmem_total_bytes": str(16 * GIB),
            "drm/card1/lmem_avail_bytes": str(12 * GIB),
            "drm/card1/gt_act_freq_mhz": "600",
            "drm/card1/gt_RP0_freq_mhz": "2400",
            "hwmon/hwmon6/name": "i915",
            "hwmon/hwmon6/power1_max": "225000000",
            "hwmon/hwmon6/energy1_input": "1000000",
        },
    )


@pytest.fixture
def tree(tmp_path: Path) -> FakeSysfs:
    tree = FakeSysfs(tmp_path / "sys")
    mi300x = fake_sysfs.mi300x()
    mi300x.files.update({"ras/umc_err_count": "ue: 1\nce: 7", "pcie_replay_count": "3"})
    for device in (mi300x, xe_b580(), i915_a770(), fake_sysfs.rtx_4090(), fake_sysfs.aspeed()):
        tree.add(device)
    return tree


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _by_address(readings: list[DeviceReading]) -> dict[str, DeviceReading]:
    return {reading.identity.pci_bus_id or "": reading for reading in readings}


def test_amdgpu_gives_the_common_fields_and_its_health_counters(tree: FakeSysfs) -> None:
    source = BusSource(tree.root)
    assert source.discover(first_index=2)
    mi300x = _by_address(source.read())[fake_sysfs.MI300X]
    assert mi300x.up
    assert mi300x.identity.vendor is Vendor.AMD
    assert mi300x.identity.source is Source.AMDGPU
    assert mi300x.identity.index == 4  # in bus order after the two Intel cards (04, 06)
    assert mi300x.identity.name == "AMD Instinct MI300X"
    assert mi300x.utilization_ratio == pytest.approx(0.37)
    assert mi300x.memory_utilization_ratio == pytest.approx(0.04)
    assert mi300x.memory_used_bytes == 3 * GIB
    assert mi300x.memory_total_bytes == 192 * GIB
    assert mi300x.temperatures_celsius == {"gpu": 41.0, "hotspot": 56.0}
    assert mi300x.power_watts == pytest.approx(152.3)
    assert mi300x.power_limit_watts == pytest.approx(750.0)
    assert mi300x.clocks_hertz == {"graphics": 1800e6, "memory": 1300e6}
    assert mi300x.clocks_max_hertz == {"graphics": 2100e6, "memory": 1300e6}
    assert mi300x.fan_ratio == pytest.approx(128 / 255)
    assert (mi300x.pcie_link_generation, mi300x.pcie_link_width) == (5, 16)
    assert mi300x.ecc_errors_total == {"uncorrected": 1, "corrected": 7}
    assert mi300x.pcie_replays_total == 3
    # What amdgpu's sysfs does not give is absent, never 0.
    assert mi300x.energy_joules_total is None
    assert mi300x.xid_events_total is None
    assert mi300x.throttle_reasons is None


def test_xe_and_i915_give_what_they_publish_and_nothing_else(tree: FakeSysfs) -> None:
    clock = Clock()
    source = BusSource(tree.root, clock=clock)
    assert source.discover()
    first = _by_address(source.read())
    b580, a770 = first[B580], first[ARC_A770]
    assert b580.identity.vendor is Vendor.INTEL and b580.identity.source is Source.INTEL
    assert b580.memory_total_bytes == 12 * GIB and b580.memory_used_bytes is None
    assert b580.clocks_hertz == {"graphics": 2850e6}
    assert b580.power_limit_watts == pytest.approx(190.0)
    assert b580.temperatures_celsius == {"gpu": 52.0, "memory": 60.0}
    assert b580.energy_joules_total == pytest.approx(5000.0)
    assert (b580.pcie_link_generation, b580.pcie_link_width) == (1, 1)
    assert a770.memory_total_bytes == 16 * GIB and a770.memory_used_bytes == 4 * GIB
    assert a770.clocks_hertz == {"graphics": 600e6}
    assert a770.clocks_max_hertz == {"graphics": 2400e6}
    assert a770.temperatures_celsius == {}
    for intel in (b580, a770):
        # No utilisation in Intel's sysfs, and no power until two energy readings exist.
        assert intel.utilization_ratio is None
        assert intel.power_watts is None
        assert intel.fan_ratio is None
    # Power is the energy used between two collections over the time between them.
    tree.write(B580, "hwmon/hwmon5/energy1_input", "5100000000")
    clock.now += 2.0
    second = _by_address(source.read())
    assert second[B580].power_watts == pytest.approx(50.0)


def test_nvidia_and_non_gpus_are_left_to_others(tree: FakeSysfs) -> None:
    source = BusSource(tree.root, skip_addresses=frozenset({fake_sysfs.MI300X}))
    source.discover()
    addresses = {identity.pci_bus_id for identity in source.devices}
    assert addresses == {B580, ARC_A770}


def test_a_device_that_leaves_the_bus_is_down_with_no_readings(tree: FakeSysfs) -> None:
    source = BusSource(tree.root)
    source.discover()
    (tree.root / "bus" / "pci" / "devices" / fake_sysfs.MI300X).unlink()
    tree.device_dir(fake_sysfs.MI300X).rename(tree.root / "gone")
    gone = _by_address(source.read())[fake_sysfs.MI300X]
    assert not gone.up
    assert gone.memory_used_bytes is None and gone.temperatures_celsius == {}
    assert _by_address(source.read())[B580].up


def test_no_amd_or_intel_gpu_is_said_plainly(tmp_path: Path) -> None:
    tree = FakeSysfs(tmp_path / "sys")
    tree.add(fake_sysfs.rtx_4090())
    source = BusSource(tree.root)
    assert not source.discover()
    assert source.detail == "no amdgpu, i915 or xe GPU on the PCI bus"
    assert source.read() == []


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("ue: 0\nce: 12", {"uncorrected": 0, "corrected": 12}),
        ("ue: 3\n", {"uncorrected": 3}),
        ("ue: x\nce: 1", {}),
        ("garbage", {}),
        (None, {}),
    ],
)
def test_ras_error_counts(text: str | None, counts: dict[str, int]) -> None:
    assert parse_error_counts(text) == counts


@given(
    st.one_of(
        st.text(max_size=60),
        st.builds("ue: {}\nce: {}".format, st.integers(0, 10**6), st.integers(0, 10**6)),
    )
)
@pytest.mark.reaches(read=30)
def test_any_ras_file_is_read_or_ignored(text: str) -> None:
    counts = parse_error_counts(text)
    if counts:
        reached("read")
    assert set(counts) <= {"uncorrected", "corrected"}
    assert all(isinstance(value, int) and value >= 0 for value in counts.values())


def test_amdsmi_figures_come_first_where_it_knows_the_device(tree: FakeSysfs) -> None:
    from hardware.test_hardware_amd_smi import fake_amdsmi

    from gpudesk.hardware.amd_smi import AmdSmi

    access = AmdSmi(module=fake_amdsmi())
    source = BusSource(tree.root, amdsmi=access)
    try:
        source.discover()
        mi300x = _by_address(source.read())[fake_sysfs.MI300X]
    finally:
        access.shutdown()
    assert mi300x.identity.source is Source.AMDSMI
    assert mi300x.utilization_ratio == pytest.approx(0.88)  # amdsmi's 88, not sysfs's 37
    assert mi300x.memory_used_bytes == 5000 * 1024**2
    assert mi300x.power_watts == 301.0
    assert mi300x.temperatures_celsius["gpu"] == 52.0  # its hotspot (no edge on MI300X)
    assert mi300x.clocks_hertz["graphics"] == 2000e6
    assert mi300x.memory_total_bytes == 192 * GIB  # the rest from sysfs
    assert mi300x.pcie_replays_total == 3


_AMD_ATTRIBUTES = (
    "gpu_busy_percent",
    "mem_busy_percent",
    "mem_info_vram_used",
    "mem_info_vram_total",
    "pp_dpm_sclk",
    "pcie_replay_count",
    "current_link_speed",
    "current_link_width",
    "ras/umc_err_count",
    "hwmon/hwmon3/temp1_input",
    "hwmon/hwmon3/power1_average",
    "hwmon/hwmon3/power1_cap",
    "hwmon/hwmon3/pwm1",
    "hwmon/hwmon3/energy1_input",
)


@given(
    st.sampled_from(_AMD_ATTRIBUTES),
    st.one_of(
        st.text(max_size=40),
        st.integers(-(10**20), 10**20).map(str),
        st.binary(max_size=40),
    ),
)
@pytest.mark.reaches(read=50)
def test_any_attribute_text_gives_a_sane_reading_or_none(name: str, value: str | bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        tree = FakeSysfs(Path(folder))
        tree.add(fake_sysfs.mi300x())
        tree.write(fake_sysfs.MI300X, name, value)
        source = BusSource(tree.root)
        source.discover()
        (reading,) = source.read()
    reached("read")
    assert reading.up
    for ratio in (reading.utilization_ratio, reading.memory_utilization_ratio, reading.fan_ratio):
        assert ratio is None or 0.0 <= ratio <= 1.0
    for count in (
        reading.memory_used_bytes,
        reading.memory_total_bytes,
        reading.pcie_replays_total,
    ):
        assert count is None or count >= 0
    if reading.memory_used_bytes is not None and reading.memory_total_bytes is not None:
        assert reading.memory_used_bytes <= reading.memory_total_bytes
    assert all(0 <= value <= 200 for value in reading.temperatures_celsius.values())
    assert reading.power_watts is None or reading.power_watts >= 0
    assert all(value >= 0 for value in reading.ecc_errors_total.values())
