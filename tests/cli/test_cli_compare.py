"""``gpudesk compare``: JSON/CSV table, radar PNG/SVG offscreen, usage errors exit 2."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpudesk.cli import main

THREE = ("RTX 4090", "A100 80GB PCIe", "H100 NVL")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_one_object_per_gpu_and_best(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compare", *THREE, "--json")
    assert code == 0
    data = json.loads(out)
    assert [gpu["id"] for gpu in data["gpus"]] == ["rtx-4090", "a100-80gb-pcie", "h100-nvl"]
    by_id = {gpu["id"]: gpu for gpu in data["gpus"]}
    assert by_id["rtx-4090"]["metrics"]["memory_gb"] == 24
    assert by_id["h100-nvl"]["metrics"]["memory_gb"] == 94
    assert data["best"]["memory_gb"] == "h100-nvl"
    # lower is better: the cheapest priced GPU; A100 price may be missing but never wins
    prices = {key: gpu["metrics"]["price_usd"] for key, gpu in by_id.items()}
    priced = {key: value for key, value in prices.items() if value is not None}
    assert data["best"]["price_usd"] == min(priced, key=priced.__getitem__)
    assert data["baseline"] is None
    assert data["units"]["bandwidth_gbs"] == "GB/s"


def test_no_output_flag_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compare", "rtx-4090", "h100-nvl")
    assert code == 0
    assert len(json.loads(out)["gpus"]) == 2


def test_baseline_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compare", *THREE, "--json", "--baseline", "RTX 4090")
    assert code == 0
    data = json.loads(out)
    assert data["baseline"] == "rtx-4090"
    h100 = data["gpus"][2]
    assert h100["ratios"]["memory_gb"] == pytest.approx(94 / 24, abs=1e-6)


def test_csv_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    code, out, err = run_cli(capsys, "compare", *THREE, "--csv", str(target))
    assert code == 0
    assert out == ""  # a file output alone prints no JSON
    assert f"wrote {target}" in err
    rows = list(csv.reader(io.StringIO(target.read_text("utf-8"))))
    assert rows[0][:4] == ["group", "key", "label", "unit"]
    memory = next(row for row in rows if row[1] == "memory_gb")
    assert memory[4:7] == ["24", "80", "94"]
    assert memory[-1] == "h100-nvl"


def test_png_and_svg_offscreen(
    qapp: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from PySide6.QtGui import QImage  # only this test needs Qt

    png = tmp_path / "radar.png"
    svg = tmp_path / "radar.svg"
    code, _, err = run_cli(capsys, "compare", *THREE, "--png", str(png), "--svg", str(svg))
    assert code == 0, err
    image = QImage(str(png))
    assert not image.isNull() and image.width() > 1000
    text = svg.read_text("utf-8")
    assert "RTX 4090" in text and "H100 NVL" in text and "Bandwidth" in text


def test_png_without_display_in_a_fresh_process(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    png = tmp_path / "radar.png"
    result = subprocess.run(
        [sys.executable, "-m", "gpudesk", "compare", *THREE, "--png", str(png)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert png.stat().st_size > 10_000


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("rtx-4090",), "2 to 6 GPUs, got 1"),
        (("rtx-4090", "h100-nvl", "a100-80gb-pcie", "l4", "t4", "l40s", "v100"), "got 7"),
        (("rtx-4090", "no-such-gpu-xyz"), "no-such-gpu-xyz"),
        (("rtx-4090", "RTX 4090"), "twice"),
        (("rtx-4090", "h100-nvl", "--baseline", "a100-80gb-pcie"), "--baseline"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run_cli(capsys, "compare", *argv)
    assert code == 2
    assert out == ""
    assert message in err


def test_unwritable_output_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(
        capsys, "compare", *THREE, "--png", str(tmp_path / "missing" / "radar.png")
    )
    assert code == 1
    assert "does not exist" in err
