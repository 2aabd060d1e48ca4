"""Fake sysfs trees laid out like the kernel's, for the real sysfs reader.

Devices live under ``devices/pci0000:00/ADDRESS`` and ``bus/pci/devices/ADDRESS``
is a symlink to them, as on a real machine; a bound driver is a ``driver``
symlink to ``bus/pci/drivers/NAME``. Attribute values are written the way the
kernel prints them (with a trailing newline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MI300X = "0000:0c:00.0"
RADEON = "0000:03:00.0"
ARC = "0000:04:00.0"
RTX_4090 = "0000:01:00.0"
BRIDGE = "0000:00:01.0"
ASPEED = "0000:05:00.0"


@dataclass
class FakeDevice:
    address: str
    vendor: str
    device: str
    pci_class: str = "0x030000"
    driver: str | None = None
    subsystem_vendor: str | None = None
    subsystem_device: str | None = None
    link: tuple[str, str, str, str] | None = ("16.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16")
    files: dict[str, str] = field(default_factory=dict)


class FakeSysfs:
    """A sysfs root under ``root`` with devices added by :meth:`add`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "bus" / "pci" / "devices").mkdir(parents=True, exist_ok=True)
        (root / "bus" / "pci" / "drivers").mkdir(parents=True, exist_ok=True)

    def device_dir(self, address: str) -> Path:
        return self.root / "devices" / "pci0000:00" / address

    def add(self, device: FakeDevice) -> Path:
        path = self.device_dir(device.address)
        path.mkdir(parents=True)
        (self.root / "bus" / "pci" / "devices" / device.address).symlink_to(path)
        attributes = {
            "class": device.pci_class,
            "vendor": device.vendor,
            "device": device.device,
            "subsystem_vendor": device.subsystem_vendor or device.vendor,
            "subsystem_device": device.subsystem_device or device.device,
        }
        if device.link is not None:
            current, width, maximum, max_width = device.link
            attributes.update(
                current_link_speed=current,
                current_link_width=width,
                max_link_speed=maximum,
                max_link_width=max_width,
            )
        attributes.update(device.files)
        for name, value in attributes.items():
            self.write(device.address, name, value)
        if device.driver is not None:
            driver = self.root / "bus" / "pci" / "drivers" / device.driver
            driver.mkdir(exist_ok=True)
            (path / "driver").symlink_to(driver)
        return path

    def write(self, address: str, name: str, value: str | bytes) -> Path:
        path = self.device_dir(address) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, bytes):
            path.write_bytes(value)
        else:
            path.write_text(value + "\n", encoding="utf-8")
        return path


def amdgpu_files(
    *,
    vram_total: int,
    vram_used: int,
    busy: int,
    temp_mc: int,
    power_uw: int,
    power_name: str = "power1_average",
    product_name: str | None = None,
) -> dict[str, str]:
    files = {
        "mem_info_vram_total": str(vram_total),
        "mem_info_vram_used": str(vram_used),
        "gpu_busy_percent": str(busy),
        "mem_busy_percent": "4",
        "pp_dpm_sclk": "0: 500Mhz\n1: 1800Mhz *\n2: 2100Mhz",
        "pp_dpm_mclk": "0: 900Mhz\n1: 1300Mhz *",
        "hwmon/hwmon3/name": "amdgpu",
        "hwmon/hwmon3/temp1_input": str(temp_mc),
        "hwmon/hwmon3/temp1_label": "edge",
        "hwmon/hwmon3/temp2_input": str(temp_mc + 15_000),
        "hwmon/hwmon3/temp2_label": "junction",
        f"hwmon/hwmon3/{power_name}": str(power_uw),
        "hwmon/hwmon3/power1_cap": "750000000",
        "hwmon/hwmon3/power1_cap_default": "750000000",
        "hwmon/hwmon3/pwm1": "128",
    }
    if product_name is not None:
        files["product_name"] = product_name
    return files


GIB = 1024**3


def mi300x(address: str = MI300X) -> FakeDevice:
    return FakeDevice(
        address,
        "0x1002",
        "0x74a1",
        pci_class="0x120000",
        driver="amdgpu",
        subsystem_device="0x74a1",
        link=("32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16"),
        files=amdgpu_files(
            vram_total=192 * GIB,
            vram_used=3 * GIB,
            busy=37,
            temp_mc=41_000,
            power_uw=152_300_000,
            product_name="AMD Instinct MI300X",
        ),
    )


def radeon(address: str = RADEON) -> FakeDevice:
    """An RX 7900 XTX: no product_name, power in power1_input (newer kernels)."""
    return FakeDevice(
        address,
        "0x1002",
        "0x744c",
        driver="amdgpu",
        subsystem_vendor="0x1da2",
        subsystem_device="0x471e",
        files=amdgpu_files(
            vram_total=24 * GIB,
            vram_used=GIB // 2,
            busy=2,
            temp_mc=38_000,
            power_uw=25_000_000,
            power_name="power1_input",
        ),
    )


def arc_b580(address: str = ARC, driver: str = "xe") -> FakeDevice:
    return FakeDevice(
        address,
        "0x8086",
        "0xe20b",
        driver=driver,
        link=("2.5 GT/s PCIe", "1", "2.5 GT/s PCIe", "1"),
        files={"tile0/physical_vram_size_bytes": str(12 * GIB)} if driver == "xe" else {},
    )


def rtx_4090(address: str = RTX_4090, driver: str | None = None) -> FakeDevice:
    return FakeDevice(
        address,
        "0x10de",
        "0x2684",
        driver=driver,
        link=("2.5 GT/s PCIe", "16", "16.0 GT/s PCIe", "16"),
    )


def bridge() -> FakeDevice:
    """A PCI bridge from a GPU vendor: not a GPU class, must be ignored."""
    return FakeDevice(BRIDGE, "0x8086", "0x7a38", pci_class="0x060400", driver="pcieport")


def aspeed() -> FakeDevice:
    """A server's BMC VGA adapter: a display class, but not a GPU vendor."""
    return FakeDevice(ASPEED, "0x1a03", "0x2000", driver="ast")


def done_when_tree(root: Path) -> FakeSysfs:
    """The issue's tree: MI300X, Arc B580, RTX 4090 without a driver, plus non-GPUs."""
    tree = FakeSysfs(root)
    for device in (mi300x(), arc_b580(), rtx_4090(), bridge(), aspeed()):
        tree.add(device)
    return tree


def full_tree(root: Path) -> FakeSysfs:
    tree = done_when_tree(root)
    tree.add(radeon())
    return tree
