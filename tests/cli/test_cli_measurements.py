"""``gpudesk measurements`` end to end, and ``speed`` calibrated by what was imported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    assert "is not UTF-8 text" in " ".join(out.split())  # wrapped at 80 columns
    assert "Traceback" not in err


def test_a_table_without_model_calibrates_the_gpu_it_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No --model: the table's own words place TinyLlama, so the rows carry an estimate
    and a later speed for that GPU, engine and backend is calibrated with them."""
    code, out, _ = run_cli(capsys, "measurements", "import", str(TABLE), "--gpu", "rtx-4090")
    assert code == 0
    # the import says how it placed the model (the heading above the table names it)
    assert "  model: 'tinyllama-1.1b-1t-openorca.Q4_K_M' names tinyllama-1.1b" in out
    code, out, _ = run_cli(
        capsys, "measurements", "import", str(TABLE), "--gpu", "rtx-4090", "--json"
    )
    assert json.loads(out)["files"][0]["models_placed"] == [
        "'tinyllama-1.1b-1t-openorca.Q4_K_M' names tinyllama-1.1b"
    ]
    code, out, _ = run_cli(capsys, "measurements", "list", "--json")
    rows = json.loads(out)["measurements"]
    assert {row["model"] for row in rows} == {"tinyllama-1.1b"}
    assert all(row["estimate_tokens_per_s"] for row in rows)
    code, out, _ = run_cli(
        capsys, "speed", "--model", "llama-3.1-8b", "--quant", "q4_k_m", "--engine",
        "llama.cpp", "--backend", "vulkan", "--mode", "decode", "--gpu", "rtx-4090", "--json",
    )  # fmt: skip
    assert "calibrated with 1 of your measurements" in json.loads(out)["results"][0]["basis"]


def test_a_vllm_serve_result_calibrates_serve_on_its_day(
    capsys: pytest.CaptureFixture[str],
) -> None:
    served = FILES / "vllm-bench-serve-llama-3.1-8b.json"
    code, _, _ = run_cli(capsys, "measurements", "import", str(served), "--gpu", "h100-sxm5")
    assert code == 0
    code, out, _ = run_cli(
        capsys, "speed", "--model", "llama-3.1-8b", "--gpu", "h100-sxm5", "--mode", "serve",
        "--json",
    )  # fmt: skip
    basis = json.loads(out)["results"][0]["basis"]
    # vLLM writes its date as 20250522-101500
    assert "calibrated with 1 of your measurements, 2025-05-22" in basis


def test_a_model_no_preset_is_refused_with_what_to_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = json.loads((FILES / "llama-bench-cann-ascend.json").read_text(encoding="utf-8"))[0]
    # Llama 3.2 3B became a preset; its 11B vision model is none
    record.update(
        model_filename="/models/Llama-3.2-11B-Vision-Instruct-Q4_K_M.gguf",
        model_type="mllama 11B Q4_K - Medium",
        model_n_params=10_670_220_835,
    )
    path = tmp_path / "llama-3.2-11b-vision.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    code, out, err = run_cli(
        capsys, "measurements", "import", str(path), "--gpu", "rtx-4090", "--json"
    )
    assert code == 2
    assert json.loads(out)["files"][0]["refused"] == [
        "test 1: the file's model 'Llama-3.2-11B-Vision-Instruct-Q4_K_M' is no GPUDesk preset by "
        "name or parameter count; give --model PRESET, or --gguf FILE or --config PATH for "
        "another model"
    ]
    assert "nothing could be imported" in err
    code, out, err = run_cli(
        capsys, "measurements", "import", str(path), "--gpu", "rtx-4090", "--model",
        "my-model", "--json",
    )  # fmt: skip
    assert code == 2
    assert "--model 'my-model' is no GPUDesk preset" in json.loads(out)["files"][0]["refused"][0]
    code, out, _ = run_cli(
        capsys, "measurements", "import", str(path), "--gpu", "rtx-4090", "--model",
        "llama-3.1-8b",
    )  # fmt: skip
    assert code == 0


def test_a_weight_format_gpudesk_does_not_know_gets_no_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "qwen3 8B Q1_0" is Qwen3 8B, but a bf16 estimate of it would be off by the
    formats' bytes (16 bits a weight against about 1.5) and calibrate with that."""
    record = json.loads((FILES / "llama-bench-cann-ascend.json").read_text(encoding="utf-8"))[0]
    record.update(model_filename="", model_type="qwen3 8B Q1_0", model_n_params=8_190_735_360)
    path = tmp_path / "q1.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    code, out, _ = run_cli(capsys, "measurements", "import", str(path), "--gpu", "rtx-4090")
    assert code == 0
    code, out, _ = run_cli(capsys, "measurements", "list", "--json")
    (row,) = json.loads(out)["measurements"]
    assert (row["model"], row["quant"], row["estimate_tokens_per_s"]) == ("qwen3-8b", None, None)


def test_export_takes_json_like_the_other_subcommands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(capsys, "measurements", "import", str(TABLE), "--gpu", "rtx-4090")
    code, out, _ = run_cli(capsys, "measurements", "export", "--json")
    assert code == 0
    assert len(json.loads(out)["measurements"]) == 3
    target = tmp_path / "out.json"
    code, out, _ = run_cli(capsys, "measurements", "export", "--out", str(target), "--json")
    assert (code, json.loads(out)) == (0, {"file": str(target), "measurements": 3})


def test_a_verify_run_does_not_calibrate_the_estimate_printed_beside_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table beside a --verify run is calibrated with what was stored before it: with
    the run's own row its estimate would be its measurement (a ratio of 1 by making)."""
    from gpudesk.measurements.store import Measurement, MeasurementStore

    def fake_run(args: Any, request: object, results: list[Any], model: object) -> Any:
        if not args.verify:
            return None
        estimate = results[0]
        MeasurementStore().add(
            [
                Measurement(
                    gpu_id=estimate.gpu_id, engine="llama.cpp", model="tinyllama-1.1b",
                    quant="q4_k_m", mode="decode", seq_out=128,
                    tokens_per_s=1.5 * estimate.tokens_per_s,
                    estimate_tokens_per_s=estimate.tokens_per_s,
                    source="gpudesk speed --verify", source_format="gpudesk verify",
                )
            ]
        )  # fmt: skip
        return {"measured_tokens_per_s": 1.5 * estimate.tokens_per_s}

    monkeypatch.setattr("gpudesk.cli.verify_args.run_verify", fake_run)
    before = _speed(capsys)
    during = _speed(capsys, "--verify")
    assert during["tokens_per_s"] == before["tokens_per_s"]
    assert "your measurements" not in str(during["basis"])
    after = _speed(capsys)
    # 1.5 x: a ratio that stays below the roofline bound the calibration is capped at
    assert after["tokens_per_s"] == pytest.approx(1.5 * before["tokens_per_s"], rel=1e-5)
