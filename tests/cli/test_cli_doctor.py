"""``gpudesk doctor`` end to end: the real nvidia-ml-py over the fake libnvidia-ml.so.1,
against fake nvidia-smi executables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fake_nvml_lib as fake
import pytest
from fake_nvidia_smi import AGREEING, H100_ROW, RTX_4090_ROW, write_fake_nvidia_smi


def doctor(
    smi: Path | None,
    *extra: str,
    scenario: str = "two_gpus",
    settings: dict[str, str] | None = None,
    path_env: str | None = None,
) -> tuple[int, str, str]:
    arguments = ["doctor", *extra]
    if smi is not None:
        arguments += ["--nvidia-smi", str(smi)]
    merged = dict(settings or {})
    if path_env is not None:
        merged["PATH"] = path_env
    done = fake.run_gpudesk(arguments, scenario=scenario, settings=merged)
    return done.returncode, done.stdout, done.stderr


def doctor_json(smi: Path, **kwargs: Any) -> tuple[int, dict[str, Any], str]:
    code, out, err = doctor(smi, "--json", "--skip-bench", **kwargs)
    return code, json.loads(out), err


def test_agreeing_nvidia_smi_exits_0(tmp_path: Path) -> None:
    code, report, err = doctor_json(write_fake_nvidia_smi(tmp_path))
    assert code == 0, err
    assert report["ok"] is True
    h100, rtx = report["gpus"]
    assert (h100["index"], h100["name"], h100["catalog_id"]) == (
        0,
        "NVIDIA H100 80GB HBM3",
        "h100-sxm5",
    )
    assert set(h100["agreement"]) == {
        "index",
        "name",
        "uuid",
        "pci.bus_id",
        "pci.device_id",
        "memory.total",
        "driver_version",
        "power.limit",
        "clocks.max.sm",
        "clocks.max.memory",
        "mig.mode.current",
    }
    assert all(field["match"] for gpu in report["gpus"] for field in gpu["agreement"].values())
    assert h100["agreement"]["pci.device_id"] == {
        "gpudesk": "0x233010DE",
        "nvidia_smi": "0x233010DE",
        "match": True,
    }
    assert h100["agreement"]["memory.total"]["gpudesk"] == 81559
    assert h100["agreement"]["power.limit"] == {
        "gpudesk": 700.0,
        "nvidia_smi": 700.0,
        "match": True,
    }
    assert rtx["agreement"]["mig.mode.current"] == {
        "gpudesk": None,
        "nvidia_smi": None,
        "match": True,
    }
    # the idle 4090's gen-1 link is normal; its power cap is worth a warning, not an error
    checks = {(f["check"], f["severity"]) for f in rtx["findings"]}
    assert ("pcie_link", "info") in checks and ("throttle", "warning") in checks
    assert all(f["severity"] != "error" for gpu in report["gpus"] for f in gpu["findings"])


def test_disagreeing_memory_exits_1_and_names_memory_total(tmp_path: Path) -> None:
    wrong = H100_ROW.replace(", 81559,", ", 81920,")
    smi = write_fake_nvidia_smi(tmp_path, rows=(wrong, RTX_4090_ROW))
    code, report, err = doctor_json(smi)
    assert code == 1
    assert report["ok"] is False
    field = report["gpus"][0]["agreement"]["memory.total"]
    assert field == {"gpudesk": 81559, "nvidia_smi": 81920, "match": False}
    assert "memory.total" in err
    code, text, err = doctor(smi, "--skip-bench")
    assert code == 1
    assert "X memory.total: gpudesk 81559, nvidia-smi 81920" in text
    assert "GPU 0: memory.total disagrees" in err


def test_readable_verdict(tmp_path: Path) -> None:
    code, text, _ = doctor(write_fake_nvidia_smi(tmp_path), "--skip-bench")
    assert code == 0
    assert "GPU 0  NVIDIA H100 80GB HBM3 [h100-sxm5]: OK" in text
    assert "nvidia-smi agrees on 11 of 11 fields" in text
    assert "GPU 1  NVIDIA GeForce RTX 4090 [rtx-4090]: WARN" in text
    assert text.rstrip().endswith("verdict: healthy")
    # long findings wrap onto indented lines so the report fits 80 columns
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert (
        "  pcie_link: PCIe gen 1 of 4 while idle: the link slows down to save power and\n" in text
    )


@pytest.mark.parametrize(
    ("settings", "check", "severity"),
    [
        ({"FAKE_NVML_ECC_VOLATILE": "2"}, "ecc", "error"),
        ({"FAKE_NVML_ECC_AGGREGATE": "3"}, "ecc", "warning"),
        ({"FAKE_NVML_REMAP_PENDING": "1"}, "remapped_rows", "error"),
        ({"FAKE_NVML_COMPUTE_MODE": "2"}, "compute_mode", "error"),
        ({"FAKE_NVML_PCIE": "5,5,8,16"}, "pcie_link", "warning"),
        ({"FAKE_NVML_THROTTLE": "0x40"}, "throttle", "error"),
        ({"FAKE_NVML_THROTTLE": "0x4"}, "throttle", "warning"),
    ],
)
def test_health_findings(
    tmp_path: Path, settings: dict[str, str], check: str, severity: str
) -> None:
    code, report, err = doctor_json(write_fake_nvidia_smi(tmp_path), settings=settings)
    findings = {(f["check"], f["severity"]) for f in report["gpus"][0]["findings"]}
    assert (check, severity) in findings, report["gpus"][0]["findings"]
    assert code == (1 if severity == "error" else 0), err
    if severity == "error":
        assert check in err


def test_no_nvidia_smi_exits_3(tmp_path: Path) -> None:
    code, _, err = doctor(tmp_path / "absent" / "nvidia-smi", "--skip-bench")
    assert code == 3
    assert "--nvidia-smi" in err and "does not exist" in err
    code, _, err = doctor(None, "--skip-bench", path_env=str(tmp_path))
    assert code == 3
    assert "nvidia-smi is not on PATH" in err


def test_nvidia_smi_found_on_path(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    write_fake_nvidia_smi(folder)
    code, out, err = doctor(None, "--json", "--skip-bench", path_env=str(folder))
    assert code == 0, err
    assert json.loads(out)["nvidia_smi"] == str(folder / "nvidia-smi")


def test_no_nvidia_gpu_exits_3(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path, rows=())
    for scenario in ("zero", "driver_not_loaded"):
        code, out, err = doctor(smi, "--skip-bench", scenario=scenario)
        assert code == 3
        assert out == "" and "no NVIDIA GPU to check" in err


def test_bad_usage_exits_2(tmp_path: Path) -> None:
    code, _, err = doctor(tmp_path, "--skip-bench")  # a folder, not an executable
    assert code == 2 and "--nvidia-smi" in err and "not a regular file" in err
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\n")
    code, _, err = doctor(plain, "--skip-bench")
    assert code == 2 and "not executable" in err
    code, _, err = doctor(None, "--no-such-flag")
    assert code == 2


def test_failing_nvidia_smi_is_an_error_not_a_crash(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(
        tmp_path,
        rows=(),
        exit_code=9,
        stderr="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
    )
    code, report, err = doctor_json(smi)
    assert code == 1
    (finding,) = [f for f in report["findings"] if f["check"] == "nvidia_smi"]
    assert "exit status 9" in finding["message"] and "couldn't communicate" in finding["message"]
    assert "Traceback" not in err


def test_unreadable_nvidia_smi_output_is_named(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path, rows=("0, NVIDIA H100 80GB HBM3, only three",))
    code, report, _ = doctor_json(smi)
    assert code == 1
    messages = " ".join(f["message"] for f in report["findings"])
    assert "line 1" in messages and "3 values where 11 were asked for" in messages


def test_a_gpu_nvidia_smi_does_not_list_is_an_error(tmp_path: Path) -> None:
    code, report, _ = doctor_json(write_fake_nvidia_smi(tmp_path, rows=(H100_ROW,)))
    assert code == 1
    rtx = report["gpus"][1]
    assert rtx["agreement"] == {}
    assert any(f["check"] == "nvidia_smi" for f in rtx["findings"])


def test_without_a_gpu_backend_the_benchmark_is_reported_unavailable(tmp_path: Path) -> None:
    code, out, err = doctor(write_fake_nvidia_smi(tmp_path), "--json")
    report = json.loads(out)
    assert report["benchmark"] in ("unavailable", "run")
    if report["benchmark"] == "unavailable":  # no torch or CuPy on this machine
        assert code == 0, err
        (finding,) = [f for f in report["findings"] if f["check"] == "benchmark"]
        assert "torch" in finding["message"] and "cupy" in finding["message"]


def test_json_has_no_nan_and_is_the_contract(tmp_path: Path) -> None:
    _, out, _ = doctor(write_fake_nvidia_smi(tmp_path, rows=AGREEING), "--json", "--skip-bench")
    report = json.loads(out, parse_constant=lambda name: pytest.fail(name))
    assert {"ok", "gpus"} <= set(report)
    for gpu in report["gpus"]:
        assert {"index", "name", "catalog_id", "agreement", "findings"} <= set(gpu)
        for finding in gpu["findings"]:
            assert {"severity", "check", "message"} <= set(finding)  # new keys are additive
            assert isinstance(finding["rule"], str) and finding["rule"]
            assert finding["severity"] in ("info", "warning", "error")
