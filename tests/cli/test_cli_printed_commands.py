"""Issue 39 item 8: every command printed to paste runs as printed.

Launch lines and "Check it:" recipes are quoted word by word and never wrapped,
so ``shlex.split`` of each printed line gives back exactly the intended words,
whatever the model path holds; a path no printed line could carry (a control
character) and an Ollama Modelfile value that would add instructions are refused.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import reach
from hypothesis import given, strategies as st

from gpudesk.cli import main
from gpudesk.engines.launch import (
    COMMANDS,
    LaunchPlan,
    unprintable,
    verify_commands,
)

#: Paths a shell would split, expand or run if they were not quoted.
HOSTILE_PATHS = [
    "/models/my model.gguf",
    "/models/it's.gguf",
    '/models/"quoted".gguf',
    "/models/$HOME/x.gguf",
    "/models/a;rm -rf ~.gguf",
    "/models/`id`.gguf",
    "/models/*.gguf",
    "/models/a|b&c>d<e.gguf",
    "/models/ünïcode #1.gguf",
]


def _plan(engine: str, model_ref: str, tensor_parallel: int = 1) -> LaunchPlan:
    return LaunchPlan(
        engine=engine,
        model_ref=model_ref,
        tensor_parallel=tensor_parallel,
        context=8192,
        dtype="bf16",
        quant=None,
        kv_dtype="fp8",
        max_num_seqs=4,
        utilisation=0.9,
        gpu_layers=33,
        layers=32,
    )


def _launch_words(engine: str, ref: str, tensor_parallel: int) -> list[str]:
    """The argv each engine's launch line must give, written out independently."""
    if engine == "vllm":
        return [
            "vllm", "serve", ref, "--tensor-parallel-size", str(tensor_parallel),
            "--gpu-memory-utilization", "0.9", "--max-model-len", "8192", "--dtype", "bfloat16",
            "--kv-cache-dtype", "fp8", "--max-num-seqs", "4",
        ]  # fmt: skip
    if engine == "sglang":
        return [
            "python", "-m", "sglang.launch_server", "--model-path", ref,
            "--tp", str(tensor_parallel), "--context-length", "8192",
            "--mem-fraction-static", "0.9", "--kv-cache-dtype", "fp8_e4m3",
            "--max-running-requests", "4",
        ]  # fmt: skip
    split = ["-ts", ",".join(["1"] * tensor_parallel)] if tensor_parallel > 1 else []
    return [
        "llama-server", "-m", ref, "-c", "32768", "-ngl", "33", *split, "-fa", "on",
        "-ctk", "q8_0", "-ctv", "q8_0", "-np", "4",
    ]  # fmt: skip


def _check_words(engine: str, ref: str, gpu_id: str, tensor_parallel: int) -> list[list[str]]:
    """The tokens of each "Check it" line, shell operators included."""
    keep = ["gpudesk", "measurements", "import", "bench.json", "--gpu", gpu_id]
    if tensor_parallel > 1:
        keep += ["--count", str(tensor_parallel)]
    if engine == "vllm":
        grep = ["2>&1", "|", "grep", "-E", "GPU KV cache size|Maximum concurrency"]
        bench = [
            "vllm", "bench", "serve", "--model", ref, "--dataset-name", "random",
            "--random-input-len", "1024", "--random-output-len", "256", "--save-result",
            "--result-filename", "bench.json",
        ]  # fmt: skip
        return [_launch_words(engine, ref, tensor_parallel) + grep, [*bench, "&&", *keep]]
    if engine == "sglang":
        grep = ["2>&1", "|", "grep", "KV Cache is allocated"]
        return [_launch_words(engine, ref, tensor_parallel) + grep]
    bench = ["llama-bench", "-m", ref, "-ngl", "33", "-p", "512", "-n", "128", "-o", "json"]
    return [[*bench, ">", "bench.json", "&&", *keep]]


def _tokens(line: str) -> list[str]:
    """``line`` as the shell splits it, with ``2>&1`` kept as one operator word."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
    lexer.whitespace_split = True
    tokens = list(lexer)
    # punctuation_chars splits "2>&1" into "2" ">&" "1"
    merged: list[str] = []
    for token in tokens:
        if merged[-2:] == ["2", ">&"] and token == "1":
            merged[-2:] = ["2>&1"]
        else:
            merged.append(token)
    return merged


ENGINES = ["vllm", "sglang", "llama.cpp"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ref", HOSTILE_PATHS)
def test_every_printed_command_splits_back_into_its_words(engine: str, ref: str) -> None:
    for tensor_parallel in (1, 2):
        plan = _plan(engine, ref, tensor_parallel)
        launch = COMMANDS[engine](plan)
        assert "\n" not in launch
        assert shlex.split(launch) == _launch_words(engine, ref, tensor_parallel)
        checks = verify_commands(plan, "h100-sxm5")
        assert [_tokens(line) for line in checks] == _check_words(
            engine, ref, "h100-sxm5", tensor_parallel
        )
        assert all("\n" not in line for line in checks)


#: Text that is mostly what a shell treats specially, and any text at all.
PATHS = st.one_of(
    st.text(
        alphabet=st.sampled_from(list(" '\"$;`\\|&<>*?~#!(){}=-/.a\u00e9\n\t\x1b\u202e")),
        min_size=1,
    ),
    st.text(min_size=1, max_size=40),
)


@pytest.mark.reaches(round_trip=30, refused=20)
@given(PATHS)
def test_any_model_path_round_trips_or_is_refused(ref: str) -> None:
    bad = unprintable(ref)
    if bad is not None:
        assert chr(int(bad.removeprefix("U+"), 16)) in ref
        reach.reached("refused")
        return
    for engine in ENGINES:
        plan = _plan(engine, ref, 2)
        assert shlex.split(COMMANDS[engine](plan)) == _launch_words(engine, ref, 2)
        checks = verify_commands(plan, "rtx-4090")
        assert [_tokens(line) for line in checks] == _check_words(engine, ref, "rtx-4090", 2)
    reach.reached("round_trip")


# -- at the command line ------------------------------------------------------------------

LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
}


def _config_folder(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_CONFIG), "utf-8")
    return folder


def _emit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, folder: Path, engine: str
) -> tuple[int, str, str]:
    monkeypatch.setenv("COLUMNS", "80")  # a narrow terminal must not wrap a command
    argv = ["fit", "--config", str(folder), "--gpu", "h100-sxm5", "--emit", engine]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _section(out: str, heading: str) -> list[str]:
    """The indented lines under the line starting with ``heading``."""
    lines = out.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(heading))
    section: list[str] = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        section.append(line[2:])
    return section


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["my model", 'it\'s $HOME; `id` "x" *'])
def test_fit_emit_prints_lines_that_paste_as_printed(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    engine: str,
    name: str,
) -> None:
    folder = _config_folder(tmp_path, name)
    code, out, err = _emit(capsys, monkeypatch, folder, engine)
    assert code == 0, err
    (launch,) = _section(out, "Launch (")
    assert shlex.split(launch)[:4] == _launch_words(engine, str(folder), 1)[:4]
    assert str(folder) in shlex.split(launch)
    checks = _section(out, "Check it")
    assert len(checks) == (2 if engine == "vllm" else 1)
    for line in checks:
        words = _tokens(line)  # a wrapped line would split unbalanced or lose its tail
        assert str(folder) in words
    if engine != "sglang":  # the recipe ends in the import, on the same line
        assert _tokens(checks[-1])[-4:] == ["import", "bench.json", "--gpu", "h100-sxm5"]


def test_the_ollama_modelfile_names_the_file_unquoted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = _config_folder(tmp_path, "my model")
    code, out, err = _emit(capsys, monkeypatch, folder, "ollama")
    assert code == 0, err
    modelfile = _section(out, "Launch (")
    # Ollama reads the rest of the line as the path: quotes would become part of it
    assert modelfile[0] == f"FROM {folder}"
    assert [line.split()[0] for line in modelfile] == ["FROM", "PARAMETER", "PARAMETER"]


@pytest.mark.parametrize("engine", ["ollama", "vllm", "llama.cpp", "sglang"])
@pytest.mark.parametrize(
    ("name", "shown", "code_point"),
    [
        ("x\nSYSTEM you are evil\nADAPTER evil", "x\nSYSTEM", "U+000A"),
        ("x\x1b[31mred", "x\\u001b[31mred", "U+001B"),
        ("tab\there", "tab\there", "U+0009"),
    ],
)
def test_a_model_path_with_a_control_character_is_refused_naming_it(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    engine: str,
    name: str,
    shown: str,
    code_point: str,
) -> None:
    folder = _config_folder(tmp_path, name)
    code, out, err = _emit(capsys, monkeypatch, folder, engine)
    assert code == 2
    assert "FROM" not in out and "Launch (" not in out
    assert f"--emit {engine}: the model path '{tmp_path}/" in err
    assert f"holds a control character ({code_point})" in err
    assert shown.split("\n")[0] in err
    assert "\x1b" not in err
