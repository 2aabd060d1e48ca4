"""``gpudesk measurements`` end to end, and ``speed`` calibrated by what was imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudesk.cli import main

FILES = Path(__file__).parents[1] / "planning" / "measurement_files"
TABLE = FILES / "llama-bench-geerlingguy-rtx4090-vulkan.md"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _speed(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    code, out, _ = run_cli(
        capsys,
        "speed", "--model", "tinyllama-1.1b", "--quant", "q4_k_m", "--engine", "llama.cpp",
        "--mode", "decode", "--gpu", "rtx-4090", "--seq-out", "128", "--json", *extra,
    )  # fmt: skip
    assert code == 0
    result: dict[str, object] = json.loads(out)["results"][0]
    return result


def test_import_list_and_a_calibrated_speed(capsys: pytest.CaptureFixture[str]) -> None:
    before = _speed(capsys)
    assert "your measurements" not in str(before["basis"])
    code, out, _ = run_cli(
        capsys, "measurements", "import", str(TABLE), "--gpu", "rtx-4090",
        "--model", "tinyllama-1.1b", "--json",
    )  # fmt: skip
    assert code == 0
    document = json.loads(out)
    assert (document["added"], document["already_stored"]) == (3, 0)
    assert document["files"][0]["refused"] == ["table row 4: pp4096+tg128 mixes prefill and decode"]
    code, out, _ = run_cli(capsys, "measurements", "list", "--json")
    rows = json.loads(out)["measurements"]
    assert [row["tokens_per_s"] for row in rows] == [10802.35, 18709.17, 762.37]
    decode = rows[2]
    assert decode["estimate_tokens_per_s"] == pytest.approx(
        before["tokens_per_s"], rel=1e-5
    )  # speed --json rounds to 6 digits
    after = _speed(capsys)
    assert "calibrated with 1 of your measurements" in str(after["basis"])
    assert after["tokens_per_s"] == pytest.approx(762.37, rel=1e-6)
    ignored = _speed(capsys, "--no-calibration")
    assert ignored["tokens_per_s"] == pytest.approx(before["tokens_per_s"])
    code, out, _ = run_cli(
        capsys, "measurements", "import", str(TABLE), "--gpu", "rtx-4090",
        "--model", "tinyllama-1.1b",
    )  # fmt: skip
    assert code == 0
    assert "Added 0, already stored 3" in out


def test_show_export_and_remove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_cli(capsys, "measurements", "import", str(TABLE), "--gpu", "4090")
    code, out, _ = run_cli(capsys, "measurements", "show", "3", "--json")
    assert code == 0
    assert json.loads(out)["mode"] == "decode"
    target = tmp_path / "shared.json"
    code, out, _ = run_cli(capsys, "measurements", "export", "--out", str(target))
    assert code == 0
    exported = json.loads(target.read_text(encoding="utf-8"))
    assert (exported["format"], exported["version"]) == ("gpudesk-measurements", 1)
    assert len(exported["measurements"]) == 3
    code, out, _ = run_cli(capsys, "measurements", "remove", "1", "2", "3")
    assert (code, out.strip()) == (0, "Removed 3 of 3.")
    code, out, _ = run_cli(capsys, "measurements", "import", str(target))
    assert code == 0
    assert "Added 3" in out
    code, _, err = run_cli(capsys, "measurements", "show", "99")
    assert code == 2
    assert "no measurement 99" in err


def test_nothing_importable_is_exit_2_with_the_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "measurements", "import", str(TABLE))
    assert code == 2
    assert "the file names no GPU; give --gpu" in out
    assert "nothing could be imported" in err
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\xff" * 10)
    code, out, err = run_cli(capsys, "measurements", "import", str(junk))
    assert code == 2
    assert "is not UTF-8 text" in out
    assert "Traceback" not in err
