"""An error no command words itself: one line, the exit code of its type, a traceback with --debug.

The errors are raised where every catalog command loads the catalog
(``gpudesk.cli.common.load_catalog``), so they escape ``gpudesk list`` as an
error raised deeper than a command looked would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import gpudesk.cli.common as cli_common
from gpudesk.catalog.price_snapshots import PriceDataError, PriceSourceError
from gpudesk.catalog.query import NameLookupError
from gpudesk.cli import main
from gpudesk.cli.common import CliError
from gpudesk.cli.exit_codes import exit_code_for, exit_code_table
from gpudesk.compare.limits import ComparisonSizeError
from gpudesk.errors import GpuDeskError
from gpudesk.fleet.slurm import SlurmUnavailableError
from gpudesk.health.doctor import NvidiaSmiOutputError
from gpudesk.measurements.store import StoreError
from gpudesk.progress import Cancelled
from gpudesk.storage import NotRegularFileError
from gpudesk.workload.errors import PlanningInputError


def _raising(error: BaseException) -> object:
    def load(*args: object, **kwargs: object) -> object:
        raise error

    return load


@pytest.mark.parametrize(
    ("error", "code", "line"),
    [
        (NameLookupError("h99", ["h100"], ambiguous=False), 2, "no GPU named 'h99'; closest: h100"),
        (PriceSourceError("ftp://x: not a source"), 2, "ftp://x: not a source"),
        (PriceDataError("prices.sqlite: locked"), 1, "prices.sqlite: locked"),
        (PlanningInputError("hidden must be above 0"), 2, "hidden must be above 0"),
        (ComparisonSizeError(9), 2, "a comparison holds 2 to 6 GPUs, not 9"),
        (SlurmUnavailableError("sinfo not found"), 3, "sinfo not found"),
        (NvidiaSmiOutputError(3, "7 fields, not 9"), 1, "nvidia-smi output line 3: 7 fields"),
        (StoreError("not a database"), 1, "not a database"),
        (CliError("as a command words it", 2), 2, "as a command words it"),
        (Cancelled(), 130, "interrupted"),
    ],
)
def test_an_escaping_error_is_one_line_and_its_code(
    error: GpuDeskError,
    code: int,
    line: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(cli_common, "load_catalog", _raising(error))
    assert main(["list"]) == code
    err = capsys.readouterr().err
    assert err.startswith(f"gpudesk: {line}")
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_debug_prints_the_traceback_before_the_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_common, "load_catalog", _raising(StoreError("not a database")))
    assert main(["--debug", "list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert "StoreError: not a database" in err
    assert err.splitlines()[-1] == "gpudesk: not a database"


def test_debug_shows_the_traceback_of_a_command_s_own_error_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "no-such-gpu-at-all"]) == 2
    plain = capsys.readouterr().err
    assert "Traceback" not in plain
    assert main(["--debug", "show", "no-such-gpu-at-all"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.splitlines()[-1] == plain.splitlines()[-1]


def test_an_os_error_keeps_its_cannot_write_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    error = NotRegularFileError(21, "it is a directory", str(tmp_path))
    monkeypatch.setattr(cli_common, "load_catalog", _raising(error))
    assert main(["list"]) == 1
    assert capsys.readouterr().err == f"gpudesk: cannot write {tmp_path}: it is a directory\n"


def test_an_error_not_ours_is_still_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_common, "load_catalog", _raising(ZeroDivisionError("a bug")))
    with pytest.raises(ZeroDivisionError):
        main(["list"])


def test_the_table_ends_with_the_root_and_every_row_is_reachable() -> None:
    table = exit_code_table()
    assert table[-1] == (GpuDeskError, 1)
    kinds = [kind for kind, _ in table]
    for index, kind in enumerate(kinds):
        assert issubclass(kind, GpuDeskError)
        shadowing = [earlier for earlier in kinds[:index] if issubclass(kind, earlier)]
        assert shadowing == [], f"{kind.__name__} is never reached: {shadowing}"
    assert {code for _, code in table} == {1, 2, 3, 130}
    assert exit_code_for(CliError("x", 3)) == 3
