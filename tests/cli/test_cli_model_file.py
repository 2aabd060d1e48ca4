"""``fit --gguf`` / ``--safetensors`` end to end: exact bytes in, exit 2 for bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_file_factory import expected_bytes, write_safetensors_folder, write_tiny_gguf

from gpudesk.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_fit_gguf_json_reports_the_files_exact_tensor_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tiny.gguf"
    written = write_tiny_gguf(path, layers=4)
    exact = sum(expected_bytes(kind, shape) for kind, shape in written.values())
    code, out, _ = run_cli(capsys, "fit", "--gguf", str(path), "--json")
    assert code == 0
    document = json.loads(out)
    assert document["model_file"]["tensor_bytes"] == exact
    assert document["model_file"]["tensor_count"] == len(written)
    assert document["model_file"]["bytes_by_type"]["Q4_0"] == 4 * 128 * 64 // 32 * 18
    assert document["workload"]["engine"] == "llama.cpp"
    assert document["workload"]["quant"] == "q8_0"
    embedding = expected_bytes(*written["token_embd.weight"])
    # llama.cpp keeps the input embedding in host memory: the rest is on the GPU
    assert document["breakdown"]["weights"] == round((exact - embedding) / 1e9, 4)
    assert document["model"]["shape"]["layers"] == 4
    assert "(exact)" in document["formulas"]["weights"]


def test_fit_gguf_text_says_what_the_file_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path)
    code, out, _ = run_cli(capsys, "fit", "--gguf", str(path))
    assert code == 0
    assert "From the file: GGUF llama, MOSTLY_Q8_0: 21 tensors" in out


def test_fit_safetensors_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    total = write_safetensors_folder(tmp_path / "m")
    code, out, _ = run_cli(capsys, "fit", "--safetensors", str(tmp_path / "m"), "--json")
    assert code == 0
    document = json.loads(out)
    assert document["model_file"]["tensor_bytes"] == total
    assert document["breakdown"]["weights"] == round(total / 1e9, 4)


@pytest.mark.parametrize("flag", ["--gguf", "--safetensors"])
def test_a_file_that_is_not_a_model_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is not a model\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "fit", flag, str(path))
    assert code == 2
    assert str(path) in err
    assert "Traceback" not in err
    assert out == ""


def test_verify_of_a_gguf_without_a_tokenizer_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """llama.cpp loads no GGUF without tokenizer.ggml.model and says only 'Failed to load
    model from file'; --verify names the missing key first (exit 2, engine or not)."""
    from gpudesk.bench.verify import write_random_gguf
    from gpudesk.workload.modelfile import read_gguf

    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path)  # the header tests' file: no tokenizer
    code, _, err = run_cli(
        capsys, "speed", "--gguf", str(path), "--engine", "llama.cpp", "--backend", "cpu",
        "--gpu", "cpu", "--mode", "decode", "--verify",
    )  # fmt: skip
    assert code == 2
    assert f"{path} has no tokenizer (no tokenizer.ggml.model key)" in err
    assert read_gguf(path).has_tokenizer is False
    full = tmp_path / "random.gguf"
    model_file = read_gguf(path)
    assert model_file.shape is not None
    write_random_gguf(model_file.shape, full, max_bytes=10**8)  # what --verify writes
    assert read_gguf(full).has_tokenizer is True
