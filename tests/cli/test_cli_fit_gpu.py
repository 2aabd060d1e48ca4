"""``fit --gpu NAME`` and ``fit --emit`` (issue 42 points 10 and 11): the answer for one
GPU, and a launch command whose context that GPU holds by GPUDesk's own fit."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from hypothesis import given, settings, strategies as st

from gpudesk.cli import main

#: the issue's command
QWEN_Q4 = ("fit", "--model", "qwen2.5-32b", "--quant", "q4_k_m", "--engine", "llama.cpp")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:  # type: ignore[type-arg]
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    document: dict = json.loads(out)  # type: ignore[type-arg]
    return document


def _context_flag(command: str, flag: str) -> int:
    words = shlex.split(command)
    return int(words[words.index(flag) + 1])


# -- fit --emit: the context the command carries fits -------------------------------------


def test_the_issues_llama_cpp_command_fits_the_gpu_it_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, *QWEN_Q4, "--emit", "llama.cpp", "--gpu", "rtx-4090")
    assert code == 0, err
    launch = next(line.strip() for line in out.splitlines() if "llama-server" in line)
    context = _context_flag(launch, "-c")
    assert 2048 < context < 131072  # longer than fit's default, shorter than the model's
    # the workload is reported at that context
    assert f"{context:,} tokens" in out.splitlines()[0] + out.splitlines()[1]
    # ... and GPUDesk's own fit says one RTX 4090 holds it, and not 256 tokens more
    at = _json(capsys, *QWEN_Q4, "--seq", str(context), "--gpu", "rtx-4090")
    assert at["gpu"]["fits"] and at["gpu"]["count"] == 1
    assert at["gpu"]["headroom_gb"] >= 0
    more = _json(capsys, *QWEN_Q4, "--seq", str(context + 256), "--gpu", "rtx-4090")
    assert more["gpu"]["count"] != 1


def test_emit_json_reports_the_sized_context_as_the_workloads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = _json(capsys, *QWEN_Q4, "--emit", "llama.cpp", "--gpu", "rtx-4090")
    emit = document["emit"]
    assert document["workload"]["seq"] == emit["context"] == _context_flag(emit["command"], "-c")
    assert document["gpu"]["longest_context_tokens"] == emit["context"]
    assert "the longest that 1× rtx-4090 holds by GPUDesk's fit" in emit["notes"][0]


def test_ollama_num_ctx_is_the_sized_context(capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(capsys, *QWEN_Q4, "--emit", "ollama", "--gpu", "rtx-4090")
    num_ctx = re.search(r"PARAMETER num_ctx (\d+)", document["emit"]["command"])
    assert num_ctx is not None
    assert int(num_ctx.group(1)) == document["workload"]["seq"] < 131072


def test_emit_without_an_engine_sizes_with_the_emitted_engines_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = _json(
        capsys, "fit", "--model", "qwen2.5-32b", "--quant", "q4_k_m", "--emit", "ollama",
        "--gpu", "rtx-4090",
    )  # fmt: skip
    assert document["workload"]["engine"] == "llama.cpp"


def test_the_whole_context_when_it_fits(capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(
        capsys, "fit", "--model", "llama-3.1-8b", "--emit", "vllm", "--gpu", "h100-sxm5"
    )
    assert document["workload"]["seq"] == 131072
    assert "--max-model-len 131072" in document["emit"]["command"]


def test_a_given_seq_that_does_not_fit_is_refused_saying_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(
        capsys, "fit", "--model", "qwen2.5-32b", "--quant", "awq", "--emit", "vllm",
        "--gpu", "rtx-4090", "--seq", "131072", "--max-gpus", "1",
    )  # fmt: skip
    assert code == 2
    assert "Launch (" not in out
    assert "rtx-4090 does not hold this workload at --seq 131,072 on one GPU" in err
    assert "GiB usable" in err
    longest = re.search(r"1× holds up to ([\d,]+) tokens: give --seq (\d+)", err)
    assert longest is not None
    # the context it offers is one the fit holds
    document = _json(
        capsys, "fit", "--model", "qwen2.5-32b", "--quant", "awq", "--engine", "vllm",
        "--gpu", "rtx-4090", "--seq", longest.group(2), "--max-gpus", "1",
    )  # fmt: skip
    assert document["gpu"]["count"] == 1


@pytest.mark.parametrize(
    ("gpu", "reason"),
    [
        # an announced part whose vendor has published no memory size
        ("qualcomm-ai250", "its vendor has published no memory size yet"),
        # transformers/vLLM in bf16 on a card without native bf16
        ("gtx-1080", "no native bf16"),
    ],
)
def test_an_excluded_gpu_is_refused_with_the_fits_reason(
    capsys: pytest.CaptureFixture[str], gpu: str, reason: str
) -> None:
    code, out, err = run_cli(
        capsys, "fit", "--model", "llama-3.1-8b", "--emit", "vllm", "--gpu", gpu
    )
    assert code == 2
    assert "Launch (" not in out
    assert f"--emit: {gpu} cannot run this workload: {reason}" in err
    # not a memory comparison against a capacity it does not have or that is not the reason
    assert "usable" not in err and "does not hold" not in err


def test_a_given_seq_is_kept_with_part_in_host_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # llama.cpp runs what one card cannot hold on the CPU: the fit's offload plan
    document = _json(
        capsys, *QWEN_Q4, "--emit", "llama.cpp", "--gpu", "rtx-4090", "--seq", "131072",
        "--max-gpus", "1",
    )  # fmt: skip
    offload = document["gpu"]["offload"]
    assert offload is not None
    command = document["emit"]["command"]
    assert _context_flag(command, "-c") == 131072
    assert _context_flag(command, "-ngl") == offload["gpu_layers"] < 65


def test_a_given_seq_that_fits_is_used(capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(capsys, *QWEN_Q4, "--emit", "llama.cpp", "--gpu", "rtx-4090", "--seq", "8192")
    assert _context_flag(document["emit"]["command"], "-c") == 8192
    assert document["workload"]["seq"] == 8192


def test_a_given_seq_longer_than_the_vllm_pool_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the fit (transformers' memory) holds it on two cards; vLLM's own pool does not
    code, _, err = run_cli(
        capsys, "fit", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--emit", "vllm",
        "--engine", "vllm", "--seq", "131072", "--max-gpus", "1",
    )  # fmt: skip
    assert code == 2
    assert "131,072" in err


# -- the repository matches the weights' format -------------------------------------------


def test_emit_vllm_awq_names_an_awq_checkpoint(capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(
        capsys, "fit", "--model", "qwen2.5-32b", "--quant", "awq", "--emit", "vllm",
        "--gpu", "h100-sxm5",
    )  # fmt: skip
    emit = document["emit"]
    words = shlex.split(emit["command"])
    assert words[2] == "Qwen/Qwen2.5-32B-Instruct-AWQ" == emit["model_ref"]
    assert "Qwen/Qwen2.5-32B" not in words
    assert emit["needs_checkpoint"] is False
    assert any("Instruct" in note for note in emit["notes"])


def test_emit_without_a_known_checkpoint_says_the_user_must_supply_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(
        capsys, "fit", "--model", "qwen2.5-32b", "--quant", "gptq", "--emit", "vllm",
        "--gpu", "h100-sxm5",
    )  # fmt: skip
    assert code == 0, err
    launch = next(line for line in out.splitlines() if "vllm serve" in line)
    assert "YOUR-GPTQ-CHECKPOINT" in launch
    assert "Qwen/Qwen2.5-32B " not in launch
    assert "GPUDesk knows no GPTQ checkpoint of qwen2.5-32b" in " ".join(out.split())


def test_emit_fp8_keeps_the_bf16_repository_and_says_vllm_quantizes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = _json(
        capsys, "fit", "--model", "llama-3.1-8b", "--quant", "fp8", "--emit", "vllm",
        "--gpu", "h100-sxm5",
    )  # fmt: skip
    emit = document["emit"]
    assert emit["model_ref"] == "meta-llama/Llama-3.1-8B"
    assert "--quantization fp8" in emit["command"]
    assert any("as it loads them" in note for note in emit["notes"])


# -- fit --gpu NAME ------------------------------------------------------------------------


def test_fit_gpu_answers_for_that_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, *QWEN_Q4, "--gpu", "rtx-4090")
    assert code == 0, err
    plain = run_cli(capsys, *QWEN_Q4)[1]
    assert out != plain
    # memory in GiB, the unit the card is sold in (its "24 GB" is 24 GiB = 25.8 x 10^9 bytes)
    assert "On rtx-4090 (NVIDIA GeForce RTX 4090, 24 GiB):" in out
    answer = " ".join(out.split())
    assert re.search(
        r"Fits on one GPU at 2,048 tokens: needs [\d.]+ GiB of 24.0 GiB usable", answer
    )
    assert re.search(r"Longest context that fits one GPU: [\d,]+ tokens", answer)
    assert "Fits on one GPU (" not in out  # the catalog-wide table is left out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_fit_gpu_json(capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(capsys, "fit", "--model", "qwen2.5-32b", "--gpu", "rtx-4090")
    gpu = document["gpu"]
    assert gpu["gpu_id"] == "rtx-4090"
    assert gpu["fits"] is True and gpu["count"] == 4  # bf16: 65 GB of weights
    assert gpu["usable_gb"] == pytest.approx(25.77, abs=0.01)
    assert gpu["per_gpu_gb"] < gpu["usable_gb"]
    assert gpu["seq"] == 2048 and gpu["model_context_tokens"] == 131072
    assert gpu["longest_context_count"] == 4
    assert 2048 <= gpu["longest_context_tokens"] <= 131072
    assert document["fits"]  # the catalog-wide keys stay


def test_fit_gpu_that_does_not_hold_it_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "fit", "--model", "llama-3.1-70b", "--gpu", "rtx-3060-12gb", "--max-gpus", "2"
    )
    assert code == 0
    answer = " ".join(out.split())
    assert "Does not fit at 2,048 tokens on up to 2 GPUs: needs" in answer
    assert "12.0 GiB usable each" in answer  # a "12 GB" card: 12.9 x 10^9 bytes
    document = _json(
        capsys, "fit", "--model", "llama-3.1-70b", "--gpu", "rtx-3060-12gb", "--max-gpus", "2"
    )
    assert document["gpu"]["fits"] is False and document["gpu"]["count"] is None


@pytest.mark.parametrize(("name", "meant"), [("rtx-4099", "rtx-4090"), ("h100-sxm6", "h100-sxm5")])
def test_an_unknown_gpu_is_refused_with_a_did_you_mean(
    capsys: pytest.CaptureFixture[str], name: str, meant: str
) -> None:
    code, out, err = run_cli(capsys, "fit", "--model", "qwen2.5-32b", "--gpu", name)
    assert code == 2
    assert out == ""
    assert f"--gpu {name}: no catalog GPU has that name; did you mean" in err
    assert meant in err


def test_a_name_that_resembles_nothing_is_refused_plainly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(capsys, "fit", "--model", "qwen2.5-32b", "--gpu", "zzzz", "--json")
    assert code == 2
    assert "--gpu zzzz: no catalog GPU has that name ('gpudesk list' shows them all)" in err


@settings(max_examples=40, deadline=None)
@given(name=st.text(min_size=1, max_size=30).filter(lambda text: not text.startswith("-")))
def test_any_gpu_name_is_answered_or_refused_in_one_clean_line(name: str) -> None:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["fit", "--model", "qwen2.5-32b", "--gpu", name, "--json"])
    assert code in (0, 2)
    if code == 0:
        assert "gpu_id" in json.loads(out.getvalue())["gpu"]
    else:
        message = err.getvalue()
        assert message.count("\n") == 1 and "--gpu" in message
        assert not any(ord(char) < 32 for char in message.rstrip("\n"))


def test_fit_gpu_for_training_speaks_of_sequences(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "fit", "--model", "llama-3.1-8b", "--mode", "train", "--gpu", "h100-sxm5"
    )
    assert code == 0
    answer = " ".join(out.split())
    assert re.search(r"Longest sequence that fits 2 GPUs: [\d,]+ tokens", answer)
    assert "Longest context" not in answer


def test_an_soc_that_cannot_hold_it_says_so_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "fit", "--model", "llama-3.1-70b", "--gpu", "apple-m2-pro-16c")
    assert code == 0
    answer = " ".join(out.split())
    assert "Does not fit at 2,048 tokens: needs" in answer and "(an SoC: one per machine)" in answer
    assert "No context fits, not even 256 tokens." in answer
