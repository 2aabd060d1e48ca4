"""fit, show and fleet show say memory in one unit, GiB, labelled, with the vendor's GB
explained where the output sets a figure beside a card's "24 GB" (issue 42 item 9: fit's
table read "24 GB" as sold beside "25.8 GB" usable, two GBs side by side)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from survey_factory import gemm_run, gpu, node, survey

from gpudesk.cli import main

QWEN_Q4 = ("fit", "--model", "qwen2.5-32b", "--quant", "q4_k_m")
#: A memory figure with its unit ("19.2 GiB", "25.8 GB"), not a rate ("1,008 GB/s").
_FIGURE = re.compile(r"\d (GiB|GB|MiB)(?!/)")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _block(text: str, start: str) -> list[str]:
    """The lines from the one starting with ``start`` to the next blank line."""
    lines = text.splitlines()
    first = next(index for index, line in enumerate(lines) if line.startswith(start))
    end = next((i for i in range(first + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[first:end]


def test_fit_prints_every_size_in_gib(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, *QWEN_Q4)
    assert code == 0, err
    parts = [line for line in out.splitlines() if re.match(r"  \w[\w ]+ +[\d.]+ GiB   \[", line)]
    assert len(parts) == 6, out  # weights, gradients, optimizer, activations, KV, overhead
    total = next(line for line in out.splitlines() if line.startswith("  Total"))
    assert re.search(r"Total +[\d.]+ GiB  = [\d,]+ MiB = [\d.]+ GB$", total), total
    table = _block(out, "Fits on one GPU (")
    assert table[0].endswith("; memory in GiB):") and len(table) > 20
    assert not _FIGURE.search("\n".join(table)), "the title gives the unit once"
    row = next(line.split() for line in table if line.split()[0] == "rtx-4090")
    # a "24 GB" card holds 24 GiB: as sold and usable read the same number
    assert row[1:3] == ["24", "24.0"], row
    breakdown = _block(out, "Memory in GiB")
    heading = " ".join(" ".join(breakdown).split())
    assert "1 GiB = 1.074 GB" in heading
    # the formulas end in GiB too; GB only where a decimal figure is quoted and labelled:
    # the heading's 1.074, the Total's '= ... GB', GPUDesk's overhead figure
    formulas = " ".join(" ".join(line for line in breakdown[2:] if "Total" not in line).split())
    assert len(re.findall(r" = [\d.]+ GiB", formulas)) >= 4, formulas
    assert set(_FIGURE.findall(formulas.replace("GB (10^9 bytes)", ""))) == {"GiB"}, formulas


def test_fit_gpu_answers_in_gib(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, *QWEN_Q4, "--gpu", "rtx-4090")
    assert code == 0, err
    answer = " ".join(" ".join(_block(out, "On rtx-4090")).split())
    assert answer.startswith("On rtx-4090 (NVIDIA GeForce RTX 4090, 24 GiB):")
    assert re.search(r"needs [\d.]+ GiB of 24\.0 GiB usable \(\+[\d.]+ GiB headroom\)", answer)
    assert set(_FIGURE.findall(answer)) == {"GiB"}, answer
    usable_note = " ".join(" ".join(_block(out, "Usable:")).split())
    assert "a '24 GB' card holds 24 GiB" in usable_note


def test_show_explains_the_vendors_gb(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "show", "h100-sxm5")
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("memory_gb"))
    assert line.split(None, 1)[1] == "80 GiB (sold as '80 GB': GPU vendors' GB are GiB)"
    per_price = next(line for line in out.splitlines() if line.startswith("memory_gb_per_kusd"))
    assert per_price.endswith(" GiB per 1k USD"), per_price


def test_fleet_show_says_gib_to_a_tenth(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "survey.json"
    nodes = [node(f"n{i}", [gpu(0)], [gemm_run(0, 700.0)]) for i in range(2)]
    path.write_text(json.dumps(survey(nodes)), encoding="utf-8")
    code, out, err = run_cli(capsys, "fleet", "show", str(path))
    assert code == 0, err
    assert out.count("79.6 GiB") == 2, out  # 81,559 MiB, as the Fleet tab shows it


def test_speed_refusal_says_gib_like_fit(capsys: pytest.CaptureFixture[str]) -> None:
    """speed's 'does not hold' counts in GiB, as fit and the planner do (it read 'needs
    144.9 GB per GPU, each may use 23.2 GB' beside fit's '134.9 GiB')."""
    code, _, err = run_cli(
        capsys, "speed", "--model", "llama-3.1-70b", "--gpu", "rtx-4090", "--count", "1",
        "--engine", "vllm", "--no-calibration",
    )  # fmt: skip
    assert code == 2
    words = " ".join(err.split())
    found = re.search(
        r"needs ([\d.]+) GiB per GPU, each may use ([\d.]+) GiB \(24 GB as sold", words
    )
    assert found is not None, words
    # the same figures as fit's for that GPU
    _, out, _ = run_cli(
        capsys, "fit", "--model", "llama-3.1-70b", "--engine", "vllm", "--gpu", "rtx-4090",
        "--json",
    )  # fmt: skip
    answer = json.loads(out)["gpu"]
    assert float(found.group(2)) == pytest.approx(answer["usable_gib"], abs=0.05)
