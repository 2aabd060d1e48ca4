"""``gpudesk fit`` and ``gpudesk cost`` end to end, on the bundled catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_factory import write_entry

from gpudesk.cli import main

SEED_TOP_10 = (
    "h100-nvl",
    "a100-40gb-sxm4",
    "a100-80gb-pcie",
    "a100-80gb-sxm4",
    "rtx-a6000",
    "rtx-4090",
    "quadro-rtx-8000",
    "rtx-4070-ti-super",
    "rtx-3090-ti",
    "rtx-3080-10gb",
    "gtx-1080",
    "gtx-1070",
)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_fit_7b_bf16_lists_the_4090_and_not_the_1080(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "fit", "--params", "7B", "--mode", "inference", "--dtype", "bf16"
    )
    assert code == 0
    fits_section = out.split("Fits on one GPU", 1)[1].split("\n\n", 1)[0]
    assert "rtx-4090" in fits_section
    assert "gtx-1080" not in fits_section
    assert "14.00 GB" in out  # the weights
    assert "upper bound" in out

    code, out, _ = run_cli(
        capsys, "fit", "--params", "7B", "--mode", "inference", "--dtype", "bf16", "--json"
    )
    data = json.loads(out)
    fits = {item["gpu_id"]: item["count"] for item in data["fits"]}
    assert fits["rtx-4090"] == 1
    assert "gtx-1080" not in fits
    assert data["breakdown"]["weights"] == 14.0
    assert data["total_gb"] == pytest.approx(sum(data["breakdown"].values()), abs=1e-3)
    assert set(data["formulas"]) == set(data["breakdown"])
    rtx = next(item for item in data["fits"] if item["gpu_id"] == "rtx-4090")
    assert rtx["decode_tokens_per_s_upper_bound"] > 0
    assert rtx["headroom_gb"] == pytest.approx(24 - data["total_gb"], abs=1e-3)


def test_fit_7b_fp16_puts_the_1080_behind_parallelism(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "fit", "--params", "7B", "--dtype", "fp16", "--json")
    fits = {item["gpu_id"]: item for item in json.loads(out)["fits"]}
    assert fits["gtx-1080"]["count"] > 1
    assert fits["gtx-1080"]["needs_parallelism"] is True


def test_fit_70b_bf16_fits_no_single_gpu_of_the_seed_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "fit", "--params", "70B", "--dtype", "bf16", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["breakdown"]["weights"] == 140.0
    single = {item["gpu_id"] for item in data["fits"] if item["count"] == 1}
    assert not single & set(SEED_TOP_10)
    counts = {item["gpu_id"]: item["count"] for item in data["fits"]}
    assert counts["h100-nvl"] == 2


def test_fit_preset_kv_cache(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "fit", "--model", "llama-3.1-8b", "--seq", "8192", "--kv-dtype", "bf16", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["breakdown"]["kv_cache"] == pytest.approx(1.0737, abs=1e-4)
    assert "8 KV heads" in data["formulas"]["kv_cache"]


def test_fit_training_modes(capsys: pytest.CaptureFixture[str]) -> None:
    for mode in ("train", "lora", "qlora"):
        code, out, _ = run_cli(
            capsys,
            "fit",
            "--model",
            "mistral-7b",
            "--mode",
            mode,
            "--checkpointing",
            "--optimizer",
            "adamw8bit",
            "--json",
        )
        assert code == 0, mode
        data = json.loads(out)
        assert data["breakdown"]["optimizer"] > 0
        assert data["breakdown"]["kv_cache"] == 0
        assert all(item["decode_tokens_per_s_upper_bound"] is None for item in data["fits"])


def test_fit_list_models(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "fit", "--list-models")
    assert code == 0
    assert "llama-3.1-70b" in out and "sdxl-unet" in out
    code, out, _ = run_cli(capsys, "fit", "--list-models", "--json")
    assert all(item["sources"] for item in json.loads(out))


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["fit", "--params=-7B"], "negative"),
        (["fit", "--params", "0"], "at least 1"),
        (["fit", "--params", "500T"], "absurd"),
        (["fit", "--params", "lots"], "not a number"),
        (["fit", "--model", "gpt-17"], "Presets: llama-3.1-8b"),
        (["fit", "--params", "7B", "--batch", "0"], "batch size"),
        (["fit", "--params", "7B", "--seq", "-1"], "sequence length"),
        (["fit", "--params", "7B", "--mode", "train", "--dtype", "int4"], "full fine-tuning"),
        (["fit"], "--params"),
    ],
)
def test_fit_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert fragment in err
    assert out == ""


def test_cost_break_even_matches_hand_calculation(capsys: pytest.CaptureFixture[str]) -> None:
    """$1,800 / ($0.69 x 8 x 30.4375 - 0.45 kW x 0.8 x 8 x 30.4375 x $0.15) = 11.62 months."""
    code, out, _ = run_cli(
        capsys,
        "cost",
        "rtx-4090",
        "--cloud-hourly",
        "0.69",
        "--hours-per-day",
        "8",
        "--utilisation",
        "0.8",
        "--kwh-price",
        "0.15",
        "--purchase-usd",
        "1800",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["break_even_months"] == 11.62
    assert data["power_monthly_usd"] == 13.15
    assert data["cloud_monthly_usd"] == 168.01
    assert len(data["series"]["months"]) == 37
    code, out, _ = run_cli(
        capsys, "cost", "RTX 4090", "--cloud-hourly", "0.69", "--purchase-usd", "1800"
    )
    assert code == 0
    assert "11.6 months" in out


def test_cost_uses_the_catalog_price(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "cost", "rtx-4090", "--cloud-hourly", "0.69", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["upfront_usd"] > 0
    assert data["provenance"]["purchase"].startswith("catalog")


def test_cost_never_is_null(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "cost", "rtx-4090", "--cloud-hourly", "0.01", "--json")
    assert code == 0
    assert json.loads(out)["break_even_months"] is None


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["cost", "rtx-4090", "--cloud-hourly", "1", "--hours-per-day", "0"], "hours per day"),
        (["cost", "rtx-4090", "--cloud-hourly", "-1"], "cloud price"),
        (["cost", "rtx-4090", "--cloud-hourly", "1", "--years", "0"], "years"),
        (["cost", "rtx-4090", "--cloud-hourly", "1", "--utilisation", "2"], "utilisation"),
        (["cost", "rtx-4090", "--cloud-hourly", "1", "--purchase-usd", "-3"], "purchase"),
        (["cost", "no-such-gpu-xyz", "--cloud-hourly", "1"], "no GPU named"),
    ],
)
def test_cost_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert fragment in err


def test_cost_gpu_without_price(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_entry(tmp_path, "unpriced-gpu", tdp_w=200)
    code, _, err = run_cli(
        capsys, "--catalog", str(tmp_path), "cost", "unpriced-gpu", "--cloud-hourly", "1"
    )
    assert code == 2
    assert "--purchase-usd" in err
    code, out, _ = run_cli(
        capsys,
        "--catalog",
        str(tmp_path),
        "cost",
        "unpriced-gpu",
        "--cloud-hourly",
        "1",
        "--purchase-usd",
        "500",
        "--json",
    )
    assert code == 0
    assert json.loads(out)["break_even_months"] > 0
