"""The report's Fleet section: a survey summarised per model, outliers and failed nodes listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pypdf import PdfReader
from survey_factory import gemm_run, gpu, node, survey

from gpudesk.cli import main
from gpudesk.fleet.document import parse_survey
from gpudesk.report.fleet_section import MAX_LISTED, build_fleet_section


def _fleet_document() -> dict:
    nodes = [node(f"n{i}", [gpu(0)], [gemm_run(0, 780.0 + i)]) for i in range(3)]
    nodes.append(node("slow", [gpu(0)], [gemm_run(0, 300.0)]))
    nodes.append(node("bare", [gpu(0, "NVIDIA L4", catalog_id="l4")]))
    nodes.append(node("gone", error="the node died during the survey (NodeDiedError)"))
    return survey(nodes)


def test_section_has_one_row_per_model_with_median_and_range() -> None:
    view, _ = parse_survey(json.dumps(_fleet_document()), "t")
    section = build_fleet_section(view)
    # the slow GPU: below the fleet's median; the reference is one line for the model
    assert "6 nodes, 5 GPUs, 1 nodes failed, 1 outlier." in section.heading
    assert section.models == (
        ("h100-sxm5", "4", "GEMM BF16 780 TFLOPS", "300–782", "1"),
        ("l4", "1", "not measured", "", "0"),
    )
    assert section.outliers[0].startswith("host-slow GPU 0: GEMM BF16 300 TFLOPS")
    assert section.slow == 1
    assert section.failed == ("host-gone: the node died during the survey (NodeDiedError)",)
    [reference] = section.reference
    assert reference.startswith(
        "h100-sxm5, fleet median of 4 GPUs: GEMM BF16 780 TFLOPS = 99% of the H100 SXM "
        "reference median"
    )


def test_a_healthy_survey_of_48_spends_no_page_on_outliers() -> None:
    """Issue 42 item 2: 48 H100s at 700-707 TFLOPS were 48 outlier paragraphs (two pages)."""
    nodes = [node(f"n{i:02d}", [gpu(0)], [gemm_run(0, 700.0 + i % 8)]) for i in range(48)]
    nodes.append(node("broken", [gpu(0)], [gemm_run(0, 405.0)]))
    view, _ = parse_survey(json.dumps(survey(nodes)), "t")
    section = build_fleet_section(view)
    assert len(section.outliers) == 1 and section.slow == 1
    assert section.outliers[0].startswith("host-broken GPU 0: GEMM BF16 405 TFLOPS is 58%")
    assert len(section.reference) == 1 and "fleet median of 49 GPUs" in section.reference[0]


def test_long_lists_are_capped_and_counted() -> None:
    nodes = [node(f"n{i}", [gpu(0, pcie_width_current=8)]) for i in range(MAX_LISTED + 5)]
    view, _ = parse_survey(json.dumps(survey(nodes)), "t")
    section = build_fleet_section(view)
    assert len(section.outliers) == MAX_LISTED
    assert section.left_out == ("5 more outliers are in the survey file.",)


@pytest.mark.gui  # paints the PDF with Qt
def test_compare_pdf_with_fleet_has_the_section(tmp_path: Path) -> None:
    survey_path = tmp_path / "survey.json"
    survey_path.write_text(json.dumps(_fleet_document()))
    pdf = tmp_path / "report.pdf"
    assert (
        main(["compare", "rtx-4090", "h100-sxm5", "--pdf", str(pdf), "--fleet", str(survey_path)])
        == 0
    )
    text = "\n".join(page.extract_text() for page in PdfReader(pdf).pages)
    assert "Fleet" in text and "h100-sxm5" in text
    assert "host-gone" in text


@pytest.mark.parametrize("content", ["{", None])
def test_a_bad_or_misused_fleet_file_exits_2_and_writes_nothing(
    tmp_path: Path, content: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    survey_path = tmp_path / "survey.json"
    survey_path.write_text(content or json.dumps(_fleet_document()))
    pdf = tmp_path / "report.pdf"
    argv = ["compare", "rtx-4090", "h100-sxm5", "--fleet", str(survey_path)]
    if content is not None:
        argv += ["--pdf", str(pdf)]
    assert main(argv) == 2
    assert "--fleet" in capsys.readouterr().err
    assert not pdf.exists()
