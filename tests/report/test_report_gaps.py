"""A PDF report with announced parts whose vendors published no memory size or bandwidth
(issue 43): it is written, each gap reads "n/a" or "not published", never 0, and a
best-for line names the parts it could not rank."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pypdf import PdfReader

from gpudesk.catalog.loader import load_catalog
from gpudesk.cli import main
from gpudesk.report.content import best_for_lines

pytestmark = pytest.mark.usefixtures("qapp")

GAPS = ("rubin-cpx", "qualcomm-ai250", "h100-sxm5")


def _text(path: Path) -> str:
    reader = PdfReader(str(path))
    return " ".join(" ".join(page.extract_text().split()) for page in reader.pages)


@pytest.mark.gui  # paints the PDF with Qt
def test_compare_pdf_with_gap_entries_is_written_with_gaps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "gaps.pdf"
    assert main(["compare", *GAPS, "--pdf", str(target)]) == 0
    assert f"wrote {target}" in capsys.readouterr().err
    text = _text(target)
    assert "NVIDIA Rubin CPX" in text and "Qualcomm AI250" in text
    # the summary says what is unknown; the spec table shows n/a in the bandwidth row
    assert "memory size not published" in text
    bandwidth = text.split("Bandwidth (GB/s)", 1)[1].split("Memory bus", 1)[0].split()
    assert bandwidth[:3] == ["n/a", "n/a", "3,350"]
    assert not re.search(r"(?<![\d,.])0(\.0+)? (GB|GB/s)\b", text)  # a gap is never 0
    # the link named without a rate says so
    assert "no published rate" in " ".join(text.replace("-", "").split())


def test_a_best_for_line_names_the_parts_it_could_not_rank() -> None:
    catalog = load_catalog([], include_user=False)
    entries = [catalog.by_id(entry_id) for entry_id in (*GAPS, "h200-sxm")]
    assert all(entry is not None for entry in entries)
    lines = {line.metric_key: line for line in best_for_lines(entries)}  # type: ignore[arg-type]
    bandwidth = lines["bandwidth_gbs"]
    assert bandwidth.winner_ids == ("h200-sxm",)
    assert "not ranked" in bandwidth.caveat.lower()
    assert "NVIDIA Rubin CPX" in bandwidth.caveat and "Qualcomm AI250" in bandwidth.caveat
    memory = lines["memory_gb"]
    assert "Qualcomm AI250" in memory.caveat and "Rubin" not in memory.caveat
