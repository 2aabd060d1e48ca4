"""``gpudesk compare ... --pdf FILE``: exit codes, messages, headless use."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from report_factory import write_catalog

from gpudesk.cli import main

NAMES = ["Alpha 100", "Beta 200", "Gamma 300"]


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "catalog")


def _compare(catalog_dir: Path, *args: str | Path) -> int:
    return main(["--catalog", str(catalog_dir), "compare", *map(str, args)])


@pytest.mark.gui  # paints the PDF with Qt
def test_pdf_is_written(
    catalog_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "report.pdf"
    assert _compare(catalog_dir, *NAMES, "--pdf", target) == 0
    assert f"wrote {target}" in capsys.readouterr().err
    reader = PdfReader(str(target))
    text = " ".join(" ".join(page.extract_text().split()) for page in reader.pages)
    assert all(name in text for name in NAMES)
    assert float(reader.pages[0].mediabox.height) == pytest.approx(841.9, abs=1)


@pytest.mark.gui  # paints the PDF with Qt
def test_letter_paper(catalog_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    assert _compare(catalog_dir, *NAMES[:2], "--pdf", target, "--paper", "letter") == 0
    box = PdfReader(str(target)).pages[0].mediabox
    assert (float(box.width), float(box.height)) == pytest.approx((612, 792), abs=1)


@pytest.mark.gui  # paints the PDF with Qt
def test_include_local_adds_this_machine(catalog_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    assert _compare(catalog_dir, *NAMES[:2], "--pdf", target, "--include-local") == 0
    text = " ".join(page.extract_text() for page in PdfReader(str(target)).pages)
    assert "This machine" in " ".join(text.split())


@pytest.mark.gui  # paints the PDF with Qt
def test_include_local_builds_the_content_once(
    catalog_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This machine is detected once and the report's content built once, with it (the
    charts and the pages read the same content; it was built a second time for the
    local section)."""
    import gpudesk.report.pdf as pdf
    from gpudesk.report.content import build_report, collect_local_data

    built: list[bool] = []
    detected: list[object] = []
    real_build, real_collect = build_report, collect_local_data

    def counted_build(*args: Any, **kwargs: Any) -> Any:
        built.append(kwargs["include_local"])
        return real_build(*args, **kwargs)

    def counted_collect() -> Any:
        detected.append(None)
        return real_collect()

    monkeypatch.setattr(pdf, "build_report", counted_build)
    monkeypatch.setattr(pdf, "collect_local_data", counted_collect)
    target = tmp_path / "report.pdf"
    assert _compare(catalog_dir, *NAMES[:2], "--pdf", target, "--include-local") == 0
    assert built == [True] and len(detected) == 1
    text = " ".join(page.extract_text() for page in PdfReader(str(target)).pages)
    assert "This machine" in " ".join(text.split())
    built.clear()
    assert _compare(catalog_dir, *NAMES[:2], "--pdf", target) == 0
    assert built == [False] and len(detected) == 1


@pytest.mark.parametrize(
    ("make_target", "message"),
    [
        (lambda tmp: tmp / "a-folder", "it is a directory"),
        (lambda tmp: tmp / "missing" / "report.pdf", "does not exist"),
        (lambda tmp: tmp / "plain-file" / "report.pdf", "does not exist"),
    ],
    ids=["directory", "missing-folder", "under-a-file"],
)
def test_bad_paths_exit_1_naming_the_path(
    catalog_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make_target: object,
    message: str,
) -> None:
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "plain-file").write_text("x")
    target = make_target(tmp_path)  # type: ignore[operator]
    assert _compare(catalog_dir, *NAMES, "--pdf", target) == 1
    err = capsys.readouterr().err
    assert f"cannot write {target}" in err
    assert message in err


def test_unwritable_folder_exits_1(
    catalog_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Tests run as root, who may write anywhere: ask os.access to say no.
    real_access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda path, mode: False if Path(path) == tmp_path else real_access(path, mode),
    )
    target = tmp_path / "report.pdf"
    assert _compare(catalog_dir, *NAMES, "--pdf", target) == 1
    assert f"cannot write {target}: folder {tmp_path} is not writable" in capsys.readouterr().err
    assert not target.exists()


@pytest.mark.gui  # paints the PDF with Qt
def test_a_full_disk_exits_1_and_keeps_the_old_file(
    catalog_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old report")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    assert _compare(catalog_dir, *NAMES, "--pdf", target) == 1
    assert f"cannot write {target}: No space left on device" in capsys.readouterr().err
    assert target.read_bytes() == b"old report"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["catalog", "report.pdf"]


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["Alpha 100"], "compare needs 2 to 6 GPUs, got 1"),
        (
            ["Alpha 100", "Beta 200", "Gamma 300", "Delta 400", "Epsilon 500", "Zeta 600", "x"],
            "compare needs 2 to 6 GPUs, got 7",
        ),
        (["Alpha 100", "No Such GPU 9000"], "No Such GPU 9000"),
    ],
    ids=["one", "seven", "unknown"],
)
def test_bad_selection_exits_2_with_the_reason(
    catalog_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    names: list[str],
    message: str,
) -> None:
    target = tmp_path / "report.pdf"
    assert _compare(catalog_dir, *names, "--pdf", target) == 2
    assert message in capsys.readouterr().err
    assert not target.exists()


@pytest.mark.gui  # paints the PDF with Qt
def test_works_headless_without_a_display(catalog_dir: Path, tmp_path: Path) -> None:
    """A server over SSH: no DISPLAY, no QT_QPA_PLATFORM; the PDF still comes out."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    target = tmp_path / "report.pdf"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpudesk",
            "--catalog",
            str(catalog_dir),
            "compare",
            *NAMES,
            "--pdf",
            str(target),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert target.read_bytes().startswith(b"%PDF-")
    assert result.stderr.strip() == f"wrote {target}"
