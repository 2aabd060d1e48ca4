"""Planning text a person reads uses one multiplication sign, "×" (issue 19 item 14).

The formulas of ``fit``, ``speed`` and ``cost`` mixed "x", "×" and "·" (``2 x 33 KV
heads``, ``2·(3·h + 2·q)``, ``H200 × 1``); the separator " · " between items is not
a multiplication and stays.
"""

from __future__ import annotations

import re

import pytest

from gpudesk.cli import main

#: "33 KV heads x 128", "8·T·V", "8x H100": any other multiplication sign between operands
OTHER_SIGNS = re.compile(r"[\w)\]}%²] x [\w({$]|[\w)²]·[\w(]|\b\d+x [A-Z]")


_LLAMA = ["--model", "llama-3.1-8b"]


@pytest.mark.parametrize(
    "argv",
    [
        ["fit", "--params", "7B", "--mode", "inference", "--dtype", "bf16"],
        ["fit", *_LLAMA, "--mode", "train", "--checkpointing"],
        ["fit", *_LLAMA, "--mode", "lora", "--no-flash-attention"],
        ["fit", *_LLAMA, "--mode", "qlora", "--engine", "llama.cpp"],
        ["speed", *_LLAMA, "--mode", "decode", "--gpu", "RTX 4090"],
        [
            "speed",
            "--model",
            "llama-3.1-8b",
            "--mode",
            "prefill",
            "--gpu",
            "H100 SXM5",
            "--count",
            "2",
        ],
        [
            "speed",
            "--model",
            "llama-3.1-8b",
            "--mode",
            "train",
            "--gpu",
            "H100 SXM5",
            "--count",
            "8",
        ],
        [
            "speed",
            "--model",
            "llama-3.1-8b",
            "--mode",
            "serve",
            "--gpu",
            "RTX 4090",
            "--count",
            "2",
        ],
        ["cost", "RTX 4090", "--count", "2"],
    ],
)
def test_planning_text_multiplies_with_one_sign(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "×" in out
    assert not OTHER_SIGNS.findall(out), OTHER_SIGNS.findall(out)
