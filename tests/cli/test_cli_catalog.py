import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
from catalog_factory import write_entry

from gpudesk.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_json_has_sourced_entries_and_derived_metrics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "list", "--json")
    entries = json.loads(out)
    assert code == 0
    assert len(entries) >= 40
    assert all(entry["sources"] for entry in entries)
    assert "fp16_tensor_tflops_per_kusd" in entries[0]
    assert "fp32_tflops_per_w" in entries[0]


def test_list_filters_and_sorts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys,
        "list",
        "--segment",
        "datacenter",
        "--require",
        "mig",
        "--sort",
        "memory_gb:desc",
        "--json",
    )
    entries = json.loads(out)
    assert code == 0 and entries
    assert {entry["segment"] for entry in entries} == {"datacenter"}
    assert all(entry["mig_max_instances"] for entry in entries)
    memories = [entry["memory_gb"] for entry in entries]
    assert memories == sorted(memories, reverse=True)


def test_list_table_and_csv(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_entry(tmp_path, "only-one", name="Zqxv Only GPU")
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for the long headings
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "list", "--search", "zqxv")
    assert code == 0
    assert "Zqxv Only GPU" in out and "Memory (GiB)" in out
    assert "a vendor's '80 GB' is 80 GiB" in out  # the unit, explained under the table
    monkeypatch.setenv("COLUMNS", "80")  # the short ones
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "list", "--search", "zqxv")
    assert code == 0 and "Mem GiB" in out and "Memory (GiB)" not in out
    assert "1 of" in out
    code, out, _ = run_cli(capsys, "--catalog", str(tmp_path), "list", "--search", "zqxv", "--csv")
    lines = out.strip().splitlines()
    assert lines[0].startswith("id,name,vendor")
    assert lines[1].startswith("only-one,Zqxv Only GPU,NVIDIA")


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--require", "wings"],
        ["list", "--sort", "speed"],
        ["list", "--sort", "memory_gb:sideways"],
        ["show", "no-such-gpu-anywhere"],
    ],
)
def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.startswith("gpudesk: ")


def test_show_ambiguous_lists_candidates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_entry(tmp_path, "zz-alpha-one", name="ZZ Alpha One")
    write_entry(tmp_path, "zz-alpha-two", name="ZZ Alpha Two")
    code, _, err = run_cli(capsys, "--catalog", str(tmp_path), "show", "zz alpha")
    assert code == 2
    assert "zz-alpha-one" in err and "zz-alpha-two" in err


def test_show_h100_nvl_is_dense_with_a_note(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "show", "H100 NVL", "--json")
    entry = json.loads(out)
    assert code == 0
    assert entry["fp16_tensor_tflops"] == pytest.approx(835, rel=0.01)
    assert "1,671" in entry["notes"] or "1671" in entry["notes"]


def test_broken_file_is_named_and_new_gpu_listed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_entry(tmp_path, "my-new-gpu", name="My New GPU")
    write_entry(tmp_path, "my-broken-gpu", memory_gb=-4)
    code, out, err = run_cli(capsys, "--catalog", str(tmp_path), "list", "--json")
    assert code == 0
    assert "my-new-gpu" in {entry["id"] for entry in json.loads(out)}
    assert f"{tmp_path / 'my-broken-gpu.toml'}: memory_gb: " in err


def test_validate_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = tmp_path / "good"
    write_entry(good, "fine-gpu")
    code, _, _ = run_cli(capsys, "validate", str(good))
    assert code == 0
    bad = tmp_path / "bad"
    write_entry(bad, "bad-gpu", segment="gaming")
    write_entry(bad, "bad-gpu-2", unknown_thing=1)
    code, out, _ = run_cli(capsys, "validate", str(bad))
    assert code == 1
    assert "bad-gpu.toml: segment:" in out
    assert "bad-gpu-2.toml: unknown_thing:" in out


def test_validate_names_a_boolean_memory_and_deprecated_cloud_fields(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_entry(tmp_path, "bool-memory", memory_gb=True)
    write_entry(tmp_path, "old-cloud", cloud_hourly_usd=0.5, cloud_hourly_source="RunPod")
    code, out, err = run_cli(capsys, "validate", str(tmp_path))
    assert code == 1
    assert "bool-memory.toml: memory_gb: must be a number, not true" in out
    assert "old-cloud.toml: cloud_hourly_usd, cloud_hourly_source: deprecated" in err
    assert "1 valid entries, 1 problem(s)" in err


def test_validate_strict_flags_sources_and_deprecations(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    statement = {"date": dt.date(2026, 12, 2), "reason": "not rented by the hour"}
    write_entry(
        tmp_path,
        "fine-gpu",
        sources=["https://www.nvidia.com/en-us/data-center/a10/"],
        price_usd=999,
        price_date=dt.date(2026, 12, 1),
        price_kind="street",
        rates_unavailable=statement,
    )
    code, out, _ = run_cli(capsys, "validate", "--strict", str(tmp_path))
    assert code == 0, out
    write_entry(tmp_path, "home-page", sources=["TPU (https://www.techpowerup.com/gpu-specs/)"])
    write_entry(
        tmp_path,
        "old-cloud",
        sources=["https://www.nvidia.com/en-us/data-center/a10/"],
        cloud_hourly_usd=0.5,
    )
    code, out, err = run_cli(capsys, "validate", str(tmp_path))
    assert code == 0, "without --strict these load fine"
    code, out, err = run_cli(capsys, "validate", "--strict", str(tmp_path))
    assert code == 1
    assert "home-page.toml: sources.0: https://www.techpowerup.com/gpu-specs/ is the" in out
    assert "old-cloud.toml: cloud_hourly_usd: deprecated" in out
    assert "old-cloud.toml: cloud_rates.0.date: a cloud rate needs the date" in out
    # and neither has a price or a dated statement; home-page has no rate either
    assert "home-page.toml: price_usd: give a price" in out
    assert "home-page.toml: cloud_rates: give a dated cloud rate" in out
    assert "old-cloud.toml: price_usd: give a price" in out
    assert "3 valid entries, 7 problem(s)" in err


def test_validate_bundled_catalog_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "validate")
    assert code == 0, out
    code, out, _ = run_cli(capsys, "validate", "--strict")
    assert code == 0, out


_NO_QT_SCRIPT = """
import sys, io, contextlib
from gpudesk.cli import main
argv = sys.argv[1:]
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(argv)
    except SystemExit as exc:  # --version exits through argparse
        code = exc.code
qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'))
print(code, qt)
"""


@pytest.mark.parametrize(
    "argv",
    [["list", "--json"], ["show", "4090", "--json"], ["validate"], ["--version"]],
)
def test_catalog_subcommands_never_import_qt(argv: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _NO_QT_SCRIPT, *argv], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip().endswith("[]"), result.stdout + result.stderr


@pytest.mark.parametrize(("typed", "entry_id"), [("rtx4090", "rtx-4090"), ("GAUDI3", "gaudi-3")])
def test_an_id_typed_without_its_hyphens_is_found(
    typed: str, entry_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpudesk.catalog.loader import load_catalog
    from gpudesk.catalog.query import find_entry

    assert find_entry(load_catalog([], include_user=False).entries, typed).id == entry_id
    assert main(["show", typed, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == entry_id


def test_list_help_names_each_sortable_field_once(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["list", "--help"])
    epilog = " ".join(capsys.readouterr().out.split("sortable fields:")[1].split())
    fields = [field.strip() for field in epilog.split(",")]
    assert len(fields) == len(set(fields)) and "release_year" in fields
