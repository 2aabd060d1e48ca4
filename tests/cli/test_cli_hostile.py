"""Issue 20 items 1, 7, 8, 9 and 12 at the command line: one-line errors, right exit codes."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from catalog_factory import write_entry

from gpudesk.cli import build_parser, main
from gpudesk.cli.common import path_argument

LONG = "n" * 300


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--min-memory-gb", "nan"],
        ["list", "--max-price-usd", "NaN"],
        ["list", "--max-price-usd", "inf"],
        ["cost", "rtx-4090", "--cloud-hourly", "1", "--resale-usd", "nan"],
        ["cost", "rtx-4090", "--cloud-hourly", "nan"],
        ["cost", "rtx-4090", "--cloud-hourly", "1", "--years=-inf"],
        ["cost", "rtx-4090", "--cloud-hourly", "1", "--kwh-price", "infinity"],
    ],
)
def test_nan_and_infinities_are_bad_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert "not a finite number" in err
    assert "--" + argv[-2].lstrip("-").split("=")[0] in err or "--years" in err


@pytest.mark.parametrize("years", ["1e-9", "0.01", "20.5", "0"])
def test_years_outside_one_month_to_twenty_years_is_bad_usage(
    capsys: pytest.CaptureFixture[str], years: str
) -> None:
    code, out, err = run_cli(capsys, "cost", "rtx-4090", "--cloud-hourly", "1", "--years", years)
    assert code == 2
    assert out == ""
    assert "years" in err and "one month" in err


def test_one_month_horizon_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "cost", "rtx-4090", "--cloud-hourly", "1", "--years", str(1 / 12), "--json"
    )
    assert code == 0
    assert json.loads(out)["series"]["months"] == [0, 1]


def test_list_to_a_full_disk_is_one_line_and_exit_1() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    for argv in (["list"], ["list", "--json"], ["list", "--csv"], ["show", "rtx-4090"]):
        with open("/dev/full", "wb") as full:
            done = subprocess.run(
                [sys.executable, "-m", "gpudesk", *argv],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                env={**os.environ, "PYTHONPATH": os.getcwd()},
            )
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip().splitlines() == [
            "gpudesk: cannot write the output: No space left on device"
        ]


@pytest.mark.parametrize("flag", ["--png", "--csv", "--pdf", "--svg"])
def test_an_output_name_over_255_bytes_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str
) -> None:
    target = tmp_path / f"{LONG}.out"
    code, _, err = run_cli(capsys, "compare", "rtx-4090", "a100-80gb-pcie", flag, str(target))
    assert code == 1
    assert err.strip().splitlines() == [f"gpudesk: cannot write {target}: File name too long"]


def test_validate_and_catalog_with_long_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run_cli(capsys, "validate", str(tmp_path / LONG))
    assert code == 1
    assert out.strip() == f"{tmp_path / LONG}: (folder): cannot read: File name too long"
    code, out, err = run_cli(capsys, "--catalog", str(tmp_path / LONG), "list", "--json")
    assert code == 0
    assert json.loads(out)
    assert "File name too long" in err


def test_validate_checks_the_catalog_flag_folders(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_entry(tmp_path, "bad-one", memory_gb=-1)
    code, out, err = run_cli(capsys, "--catalog", str(tmp_path), "validate")
    assert code == 1
    assert f"{tmp_path / 'bad-one.toml'}: memory_gb" in out
    assert "1 problem(s)" in err


def test_an_empty_catalog_folder_name_is_bad_usage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for argv in (["--catalog", "", "list"], ["validate", ""], ["--catalog", " ", "validate"]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 2
        assert out == ""
        assert "empty path" in err


def test_an_unreadable_user_catalog_makes_validate_fail(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from gpudesk.paths import user_catalog_dir

    folder = user_catalog_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file where the folder should be", "utf-8")
    code, out, _ = run_cli(capsys, "validate")
    assert code == 1
    assert f"{folder}: (folder): not a folder" in out


def test_bench_out_is_checked_before_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpudesk.bench.runner as runner

    ran: list[object] = []
    monkeypatch.setattr(runner, "run_benchmark", lambda *a, **k: ran.append(a))
    for target in (tmp_path / "missing" / "run.json", tmp_path, tmp_path / LONG):
        code, _, err = run_cli(
            capsys, "bench", "--backend", "numpy", "--out", str(target), "--no-save"
        )
        assert code == 1
        assert err.startswith(f"gpudesk: cannot write {target}: ")
    assert ran == []


def test_compare_csv_to_a_device_writes_into_it_and_leaves_it_a_device(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    if os.geteuid() == 0:
        device = tmp_path / "null"
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:
        device = Path("/dev/null")
    code, _, err = run_cli(capsys, "compare", "rtx-4090", "a100-80gb-pcie", "--csv", str(device))
    assert code == 0, err
    assert stat.S_ISCHR(device.stat().st_mode)


def test_compare_csv_through_a_symlink_keeps_the_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    real = tmp_path / "real.csv"
    real.write_text("old", "utf-8")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    code, _, _ = run_cli(capsys, "compare", "rtx-4090", "a100-80gb-pcie", "--csv", str(link))
    assert code == 0
    assert link.is_symlink()
    assert real.read_text("utf-8").startswith("group,key,label,unit")


FORMULAS = ['=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)"]


def _formula_catalog(folder: Path) -> Path:
    for index, name in enumerate(FORMULAS):
        write_entry(folder, f"evil-{index}", name=name, notes=name)
    return folder


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_list_csv_neutralises_formulas(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = _formula_catalog(tmp_path)
    code, out, _ = run_cli(capsys, "--catalog", str(folder), "list", "--search", "evil", "--csv")
    assert code == 0
    cells = _cells(out)
    for name in FORMULAS:
        assert name not in cells
        assert "'" + name in cells
    assert not any(cell.startswith(("=", "+", "@")) for cell in cells)


def test_compare_csv_neutralises_formulas_and_keeps_negative_numbers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = _formula_catalog(tmp_path / "catalog")
    target = tmp_path / "table.csv"
    code, _, err = run_cli(
        capsys, "--catalog", str(folder), "compare", "evil-0", "evil-3", "--csv", str(target)
    )
    assert code == 0, err
    cells = _cells(target.read_text("utf-8"))
    assert "'" + FORMULAS[0] in cells and "'" + FORMULAS[3] in cells
    assert not any(cell.startswith(("=", "+", "@")) for cell in cells)


_PATH_METAVARS = {"FILE", "PATH", "DIR", "SURVEY"}


def _path_actions() -> list[tuple[str, argparse.Action]]:
    """(command, action) for every argument of every subcommand that names a file or folder."""
    found: list[tuple[str, argparse.Action]] = []

    def walk(parser: argparse.ArgumentParser, command: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{command} {name}".strip())
            elif action.metavar in _PATH_METAVARS:
                found.append((command, action))

    walk(build_parser(), "")
    return found


def test_every_file_or_folder_argument_refuses_an_empty_path() -> None:
    actions = _path_actions()
    assert len(actions) >= 10, [command for command, _ in actions]
    for command, action in actions:
        assert action.type is path_argument, (command, action.option_strings or action.dest)


@pytest.mark.parametrize(
    "argv",
    [
        ["fleet", "show", ""],
        ["fleet", "survey", "--out", ""],
        ["detect", "--sysfs", ""],
        ["speed", "--config", "", "--mode", "decode"],
        ["fit", "--config", "", "--mode", "inference"],
    ],
)
def test_an_empty_path_is_named_as_such_not_read_as_the_current_folder(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert "empty path" in err
