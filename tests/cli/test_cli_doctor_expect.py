"""``gpudesk doctor --expect SPEC`` end to end: the acceptance gate over the fake NVML library."""

from __future__ import annotations

import json
from pathlib import Path

from cli.test_cli_doctor import doctor
from fake_nvidia_smi import H100_ROW, H100_SECOND_ROW, write_fake_nvidia_smi


def _json(out: str) -> dict:
    return json.loads(out, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


def test_two_declared_one_detected_exits_1_naming_the_missing_gpu(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path, rows=(H100_ROW,))
    code, out, err = doctor(smi, "--skip-bench", "--expect", "2x h100-sxm5", scenario="one_h100")
    assert code == 1, err
    assert "h100-sxm5 #2 of 2 missing: 1 detected: GPU 0 (00000000:1B:00.0)" in err
    assert err.count("gpudesk: expect failed:") == 1  # one line per failed check
    assert "expect 2x h100-sxm5: FAIL" in out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    code, out, _ = doctor(
        smi, "--skip-bench", "--json", "--expect", "2x h100-sxm5", scenario="one_h100"
    )
    document = _json(out)
    assert code == 1 and document["expect"]["passed"] is False
    failed = [c for c in document["expect"]["checks"] if not c["passed"]]
    assert [c["check"] for c in failed] == ["count"]
    assert all({"check", "passed", "detail"} <= set(c) for c in document["expect"]["checks"])


def test_two_matching_healthy_gpus_exit_0(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path, rows=(H100_ROW, H100_SECOND_ROW))
    arguments = ("--skip-bench", "--json", "--expect", "2x h100-sxm5")
    code, out, err = doctor(smi, *arguments, scenario="two_h100")
    assert code == 0, err
    document = _json(out)
    assert document["expect"]["passed"] is True and document["ok"] is True
    checks = {(c["check"], c["gpu_index"]) for c in document["expect"]["checks"]}
    for index in (0, 1):
        assert {("memory", index), ("link", index), ("health", index)} <= checks
    assert ("count", None) in checks and ("model", None) in checks
    assert all(c["passed"] for c in document["expect"]["checks"])
    code, out, err = doctor(
        smi, "--skip-bench", "--expect", "2x h100-sxm5", "--pcie-gen", "5", scenario="two_h100"
    )
    assert code == 0, err
    assert "expect 2x h100-sxm5: pass" in out and err == ""


def test_each_declared_fact_that_is_not_met_fails(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path, rows=(H100_ROW, H100_SECOND_ROW))
    code, _, err = doctor(smi, "--skip-bench", "--expect", "2x a100-80gb-sxm4", scenario="two_h100")
    assert code == 1
    assert "a100-80gb-sxm4 #1, #2 of 2 missing" in err
    assert "is catalog h100-sxm5, which is not declared" in err
    # a link trained down to x8 on GPU 0
    code, _, err = doctor(
        smi,
        "--skip-bench",
        "--expect",
        "2x h100-sxm5",
        scenario="two_h100",
        settings={"FAKE_NVML_PCIE": "5,5,8,16"},
    )
    assert code == 1
    assert "link: GPU 0 (00000000:1B:00.0): x8 where x16" in err
    assert "health: GPU 0" in err  # the shared rule flags the narrow link as well
    # memory short of the catalog's 80 GiB
    code, _, err = doctor(
        smi,
        "--skip-bench",
        "--expect",
        "2x h100-sxm5",
        scenario="two_h100",
        settings={"FAKE_NVML_MEMORY_TOTAL_MIB": "40960"},
    )
    assert code == 1 and "memory: GPU 0" in err and "40.0 GiB of 80 GiB" in err


def test_nothing_detected_exits_3_with_a_json_document(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path, rows=())
    for extra in ((), ("--expect", "8x h100-sxm5")):
        code, out, err = doctor(smi, "--skip-bench", "--json", *extra, scenario="zero")
        assert code == 3, err
        document = _json(out)  # issue 29: --json used to print nothing here
        assert document["ok"] is False and document["gpus"] == [] and document["detected"] is False
        assert document["findings"][0]["check"] == "detection"
        if extra:
            assert document["expect"]["passed"] is False
            (check,) = document["expect"]["checks"]
            assert check["check"] == "count" and check["passed"] is False
            assert "no NVIDIA GPU" in check["detail"]
    code, out, _ = doctor(tmp_path / "absent", "--skip-bench", "--json")
    document = _json(out)
    assert code == 3 and document["findings"][0]["check"] == "nvidia_smi"
    assert document["detected"] is True  # NVML found the GPUs; nothing to compare them with


def test_a_bad_spec_or_gate_flag_exits_2(tmp_path: Path) -> None:
    smi = write_fake_nvidia_smi(tmp_path, rows=(H100_ROW,))
    for spec, words in (
        ("", "empty"),
        ("0x h100-sxm5", "between 1 and 4096"),
        ("2x no-such-gpu", "not a catalog id"),
        ("two h100", "is not"),
    ):
        code, _, err = doctor(smi, "--skip-bench", "--expect", spec, scenario="one_h100")
        assert code == 2 and words in err and "Traceback" not in err, err
    for extra, words in (
        (("--pcie-gen", "5"), "needs --expect"),
        (("--expect", "h100-sxm5", "--min-gemm-fraction", "0.7"), "drop --skip-bench"),
        (("--expect", "h100-sxm5", "--min-gemm-fraction", "nan"), "fraction"),
        (("--expect", "h100-sxm5", "--pcie-width", "99"), "between 1 and 32"),
    ):
        code, _, err = doctor(smi, "--skip-bench", *extra, scenario="one_h100")
        assert code == 2 and words in err, err
