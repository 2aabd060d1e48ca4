"""``gpudesk detect``: the JSON contract, exit codes, the readable summary."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_factory import write_entry
from hardware import fake_pynvml as fakes

from gpudesk.cli import main
from gpudesk.hardware.nvml import Nvml, set_default_nvml

CONTRACT_KEYS = {"status", "hint", "driver_version", "cuda_driver_version", "gpus", "cpu"}


@pytest.fixture
def small_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A catalog of three entries instead of the bundled one."""
    folder = tmp_path / "catalog"
    write_entry(
        folder,
        "rtx-4090",
        name="NVIDIA GeForce RTX 4090",
        memory_gb=24,
        pci_device_ids=["0x2684"],
    )
    write_entry(
        folder,
        "rtx-3080-12gb",
        name="NVIDIA GeForce RTX 3080 12GB",
        memory_gb=12,
        nvml_names=["NVIDIA GeForce RTX 3080"],
    )
    write_entry(
        folder,
        "rtx-3080-10gb",
        name="NVIDIA GeForce RTX 3080 10GB",
        memory_gb=10,
        nvml_names=["NVIDIA GeForce RTX 3080"],
    )
    write_entry(folder, "a100-40gb-sxm4", name="NVIDIA A100 SXM4 40GB", memory_gb=40)
    monkeypatch.setattr("gpudesk.catalog.loader.bundled_catalog_dir", lambda: folder)
    return folder


@pytest.fixture
def use_fake() -> Iterator[None]:
    yield
    set_default_nvml(None)


def _run(capsys: pytest.CaptureFixture[str], fake: object, *argv: str) -> tuple[int, str, str]:
    set_default_nvml(Nvml(module=fake))
    code = main(["detect", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_two_gpus_json(
    capsys: pytest.CaptureFixture[str], small_catalog: Path, use_fake: None
) -> None:
    code, out, _ = _run(capsys, fakes.two_gpus(), "--json")
    data = json.loads(out)
    assert code == 0
    assert set(data) >= CONTRACT_KEYS
    assert data["status"] == "ok"
    assert data["driver_version"] == "550.54.14"
    assert data["cuda_driver_version"] == "12.4"
    assert data["cpu"]["threads"] >= 1
    assert "timestamp" in data and "ram_total_gib" in data
    first, second = data["gpus"]
    assert first["name"] == "NVIDIA GeForce RTX 4090"
    assert first["memory_total_mib"] == 24564
    assert (first["catalog_id"], first["catalog_match"]) == ("rtx-4090", "pci_device_id")
    assert (second["catalog_id"], second["catalog_match"]) == (
        "rtx-3080-12gb",
        "name_and_memory",
    )
    assert second["catalog_candidates"] == ["rtx-3080-10gb"]


def test_unsupported_fields_are_null_in_json(
    capsys: pytest.CaptureFixture[str], small_catalog: Path, use_fake: None
) -> None:
    code, out, _ = _run(capsys, fakes.unsupported_fields(), "--json")
    (gpu,) = json.loads(out)["gpus"]
    assert code == 0
    assert gpu["fan_percent"] is None and gpu["ecc_enabled"] is None
    assert gpu["power_limit_w"] is None
    assert gpu["catalog_id"] is None and gpu["catalog_match"] == "none"


def test_mig_json_lists_instances_linked_to_the_parent(
    capsys: pytest.CaptureFixture[str], small_catalog: Path, use_fake: None
) -> None:
    code, out, _ = _run(capsys, fakes.mig_a100(), "--json")
    gpus = json.loads(out)["gpus"]
    assert code == 0
    assert [gpu["kind"] for gpu in gpus] == ["gpu", "mig", "mig"]
    assert {gpu["parent_uuid"] for gpu in gpus[1:]} == {gpus[0]["uuid"]}
    assert [gpu["catalog_id"] for gpu in gpus] == ["a100-40gb-sxm4"] * 3
    assert gpus[1]["catalog_match"] == "parent_gpu"


@pytest.mark.parametrize(
    ("scenario", "status"),
    [
        ("driver_not_loaded", "driver_not_loaded"),
        ("version_mismatch", "version_mismatch"),
        ("no_permission", "no_permission"),
        ("zero_devices", "no_devices"),
    ],
)
def test_nothing_detected_exits_3_with_status_and_hint(
    capsys: pytest.CaptureFixture[str],
    small_catalog: Path,
    use_fake: None,
    scenario: str,
    status: str,
) -> None:
    code, out, _ = _run(capsys, fakes.SCENARIOS[scenario](), "--json")
    data = json.loads(out)
    assert code == 3
    assert data["status"] == status
    assert data["hint"] and data["gpus"] == []
    code, text, _ = _run(
        capsys,
        fakes.SCENARIOS[scenario](),
    )
    assert code == 3
    assert f"[{status}]" in text and "hint: " in text
    assert "CPU  " in text and "RAM  " in text


def test_all_gpus_lost_exits_3(
    capsys: pytest.CaptureFixture[str], small_catalog: Path, use_fake: None
) -> None:
    fake = fakes.FakePynvml([fakes.rtx_4090(lost=True)])
    code, out, _ = _run(capsys, fake, "--json")
    data = json.loads(out)
    assert code == 3
    assert data["status"] == "gpu_lost"
    assert data["gpus"][0]["lost"] is True


def test_readable_summary(
    capsys: pytest.CaptureFixture[str], small_catalog: Path, use_fake: None
) -> None:
    code, out, _ = _run(capsys, fakes.two_gpus())
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "NVIDIA driver 550.54.14, CUDA 12.4, 2 GPUs"
    assert "GPU 0  NVIDIA GeForce RTX 4090" in lines
    assert "  catalog   rtx-4090 (by PCI device id)" in lines
    assert "  memory    1,234 / 24,564 MiB used, 384-bit bus" in lines
    assert "  power     25.5 W of 450 W limit" in lines
    assert "  PCIe      gen 1 x16 (max gen 4 x16)" in lines
    assert "  load      GPU 3 %, memory 1 %, 2 processes" in lines


def test_readable_summary_shows_na_and_mig(
    capsys: pytest.CaptureFixture[str], small_catalog: Path, use_fake: None
) -> None:
    _, out, _ = _run(capsys, fakes.unsupported_fields())
    assert "  power     n/a" in out
    assert "fan n/a" in out and "ECC n/a" in out
    _, out, _ = _run(capsys, fakes.mig_a100())
    assert "MIG on, 2 instances" in out
    assert "  MIG 1  NVIDIA A100-SXM4-40GB MIG 3g.20gb  (GI 2, CI 0, 42 SMs" in out


def test_unexpected_failure_exits_1(
    capsys: pytest.CaptureFixture[str],
    small_catalog: Path,
    use_fake: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr("gpudesk.hardware.detect.read_cpu", broken)
    code, out, err = _run(capsys, fakes.two_gpus(), "--json")
    assert code == 1
    assert out == ""
    assert "detection failed unexpectedly: RuntimeError: boom" in err


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="an NVIDIA driver is installed here"
)
def test_real_nvml_end_to_end_on_this_machine_without_a_driver() -> None:
    """The real binding, real process: no driver here, so exit 3 with status and hint."""
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    result = subprocess.run(
        [sys.executable, "-m", "gpudesk", "detect", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 3, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "library_not_found"
    assert "NVIDIA driver" in data["hint"]
    assert data["detail"] == "NVML Shared Library Not Found"
    assert data["gpus"] == []
    assert data["cpu"]["threads"] >= 1
    text = subprocess.run(
        [sys.executable, "-m", "gpudesk", "detect"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert text.returncode == 3
    assert text.stdout.startswith("No GPU detected: NVIDIA driver not installed")
    assert "hint: Install the NVIDIA driver" in text.stdout


def _library_missing() -> fakes.FakePynvml:
    import pynvml

    return fakes.init_failure(pynvml.NVMLError_LibraryNotFound)


def test_done_when_mi300x_arc_and_a_driverless_4090_from_a_fake_sysfs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, use_fake: None
) -> None:
    """The issue's check, against the bundled catalog: all three listed, exit 0."""
    from hardware import fake_sysfs as trees

    trees.done_when_tree(tmp_path / "sys")
    code, out, _ = _run(capsys, _library_missing(), "--sysfs", str(tmp_path / "sys"), "--json")
    data = json.loads(out)
    assert code == 0
    assert set(data) >= CONTRACT_KEYS | {"status_text", "notes"}
    by_bus = {gpu["pci_bus_id"]: gpu for gpu in data["gpus"]}
    assert set(by_bus) == {trees.MI300X, trees.ARC, trees.RTX_4090}
    mi300x, arc, rtx = by_bus[trees.MI300X], by_bus[trees.ARC], by_bus[trees.RTX_4090]
    assert (mi300x["vendor"], mi300x["source"], mi300x["driver_loaded"]) == ("AMD", "sysfs", True)
    assert (mi300x["catalog_id"], mi300x["catalog_match"]) == ("mi300x", "pci_device_id")
    assert mi300x["memory_total_mib"] == 192 * 1024 and mi300x["memory_used_mib"] == 3 * 1024
    assert (arc["vendor"], arc["catalog_id"]) == ("Intel", "arc-b580")
    assert (rtx["vendor"], rtx["catalog_id"], rtx["driver_loaded"]) == ("NVIDIA", "rtx-4090", False)
    assert rtx["name"] == "NVIDIA GeForce RTX 4090"  # the catalog's name: sysfs has only ids
    assert "No kernel driver is bound" in rtx["hint"]
    assert data["status"] == "library_not_found"  # NVML's own status, as before
    assert data["status_text"].startswith("1 NVIDIA GPU via sysfs (driver not loaded)")
    assert "1 AMD GPU via sysfs" in data["status_text"]

    code, text, _ = _run(capsys, _library_missing(), "--sysfs", str(tmp_path / "sys"))
    assert code == 0
    # 86 characters: wrapped under the label at 80 columns (issue 42 item 12)
    assert (
        f"GPU 0 NVIDIA GeForce RTX 4090 on {trees.RTX_4090}, driver not loaded [NVIDIA, via sysfs]"
    ) in " ".join(text.split())
    assert "  memory    3,072 / 196,608 MiB used" in text
    assert "  PCIe      gen 5 x16 (max gen 5 x16)" in text


def test_sysfs_that_is_not_a_folder_is_bad_usage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, use_fake: None
) -> None:
    code, out, err = _run(capsys, fakes.two_gpus(), "--sysfs", str(tmp_path / "nope"), "--json")
    assert code == 2 and out == ""
    assert "--sysfs" in err and "not a folder" in err


def test_an_empty_bus_and_no_nvml_exits_3(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, use_fake: None
) -> None:
    code, out, _ = _run(capsys, _library_missing(), "--sysfs", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 3 and data["gpus"] == []
    assert data["status_text"] == (
        "No GPU found; NVIDIA driver not installed (NVML library not found)"
    )
