"""``gpudesk exporter`` over the fake libnvidia-ml.so.1 (the real binding) and fake sysfs trees."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import fake_nvml_lib
import pytest
from hardware import fake_sysfs
from hardware.fake_sysfs import FakeSysfs
from telemetry.exporter_process import running_exporter, values

H100 = "GPU-h100aaaa-1111-2222-3333-444455556666"
RTX = "GPU-4090bbbb-1111-2222-3333-444455556666"
DEVICE_LABELS = {"uuid", "pci_bus_id", "index", "name", "vendor", "catalog_id", "hostname"}
#: The families every answering fake GPU reports (the H100 and the RTX 4090 both).
COMMON = (
    "gpudesk_gpu_utilization_ratio",
    "gpudesk_gpu_memory_used_bytes",
    "gpudesk_gpu_memory_total_bytes",
    "gpudesk_gpu_temperature_celsius",
    "gpudesk_gpu_power_watts",
    "gpudesk_gpu_power_limit_watts",
    "gpudesk_gpu_clock_hertz",
    "gpudesk_gpu_clock_max_hertz",
    "gpudesk_gpu_pcie_link_generation",
    "gpudesk_gpu_pcie_link_width",
    "gpudesk_gpu_pcie_replays_total",
    "gpudesk_gpu_throttle_reason_active",
    "gpudesk_gpu_catalog_memory_bandwidth_bytes_per_second",
    "gpudesk_gpu_catalog_dense_bf16_flops",
)


def test_two_fake_gpus_serve_every_family_with_their_labels(pids: Path) -> None:
    settings = {"FAKE_NVML_XID": "79,79,48", "FAKE_NVML_PCIE_REPLAYS": "7"}
    with running_exporter(pids, ["--interval", "0.2"], settings=settings) as exporter:
        time.sleep(0.5)  # a few collections: the XID events are taken as they come
        samples = exporter.samples()
    assert values(samples, "gpudesk_gpu_up", uuid=H100) == [1.0]
    assert values(samples, "gpudesk_gpu_up", uuid=RTX) == [1.0]
    up = next(sample for sample in samples if sample.name == "gpudesk_gpu_up")
    assert set(up.labels) >= DEVICE_LABELS
    for name in COMMON:
        for uuid in (H100, RTX):
            assert values(samples, name, uuid=uuid), f"{name} missing for {uuid}"
    h100 = {"uuid": H100, "vendor": "NVIDIA", "catalog_id": "h100-sxm5", "index": "0"}
    assert values(samples, "gpudesk_gpu_power_watts", **h100) == [72.0]
    assert values(samples, "gpudesk_gpu_memory_total_bytes", **h100) == [81559 * 1024**2]
    assert values(samples, "gpudesk_gpu_clock_hertz", uuid=H100, clock="graphics") == [345e6]
    assert values(samples, "gpudesk_gpu_temperature_celsius", uuid=H100, sensor="gpu") == [33.0]
    # The catalog join: H100 SXM5's 3,350 GB/s and 989.4 dense BF16 TFLOPS (catalog file).
    bandwidth = values(samples, "gpudesk_gpu_catalog_memory_bandwidth_bytes_per_second", **h100)
    assert bandwidth == [3350e9]
    assert values(samples, "gpudesk_gpu_catalog_dense_bf16_flops", **h100) == [
        pytest.approx(989.4e12)
    ]
    assert values(samples, "gpudesk_gpu_pcie_replays_total", uuid=H100) == [7.0]
    assert values(samples, "gpudesk_gpu_throttle_reason_active", uuid=H100, reason="gpu_idle") == [
        1.0
    ]
    assert values(samples, "gpudesk_gpu_xid_events_total", uuid=H100, xid="79") == [2.0]
    assert values(samples, "gpudesk_gpu_xid_events_total", uuid=H100, xid="48") == [1.0]
    assert values(samples, "gpudesk_gpu_ecc_errors_total", uuid=H100, type="uncorrected") == [0.0]
    # Fields one device does not report are absent for it, never 0.
    assert values(samples, "gpudesk_gpu_fan_ratio", uuid=H100) == []
    assert values(samples, "gpudesk_gpu_fan_ratio", uuid=RTX) == [0.3]
    assert values(samples, "gpudesk_gpu_energy_joules_total", uuid=RTX) == []
    assert values(samples, "gpudesk_gpu_energy_joules_total", uuid=H100)
    assert values(samples, "gpudesk_gpu_ecc_errors_total", uuid=RTX) == []
    assert values(samples, "gpudesk_gpu_remapped_rows_total", uuid=RTX) == []
    assert values(samples, "gpudesk_gpu_nvlink_errors_total") == []
    # No --processes: no per-process series.
    assert values(samples, "gpudesk_process_memory_used_bytes") == []
    assert values(samples, "gpudesk_exporter_source_available", source="nvml") == [1.0]


def test_a_gpu_lost_mid_scrape_is_down_without_readings_and_the_rest_is_served(
    pids: Path,
) -> None:
    # GPU 0 answers discovery and a few collections, then NVML says GPU_IS_LOST.
    settings = {"FAKE_NVML_LOSE_AFTER": "150"}
    with running_exporter(pids, ["--interval", "0.1"], settings=settings) as exporter:
        deadline = time.monotonic() + 20
        seen_up = False
        while time.monotonic() < deadline:
            samples = exporter.samples()
            state = values(samples, "gpudesk_gpu_up", uuid=H100)
            seen_up = seen_up or state == [1.0]
            if state == [0.0]:
                break
            time.sleep(0.1)
        assert seen_up, "GPU 0 was never seen up: the fake lost it during discovery"
        assert values(samples, "gpudesk_gpu_up", uuid=H100) == [0.0]
        h100_series = [s for s in samples if s.labels.get("uuid") == H100]
        assert {s.name for s in h100_series} == {"gpudesk_gpu_up"}
        assert values(samples, "gpudesk_gpu_up", uuid=RTX) == [1.0]
        assert values(samples, "gpudesk_gpu_power_watts", uuid=RTX) == [25.5]
        # Still serving, and still down on the next scrape.
        assert values(exporter.samples(), "gpudesk_gpu_up", uuid=H100) == [0.0]


def test_mig_instances_are_their_own_series_under_their_parent(pids: Path) -> None:
    with running_exporter(pids, scenario="mig") as exporter:
        samples = exporter.samples()
    parent = "GPU-a100cccc-1111-2222-3333-444455556666"
    migs = [
        s
        for s in samples
        if s.name == "gpudesk_gpu_memory_used_bytes" and s.labels["parent_uuid"] == parent
    ]
    assert {s.labels["uuid"] for s in migs} == {
        "MIG-11111111-aaaa-bbbb-cccc-000000000001",
        "MIG-22222222-aaaa-bbbb-cccc-000000000002",
    }
    assert {s.labels["mig_profile"] for s in migs} == {"3g.20gb"}
    assert sorted(s.value for s in migs) == [13 * 1024**2, 1500 * 1024**2]
    assert {s.labels["catalog_id"] for s in migs} == {"a100-40gb-sxm4"}


def test_processes_are_exported_only_when_asked(pids: Path) -> None:
    with running_exporter(pids, ["--processes"]) as exporter:
        samples = exporter.samples()
    memory = values(samples, "gpudesk_process_memory_used_bytes", uuid=H100, pid="4242")
    assert memory == [512 * 1024**2]
    assert values(samples, "gpudesk_process_utilization_ratio", uuid=H100, pid="4242") == [0.4]
    share = values(samples, "gpudesk_process_memory_utilization_ratio", uuid=H100, pid="4343")
    assert share == [0.1]
    # The RTX 4090 runs nothing: no process series for it at all.
    assert [
        s for s in samples if s.name.startswith("gpudesk_process") and s.labels["uuid"] == RTX
    ] == []
    process = next(s for s in samples if s.name == "gpudesk_process_memory_used_bytes")
    assert {"pid", "user", "container", "pod", "uuid", "hostname"} <= set(process.labels)


def test_amd_and_intel_from_sysfs_beside_nvml(pids: Path, tmp_path: Path) -> None:
    tree = FakeSysfs(tmp_path / "sys")
    tree.add(fake_sysfs.mi300x())
    tree.add(fake_sysfs.arc_b580())
    settings = {"GPUDESK_SYSFS_ROOT": str(tree.root)}
    with running_exporter(pids, settings=settings) as exporter:
        samples = exporter.samples()
    # NVML's GPUs are 0 and 1; the others follow in bus order (04:00.0, then 0c:00.0).
    amd = {"vendor": "AMD", "pci_bus_id": fake_sysfs.MI300X, "index": "3"}
    intel = {"vendor": "Intel", "pci_bus_id": fake_sysfs.ARC, "index": "2"}
    assert values(samples, "gpudesk_gpu_up", **amd) == [1.0]
    assert values(samples, "gpudesk_gpu_up", **intel) == [1.0]
    assert values(samples, "gpudesk_gpu_utilization_ratio", **amd) == [0.37]
    assert values(samples, "gpudesk_gpu_memory_total_bytes", **amd) == [192 * 1024**3]
    assert values(samples, "gpudesk_gpu_power_watts", **amd) == [pytest.approx(152.3)]
    assert values(samples, "gpudesk_gpu_memory_total_bytes", **intel) == [12 * 1024**3]
    # The Arc publishes no name in sysfs: its catalog entry's name and id label it.
    assert values(samples, "gpudesk_gpu_up", name="Intel Arc B580", catalog_id="arc-b580") == [1.0]
    # Intel's sysfs has no utilisation; the MI300X's has no energy counter.
    assert values(samples, "gpudesk_gpu_utilization_ratio", **intel) == []
    assert values(samples, "gpudesk_gpu_energy_joules_total", **amd) == []
    assert values(samples, "gpudesk_exporter_source_available", source="sysfs") == [1.0]


def test_with_no_gpu_it_keeps_serving_its_own_health(pids: Path) -> None:
    with running_exporter(pids, scenario="zero") as exporter:
        samples = exporter.samples()
    assert values(samples, "gpudesk_gpu_up") == []
    assert values(samples, "gpudesk_exporter_source_available", source="sysfs") == [0.0]
    assert values(samples, "gpudesk_exporter_source_available", source="apple") == [0.0]
    assert values(samples, "process_resident_memory_bytes")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("host", ["0.0.0.0", "", "[::]", "gpu-node-1"])
def test_a_non_loopback_listen_without_allow_remote_exits_2_and_binds_nothing(
    host: str,
) -> None:
    port = _free_port()
    done = subprocess.run(
        [sys.executable, "-m", "gpudesk", "exporter", "--listen", f"{host}:{port}"],
        env=fake_nvml_lib.environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "--allow-remote" in done.stderr and "no authentication" in done.stderr
    assert "serving" not in done.stderr
    # Nothing was bound: the port is still free.
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", port))


def test_a_port_in_use_is_one_line_and_exit_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "gpudesk", "exporter", "--listen", f"127.0.0.1:{port}"],
            env=fake_nvml_lib.environment(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"gpudesk: cannot listen on 127.0.0.1:{port}")
    )


def test_the_refusal_comes_before_any_socket_is_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpudesk.cli import main

    bound: list[object] = []
    real_bind = socket.socket.bind

    def recording_bind(self: socket.socket, address: object) -> None:
        bound.append(address)
        real_bind(self, address)

    monkeypatch.setattr(socket.socket, "bind", recording_bind)
    assert main(["exporter", "--listen", f"0.0.0.0:{_free_port()}"]) == 2
    assert bound == [("127.0.0.1", 0)]  # only _free_port's own probe
