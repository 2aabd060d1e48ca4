"""The 80-column helper: the width chosen, tables that wrap text columns to fit, no word lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gpudesk.cli import main
from gpudesk.cli.common import format_table
from gpudesk.cli.textwidth import (
    DEFAULT_WIDTH,
    display_width,
    output_width,
    terminal_table,
    wrap_paragraph,
)


def test_output_width_is_columns_else_80_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "132")
    assert output_width() == 132
    monkeypatch.setenv("COLUMNS", "not a number")
    assert output_width() == DEFAULT_WIDTH  # pytest's stdout is not a terminal
    monkeypatch.delenv("COLUMNS")
    assert output_width() == DEFAULT_WIDTH
    monkeypatch.setenv("COLUMNS", "3")
    assert output_width() == 20, "absurdly narrow is treated as 20"


def test_a_table_with_room_is_format_tables_table() -> None:
    headers = ["Backend", "Version", "Why not"]
    rows = [["numpy", "2.4", ""], ["torch", "", "not importable"]]
    assert terminal_table(headers, rows, {1}, width=200) == format_table(headers, rows, {1})


def test_text_columns_wrap_numbers_do_not() -> None:
    long = "PyTorch is not importable; install it with pip install 'gpudesk[torch]' " * 3
    text = terminal_table(["Name", "TFLOPS", "Why"], [["torch", "1,979.0", long]], {1}, width=60)
    lines = text.splitlines()
    assert max(display_width(line) for line in lines) <= 60
    assert len(lines) > 3, "the long cell wrapped onto continuation lines"
    assert "1,979.0" in lines[2], "the number stays whole on the row's first line"
    assert (
        " ".join(long.split())
        == " ".join(" ".join(line[len("torch  1,979.0  ") :].split()) for line in lines[2:]).strip()
    )


_words = st.text(alphabet="abcdefghij ×é-.'", min_size=0, max_size=60)


@settings(max_examples=60, deadline=None)
@given(
    headers=st.lists(st.text(alphabet="ABCdef ", min_size=1, max_size=12), min_size=1, max_size=5),
    data=st.data(),
    width=st.integers(min_value=20, max_value=120),
)
def test_every_line_fits_and_every_word_survives(
    headers: list[str], data: st.DataObject, width: int
) -> None:
    rows = data.draw(
        st.lists(st.lists(_words, min_size=len(headers), max_size=len(headers)), max_size=6)
    )
    text = terminal_table(headers, rows, width=width)
    # Each wrapped column keeps at least 10 characters, so up to 5 columns fit in 58.
    if width >= 10 * len(headers) + 2 * (len(headers) - 1):
        assert max(display_width(line) for line in text.splitlines()) <= width
    lines = text.splitlines()
    body = [line for index, line in enumerate(lines) if not set(line) <= {"-", " "} or not line]
    kept = "".join("".join(line.split()) for line in body)
    given_chars = "".join("".join(cell.split()) for row in [headers, *rows] for cell in row)
    assert sorted(kept) == sorted(given_chars.replace("-", "")) or sorted(
        kept.replace("-", "")
    ) == sorted(given_chars.replace("-", "")), "wrapping drops only spaces"


def test_wrap_paragraph_indents_and_fits() -> None:
    text = wrap_paragraph("word " * 40, 30, indent="    ")
    assert all(line.startswith("    ") and len(line) <= 30 for line in text.splitlines())
    assert text.split() == ["word"] * 40


def test_wide_characters_count_two_cells() -> None:
    assert display_width("日本") == 4
    assert display_width("e\u0301") == 1
    text = terminal_table(["Name", "Note"], [["x", "日本語の説明 " * 10]], width=40)
    assert max(display_width(line) for line in text.splitlines()) <= 40


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--list-backends"],
        ["fit", "--list-models"],
        ["compare", "4090", "a100-80gb-pcie", "--text"],
        ["compare", "4090", "a100-80gb-pcie", "h100-sxm5", "mi300x", "gaudi-3", "b200", "--text"],
        ["compare", "4090", "h100-sxm5", "--text", "--baseline", "4090"],
    ],
)
def test_listings_fit_80_columns(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert max(display_width(line) for line in out.splitlines()) <= 80, out


def test_compare_on_a_terminal_prints_the_table_a_pipe_keeps_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import sys

    assert main(["compare", "rtx-4090", "h100-sxm5"]) == 0
    assert len(json.loads(capsys.readouterr().out)["gpus"]) == 2
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["compare", "rtx-4090", "h100-sxm5"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "RTX 4090" in lines[0] and "H100 SXM5" in lines[0]
    assert any(line.startswith("  Memory (GiB)") and "80 *" in line for line in lines)
    assert "* best in row" in out
    assert main(["compare", "rtx-4090", "h100-sxm5", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["gpus"]) == 2


def test_validate_names_a_missing_folder_and_how_to_create_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "gpudesk" / "catalog"
    assert main(["validate", "--strict", str(missing)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "does not exist yet" in out and f"mkdir -p {missing}" in out
    # The pointer names the page and heading that hold the how-to today.
    assert "(docs/catalog.md#updating-a-price-or-adding-a-gpu)" in out
    catalog_doc = Path(__file__).parents[2] / "docs" / "catalog.md"
    assert "## Updating a price or adding a GPU" in catalog_doc.read_text()
    folder = tmp_path / "file"
    folder.write_text("x")
    assert main(["validate", str(folder)]) == 1
    assert "not a folder" in capsys.readouterr().out


def test_widths_are_measured_after_control_characters_are_escaped() -> None:
    text = terminal_table(["Name", "Note"], [["evil\x1b[31m", "x " * 50]], width=40)
    assert "\x1b" not in text and "\\u001b[31m" in text
    assert max(display_width(line) for line in text.splitlines()) <= 40


def test_a_long_id_breaks_after_a_hyphen_not_mid_word() -> None:
    text = terminal_table(
        ["GPU", "Note"], [["rtx-pro-6000-blackwell-server", "x " * 60]], width=40, wrap=[0, 1]
    )
    first_column = [line.split("  ")[0] for line in text.splitlines()[2:]]
    assert first_column[:2] == ["rtx-pro-6000-", "blackwell-server"], text
    # No hyphen to break at: cut, nothing lost; a leading hyphen (a flag) is no break.
    assert terminal_table(["A"], [["x" * 30]], width=20, wrap=[0]).count("x") == 30
    assert "--flag" in terminal_table(["A", "B"], [["--flag-" + "y" * 20, "z"]], width=20)


@pytest.mark.parametrize(
    "argv",
    [
        [
            "speed",
            "--model",
            "llama-3.1-70b",
            "--quant",
            "fp8",
            "--mode",
            "serve",
            "--engine",
            "tensorrt-llm",
            "--seq-in",
            "1000",
            "--seq-out",
            "1000",
        ],
        ["fit", "--model", "llama-3.1-70b", "--quant", "fp8"],
        ["list"],
        ["prices"],
    ],
)
def test_gpu_ids_read_whole_at_80_columns(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(argv) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(display_width(line) for line in lines) <= 80, out
    # An id cut to the column (rtx-pro-6000-blackwe / ll) never shows: a line that
    # starts with part of an id ends that part at a hyphen, or is the whole id.
    for line in lines:
        word = line.split(" ", 1)[0]
        assert not word.startswith("rtx-pro-6000-bl") or word in {
            "rtx-pro-6000-blackwell",
            "rtx-pro-6000-blackwell-server",
            "rtx-pro-6000-blackwell-max-q",
        }, line


def test_fleet_show_fits_80_columns_with_long_host_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from survey_factory import gemm_run, gpu, node, survey

    nodes = [
        node(f"gpu-node-{i:02d}.cluster.example.org", [gpu(0), gpu(1)], [gemm_run(0, 700.0)])
        for i in range(2)
    ]
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(survey(nodes)), encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["fleet", "show", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(display_width(line) for line in lines) <= 80, "\n".join(lines)
    # Host names break after a hyphen or a dot, never inside a label.
    node_cells = [line.split(" ", 1)[0] for line in lines if line.startswith(("host", "node"))]
    assert node_cells and all(cell.endswith(("-", ".")) for cell in node_cells), node_cells
