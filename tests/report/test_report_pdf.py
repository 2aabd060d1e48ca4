"""The PDF report read back with pypdf: pages, text, metadata, vectors, atomic writing."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot
from report_factory import IDS, catalog

from gpudesk import __version__
from gpudesk.catalog.schema import CatalogEntry
from gpudesk.progress import Cancelled, ProgressState
from gpudesk.report import pdf as report_pdf
from gpudesk.report.content import LocalData
from gpudesk.report.pdf import prepare_charts, write_pdf_report
from gpudesk.ui.worker import TaskWorker

pytestmark = pytest.mark.usefixtures("qapp")

THREE = ("alpha-100", "beta-200", "gamma-300")


def _entries(*ids: str) -> list[CatalogEntry]:
    cat = catalog()
    return [entry for entry_id in ids if (entry := cat.by_id(entry_id)) is not None]


def _write(path: Path, ids: tuple[str, ...] = THREE, **kwargs: Any) -> PdfReader:
    write_pdf_report(_entries(*ids), path, catalog=catalog(), **kwargs)
    return PdfReader(str(path))


def _texts(reader: PdfReader) -> list[str]:
    # Qt spaces words with tabs or positioning; compare on single spaces.
    return [" ".join(page.extract_text().split()) for page in reader.pages]


@pytest.fixture(scope="module")
def three_gpu_pdf(tmp_path_factory: pytest.TempPathFactory) -> tuple[PdfReader, list[str]]:
    path = tmp_path_factory.mktemp("pdf") / "report.pdf"
    reader = _write(path)
    return reader, _texts(reader)


def test_pages_are_numbered_n_of_m(three_gpu_pdf: tuple[PdfReader, list[str]]) -> None:
    reader, texts = three_gpu_pdf
    total = len(reader.pages)
    assert total >= 3
    for number, text in enumerate(texts, start=1):
        assert f"Page {number} of {total}" in text


def test_gpu_names_units_and_key_figures_are_text(
    three_gpu_pdf: tuple[PdfReader, list[str]],
) -> None:
    _, texts = three_gpu_pdf
    text = " ".join(texts)
    for name in ("Alpha 100", "Beta 200", "Gamma 300"):
        assert name in text
    for unit in ("Memory (GiB)", "Bandwidth (GB/s)", "FP32 (TFLOPS)", "TDP (W)", "Price (USD)"):
        assert unit in text
    # figures from the table, the best-for lines and the notes
    for figure in ("3,900", "835.5", "1,599", "28,000", "30.00", "n/a", "94 GiB"):
        assert figure in text
    assert "Most memory" in text
    assert "What the figures mean" in text  # no "fi" ligature: the text stays searchable
    assert "\ufb01" not in text
    assert "https://example.com/beta-datasheet" in text
    assert "1,671.0 TFLOPS with 2:4 sparsity" in text


def test_cover_has_title_date_version_and_catalog_date(
    three_gpu_pdf: tuple[PdfReader, list[str]],
) -> None:
    _, texts = three_gpu_pdf
    first = texts[0]
    assert first.startswith("GPU comparison report")
    assert f"GPUDesk {__version__}" in first
    assert "Catalog of 2026-03-14" in first
    assert "Created 20" in first


def test_metadata_title_creator_author(three_gpu_pdf: tuple[PdfReader, list[str]]) -> None:
    reader, _ = three_gpu_pdf
    metadata = reader.metadata
    assert metadata is not None
    assert metadata.title == "GPU comparison report: Alpha 100, Beta 200 and Gamma 300"
    assert metadata.creator == f"GPUDesk {__version__}"
    assert metadata.author == "GPUDesk"


def test_the_bundled_font_is_embedded(three_gpu_pdf: tuple[PdfReader, list[str]]) -> None:
    reader, _ = three_gpu_pdf
    fonts = set()
    for page in reader.pages:
        resources = page["/Resources"]
        for font in resources.get("/Font", {}).values():
            fonts.add(str(font.get_object()["/BaseFont"]))
    assert fonts
    assert all("DejaVuSans" in font for font in fonts), fonts


def _images(reader: PdfReader) -> list[tuple[int, int]]:
    sizes = []
    for page in reader.pages:
        xobjects = page["/Resources"].get("/XObject", {})
        for xobject in xobjects.values():
            obj = xobject.get_object()
            if obj.get("/Subtype") == "/Image":
                sizes.append((int(obj["/Width"]), int(obj["/Height"])))
    return sizes


def _chart_page(reader: PdfReader, texts: list[str]) -> int:
    return next(index for index, text in enumerate(texts) if "Charts: spec radar" in text)


def test_charts_are_vector_drawings(three_gpu_pdf: tuple[PdfReader, list[str]]) -> None:
    reader, texts = three_gpu_pdf
    stream = reader.pages[_chart_page(reader, texts)].get_contents()
    assert stream is not None
    data = stream.get_data()
    # path operators: move, line, curve; fill and stroke
    assert data.count(b" l\n") > 50
    assert data.count(b" m\n") > 20
    assert b" c\n" in data
    # no page-sized picture: nothing raster larger than an icon
    assert all(width < 400 and height < 400 for width, height in _images(reader))


def test_chart_text_is_at_print_size_and_on_the_page(
    three_gpu_pdf: tuple[PdfReader, list[str]],
) -> None:
    """The recorded charts replay at the size they were drawn (no dpi rescaling)."""
    reader, texts = three_gpu_pdf
    page = reader.pages[_chart_page(reader, texts)]
    width, height = float(page.mediabox.width), float(page.mediabox.height)
    found: dict[str, tuple[float, float, float]] = {}

    def visit(text: str, cm: list[float], tm: list[float], font: object, size: float) -> None:
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        found.setdefault(" ".join(text.split()), (x, y, abs(cm[0] * tm[0] * size)))

    page.extract_text(visitor_text=visit)
    for label in ("Bandwidth", "FP64"):  # radar axis labels
        x, y, size_pt = found[label]
        assert 0 < x < width and 0 < y < height
        assert 6 < size_pt < 11


@pytest.mark.parametrize(("paper", "size_pt"), [("a4", (595.3, 841.9)), ("letter", (612.0, 792.0))])
def test_paper_size(tmp_path: Path, paper: str, size_pt: tuple[float, float]) -> None:
    reader = _write(tmp_path / "r.pdf", ("alpha-100", "beta-200"), paper=paper)
    box = reader.pages[0].mediabox
    assert float(box.width) == pytest.approx(size_pt[0], abs=1.0)
    assert float(box.height) == pytest.approx(size_pt[1], abs=1.0)


def test_unknown_paper_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown paper size 'a3'"):
        _write(tmp_path / "r.pdf", paper="a3")
    assert list(tmp_path.iterdir()) == []


def test_six_gpus_table_keeps_its_header_on_every_page(tmp_path: Path) -> None:
    reader = _write(tmp_path / "six.pdf", IDS)
    texts = _texts(reader)
    labels = (
        "Bandwidth (GB/s)",
        "TDP (W)",
        "FP16 tensor (dense) per watt (TFLOPS/W)",
        "Price kind",
    )
    table_pages = [text for text in texts if any(label in text for label in labels)]
    assert len(table_pages) >= 2
    # The table's header row reads the six names in order, without the
    # commas of the running page header.
    header_row = "Alpha 100 Beta 200 Gamma 300 Delta 400 Epsilon 500 Zeta 600"
    for text in table_pages:
        assert header_row in text


def test_include_local_with_nothing_known_says_so(tmp_path: Path) -> None:
    reader = _write(
        tmp_path / "r.pdf", ("alpha-100", "beta-200"), include_local=True, local=LocalData()
    )
    text = " ".join(_texts(reader))
    assert "This machine" in text
    assert "Nothing is known about this machine yet" in text


def test_without_include_local_there_is_no_machine_section(
    three_gpu_pdf: tuple[PdfReader, list[str]],
) -> None:
    _, texts = three_gpu_pdf
    assert "This machine" not in " ".join(texts)


def test_progress_is_reported_up_to_done(tmp_path: Path) -> None:
    seen: list[tuple[float, str]] = []
    progress = ProgressState(on_report=lambda fraction, message: seen.append((fraction, message)))
    _write(tmp_path / "r.pdf", progress=progress)
    fractions = [fraction for fraction, _ in seen]
    assert fractions == sorted(fractions)
    assert fractions[-1] == 1.0
    assert any(message.startswith("painting page 2 of") for _, message in seen)


def test_cancel_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "r.pdf"
    target.write_bytes(b"old report")

    def on_report(fraction: float, message: str) -> None:
        if message.startswith("painting page 2"):
            progress.cancel()

    progress = ProgressState(on_report=on_report)
    with pytest.raises(Cancelled):
        _write(target, progress=progress)
    assert target.read_bytes() == b"old report"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["r.pdf"]


def test_failure_while_painting_keeps_the_existing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"%PDF- the old one")
    real_frame = report_pdf._page_frame

    def frame_then_fail(*args: Any) -> None:
        real_frame(*args)
        if args[4] == 2:  # page number: fail in the middle of the document
            raise RuntimeError("painting failed")

    monkeypatch.setattr(report_pdf, "_page_frame", frame_then_fail)
    with pytest.raises(RuntimeError, match="painting failed"):
        _write(target)
    assert target.read_bytes() == b"%PDF- the old one"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.pdf"]


def test_full_disk_while_writing_removes_the_temp_file_and_names_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"%PDF- the old one")
    temp_seen: list[str] = []

    def full_disk(fd: int) -> None:
        temp_seen.extend(path.name for path in tmp_path.iterdir() if path != target)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError) as caught:
        _write(target)
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(target)
    assert str(target) in str(caught.value)
    # the temporary file existed beside the target while writing, and is gone now
    assert temp_seen and temp_seen[0].startswith(".report.pdf.")
    assert target.read_bytes() == b"%PDF- the old one"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.pdf"]


def test_missing_folder_raises_oserror_naming_the_path(tmp_path: Path) -> None:
    target = tmp_path / "nope" / "report.pdf"
    with pytest.raises(OSError) as caught:
        _write(target)
    assert caught.value.filename == str(target)
    assert not (tmp_path / "nope").exists()


def test_a_directory_as_target_raises_oserror(tmp_path: Path) -> None:
    target = tmp_path / "folder.pdf"
    target.mkdir()
    with pytest.raises(OSError) as caught:
        _write(target)
    assert caught.value.filename == str(target)
    assert target.is_dir()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["folder.pdf"]


def test_replacing_an_existing_report_works(tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old")
    reader = _write(target, ("alpha-100", "beta-200"))
    assert len(reader.pages) >= 2
    assert target.read_bytes().startswith(b"%PDF-")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.pdf"]


def test_a_new_report_is_readable_by_others_and_a_replaced_one_keeps_its_mode(
    tmp_path: Path,
) -> None:
    fresh = tmp_path / "new.pdf"
    old_umask = os.umask(0o022)
    try:
        _write(fresh, ("alpha-100", "beta-200"))
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
    kept = tmp_path / "kept.pdf"
    kept.write_bytes(b"old")
    kept.chmod(0o640)
    _write(kept, ("alpha-100", "beta-200"))
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_charts_must_be_prepared_on_the_gui_thread(qtbot: QtBot) -> None:
    entries = _entries(*THREE)
    worker = TaskWorker(lambda progress: prepare_charts(entries, catalog()), owner=None)
    with qtbot.waitSignal(worker.failed, timeout=10_000) as signal:
        worker.start()
    assert worker.wait(5000)
    assert signal.args == ["report charts must be prepared on the GUI thread"]


def test_charts_for_another_paper_are_refused(tmp_path: Path) -> None:
    charts = prepare_charts(_entries(*THREE), catalog(), paper="letter")
    with pytest.raises(ValueError, match="prepared for letter, not a4"):
        _write(tmp_path / "r.pdf", paper="a4", charts=charts)
    assert list(tmp_path.iterdir()) == []


def test_qt_calls_do_not_drain_none() -> None:
    """PySide6 6.12.0 on Python 3.11 dropped a reference to None per void call
    and aborted the process after a few thousand (pinned out in pyproject)."""
    widget_name = QObject()
    before = sys.getrefcount(None)
    for _ in range(2000):
        widget_name.setObjectName("x")
    assert sys.getrefcount(None) > before - 100
