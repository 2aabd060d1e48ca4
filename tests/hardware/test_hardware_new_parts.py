"""Detection of the 2025-26 local parts and cloud accelerators (issue 43 item 4).

A Strix Halo through a fake sysfs tree (gfx1151 from IP discovery, VRAM carve-out plus
GTT), a TPU VM and a Trainium host through their PCI ids and device nodes, an M5 Max
through a constructed ``system_profiler`` output, and PCI ids that two memory sizes share:
each matched to its catalog entry. The sysfs values are constructed in the kernel's
format (one value per file, a trailing newline); no capture of these machines was used.
"""

from __future__ import annotations

import re
from pathlib import Path

import pynvml
import pytest
from catalog_factory import make_entry
from hardware import fake_pynvml as fakes, fake_sysfs as trees
from hypothesis import HealthCheck, given, settings, strategies as st
from reach import reached

from gpudesk.catalog.loader import load_catalog
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.hardware import apple
from gpudesk.hardware.detect import detect
from gpudesk.hardware.match import MatchMethod, match_device, match_devices
from gpudesk.hardware.models import DeviceSource, GpuSnapshot
from gpudesk.hardware.nvml import Nvml
from gpudesk.hardware.sysfs import SysfsReader, device_nodes, gfx_target

MIB = 1024 * 1024
FIXTURES = Path(__file__).parent / "fixtures" / "system_profiler"


@pytest.fixture(scope="module")
def entries() -> list[CatalogEntry]:
    return list(load_catalog(include_user=False).entries)


def _no_nvml() -> Nvml:
    return Nvml(module=fakes.init_failure(pynvml.NVMLError_LibraryNotFound))


def _strix_halo(
    tree: trees.FakeSysfs, *, gc: tuple[str, str, str] | None = ("11", "5", "1")
) -> None:
    files = trees.amdgpu_files(
        vram_total=512 * MIB, vram_used=300 * MIB, busy=3, temp_mc=45_000, power_uw=18_000_000
    )
    # What the GPU may map beyond the carve-out: the kernel's GTT limit (set here to
    # 108 GiB, as amdgpu.gttsize or ttm.pages_limit would on a 128 GB machine).
    files["mem_info_gtt_total"] = str(108 * 1024 * MIB)
    if gc is not None:
        for name, value in zip(("major", "minor", "revision"), gc, strict=True):
            files[f"ip_discovery/die/0/GC/0/{name}"] = value
    tree.add(trees.FakeDevice("0000:c5:00.0", "0x1002", "0x1586", driver="amdgpu", files=files))


def test_a_strix_halo_is_found_with_its_shared_memory_and_matched(
    tmp_path: Path, entries: list[CatalogEntry]
) -> None:
    _strix_halo(trees.FakeSysfs(tmp_path))
    result = detect(_no_nvml(), sysfs_root=tmp_path, dev_root=tmp_path / "dev")
    (gpu,) = result.gpus
    assert gpu.gfx_target == "gfx1151"
    assert gpu.memory_shared_with_cpu is True
    assert gpu.memory_total_mib == 512 + 108 * 1024
    assert gpu.memory_used_mib is None  # the carve-out's use is not the shared total's
    assert gpu.memory_basis is not None and "VRAM carve-out 512 MiB" in gpu.memory_basis
    assert "GTT 110,592 MiB" in gpu.memory_basis
    (match,) = match_devices(result.gpus, entries)
    assert match.catalog_id == "ryzen-ai-max-plus-395"
    assert match.method is MatchMethod.PCI_DEVICE_ID
    by_id = {entry.id: entry for entry in entries}
    assert by_id["ryzen-ai-max-plus-395"].kind.value == "soc"


def test_without_ip_discovery_an_amd_gpu_reports_its_vram_alone(tmp_path: Path) -> None:
    _strix_halo(trees.FakeSysfs(tmp_path), gc=None)
    (gpu,) = SysfsReader(tmp_path).read_all()
    assert gpu.gfx_target is None and gpu.memory_shared_with_cpu is None
    assert gpu.memory_total_mib == 512


@pytest.mark.parametrize(
    ("parts", "expected"),
    [(("11", "5", "1"), "gfx1151"), (("9", "0", "10"), "gfx90a"), (("9", "4", "2"), "gfx942")],
)
def test_gfx_target_is_named_as_llvm_names_it(
    tmp_path: Path, parts: tuple[str, str, str], expected: str
) -> None:
    block = tmp_path / "ip_discovery" / "die" / "0" / "GC" / "0"
    block.mkdir(parents=True)
    for name, value in zip(("major", "minor", "revision"), parts, strict=True):
        (block / name).write_text(value + "\n")
    assert gfx_target(tmp_path) == expected


def _accelerators(
    tree: trees.FakeSysfs, vendor: str, device: str, count: int, pci_class: str
) -> None:
    for index in range(count):
        tree.add(
            trees.FakeDevice(f"0000:{index + 0x10:02x}:00.0", vendor, device, pci_class=pci_class)
        )


def test_a_tpu_vm_lists_its_chips_and_leaves_googles_nic_out(tmp_path: Path) -> None:
    tree = trees.FakeSysfs(tmp_path / "sys")
    _accelerators(tree, "0x1ae0", "0x0076", 4, "0x120000")
    # Google's gVNIC shares the vendor id: not an accelerator
    tree.add(trees.FakeDevice("0000:00:04.0", "0x1ae0", "0x0042", pci_class="0x020000"))
    dev = tmp_path / "dev"
    dev.mkdir()
    for index in range(4):
        (dev / f"accel{index}").write_text("")
    result = detect(_no_nvml(), sysfs_root=tmp_path / "sys", dev_root=dev)
    assert [gpu.name for gpu in result.gpus] == ["Google TPU7x (Ironwood)"] * 4
    assert all(gpu.driver_loaded and gpu.vendor == "Google" for gpu in result.gpus)
    assert result.status_text.startswith("4 Google TPUs via sysfs")
    # matched to an entry with the PCI id (the bundled TPU entry's ids, once it has them)
    tpu = make_entry(
        "tpu-v7-ironwood",
        vendor="Google",
        kind="tpu",
        pci_vendor_id="0x1ae0",
        pci_device_ids=["0x0076"],
    )
    assert match_device(result.gpus[0], [tpu]).catalog_id == "tpu-v7-ironwood"


def test_a_trainium2_host_is_matched_by_pci_id(tmp_path: Path, entries: list[CatalogEntry]) -> None:
    tree = trees.FakeSysfs(tmp_path / "sys")
    _accelerators(tree, "0x1d0f", "0x7364", 16, "0x088000")
    tree.add(trees.FakeDevice("0000:00:05.0", "0x1d0f", "0xec20", pci_class="0x020000"))  # ENA
    dev = tmp_path / "dev"
    dev.mkdir()
    for index in range(16):
        (dev / f"neuron{index}").write_text("")
    result = detect(_no_nvml(), sysfs_root=tmp_path / "sys", dev_root=dev)
    assert len(result.gpus) == 16
    assert all(gpu.driver_loaded for gpu in result.gpus)
    assert result.status_text.startswith("16 AWS accelerators via sysfs")
    matches = match_devices(result.gpus, entries)
    assert {match.catalog_id for match in matches} == {"trainium2"}


def test_accelerators_without_device_nodes_say_the_driver_is_not_loaded(tmp_path: Path) -> None:
    tree = trees.FakeSysfs(tmp_path / "sys")
    _accelerators(tree, "0x1d0f", "0x7564", 2, "0x088000")
    result = detect(_no_nvml(), sysfs_root=tmp_path / "sys", dev_root=tmp_path / "no-dev")
    assert [gpu.driver_loaded for gpu in result.gpus] == [False, False]
    assert all("/dev/neuron*" in (gpu.hint or "") for gpu in result.gpus)
    assert "(driver not loaded)" in result.status_text


def test_device_nodes_are_named_by_number_and_never_opened(tmp_path: Path) -> None:
    (tmp_path / "accel").mkdir()
    for name in ("accel10", "accel2", "accelerate", "accel-x", "neuron0"):
        (tmp_path / name).write_text("")
    (tmp_path / "accel" / "accel0").write_text("")
    assert device_nodes(tmp_path, "accel") == ["accel0", "accel2", "accel10"]
    assert device_nodes(tmp_path / "missing", "neuron") == []


def _nvidia(name: str | None, memory_mib: int | None, pci: str) -> GpuSnapshot:
    return GpuSnapshot(
        index=0,
        name=name,
        memory_total_mib=memory_mib,
        pci_device_id=pci,
        pci_vendor_id="0x10de",
    )


@pytest.mark.parametrize(
    ("name", "memory_mib", "expected", "method"),
    [
        # nvidia-smi's 73,415 MiB on the 72 GB card, as published logs show it
        ("NVIDIA RTX PRO 5000 72GB Blackwell", 73_415, "rtx-pro-5000-blackwell-72gb", "pci"),
        (None, 73_415, "rtx-pro-5000-blackwell-72gb", "pci"),  # sysfs: no name
        (None, 48_935, "rtx-pro-5000-blackwell", "pci"),
        # no memory figure: the NVML name decides
        ("NVIDIA RTX PRO 5000 72GB Blackwell", None, "rtx-pro-5000-blackwell-72gb", "name"),
    ],
)
def test_the_rtx_pro_5000_sizes_share_a_pci_id_and_are_told_apart(
    entries: list[CatalogEntry],
    name: str | None,
    memory_mib: int | None,
    expected: str,
    method: str,
) -> None:
    match = match_device(_nvidia(name, memory_mib, "0x2bb3"), entries)
    assert match.catalog_id == expected
    wanted = MatchMethod.PCI_DEVICE_ID if method == "pci" else MatchMethod.NVML_NAME
    assert match.method is wanted
    other = {"rtx-pro-5000-blackwell", "rtx-pro-5000-blackwell-72gb"} - {expected}
    assert set(match.candidates) == other


@pytest.mark.parametrize(
    ("vendor", "pci", "memory_mib", "expected"),
    [("0x10de", "0x2d83", 8_151, "rtx-5050"), ("0x1002", "0x7590", 16_304, "rx-9060-xt-16gb")],
)
def test_the_new_desktop_cards_are_matched_by_pci_id(
    entries: list[CatalogEntry], vendor: str, pci: str, memory_mib: int, expected: str
) -> None:
    gpu = GpuSnapshot(pci_vendor_id=vendor, pci_device_id=pci, memory_total_mib=memory_mib)
    match = match_device(gpu, entries)
    assert (match.catalog_id, match.method) == (expected, MatchMethod.PCI_DEVICE_ID)


def test_an_m5_max_from_constructed_system_profiler_output_is_matched(
    entries: list[CatalogEntry],
) -> None:
    gpu = apple.parse_profiler((FIXTURES / "m5-max.json").read_text(encoding="utf-8"))
    assert gpu is not None
    assert (gpu.name, gpu.gpu_core_count, gpu.memory_total_mib) == ("Apple M5 Max", 40, 128 * 1024)
    assert gpu.source is DeviceSource.SYSTEM_PROFILER
    match = match_device(gpu, entries)
    assert (match.catalog_id, match.method) == ("apple-m5-max-40c", MatchMethod.CHIP_AND_GPU_CORES)


_HOSTILE_TEXT = st.one_of(
    st.sampled_from(["16", "255", "-1", "1e3", "0x5", " 11 ", ""]),
    st.integers(min_value=0, max_value=2**70).map(str),
    st.binary(max_size=40),
)
# A plausible value three times in four (st.one_of would flatten the hostile branches).
_SYSFS_TEXT = st.integers(0, 3).flatmap(
    lambda n: _HOSTILE_TEXT if n == 0 else st.sampled_from(["11", "5", "1", "9", "0", "10"])
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(major=_SYSFS_TEXT, minor=_SYSFS_TEXT, revision=_SYSFS_TEXT, gtt=_SYSFS_TEXT)
@pytest.mark.reaches(named=30, unnamed=40)
def test_any_ip_discovery_or_gtt_file_gives_a_target_or_none(
    tmp_path_factory: pytest.TempPathFactory,
    major: str | bytes,
    minor: str | bytes,
    revision: str | bytes,
    gtt: str | bytes,
) -> None:
    root = tmp_path_factory.mktemp("sys")
    tree = trees.FakeSysfs(root)
    files = {"mem_info_vram_total": str(512 * MIB), "mem_info_vram_used": "0"}
    address = "0000:c5:00.0"
    tree.add(trees.FakeDevice(address, "0x1002", "0x1586", driver="amdgpu", files=files))
    for name, value in (
        ("ip_discovery/die/0/GC/0/major", major),
        ("ip_discovery/die/0/GC/0/minor", minor),
        ("ip_discovery/die/0/GC/0/revision", revision),
        ("mem_info_gtt_total", gtt),
    ):
        tree.write(address, name, value)
    (gpu,) = SysfsReader(root).read_all()
    if gpu.gfx_target is None:
        reached("unnamed")
        assert gpu.memory_shared_with_cpu is None and gpu.memory_total_mib == 512
        return
    reached("named")
    assert re.fullmatch(r"gfx[0-9]{1,2}[0-9a-f][0-9a-f]", gpu.gfx_target)
    if gpu.memory_shared_with_cpu:
        assert gpu.gfx_target == "gfx1151"
        assert gpu.memory_total_mib is not None and gpu.memory_total_mib >= 512
    gpu.model_dump_json()
