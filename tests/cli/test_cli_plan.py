"""``gpudesk fit`` and ``gpudesk cost`` end to end, on the bundled catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_factory import write_entry
from hypothesis import HealthCheck, given, settings, strategies as st

from gpudesk.catalog.loader import load_catalog
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
    assert "= 13.04 GiB" in out  # the weights: 14.0e9 bytes
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
    assert rtx["usable_gb"] == pytest.approx(24 * 2**30 / 1e9, abs=1e-3)  # 24 GiB
    assert rtx["headroom_gb"] == pytest.approx(rtx["usable_gb"] - data["total_gb"], abs=1e-3)


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
        (["fit", "--model", "gpt-17"], "Presets: llama-2-7b"),
        (["fit", "--params", "7B", "--batch", "0"], "--batch 0: must be between 1 and"),
        (["fit", "--params", "7B", "--seq", "-1"], "--seq -1: must be between 1 and"),
        (
            ["fit", "--params", "7B", "--mode", "train", "--dtype", "int4"],
            "--dtype int4: cannot be fully fine-tuned",
        ),
        (
            ["fit", "--params", "7B", "--mode", "train", "--dtype", "int8"],
            "; use --mode qlora --dtype bf16",
        ),
        (
            ["fit", "--params", "7B", "--mode", "qlora", "--dtype", "int8"],
            "--dtype int8: cannot be QLoRA's compute dtype",
        ),
        (["fit", "--params", "7B", "--mode", "train", "--quant", "awq"], "; use --mode lora"),
        (["fit"], "--params"),
        (["fit", "--params", "7B", "--kv-heads", "5"], "--kv-heads 5"),
        (["fit", "--model", "llama-3.1-8b", "--kv-heads", "0"], "--kv-heads 0"),
        (
            ["fit", "--params", "7B", "--quant", "q4_k_m", "--mode", "lora"],
            "--quant q4_k_m: is an inference format: it cannot be trained; use --mode inference",
        ),
        (
            ["fit", "--params", "7B", "--gpus", "4", "--tensor-parallel", "3"],
            "--tensor-parallel 3: must divide the GPU count 4",
        ),
        (["fit", "--config", "/nonexistent/config.json"], "--config /nonexistent"),
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
    # the kind in words, not its stored key
    assert data["provenance"]["purchase"].startswith("catalog (launch MSRP, 2022-10-12)")


@pytest.mark.parametrize("argv", [("h100-sxm5",), ("rtx-4090", "--count", "2")])
def test_cost_text_fits_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]
) -> None:
    # It ran to 338 columns: a rate's provider, instance and page on the Cloud line.
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(capsys, "cost", *argv)
    assert code == 0
    assert "Buy (net of resale)" in out
    for line in out.splitlines():
        # only an unbreakable word (a pricing page's URL) may run past the width
        if len(line) > 80:
            assert len(line.split()) == 1 and "://" in line, line


def test_cost_never_is_null(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "cost", "rtx-4090", "--cloud-hourly", "0.01", "--json")
    assert code == 0
    assert json.loads(out)["break_even_months"] is None


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (
            ["cost", "rtx-4090", "--cloud-hourly", "1", "--hours-per-day", "0"],
            "--hours-per-day 0: must be above 0 and at most 24",
        ),
        (["cost", "rtx-4090", "--cloud-hourly", "-1"], "--cloud-hourly -1: must be above 0"),
        (["cost", "rtx-4090", "--cloud-hourly", "1", "--years", "0"], "--years 0: must be at"),
        (
            ["cost", "rtx-4090", "--cloud-hourly", "1", "--utilisation", "2"],
            "--utilisation 2: must be above 0 and at most 1",
        ),
        (
            ["cost", "rtx-4090", "--cloud-hourly", "1", "--purchase-usd", "-3"],
            "--purchase-usd -3: must be above 0",
        ),
        (
            [
                *("cost", "rtx-4090", "--cloud-hourly", "1"),
                *("--purchase-usd", "500", "--resale-usd", "600"),
            ],
            "--resale-usd 600: must be below the purchase price (500.00 USD)",
        ),
        (["cost", "rtx-4090", "--cloud-hourly", "1", "--count", "65"], "--count 65: must be"),
        (["cost", "no-such-gpu-xyz", "--cloud-hourly", "1"], "no GPU named"),
    ],
)
def test_cost_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert fragment in err


def test_cost_names_every_bad_flag_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(
        capsys, "cost", "rtx-4090", "--cloud-hourly", "1", "--hours-per-day", "30", "--years", "0"
    )
    assert code == 2
    assert "--hours-per-day 30: must be above 0 and at most 24" in err
    assert "; --years 0: must be at least one month" in err
    assert "hours per day" not in err  # the core's words are replaced by the flags


def test_cost_gpu_without_price(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_entry(tmp_path, "unpriced-gpu", tdp_w=200)
    code, _, err = run_cli(
        capsys, "--catalog", str(tmp_path), "cost", "unpriced-gpu", "--cloud-hourly", "1"
    )
    assert code == 2
    assert "the catalog has no price for" in err and "; give one with --purchase-usd" in err
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


CONFIGS = Path(__file__).parent.parent / "planning" / "configs"


@pytest.mark.parametrize(
    ("config", "preset"),
    [
        ("llama-3.1-8b", "llama-3.1-8b"),
        ("qwen2.5-7b", "qwen2.5-7b"),
        ("mixtral-8x7b", "mixtral-8x7b"),
        ("deepseek-v3", "deepseek-v3"),
    ],
)
def test_fit_config_gives_the_presets_kv_cache(
    capsys: pytest.CaptureFixture[str], config: str, preset: str
) -> None:
    argv = ["--seq", "32768", "--engine", "vllm", "--concurrency", "4", "--json"]
    _, out, _ = run_cli(capsys, "fit", "--config", str(CONFIGS / f"{config}.json"), *argv)
    from_config = json.loads(out)
    _, out, _ = run_cli(capsys, "fit", "--model", preset, *argv)
    from_preset = json.loads(out)
    assert from_config["breakdown"]["kv_cache"] == from_preset["breakdown"]["kv_cache"] > 0
    assert from_config["model"]["shape"] == from_preset["model"]["shape"]


def test_fit_config_flags_override_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    config = str(CONFIGS / "llama-3.1-8b.json")
    _, out, _ = run_cli(capsys, "fit", "--config", config, "--seq", "8192", "--json")
    gqa = json.loads(out)["breakdown"]["kv_cache"]
    _, out, _ = run_cli(
        capsys, "fit", "--config", config, "--seq", "8192", "--kv-heads", "32", "--json"
    )
    data = json.loads(out)
    assert data["breakdown"]["kv_cache"] == pytest.approx(4 * gqa, rel=1e-3)
    assert data["model"]["shape"]["kv_heads"] == 32


def test_fit_params_alone_says_the_shape_is_assumed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "fit", "--params", "70B", "--seq", "4096", "--dtype", "fp16")
    assert code == 0
    words = " ".join(out.split())
    assert "grouped-query attention is not assumed" in words
    assert "--kv-heads" in words  # how to give the real shape
    _, out, _ = run_cli(
        capsys, "fit", "--params", "70B", "--seq", "4096", "--dtype", "fp16", "--json"
    )
    data = json.loads(out)
    assert data["model"]["assumed_shape"] is True
    assert "kv_heads" in data["model"]["assumed_fields"]
    shape = data["model"]["shape"]
    assert shape["kv_heads"] == shape["heads"]


def test_fit_json_keys_stay_and_new_ones_are_additive(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(capsys, "fit", "--model", "llama-3.1-8b", "--quant", "q4_k_m", "--json")
    data = json.loads(out)
    assert {"total_gb", "breakdown", "fits", "formulas", "model", "workload"} <= set(data)
    assert {"allocated_gb", "host_memory_gb", "compares_with", "weights_format"} <= set(data)
    assert data["weights_format"]["bits_per_weight"] == pytest.approx(4.89, abs=0.01)
    assert "4.89 bits per weight" in data["formulas"]["weights"]
    assert data["workload"]["engine"] == "llama.cpp"  # GGUF defaults to llama.cpp
    assert data["total_gb"] == pytest.approx(sum(data["breakdown"].values()), abs=1e-3)


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ('{"hidden_size": 4096}', "num_hidden_layers"),
        ('{"hidden_size": true, "num_hidden_layers": 2}', "hidden_size"),
        ("not json", None),
        ("[1, 2]", None),
    ],
)
def test_fit_malformed_config_exits_2_naming_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, document: str, field: str | None
) -> None:
    path = tmp_path / "config.json"
    path.write_text(document)
    code, out, err = run_cli(capsys, "fit", "--config", str(tmp_path))
    assert code == 2 and out == ""
    assert "--config" in err and str(path) in err
    if field:
        assert f"'{field}'" in err


def test_fit_engines_bound_the_prefill_working_set(capsys: pytest.CaptureFixture[str]) -> None:
    """At 128k tokens transformers holds the whole prompt's working set; vLLM one chunk."""
    base = ["fit", "--model", "llama-3.1-8b", "--seq", "131072", "--json"]
    _, out, _ = run_cli(capsys, *base)
    whole = json.loads(out)["breakdown"]["activations"]
    _, out, _ = run_cli(capsys, *base, "--engine", "vllm")
    chunked = json.loads(out)
    assert whole > 15 and chunked["breakdown"]["activations"] < 2
    assert chunked["usable_memory_fraction"] == 0.9
    _, out, _ = run_cli(capsys, *base, "--engine", "vllm", "--prefill-chunk", "2048")
    assert json.loads(out)["breakdown"]["activations"] < chunked["breakdown"]["activations"]


def test_fit_sharded_training_is_per_gpu_at_that_count(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(
        capsys, "fit", "--model", "llama-3.1-70b", "--mode", "train", "--gpus", "8",
        "--sharding", "fsdp", "--checkpointing", "--json",
    )  # fmt: skip
    data = json.loads(out)
    assert data["per_gpu_for"] == 8
    assert {item["count"] for item in data["fits"]} == {8}
    states = sum(data["breakdown"][key] for key in ("weights", "gradients", "optimizer"))
    assert states == pytest.approx(16 * 70_553_706_496 / 8 / 1e9, rel=1e-3)


def _rented_gpu(tmp_path: Path) -> None:
    import datetime as dt

    write_entry(
        tmp_path,
        "rented-gpu",
        tdp_w=300,
        price_usd=9000,
        price_kind="street",
        price_date=dt.date(2020, 3, 1),
        cloud_rates=[
            {
                "provider": "BigCloud",
                "usd_per_gpu_hour": 4.5,
                "kind": "on_demand",
                "date": dt.date.today(),
                "source": "https://bigcloud.example/pricing/gpu",
            },
            {
                "provider": "SmallCloud",
                "usd_per_gpu_hour": 1.75,
                "kind": "on_demand",
                "date": dt.date(2019, 6, 1),
                "source": "https://smallcloud.example/gpus",
            },
            {
                "provider": "Market",
                "usd_per_gpu_hour": 0.9,
                "kind": "marketplace",
                "date": dt.date.today(),
                "source": "https://market.example/offers",
            },
        ],
    )


def test_cost_without_flags_uses_the_lowest_on_demand_rate_and_says_which(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _rented_gpu(tmp_path)
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "cost", "rented-gpu", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["inputs"]["cloud_hourly_usd"] == 1.75, "marketplace is never the default"
    cloud = data["provenance"]["cloud_hourly"]
    assert cloud.startswith("lowest on-demand catalog rate: SmallCloud, seen 2019-06-01")
    assert "https://smallcloud.example/gpus" in cloud
    assert "rate from 2019-06, may be out of date" in cloud
    assert "price from 2020-03, may be out of date" in data["provenance"]["purchase"]
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "cost", "rented-gpu")
    assert code == 0
    assert "hourly price: lowest on-demand catalog rate: SmallCloud" in out


def test_list_and_show_flag_stale_prices(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _rented_gpu(tmp_path)
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "list", "--search", "rented")
    assert code == 0
    assert "9,000*" in out
    assert "* price seen more than 12 months ago, may be out of date" in out
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "show", "rented-gpu")
    assert code == 0
    flat = " ".join(out.split())  # show wraps long values to the terminal
    assert "2020-03-01 (price from 2020-03, may be out of date)" in flat
    assert "SmallCloud, on-demand: 1.75 USD/GPU-hour, seen 2019-06-01" in flat
    assert "[default: lowest on-demand]" in flat
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "show", "rented-gpu", "--json")
    record = json.loads(out)
    assert record["price_stale"] is True and record["cloud_hourly_stale"] is True
    assert record["cloud_hourly_usd"] == 1.75


@pytest.mark.parametrize("name", ["rtx-4090", "h100-sxm5"])
def test_cost_runs_without_flags_for_the_common_gpus(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, out, err = run_cli(capsys, "cost", name, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["inputs"]["cloud_hourly_usd"] > 0
    assert data["provenance"]["cloud_hourly"].startswith("lowest on-demand catalog rate: ")


def test_fit_usable_memory_is_gib_and_apple_wired_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Llama 3.1 70B bf16 needs 149.92 GB; a 192 GB M2 Ultra wires 147,456 MiB by default."""
    code, out, _ = run_cli(capsys, "fit", "--model", "llama-3.1-70b", "--dtype", "bf16", "--json")
    assert code == 0
    data = json.loads(out)
    fits = {item["gpu_id"]: item for item in data["fits"]}
    mac = fits["apple-m2-ultra-76c"]
    assert mac["usable_gb"] == pytest.approx(147_456 * 2**20 / 1e9, abs=1e-3)
    assert mac["max_devices"] == 1
    assert "wired limit" in mac["usable_basis"]
    h100 = fits["h100-sxm5"]
    assert h100["count"] == 2
    assert h100["usable_gib"] == pytest.approx(81559 / 1024, abs=1e-3)  # nvidia-smi's total
    assert data["total_gib"] == pytest.approx(data["total_gb"] * 1e9 / 2**30, abs=1e-3)
    socs = {"apple-m2-ultra-76c", "apple-m1-max-32c", "dgx-spark", "mi300a"}
    assert all(item["count"] == 1 for item in data["fits"] if item["gpu_id"] in socs)
    assert "apple-m1-max-32c" in data["too_small"]
    # Lowered below the need (140,000 MiB = 146.8 GB), the Mac no longer holds it.
    _, out, _ = run_cli(
        capsys, "fit", "--model", "llama-3.1-70b", "--apple-wired-limit-mb", "140000", "--json"
    )
    assert "apple-m2-ultra-76c" in json.loads(out)["too_small"]


@pytest.mark.parametrize("value", ["0", "-5", "99999999"])
def test_fit_refuses_a_bad_wired_limit(capsys: pytest.CaptureFixture[str], value: str) -> None:
    code, _, err = run_cli(capsys, "fit", "--params", "7B", "--apple-wired-limit-mb", value)
    assert code == 2
    assert "--apple-wired-limit-mb" in err
    assert "Traceback" not in err


def test_fit_text_fits_80_columns(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["--model", "llama-3.1-70b", "--dtype", "bf16"],
        ["--model", "llama-3.1-8b", "--mode", "qlora", "--seq", "4096", "--checkpointing"],
        ["--model", "deepseek-v3", "--quant", "q4_k_m", "--engine", "llama.cpp"],
    ):
        code, out, _ = run_cli(capsys, "fit", *argv)
        assert code == 0
        wide = [line for line in out.splitlines() if len(line) > 80]
        assert wide == []
        assert "Usable" in out


def test_fit_lists_one_gpu_with_part_in_host_memory(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("fit", "--model", "gpt-oss-20b", "--quant", "mxfp4", "--engine", "llama.cpp")
    code, out, _ = run_cli(capsys, *argv, "--json")
    assert code == 0
    data = json.loads(out)
    offloaded = {item["gpu_id"]: item for item in data["offloaded"]}
    # The MXFP4 GGUF (experts MXFP4, the rest Q8_0) holds whole in 12 GiB; 10 GB offload.
    assert "rtx-4070-ti" not in offloaded
    rtx = offloaded["rtx-3080-10gb"]
    flag = rtx["llama_cpp_flag"]
    assert flag.startswith("--n-cpu-moe ") and rtx["count"] == 1
    assert rtx["per_gpu_gb"] <= rtx["usable_gb"] == pytest.approx(10 * 2**30 / 1e9, abs=1e-3)
    assert rtx["host_memory_gb"] > 0
    assert all(not gpu.startswith("apple-") for gpu in offloaded)  # unified memory: no host
    assert "rtx-4090" not in offloaded  # it holds it all
    code, out, _ = run_cli(capsys, *argv)
    assert "part in host memory" in out and flag in out
    # Dense 70B at -ngl 40: half the layers on the GPU wherever the rest fits.
    code, out, _ = run_cli(
        capsys, "fit", "--model", "llama-3.1-70b", "--quant", "q4_k_m", "--gpu-layers", "40",
        "--json",
    )  # fmt: skip
    data = json.loads(out)
    assert data["fits"] == []
    assert {item["gpu_layers"] for item in data["offloaded"]} == {40}
    code, _, err = run_cli(capsys, "fit", "--params", "7B", "--gpu-layers", "3")
    assert code == 2 and "llama.cpp" in err


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    wired=st.one_of(st.none(), st.integers(-(2**40), 2**40)),
    gpu_layers=st.one_of(st.none(), st.integers(-(2**31), 2**31)),
    cpu_moe=st.one_of(st.none(), st.integers(-1000, 1000)),
    engine=st.sampled_from(["llama.cpp", "vllm"]),
)
def test_memory_flags_are_exit_0_or_2_never_a_traceback(
    capsys: pytest.CaptureFixture[str],
    wired: int | None,
    gpu_layers: int | None,
    cpu_moe: int | None,
    engine: str,
) -> None:
    argv = ["fit", "--model", "qwen3-30b-a3b", "--quant", "q4_k_m", "--engine", engine, "--json"]
    for flag, value in (
        ("--apple-wired-limit-mb", wired),
        ("--gpu-layers", gpu_layers),
        ("--cpu-moe", cpu_moe),
    ):
        if value is not None:
            argv += [flag, str(value)]
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 0:
        data = json.loads(out)
        assert all(item["count"] == 1 for item in data["offloaded"])
        if gpu_layers is not None or cpu_moe is not None:
            assert data["fits"] == []
    else:
        assert err.strip().count("\n") <= 3  # a short message naming the flag


def test_fit_gguf_with_llama_cpp_needs_no_bf16(capsys: pytest.CaptureFixture[str]) -> None:
    """ggml dequantises to fp16/fp32: a GGUF model runs on a Pascal card, as speed says."""
    code, out, _ = run_cli(capsys, "fit", "--model", "llama-3.1-8b", "--quant", "q4_k_m", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["workload"]["engine"] == "llama.cpp" and data["workload"]["dtype"] == "bf16"
    fits = {item["gpu_id"]: item["count"] for item in data["fits"]}
    assert fits["gtx-1080"] == 1
    # No GPU is excluded for its compute capability or dtype; the only exclusions are
    # announced parts whose vendor has published no memory size (nothing to fit into).
    unsized = {entry.id for entry in load_catalog().entries if entry.memory_gb is None}
    excluded = {item["gpu_id"]: item["reason"] for item in data["excluded"]}
    assert set(excluded) <= unsized, excluded
    assert all("no memory size" in reason for reason in excluded.values()), excluded
    code, out, _ = run_cli(
        capsys, "speed", "--model", "llama-3.1-8b", "--quant", "q4_k_m", "--engine", "llama.cpp",
        "--mode", "decode", "--gpu", "gtx-1080", "--json", "--no-calibration",
    )  # fmt: skip
    assert code == 0 and json.loads(out)["results"][0]["count"] == 1
    # transformers in bf16 still needs compute capability 8.0
    code, out, _ = run_cli(capsys, "fit", "--model", "llama-3.1-8b", "--json")
    assert "gtx-1080" in {item["gpu_id"] for item in json.loads(out)["excluded"]}
