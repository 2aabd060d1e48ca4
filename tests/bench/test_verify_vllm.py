"""``speed --verify --engine vllm`` against a stand-in ``vllm`` module (fake_vllm.py) with
the real offline API's signatures and output objects. vLLM itself needs a CUDA GPU and
is not installed here: none of this has run against a real vLLM."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from gpudesk.bench.verify import VerifyError
from gpudesk.bench.verify_vllm import VllmSettings, run_vllm, vllm_version

FAKE = Path(__file__).parent / "fake_vllm.py"


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("vllm", FAKE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "vllm", module)  # before exec: its dataclasses look it up
    spec.loader.exec_module(module)
    return module


def _settings(**changes: Any) -> VllmSettings:
    fields: dict[str, Any] = {
        "model": "meta-llama/Llama-3.1-8B",
        "n_prompt": 512,
        "n_gen": 65,
        "vocab": 128256,
        "max_model_len": 600,
    }
    fields.update(changes)
    return VllmSettings(**fields)


def test_without_vllm_there_is_no_version_and_the_runner_says_so() -> None:
    assert importlib.util.find_spec("vllm") is None  # this machine: no GPU, no vLLM
    assert vllm_version() is None
    with pytest.raises(VerifyError, match="pip install vllm"):
        run_vllm(_settings())


def test_prefill_and_decode_from_the_wall_clock(fake_vllm: ModuleType) -> None:
    clock = SimpleNamespace(t=100.0)
    fake_vllm.clock = clock
    measured = run_vllm(_settings(), clock=lambda: clock.t)
    (engine,) = fake_vllm.created
    assert engine["model"] == "meta-llama/Llama-3.1-8B"
    assert engine["load_format"] == "dummy"  # random weights: nothing downloaded but config
    assert engine["skip_tokenizer_init"] is True
    assert engine["max_model_len"] == 600
    assert measured.engine_version == "0.11.0"
    assert measured.timing == "wall clock"
    assert measured.prefill_tokens_per_s == pytest.approx(
        512 / (512 * fake_vllm.PREFILL_S_PER_TOKEN)
    )
    assert measured.n_gen_done == 65
    assert measured.decode_tokens_per_s == pytest.approx(1 / fake_vllm.DECODE_S_PER_TOKEN)
    assert measured.stopped is None


def test_request_metrics_are_used_where_vllm_fills_them(fake_vllm: ModuleType) -> None:
    clock = SimpleNamespace(t=0.0)
    fake_vllm.clock = clock
    fake_vllm.fill_metrics = True
    measured = run_vllm(_settings(n_gen=33), clock=lambda: clock.t)
    assert measured.timing == "RequestOutput.metrics"
    assert measured.decode_tokens_per_s == pytest.approx(1 / fake_vllm.DECODE_S_PER_TOKEN)


def test_the_time_limit_is_checked_between_steps(fake_vllm: ModuleType) -> None:
    clock = SimpleNamespace(t=0.0)
    fake_vllm.clock = clock
    measured = run_vllm(_settings(n_prompt=100_000, time_limit_s=1.0), clock=lambda: clock.t)
    assert measured.stopped == "time limit"
    assert measured.decode_tokens_per_s is None
    assert measured.prefill_tokens_per_s is not None


def test_ctrl_c_stops_cleanly(fake_vllm: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fake_vllm.LLM, "generate", interrupted)
    assert run_vllm(_settings()).stopped == "interrupted"


def test_an_engine_that_will_not_start_is_a_verify_error(
    fake_vllm: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(VerifyError, match="could not start"):
        run_vllm(_settings(utilisation=1.5))


def test_speed_verify_with_vllm_prints_stores_and_imports(
    fake_vllm: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from gpudesk.cli import main

    argv = ["speed", "--model", "llama-3.1-8b", "--engine", "vllm", "--mode", "decode",
            "--gpu", "h100-sxm5", "--seq-in", "128", "--seq-out", "9"]  # fmt: skip
    assert main([*argv, "--verify", "--json"]) == 0
    out = capsys.readouterr().out
    verify = json.loads(out)["verify"]
    assert verify["engine"] == "vllm"
    assert verify["engine_version"] == "vllm 0.11.0"
    assert verify["n_gen_done"] == 9
    assert verify["measured_tokens_per_s"] > 0
    assert verify["stored_id"] == 1
    assert verify["measurement"]["engine"] == "vllm"
    assert fake_vllm.created[-1]["dtype"] == "bfloat16"
    assert main(["measurements", "list", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["measurements"]
    assert (row["gpu_id"], row["engine"], row["mode"]) == ("h100-sxm5", "vllm", "decode")
    assert "random weights" in row["note"]
    saved = tmp_path / "verify.json"
    saved.write_text(out, encoding="utf-8")
    assert main(["measurements", "import", str(saved), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["already_stored"] == 1
    assert main([*argv, "--verify"]) == 0
    text = capsys.readouterr().out
    assert "Measured here (vllm, vllm 0.11.0):" in text


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        # the engine table refuses both before a measurement is tried
        (["--gpu", "cpu"], "give --gpu this machine's GPU"),
        (["--gpu", "h100-sxm5", "--quant", "q4_k_m"], "GGUF"),
    ],
)
def test_speed_verify_with_vllm_refuses_what_it_cannot_measure(
    fake_vllm: ModuleType, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    from gpudesk.cli import main

    argv = ["speed", "--model", "llama-3.1-8b", "--engine", "vllm", "--mode", "decode",
            "--seq-out", "8", *extra, "--verify"]  # fmt: skip
    assert main(argv) != 0
    assert words in capsys.readouterr().err


def test_speed_verify_with_vllm_absent_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from gpudesk.cli import main

    argv = ["speed", "--model", "llama-3.1-8b", "--engine", "vllm", "--mode", "decode",
            "--gpu", "h100-sxm5", "--seq-out", "8", "--verify"]  # fmt: skip
    assert main(argv) == 2
    assert "pip install vllm" in capsys.readouterr().err
