"""Detection through the real nvidia-ml-py, against a fake libnvidia-ml.so.1 built in C.

Each test runs ``python -m gpudesk ...`` (or a short script) in a subprocess
whose ``LD_LIBRARY_PATH`` finds the fake library, so every call goes through
the binding's own ctypes wrappers, symbol lookup and error classes.
"""

from __future__ import annotations

import json
from typing import Any

import fake_nvml_lib as fake
import pytest


def _gpus(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document["gpus"])


def test_struct_layouts_match_the_bindings_ctypes_structures() -> None:
    code = """
import ctypes, json, os, pynvml
from gpudesk.hardware import nvml as ours
folder = os.environ["LD_LIBRARY_PATH"].split(os.pathsep)[0]
lib = ctypes.CDLL(os.path.join(folder, "libnvidia-ml.so.1"))
lib.fake_nvml_layout.restype = ctypes.c_long
lib.fake_nvml_layout.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
pairs = {
    "nvmlMemory_t": pynvml.c_nvmlMemory_t,
    "nvmlMemory_v2_t": pynvml.c_nvmlMemory_v2_t,
    "nvmlPciInfo_t": pynvml.nvmlPciInfo_t,
    "nvmlProcessInfo_t": pynvml.c_nvmlProcessInfo_v3_t,
    "nvmlProcessInfo_v1_t": ours._ProcessInfoV1,
    "nvmlUtilization_t": pynvml.c_nvmlUtilization_t,
    "nvmlDeviceAttributes_t": pynvml.c_nvmlDeviceAttributes,
}
out = {}
for c_name, structure in pairs.items():
    out[c_name] = {"": [lib.fake_nvml_layout(c_name.encode(), b""), ctypes.sizeof(structure)]}
    for field, *_ in structure._fields_:
        c_offset = lib.fake_nvml_layout(c_name.encode(), field.encode())
        if c_offset >= 0:
            out[c_name][field] = [c_offset, getattr(structure, field).offset]
out["memory_v2_version"] = [lib.fake_nvml_layout(b"memory_v2_version", b""), pynvml.nvmlMemory_v2]
print(json.dumps(out))
"""
    layouts = fake.run_python(code)
    assert layouts.pop("memory_v2_version")[0] == 0x02000028
    checked = 0
    for structure, fields in layouts.items():
        for field, (c_value, ctypes_value) in fields.items():
            assert c_value == ctypes_value, (structure, field or "sizeof")
            checked += 1
        assert len(fields) >= 3, structure  # sizeof plus at least two offsets compared
    assert checked >= 25


def test_two_gpus_every_field_through_the_real_binding() -> None:
    code, document, _ = fake.detect_json()
    assert code == 0
    assert document["status"] == "ok"
    assert (document["driver_version"], document["cuda_driver_version"]) == ("535.288.01", "12.2")
    h100, rtx = _gpus(document)
    assert (h100["name"], h100["catalog_id"], h100["catalog_match"]) == (
        "NVIDIA H100 80GB HBM3",
        "h100-sxm5",
        "pci_device_id",
    )
    assert (h100["pci_device_id"], h100["pci_vendor_id"]) == ("0x2330", "0x10de")
    assert h100["pci_bus_id"] == "00000000:1B:00.0"
    # v2: "used" excludes the 512 MiB the driver reserves, as nvidia-smi shows
    assert (h100["memory_total_mib"], h100["memory_used_mib"]) == (81559, 1024)
    assert (h100["memory_reserved_mib"], h100["memory_used_source"]) == (512, "nvml_v2")
    assert h100["memory_free_mib"] == 81559 - 1024 - 512
    assert h100["running_process_count"] == 2  # pid 4242 is compute and graphics
    assert h100["fan_percent"] is None  # passively cooled: NotSupported, n/a only
    assert h100["ecc_enabled"] is True and h100["mig_enabled"] is False
    assert h100["compute_mode"] == "default"
    assert (h100["ecc_uncorrected_volatile"], h100["remapped_rows_pending"]) == (0, False)
    assert h100["retired_pages_pending"] is None  # Hopper remaps rows instead
    assert rtx["catalog_id"] == "rtx-4090"
    assert rtx["clock_event_reasons"] == ["sw_power_cap", "sw_thermal_slowdown"]
    assert rtx["running_process_count"] == 0
    assert rtx["ecc_enabled"] is None and rtx["ecc_uncorrected_volatile"] is None


def test_driver_without_v3_process_symbols_falls_back_to_v2() -> None:
    code, document, stderr = fake.detect_json(fake.NO_V3)
    assert code == 0, stderr
    assert "detection failed" not in stderr
    h100, rtx = _gpus(document)
    assert h100["running_process_count"] == 2
    assert (h100["catalog_id"], rtx["catalog_id"]) == ("h100-sxm5", "rtx-4090")


def test_old_driver_without_v3_or_v2_symbols() -> None:
    """A pre-R470 driver: unversioned process queries, v1 memory, no newer queries."""
    code, document, stderr = fake.detect_json(fake.OLD_DRIVER)
    assert code == 0, stderr
    h100, rtx = _gpus(document)
    assert h100["running_process_count"] == 2  # through the unversioned symbol, v1 struct
    assert (h100["memory_used_source"], h100["memory_used_mib"]) == ("nvml_v1", 1536)
    assert h100["memory_reserved_mib"] is None
    assert h100["memory_bus_width_bits"] is None and h100["cuda_cores"] is None
    assert h100["clock_event_reasons"] == ["gpu_idle"]  # the older "throttle" name
    assert document["cuda_driver_version"] == "12.2"
    assert (h100["catalog_id"], rtx["catalog_id"]) == ("h100-sxm5", "rtx-4090")


def test_driver_without_any_process_symbol_only_loses_the_process_count() -> None:
    code, document, _ = fake.detect_json(fake.NO_PROCESS_QUERIES)
    _, full, _ = fake.detect_json()
    assert code == 0
    for gpu, reference in zip(_gpus(document), _gpus(full), strict=True):
        assert gpu["running_process_count"] is None
        differing = {key for key in reference if gpu.get(key) != reference[key]}
        assert differing == {"running_process_count"}


def test_the_benchmarks_nvml_lookup_survives_the_old_driver() -> None:
    code = """
import json
from gpudesk.bench.devices import DeviceInfo
from gpudesk.bench.telemetry import describe_cuda_device
from gpudesk.catalog.loader import load_catalog
device = DeviceInfo(kind="cuda", index=0, name="NVIDIA H100 80GB HBM3",
                    uuid="h100aaaa-1111-2222-3333-444455556666")
catalog_id, env, source = describe_cuda_device(device, load_catalog().entries)
source.start(); telemetry = source.stop()
print(json.dumps({"catalog_id": catalog_id, "env": env, "available": telemetry.available}))
"""
    found = fake.run_python(code, fake.NO_V3)
    assert found["catalog_id"] == "h100-sxm5"
    assert found["env"]["nvml"] == "ok"
    assert found["env"]["nvml_running_process_count"] == 2
    assert found["available"] is True


def test_mig_instances_found_and_looked_up_by_their_mig_uuid() -> None:
    code, document, _ = fake.detect_json(scenario="mig")
    assert code == 0
    parent, *instances = _gpus(document)
    assert parent["mig_enabled"] is True and parent["mig_instance_count"] == 2
    assert [gpu["kind"] for gpu in instances] == ["mig", "mig"]
    assert [gpu["mig_gpu_instance_id"] for gpu in instances] == [1, 2]
    assert all(gpu["parent_uuid"] == parent["uuid"] for gpu in instances)
    assert all(gpu["catalog_id"] == "a100-40gb-sxm4" for gpu in instances)
    # the monitor and the benchmark find an instance by its MIG UUID
    script = """
import json
from gpudesk.hardware.nvml import Nvml
nvml = Nvml()
handle = nvml.handle_by_uuid("MIG-22222222-aaaa-bbbb-cccc-000000000002")
bare = nvml.handle_by_uuid("22222222-aaaa-bbbb-cccc-000000000002")
snapshot = nvml.read_device(bare, 0)
sample = nvml.sample(handle, "MIG-22222222-aaaa-bbbb-cccc-000000000002", 1)
print(json.dumps({"snapshot": snapshot.model_dump(mode="json"),
                  "sample_memory": sample.memory_used_mib, "lost": sample.lost}))
"""
    found = fake.run_python(script, scenario="mig")
    snapshot = found["snapshot"]
    assert (snapshot["kind"], snapshot["index"], snapshot["sm_count"]) == ("mig", 1, 42)
    assert snapshot["parent_uuid"] == parent["uuid"]
    assert snapshot["pci_device_id"] == "0x20b0"
    assert (found["sample_memory"], found["lost"]) == (1500, False)


def test_gpu_lost_mid_run_keeps_the_other_gpu() -> None:
    code, document, _ = fake.detect_json(settings={"FAKE_NVML_LOSE_AFTER": "3"})
    assert code == 0  # one GPU still answers
    assert document["status"] == "gpu_lost"
    lost, alive = _gpus(document)
    assert lost["lost"] is True
    assert lost["name"] == "NVIDIA H100 80GB HBM3"  # what was read before it went
    assert lost["memory_total_mib"] is None
    assert alive["lost"] is False and alive["catalog_id"] == "rtx-4090"


@pytest.mark.parametrize(
    ("scenario", "flags", "status"),
    [
        ("driver_not_loaded", (), "driver_not_loaded"),
        ("rm_mismatch", (), "version_mismatch"),
        ("no_permission", (), "no_permission"),
        ("zero", (), "no_devices"),
        ("two_gpus", fake.NO_INIT_AT_ALL, "driver_too_old"),
    ],
)
def test_nothing_usable_exits_3_with_a_typed_status_and_hint(
    scenario: str, flags: tuple[str, ...], status: str
) -> None:
    code, document, _ = fake.detect_json(flags, scenario)
    assert code == 3
    assert document["status"] == status
    assert document["gpus"] == []
    assert document["hint"] and document["detail"]
    assert document["cpu"]["threads"] >= 1


def test_driver_too_old_is_worded_for_a_person() -> None:
    done = fake.run_gpudesk(["detect"], fake.NO_INIT_AT_ALL)
    assert done.returncode == 3
    assert "driver_too_old" in done.stdout
    assert "update the NVIDIA driver" in done.stdout
    assert "Traceback" not in done.stderr


def test_driver_with_nvml_init_v2_but_not_init_with_flags_still_works() -> None:
    code, document, _ = fake.detect_json(fake.ONLY_INIT_V2)
    assert code == 0
    assert [gpu["catalog_id"] for gpu in _gpus(document)] == ["h100-sxm5", "rtx-4090"]


def test_one_gpu_without_permission_does_not_hide_the_other() -> None:
    code, document, _ = fake.detect_json(scenario="no_permission_first")
    assert code == 0
    (gpu,) = _gpus(document)
    assert (gpu["index"], gpu["name"]) == (1, "NVIDIA GeForce RTX 4090")
    assert "device 0" in document["detail"] and "Insufficient Permissions" in document["detail"]
    text = fake.run_gpudesk(["detect"], scenario="no_permission_first").stdout
    assert "device 0" in text


def test_the_monitor_reads_live_samples_through_the_binding() -> None:
    script = """
import json
from gpudesk.hardware.detect import detect
from gpudesk.hardware.monitor import Monitor
from gpudesk.hardware.nvml import default_nvml
result = detect()
monitor = Monitor(default_nvml(), result.gpus)
samples = monitor.sample().devices
print(json.dumps([sample.model_dump(mode="json") for sample in samples]))
"""
    samples = fake.run_python(script)
    assert [sample["memory_used_mib"] for sample in samples] == [1024, 700]
    assert [sample["power_draw_w"] for sample in samples] == [72.0, 25.5]


def test_json_is_strict() -> None:
    done = fake.run_gpudesk(["detect", "--json"], fake.OLD_DRIVER)
    document = json.loads(done.stdout, parse_constant=lambda name: pytest.fail(name))
    assert document["gpus"]


@pytest.mark.gui  # Qt in the subprocess
def test_the_gui_shows_every_card_on_a_driver_without_v3_symbols() -> None:
    script = """
import json, os
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
app = QApplication([])
from gpudesk.catalog.loader import load_catalog
from gpudesk.ui.devices_view import DevicesView
from gpudesk.ui.state import AppState
view = DevicesView(AppState(catalog=load_catalog()), autostart=False)
view.refresh()
while view.busy:
    app.processEvents()
app.processEvents()
print(json.dumps({"cards": [card.gpu.name for card in view.cards],
                  "status": view.result.status.value,
                  "matches": [match.catalog_id for match in view.matches]}))
view.shutdown()
"""
    found = fake.run_python(script, fake.NO_V3)
    assert found["status"] == "ok"
    assert found["cards"] == ["NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090"]
    assert found["matches"] == ["h100-sxm5", "rtx-4090"]
