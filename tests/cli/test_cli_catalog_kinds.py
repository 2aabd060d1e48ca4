"""``gpudesk list/show`` with kinds and statuses (issue 43): announced parts hidden
unless asked, and counted; --kind and --status filter; JSON keeps device_type."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from catalog_factory import write_entry

from gpudesk.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_entry(tmp_path, "zqxv-gpu", name="Zqxv GPU")
    write_entry(
        tmp_path,
        "zqxv-tpu",
        name="Zqxv TPU",
        kind="tpu",
        status="cloud-only",
        status_date=dt.date(2026, 11, 1),
    )
    for index in (1, 2):
        write_entry(
            tmp_path,
            f"zqxv-next-{index}",
            name=f"Zqxv Next {index}",
            status="announced",
            status_date=dt.date(2026, 3, 16),
            segment=None,
            architecture=None,
            release_year=None,
            memory_type=None,
            fp32_tflops=None,
            bf16_tensor_tflops=3000.0,
        )
    return tmp_path


def _ids(out: str) -> list[str]:
    return sorted(entry["id"] for entry in json.loads(out))


def test_list_hides_announced_parts_and_says_how_many(
    capsys: pytest.CaptureFixture[str], folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out = _run(capsys, "--catalog", str(folder), "list", "--search", "zqxv")
    assert code == 0
    assert "Zqxv GPU" in out and "Zqxv TPU" in out and "Zqxv Next" not in out
    assert "2 announced parts (not on sale yet) hidden: --include-announced lists them" in " ".join(
        out.split()
    )
    code, out = _run(
        capsys, "--catalog", str(folder), "list", "--search", "zqxv", "--include-announced"
    )
    assert "Zqxv Next 1" in out and "hidden" not in out
    # a gap is shown as a gap: the announced part's segment is n/a, never "0" or blank
    line = next(line for line in out.splitlines() if "Zqxv Next 1" in line)
    assert "n/a" in line


def test_list_filters_by_kind_and_status(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    base = ("--catalog", str(folder), "list", "--search", "zqxv", "--json")
    assert _ids(_run(capsys, *base)[1]) == ["zqxv-gpu", "zqxv-tpu"]
    assert _ids(_run(capsys, *base, "--kind", "tpu")[1]) == ["zqxv-tpu"]
    assert _ids(_run(capsys, *base, "--status", "announced")[1]) == [
        "zqxv-next-1",
        "zqxv-next-2",
    ]
    assert _ids(_run(capsys, *base, "--status", "shipping", "--status", "cloud-only")[1]) == [
        "zqxv-gpu",
        "zqxv-tpu",
    ]


def test_show_json_has_kind_status_and_the_deprecated_device_type(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    code, out = _run(capsys, "--catalog", str(folder), "show", "zqxv-tpu", "--json")
    record = json.loads(out)
    assert code == 0
    assert (record["kind"], record["device_type"], record["status"]) == (
        "tpu",
        "accelerator",
        "cloud-only",
    )
    code, out = _run(capsys, "--catalog", str(folder), "show", "zqxv-next-1", "--json")
    record = json.loads(out)
    assert record["status"] == "announced" and record["fp32_tflops"] is None


@pytest.mark.parametrize("argv", [["--kind", "fpga"], ["--status", "sold-out"]])
def test_an_unknown_kind_or_status_is_bad_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["list", *argv])
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
