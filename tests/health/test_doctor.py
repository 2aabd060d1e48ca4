"""The doctor's core: nvidia-smi parsing, agreement, findings, typical fractions."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest
from bench.fake_gpu_modules import make_fake_torch
from fake_nvidia_smi import H100_ROW, RTX_4090_ROW
from hypothesis import given, strategies as st

from gpudesk.bench.backends.torch_backend import TorchBackend
from gpudesk.catalog.loader import load_catalog
from gpudesk.hardware.models import DetectionResult, GpuSnapshot, NvmlStatus
from gpudesk.health import doctor


def test_parse_nvidia_smis_real_formats() -> None:
    h100, rtx = doctor.parse_smi_csv(f"{H100_ROW}\n{RTX_4090_ROW}\n\n")
    assert h100["pci.device_id"] == "0x233010DE"
    assert h100["memory.total"] == "81559"
    assert rtx["mig.mode.current"] is None  # "[N/A]"
    assert rtx["name"] == "NVIDIA GeForce RTX 4090"


@given(st.text(max_size=3000))
def test_any_output_parses_or_fails_typed(text: str) -> None:
    try:
        rows = doctor.parse_smi_csv(text)
    except doctor.NvidiaSmiOutputError as exc:
        assert exc.line_number >= 1 and exc.reason
        return
    for row in rows:
        assert set(row) == set(doctor.SMI_FIELDS)
        assert all(
            value is None or len(value) <= doctor.MAX_SMI_VALUE_CHARS for value in row.values()
        )


def _gpu(**changes: object) -> GpuSnapshot:
    fields: dict[str, object] = {
        "index": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": "GPU-h100aaaa-1111-2222-3333-444455556666",
        "pci_bus_id": "00000000:1B:00.0",
        "pci_device_id": "0x2330",
        "pci_vendor_id": "0x10de",
        "memory_total_mib": 81559,
        "power_limit_w": 700.0,
        "sm_clock_max_mhz": 1980,
        "memory_clock_max_mhz": 2619,
        "mig_enabled": False,
    }
    fields.update(changes)
    return GpuSnapshot.model_validate(fields)


def test_agreement_field_by_field() -> None:
    (row,) = doctor.parse_smi_csv(H100_ROW)
    fields = doctor.agreement(_gpu(), "535.288.01", row)
    assert all(field.match for field in fields.values())
    fields = doctor.agreement(
        _gpu(power_limit_w=699.7, pci_bus_id="00000000:1b:00.0"), "535.288.01", row
    )
    assert fields["power.limit"].match and fields["pci.bus_id"].match
    fields = doctor.agreement(_gpu(power_limit_w=650.0, mig_enabled=True), "550.1", row)
    assert [name for name, f in fields.items() if not f.match] == [
        "driver_version",
        "power.limit",
        "mig.mode.current",
    ]
    # a value nvidia-smi printed that cannot be read never agrees
    broken = dict(row, **{"memory.total": "lots"})
    assert not doctor.agreement(_gpu(), "535.288.01", broken)["memory.total"].match
    # n/a on both sides agrees; n/a on one side does not
    missing = dict(row, **{"clocks.max.sm": None})
    assert not doctor.agreement(_gpu(), "535.288.01", missing)["clocks.max.sm"].match
    assert doctor.agreement(_gpu(sm_clock_max_mhz=None), "535.288.01", missing)[
        "clocks.max.sm"
    ].match


def test_the_typical_fractions_are_sourced_and_derived_from_measurements() -> None:
    typical = doctor.load_typical_fractions()
    h100 = typical.for_gemm("h100-sxm5", "bf16")
    assert h100 is not None
    assert h100.fraction == pytest.approx(794.5 / 989.0)
    assert "Maximum Achievable Matmul FLOPS" in h100.source and "https://" in h100.source
    assert typical.for_gemm("h200-sxm", "fp16") == h100
    a100 = typical.for_gemm("a100-80gb-sxm4", "bf16")
    assert a100 is not None and a100.fraction == pytest.approx(271.2 / 312.0)
    # a GPU the table lacks gets the lowest published NVIDIA fraction, not a made-up one
    other = typical.for_gemm("rtx-4090", "bf16")
    assert other is not None and other.fraction == pytest.approx(1822.0 / 2500.0)
    assert typical.copy.fraction == 0.85 and "not a published measurement" in typical.copy.source
    catalog_ids = {entry.id for entry in load_catalog().entries}
    assert {key[0] for key in typical.gemm} <= catalog_ids


def _figure(
    test: str, dtype: str, value: float, unit: str, fraction: float
) -> doctor.ThroughputFigure:
    return doctor.ThroughputFigure.model_validate(
        {"test": test, "dtype": dtype, "value": value, "unit": unit, "fraction_of_peak": fraction}
    )


def test_throughput_below_typical_is_a_warning_citing_the_source() -> None:
    typical = doctor.load_typical_fractions()
    slow = _figure("gemm", "bf16", 500.0, "TFLOPS", 500.0 / 989.0)
    fine = _figure("gemm", "fp16", 780.0, "TFLOPS", 780.0 / 989.0)
    copy = _figure("copy", "bytes", 2000.0, "GB/s", 2000.0 / 3350.0)
    warned, ok, copied = doctor.throughput_findings("h100-sxm5", [slow, fine, copy], typical)
    assert warned.severity == "warning" and "51% of the catalog peak" in warned.message
    assert "typical 80%" in warned.message and "Bekman" in warned.message
    assert ok.severity == "info" and "79%" in ok.message
    assert copied.severity == "warning" and copied.check == "copy"


@pytest.mark.parametrize(
    ("driver", "runtime", "severity"),
    [("12.2", "12.4", "warning"), ("11.8", "12.1", "error"), ("12.4", "12.4", None)],
)
def test_driver_too_old_for_the_installed_cuda_runtime(
    driver: str, runtime: str, severity: str | None
) -> None:
    found = doctor.runtime_findings(driver, [doctor.CudaRuntime("PyTorch 2.5.1", runtime)])
    assert [f.severity for f in found] == ([severity] if severity else [])
    if found:
        assert "PyTorch 2.5.1" in found[0].message and driver in found[0].message


def _detection(*gpus: GpuSnapshot) -> DetectionResult:
    return DetectionResult(
        timestamp=dt.datetime.now(dt.UTC),
        status=NvmlStatus.OK,
        hint="",
        driver_version="535.288.01",
        cuda_driver_version="12.2",
        gpus=gpus,
    )


def test_measure_throughput_matches_cuda_devices_by_uuid() -> None:
    gpu = _gpu(uuid="GPU-58e5d4b3-1c1f-4f0e-9d6a-0123456789ab", name="NVIDIA Fake 80GB")
    hidden = _gpu(index=1, uuid="GPU-ffffffff-0000-0000-0000-000000000000")
    backend = TorchBackend(make_fake_torch())
    figures, why_not = doctor.measure_throughput(
        _detection(gpu, hidden), load_catalog().entries, backends=[backend]
    )
    assert why_not is None
    assert set(figures) == {0}  # the GPU CUDA cannot see is not measured
    assert [(f.test, f.dtype) for f in figures[0]] == [
        ("gemm", "fp16"),
        ("gemm", "bf16"),
        ("copy", "bytes"),
    ]
    assert all(f.value > 0 and f.error is None for f in figures[0])


def test_check_machine_refuses_without_an_nvidia_gpu(tmp_path: Path) -> None:
    with pytest.raises(doctor.NoNvidiaGpuError):
        doctor.check_machine(_detection(), [], tmp_path / "nvidia-smi", skip_bench=True)


def test_find_nvidia_smi_on_a_search_path(tmp_path: Path) -> None:
    with pytest.raises(doctor.NvidiaSmiNotFoundError):
        doctor.find_nvidia_smi(search_path=str(tmp_path))
    tool = tmp_path / "nvidia-smi"
    tool.write_text(f"#!{sys.executable}\n")
    tool.chmod(0o755)
    assert doctor.find_nvidia_smi(search_path=f"/nonexistent:{tmp_path}") == tool


def test_an_amd_gpu_is_not_an_nvidia_gpu_to_check(tmp_path: Path) -> None:
    from gpudesk.hardware.models import DeviceSource

    amd = GpuSnapshot(index=0, name="AMD Radeon RX 7900 XTX", source=DeviceSource.SYSFS)
    with pytest.raises(doctor.NoNvidiaGpuError):
        doctor.check_machine(_detection(amd), [], tmp_path / "nvidia-smi", skip_bench=True)
