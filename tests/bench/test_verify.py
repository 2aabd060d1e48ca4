"""``speed --verify``'s parts: the random-weight GGUF writer, the llama.cpp runner's
time limit and Ctrl+C, and (where llama-cpp-python is installed, as in CI) a real run
on a tiny generated GGUF on the CPU."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from gpudesk.bench.verify import (
    TooLargeError,
    VerifyError,
    VerifySettings,
    random_gguf_bytes,
    run_llama_cpp,
    write_random_gguf,
)
from gpudesk.workload.architecture import make_shape
from gpudesk.workload.modelfile import read_gguf

TINY = make_shape(
    {
        "layers": 2,
        "hidden": 64,
        "heads": 4,
        "kv_heads": 2,
        "head_dim": 16,
        "intermediate": 128,
        "vocab": 512,
        "context": 256,
    }
)


def test_random_gguf_has_the_shape_and_the_bytes_it_promises(tmp_path: Path) -> None:
    path = tmp_path / "r.gguf"
    written = write_random_gguf(TINY, path, ggml_type="Q8_0", max_bytes=10**7)
    model = read_gguf(path)
    assert model.tensor_bytes == written == random_gguf_bytes(TINY, "Q8_0")
    assert model.shape is not None
    for field in ("layers", "hidden", "heads", "kv_heads", "head_dim", "intermediate", "vocab"):
        assert getattr(model.shape, field) == getattr(TINY, field), field
    assert model.bytes_by_type["Q8_0"] == written - model.bytes_by_type["F32"]


def test_random_gguf_refuses_a_file_over_the_limit_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "r.gguf"
    with pytest.raises(TooLargeError, match=r"over the 0\.00 GB limit"):
        write_random_gguf(TINY, path, max_bytes=1000)
    assert not path.exists()


def test_random_gguf_refuses_a_mixture_of_experts(tmp_path: Path) -> None:
    moe = TINY.model_copy(update={"experts": 4, "active_experts": 2, "expert_intermediate": 64})
    with pytest.raises(VerifyError, match="dense llama-style decoders only"):
        write_random_gguf(moe, tmp_path / "m.gguf", max_bytes=10**9)


class _FakeLlama:
    """Stands in for llama_cpp.Llama to drive the runner's loop: eval advances a clock."""

    clock: ClassVar[list[float]] = [0.0]
    interrupt_after: ClassVar[int | None] = None
    evals: ClassVar[int] = 0

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def n_vocab(self) -> int:
        return 1000

    def eval(self, tokens: list[int]) -> None:
        type(self).evals += 1
        if self.interrupt_after is not None and type(self).evals > self.interrupt_after:
            raise KeyboardInterrupt
        self.clock[0] += 0.001 * len(tokens) + 0.01

    def reset(self) -> None:
        pass


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> type[_FakeLlama]:
    module = types.ModuleType("llama_cpp")
    module.Llama = _FakeLlama  # type: ignore[attr-defined]
    module.__version__ = "0.0-fake"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    _FakeLlama.clock = [0.0]
    _FakeLlama.evals = 0
    _FakeLlama.interrupt_after = None
    return _FakeLlama


def test_runner_measures_prefill_then_decode(fake_llama: type[_FakeLlama], tmp_path: Path) -> None:
    settings = VerifySettings(model_path=tmp_path / "m.gguf", n_prompt=100, n_gen=20)
    result = run_llama_cpp(settings, clock=lambda: fake_llama.clock[0])
    assert result.prefill_tokens_per_s == pytest.approx(100 / 0.11)
    assert result.decode_tokens_per_s == pytest.approx(20 / (20 * 0.011))
    assert (result.n_gen_done, result.stopped) == (20, None)


def test_runner_stops_at_the_time_limit(fake_llama: type[_FakeLlama], tmp_path: Path) -> None:
    settings = VerifySettings(
        model_path=tmp_path / "m.gguf", n_prompt=10, n_gen=10_000, time_limit_s=1.0
    )
    result = run_llama_cpp(settings, clock=lambda: fake_llama.clock[0])
    assert result.stopped == "time limit"
    assert 0 < result.n_gen_done < 10_000
    assert result.decode_tokens_per_s is not None


def test_runner_stops_cleanly_on_ctrl_c(fake_llama: type[_FakeLlama], tmp_path: Path) -> None:
    fake_llama.interrupt_after = 12
    settings = VerifySettings(model_path=tmp_path / "m.gguf", n_prompt=10, n_gen=100)
    result = run_llama_cpp(settings, clock=lambda: fake_llama.clock[0])
    assert result.stopped == "interrupted"
    assert result.n_gen_done == 10  # warm-up, prefill, then 10 decoded before the 13th eval


def test_a_gpu_run_on_a_build_without_gpu_offload_is_refused(
    fake_llama: type[_FakeLlama], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        sys.modules["llama_cpp"], "llama_supports_gpu_offload", lambda: False, raising=False
    )
    on_gpu = VerifySettings(model_path=tmp_path / "m.gguf", n_prompt=10, n_gen=5, n_gpu_layers=33)
    with pytest.raises(VerifyError, match="built without GPU offload"):
        run_llama_cpp(on_gpu, clock=lambda: fake_llama.clock[0])
    assert fake_llama.evals == 0
    # the CPU needs no offload: the same build measures it
    on_cpu = VerifySettings(model_path=tmp_path / "m.gguf", n_prompt=10, n_gen=5)
    assert run_llama_cpp(on_cpu, clock=lambda: fake_llama.clock[0]).n_gen_done == 5


def test_speed_verify_without_llama_cpp_is_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpudesk.cli import main

    monkeypatch.setattr("gpudesk.bench.verify.llama_cpp_version", lambda: None)
    code = main(
        ["speed", "--model", "tinyllama-1.1b", "--engine", "llama.cpp", "--mode", "decode",
         "--gpu", "cpu", "--seq-out", "8", "--verify"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "pip install '.[verify]' from the GPUDesk" in err


def test_speed_verify_end_to_end_on_the_cpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real engine: a tiny random GGUF, decode on the CPU, a stored row, calibration."""
    pytest.importorskip("llama_cpp")
    from gpudesk.cli import main

    path = tmp_path / "tiny.gguf"
    write_random_gguf(TINY, path, max_bytes=10**8)
    argv = ["speed", "--gguf", str(path), "--engine", "llama.cpp", "--mode", "decode",
            "--gpu", "cpu", "--seq-in", "32", "--seq-out", "32", "--json"]  # fmt: skip
    assert main([*argv, "--verify"]) == 0
    document = json.loads(capsys.readouterr().out)
    verify = document["verify"]
    assert verify["measured_tokens_per_s"] > 0
    assert verify["ratio"] == pytest.approx(
        verify["measured_tokens_per_s"] / verify["estimate_tokens_per_s"]
    )
    assert verify["stored_id"] == 1
    assert main(["measurements", "list", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["measurements"]
    assert (row["gpu_id"], row["engine"], row["mode"]) == ("cpu", "llama.cpp", "decode")
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)["results"][0]
    assert "calibrated with 1 of your measurements" in again["basis"]


def test_speed_verify_text_fits_80_columns_and_llama_cpp_says_nothing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What reaches the terminal during --verify: GPUDesk's lines only (llama.cpp's own
    log, written by C to file descriptor 2, is off), each within 80 columns."""
    pytest.importorskip("llama_cpp")
    from gpudesk.cli import main

    monkeypatch.setenv("COLUMNS", "80")
    path = tmp_path / "tiny.gguf"
    write_random_gguf(TINY, path, max_bytes=10**8)
    argv = ["speed", "--gguf", str(path), "--engine", "llama.cpp", "--mode", "decode",
            "--gpu", "cpu", "--seq-in", "32", "--seq-out", "32", "--verify"]  # fmt: skip
    assert main(argv) == 0
    out, err = capfd.readouterr()
    assert "Stored as measurement 1" in " ".join(out.split())
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert err == "", err
