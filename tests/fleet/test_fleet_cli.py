"""``gpudesk fleet`` usage paths that need no cluster: no Ray, bad flags, bad files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from survey_factory import gemm_run, gpu, node, survey

from gpudesk.cli import main

_WITHOUT_RAY = (
    "import sys; sys.modules['ray'] = None; from gpudesk.cli import main; "
    "sys.exit(main(sys.argv[1:]))"
)


def test_without_ray_the_fleet_survey_exits_2_with_the_install_hint() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_RAY, "fleet", "survey", "--address", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "pip install '.[fleet]' from the GPUDesk checkout" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["fleet", "survey", "--address", "local"],
        ["fleet", "survey", "--address", "host:notaport"],
        ["fleet", "survey", "--timeout", "nan"],
        ["fleet", "survey", "--timeout", "0"],
        ["fleet", "survey", "--bench", "full"],
        ["fleet"],
    ],
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    assert code == 2
    assert capsys.readouterr().err


def test_show_prints_inventory_outliers_and_failed_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = [node(f"n{i}", [gpu(0)], [gemm_run(0, 780.0)]) for i in range(3)]
    nodes.append(node("slow", [gpu(0, pcie_width_current=8)], [gemm_run(0, 300.0)]))
    nodes.append(node("gone", error="the node died during the survey (NodeDiedError)"))
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(survey(nodes)))
    assert main(["fleet", "show", str(path)]) == 0
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= 80
    text = " ".join(printed.split())  # long lines wrap to 80 columns
    assert "5 nodes, 4 GPUs, 1 failed" in text
    assert "host-slow GPU 0: PCIe link is x8 of x16" in text  # the shared rule's words
    assert "38% of the fleet median 780" in text
    # the published reference is one line for the model's fleet median, not one per GPU
    assert "Reference: h100-sxm5, fleet median of 4 GPUs: GEMM BF16 780 TFLOPS" in text
    assert "GEMM BF16 300 TFLOPS = 38% of the H100 SXM reference" not in text
    assert "host-gone (gone): the node died during the survey" in text
    assert main(["fleet", "show", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert {item["check"] for item in shown["summary"]["outliers"]} == {
        "pcie_width",
        "measured:gemm bf16",
    }
    [reference] = shown["summary"]["reference"]
    assert (reference["model"], reference["gpus"], reference["fleet_median"]) == (
        "h100-sxm5",
        4,
        780.0,
    )


def test_show_of_a_bad_file_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"cluster": ')
    assert main(["fleet", "show", str(path)]) == 2
    assert str(path) in capsys.readouterr().err
